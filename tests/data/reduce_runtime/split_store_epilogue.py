"""A fused GEMM epilogue (bias, activation, residual, alpha/beta) whose split store drops a column.

The kernel is the epilogue a matmul library runs after its main loop, as a kernel of its own:
grouped tile order, strided 2-D tiles, a bias row, an activation, a residual with a beta
scale, and a store that can go out in two column halves (``SPLIT_STORE``, narrower stores
for a wide tile). The program's own bug: the second half's column mask is ``< N - 1``, so
when the last column of the matrix falls in a second half it is never written (NaN, the
poison). Judged without a reference: the same launch with ``SPLIT_STORE=False`` must agree
(``wrong-result:launch:differential:split_store: nan``). Triton's interpreter shows it on a
CPU (``TRITON_INTERPRET=1``): the tests reduce it there.
"""

import triton
import triton.language as tl

from suite import Choice, Differential, Reproducer, Size
from suite.checks import poisoned, random_input, torch_dtype
from suite.tritonc import compile_kernel

GROUP_M = tl.constexpr(4)

REPRO = Reproducer(
    id="split-store-epilogue",
    title="a fused epilogue's split store leaves the last column unwritten",
    family="program-bug",
    params=(
        Choice("BLOCK_M", (16, 32)),
        Choice("BLOCK_N", (32, 64)),
        Choice("ACTIVATION", ("gelu", "silu", "none")),
        Choice("SPLIT_STORE", (False, True)),
        Choice("dtype", ("fp16", "fp32")),
        Size("M", (1, 37, 64)),
        Size("N", (50, 64)),
    ),
    configs={
        "trigger": [
            {
                "BLOCK_M": 16,
                "BLOCK_N": 32,
                "ACTIVATION": "gelu",
                "SPLIT_STORE": True,
                "dtype": "fp16",
                "M": 37,
                "N": 50,
            }
        ],
        "nearest-pass": [
            {
                "BLOCK_M": 16,
                "BLOCK_N": 32,
                "ACTIVATION": "gelu",
                "SPLIT_STORE": True,
                "dtype": "fp16",
                "M": 37,
                "N": 40,
            }
        ],
    },
    targets=("sm_90",),
    label="{dtype}-m{BLOCK_M}n{BLOCK_N}-{ACTIVATION}-split{SPLIT_STORE}-{M}x{N}",
    oracles=(Differential({"SPLIT_STORE": False}, label="split_store"),),
)


@triton.jit
def _tanh(x):
    e = tl.exp(2.0 * x)
    return (e - 1.0) / (e + 1.0)


@triton.jit
def _gelu_tanh(x):
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1.0 + _tanh(inner))


@triton.jit
def _silu(x):
    return x / (1.0 + tl.exp(-x))


@triton.jit
def _activation(x, ACTIVATION: tl.constexpr):
    if ACTIVATION == "gelu":
        x = _gelu_tanh(x)
    elif ACTIVATION == "silu":
        x = _silu(x)
    return x


@triton.jit
def _tile_coordinates(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Grouped ordering: GROUP_M row tiles share their column tiles while they are hot.
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    width = GROUP_M * num_pid_n
    group = pid // width
    first_m = group * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % width) % size_m
    pid_n = (pid % width) // size_m
    return pid_m, pid_n


@triton.jit
def _store_tile(out_ptr, y, rows, cols, stride_om, stride_on, M, N):
    pointers = out_ptr + rows[:, None] * stride_om + cols[None, :] * stride_on
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(pointers, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def fused_epilogue_kernel(
    acc_ptr,
    bias_ptr,
    res_ptr,
    out_ptr,
    M,
    N,
    stride_am,
    stride_an,
    stride_rm,
    stride_rn,
    stride_om,
    stride_on,
    alpha,
    beta,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    ACTIVATION: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    HAS_RESIDUAL: tl.constexpr,
    SPLIT_STORE: tl.constexpr,
):
    pid = tl.program_id(0)
    pid_m, pid_n = _tile_coordinates(pid, M, N, BLOCK_M, BLOCK_N)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < M
    col_ok = cols < N
    tile_ok = row_ok[:, None] & col_ok[None, :]
    acc = tl.load(
        acc_ptr + rows[:, None] * stride_am + cols[None, :] * stride_an, mask=tile_ok, other=0.0
    )
    acc = acc * alpha
    if HAS_BIAS:
        bias = tl.load(bias_ptr + cols, mask=col_ok, other=0.0)
        acc = acc + bias[None, :].to(tl.float32)
    acc = _activation(acc, ACTIVATION)
    if HAS_RESIDUAL:
        residual = tl.load(
            res_ptr + rows[:, None] * stride_rm + cols[None, :] * stride_rn,
            mask=tile_ok,
            other=0.0,
        )
        acc = acc + beta * residual.to(tl.float32)
    if SPLIT_STORE:
        # Two column halves: narrower stores for a wide tile.
        halves = tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2))
        halves = tl.permute(halves, (0, 2, 1))
        low, high = tl.split(halves)
        cols_low = pid_n * BLOCK_N + tl.arange(0, BLOCK_N // 2)
        cols_high = cols_low + BLOCK_N // 2
        _store_tile(out_ptr, low, rows, cols_low, stride_om, stride_on, M, N)
        _store_tile(out_ptr, high, rows, cols_high, stride_om, stride_on, M, N - 1)
    else:
        _store_tile(out_ptr, acc, rows, cols, stride_om, stride_on, M, N)


def _constexprs(case):
    return {
        "BLOCK_M": case["BLOCK_M"],
        "BLOCK_N": case["BLOCK_N"],
        "ACTIVATION": case["ACTIVATION"],
        "HAS_BIAS": True,
        "HAS_RESIDUAL": True,
        "SPLIT_STORE": case["SPLIT_STORE"],
    }


@REPRO.compile
def compile_case(case):
    element = "*" + case["dtype"]
    signature = {"acc_ptr": "*fp32", "bias_ptr": "*fp32", "res_ptr": element, "out_ptr": element}
    signature.update({name: "i32" for name in ("M", "N")})
    strides = ("stride_am", "stride_an", "stride_rm", "stride_rn", "stride_om", "stride_on")
    signature.update({name: "i32" for name in strides})
    signature.update({"alpha": "fp32", "beta": "fp32"})
    return compile_kernel(fused_epilogue_kernel, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    shape = (case["M"], case["N"])
    return {
        "acc": random_input(shape, "fp32"),
        "bias": random_input((case["N"],), "fp32"),
        "residual": random_input(shape, case["dtype"]),
    }


@REPRO.launch
def launch_case(case, acc, bias, residual):
    M, N = acc.shape
    out = poisoned(acc.shape, torch_dtype(case["dtype"]))
    grid = (triton.cdiv(M, case["BLOCK_M"]) * triton.cdiv(N, case["BLOCK_N"]),)
    fused_epilogue_kernel[grid](
        acc,
        bias,
        residual,
        out,
        M,
        N,
        acc.stride(0),
        acc.stride(1),
        residual.stride(0),
        residual.stride(1),
        out.stride(0),
        out.stride(1),
        1.5,
        0.5,
        **_constexprs(case),
    )
    return out
