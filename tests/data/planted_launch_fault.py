"""A launch that fails as a fault on the GPU is reported, planted for a machine without one.

Its kernel compiles for sm_90 anywhere; its launch raises the error a CUDA fault surfaces
as (``CUDA error: an illegal memory access was encountered``) without touching a GPU, so the
engine's evidence step for a faulting launch runs here (tests/test_sanitizer.py). A launch
that cannot get a GPU at all is the machine's failure (``harness-error:gpu-unavailable``),
and has no evidence step.
"""

import triton
import triton.language as tl

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

REPRO = Reproducer(
    id="planted-launch-fault",
    title="a launch that raises a CUDA fault's error",
    family="planted",
    params=(Choice("BLOCK", (64,)),),
    configs={"trigger": [{"BLOCK": 64}]},
    targets=("sm_90",),
    label="b{BLOCK}",
)


@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


@REPRO.compile
def compile_case(case):
    return compile_kernel(scale, case, {"x_ptr": "*fp32", "n": "i32"}, {"BLOCK": case["BLOCK"]})


@REPRO.launch
def launch_case(case):
    raise RuntimeError("CUDA error: an illegal memory access was encountered")
