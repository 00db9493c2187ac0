"""An autotuned, heuristics-wrapped kernel (as libraries ship them); the compile goes to the
JIT function under both decorators.

Same bug as module_constants.py (triton-lang/triton#11586 on sm_90).
"""

import triton
import triton.language as tl

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

CONFIGS = [triton.Config({}, num_warps=4, num_stages=3)]
BLOCK_K = tl.constexpr(32)

REPRO = Reproducer(
    id="closure-autotuned",
    title="autotuned int8 tl.dot in a warp-specialized descriptor loop",
    family="closure",
    params=(
        Choice("WARP_SPECIALIZE", (False, True)),
        Choice("num_warps", (4,)),
        Choice("num_stages", (3,)),
    ),
    configs={
        "trigger": [{"WARP_SPECIALIZE": True, "num_warps": 4, "num_stages": 3}],
        "nearest-pass": [{"WARP_SPECIALIZE": False, "num_warps": 4, "num_stages": 3}],
    },
    targets=("sm_90",),
    requires=("triton.language.make_tensor_descriptor", "triton.language.range(warp_specialize)"),
)


@triton.autotune(configs=CONFIGS, key=["K"])
@triton.heuristics({"BLOCK_M": lambda args: 64, "BLOCK_N": lambda args: 32})
@triton.jit
def int8_gemm(
    out_ptr,
    a_ptr,
    b_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr,
):
    a_desc = tl.make_tensor_descriptor(
        a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K]
    )
    b_desc = tl.make_tensor_descriptor(
        b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N]
    )
    out_desc = tl.make_tensor_descriptor(
        out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N]
    )
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=WARP_SPECIALIZE):
        a = a_desc.load([off_m, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, off_n])
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
    out_desc.store([off_m, off_n], acc)


@REPRO.compile
def compile_case(case):
    signature = {
        "out_ptr": "*i32",
        "a_ptr": "*i8",
        "b_ptr": "*i8",
        "M": "i32",
        "N": "i32",
        "K": "i32",
    }
    constexprs = {"BLOCK_M": 64, "BLOCK_N": 32, "WARP_SPECIALIZE": case["WARP_SPECIALIZE"]}
    return compile_kernel(int8_gemm.fn.fn, case, signature, constexprs)
