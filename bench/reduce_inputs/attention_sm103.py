"""A production-style attention forward kernel (online softmax, causal and padding masks,
scale, helpers, fp16/bf16 epilogue) planted with triton-lang/triton#8473: on sm_103
Triton 3.5.0 cannot select llvm.nvvm.tcgen05.wait for its tl.dot; 3.6.0 compiles it.

Benchmark input for `repro reduce` (bench/bench_reduce.py), not a built-in reproducer.
Minimal form: repros/upstream/sm103_tcgen05_wait.py.
"""

import triton
import triton.language as tl

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

REPRO = Reproducer(
    id="bench-reduce-attention-sm103",
    title="Attention forward kernel on sm_103 (tcgen05.wait selection, #8473)",
    family="bench-reduce",
    params=(
        Choice("BLOCK_M", (128,)),
        Choice("BLOCK_N", (64,)),
        Choice("HEAD_DIM", (64,)),
        Choice("num_warps", (4,)),
        Choice("num_stages", (2,)),
    ),
    configs={"trigger": [{"BLOCK_M": 128, "BLOCK_N": 64, "HEAD_DIM": 64,
                          "num_warps": 4, "num_stages": 2}]},
    targets=("sm_103",),
    requires=("triton>=3.5",),
    label="{BLOCK_M}x{BLOCK_N}x{HEAD_DIM}-w{num_warps}-s{num_stages}",
)

LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def head_offsets(off_hz, stride_z, stride_h, H):
    # One program per (batch, head) pair and query block.
    off_z = off_hz // H
    off_h = off_hz % H
    return off_z * stride_z + off_h * stride_h


@triton.jit
def causal_mask(qk, offs_m, offs_n, start_n, CAUSAL: tl.constexpr):
    if CAUSAL:
        keep = offs_m[:, None] >= (start_n + offs_n[None, :])
        qk = tl.where(keep, qk, float("-inf"))
    return qk


@triton.jit
def padding_mask(qk, offs_n, start_n, N_CTX):
    valid = (start_n + offs_n[None, :]) < N_CTX
    return tl.where(valid, qk, float("-inf"))


@triton.jit
def attn_inner(
    acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_kk, stride_vn, stride_vk,
    offs_m, offs_n, offs_d, lo, hi, N_CTX, qk_scale,
    BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, EVEN_N: tl.constexpr,
):
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        k_ptrs = k_base + offs_d[:, None] * stride_kk + cols[None, :] * stride_kn
        v_ptrs = v_base + cols[:, None] * stride_vn + offs_d[None, :] * stride_vk
        if EVEN_N:
            k = tl.load(k_ptrs)
        else:
            k = tl.load(k_ptrs, mask=cols[None, :] < N_CTX, other=0.0)
        qk = tl.dot(q, k)
        qk = causal_mask(qk, offs_m, offs_n, start_n, CAUSAL)
        if not EVEN_N:
            qk = padding_mask(qk, offs_n, start_n, N_CTX)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        if EVEN_N:
            v = tl.load(v_ptrs)
        else:
            v = tl.load(v_ptrs, mask=cols[:, None] < N_CTX, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def attn_fwd(
    q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr,
    stride_qz, stride_qh, stride_qm, stride_qk,
    stride_kz, stride_kh, stride_kn, stride_kk,
    stride_vz, stride_vh, stride_vn, stride_vk,
    stride_oz, stride_oh, stride_om, stride_ok,
    H, N_CTX, sm_scale,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr, EVEN_N: tl.constexpr, STORE_LSE: tl.constexpr,
    OUT_BF16: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    q_base = q_ptr + head_offsets(off_hz, stride_qz, stride_qh, H)
    k_base = k_ptr + head_offsets(off_hz, stride_kz, stride_kh, H)
    v_base = v_ptr + head_offsets(off_hz, stride_vz, stride_vh, H)
    o_base = o_ptr + head_offsets(off_hz, stride_oz, stride_oh, H)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * LOG2E
    q_mask = offs_m[:, None] < N_CTX
    q = tl.load(q_base + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk, mask=q_mask, other=0.0)
    hi = N_CTX
    if CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX)
    acc, l_i, m_i = attn_inner(
        acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_kk, stride_vn, stride_vk,
        offs_m, offs_n, offs_d, 0, hi, N_CTX, qk_scale, BLOCK_N, CAUSAL, EVEN_N,
    )
    acc = acc / l_i[:, None]
    if STORE_LSE:
        lse = m_i + tl.math.log2(l_i)
        tl.store(lse_ptr + off_hz * N_CTX + offs_m, lse, mask=offs_m < N_CTX)
    if OUT_BF16:
        out = acc.to(tl.bfloat16)
    else:
        out = acc.to(tl.float16)
    o_ptrs = o_base + offs_m[:, None] * stride_om + offs_d[None, :] * stride_ok
    tl.store(o_ptrs, out, mask=q_mask)


@REPRO.compile
def compile_case(case):
    signature = {name: "*fp16" for name in ("q_ptr", "k_ptr", "v_ptr", "o_ptr")}
    signature["lse_ptr"] = "*fp32"
    for tensor in "qkvo":
        for axis in ("z", "h", "m" if tensor in "qo" else "n", "k"):
            signature[f"stride_{tensor}{axis}"] = "i32"
    signature.update(H="i32", N_CTX="i32", sm_scale="fp32")
    constexprs = {name: case[name] for name in ("BLOCK_M", "BLOCK_N", "HEAD_DIM")}
    constexprs.update(CAUSAL=True, EVEN_N=False, STORE_LSE=True, OUT_BF16=False)
    return compile_kernel(attn_fwd, case, signature, constexprs)
