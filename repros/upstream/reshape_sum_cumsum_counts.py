"""Per-expert running counts through tl.reshape, tl.sum and tl.cumsum: wrong result or fault.

triton-lang/triton#4078 (reported 2024-06 with triton 2.3.1, open): a routing kernel that
counts, for each of BLOCK rows of top-K expert ids, how many rows so far picked each expert
(``tl.reshape`` of the ids to a column, a compare against ``tl.arange(0, EXPERTS)``,
``tl.reshape`` to ``[BLOCK, K, EXPERTS]``, ``tl.sum`` over K, ``tl.cumsum`` over the rows)
gives an error instead of the counts. Whether triton 3.6.0 still shows it on Hopper, and as
a wrong result or a fault, is what the GPU run decides (bench/probes/runtime_candidates/);
no baseline entry until it does.

The kernel here is the issue's, one program per BLOCK rows of ids. The oracles: a fault at
launch (always on) and a reference of the same counts (exact: they are integers).
``FORM="broadcast"`` computes the same counts without the two reshapes (the ids compared
as ``[BLOCK, K, 1]`` against ``[1, 1, EXPERTS]``), and one warp keeps the scan inside a
warp: the two nearest passes to confirm.
"""

import triton
import triton.language as tl

from suite import Choice, Reference, Reproducer, Size
from suite.checks import device, poisoned
from suite.tritonc import compile_kernel

TOP_K = 4
EXPERTS = 16
ROWS = 1024  # rows of ids; ROWS // BLOCK programs


def _config(form="reshape", block=128, warps=4):
    return {"FORM": form, "BLOCK": block, "num_warps": warps}


def _expected(ids, block):
    """For each row, how many rows of its block up to it picked each expert."""
    import torch

    picked = torch.zeros((ids.shape[0], EXPERTS), dtype=torch.int64, device=ids.device)
    picked.scatter_add_(1, ids.long(), torch.ones_like(ids, dtype=torch.int64))
    return picked.view(-1, block, EXPERTS).cumsum(dim=1).view(-1, EXPERTS)


REPRO = Reproducer(
    id="upstream-4078-reshape-sum-cumsum-counts",
    title="per-expert running counts through tl.reshape, tl.sum and tl.cumsum go wrong",
    family="triton-reduction",
    references=("https://github.com/triton-lang/triton/issues/4078",),
    params=(
        Choice("FORM", ("reshape", "broadcast")),
        Size("BLOCK", (32, 64, 128, 256)),
        Choice("num_warps", (1, 4, 8)),
    ),
    configs={
        "trigger": [_config(), _config(block=256, warps=8)],
        "nearest-pass": [_config(form="broadcast"), _config(warps=1)],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    label="{FORM}-b{BLOCK}-w{num_warps}",
    oracles=(Reference(_expected),),
)


@triton.jit
def block_count(
    ids_ptr,
    out_ptr,
    K: tl.constexpr,
    EXPERTS: tl.constexpr,
    BLOCK: tl.constexpr,
    RESHAPE: tl.constexpr,
):
    rows = tl.arange(0, BLOCK) + BLOCK * tl.program_id(0)
    experts = tl.arange(0, EXPERTS)
    ids = tl.load(ids_ptr + rows[:, None] * K + tl.arange(0, K)[None, :])
    if RESHAPE:
        column = tl.reshape(ids, [K * BLOCK, 1])
        hits = (column == tl.reshape(experts, [1, EXPERTS])).to(tl.int32)
        counts = tl.sum(tl.reshape(hits, [BLOCK, K, EXPERTS]), axis=1)
    else:
        hits = (ids[:, :, None] == experts[None, None, :]).to(tl.int32)
        counts = tl.sum(hits, axis=1)
    counts = tl.cumsum(counts, 0)
    tl.store(out_ptr + rows[:, None] * EXPERTS + experts[None, :], counts)


def _constexprs(case):
    return {
        "K": TOP_K,
        "EXPERTS": EXPERTS,
        "BLOCK": case["BLOCK"],
        "RESHAPE": case["FORM"] == "reshape",
    }


@REPRO.compile
def compile_case(case):
    signature = {"ids_ptr": "*i64", "out_ptr": "*i64"}
    return compile_kernel(block_count, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    import torch

    ids = torch.randint(EXPERTS, (ROWS, TOP_K), device=device())
    return {"ids": ids, "block": case["BLOCK"]}


@REPRO.launch
def launch_case(case, ids, block):
    import torch

    out = poisoned((ROWS, EXPERTS), torch.int64)
    block_count[(ROWS // block,)](ids, out, **_constexprs(case), **case.options)
    return out
