"""A descriptor GEMM whose loop prefetches the next tiles by hand.

Triton 3.4.0 to 3.5.1 fail in ``TritonGPUAssignLatencies`` compiling this for
sm_100 with num_stages >= 2 and num_warps 4 or 8, even for 64x64x32 tiles;
num_warps=16, num_stages=1, sm_90 and sm_120 compile. 3.6.0 is the first good
release. The plain loop (``tma-gemm``) compiles everywhere: the trigger is the
``if next_k < K: load`` inside the pipelined loop, not the tile size.
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.checks import check_gemm
from suite.tritonc import compile_kernel

REPRO = Reproducer(
    id="tma-gemm-prefetch",
    title="Descriptor GEMM with a hand-written next-tile prefetch in the K loop",
    family="triton-pipeliner",
    references=("https://github.com/triton-lang/triton (TritonGPUAssignLatencies, 3.4.0-3.5.1)",),
    params=(
        Pow2("BLOCK_M", 64, 256),
        Pow2("BLOCK_N", 64, 256),
        Pow2("BLOCK_K", 32, 128),
        Choice("num_stages", (1, 2, 3, 4, 5)),
        Choice("num_warps", (4, 8, 16)),
    ),
    configs={
        "trigger": [
            {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_stages": 2, "num_warps": 4},
            {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_stages": 2, "num_warps": 8},
            {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_stages": 3, "num_warps": 8},
        ],
        "boundary": [
            {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_stages": 1, "num_warps": 4},
            {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_stages": 2, "num_warps": 16},
        ],
    },
    targets=("sm_90", "sm_100", "sm_103", "sm_120", "sm_121"),
    requires=("triton.language.make_tensor_descriptor",),
    label="{BLOCK_M}x{BLOCK_N}x{BLOCK_K}-w{num_warps}-s{num_stages}",
)


@triton.jit
def gemm_prefetch(
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
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    a_cur = a_desc.load([off_m, 0])
    b_cur = b_desc.load([0, off_n])
    for k in range(0, K, BLOCK_K):
        next_k = k + BLOCK_K
        a_next = a_cur
        b_next = b_cur
        if next_k < K:
            a_next = a_desc.load([off_m, next_k])
            b_next = b_desc.load([next_k, off_n])
        acc += tl.dot(a_cur, b_cur)
        a_cur = a_next
        b_cur = b_next
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


@REPRO.compile
def compile_case(case):
    signature = {
        "a_ptr": "*fp16",
        "b_ptr": "*fp16",
        "c_ptr": "*fp16",
        "M": "i32",
        "N": "i32",
        "K": "i32",
    }
    blocks = {name: case[name] for name in ("BLOCK_M", "BLOCK_N", "BLOCK_K")}
    return compile_kernel(gemm_prefetch, case, signature, blocks)


@REPRO.launch
def launch_case(case):
    check_gemm(gemm_prefetch, case, "fp16", "fp16")
