"""A batched (rank-3) mxfp8 tl.dot_scaled compiled for consumer Blackwell (sm_120).

triton-lang/triton#11733 (second half): on 3.8.0 every batched scaled dot
on sm_120 (python/test/unit/language/test_matmul.py::test_batched_mxfp) fails
with "combineCtaCgaWithShape: Assertion 'ctaLayout.getNumOutDims() == rank'
failed" (the SM120 scaled-dot scale layout is built for rank 2). Fixed on main
by #11262 ("generalizes the SM120 scaled-dot scale layout to rank 3"); the
3.8.x cherry-pick is #11734. The same dot with a batch of 1 expressed as a
plain 2D dot is the nearest passing config.

What upstream history implies: 3.8.0 fails (the report) and 3.9.0, which carries
#11262, compiles it (first good 3.9.0). Unverified: the releases before 3.8.0.
The matrix shows 3.7.0 and 3.7.1 failing with the same assertion, 3.6.0's frontend
refusing rank-3 scales ("lhs_scale must be a tensor of shape [N, N]": a
user-error:triton-rejects cell) and 3.3.1-3.5.1 compiling the batched dot; none of
this is in the report. 3.0-3.2 cannot express it (unsupported); 3.3.0 fails both
configs on #6087 (no MMA version for sm_120, fixed in 3.3.1).
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel


def _config(batched):
    return {
        "BLOCK_M": 64,
        "BLOCK_N": 64,
        "BLOCK_K": 64,
        "num_warps": 4,
        "num_stages": 1,
        "BATCHED": batched,
    }


REPRO = Reproducer(
    id="upstream-11733-sm120-batched-mxfp",
    title="sm_120: batched mxfp8 dot_scaled asserts in combineCtaCgaWithShape",
    family="triton-mma",
    references=(
        "https://github.com/triton-lang/triton/issues/11733",
        "https://github.com/triton-lang/triton/pull/11262",
        "https://github.com/triton-lang/triton/pull/11734",
    ),
    params=(
        Pow2("BLOCK_M", 32, 128),
        Pow2("BLOCK_N", 32, 128),
        Pow2("BLOCK_K", 64, 128),
        Choice("num_warps", (4, 8)),
        Choice("num_stages", (1, 2)),
        Choice("BATCHED", (False, True)),
    ),
    configs={"trigger": [_config(True)], "nearest-pass": [_config(False)]},
    default_sets=("trigger",),
    targets=("sm_120",),
    requires=("triton.language.dot_scaled",),
    label="{BLOCK_M}x{BLOCK_N}x{BLOCK_K}-w{num_warps}-s{num_stages}-batched{BATCHED}",
)


@triton.jit
def batched_mxfp8(
    a_ptr,
    a_scale_ptr,
    b_ptr,
    b_scale_ptr,
    c_ptr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    BATCHED: tl.constexpr,
):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    rs = tl.arange(0, BLOCK_K // 32)
    if BATCHED:
        rb = tl.arange(0, 2)
        a = tl.load(
            a_ptr
            + rb[:, None, None] * BLOCK_M * BLOCK_K
            + rm[None, :, None] * BLOCK_K
            + rk[None, None, :]
        )
        b = tl.load(
            b_ptr
            + rb[:, None, None] * BLOCK_N * BLOCK_K
            + rk[None, :, None] * BLOCK_N
            + rn[None, None, :]
        )
        sa = tl.load(
            a_scale_ptr
            + rb[:, None, None] * BLOCK_M * BLOCK_K
            + rm[None, :, None] * (BLOCK_K // 32)
            + rs[None, None, :]
        )
        sb = tl.load(
            b_scale_ptr
            + rb[:, None, None] * BLOCK_N * BLOCK_K
            + rn[None, :, None] * (BLOCK_K // 32)
            + rs[None, None, :]
        )
        c = tl.dot_scaled(a, sa, "e4m3", b, sb, "e4m3")
        tl.store(
            c_ptr
            + rb[:, None, None] * BLOCK_M * BLOCK_N
            + rm[None, :, None] * BLOCK_N
            + rn[None, None, :],
            c,
        )
    else:
        a = tl.load(a_ptr + rm[:, None] * BLOCK_K + rk[None, :])
        b = tl.load(b_ptr + rk[:, None] * BLOCK_N + rn[None, :])
        sa = tl.load(a_scale_ptr + rm[:, None] * (BLOCK_K // 32) + rs[None, :])
        sb = tl.load(b_scale_ptr + rn[:, None] * (BLOCK_K // 32) + rs[None, :])
        c = tl.dot_scaled(a, sa, "e4m3", b, sb, "e4m3")
        tl.store(c_ptr + rm[:, None] * BLOCK_N + rn[None, :], c)


@REPRO.compile
def compile_case(case):
    signature = {
        "a_ptr": "*fp8e4nv",
        "a_scale_ptr": "*u8",
        "b_ptr": "*fp8e4nv",
        "b_scale_ptr": "*u8",
        "c_ptr": "*fp32",
    }
    names = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "BATCHED")
    return compile_kernel(batched_mxfp8, case, signature, {n: case[n] for n in names})
