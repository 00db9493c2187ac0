"""A batched (rank-3) tl.dot on Hopper (sm_90): MMA selection picks MMAv3, which has no rank 3.

triton-lang/triton PR #4336 ("[BACKEND] Fallback to MMAv2 for batch matmul on hopper
GPUs", merged 2024-07-17; it also enlarged ``test_dot3d``'s block sizes "to trigger the
problem"): AccelerateMatmul chose the Hopper MMA (v3) for a 3D dot whose tiles are large
enough, and ``mmaVersionToInstrShape`` aborts on the batched operand ("type not supported").
The PR makes batched dots fall back to MMAv2 on Hopper. The same kernel with 32-row tiles
compiles (it never selects MMAv3): the nearest passing config.

What upstream history implies: releases without #4336 fail, releases with it compile.
3.0.0 (branched before July 2024) and 3.1.0 lack it (the matrix: both abort); 3.2.0
(released January 2025) has it. Not verified from the release branches themselves: that
3.1.x lacks the PR rests on 3.1.0 failing.
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel


def _config(block_m):
    return {"BATCH": 2, "BLOCK_M": block_m, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4}


REPRO = Reproducer(
    id="upstream-4336-hopper-batched-dot-mma",
    title="sm_90: a rank-3 tl.dot selects MMAv3 and aborts in mmaVersionToInstrShape",
    family="triton-mma",
    references=("https://github.com/triton-lang/triton/pull/4336",),
    params=(
        Pow2("BATCH", 2, 4),
        Pow2("BLOCK_M", 32, 64),
        Pow2("BLOCK_N", 32, 64),
        Pow2("BLOCK_K", 16, 32),
        Choice("num_warps", (4, 8)),
    ),
    configs={"trigger": [_config(64)], "nearest-pass": [_config(32)]},
    default_sets=("trigger",),
    targets=("sm_90",),
    label="b{BATCH}-{BLOCK_M}x{BLOCK_N}x{BLOCK_K}-w{num_warps}",
)


@triton.jit
def batched_dot(
    a_ptr,
    b_ptr,
    c_ptr,
    BATCH: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    rb = tl.arange(0, BATCH)[:, None, None]
    rm = tl.arange(0, BLOCK_M)[None, :, None]
    rn = tl.arange(0, BLOCK_N)[None, None, :]
    rk = tl.arange(0, BLOCK_K)
    a = tl.load(a_ptr + rb * BLOCK_M * BLOCK_K + rm * BLOCK_K + rk[None, None, :])
    b = tl.load(b_ptr + rb * BLOCK_K * BLOCK_N + rk[None, :, None] * BLOCK_N + rn)
    c = tl.dot(a, b)
    tl.store(c_ptr + rb * BLOCK_M * BLOCK_N + rm * BLOCK_N + rn, c)


@REPRO.compile
def compile_case(case):
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32"}
    names = ("BATCH", "BLOCK_M", "BLOCK_N", "BLOCK_K")
    return compile_kernel(batched_dot, case, signature, {n: case[n] for n in names})
