"""Paged-KV attention decode, in the style of the decode kernels of serving engines: one
program per (sequence, KV head) handles the GQA group of query heads that share it, walks
the sequence's block table page by page, reads each K/V page through a tensor descriptor
made from the page's base address, and keeps an online softmax over the pages.

The serving engine's warm-up script compiles the decode kernel for each page size from a
shell, one interpreter per page size, with stderr thrown away (``2>/dev/null``): a
failing compile shows only as a nonzero status. Under Triton 3.4.0-3.8.0 a descriptor
made inside the ``tl.dot`` loop cannot be pipelined (triton-lang/triton#10229).

Usage: python paged_kv_decode.py [PAGE_SIZE]
"""

import os
import subprocess
import sys

import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from aot import Buffer, compile_like_launch


@triton.jit
def _page_base(cache_ptr, block_tables_ptr, seq, page, stride_bt, stride_page, kv_head, stride_h):
    physical = tl.load(block_tables_ptr + seq * stride_bt + page)
    return cache_ptr + physical.to(tl.int64) * stride_page + kv_head * stride_h


@triton.jit
def paged_decode_kernel(
    q_ptr,
    k_cache_ptr,
    v_cache_ptr,
    block_tables_ptr,
    seq_lens_ptr,
    out_ptr,
    sm_scale,
    stride_qs,
    stride_qh,
    stride_bt,
    stride_page,
    stride_kvh,
    stride_os,
    stride_oh,
    GROUP: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    PAGE_SIZE: tl.constexpr,
):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    seq_len = tl.load(seq_lens_ptr + seq)
    heads = kv_head * GROUP + tl.arange(0, GROUP)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + seq * stride_qs + heads[:, None] * stride_qh + offs_d[None, :])
    m_i = tl.zeros([GROUP], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([GROUP], dtype=tl.float32)
    acc = tl.zeros([GROUP, HEAD_DIM], dtype=tl.float32)
    num_pages = tl.cdiv(seq_len, PAGE_SIZE)
    for page in range(0, num_pages):
        k_base = _page_base(
            k_cache_ptr, block_tables_ptr, seq, page, stride_bt, stride_page, kv_head, stride_kvh
        )
        v_base = _page_base(
            v_cache_ptr, block_tables_ptr, seq, page, stride_bt, stride_page, kv_head, stride_kvh
        )
        k_desc = tl.make_tensor_descriptor(
            k_base, [PAGE_SIZE, HEAD_DIM], [HEAD_DIM, 1], [PAGE_SIZE, HEAD_DIM]
        )
        v_desc = tl.make_tensor_descriptor(
            v_base, [PAGE_SIZE, HEAD_DIM], [HEAD_DIM, 1], [PAGE_SIZE, HEAD_DIM]
        )
        k = k_desc.load([0, 0])
        qk = tl.dot(q, k.T) * sm_scale
        tokens = page * PAGE_SIZE + tl.arange(0, PAGE_SIZE)
        qk = tl.where(tokens[None, :] < seq_len, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = v_desc.load([0, 0])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    out = out_ptr + seq * stride_os + heads[:, None] * stride_oh + offs_d[None, :]
    tl.store(out, acc.to(out_ptr.dtype.element_ty))


def build(page_size: int) -> int:
    num_seqs, kv_heads, group, head_dim, max_pages = 32, 8, 16, 128, 64
    q = Buffer("float16", (num_seqs, kv_heads * group, head_dim))
    k_cache = Buffer("float16", (4096, kv_heads, page_size, head_dim))
    v_cache = Buffer("float16", (4096, kv_heads, page_size, head_dim))
    block_tables = Buffer("int32", (num_seqs, max_pages))
    out = Buffer("float16", (num_seqs, kv_heads * group, head_dim))
    kernel = compile_like_launch(
        paged_decode_kernel,
        100,
        q,
        k_cache,
        v_cache,
        block_tables,
        Buffer("int32", (num_seqs,)),
        out,
        0.088,
        q.stride(0),
        q.stride(1),
        block_tables.stride(0),
        k_cache.stride(0),
        k_cache.stride(1),
        out.stride(0),
        out.stride(1),
        GROUP=group,
        HEAD_DIM=head_dim,
        PAGE_SIZE=page_size,
        num_warps=4,
        num_stages=2,
    )
    return kernel.metadata.shared


def main() -> int:
    if len(sys.argv) > 1:
        print(f"PAGE_SIZE={sys.argv[1]}: {build(int(sys.argv[1]))} bytes of shared memory")
        return 0
    status = 0
    for page_size in (16,):
        command = f"{sys.executable} {__file__} {page_size} 2>/dev/null"
        code = subprocess.call(command, shell=True)
        if code:
            print(f"warm-up failed for PAGE_SIZE={page_size} (status {code})")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
