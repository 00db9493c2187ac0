"""A production-style fused residual-add + RMSNorm (two passes over each row, 1-D tensor
descriptors, weight/bias, activation, a scaled fp16 epilogue, helpers) planted with
triton-lang/triton#10474: tensor descriptors made inside a pipelined ``tl.range`` loop fault
with ``misaligned address`` at launch on sm_90 (triton 3.6.0) when a tile is small (fp16
XBLOCK 16 with 3 stages); with one stage the kernel is right.

Benchmark input for `repro reduce` of a runtime failure (bench/reduce_gpu.sh), not a built-in
reproducer. Hand-minimal form: minimal_descriptor_1d_pipelined.py beside it; the port:
repros/upstream/descriptor_1d_pipelined_misaligned.py.
"""

import triton
import triton.language as tl

from suite import Choice, Reference, Reproducer
from suite.checks import ensure_allocator, poisoned, random_input, torch_dtype
from suite.tritonc import compile_kernel

ACT_NONE = tl.constexpr(0)
ACT_SILU = tl.constexpr(1)
ACT_GELU = tl.constexpr(2)
ACT_RELU = tl.constexpr(3)
ROWS = 8
COLS = 2048


def _reference(x, residual, weight, bias, eps, scale, activation):
    import torch

    hidden = x + residual
    rstd = torch.rsqrt(hidden.pow(2).mean(dim=-1, keepdim=True) + eps)
    y = hidden * rstd * weight + bias
    if activation == 1:
        y = y * torch.sigmoid(y)
    elif activation == 2:
        y = 0.5 * y * (1 + torch.tanh(0.7978845608028654 * (y + 0.044715 * y**3)))
    elif activation == 3:
        y = torch.relu(y)
    return {"out": y * scale, "residual_out": hidden}


def _config(dtype, xblock, stages):
    return {"dtype": dtype, "XBLOCK": xblock, "STAGES": stages, "ACTIVATION": 1, "num_warps": 4}


REPRO = Reproducer(
    id="bench-reduce-gpu-fused-add-rmsnorm",
    title="Fused residual-add + RMSNorm with per-tile 1-D descriptors in a pipelined loop (#10474)",
    family="bench-reduce-gpu",
    references=("https://github.com/triton-lang/triton/issues/10474",),
    params=(
        Choice("XBLOCK", (16, 32, 64, 128)),
        Choice("STAGES", (1, 2, 3)),
        Choice("dtype", ("fp16", "fp32")),
        Choice("ACTIVATION", (0, 1, 2, 3)),
        Choice("num_warps", (4,)),
    ),
    configs={
        "trigger": [_config("fp16", 16, 3)],
        "nearest-pass": [_config("fp16", 16, 1), _config("fp16", 128, 3)],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    requires=("triton.language.make_tensor_descriptor",),
    label="{dtype}-x{XBLOCK}-s{STAGES}-act{ACTIVATION}",
    oracles=(
        Reference(
            lambda x, residual, weight, bias, eps, scale, activation: _reference(
                x, residual, weight, bias, eps, scale, activation
            )
        ),
    ),
)


@triton.jit
def _silu(x):
    return x * tl.sigmoid(x)


@triton.jit
def _gelu_tanh(x):
    # tanh approximation, written out (tl has no tanh on every release).
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    t = 2.0 * tl.sigmoid(2.0 * inner) - 1.0
    return 0.5 * x * (1.0 + t)


@triton.jit
def _activation(y, ACTIVATION: tl.constexpr):
    if ACTIVATION == ACT_SILU:
        y = _silu(y)
    elif ACTIVATION == ACT_GELU:
        y = _gelu_tanh(y)
    elif ACTIVATION == ACT_RELU:
        y = tl.maximum(y, 0.0)
    return y


@triton.jit
def _clamp(y, limit):
    # fp16 outputs saturate instead of overflowing to inf.
    return tl.minimum(tl.maximum(y, -limit), limit)


@triton.jit
def _dropout(x, offsets, p, seed):
    # Philox draws from (seed, element offset): both passes drop the same elements.
    keep = tl.rand(seed, offsets) > p
    return tl.where(keep, x / (1.0 - p), 0.0)


@triton.jit
def _row_statistics(total, squares, n_cols, eps, IS_RMS_NORM: tl.constexpr):
    # RMSNorm: no centring; LayerNorm: the variance about the mean.
    if IS_RMS_NORM:
        mean = 0.0
        variance = squares / n_cols
    else:
        mean = total / n_cols
        variance = squares / n_cols - mean * mean
    rstd = 1.0 / tl.sqrt(variance + eps)
    return mean, rstd


@triton.jit
def _row_descriptor(base, numel, XBLOCK: tl.constexpr):
    # One flat descriptor per tensor: the row is addressed by its offset into it.
    return tl.make_tensor_descriptor(base, shape=[numel], strides=[1], block_shape=[XBLOCK])


@triton.jit
def _load_hidden(
    x_ptr,
    r_ptr,
    numel,
    offset,
    residual_alpha,
    dropout_p,
    seed,
    XBLOCK: tl.constexpr,
    HAS_RESIDUAL: tl.constexpr,
    HAS_DROPOUT: tl.constexpr,
):
    x_desc = _row_descriptor(x_ptr, numel, XBLOCK)
    hidden = x_desc.load([offset]).to(tl.float32)
    if HAS_DROPOUT:
        offsets = offset + tl.arange(0, XBLOCK)
        hidden = _dropout(hidden, offsets, dropout_p, seed)
    if HAS_RESIDUAL:
        r_desc = _row_descriptor(r_ptr, numel, XBLOCK)
        hidden += residual_alpha * r_desc.load([offset]).to(tl.float32)
    return hidden


@triton.jit
def _sum_of_squares(
    x_ptr,
    r_ptr,
    hidden_ptr,
    numel,
    row_start,
    n_cols,
    residual_alpha,
    dropout_p,
    seed,
    XBLOCK: tl.constexpr,
    STAGES: tl.constexpr,
    HAS_RESIDUAL: tl.constexpr,
    HAS_DROPOUT: tl.constexpr,
    STORE_HIDDEN: tl.constexpr,
):
    acc_sum = tl.zeros([XBLOCK], dtype=tl.float32)
    acc_sq = tl.zeros([XBLOCK], dtype=tl.float32)
    offset = row_start
    for _ in tl.range(0, n_cols, XBLOCK, num_stages=STAGES):
        hidden = _load_hidden(
            x_ptr,
            r_ptr,
            numel,
            offset,
            residual_alpha,
            dropout_p,
            seed,
            XBLOCK,
            HAS_RESIDUAL,
            HAS_DROPOUT,
        )
        if STORE_HIDDEN:
            h_desc = _row_descriptor(hidden_ptr, numel, XBLOCK)
            h_desc.store([offset], hidden.to(hidden_ptr.dtype.element_ty))
        acc_sum += hidden
        acc_sq += hidden * hidden
        offset += XBLOCK
    return tl.sum(acc_sum, axis=0), tl.sum(acc_sq, axis=0)


@triton.jit
def _normalize_tile(
    hidden,
    w_ptr,
    b_ptr,
    cols,
    n_cols,
    mean,
    rstd,
    HAS_BIAS: tl.constexpr,
    ZERO_CENTERED_WEIGHT: tl.constexpr,
):
    col_ok = cols < n_cols
    weight = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    if ZERO_CENTERED_WEIGHT:
        weight += 1.0
    y = (hidden - mean) * rstd * weight
    if HAS_BIAS:
        bias = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
        y += bias
    return y


@triton.jit
def fused_add_rmsnorm_kernel(
    x_ptr,
    r_ptr,
    w_ptr,
    b_ptr,
    out_ptr,
    hidden_ptr,
    mean_ptr,
    rstd_ptr,
    amax_ptr,
    n_rows,
    n_cols,
    stride_row,
    residual_alpha,
    dropout_p,
    seed,
    eps,
    scale,
    clamp_limit,
    XBLOCK: tl.constexpr,
    STAGES: tl.constexpr,
    ACTIVATION: tl.constexpr,
    IS_RMS_NORM: tl.constexpr,
    HAS_RESIDUAL: tl.constexpr,
    HAS_DROPOUT: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    ZERO_CENTERED_WEIGHT: tl.constexpr,
    STORE_HIDDEN: tl.constexpr,
    STORE_STATS: tl.constexpr,
    STORE_AMAX: tl.constexpr,
    CLAMP_OUTPUT: tl.constexpr,
):
    row = tl.program_id(0)
    if row >= n_rows:
        return
    numel = n_rows * stride_row
    row_start = row * stride_row
    # Pass 1: the residual sum, kept for the next layer, and its statistics.
    total, squares = _sum_of_squares(
        x_ptr,
        r_ptr,
        hidden_ptr,
        numel,
        row_start,
        n_cols,
        residual_alpha,
        dropout_p,
        seed,
        XBLOCK,
        STAGES,
        HAS_RESIDUAL,
        HAS_DROPOUT,
        STORE_HIDDEN,
    )
    mean, rstd = _row_statistics(total, squares, n_cols, eps, IS_RMS_NORM)
    if STORE_STATS:
        tl.store(rstd_ptr + row, rstd)
        if not IS_RMS_NORM:
            tl.store(mean_ptr + row, mean)
    # Pass 2: normalize, weight and bias, activation, the scaled epilogue.
    offset = row_start
    amax = tl.zeros([XBLOCK], dtype=tl.float32)
    for start in tl.range(0, n_cols, XBLOCK, num_stages=STAGES):
        cols = start + tl.arange(0, XBLOCK)
        hidden = _load_hidden(
            x_ptr,
            r_ptr,
            numel,
            offset,
            residual_alpha,
            dropout_p,
            seed,
            XBLOCK,
            HAS_RESIDUAL,
            HAS_DROPOUT,
        )
        y = _normalize_tile(
            hidden, w_ptr, b_ptr, cols, n_cols, mean, rstd, HAS_BIAS, ZERO_CENTERED_WEIGHT
        )
        y = _activation(y, ACTIVATION) * scale
        if CLAMP_OUTPUT:
            y = _clamp(y, clamp_limit)
        o_desc = _row_descriptor(out_ptr, numel, XBLOCK)
        o_desc.store([offset], y.to(out_ptr.dtype.element_ty))
        if STORE_AMAX:
            amax = tl.maximum(amax, tl.abs(y))
        offset += XBLOCK
    if STORE_AMAX:
        # The row's absolute maximum: the scale of a quantized consumer of ``out``.
        tl.store(amax_ptr + row, tl.max(amax, axis=0))


def _constexprs(case):
    return {
        "XBLOCK": case["XBLOCK"],
        "STAGES": case["STAGES"],
        "ACTIVATION": case["ACTIVATION"],
        "IS_RMS_NORM": True,
        "HAS_RESIDUAL": True,
        "HAS_DROPOUT": False,
        "HAS_BIAS": True,
        "ZERO_CENTERED_WEIGHT": False,
        "STORE_HIDDEN": True,
        "STORE_STATS": True,
        "STORE_AMAX": True,
        "CLAMP_OUTPUT": True,
    }


@REPRO.compile
def compile_case(case):
    element = "*" + case["dtype"]
    signature = {"x_ptr": element, "r_ptr": element, "w_ptr": element, "b_ptr": element}
    signature.update({"out_ptr": element, "hidden_ptr": element})
    signature.update({"mean_ptr": "*fp32", "rstd_ptr": "*fp32", "amax_ptr": "*fp32"})
    signature.update({"n_rows": "i32", "n_cols": "i32", "stride_row": "i32"})
    signature.update({"residual_alpha": "fp32", "dropout_p": "fp32", "seed": "i32"})
    signature.update({name: "fp32" for name in ("eps", "scale", "clamp_limit")})
    return compile_kernel(fused_add_rmsnorm_kernel, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    dtype = case["dtype"]
    return {
        "x": random_input((ROWS, COLS), dtype),
        "residual": random_input((ROWS, COLS), dtype),
        "weight": random_input((COLS,), dtype),
        "bias": random_input((COLS,), dtype),
        "eps": 1e-6,
        "scale": 0.5,
        "activation": case["ACTIVATION"],
    }


@REPRO.launch
def launch_case(case, x, residual, weight, bias, eps, scale, activation):
    import torch

    ensure_allocator()
    out = poisoned(x.shape, torch_dtype(case["dtype"]))
    hidden = poisoned(x.shape, torch_dtype(case["dtype"]))
    mean = poisoned((x.shape[0],), torch.float32)
    rstd = poisoned((x.shape[0],), torch.float32)
    amax = poisoned((x.shape[0],), torch.float32)
    fused_add_rmsnorm_kernel[(x.shape[0],)](
        x,
        residual,
        weight,
        bias,
        out,
        hidden,
        mean,
        rstd,
        amax,
        x.shape[0],
        x.shape[1],
        x.stride(0),
        1.0,
        0.0,
        1234,
        eps,
        scale,
        60000.0,
        num_warps=case["num_warps"],
        **_constexprs(case),
    )
    return {"out": out, "residual_out": hidden}
