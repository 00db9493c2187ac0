"""A plain pointer GEMM loop compiled for Blackwell Ultra (sm_103).

triton-lang/triton#8473: Triton 3.5.0 emits tcgen05.wait through an LLVM
intrinsic that its LLVM cannot select for sm_103a ("Cannot select: intrinsic
%llvm.nvvm.tcgen05.wait.st"), so every tl.dot kernel fails on GB300. #8045
went back to inline assembly; its cherry-pick #8485 is in 3.5.1. 3.5.1's
bundled ptxas is too old for sm_103a (a toolchain gap, not a failure); 3.6.0
compiles it. sm_103 targets exist from 3.5 on, hence the release requirement.
The nearest passing config keeps the loop without tl.dot.
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel


def _config(use_dot):
    return {"BLOCK": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 3, "USE_DOT": use_dot}


REPRO = Reproducer(
    id="upstream-8473-sm103-tcgen05-wait",
    title="sm_103: tl.dot fails to select llvm.nvvm.tcgen05.wait on Triton 3.5.0",
    family="triton-mma",
    references=(
        "https://github.com/triton-lang/triton/issues/8473",
        "https://github.com/triton-lang/triton/pull/8045",
        "https://github.com/triton-lang/triton/pull/8485",
    ),
    params=(
        Pow2("BLOCK", 64, 128),
        Pow2("BLOCK_K", 32, 64),
        Choice("num_warps", (4, 8)),
        Choice("num_stages", (2, 3)),
        Choice("USE_DOT", (False, True)),
    ),
    configs={"trigger": [_config(True)], "nearest-pass": [_config(False)]},
    default_sets=("trigger",),
    targets=("sm_103",),
    requires=("triton>=3.5",),
    label="{BLOCK}x{BLOCK_K}-w{num_warps}-s{num_stages}-dot{USE_DOT}",
)


@triton.jit
def gemm(a_ptr, b_ptr, c_ptr, K, BLOCK: tl.constexpr, BLOCK_K: tl.constexpr, USE_DOT: tl.constexpr):
    r = tl.arange(0, BLOCK)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + r[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BLOCK + r[None, :])
        if USE_DOT:
            acc = tl.dot(a, b, acc)
        else:
            acc += tl.sum(a.to(tl.float32), 1)[:, None] * tl.sum(b.to(tl.float32), 0)[None, :]
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], acc.to(tl.float16))


@REPRO.compile
def compile_case(case):
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "K": "i32"}
    names = ("BLOCK", "BLOCK_K", "USE_DOT")
    return compile_kernel(gemm, case, signature, {n: case[n] for n in names})
