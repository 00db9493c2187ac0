"""triton-lang/triton#10474 written as a library writes it: module constants (one assigned
by tuple, one annotated), a descriptor helper made by assignment, a host helper and a
reference function at module level, torch imported at the top.

1-D tensor descriptors made in a ``tl.range(..., num_stages=3)`` loop fault with a misaligned
address on an H100 (triton 3.6.0) for fp16 XBLOCK 16; one stage is right.
"""

import torch
import triton
import triton.language as tl

from suite import Choice, Reference, Reproducer
from suite.checks import ensure_allocator, poisoned
from suite.tritonc import compile_kernel

ROWS, LD = 16, 512  # the problem: ROWS x LD elements, split RSPLIT at a time
RSPLIT: int = 1024
ALPHA = 0.5
DTYPES = {"fp16": torch.float16, "fp32": torch.float32}


def _config(stages):
    return {"dtype": "fp16", "XBLOCK": 16, "STAGES": stages}


REPRO = Reproducer(
    id="closure-gpu-misaligned-constants",
    title="1-D descriptors made in a pipelined tl.range fault (module constants, assigned helper)",
    family="closure",
    params=(Choice("XBLOCK", (16, 64)), Choice("STAGES", (1, 3)), Choice("dtype", ("fp16",))),
    configs={"trigger": [_config(3)], "nearest-pass": [_config(1)]},
    targets=("sm_90",),
    requires=("triton.language.make_tensor_descriptor",),
    oracles=(Reference(lambda x, residual: reference(x, residual)),),
)


def _descriptor(ptr, n, XBLOCK: tl.constexpr):
    return tl.make_tensor_descriptor(ptr, shape=[n], strides=[1], block_shape=[XBLOCK])


descriptor = triton.jit(_descriptor)


@triton.jit
def axpy_1d(x_ptr, r_ptr, y_ptr, xnumel, alpha, XBLOCK: tl.constexpr, STAGES: tl.constexpr):
    start = tl.program_id(0) * RSPLIT_C
    length = min(RSPLIT_C, xnumel - start)
    offset = start
    for _ in tl.range(0, length, XBLOCK, num_stages=STAGES):
        x = descriptor(x_ptr, xnumel, XBLOCK).load([offset])
        r = descriptor(r_ptr, xnumel, XBLOCK).load([offset])
        y = x.to(tl.float32) * alpha + r.to(tl.float32)
        descriptor(y_ptr, xnumel, XBLOCK).store([offset], y.to(x.dtype))
        offset += XBLOCK


RSPLIT_C = tl.constexpr(RSPLIT)


def reference(x, residual):
    return x * ALPHA + residual


def fresh(dtype):
    return (torch.rand(ROWS * LD, device="cuda") * 2 - 1).to(DTYPES[dtype])


@REPRO.compile
def compile_case(case):
    element = "*" + case["dtype"]
    signature = {"x_ptr": element, "r_ptr": element, "y_ptr": element}
    signature.update({"xnumel": "i32", "alpha": "fp32"})
    constexprs = {"XBLOCK": case["XBLOCK"], "STAGES": case["STAGES"]}
    return compile_kernel(axpy_1d, case, signature, constexprs)


@REPRO.inputs
def make_inputs(case):
    return {"x": fresh(case["dtype"]), "residual": fresh(case["dtype"])}


@REPRO.launch
def launch_case(case, x, residual):
    ensure_allocator()
    y = poisoned(x.shape, DTYPES[case["dtype"]])
    grid = (triton.cdiv(x.numel(), RSPLIT),)
    axpy_1d[grid](x, residual, y, x.numel(), ALPHA, XBLOCK=case["XBLOCK"], STAGES=case["STAGES"])
    return y
