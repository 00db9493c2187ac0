"""A warp-specialized pointer-load GEMM loop (masked tl.load + tl.dot).

triton-lang/triton#10284: automatic warp specialization leaves a constant
outside every partition ("'arith.constant' op does not have expected attribute
ttg.partition which is expected for ops whose parent has partitions"). The
loop compiles on 3.4.0-3.5.1, fails on 3.6.0 (pass pipeline failure) and
3.7.0/3.7.1 (that diagnostic), and compiles again on 3.8.0. The issue reports
it on sm_120; sm_100 with num_warps=2 fails the same way. Without
warp_specialize the loop compiles everywhere.
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel


def _config(warp_specialize):
    return {
        "BLOCK_M": 128,
        "BLOCK_N": 256,
        "BLOCK_K": 64,
        "num_warps": 8,
        "num_stages": 3,
        "WARP_SPECIALIZE": warp_specialize,
    }


REPRO = Reproducer(
    id="upstream-10284-ws-partition-attr",
    title="warp_specialize=True on a masked pointer GEMM loop: op without ttg.partition",
    family="triton-warp-specialization",
    references=("https://github.com/triton-lang/triton/issues/10284",),
    params=(
        Pow2("BLOCK_M", 64, 128),
        Pow2("BLOCK_N", 128, 256),
        Pow2("BLOCK_K", 32, 64),
        Choice("num_warps", (4, 8)),
        Choice("num_stages", (2, 3)),
        Choice("WARP_SPECIALIZE", (False, True)),
    ),
    configs={"trigger": [_config(True)], "nearest-pass": [_config(False)]},
    default_sets=("trigger",),
    targets=("sm_120",),
    requires=("triton.language.range(warp_specialize)",),
    label="{BLOCK_M}x{BLOCK_N}x{BLOCK_K}-w{num_warps}-s{num_stages}-ws{WARP_SPECIALIZE}",
)


@triton.jit
def masked_gemm(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr,
):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, warp_specialize=WARP_SPECIALIZE):
        ks = k + rk
        a = tl.load(
            a_ptr + rm[:, None] * K + ks[None, :], (rm[:, None] < M) & (ks[None, :] < K), 0.0
        )
        b = tl.load(
            b_ptr + ks[:, None] * N + rn[None, :], (ks[:, None] < K) & (rn[None, :] < N), 0.0
        )
        acc = tl.dot(a, b, acc)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask)


@REPRO.compile
def compile_case(case):
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16"}
    signature.update({"M": "i32", "N": "i32", "K": "i32"})
    names = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "WARP_SPECIALIZE")
    return compile_kernel(masked_gemm, case, signature, {n: case[n] for n in names})
