"""The plain-loop descriptor GEMM: the seeds' conservative and aggressive configs.

``acc += tl.dot(a_desc.load(..), b_desc.load(..))`` in the K loop, which the
pipeliner handles on every target. What fails here is size, not the compiler:
the seeds' aggressive configs need more shared memory than any target has
(or, at 256x256x128/w16, more registers than ptxas can give).
"""

import triton
import triton.language as tl

from suite import Choice, Constraint, Pow2, Reproducer
from suite.checks import check_gemm
from suite.tritonc import compile_kernel

TILE = ("BLOCK_M", "BLOCK_N", "BLOCK_K")


def _seed(m, n, k, warps, stages, dtype="fp16"):
    return {
        "BLOCK_M": m,
        "BLOCK_N": n,
        "BLOCK_K": k,
        "num_warps": warps,
        "num_stages": stages,
        "dtype": dtype,
    }


REPRO = Reproducer(
    id="tma-gemm",
    title="Descriptor GEMM, plain pipelined K loop (seed conservative/aggressive configs)",
    family="triton-pipeliner",
    references=("seed 003: TMA configuration fix proposal (conservative -> aggressive)",),
    params=(
        Pow2("BLOCK_M", 64, 256),
        Pow2("BLOCK_N", 64, 256),
        Pow2("BLOCK_K", 32, 128),
        Choice("num_stages", (1, 2, 3, 4, 5)),
        Choice("num_warps", (4, 8, 16)),
        Choice("dtype", ("fp16", "bf16", "fp8e4nv")),
    ),
    constraints=(
        Constraint(
            "fp8 dot needs BLOCK_K >= 32", lambda c: c["dtype"] != "fp8e4nv" or c["BLOCK_K"] >= 32
        ),
    ),
    configs={
        "conservative": [
            _seed(64, 64, 32, 4, 1),
            _seed(64, 128, 32, 4, 1),
            _seed(128, 64, 32, 4, 1),
        ],
        "aggressive": [
            _seed(256, 256, 128, 16, 5),
            _seed(256, 128, 128, 16, 4),
            _seed(128, 256, 128, 16, 4),
            _seed(128, 128, 128, 8, 4),
            _seed(128, 128, 64, 8, 3),
            _seed(64, 64, 64, 4, 2),
        ],
        "dtypes": [_seed(128, 128, 64, 8, 3, "bf16"), _seed(128, 128, 64, 8, 3, "fp8e4nv")],
    },
    targets=("sm_90", "sm_100", "sm_103", "sm_120", "sm_121"),
    requires=("triton.language.make_tensor_descriptor",),
    label="{BLOCK_M}x{BLOCK_N}x{BLOCK_K}-w{num_warps}-s{num_stages}-{dtype}",
)

OUT_DTYPE = {"fp16": "fp16", "bf16": "bf16", "fp8e4nv": "fp16"}


@triton.jit
def gemm(
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
    for k in range(0, K, BLOCK_K):
        acc += tl.dot(a_desc.load([off_m, k]), b_desc.load([k, off_n]))
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


@REPRO.compile
def compile_case(case):
    dtype = case["dtype"]
    signature = {
        "a_ptr": f"*{dtype}",
        "b_ptr": f"*{dtype}",
        "c_ptr": f"*{OUT_DTYPE[dtype]}",
        "M": "i32",
        "N": "i32",
        "K": "i32",
    }
    return compile_kernel(gemm, case, signature, {name: case[name] for name in TILE})


@REPRO.launch
def launch_case(case):
    check_gemm(gemm, case, case["dtype"], OUT_DTYPE[case["dtype"]])
