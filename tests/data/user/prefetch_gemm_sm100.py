"""A user's descriptor GEMM that loads the next K tile by hand (Triton's AssignLatencies bug).

Written for the report tests, in the style of repros/upstream/, as a user would give it:
on sm_100 with num_stages 2, triton 3.4.0-3.5.1 fail in ``TritonGPUAssignLatencies``
(``PassManager::run failed``); 3.6.0 compiles it. bf16 in, fp32 out, the prefetch of B only
and a masked epilogue: the kernel differs from the built-in ``tma-gemm-prefetch``.
"""

import triton
import triton.language as tl

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

REPRO = Reproducer(
    id="user-prefetch-gemm-sm100",
    title="bf16 descriptor GEMM prefetching the next B tile inside the K loop",
    family="user",
    params=(Choice("BLOCK", (64,)), Choice("num_warps", (4,)), Choice("num_stages", (1, 2))),
    configs={
        "trigger": [{"BLOCK": 64, "num_warps": 4, "num_stages": 2}],
        "nearest-pass": [{"BLOCK": 64, "num_warps": 4, "num_stages": 1}],
    },
    default_sets=("trigger",),
    targets=("sm_100",),
    requires=("triton.language.make_tensor_descriptor",),
    label="{BLOCK}-w{num_warps}-s{num_stages}",
)


@triton.jit
def prefetch_b_gemm(x_ptr, w_ptr, out_ptr, M, N, K, BLOCK: tl.constexpr):
    x_desc = tl.make_tensor_descriptor(x_ptr, [M, K], [K, 1], [BLOCK, BLOCK])
    w_desc = tl.make_tensor_descriptor(w_ptr, [K, N], [N, 1], [BLOCK, BLOCK])
    row = tl.program_id(0) * BLOCK
    col = tl.program_id(1) * BLOCK
    total = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    w_tile = w_desc.load([0, col])
    for k in range(0, K, BLOCK):
        w_now = w_tile
        if k + BLOCK < K:
            w_tile = w_desc.load([k + BLOCK, col])
        total += tl.dot(x_desc.load([row, k]), w_now)
    rows = row + tl.arange(0, BLOCK)
    cols = col + tl.arange(0, BLOCK)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], total, mask=mask)


@REPRO.compile
def compile_case(case):
    signature = {"x_ptr": "*bf16", "w_ptr": "*bf16", "out_ptr": "*fp32"}
    signature.update({"M": "i32", "N": "i32", "K": "i32"})
    return compile_kernel(prefetch_b_gemm, case, signature, {"BLOCK": case["BLOCK"]})
