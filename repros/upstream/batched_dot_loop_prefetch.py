"""A batched (rank-3) tl.dot accumulated in a pipelined K loop, on Ampere (sm_80).

triton-lang/triton#5620 (reported 2025-01-15): a 3D ``tl.dot`` inside a K loop compiled
only in the interpreter; the body alone (no loop) was fine. PR #5936 (merged 2025-02-15,
"Fix incorrect kernel compilation in batched matmul (#5620)") explains why: the prefetch
pass, which slices the dot operands of a pipelined loop from shared memory, was written
for 2D dots only; the compile fails with "offsets must have the same rank as input". The
same loop with ``num_stages=1`` (nothing pipelined, nothing prefetched) compiles: the
nearest passing config.

What upstream history implies: releases before #5936 fail, releases after compile. 3.2.0
(released January 2025) predates it; 3.3.0 (April 2025) has it. 3.0.0 and 3.1.0 are not
in the report.
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel


def _config(num_stages):
    return {"BATCH": 2, "BLOCK": 32, "num_warps": 4, "num_stages": num_stages}


REPRO = Reproducer(
    id="upstream-5620-batched-dot-loop-prefetch",
    title="sm_80: a rank-3 tl.dot in a pipelined loop fails in the 2D-only prefetch pass",
    family="triton-layout",
    references=(
        "https://github.com/triton-lang/triton/issues/5620",
        "https://github.com/triton-lang/triton/pull/5936",
    ),
    params=(
        Pow2("BATCH", 2, 4),
        Pow2("BLOCK", 16, 32),
        Choice("num_warps", (4, 8)),
        Choice("num_stages", (1, 2, 3)),
    ),
    configs={"trigger": [_config(3)], "nearest-pass": [_config(1)]},
    default_sets=("trigger",),
    targets=("sm_80",),
    label="b{BATCH}-{BLOCK}-w{num_warps}-s{num_stages}",
)


@triton.jit
def batched_dot_loop(a_ptr, b_ptr, c_ptr, K, BATCH: tl.constexpr, BLOCK: tl.constexpr):
    rb = tl.arange(0, BATCH)[:, None, None]
    rm = tl.arange(0, BLOCK)[None, :, None]
    rn = tl.arange(0, BLOCK)[None, None, :]
    rk = tl.arange(0, BLOCK)
    acc = tl.zeros((BATCH, BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        a = tl.load(a_ptr + rb * BLOCK * K + rm * K + (k + rk)[None, None, :])
        b = tl.load(b_ptr + rb * K * BLOCK + (k + rk)[None, :, None] * BLOCK + rn)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rb * BLOCK * BLOCK + rm * BLOCK + rn, acc)


@REPRO.compile
def compile_case(case):
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "K": "i32"}
    return compile_kernel(
        batched_dot_loop, case, signature, {"BATCH": case["BATCH"], "BLOCK": case["BLOCK"]}
    )
