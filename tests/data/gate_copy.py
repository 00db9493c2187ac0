"""A copy kernel for ``repro gate``'s tests of configs it cannot check, under every release.

``BLOCK=128`` compiles; ``BLOCK=256`` raises :class:`~suite.Unsupported`, as a reproducer does
where the installed Triton cannot express the case (tma-gemm before Triton 3.4), so the gate
cannot check it; ``BLOCK=96`` is refused by Triton (``tl.arange`` takes a power of two), a
config the gate rejects. Each is a real compile in the child, on every release from 3.0.0.
"""

import triton
import triton.language as tl

from suite import Choice, Reproducer, Unsupported
from suite.tritonc import compile_kernel

REPRO = Reproducer(
    id="gate-copy",
    title="a copy kernel with a config the installed Triton cannot check",
    family="test",
    params=(Choice("BLOCK", (128, 256, 96)), Choice("num_warps", (4,))),
    configs={"default": [{"BLOCK": 128, "num_warps": 4}]},
    targets=("sm_90",),
    label="{BLOCK}-w{num_warps}",
)


@triton.jit
def copy_kernel(src_ptr, dst_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets))


@REPRO.compile
def compile_case(case):
    if case["BLOCK"] == 256:
        raise Unsupported("BLOCK=256 needs what this Triton lacks (the gate's test)")
    return compile_kernel(
        copy_kernel, case, {"src_ptr": "*fp32", "dst_ptr": "*fp32"}, {"BLOCK": case["BLOCK"]}
    )
