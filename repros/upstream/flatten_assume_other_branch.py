"""A flattened loop nest trusts a tl.assume from another branch: the empty inner loop runs.

triton-lang/triton#11519 (reported 2026-08, closed): ``TritonGPUFuseNestedLoops`` looks
for ``tl.assume(ub > lb)`` on the inner loop's bounds to skip the zero-trip version split
(the hack #8132 added, 2025-09), and accepts an ``llvm.assume`` that does not dominate the
nest: one written in the other arm of an ``if``. Called with ``m = 4, n = 0`` the source runs
the inner loop zero times, leaves the accumulator at zero and never writes ``sink``; the
flattened kernel runs the inner body anyway.

The kernel here is the issue's: a fast path for ``m == 0`` that asserts ``n > 0``, and a
nest for the other shapes that accumulates rows of ``p`` and writes each partial sum to
``sink``. The oracle is a float64 reference of the source's meaning (``out`` and the whole
``sink``, which starts at zero); ``FLATTEN=False`` is the same kernel without the hint.
Wrong on an H200 with triton 3.6.0 (2026-11-26, docs/gpu-results.md) at both triggers;
both nearest passes are right.
"""

import triton
import triton.language as tl

from suite import Choice, Reference, Reproducer, Size
from suite.checks import poisoned, random_input, torch_dtype
from suite.tritonc import compile_kernel

BLOCK = 64
SLOTS = 8  # sink rows per outer iteration: n is at most 8


def _config(m, n, flatten=True, dtype="fp32"):
    return {"M": m, "N": n, "FLATTEN": flatten, "dtype": dtype}


def _expected(p, m, n, sink):
    """What the source computes: the fast path, or the nest's partial sums."""
    sink = sink.clone()
    acc = p.new_zeros((BLOCK,))
    if m == 0:
        acc = acc + p[:BLOCK]
    for i in range(m):
        for j in range(n):
            acc = acc + p[j * BLOCK : (j + 1) * BLOCK]
            sink[(i * SLOTS + j) * BLOCK : (i * SLOTS + j + 1) * BLOCK] = acc
    return {"out": acc, "sink": sink}


REPRO = Reproducer(
    id="upstream-11519-flatten-assume-other-branch",
    title="a flattened loop nest trusts a tl.assume written in another branch",
    family="triton-loop-fusion",
    references=("https://github.com/triton-lang/triton/issues/11519",),
    params=(
        Size("M", (0, 1, 2, 4)),
        Size("N", (0, 2, 3, 8)),
        Choice("FLATTEN", (True, False)),
        Choice("dtype", ("fp32", "fp16")),
    ),
    configs={
        "trigger": [_config(4, 0), _config(2, 0, dtype="fp16")],
        "nearest-pass": [_config(4, 0, flatten=False), _config(4, 3)],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    label="m{M}-n{N}-flat{FLATTEN}-{dtype}",
    oracles=(Reference(_expected),),
)


@triton.jit
def assume_other_branch(
    p_ptr, out_ptr, sink_ptr, m, n, BLOCK: tl.constexpr, SLOTS: tl.constexpr, FLATTEN: tl.constexpr
):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    if m == 0:
        tl.assume(n > 0)  # in force only where m == 0
        acc += tl.load(p_ptr + offs).to(tl.float32)
    else:
        for i in tl.range(0, m, flatten=FLATTEN):
            for j in range(0, n):  # reachable only where m != 0
                acc += tl.load(p_ptr + j * BLOCK + offs).to(tl.float32)
                tl.store(sink_ptr + (i * SLOTS + j) * BLOCK + offs, acc)
    tl.store(out_ptr + offs, acc)


def _constexprs(case):
    return {"BLOCK": BLOCK, "SLOTS": SLOTS, "FLATTEN": case["FLATTEN"]}


@REPRO.compile
def compile_case(case):
    element = "*" + case["dtype"]
    signature = {"p_ptr": element, "out_ptr": element, "sink_ptr": element}
    signature.update({"m": "i32", "n": "i32"})
    return compile_kernel(assume_other_branch, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    import torch

    dtype = torch_dtype(case["dtype"])
    p = random_input((SLOTS * BLOCK,), case["dtype"])
    sink = torch.zeros((max(case["M"], 1) * SLOTS * BLOCK,), dtype=dtype, device=p.device)
    return {"p": p, "m": case["M"], "n": case["N"], "sink": sink}


@REPRO.launch
def launch_case(case, p, m, n, sink):
    out = poisoned((BLOCK,), p.dtype)
    written = sink.clone()  # starts at zero: the source writes it only where n > 0
    assume_other_branch[(1,)](p, out, written, m, n, **_constexprs(case), **case.options)
    return {"out": out, "sink": written}
