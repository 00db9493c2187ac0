"""Compiles one kernel for sm_90 through ``suite.tritonc.compile_kernel`` (the form each
release takes: positional, AttrsDescriptor, constexprs), with a size divisible by 16, a
stride equal to 1 and one argument left unspecialized; prints the compiled kernel's name.
tests/test_capture.py checks that the hook records the same specialization on each release.
"""

import triton
import triton.language as tl

from suite.api import Case, Target
from suite.tritonc import compile_kernel

ROWS = tl.constexpr(4)


@triton.jit
def copy_rows(src_ptr, dst_ptr, n, stride, offset, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for row in range(ROWS):
        values = tl.load(src_ptr + offset + row * n + cols * stride, mask=cols < n)
        tl.store(dst_ptr + row * n + cols, values, mask=cols < n)


case = Case("capture-specialized", {"num_warps": 2}, Target("sm_90"))
signature = {"src_ptr": "*fp32", "dst_ptr": "*fp32", "n": "i32", "stride": "i32", "offset": "i32"}
compile_kernel(
    copy_rows,
    case,
    signature,
    {"BLOCK": 64},
    divisible=["src_ptr", "dst_ptr", "n"],
    equal_to_1=["stride"],
)
print("compiled copy_rows")
