"""triton-lang/triton#6691 reached through an installed package: kernlib.stats' kernel, its
helper and its ``tl.constexpr`` globals live in the package (site-packages), the launch calls
the package's host function.

A pipelined loop feeding one tile to tl.dot and tl.sum gives wrong X^T Y on an H100 (triton
3.6.0) with fp16, num_stages=2; one stage is right (the differential oracle compares).
"""

import torch
from kernlib.stats import D_MODEL, normal_equations, statistics

from suite import Choice, Differential, Reproducer
from suite.tritonc import compile_kernel

N_ROWS = 5000


def _config(stages):
    return {"num_stages": stages, "num_warps": 4, "dtype": "fp16"}


REPRO = Reproducer(
    id="closure-gpu-package-dot-and-sum",
    title="kernlib.stats: a pipelined loop feeding one tile to tl.dot and tl.sum is wrong",
    family="closure",
    params=(Choice("num_stages", (1, 2)), Choice("num_warps", (4,)), Choice("dtype", ("fp16",))),
    configs={"trigger": [_config(2)], "nearest-pass": [_config(1)]},
    targets=("sm_90",),
    oracles=(Differential({"num_stages": 1}),),
)


@REPRO.compile
def compile_case(case):
    element = "*" + case["dtype"]
    signature = {"x_ptr": element, "y_ptr": element, "xty_ptr": "*fp32", "colsum_ptr": "*fp32"}
    signature["N"] = "i32"
    return compile_kernel(normal_equations, case, signature, {})


@REPRO.inputs
def make_inputs(case):
    shape = (N_ROWS, D_MODEL.value)
    return {
        "x": torch.randn(shape, device="cuda", dtype=torch.float16),
        "y": torch.randn(shape, device="cuda", dtype=torch.float16),
    }


@REPRO.launch
def launch_case(case, x, y):
    return statistics(x, y, **case.options)
