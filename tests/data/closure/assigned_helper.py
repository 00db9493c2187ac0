"""Helpers made the two ways libraries make them: by decorator, and by assignment
(``k_offset = triton.jit(_k_offset, noinline=True)``), reading module constants.

Same bug as module_constants.py (triton-lang/triton#11586 on sm_90).
"""

import triton
import triton.language as tl

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

BLOCK_M: tl.constexpr = tl.constexpr(64)
BLOCK_N = tl.constexpr(32)
BLOCK_K = tl.constexpr(32)

REPRO = Reproducer(
    id="closure-assigned-helper",
    title="int8 tl.dot in a warp-specialized loop, helpers by decorator and by assignment",
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


def _k_offset(k):
    return k * BLOCK_K


k_offset = triton.jit(_k_offset, noinline=True)


@triton.jit
def make_desc(ptr, rows, cols, BR: tl.constexpr, BC: tl.constexpr):
    return tl.make_tensor_descriptor(
        ptr, shape=[rows, cols], strides=[cols, 1], block_shape=[BR, BC]
    )


@triton.jit
def tile_dot(a_desc, b_desc, off_m, off_n, k, acc):
    a = a_desc.load([off_m, k_offset(k)])
    b = b_desc.load([k_offset(k), off_n])
    return tl.dot(a, b, acc, out_dtype=tl.int32)


@triton.jit
def int8_gemm(out_ptr, a_ptr, b_ptr, M, N, K, WARP_SPECIALIZE: tl.constexpr):
    a_desc = make_desc(a_ptr, M, K, BLOCK_M, BLOCK_K)
    b_desc = make_desc(b_ptr, K, N, BLOCK_K, BLOCK_N)
    out_desc = make_desc(out_ptr, M, N, BLOCK_M, BLOCK_N)
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=WARP_SPECIALIZE):
        acc = tile_dot(a_desc, b_desc, off_m, off_n, k, acc)
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
    return compile_kernel(int8_gemm, case, signature, {"WARP_SPECIALIZE": case["WARP_SPECIALIZE"]})
