"""A program that dies in the compiler: triton-lang/triton#4418 (the upstream port in
repros/upstream/hopper_chained_dot_layout.py), compiled for sm_90 through
``triton.compile`` the way Triton 3.2 takes a kernel. Under 3.2.0 LLVM aborts the
process ("Failed to emit transfer from register to shared", SIGABRT) in the middle of
the compile. Used by tests/test_capture.py.
"""

import triton
import triton.language as tl
from triton.backends.compiler import AttrsDescriptor, GPUTarget
from triton.compiler import ASTSource


@triton.jit
def scaled_dot(
    out_ptr, stride_m, stride_h, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr
):
    rows = tl.arange(0, BLOCK_M)[:, None] * stride_m
    cols = tl.arange(0, BLOCK_D)[None, :]
    y = tl.zeros([BLOCK_M, BLOCK_N], tl.float16)
    x = tl.zeros([BLOCK_N, BLOCK_D], tl.float16)
    p = tl.dot(y, x)
    p = tl.zeros([BLOCK_M], tl.float16)[:, None] * p + p
    tl.store(out_ptr + tl.program_id(0) * stride_h + rows + cols, p)


print("compiling scaled_dot for sm_90", flush=True)
source = ASTSource(
    scaled_dot,
    {"out_ptr": "*fp16", "stride_m": "i32", "stride_h": "i32"},
    {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_D": 64},
    AttrsDescriptor.from_hints({0: 16, 1: 16, 2: 16}),
)
triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": 8})
print("compiled")
