"""Chunked linear attention (forward), in the style of the chunked kernels of linear
attention libraries: the sequence is cut into chunks of BLOCK_T; inside a chunk the
causal part is an ordinary masked attention with a decay, across chunks a running
K^T V state of (HEAD_K x HEAD_V) carries the past. The state is kept in fp32 and
optionally written out for the backward pass (STORE_FINAL_STATE).

The library's build compiles the kernel for consumer Blackwell (sm_120) in a worker
process started with ``spawn`` whose stderr goes to a build log that is then dropped.
Under Triton 3.0-3.3.0 any ``tl.dot`` for sm_120 fails: the MMA version for compute
capability 120 is unknown (triton-lang/triton#6087); 3.0-3.2 abort.

Usage: python chunked_linear_attention.py
"""

import multiprocessing
import os
import sys
import tempfile

import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from aot import Buffer, compile_like_launch


@triton.jit
def _decay(offs_t, g):
    return tl.exp(g * offs_t.to(tl.float32))


@triton.jit
def chunk_linear_attn_fwd(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    state_ptr,
    T,
    g,
    scale,
    stride_qb,
    stride_qt,
    stride_qd,
    stride_vb,
    stride_vt,
    stride_vd,
    HEAD_K: tl.constexpr,
    HEAD_V: tl.constexpr,
    BLOCK_T: tl.constexpr,
    STORE_FINAL_STATE: tl.constexpr,
):
    bh = tl.program_id(0)
    offs_t = tl.arange(0, BLOCK_T)
    offs_k = tl.arange(0, HEAD_K)
    offs_v = tl.arange(0, HEAD_V)
    state = tl.zeros([HEAD_K, HEAD_V], dtype=tl.float32)
    causal = offs_t[:, None] >= offs_t[None, :]
    decay = _decay(offs_t, g)
    for start in range(0, T, BLOCK_T):
        rows = start + offs_t
        row_mask = rows < T
        q = tl.load(
            q_ptr + bh * stride_qb + rows[:, None] * stride_qt + offs_k[None, :] * stride_qd,
            mask=row_mask[:, None],
            other=0.0,
        )
        k = tl.load(
            k_ptr + bh * stride_qb + rows[:, None] * stride_qt + offs_k[None, :] * stride_qd,
            mask=row_mask[:, None],
            other=0.0,
        )
        v = tl.load(
            v_ptr + bh * stride_vb + rows[:, None] * stride_vt + offs_v[None, :] * stride_vd,
            mask=row_mask[:, None],
            other=0.0,
        )
        scores = tl.dot(q, tl.trans(k)) * scale
        scores = tl.where(causal, scores * (decay[:, None] / decay[None, :]), 0.0)
        inside = tl.dot(scores.to(v.dtype), v)
        past = tl.dot((q * decay[:, None].to(q.dtype)), state.to(q.dtype))
        out = inside + past
        tl.store(
            o_ptr + bh * stride_vb + rows[:, None] * stride_vt + offs_v[None, :] * stride_vd,
            out.to(o_ptr.dtype.element_ty),
            mask=row_mask[:, None],
        )
        state = state * tl.exp(g * BLOCK_T) + tl.dot(tl.trans(k), v).to(tl.float32)
    if STORE_FINAL_STATE:
        offs_state = offs_k[:, None] * HEAD_V + offs_v[None, :]
        tl.store(state_ptr + bh * HEAD_K * HEAD_V + offs_state, state)


def build(block_t: int) -> int:
    batch_heads, seq, head_k, head_v = 64, 2048, 64, 64
    q, k = (Buffer("float16", (batch_heads, seq, head_k)) for _ in range(2))
    v, o = (Buffer("float16", (batch_heads, seq, head_v)) for _ in range(2))
    kernel = compile_like_launch(
        chunk_linear_attn_fwd,
        120,
        q,
        k,
        v,
        o,
        Buffer("float32", (batch_heads, head_k, head_v)),
        seq,
        -0.03,
        head_k**-0.5,
        *q.stride(),
        *v.stride(),
        HEAD_K=head_k,
        HEAD_V=head_v,
        BLOCK_T=block_t,
        STORE_FINAL_STATE=True,
        num_warps=4,
    )
    return kernel.metadata.shared


def worker(block_t, log_path):
    with open(log_path, "w") as log:
        os.dup2(log.fileno(), 2)  # the worker's stderr goes to its build log
    build(block_t)


def main() -> int:
    context = multiprocessing.get_context("spawn")
    log_path = os.path.join(tempfile.mkdtemp(prefix="linear-attn-build-"), "worker.log")
    process = context.Process(target=worker, args=(64, log_path))
    process.start()
    process.join()
    size = os.path.getsize(log_path) if os.path.exists(log_path) else 0
    if os.path.exists(log_path):
        os.unlink(log_path)  # the build keeps no log
    if process.exitcode != 0:
        print(f"build for sm_120 failed (exit {process.exitcode}, {size} bytes of log dropped)")
        return 1
    print("built for sm_120")
    return 0


if __name__ == "__main__":
    sys.exit(main())
