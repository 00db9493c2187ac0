"""Fused residual add + layer norm over long rows, in the style of the normalization
kernels of LLM inference libraries (LayerNorm or RMSNorm, optional output quantization):
each program handles one token, walks the hidden dimension in BLOCK_H chunks twice
(statistics, then normalize), adds the residual, keeps the pre-norm sum for the next
layer, and applies weight and bias. The chunk loops may be
warp-specialized on Blackwell (WARP_SPECIALIZE).

The program compiles its variants on a thread pool, in-process, with the process's
stderr sent to a log file it only keeps on success. Under Triton 3.6.0-3.7.1 the
warp-specialized loops fail for sm_100 (triton-lang/triton#10901's family).

Usage: python layernorm_residual.py
"""

import concurrent.futures
import os
import sys
import tempfile

import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from aot import Buffer, compile_like_launch

HIDDEN = tl.constexpr(4096)


@triton.jit
def _row_offsets(token, row_stride, offset, BLOCK_H: tl.constexpr):
    cols = offset + tl.arange(0, BLOCK_H)
    return token[:, None] * row_stride + cols[None, :], cols


@triton.jit
def add_layernorm(
    x_ptr,
    residual_ptr,
    weight_ptr,
    bias_ptr,
    out_ptr,
    sum_ptr,
    mean_ptr,
    rstd_ptr,
    out_scale_ptr,
    row_stride,
    eps,
    seed,
    BLOCK_H: tl.constexpr,
    HAS_WEIGHT: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    HAS_RESIDUAL: tl.constexpr,
    DROPOUT_P: tl.constexpr,
    IS_RMS_NORM: tl.constexpr,
    STORE_STATS: tl.constexpr,
    ZERO_CENTERED_WEIGHT: tl.constexpr,
    HAS_OUT_SCALE: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr,
):
    token = tl.program_id(0) + tl.zeros([1], tl.int32)
    mean = tl.full([1], 0.0, tl.float32)
    sum_sq = tl.full([1], 0.0, tl.float32)
    for offset in tl.range(0, HIDDEN, BLOCK_H, warp_specialize=WARP_SPECIALIZE):
        offsets, cols = _row_offsets(token, row_stride, offset, BLOCK_H)
        x = tl.load(x_ptr + offsets).to(tl.float32)
        if DROPOUT_P > 0.0:
            # Fused dropout on the branch output, as dropout-add-layernorm kernels do.
            keep = tl.rand(seed, offsets) > DROPOUT_P
            x = tl.where(keep, x / (1.0 - DROPOUT_P), 0.0)
        s = x
        if HAS_RESIDUAL:  # the first layer of a block has none
            s += tl.load(residual_ptr + offsets).to(tl.float32)
        tl.store(sum_ptr + offsets, s.to(sum_ptr.dtype.element_ty))
        if not IS_RMS_NORM:
            mean += tl.sum(s, axis=1)
        sum_sq += tl.sum(s * s, axis=1)
    if IS_RMS_NORM:
        # RMSNorm: no centering, the mean square alone scales the row.
        rstd = tl.rsqrt(sum_sq / HIDDEN + eps)
    else:
        mean = mean / HIDDEN
        variance = sum_sq / HIDDEN - mean * mean
        rstd = tl.rsqrt(variance + eps)
    if STORE_STATS:
        # Saved for the backward pass.
        tl.store(rstd_ptr + token, rstd)
        if not IS_RMS_NORM:
            tl.store(mean_ptr + token, mean)
    for offset in tl.range(0, HIDDEN, BLOCK_H, warp_specialize=WARP_SPECIALIZE):
        offsets, cols = _row_offsets(token, row_stride, offset, BLOCK_H)
        s = tl.load(sum_ptr + offsets).to(tl.float32)
        w = tl.full([BLOCK_H], 1.0, tl.float32)
        if HAS_WEIGHT:
            w = tl.load(weight_ptr + cols).to(tl.float32)
        if ZERO_CENTERED_WEIGHT:
            w += 1.0  # weights stored as (gamma - 1), as some checkpoints keep them
        if IS_RMS_NORM:
            y = s * rstd[:, None] * w[None, :]
        else:
            y = (s - mean[:, None]) * rstd[:, None] * w[None, :]
        if HAS_BIAS:
            y += tl.load(bias_ptr + cols).to(tl.float32)[None, :]
        if HAS_OUT_SCALE:
            # Static quantization of the output for the next layer's low-precision GEMM.
            y = y / tl.load(out_scale_ptr)
        tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty))


VARIANTS = [
    # (BLOCK_H, HAS_BIAS, WARP_SPECIALIZE, num_warps)
    (1024, True, False, 4),
    (1024, False, True, 4),
]


def build(variant):
    block_h, has_bias, specialize, warps = variant
    tokens = 256
    x, residual, out, summed = (Buffer("float16", (tokens, 4096)) for _ in range(4))
    weight, bias = Buffer("float16", (4096,)), Buffer("float16", (4096,))
    mean, rstd = Buffer("float32", (tokens,)), Buffer("float32", (tokens,))
    out_scale = Buffer("float32", (1,))
    kernel = compile_like_launch(
        add_layernorm,
        100,
        x,
        residual,
        weight,
        bias,
        out,
        summed,
        mean,
        rstd,
        out_scale,
        x.stride(0),
        1e-5,
        1234,
        BLOCK_H=block_h,
        HAS_BIAS=has_bias,
        HAS_WEIGHT=True,
        HAS_RESIDUAL=True,
        DROPOUT_P=0.0,
        IS_RMS_NORM=False,
        STORE_STATS=False,
        ZERO_CENTERED_WEIGHT=False,
        HAS_OUT_SCALE=False,
        WARP_SPECIALIZE=specialize,
        num_warps=warps,
    )
    return kernel.metadata.shared


def main() -> int:
    log_path = os.path.join(tempfile.mkdtemp(prefix="layernorm-build-"), "build.log")
    saved = os.dup(2)
    with open(log_path, "w") as log:
        os.dup2(log.fileno(), 2)  # the compilers' chatter goes to the build log
        try:
            failures = build_all()
        finally:
            os.dup2(saved, 2)
    if failures:
        for variant, kind in failures:
            print(f"variant {variant} failed: {kind}")
        return 1
    os.unlink(log_path)
    print("all variants built")
    return 0


def build_all():
    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {pool.submit(build, v): v for v in VARIANTS}
        for future in concurrent.futures.as_completed(futures):
            try:
                future.result()
            except Exception as exc:
                failures.append((futures[future], type(exc).__name__))
    return failures


if __name__ == "__main__":
    sys.exit(main())
