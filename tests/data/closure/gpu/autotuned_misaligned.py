"""triton-lang/triton#10474 in an autotuned, heuristics-wrapped kernel launched by a host
wrapper, with the block size from a module table: how kernel libraries ship kernels.

fp16 XBLOCK 16 with 3 stages faults with a misaligned address on an H100 (triton 3.6.0);
one stage is right.
"""

import torch
import triton
import triton.language as tl

from suite import Choice, Fault, Reproducer
from suite.checks import ensure_allocator
from suite.tritonc import compile_kernel

BLOCKS = {"small": 16, "large": 64}
N_ELEMENTS = 1 << 13
SPLIT = tl.constexpr(1024)


def _config(stages):
    return {"SIZE": "small", "STAGES": stages}


REPRO = Reproducer(
    id="closure-gpu-autotuned-misaligned",
    title="an autotuned 1-D descriptor copy in a pipelined tl.range faults (module table)",
    family="closure",
    params=(Choice("SIZE", ("small", "large")), Choice("STAGES", (1, 3))),
    configs={"trigger": [_config(3)], "nearest-pass": [_config(1)]},
    targets=("sm_90",),
    requires=("triton.language.make_tensor_descriptor",),
    oracles=(Fault(),),
)


@triton.autotune(configs=[triton.Config({}, num_warps=4)], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % SPLIT.value == 0})
@triton.jit
def copy_1d(x_ptr, y_ptr, n, XBLOCK: tl.constexpr, STAGES: tl.constexpr, EVEN: tl.constexpr):
    start = tl.program_id(0) * SPLIT
    for offset in tl.range(start, start + SPLIT, XBLOCK, num_stages=STAGES):
        src = tl.make_tensor_descriptor(x_ptr, [n], [1], [XBLOCK])
        dst = tl.make_tensor_descriptor(y_ptr, [n], [1], [XBLOCK])
        dst.store([offset], src.load([offset]))


def copy(x, block, stages):
    ensure_allocator()
    y = torch.full_like(x, float("nan"))
    copy_1d[(triton.cdiv(x.numel(), SPLIT.value),)](x, y, x.numel(), XBLOCK=block, STAGES=stages)
    torch.cuda.synchronize()
    return y


@REPRO.compile
def compile_case(case):
    signature = {"x_ptr": "*fp16", "y_ptr": "*fp16", "n": "i32"}
    constexprs = {"XBLOCK": BLOCKS[case["SIZE"]], "STAGES": case["STAGES"], "EVEN": True}
    return compile_kernel(copy_1d.fn.fn, case, signature, constexprs)


@REPRO.inputs
def make_inputs(case):
    return {"x": torch.randn(N_ELEMENTS, device="cuda", dtype=torch.float16)}


@REPRO.launch
def launch_case(case, x):
    return copy(x, BLOCKS[case["SIZE"]], case["STAGES"])
