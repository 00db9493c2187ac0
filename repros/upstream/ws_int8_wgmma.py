"""A warp-specialized int8 descriptor GEMM on Hopper (sm_90): the WGMMA it selects has no PTX.

triton-lang/triton#11586 (reported 2026-09-04 against a main commit on an H100, open):
an int8 x int8 -> int32 ``tl.dot`` inside ``tl.range(..., warp_specialize=True)``, whose
operands are ``tl.make_tensor_descriptor`` loads, aborts while lowering to LLVM:
``WGMMAOpPattern::getPtxAsm``: "WGMMA type or shape is not supported". Per the report,
64x32x32 and 128x64x32 tiles fail, a 32-row tile takes the MMAv2 path and compiles, and so
does the same loop without warp specialization: the nearest passing config.

What upstream history implies: the report names no release and the issue is open, so
every release that can express the kernel is expected to fail (``warp_specialize`` and
``make_tensor_descriptor`` both exist from 3.4.0; before that the port is unsupported).
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel


def _config(warp_specialize):
    return {
        "BLOCK_M": 64,
        "BLOCK_N": 32,
        "BLOCK_K": 32,
        "num_warps": 4,
        "num_stages": 3,
        "WARP_SPECIALIZE": warp_specialize,
    }


REPRO = Reproducer(
    id="upstream-11586-ws-int8-wgmma",
    title="Hopper: an int8 tl.dot in a warp-specialized descriptor loop has no WGMMA PTX",
    family="triton-warp-specialization",
    references=("https://github.com/triton-lang/triton/issues/11586",),
    params=(
        Pow2("BLOCK_M", 32, 128),
        Pow2("BLOCK_N", 32, 64),
        Pow2("BLOCK_K", 32, 64),
        Choice("num_warps", (4, 8)),
        Choice("num_stages", (2, 3)),
        Choice("WARP_SPECIALIZE", (False, True)),
    ),
    configs={"trigger": [_config(True)], "nearest-pass": [_config(False)]},
    default_sets=("trigger",),
    targets=("sm_90",),
    requires=(
        "triton.language.make_tensor_descriptor",
        "triton.language.range(warp_specialize)",
    ),
    label="{BLOCK_M}x{BLOCK_N}x{BLOCK_K}-w{num_warps}-s{num_stages}-ws{WARP_SPECIALIZE}",
)


@triton.jit
def int8_matmul(
    out_ptr,
    a_ptr,
    b_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr,
):
    a_desc = tl.make_tensor_descriptor(
        a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K]
    )
    b_desc = tl.make_tensor_descriptor(
        b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N]
    )
    out_desc = tl.make_tensor_descriptor(
        out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N]
    )
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=WARP_SPECIALIZE):
        a = a_desc.load([off_m, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, off_n])
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
    out_desc.store([off_m, off_n], acc)


@REPRO.compile
def compile_case(case):
    signature = {
        "out_ptr": "*i32",
        "a_ptr": "*i8",
        "b_ptr": "*i8",
        "M": "i32",
        "N": "i32",
        "K": "i32",
    }
    names = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "WARP_SPECIALIZE")
    return compile_kernel(int8_matmul, case, signature, {n: case[n] for n in names})
