"""A cumulative sum of a 3-D tensor followed by a sum over another axis: wrong result.

triton-lang/triton#3017 (reported 2024-01 on an A100 and an H100 with triton 2.2.0, open):
``tl.cumsum(kv, axis=0)`` of the outer product ``kv[t, d, e] = k[t, d] * v[t, e]`` (16 x 16
x 16), then ``tl.sum(..., axis=1)``, gives values "completely different" from PyTorch's
``cumsum(0).sum(1)``; the ``tl.debug_barrier()`` between the steps are the issue's (they do
not help). Whether triton 3.6.0 still shows it on Hopper is what the GPU run decides
(bench/probes/runtime_candidates/); no baseline entry until it does.

The kernel here is the issue's: ``out[t, e] = sum_d sum_{s <= t} k[s, d] * v[s, e]``. The
oracle is a float64 reference of that sum. ``ORDER="sum-then-scan"`` computes the same
value with the two reductions swapped (``tl.cumsum(tl.sum(kv, axis=1), axis=0)``, equal in
exact arithmetic), and one warp keeps the scan's axis inside a warp: the two nearest passes
to confirm.
"""

import triton
import triton.language as tl

from suite import Choice, Reference, Reproducer, Size
from suite.checks import poisoned, random_input
from suite.tritonc import compile_kernel


def _config(order="scan-then-sum", warps=4, t=16):
    return {"ORDER": order, "num_warps": warps, "T": t}


def _expected(k, v):
    """The running sum over t of the outer products, summed over d."""
    return (k[:, :, None] * v[:, None, :]).cumsum(dim=0).sum(dim=1)


REPRO = Reproducer(
    id="upstream-3017-cumsum-then-sum-3d",
    title="tl.cumsum of a 3-D tensor followed by tl.sum over another axis gives wrong values",
    family="triton-reduction",
    references=("https://github.com/triton-lang/triton/issues/3017",),
    params=(
        Choice("ORDER", ("scan-then-sum", "sum-then-scan")),
        Choice("num_warps", (1, 2, 4, 8)),
        Size("T", (8, 16, 32)),
    ),
    configs={
        "trigger": [_config(), _config(warps=8)],
        "nearest-pass": [_config(order="sum-then-scan"), _config(warps=1)],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    label="{ORDER}-w{num_warps}-t{T}",
    oracles=(Reference(_expected),),
)


@triton.jit
def scan_then_sum(k_ptr, v_ptr, out_ptr, T: tl.constexpr, SCAN_FIRST: tl.constexpr):
    i = tl.arange(0, T)
    square = i[:, None] * T + i[None, :]
    k = tl.load(k_ptr + square)
    v = tl.load(v_ptr + square)
    tl.debug_barrier()
    kv = k[:, :, None] * v[:, None, :]
    tl.debug_barrier()
    if SCAN_FIRST:
        context = tl.cumsum(kv, axis=0)
        tl.debug_barrier()
        out = tl.sum(context, axis=1)
    else:
        out = tl.cumsum(tl.sum(kv, axis=1), axis=0)
    tl.debug_barrier()
    tl.store(out_ptr + square, out)


def _constexprs(case):
    return {"T": case["T"], "SCAN_FIRST": case["ORDER"] == "scan-then-sum"}


@REPRO.compile
def compile_case(case):
    signature = {"k_ptr": "*fp32", "v_ptr": "*fp32", "out_ptr": "*fp32"}
    return compile_kernel(scan_then_sum, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    t = case["T"]
    return {"k": random_input((t, t), "fp32"), "v": random_input((t, t), "fp32")}


@REPRO.launch
def launch_case(case, k, v):
    out = poisoned(k.shape, k.dtype)
    scan_then_sum[(1,)](k, v, out, **_constexprs(case), **case.options)
    return out
