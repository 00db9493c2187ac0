"""kernlib's helpers reached through aliases: a module imported under another name and read by
attribute, a helper imported under another name, an assignment-made helper of the package.

Same bug as module_constants.py (triton-lang/triton#11586 on sm_90).
"""

import kernlib.tiles as T
import triton
import triton.language as tl
from kernlib.tiles import make_desc as descriptor_of

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

REPRO = Reproducer(
    id="closure-aliased-imports",
    title="int8 tl.dot in a warp-specialized loop, kernlib helpers under aliases",
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


@triton.jit
def int8_gemm(out_ptr, a_ptr, b_ptr, M, N, K, WARP_SPECIALIZE: tl.constexpr):
    a_desc = descriptor_of(a_ptr, M, K, T.TILE_M, T.TILE_K)
    b_desc = descriptor_of(b_ptr, K, N, T.TILE_K, T.TILE_N)
    out_desc = descriptor_of(out_ptr, M, N, T.TILE_M, T.TILE_N)
    off_m = tl.program_id(0) * T.TILE_M
    off_n = tl.program_id(1) * T.TILE_N
    acc = T.zeros_tile()
    for k in tl.range(0, tl.cdiv(K, T.TILE_K), warp_specialize=WARP_SPECIALIZE):
        a = a_desc.load([off_m, k * T.TILE_K])
        b = b_desc.load([k * T.TILE_K, off_n])
        acc = tl.dot(a, b, acc, out_dtype=T.ACC)
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
