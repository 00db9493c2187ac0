"""A pipelined loop that feeds one tile to both tl.dot and tl.sum: wrong result, num_stages=2.

triton-lang/triton#6691 (reported 2025-05, open): a loop that loads a tile ``x`` and a tile
``y`` and accumulates ``x^T @ y`` and the column sums of ``x`` gives wrong results with
``num_stages >= 2`` depending on the order of the two statements; with one stage it is
right. The kernel here is the statistics pass of a least-squares fit (the normal equations
``X^T Y`` and the column sums for centring) over N rows, in one program.

On an H100 (sm_90, triton 3.6.0, 2026-11-25, docs/gpu-results.md) the sum-first order
with D=128, BLOCK_N=64, num_warps=4, num_stages=2 gets about half of ``X^T Y`` wrong in fp16
and bf16, for every N from 17 up; one stage, three stages, BLOCK_N 32, D 64, 8 warps, fp32
and the dot-first order are right there.

No reference is needed to catch it: the differential oracle compares the case with the same
kernel at ``num_stages=1``.
"""

import triton
import triton.language as tl

from suite import Choice, Differential, Reproducer, Size
from suite.checks import poisoned, random_input
from suite.tritonc import compile_kernel


def _config(dtype, order, stages, d=128, block_n=64, warps=4, n=5000):
    return {
        "D": d,
        "BLOCK_N": block_n,
        "num_stages": stages,
        "num_warps": warps,
        "dtype": dtype,
        "ORDER": order,
        "N": n,
    }


REPRO = Reproducer(
    id="upstream-6691-pipelined-dot-and-sum",
    title="a pipelined loop feeding one tile to tl.dot and tl.sum gives a wrong result",
    family="triton-pipeliner",
    references=("https://github.com/triton-lang/triton/issues/6691",),
    params=(
        Choice("D", (32, 64, 128)),
        Choice("BLOCK_N", (16, 32, 64)),
        Choice("num_stages", (1, 2, 3, 4)),
        Choice("num_warps", (4, 8)),
        Choice("dtype", ("fp16", "bf16", "fp32")),
        Choice("ORDER", ("sum-first", "dot-first")),
        Size("N", (1, 17, 64, 1000, 5000, 16391)),
    ),
    configs={
        "trigger": [_config("fp16", "sum-first", 2), _config("bf16", "sum-first", 2)],
        "nearest-pass": [_config("fp16", "sum-first", 1), _config("fp16", "dot-first", 2)],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90", "sm_80"),
    label="d{D}-bn{BLOCK_N}-s{num_stages}-w{num_warps}-{dtype}-{ORDER}-n{N}",
    oracles=(Differential({"num_stages": 1}),),
)


@triton.jit
def normal_equations(
    x_ptr,
    y_ptr,
    xty_ptr,
    colsum_ptr,
    N,
    D: tl.constexpr,
    BLOCK_N: tl.constexpr,
    ORDER: tl.constexpr,
):
    cols = tl.arange(0, D)
    xty = tl.zeros((D, D), dtype=tl.float32)
    colsum = tl.zeros((D,), dtype=tl.float32)
    for start in range(0, tl.cdiv(N, BLOCK_N)):
        rows = start * BLOCK_N + tl.arange(0, BLOCK_N)
        inside = (rows < N)[:, None]
        x = tl.load(x_ptr + rows[:, None] * D + cols[None, :], mask=inside, other=0.0)
        y = tl.load(y_ptr + rows[:, None] * D + cols[None, :], mask=inside, other=0.0)
        if ORDER == "dot-first":
            xty += tl.dot(tl.trans(x), y)
            colsum += tl.sum(x.to(tl.float32), axis=0)
        else:
            colsum += tl.sum(x.to(tl.float32), axis=0)
            xty += tl.dot(tl.trans(x), y)
    tl.store(colsum_ptr + cols, colsum)
    tl.store(xty_ptr + cols[:, None] * D + cols[None, :], xty)


def _constexprs(case):
    return {"D": case["D"], "BLOCK_N": case["BLOCK_N"], "ORDER": case["ORDER"]}


@REPRO.compile
def compile_case(case):
    element = "*" + case["dtype"]
    signature = {"x_ptr": element, "y_ptr": element, "xty_ptr": "*fp32", "colsum_ptr": "*fp32"}
    signature["N"] = "i32"
    return compile_kernel(normal_equations, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    shape = (case["N"], case["D"])
    return {"x": random_input(shape, case["dtype"]), "y": random_input(shape, case["dtype"])}


@REPRO.launch
def launch_case(case, x, y):
    import torch

    xty = poisoned((case["D"], case["D"]), torch.float32)
    colsum = poisoned((case["D"],), torch.float32)
    normal_equations[(1,)](x, y, xty, colsum, case["N"], **_constexprs(case), **case.options)
    return {"xty": xty, "colsum": colsum}
