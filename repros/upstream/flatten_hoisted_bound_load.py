"""A flattened loop nest loads the inner bound above a zero-trip outer loop: a fault.

triton-lang/triton#11601 (reported 2026-09, open): with ``tl.range(..., flatten=True)``,
``TritonGPUFuseNestedLoops`` moves the inner loop's bound computation above the outer loop.
When that bound is a scalar ``tl.load`` it now runs even when the outer loop has zero
trips, unmasked: a kernel whose source never reads ``q`` at ``m = 0`` dereferences it. The
issue (triton 3.7.1, an RTX PRO 6000) points ``q`` at unmapped memory and gets an illegal
memory access; ``flatten=False`` is clean.

The kernel here sums, for each of ``m`` segments, the first ``lengths[slot]`` rows of ``p``;
an empty batch (``m = 0``) passes a slot that names no length at all (``2**30``, far past
the table: the source never reads it). The oracles: a fault at launch (always on) and a
float64 reference (zero for ``m = 0``). ``FLATTEN=False`` and ``m > 0`` with a real slot
are the nearest passes. On an H200 with triton 3.6.0 (2026-11-26, docs/gpu-results.md)
``m = 0`` flattened faults with "operation not supported on global/shared address space"
(the stray address lands in no global mapping); both nearest passes are right.
"""

import triton
import triton.language as tl

from suite import Choice, Reference, Reproducer, Size
from suite.checks import poisoned, random_input
from suite.tritonc import compile_kernel

BLOCK = 128
ROWS = 8  # rows of p; every length is at most ROWS
NO_SLOT = 1 << 30  # the slot an empty batch passes: the source never reads lengths there


def _config(m, flatten=True, dtype="fp32"):
    return {"M": m, "FLATTEN": flatten, "dtype": dtype}


def _expected(p, lengths, m, slot):
    """Each of the m segments adds the first lengths[slot] rows of p."""
    acc = p.new_zeros((BLOCK,))
    for _ in range(m):
        for j in range(int(lengths[slot])):
            acc = acc + p[j * BLOCK : (j + 1) * BLOCK]
    return acc


REPRO = Reproducer(
    id="upstream-11601-flatten-hoisted-bound-load",
    title="a flattened loop nest loads the inner bound above a zero-trip outer loop",
    family="triton-loop-fusion",
    references=("https://github.com/triton-lang/triton/issues/11601",),
    params=(
        Size("M", (0, 1, 3)),
        Choice("FLATTEN", (True, False)),
        Choice("dtype", ("fp32", "fp16")),
    ),
    configs={
        "trigger": [_config(0), _config(0, dtype="fp16")],
        "nearest-pass": [_config(0, flatten=False), _config(3)],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    label="m{M}-flat{FLATTEN}-{dtype}",
    oracles=(Reference(_expected),),
)


@triton.jit
def segment_rows(p_ptr, lengths_ptr, out_ptr, m, slot, BLOCK: tl.constexpr, FLATTEN: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for _ in tl.range(0, m, flatten=FLATTEN):
        length = tl.load(lengths_ptr + slot)  # read only when there is a segment
        for j in range(0, length):
            acc += tl.load(p_ptr + j * BLOCK + offs).to(tl.float32)
    tl.store(out_ptr + offs, acc)


def _constexprs(case):
    return {"BLOCK": BLOCK, "FLATTEN": case["FLATTEN"]}


@REPRO.compile
def compile_case(case):
    element = "*" + case["dtype"]
    signature = {"p_ptr": element, "lengths_ptr": "*i32", "out_ptr": element}
    signature.update({"m": "i32", "slot": "i32"})
    return compile_kernel(segment_rows, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    import torch

    p = random_input((ROWS * BLOCK,), case["dtype"])
    lengths = torch.randint(2, ROWS + 1, (4,), dtype=torch.int32, device=p.device)
    slot = 2 if case["M"] else NO_SLOT
    return {"p": p, "lengths": lengths, "m": case["M"], "slot": slot}


@REPRO.launch
def launch_case(case, p, lengths, m, slot):
    out = poisoned((BLOCK,), p.dtype)
    segment_rows[(1,)](p, lengths, out, m, slot, **_constexprs(case), **case.options)
    return out
