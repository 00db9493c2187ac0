"""A 1-D descriptor tile broadcast into a tl.dot operand faults with 3-4 stages: misaligned address.

triton-lang/triton#7386 (reported 2025-07 on an H100, open): a K loop that loads a 16-element
vector through a 1-D tensor descriptor (TMA), broadcasts it to a 16x16 tile and feeds that
tile to ``tl.dot`` with a 16x16 tile of a 2-D descriptor faults with
``CUDA_ERROR_MISALIGNED_ADDRESS`` when ``num_stages`` is 3 or 4; no pipelining,
``num_stages=2``, or plain pointer loads (no TMA) are right. The report gives the kernel as
TTIR (XLA emits it); the kernel here is the same loop written with
``tl.make_tensor_descriptor``.

``out[m, n] = sum_k v[k] * b[k, n]`` for every row m (a weighted column sum of ``b``, written
as a dot so the tensor cores do it). The oracle is a float64 reference of ``v @ b`` repeated
on every row. The kernel compiles on every target without a GPU: only a launch shows the bug.
On an H100 with triton 3.6.0 (2026-11-27, docs/gpu-results.md) 3 and 4 stages fault with
``CUDA error: misaligned address`` (fp16, bf16); 2 stages, and 3 stages with the vector read
through a pointer, are right.
"""

import triton
import triton.language as tl

from suite import Choice, Reference, Reproducer
from suite.checks import ensure_allocator, poisoned, random_input
from suite.tritonc import compile_kernel

BLOCK = 16  # the report's tiles: 16 rows, 16 columns, 16 along K
K = 512
N = 128


def _config(stages, vector="descriptor", dtype="fp16"):
    return {"num_stages": stages, "num_warps": 4, "VECTOR": vector, "dtype": dtype}


REPRO = Reproducer(
    id="upstream-7386-descriptor-broadcast-dot",
    title="a 1-D descriptor tile broadcast into a tl.dot operand faults with 3-4 stages",
    family="triton-tensor-descriptor",
    references=("https://github.com/triton-lang/triton/issues/7386",),
    params=(
        Choice("num_stages", (1, 2, 3, 4)),
        Choice("num_warps", (4,)),
        Choice("VECTOR", ("descriptor", "pointer")),
        Choice("dtype", ("fp16", "bf16")),
    ),
    configs={
        "trigger": [_config(3), _config(4), _config(3, dtype="bf16"), _config(4, dtype="bf16")],
        "nearest-pass": [_config(2), _config(3, vector="pointer")],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    requires=("triton.language.make_tensor_descriptor",),
    label="s{num_stages}-{VECTOR}-{dtype}",
    oracles=(Reference(lambda v, b: (v @ b).expand(BLOCK, N)),),
)


@triton.jit
def broadcast_dot(
    v_ptr,
    b_ptr,
    out_ptr,
    K: tl.constexpr,
    N: tl.constexpr,
    BLOCK: tl.constexpr,
    VECTOR: tl.constexpr,
):
    off_n = tl.program_id(0) * BLOCK
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[K], strides=[1], block_shape=[BLOCK])
    b_desc = tl.make_tensor_descriptor(
        b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK, BLOCK]
    )
    rk = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), tl.float32)
    for k in range(0, K, BLOCK):
        v = v_desc.load([k]) if VECTOR == "descriptor" else tl.load(v_ptr + k + rk)
        lhs = tl.broadcast_to(v[None, :], (BLOCK, BLOCK))
        acc = tl.dot(lhs, b_desc.load([k, off_n]), acc)
    rows = tl.arange(0, BLOCK)
    cols = off_n + tl.arange(0, BLOCK)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], acc)


def _constexprs(case):
    return {"K": K, "N": N, "BLOCK": BLOCK, "VECTOR": case["VECTOR"]}


@REPRO.compile
def compile_case(case):
    element = "*" + case["dtype"]
    signature = {"v_ptr": element, "b_ptr": element, "out_ptr": "*fp32"}
    return compile_kernel(broadcast_dot, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    return {"v": random_input((K,), case["dtype"]), "b": random_input((K, N), case["dtype"])}


@REPRO.launch
def launch_case(case, v, b):
    import torch

    ensure_allocator()
    out = poisoned((BLOCK, N), torch.float32)
    broadcast_dot[(N // BLOCK,)](v, b, out, **_constexprs(case), **case.options)
    return out
