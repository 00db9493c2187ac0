"""An mxfp4 tl.dot_scaled whose right operand is packed along N, on consumer Blackwell (sm_120).

triton-lang/triton#9678 (reported 2026-03, on 3.6): ``rhs_k_pack=False`` with e2m1
operands on sm_120 aborts in the MMAv2 lowering (``convertMMAImpl``, assertion
``repA[2] == repB[1]``): sm_120's block-scaled MMA needs both operands packed along K and
``ScaledBlockedToMMA`` did not send the N-packed case to the decomposition. #9684 documented
the limit; #10726 ("[SM120] Fallback MN-packed FP4 MMA to the decomposition path", merged
2026-07) fixed it on main, after the 3.8 branch point (#11733, #11734 cherry-pick it to
release/3.8.x). The same call with the default ``rhs_k_pack=True`` compiles: the nearest
passing config.

What upstream history implies: 3.6.0 fails (the report); 3.7.x and 3.8.0 fail (#10726 is
in neither); 3.9.0 compiles. 3.4.0-3.5.1 (``rhs_k_pack`` exists from 3.4.0) are not in
the history: there the compile fails otherwise ("failed to legalize operation
'tt.dot_scaled'"). Releases before 3.4 have no ``rhs_k_pack``: unsupported.
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel


def _config(rhs_k_pack):
    return {
        "BLOCK_M": 128,
        "BLOCK_N": 128,
        "BLOCK_K": 128,
        "num_warps": 4,
        "RHS_K_PACK": rhs_k_pack,
    }


REPRO = Reproducer(
    id="upstream-9678-sm120-mxfp4-n-packed",
    title="sm_120: dot_scaled of e2m1 with rhs_k_pack=False asserts in the MMAv2 lowering",
    family="triton-mma",
    references=(
        "https://github.com/triton-lang/triton/issues/9678",
        "https://github.com/triton-lang/triton/pull/9684",
        "https://github.com/triton-lang/triton/pull/10726",
    ),
    params=(
        Pow2("BLOCK_M", 64, 128),
        Pow2("BLOCK_N", 64, 128),
        Pow2("BLOCK_K", 64, 128),
        Choice("num_warps", (4, 8)),
        Choice("RHS_K_PACK", (True, False)),
    ),
    configs={"trigger": [_config(False)], "nearest-pass": [_config(True)]},
    default_sets=("trigger",),
    targets=("sm_120",),
    requires=("triton.language.dot_scaled(rhs_k_pack)",),
    label="{BLOCK_M}x{BLOCK_N}x{BLOCK_K}-w{num_warps}-kpack{RHS_K_PACK}",
)


@triton.jit
def mxfp4_dot(
    a_ptr,
    b_ptr,
    a_scale_ptr,
    b_scale_ptr,
    c_ptr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    RHS_K_PACK: tl.constexpr,
):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    rk_packed = tl.arange(0, BLOCK_K // 2)  # two e2m1 values per byte
    rs = tl.arange(0, BLOCK_K // 32)  # one e8m0 scale per 32 values
    a = tl.load(a_ptr + rm[:, None] * (BLOCK_K // 2) + rk_packed[None, :])
    if RHS_K_PACK:
        b = tl.load(b_ptr + rk_packed[:, None] * BLOCK_N + rn[None, :])
    else:
        rn_packed = tl.arange(0, BLOCK_N // 2)
        b = tl.load(b_ptr + rk[:, None] * (BLOCK_N // 2) + rn_packed[None, :])
    a_scale = tl.load(a_scale_ptr + rm[:, None] * (BLOCK_K // 32) + rs[None, :])
    b_scale = tl.load(b_scale_ptr + rn[:, None] * (BLOCK_K // 32) + rs[None, :])
    acc = tl.dot_scaled(a, a_scale, "e2m1", b, b_scale, "e2m1", rhs_k_pack=RHS_K_PACK)
    tl.store(c_ptr + rm[:, None] * BLOCK_N + rn[None, :], acc)


@REPRO.compile
def compile_case(case):
    signature = {
        "a_ptr": "*u8",
        "b_ptr": "*u8",
        "a_scale_ptr": "*u8",
        "b_scale_ptr": "*u8",
        "c_ptr": "*fp32",
    }
    names = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "RHS_K_PACK")
    return compile_kernel(mxfp4_dot, case, signature, {n: case[n] for n in names})
