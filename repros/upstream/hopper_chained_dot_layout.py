"""A tl.dot result scaled by a broadcast row vector, on Hopper (sm_90).

triton-lang/triton#4418: the MMAv3 accumulator meets a second operand in
another layout and the conversion between them is not lowered. Triton 3.0
and 3.1 abort ("DotOperandEncodingAttr non-NvidiaMmaEncodingAttr parent not
supported yet"), 3.2 aborts later ("Failed to emit transfer from register to
shared"); 3.3.0 compiles it. The trigger multiplies tl.zeros operands, as the report
does; the same kernel on loaded operands compiles on every release.
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel

REPRO = Reproducer(
    id="upstream-4418-hopper-chained-dot",
    title="Hopper: tl.dot output times a broadcast vector aborts layout conversion",
    family="triton-mma",
    references=(
        "https://github.com/triton-lang/triton/issues/4418",
        "https://github.com/triton-lang/triton/pull/5488",
    ),
    params=(
        Pow2("BLOCK_M", 64, 128),
        Pow2("BLOCK_N", 64, 64),
        Pow2("BLOCK_D", 64, 64),
        Choice("num_warps", (4, 8)),
        Choice("ZERO_OPERANDS", (False, True), "tl.zeros operands instead of loaded ones"),
    ),
    configs={
        "trigger": [
            {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_D": 64, "num_warps": 8, "ZERO_OPERANDS": True}
        ],
        "nearest-pass": [
            {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_D": 64, "num_warps": 8, "ZERO_OPERANDS": False}
        ],
    },
    default_sets=("trigger",),
    targets=("sm_90",),
    label="{BLOCK_M}x{BLOCK_N}x{BLOCK_D}-w{num_warps}-zeros{ZERO_OPERANDS}",
)


@triton.jit
def scaled_dot(
    out_ptr,
    stride_m,
    stride_h,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
    ZERO_OPERANDS: tl.constexpr,
):
    rows = tl.arange(0, BLOCK_M)[:, None] * stride_m
    cols = tl.arange(0, BLOCK_D)[None, :]
    if ZERO_OPERANDS:
        y = tl.zeros([BLOCK_M, BLOCK_N], tl.float16)
        x = tl.zeros([BLOCK_N, BLOCK_D], tl.float16)
    else:
        y = tl.load(out_ptr + rows + tl.arange(0, BLOCK_N)[None, :])
        x = tl.load(out_ptr + tl.arange(0, BLOCK_N)[:, None] * stride_m + cols)
    p = tl.dot(y, x)
    p = tl.zeros([BLOCK_M], tl.float16)[:, None] * p + p
    tl.store(out_ptr + tl.program_id(0) * stride_h + rows + cols, p)


@REPRO.compile
def compile_case(case):
    signature = {"out_ptr": "*fp16", "stride_m": "i32", "stride_h": "i32"}
    blocks = {name: case[name] for name in ("BLOCK_M", "BLOCK_N", "BLOCK_D", "ZERO_OPERANDS")}
    return compile_kernel(scaled_dot, case, signature, blocks)
