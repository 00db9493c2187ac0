"""Compiles a kernel with ``num_ctas=2`` for sm_80: Triton 3.5.0 and later refuse it while
parsing the options (``num_ctas > 1 requires NVIDIA SM90+``), before any MLIR pass runs.
tests/test_refusal.py checks that ``repro capture`` writes no reproducer for it.
"""

import triton
import triton.language as tl

from suite.api import Case, Target
from suite.tritonc import compile_kernel


@triton.jit
def copy(x_ptr, y_ptr):
    r = tl.arange(0, 128)
    tl.store(y_ptr + r, tl.load(x_ptr + r))


compile_kernel(
    copy,
    Case("refused", {"num_ctas": 2}, Target("sm_80")),
    {"x_ptr": "*fp32", "y_ptr": "*fp32"},
    {},
)
