"""A launch written as library code is: constants assigned by tuple and annotated, a helper
made by assignment, host helpers and a kernel from an installed package (kernlib), the
suite's device() and poisoned(); torch imported where it is used.

The kernel is kernlib.tiles' descriptor helper in a 2-D copy (a launch on a GPU is right: the
tests write its repro.py and check that it defines every name it reads, no GPU needed).
"""

import triton
import triton.language as tl
from kernlib import tiles
from kernlib.tiles import make_desc

from suite import Choice, Differential, Reproducer
from suite.checks import device, poisoned
from suite.tritonc import compile_kernel

ROWS, COLS = 256, 128
STAGES: int = 2
SCALE = tl.constexpr(2)

REPRO = Reproducer(
    id="closure-launch-helpers",
    title="a 2-D descriptor copy through kernlib helpers",
    family="closure",
    params=(Choice("num_stages", (1, STAGES)),),
    configs={"trigger": [{"num_stages": STAGES}]},
    targets=("sm_90",),
    requires=("triton.language.make_tensor_descriptor",),
    oracles=(Differential({"num_stages": 1}),),
)


def _scaled(x):
    return x * SCALE


scaled = triton.jit(_scaled)


@triton.jit
def copy_2d(x_ptr, y_ptr, rows, cols):
    src = make_desc(x_ptr, rows, cols, tiles.TILE_M, tiles.TILE_N)
    dst = make_desc(y_ptr, rows, cols, tiles.TILE_M, tiles.TILE_N)
    m = tl.program_id(0) * tiles.TILE_M
    dst.store([m, 0], scaled(src.load([m, 0])))


def grid_of(x):
    return (triton.cdiv(x.shape[0], tiles.TILE_M.value),)


@REPRO.compile
def compile_case(case):
    signature = {"x_ptr": "*fp16", "y_ptr": "*fp16", "rows": "i32", "cols": "i32"}
    return compile_kernel(copy_2d, case, signature, {})


@REPRO.inputs
def make_inputs(case):
    import torch

    return {"x": torch.randn((ROWS, COLS), device=device(), dtype=torch.float16)}


@REPRO.launch
def launch_case(case, x):
    y = poisoned(x.shape, x.dtype)
    copy_2d[grid_of(x)](x, y, ROWS, COLS, **case.options)
    return y
