"""A flattened loop nest runs an empty inner loop once per outer iteration: wrong result.

triton-lang/triton#11656 (reported 2026-09, closed; fixed by #11607 and its reland #11688,
cherry-picked for 3.8.x in #11740, which says 3.7.1 fails the same way): with
``tl.range(..., flatten=True)`` on the outer loop, ``TritonGPUFuseNestedLoops`` drops the
guard of an inner ``tl.range(lo, hi)`` whose runtime bounds are inverted (``hi < lo``), so
the inner body runs once per outer iteration where it must never run. The issue's kernel
counts the inner iterations: 4 instead of 0.

The kernel here sums the rows ``[lo, hi)`` of each of OUTER blocks of rows (a segment sum
whose window may be empty, as a causal window past its end is) and counts the rows it
added. The oracle is a float64 reference of the same sums (zero for an empty window) and
the exact count; ``FLATTEN=False`` is the same kernel without the hint. Wrong on an H200
with triton 3.6.0 (2026-11-26, docs/gpu-results.md) at both triggers; both nearest passes
are right.
"""

import triton
import triton.language as tl

from suite import Choice, Reference, Reproducer, Size
from suite.checks import poisoned, random_input
from suite.tritonc import compile_kernel

BLOCK = 128
ROWS = 16  # rows per outer block: every window lies inside it


def _config(lo, hi, flatten=True, outer=4, dtype="fp32"):
    return {"LO": lo, "HI": hi, "FLATTEN": flatten, "OUTER": outer, "dtype": dtype}


REPRO = Reproducer(
    id="upstream-11656-flatten-empty-inner-loop",
    title="a flattened loop nest runs an empty inner tl.range once per outer iteration",
    family="triton-loop-fusion",
    references=("https://github.com/triton-lang/triton/issues/11656",),
    params=(
        Size("LO", (0, 2, 3, 5, 8)),
        Size("HI", (0, 2, 3, 5, 8)),
        Choice("FLATTEN", (True, False)),
        Size("OUTER", (2, 4, 9)),
        Choice("dtype", ("fp32", "fp16")),
    ),
    configs={
        "trigger": [_config(5, 3), _config(8, 2, outer=9, dtype="fp16")],
        "nearest-pass": [_config(5, 3, flatten=False), _config(3, 5)],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    label="lo{LO}-hi{HI}-flat{FLATTEN}-o{OUTER}-{dtype}",
    oracles=(
        Reference(
            lambda x, lo, hi: {
                "total": x[:, lo:hi, :].sum(dim=(0, 1)),
                "count": x.new_full((1,), max(0, hi - lo) * x.shape[0]).int(),
            }
        ),
    ),
)


@triton.jit
def window_sum(
    x_ptr,
    total_ptr,
    count_ptr,
    lo,
    hi,
    OUTER: tl.constexpr,
    ROWS: tl.constexpr,
    BLOCK: tl.constexpr,
    FLATTEN: tl.constexpr,
):
    cols = tl.arange(0, BLOCK)
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    count = tl.full((), 0, tl.int32)
    for block in tl.range(0, OUTER, flatten=FLATTEN):
        for row in tl.range(lo, hi):
            total += tl.load(x_ptr + (block * ROWS + row) * BLOCK + cols).to(tl.float32)
            count += 1
    tl.store(total_ptr + cols, total.to(total_ptr.dtype.element_ty))
    tl.store(count_ptr, count)


def _constexprs(case):
    return {"OUTER": case["OUTER"], "ROWS": ROWS, "BLOCK": BLOCK, "FLATTEN": case["FLATTEN"]}


@REPRO.compile
def compile_case(case):
    element = "*" + case["dtype"]
    signature = {"x_ptr": element, "total_ptr": element, "count_ptr": "*i32"}
    signature.update({"lo": "i32", "hi": "i32"})
    return compile_kernel(window_sum, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    x = random_input((case["OUTER"], ROWS, BLOCK), case["dtype"])
    return {"x": x, "lo": case["LO"], "hi": case["HI"]}


@REPRO.launch
def launch_case(case, x, lo, hi):
    import torch

    total = poisoned((BLOCK,), x.dtype)
    count = poisoned((1,), torch.int32)
    window_sum[(1,)](x, total, count, lo, hi, **_constexprs(case), **case.options)
    return {"total": total, "count": count}
