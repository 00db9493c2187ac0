"""A 1-D copy through tensor descriptors made inside a pipelined ``tl.range`` loop.

On an H100 with triton 3.6.0 (docs/facts.md, 2026-11-25) ``num_stages=3`` faults at launch
with ``misaligned address`` for fp16 XBLOCK 8 and 16 and fp32 XBLOCK 4 to 16; with
``num_stages=1`` the copy is right. Every config compiles on any machine: only a launch
shows the bug. The tests use it compile-only (``repro explain``: the pass where 3 stages
and 1 stage part) and, on a GPU, for the sanitizer's evidence of the fault.
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer, WrongResult
from suite.tritonc import compile_kernel

N = 1 << 12

REPRO = Reproducer(
    id="descriptor-1d-pipelined",
    title="a 1-D descriptor load/store made inside a pipelined tl.range",
    family="triton-pipeliner",
    params=(
        Pow2("XBLOCK", 8, 64),
        Choice("STAGES", (1, 3)),
        Choice("dtype", ("fp16", "fp32")),
        Choice("num_warps", (4,)),
    ),
    configs={
        "trigger": [{"XBLOCK": 8, "STAGES": 3, "dtype": "fp16", "num_warps": 4}],
        "nearest-pass": [{"XBLOCK": 8, "STAGES": 1, "dtype": "fp16", "num_warps": 4}],
    },
    targets=("sm_90",),
    requires=("triton.language.make_tensor_descriptor",),
    label="x{XBLOCK}-s{STAGES}-{dtype}",
)


@triton.jit
def copy_1d(x_ptr, y_ptr, n, XBLOCK: tl.constexpr, STAGES: tl.constexpr):
    for start in tl.range(0, n, XBLOCK, num_stages=STAGES):
        src = tl.make_tensor_descriptor(x_ptr, [n], [1], [XBLOCK])
        dst = tl.make_tensor_descriptor(y_ptr, [n], [1], [XBLOCK])
        dst.store([start], src.load([start]))


@REPRO.compile
def compile_case(case):
    pointer = f"*{case['dtype']}"
    signature = {"x_ptr": pointer, "y_ptr": pointer, "n": "i32"}
    constexprs = {"XBLOCK": case["XBLOCK"], "STAGES": case["STAGES"]}
    return compile_kernel(copy_1d, case, signature, constexprs)


@REPRO.launch
def launch_case(case):
    import torch

    triton.set_allocator(
        lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda")
    )
    dtype = {"fp16": torch.float16, "fp32": torch.float32}[case["dtype"]]
    x = torch.randn(N, device="cuda", dtype=dtype)  # fresh random input
    y = torch.full_like(x, float("nan"))  # poisoned output
    copy_1d[(1,)](x, y, N, XBLOCK=case["XBLOCK"], STAGES=case["STAGES"], num_warps=4)
    torch.cuda.synchronize()
    if not torch.equal(x, y):
        raise WrongResult(f"{int((x != y).sum())} of {N} elements differ from the input")
