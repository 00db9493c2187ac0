"""A warp-specialized fp32 (tf32) tl.dot with a 64x8 tile on Hopper (sm_90).

The loop mixes a pointer load (A) and a tensor-descriptor load (B) and asks
for warp specialization with BLOCK_N = 8, the shape of
triton-lang/triton#8932 ("Warp Specialization crashes when BLOCK_N = 8",
reported as a regression on main). On sm_90 this kernel compiles on 3.5.0-3.7.1
and aborts on 3.8.0 (an llvm::cast assertion) and 3.9.0 (a pass pipeline
failure); BLOCK_N = 16 compiles everywhere. Not verified to be the same root
cause as #8932, whose report names NVWSInsertAref.
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel


def _config(block_n):
    return {"BLOCK_M": 64, "BLOCK_N": block_n, "BLOCK_K": 64, "num_warps": 4, "num_stages": 3}


REPRO = Reproducer(
    id="upstream-8932-ws-narrow-tile-hopper",
    title="Hopper: warp-specialized tf32 dot with BLOCK_N=8 aborts (3.8.0 on)",
    family="triton-warp-specialization",
    references=("https://github.com/triton-lang/triton/issues/8932",),
    params=(
        Pow2("BLOCK_M", 64, 64),
        Pow2("BLOCK_N", 8, 16),
        Pow2("BLOCK_K", 32, 64),
        Choice("num_warps", (4,)),
        Choice("num_stages", (2, 3)),
    ),
    configs={"trigger": [_config(8)], "nearest-pass": [_config(16)]},
    default_sets=("trigger",),
    targets=("sm_90",),
    requires=(
        "triton.language.make_tensor_descriptor",
        "triton.language.range(warp_specialize)",
    ),
    label="{BLOCK_M}x{BLOCK_N}x{BLOCK_K}-w{num_warps}-s{num_stages}",
)


@triton.jit
def narrow_dot(
    a_ptr,
    b_ptr,
    c_ptr,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BLOCK_K, BLOCK_N])
    rm = tl.arange(0, BLOCK_M)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, warp_specialize=True):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        acc = tl.dot(a, b_desc.load([k, 0]), acc)
    tl.store(c_ptr + rm[:, None] * N + tl.arange(0, BLOCK_N)[None, :], acc)


@REPRO.compile
def compile_case(case):
    signature = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "N": "i32", "K": "i32"}
    blocks = {n: case[n] for n in ("BLOCK_M", "BLOCK_N", "BLOCK_K")}
    return compile_kernel(narrow_dot, case, signature, blocks)
