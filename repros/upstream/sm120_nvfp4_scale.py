"""NVFP4 tl.dot_scaled with an fp8 (e4m3) scale, compiled for consumer Blackwell (sm_120).

triton-lang/triton#7549 (and its duplicate #7995): passing a float8e4nv
scale tensor (NVFP4: one scale per 16 elements) to tl.dot_scaled aborts in
TritonGPUAccelerateMatmul with the MLIR assertion
"DenseElementsAttr::get ... type.getElementType().isIntOrIndex()" (the
decomposition builds an integer constant of the float8 scale type).
The same call with no scale compiles: the nearest passing config.

What upstream history implies: the report is against a 3.4.0 nightly on an RTX 5090,
so 3.4.0 and the releases before it that can express the call fail; #9772
("Support decomposed scaled MMA for nvfp4", merged 2026-03-18) is the likely fix.
Unverified: which release #9772 reached. The matrix shows the trigger failing on
3.3.0-3.7.1 and compiling from 3.8.0, so "first good 3.8.0" rests on the matrix
alone. 3.0-3.2 cannot express the call (no dot_scaled, or "NYI: rhs_format" on 3.2:
unsupported); on 3.3.0 the nearest pass fails too, on #6087 (no MMA version for
sm_120, fixed in 3.3.1).
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel


def _config(with_scale):
    return {
        "BLOCK_M": 64,
        "BLOCK_N": 64,
        "BLOCK_K": 128,
        "num_warps": 4,
        "num_stages": 3,
        "WITH_SCALE": with_scale,
    }


REPRO = Reproducer(
    id="upstream-7549-sm120-nvfp4-scale",
    title="sm_120: dot_scaled with an NVFP4 (e4m3) scale asserts in AccelerateMatmul",
    family="triton-mma",
    references=(
        "https://github.com/triton-lang/triton/issues/7549",
        "https://github.com/triton-lang/triton/issues/7995",
        "https://github.com/triton-lang/triton/pull/9772",
    ),
    params=(
        Pow2("BLOCK_M", 32, 128),
        Pow2("BLOCK_N", 32, 128),
        Pow2("BLOCK_K", 64, 256),
        Choice("num_warps", (4, 8)),
        Choice("num_stages", (1, 3)),
        Choice("WITH_SCALE", (False, True)),
    ),
    configs={"trigger": [_config(True)], "nearest-pass": [_config(False)]},
    default_sets=("trigger",),
    targets=("sm_120",),
    requires=("triton.language.dot_scaled",),
    label="{BLOCK_M}x{BLOCK_N}x{BLOCK_K}-w{num_warps}-s{num_stages}-scale{WITH_SCALE}",
)


@triton.jit
def nvfp4_dot(
    a_ptr,
    b_ptr,
    c_ptr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    WITH_SCALE: tl.constexpr,
):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K // 2)  # two e2m1 values per byte
    a = tl.load(a_ptr + rm[:, None] * (BLOCK_K // 2) + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BLOCK_N + rn[None, :])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if WITH_SCALE:
        scale_b = tl.full((BLOCK_N, BLOCK_K // 16), value=1, dtype=tl.float32).to(tl.float8e4nv)
        acc = tl.dot_scaled(a, None, "e2m1", b, scale_b, "e2m1", acc)
    else:
        acc = tl.dot_scaled(a, None, "e2m1", b, None, "e2m1", acc)
    tl.store(c_ptr + rm[:, None] * BLOCK_N + rn[None, :], acc)


@REPRO.compile
def compile_case(case):
    signature = {"a_ptr": "*u8", "b_ptr": "*u8", "c_ptr": "*fp32"}
    names = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "WITH_SCALE")
    return compile_kernel(nvfp4_dot, case, signature, {n: case[n] for n in names})
