"""A warp-specialized descriptor GEMM loop compiled with num_warps=2 (sm_100).

triton-lang/triton#7940 / #8005: the warp-group allocator assumes the default
partition has at least 4 warps. Triton 3.4.0 aborts in AllocateWarpGroups (an
out-of-range SmallVector access); #8005 (in 3.5.0) turned the crash into a
diagnostic, "warp-specialized kernels requires num_warps to be a multiple of
4", so from 3.5.0 the same config is rejected cleanly (a user error, not a
crash). num_warps=4 compiles on every release that has warp specialization.
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel


def _config(warps):
    return {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": warps, "num_stages": 3}


REPRO = Reproducer(
    id="upstream-8005-ws-two-warps",
    title="Blackwell: warp_specialize=True with num_warps=2 crashes AllocateWarpGroups",
    family="triton-warp-specialization",
    references=(
        "https://github.com/triton-lang/triton/pull/7940",
        "https://github.com/triton-lang/triton/pull/8005",
    ),
    params=(
        Pow2("BLOCK_M", 64, 128),
        Pow2("BLOCK_N", 64, 128),
        Pow2("BLOCK_K", 32, 64),
        Choice("num_warps", (2, 4)),
        Choice("num_stages", (2, 3)),
    ),
    configs={"trigger": [_config(2)], "nearest-pass": [_config(4)]},
    default_sets=("trigger",),
    targets=("sm_100",),
    requires=(
        "triton.language.make_tensor_descriptor",
        "triton.language.range(warp_specialize)",
    ),
    label="{BLOCK_M}x{BLOCK_N}x{BLOCK_K}-w{num_warps}-s{num_stages}",
)


@triton.jit
def ws_gemm(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BLOCK_N, BLOCK_K])
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, warp_specialize=True):
        acc = tl.dot(a_desc.load([off_m, k]), b_desc.load([off_n, k]).T, acc)
    rm = off_m + tl.arange(0, BLOCK_M)
    rn = off_n + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@REPRO.compile
def compile_case(case):
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16"}
    signature.update({"M": "i32", "N": "i32", "K": "i32"})
    blocks = {n: case[n] for n in ("BLOCK_M", "BLOCK_N", "BLOCK_K")}
    return compile_kernel(ws_gemm, case, signature, blocks)
