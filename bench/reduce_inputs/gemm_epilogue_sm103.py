"""A production-style fused GEMM (grouped tile order, masks, bias, activation, fp16/bf16
epilogue, helpers) planted with triton-lang/triton#8473: on sm_103 Triton 3.5.0 cannot
select llvm.nvvm.tcgen05.wait for any tl.dot; 3.6.0 compiles it.

Benchmark input for `repro reduce` (bench/bench_reduce.py), not a built-in reproducer.
Minimal form: repros/upstream/sm103_tcgen05_wait.py.
"""

import triton
import triton.language as tl

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

REPRO = Reproducer(
    id="bench-reduce-gemm-epilogue-sm103",
    title="Fused GEMM epilogue kernel on sm_103 (tcgen05.wait selection, #8473)",
    family="bench-reduce",
    params=(
        Choice("BLOCK_M", (128,)),
        Choice("BLOCK_N", (128,)),
        Choice("BLOCK_K", (64,)),
        Choice("GROUP_M", (8,)),
        Choice("num_warps", (4,)),
        Choice("num_stages", (3,)),
    ),
    configs={"trigger": [{"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8,
                          "num_warps": 4, "num_stages": 3}]},
    targets=("sm_103",),
    requires=("triton>=3.5",),
    label="{BLOCK_M}x{BLOCK_N}x{BLOCK_K}-g{GROUP_M}-w{num_warps}-s{num_stages}",
)

ACT_NONE = 0
ACT_RELU = 1
ACT_GELU = 2
ACT_LEAKY = 3


@triton.jit
def grouped_tile(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    # Grouped ordering: consecutive programs share A rows for L2 reuse.
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def gelu(x):
    # tanh approximation, written out (tl has no tanh on every release).
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    t = 2.0 * tl.sigmoid(2.0 * inner) - 1.0
    return 0.5 * x * (1.0 + t)


@triton.jit
def activation(x, ACTIVATION: tl.constexpr, SLOPE: tl.constexpr):
    if ACTIVATION == 1:
        x = tl.maximum(x, 0.0)
    elif ACTIVATION == 2:
        x = gelu(x)
    elif ACTIVATION == 3:
        x = tl.where(x >= 0, x, x * SLOPE)
    return x


@triton.jit
def load_tile(ptr, rows, cols, stride_r, stride_c, n_rows, n_cols, EVEN: tl.constexpr):
    offsets = rows[:, None] * stride_r + cols[None, :] * stride_c
    if EVEN:
        tile = tl.load(ptr + offsets)
    else:
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        tile = tl.load(ptr + offsets, mask=mask, other=0.0)
    return tile


@triton.jit
def fused_gemm(
    a_ptr,
    b_ptr,
    c_ptr,
    bias_ptr,
    scale_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    alpha,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    HAS_SCALE: tl.constexpr,
    ACTIVATION: tl.constexpr,
    SLOPE: tl.constexpr,
    EVEN_K: tl.constexpr,
    OUT_BF16: tl.constexpr,
):
    pid = tl.program_id(0)
    pid_m, pid_n = grouped_tile(pid, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    # Hints the JIT would derive for aligned, contiguous tiles.
    rm = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        ks = k * BLOCK_K + rk
        a = load_tile(a_ptr, rm, ks, stride_am, stride_ak, M, K, EVEN_K)
        b = load_tile(b_ptr, ks, rn, stride_bk, stride_bn, K, N, EVEN_K)
        acc = tl.dot(a, b, acc)
    acc = acc * alpha
    if HAS_SCALE:
        scale = tl.load(scale_ptr + rn, mask=rn < N, other=1.0)
        acc = acc * scale[None, :]
    if HAS_BIAS:
        bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0)
        acc = acc + bias[None, :].to(tl.float32)
    acc = activation(acc, ACTIVATION, SLOPE)
    if OUT_BF16:
        out = acc.to(tl.bfloat16)
    else:
        out = acc.to(tl.float16)
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_offsets = cm[:, None] * stride_cm + cn[None, :] * stride_cn
    c_mask = (cm[:, None] < M) & (cn[None, :] < N)
    tl.store(c_ptr + c_offsets, out, mask=c_mask)


@REPRO.compile
def compile_case(case):
    signature = {
        "a_ptr": "*fp16",
        "b_ptr": "*fp16",
        "c_ptr": "*fp16",
        "bias_ptr": "*fp16",
        "scale_ptr": "*fp32",
        "M": "i32",
        "N": "i32",
        "K": "i32",
        "stride_am": "i32",
        "stride_ak": "i32",
        "stride_bk": "i32",
        "stride_bn": "i32",
        "stride_cm": "i32",
        "stride_cn": "i32",
        "alpha": "fp32",
    }
    constexprs = {name: case[name] for name in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")}
    constexprs.update(
        HAS_BIAS=True, HAS_SCALE=True, ACTIVATION=ACT_GELU, SLOPE=0.01, EVEN_K=False,
        OUT_BF16=False,
    )
    return compile_kernel(fused_gemm, case, signature, constexprs)
