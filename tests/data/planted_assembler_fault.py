"""A launch whose fault follows the assembler, planted for a machine without a GPU.

Its kernel compiles for sm_90 anywhere, through Triton and the ptxas Triton is told to use;
its launch raises the error a CUDA fault surfaces as, without touching a GPU, when the PTX
was assembled by the bundled ptxas at its default level (``SHOWS="bundled"``), or whatever
assembled it (``SHOWS="always"``). The engine's ptxas differential relaunches it with a
second ptxas and at -O0 (tests/test_ptxas_differential.py): the first is the assembler's
bug, the second is not.
"""

import os

import triton
import triton.language as tl

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

#: The knobs the differential sets to pick another ptxas or -O0 (suite.engine.ptxas).
ASSEMBLER_KNOBS = ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH", "DISABLE_PTXAS_OPT")

REPRO = Reproducer(
    id="planted-assembler-fault",
    title="a launch that faults with the bundled ptxas only",
    family="planted",
    params=(Choice("BLOCK", (64,)), Choice("SHOWS", ("bundled", "always"))),
    configs={
        "trigger": [{"BLOCK": 64, "SHOWS": "bundled"}],
        "always": [{"BLOCK": 64, "SHOWS": "always"}],
    },
    targets=("sm_90",),
    label="b{BLOCK}-{SHOWS}",
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
    other = any(os.environ.get(knob) for knob in ASSEMBLER_KNOBS)
    if case["SHOWS"] == "always" or not other:
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
