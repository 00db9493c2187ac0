"""An ahead-of-time build script of a kernel package: compiles kernlib's int8 GEMM (installed,
as site-packages would hold it) for sm_90 through ``triton.compile``, as AOT tools do.

Under warp specialization the compile fails (triton-lang/triton#11586): the program dies.
"""

import triton
from kernlib.gemm import int8_gemm
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

names = ("out_ptr", "a_ptr", "b_ptr", "M", "N", "K")
types = dict(zip(names, ("*i32", "*i8", "*i8", "i32", "i32", "i32"), strict=True))
source = ASTSource(
    int8_gemm,
    {**types, "WARP_SPECIALIZE": "constexpr"},
    constexprs={"WARP_SPECIALIZE": True},
    attrs={(i,): [["tt.divisibility", 16]] for i in range(len(names))},
)
options = {"num_warps": 4, "num_stages": 3, "cluster_dims": (1, 1, 1)}
triton.compile(source, target=GPUTarget("cuda", 90, 32), options=options)
print("built int8_gemm")
