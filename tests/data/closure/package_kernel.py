"""A kernel from an installed package (``kernlib``, on the path as site-packages would be):
its helpers and ``tl.constexpr`` globals live in a sibling module of the package.

Same bug as module_constants.py (triton-lang/triton#11586 on sm_90).
"""

from kernlib.gemm import int8_gemm

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

REPRO = Reproducer(
    id="closure-package-kernel",
    title="kernlib's int8 GEMM in a warp-specialized loop (a kernel from an installed package)",
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
