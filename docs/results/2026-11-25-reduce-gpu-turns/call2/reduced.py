"""Fused residual-add + RMSNorm with per-tile 1-D descriptors in a pipelined loop (#10474)

Reduced by `repro reduce` from /work/main/bench/reduce_inputs/runtime/fused_add_rmsnorm_sm90.py (finding bench-reduce-gpu-fused-add-rmsnorm-126948bb4a6c).
Launched and judged as the finding was; fails on triton 3.6.0, sm_90, with:
runtime-error:launch:AcceleratorError: CUDA error: misaligned address
"""

import triton
import triton.language as tl
from suite import Choice, Reference, Reproducer
from suite.checks import ensure_allocator, poisoned, random_input, torch_dtype
from suite.tritonc import compile_kernel


def launch_kernel(kernel, grid, params, *args, **kwargs):
    # The launch below was written for the original kernel's parameters `params`; the
    # reducer drops parameters and writes constexprs into the kernel, so only those the
    # kernel still has are passed (launch options such as num_warps pass through).
    bound = {**dict(zip(params, args)), **kwargs}
    kept = set(kernel.arg_names)
    return kernel[grid](**{k: v for k, v in bound.items() if k in kept or k not in params})


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
        y = 0.5 * y * (1 + torch.tanh(0.7978845608028654 * (y + 0.044715 * y ** 3)))
    elif activation == 3:
        y = torch.relu(y)
    return {'out': y * scale, 'residual_out': hidden}

def _constexprs(case):
    return {'XBLOCK': case['XBLOCK'], 'STAGES': case['STAGES'], 'ACTIVATION': case['ACTIVATION'], 'IS_RMS_NORM': True, 'HAS_RESIDUAL': True, 'HAS_DROPOUT': False, 'HAS_BIAS': True, 'ZERO_CENTERED_WEIGHT': False, 'STORE_HIDDEN': True, 'STORE_STATS': True, 'STORE_AMAX': True, 'CLAMP_OUTPUT': True}

def make_inputs(case):
    dtype = case['dtype']
    return {'x': random_input((ROWS, COLS), dtype), 'residual': random_input((ROWS, COLS), dtype), 'weight': random_input((COLS,), dtype), 'bias': random_input((COLS,), dtype), 'eps': 1e-06, 'scale': 0.5, 'activation': case['ACTIVATION']}

def launch_case(case, x, residual, weight, bias, eps, scale, activation):
    import torch
    ensure_allocator()
    out = poisoned(x.shape, torch_dtype(case['dtype']))
    hidden = poisoned(x.shape, torch_dtype(case['dtype']))
    mean = poisoned((x.shape[0],), torch.float32)
    rstd = poisoned((x.shape[0],), torch.float32)
    amax = poisoned((x.shape[0],), torch.float32)
    launch_kernel(fused_add_rmsnorm_kernel, (x.shape[0],), ('x_ptr', 'r_ptr', 'w_ptr', 'b_ptr', 'out_ptr', 'hidden_ptr', 'mean_ptr', 'rstd_ptr', 'amax_ptr', 'n_rows', 'n_cols', 'stride_row', 'residual_alpha', 'dropout_p', 'seed', 'eps', 'scale', 'clamp_limit', 'XBLOCK', 'STAGES', 'ACTIVATION', 'IS_RMS_NORM', 'HAS_RESIDUAL', 'HAS_DROPOUT', 'HAS_BIAS', 'ZERO_CENTERED_WEIGHT', 'STORE_HIDDEN', 'STORE_STATS', 'STORE_AMAX', 'CLAMP_OUTPUT'), x, residual, weight, bias, out, hidden, mean, rstd, amax, x.shape[0], x.shape[1], x.stride(0), 1.0, 0.0, 1234, eps, scale, 60000.0, num_warps=case['num_warps'], **_constexprs(case))
    return {'out': out, 'residual_out': hidden}


REPRO = Reproducer(
    id='bench-reduce-gpu-fused-add-rmsnorm',
    title='Fused residual-add + RMSNorm with per-tile 1-D descriptors in a pipelined loop (#10474)',
    family='bench-reduce-gpu',
    params=(
        Choice('XBLOCK', (16,)),
        Choice('STAGES', (3,)),
        Choice('dtype', ('fp16',)),
        Choice('ACTIVATION', (0,)),
        Choice('num_warps', (4,)),
    ),
    configs={"finding": [{'XBLOCK': 16, 'STAGES': 3, 'dtype': 'fp16', 'ACTIVATION': 0, 'num_warps': 4}]},
    targets=('sm_90',),
    requires=('triton.language.make_tensor_descriptor',),
    label='{dtype}-x{XBLOCK}-s{STAGES}-act{ACTIVATION}',
    oracles=(
        Reference(
            lambda x, residual, weight, bias, eps, scale, activation: _reference(
                x, residual, weight, bias, eps, scale, activation
            )
        ),
    ),
)


@triton.jit
def _silu():
    pass


@triton.jit
def _gelu_tanh():
    pass


@triton.jit
def _activation(y):
    return y


@triton.jit
def _clamp():
    pass


@triton.jit
def _dropout():
    pass


@triton.jit
def _row_statistics(squares, n_cols, eps):
    return (0.0, 1.0)


@triton.jit
def _row_descriptor(base, numel, XBLOCK: tl.constexpr):
    return base


@triton.jit
def _load_hidden(x_ptr, r_ptr, numel, offset, residual_alpha, XBLOCK: tl.constexpr):
    hidden = tl.float32
    hidden += residual_alpha
    return hidden


@triton.jit
def _sum_of_squares(x_ptr, r_ptr, hidden_ptr, numel, row_start, n_cols, residual_alpha, XBLOCK: tl.constexpr, STAGES: tl.constexpr):
    acc_sq = [XBLOCK]
    offset = row_start
    for _ in 0:
        hidden_i281 = tl.float32
        hidden_i281 += residual_alpha
        hidden = hidden_i281
        [offset]
        acc_sq += hidden
        offset += XBLOCK
    return (tl.zeros([XBLOCK], dtype=tl.float32), tl.sum(acc_sq, axis=0))


@triton.jit
def _normalize_tile(hidden, w_ptr, b_ptr, cols, n_cols, mean, rstd):
    col_ok = cols < n_cols
    y = (hidden - mean) * rstd * tl.load(w_ptr + cols).to(tl.float32)
    y += tl.load(b_ptr + cols).to(tl.float32)
    return y


@triton.jit
def fused_add_rmsnorm_kernel(x_ptr, r_ptr, w_ptr, b_ptr, out_ptr, hidden_ptr, n_rows, n_cols, stride_row, residual_alpha, eps, scale, XBLOCK: tl.constexpr):
    numel = n_rows * stride_row
    row_start = tl.program_id(0) * stride_row
    acc_sq_i637 = tl.zeros([XBLOCK], dtype=tl.float32)
    offset_i637 = row_start
    for __i637 in tl.range(0, n_cols, XBLOCK, num_stages=3):
        hidden_i281_i637 = tl.make_tensor_descriptor(x_ptr, shape=[numel], strides=[1], block_shape=[XBLOCK]).load([offset_i637]).to(tl.float32)
        hidden_i281_i637 += residual_alpha * tl.make_tensor_descriptor(r_ptr, shape=[numel], strides=[1], block_shape=[XBLOCK]).load([offset_i637]).to(tl.float32)
        hidden_i637 = hidden_i281_i637
        tl.make_tensor_descriptor(hidden_ptr, shape=[numel], strides=[1], block_shape=[XBLOCK]).store([offset_i637], hidden_i637.to(hidden_ptr.dtype.element_ty))
        acc_sq_i637 += hidden_i637 * hidden_i637
        offset_i637 += XBLOCK
    total, squares = (tl.sum(tl.zeros([XBLOCK], dtype=tl.float32), axis=0), tl.sum(acc_sq_i637, axis=0))
    mean, rstd = (0.0, 1.0 / tl.sqrt(squares / n_cols + eps))
    offset = row_start
    for start in tl.range(0, n_cols, XBLOCK, num_stages=3):
        cols = start + tl.arange(0, XBLOCK)
        hidden_i717 = tl.make_tensor_descriptor(x_ptr, shape=[numel], strides=[1], block_shape=[XBLOCK]).load([offset]).to(tl.float32)
        hidden_i717 += residual_alpha * tl.make_tensor_descriptor(r_ptr, shape=[numel], strides=[1], block_shape=[XBLOCK]).load([offset]).to(tl.float32)
        hidden = hidden_i717
        col_ok_i722 = cols < n_cols
        y_i722 = (hidden - mean) * rstd * tl.load(w_ptr + cols).to(tl.float32)
        y_i722 += tl.load(b_ptr + cols).to(tl.float32)
        y = y_i722
        y = _activation(y) * scale
        tl.make_tensor_descriptor(out_ptr, shape=[numel], strides=[1], block_shape=[XBLOCK]).store([offset], y.to(out_ptr.dtype.element_ty))
        offset += XBLOCK


@REPRO.compile
def compile_case(case):
    signature = {'x_ptr': '*fp16', 'r_ptr': '*fp16', 'w_ptr': '*fp16', 'b_ptr': '*fp16', 'out_ptr': '*fp16', 'hidden_ptr': '*fp16', 'n_rows': 'i32', 'n_cols': 'i32', 'stride_row': 'i32', 'residual_alpha': 'fp32', 'eps': 'fp32', 'scale': 'fp32'}
    constexprs = {'XBLOCK': 16}
    return compile_kernel(fused_add_rmsnorm_kernel, case, signature, constexprs)


REPRO.inputs(make_inputs)


REPRO.launch(launch_case)
