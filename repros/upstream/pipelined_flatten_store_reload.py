"""A pipelined, flattened, unrolled loop reloads a value it just stored: wrong result.

triton-lang/triton#8259 (reported 2025-09, closed "help wanted", no fix named): a row loop
``tl.range(pid, ROWS, num_stages=2)`` around a column loop ``tl.range(0, COLS, 128,
loop_unroll_factor=2, num_stages=2, flatten=True)`` whose body stores a tile and loads it
straight back gives loaded values that differ from the stored ones; with one stage and no
flattening (the issue's "safe" kernel) they agree. Reported with an H100-era Triton
(3.4/3.5). On an H200 with triton 3.6.0 (2026-11-26, docs/gpu-results.md) the reloads
read NaN with 2 or 3 stages and the column loop unrolled twice, flattened or not; one stage
without flattening is right.

The kernel here is the issue's: each program writes ``row + col`` into rows pid..ROWS-1
(later programs write the same values again), reads each tile back and stores
``loaded - values``. The oracle is exact: every ``diff`` is 0 and every row holds its
values (the buffers start as NaN, so an unwritten element shows). Sizes are the issue's
but ROWS (4096 there: 34 G stores) is 512.
"""

import triton
import triton.language as tl

from suite import Choice, Reference, Reproducer, Size
from suite.checks import poisoned
from suite.tritonc import compile_kernel

COLS = 4096
TILE = 128


def _config(stages=2, unroll=2, flatten=True, rows=512):
    return {"num_stages": stages, "UNROLL": unroll, "FLATTEN": flatten, "ROWS": rows}


def _expected(rows):
    """Every row holds row + col; every reloaded tile equals what was stored."""
    import torch

    from suite.checks import device

    index = torch.arange(rows, device=device())[:, None] + torch.arange(COLS, device=device())
    values = index.to(torch.float32).flatten()
    return {"stored": values, "diff": torch.zeros_like(values)}


REPRO = Reproducer(
    id="upstream-8259-pipelined-flatten-store-reload",
    title="a pipelined, flattened, unrolled loop reloads a tile it just stored: wrong values",
    family="triton-pipeliner",
    references=("https://github.com/triton-lang/triton/issues/8259",),
    params=(
        Choice("num_stages", (1, 2, 3)),
        Choice("UNROLL", (1, 2)),
        Choice("FLATTEN", (True, False)),
        Size("ROWS", (64, 512, 1024)),
    ),
    configs={
        # 2 stages without flatten fails too on an H200 (2026-11-26): the "safe"
        # kernel differs from it in its single stage.
        "trigger": [_config(), _config(stages=3), _config(flatten=False)],
        "nearest-pass": [_config(stages=1, flatten=False)],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    label="s{num_stages}-u{UNROLL}-flat{FLATTEN}-r{ROWS}",
    oracles=(Reference(_expected),),
)


@triton.jit
def store_reload(
    ptr,
    diff_ptr,
    ROWS: tl.constexpr,
    COLS: tl.constexpr,
    TILE: tl.constexpr,
    STAGES: tl.constexpr,
    UNROLL: tl.constexpr,
    FLATTEN: tl.constexpr,
):
    for row in tl.range(tl.program_id(0), ROWS, loop_unroll_factor=1, num_stages=STAGES):
        for offset in tl.range(
            0, COLS, TILE, loop_unroll_factor=UNROLL, num_stages=STAGES, flatten=FLATTEN
        ):
            cols = offset + tl.arange(0, TILE)
            where = ptr + row * COLS + cols
            values = (cols + row).to(tl.float32)
            tl.store(where, values)
            loaded = tl.load(where)
            tl.store(diff_ptr + row * COLS + cols, loaded - values)


def _constexprs(case):
    return {
        "ROWS": case["ROWS"],
        "COLS": COLS,
        "TILE": TILE,
        "STAGES": case["num_stages"],
        "UNROLL": case["UNROLL"],
        "FLATTEN": case["FLATTEN"],
    }


@REPRO.compile
def compile_case(case):
    signature = {"ptr": "*fp32", "diff_ptr": "*fp32"}
    return compile_kernel(store_reload, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    return {"rows": case["ROWS"]}


@REPRO.launch
def launch_case(case, rows):
    import torch

    stored = poisoned((rows * COLS,), torch.float32)
    diff = poisoned((rows * COLS,), torch.float32)
    store_reload[(rows,)](stored, diff, **_constexprs(case), **case.options)
    return {"stored": stored, "diff": diff}
