"""Attention forward (flash-attention style online softmax) for Hopper, in the style of
the fused-attention tutorials: Q tile resident, K/V tiles streamed, running max and sum,
strides for (batch, head, seq, dim), a causal mask, and a WARMUP variant that the
library compiles first to size its shared memory without reading any data.

The build step compiles each head size in a forked worker (``multiprocessing``, fork)
whose stderr goes to /dev/null, and only looks at the worker's exit code. Under Triton
3.0-3.2 the WARMUP variant's chained dot of zero tiles aborts LLVM
(triton-lang/triton#4418), which kills the worker.

Usage: python attention_fwd.py
"""

import multiprocessing
import os
import sys

import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from aot import Buffer, compile_like_launch


@triton.jit
def _attn_inner(
    acc,
    l_i,
    m_i,
    q,
    k_base,
    v_base,
    stride_kn,
    stride_vn,
    offs_m,
    offs_n,
    offs_d,
    lo,
    hi,
    qk_scale,
    N_CTX,
    BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr,
):
    for start_n in range(lo, hi, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(
            k_base + cols[None, :] * stride_kn + offs_d[:, None], mask=cols[None, :] < N_CTX
        )
        qk = tl.dot(q, k) * qk_scale
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= cols[None, :], qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(
            v_base + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < N_CTX
        )
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def attn_fwd(
    Q,
    K,
    V,
    Out,
    sm_scale,
    stride_qz,
    stride_qh,
    stride_qm,
    stride_qk,
    stride_kz,
    stride_kh,
    stride_kn,
    stride_kk,
    stride_vz,
    stride_vh,
    stride_vn,
    stride_vk,
    stride_oz,
    stride_oh,
    stride_om,
    stride_ok,
    H,
    N_CTX,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    WARMUP: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    o_base = Out + off_z * stride_oz + off_h * stride_oh
    if WARMUP:
        # Same tile shapes as the real kernel, no data read: sizes shared memory.
        y = tl.zeros([BLOCK_M, BLOCK_N], tl.float16)
        x = tl.zeros([BLOCK_N, HEAD_DIM], tl.float16)
        p = tl.dot(y, x)
        p = tl.zeros([BLOCK_M], tl.float16)[:, None] * p + p
        tl.store(o_base + offs_m[:, None] * stride_om + offs_d[None, :], p)
    else:
        q_base = Q + off_z * stride_qz + off_h * stride_qh
        k_base = K + off_z * stride_kz + off_h * stride_kh
        v_base = V + off_z * stride_vz + off_h * stride_vh
        q = tl.load(
            q_base + offs_m[:, None] * stride_qm + offs_d[None, :], mask=offs_m[:, None] < N_CTX
        )
        m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
        acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
        qk_scale = sm_scale * 1.44269504
        hi = (start_m + 1) * BLOCK_M if CAUSAL else N_CTX
        acc, l_i, m_i = _attn_inner(
            acc,
            l_i,
            m_i,
            q,
            k_base,
            v_base,
            stride_kn,
            stride_vn,
            offs_m,
            offs_n,
            offs_d,
            0,
            hi,
            qk_scale,
            N_CTX,
            BLOCK_N,
            CAUSAL,
        )
        acc = acc / l_i[:, None]
        mask = offs_m[:, None] < N_CTX
        tl.store(
            o_base + offs_m[:, None] * stride_om + offs_d[None, :], acc.to(tl.float16), mask=mask
        )


def build(head_dim: int, warmup: bool) -> None:
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 2)
    shape = (2, 8, 1024, head_dim)
    q, k, v, o = (Buffer("float16", shape) for _ in range(4))
    compile_like_launch(
        attn_fwd,
        90,
        q,
        k,
        v,
        o,
        0.125,
        *q.stride(),
        *k.stride(),
        *v.stride(),
        *o.stride(),
        8,
        1024,
        BLOCK_M=64,
        BLOCK_N=64,
        HEAD_DIM=head_dim,
        CAUSAL=True,
        WARMUP=warmup,
        num_warps=8,
    )


def main() -> int:
    context = multiprocessing.get_context("fork")
    status = 0
    for head_dim in (64, 128):
        for warmup in (True, False):
            worker = context.Process(target=build, args=(head_dim, warmup))
            worker.start()
            worker.join()
            state = "ok" if worker.exitcode == 0 else f"failed ({worker.exitcode})"
            print(f"head_dim={head_dim} warmup={warmup}: {state}", flush=True)
            status = status or (worker.exitcode != 0)
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
