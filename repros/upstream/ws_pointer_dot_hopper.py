"""A warp-specialized K loop over pointer loads feeding tl.dot, on Hopper (sm_90).

triton-lang/triton#9728 (reported against 3.4.0, open): Hopper's warp
specialization only knows how to commit descriptor (TMA) loads for the
producer, so a loop of plain ``tl.load`` + ``tl.dot`` with
``warp_specialize=True`` aborts in NVGPUWarpSpecialization (an assertion in
WSLowerToken.cpp up to 3.6, "unsupported load type for producer commit" from
3.7). The same loop without warp specialization compiles. Releases before 3.4
have no ``warp_specialize`` keyword: unsupported.
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel


def _config(warp_specialize):
    return {
        "BLOCK_M": 128,
        "BLOCK_N": 128,
        "BLOCK_K": 64,
        "num_warps": 4,
        "num_stages": 3,
        "WARP_SPECIALIZE": warp_specialize,
    }


REPRO = Reproducer(
    id="upstream-9728-ws-pointer-dot-hopper",
    title="Hopper: warp_specialize=True on a pointer-load tl.dot loop aborts",
    family="triton-warp-specialization",
    references=("https://github.com/triton-lang/triton/issues/9728",),
    params=(
        Pow2("BLOCK_M", 64, 128),
        Pow2("BLOCK_N", 64, 128),
        Pow2("BLOCK_K", 32, 64),
        Choice("num_warps", (4, 8)),
        Choice("num_stages", (2, 3)),
        Choice("WARP_SPECIALIZE", (False, True)),
    ),
    configs={"trigger": [_config(True)], "nearest-pass": [_config(False)]},
    default_sets=("trigger",),
    targets=("sm_90",),
    requires=("triton.language.range(warp_specialize)",),
    label="{BLOCK_M}x{BLOCK_N}x{BLOCK_K}-w{num_warps}-s{num_stages}-ws{WARP_SPECIALIZE}",
)


@triton.jit
def pointer_dot(
    a_ptr,
    b_ptr,
    c_ptr,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr,
):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, warp_specialize=WARP_SPECIALIZE):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BLOCK_N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * BLOCK_N + rn[None, :], acc.to(tl.float16))


@REPRO.compile
def compile_case(case):
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "K": "i32"}
    names = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "WARP_SPECIALIZE")
    return compile_kernel(pointer_dot, case, signature, {n: case[n] for n in names})
