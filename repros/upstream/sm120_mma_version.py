"""A plain pointer GEMM loop (tl.dot) compiled for consumer Blackwell (sm_120).

triton-lang/triton#6087: AccelerateMatmul's getMMAVersionSafe lists MMA
versions only below compute capability 110 and asserts "computeCapability not
supported" for sm_120 (RTX 50 series). Fixed on main by #6131 and cherry-picked
into 3.3.1 (#6771): 3.0.0-3.3.0 abort, 3.3.1 picks MMAv2. The same loop
without tl.dot (an outer-product sum) never reaches MMA selection and compiles.
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel


def _config(use_dot):
    return {"BLOCK": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2, "USE_DOT": use_dot}


REPRO = Reproducer(
    id="upstream-6087-sm120-mma-version",
    title="sm_120: tl.dot asserts 'computeCapability not supported' in MMA selection",
    family="triton-mma",
    references=(
        "https://github.com/triton-lang/triton/issues/6087",
        "https://github.com/triton-lang/triton/pull/6131",
        "https://github.com/triton-lang/triton/pull/6771",
    ),
    params=(
        Pow2("BLOCK", 32, 64),
        Pow2("BLOCK_K", 32, 64),
        Choice("num_warps", (4, 8)),
        Choice("num_stages", (1, 2)),
        Choice("USE_DOT", (False, True)),
    ),
    configs={"trigger": [_config(True)], "nearest-pass": [_config(False)]},
    default_sets=("trigger",),
    targets=("sm_120",),
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
