"""A kernel whose ``@triton.jit`` takes arguments (``do_not_specialize``), reading an annotated
``tl.constexpr`` dtype global.

The kernel reads three ``tl.constexpr`` globals and a derived one; the host code reads a
plain module constant. Under warp specialization the int8 WGMMA it selects has no PTX on
sm_90 (triton-lang/triton#11586): the trigger fails, the nearest config compiles.
"""

import triton
import triton.language as tl

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

TILE_M = tl.constexpr(64)
TILE_N = tl.constexpr(32)
TILE_K = tl.constexpr(32)
ACC_ROWS = tl.constexpr(TILE_M.value)
PROBLEM = 256  # read by the host code only
ACC_DTYPE: tl.constexpr = tl.constexpr(tl.int32)

REPRO = Reproducer(
    id="closure-jit-arguments",
    title="int8 tl.dot in a warp-specialized descriptor loop, jit arguments and a dtype global",
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


@triton.jit(do_not_specialize=["M"])
def int8_gemm(out_ptr, a_ptr, b_ptr, M, N, K, WARP_SPECIALIZE: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(
        a_ptr, shape=[M, K], strides=[K, 1], block_shape=[TILE_M, TILE_K]
    )
    b_desc = tl.make_tensor_descriptor(
        b_ptr, shape=[K, N], strides=[N, 1], block_shape=[TILE_K, TILE_N]
    )
    out_desc = tl.make_tensor_descriptor(
        out_ptr, shape=[M, N], strides=[N, 1], block_shape=[TILE_M, TILE_N]
    )
    off_m = tl.program_id(0) * TILE_M
    off_n = tl.program_id(1) * TILE_N
    acc = tl.zeros((ACC_ROWS, TILE_N), dtype=ACC_DTYPE)
    for k in tl.range(0, tl.cdiv(K, TILE_K), warp_specialize=WARP_SPECIALIZE):
        a = a_desc.load([off_m, k * TILE_K])
        b = b_desc.load([k * TILE_K, off_n])
        acc = tl.dot(a, b, acc, out_dtype=ACC_DTYPE)
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
    assert PROBLEM % 64 == 0
    return compile_kernel(int8_gemm, case, signature, {"WARP_SPECIALIZE": case["WARP_SPECIALIZE"]})
