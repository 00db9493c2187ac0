"""1-D tensor descriptors made inside a pipelined ``tl.range`` fault with a misaligned address.

triton-lang/triton#10474 (reported 2026-06, closed): a loop
``for _ in tl.range(0, n, XBLOCK, num_stages=3)`` that makes a
``tl.make_tensor_descriptor(ptr, shape=[n], strides=[1], block_shape=[XBLOCK])`` each
iteration and loads / stores one tile through it faults at launch with
``CUDA error: misaligned address`` (seen at the next synchronize) when a tile is small.
On an H100 (sm_90, triton 3.6.0, 2026-11-25, docs/gpu-results.md): fp16 and fp32 with
XBLOCK 8 and 16 fault with 3 stages; one stage is right, and XBLOCK 64 is right with 3.
fp16 XBLOCK 4 is refused at compile time (a descriptor block under 16 bytes). The kernel
compiles on every target without a GPU: only a launch shows the bug.

The kernel here is the streaming epilogue Inductor emits for ``y = x * alpha + residual``
with its descriptor (TMA) pointwise code: each program walks a split of RSPLIT elements one
XBLOCK tile at a time. ``OP="copy"`` is upstream's own loop (load, then store).
"""

import triton
import triton.language as tl

from suite import Choice, Reference, Reproducer, Size
from suite.checks import ensure_allocator, poisoned, random_input, torch_dtype
from suite.tritonc import compile_kernel

RSPLIT = 1024


def _config(dtype, xblock, stages, op="axpy", n=8192):
    return {"dtype": dtype, "XBLOCK": xblock, "STAGES": stages, "OP": op, "N": n}


REPRO = Reproducer(
    id="upstream-10474-descriptor-1d-pipelined",
    title="1-D tensor descriptors made in a pipelined tl.range fault: misaligned address",
    family="triton-tensor-descriptor",
    references=("https://github.com/triton-lang/triton/issues/10474",),
    params=(
        Choice("XBLOCK", (8, 16, 32, 64, 128)),
        Choice("STAGES", (1, 2, 3, 4)),
        Choice("dtype", ("fp16", "fp32")),
        Choice("OP", ("copy", "axpy")),
        Size("N", (1, 17, 1000, 1024, 8192, 65543)),
    ),
    configs={
        "trigger": [_config("fp16", 16, 3), _config("fp32", 8, 3, "copy")],
        "nearest-pass": [_config("fp16", 16, 1), _config("fp16", 64, 3)],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    requires=("triton.language.make_tensor_descriptor",),
    label="{dtype}-x{XBLOCK}-s{STAGES}-{OP}-n{N}",
    oracles=(Reference(lambda x, residual, alpha: x * alpha + residual),),
)


@triton.jit
def scaled_residual(
    x_ptr,
    r_ptr,
    y_ptr,
    xnumel,
    alpha,
    XBLOCK: tl.constexpr,
    RSPLIT: tl.constexpr,
    STAGES: tl.constexpr,
    OP: tl.constexpr,
):
    start = tl.program_id(0) * RSPLIT
    length = min(RSPLIT, xnumel - start)
    offset = start
    for _ in tl.range(0, length, XBLOCK, num_stages=STAGES):
        x_desc = tl.make_tensor_descriptor(x_ptr, shape=[xnumel], strides=[1], block_shape=[XBLOCK])
        y_desc = tl.make_tensor_descriptor(y_ptr, shape=[xnumel], strides=[1], block_shape=[XBLOCK])
        x = x_desc.load([offset])
        if OP == "axpy":
            r_desc = tl.make_tensor_descriptor(
                r_ptr, shape=[xnumel], strides=[1], block_shape=[XBLOCK]
            )
            y = x.to(tl.float32) * alpha + r_desc.load([offset]).to(tl.float32)
            y_desc.store([offset], y.to(x.dtype))
        else:
            y_desc.store([offset], x)
        offset += XBLOCK


def _constexprs(case):
    return {"XBLOCK": case["XBLOCK"], "RSPLIT": RSPLIT, "STAGES": case["STAGES"], "OP": case["OP"]}


@REPRO.compile
def compile_case(case):
    element = "*" + case["dtype"]
    signature = {"x_ptr": element, "r_ptr": element, "y_ptr": element}
    signature.update({"xnumel": "i32", "alpha": "fp32"})
    return compile_kernel(scaled_residual, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    n = case["N"]
    alpha = 1.0 if case["OP"] == "copy" else 0.5
    residual = random_input((n,), case["dtype"]) * (0 if case["OP"] == "copy" else 1)
    return {"x": random_input((n,), case["dtype"]), "residual": residual, "alpha": alpha}


@REPRO.launch
def launch_case(case, x, residual, alpha):
    ensure_allocator()
    y = poisoned(x.shape, torch_dtype(case["dtype"]))
    grid = (triton.cdiv(x.numel(), RSPLIT),)
    scaled_residual[grid](x, residual, y, x.numel(), alpha, **_constexprs(case))
    return y
