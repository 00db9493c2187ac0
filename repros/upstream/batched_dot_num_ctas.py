"""A batched (rank-3) tl.dot compiled with num_ctas=2 for Hopper (sm_90): a 2D CTA layout on
a 3D tensor.

triton-lang/triton#11808 (reported 2026-09-16, closed): with ``num_ctas > 1`` the pass that
assigns CTA-cluster layouts (``TritonNvidiaGPUAssignCGALayoutsPass`` on main) builds a
two-dimensional CGA layout for every ``tt.dot`` and attaches it to the rank-3 result's
blocked encoding, whose verifier then fails: "BlockedEncodingAttr and CGALayout's fields
must have the same rank" (3.6.0 says "CTALayout"; up to 3.8.0 the pass is
``TritonGPUPlanCTAPass``). The same kernel with ``num_ctas=1`` compiles: the nearest passing
config. The tiles have 32 rows: with 64, 3.0.0 and 3.1.0 abort first on PR #4336's bug
(``upstream-4336-hopper-batched-dot-mma``), with ``num_ctas=1`` too.

What upstream history implies: the report is against main in September 2026 and the issue
is closed; 3.9.0 compiles the trigger (the matrix). No fix PR was identified, so which
release first has the fix rests on the matrix. The releases where the trigger fails are
in the table of docs/upstream-bugs.md.
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel


def _config(num_ctas):
    return {
        "BATCH": 2,
        "BLOCK_M": 32,
        "BLOCK_N": 64,
        "BLOCK_K": 32,
        "num_warps": 4,
        "num_ctas": num_ctas,
    }


REPRO = Reproducer(
    id="upstream-11808-batched-dot-num-ctas",
    title="sm_90: a rank-3 tl.dot with num_ctas=2 gets a 2D CTA layout and fails to verify",
    family="triton-layout",
    references=("https://github.com/triton-lang/triton/issues/11808",),
    params=(
        Pow2("BATCH", 2, 4),
        Pow2("BLOCK_M", 32, 64),
        Pow2("BLOCK_N", 32, 64),
        Pow2("BLOCK_K", 16, 32),
        Choice("num_warps", (4, 8)),
        Choice("num_ctas", (1, 2)),
    ),
    configs={"trigger": [_config(2)], "nearest-pass": [_config(1)]},
    default_sets=("trigger",),
    targets=("sm_90",),
    label="b{BATCH}-{BLOCK_M}x{BLOCK_N}x{BLOCK_K}-w{num_warps}-ctas{num_ctas}",
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
