"""Reproducers whose launches each oracle judges, for Triton's interpreter on a CPU.

Under ``TRITON_INTERPRET=1`` the launches run on torch CPU tensors. Each reproducer has a
config that is right and one that shows its oracle's kind of failure, from a real kernel
mistake: a tail left unwritten by an unrolled loop, a softmax that rounds to fp16
before its sum, a dropout that draws a new seed per launch, a loop whose counter never moves, an
descriptor tile that is not 16-byte aligned. They declare no compile function: the
interpreter does not compile.
"""

import torch
import triton
import triton.language as tl

from suite import Choice, Determinism, Differential, Hang, Reference, Reproducer, Size
from suite.checks import poisoned, random_input

SIZES = Size("N", (1, 17, 1000, 4099))


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, UNROLL: tl.constexpr):
    # Each program scales UNROLL blocks; with UNROLL > 1 the last program's second block is
    # never stored when it is partial (the mask is taken from the first block only).
    start = tl.program_id(0) * BLOCK * UNROLL
    first = start + tl.arange(0, BLOCK)
    for u in tl.static_range(UNROLL):
        offsets = start + u * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)
        keep = offsets < n if u == 0 else (first + BLOCK * UNROLL) < n
        tl.store(y_ptr + offsets, x * 2.0, mask=keep)


def _scale_inputs(case):
    return {"x": random_input((case["N"],), "fp32")}


def _scale_launch(case, x):
    y = poisoned(x.shape, x.dtype)
    grid = (triton.cdiv(x.numel(), case["BLOCK"] * case["UNROLL"]),)
    scale_kernel[grid](x, y, x.numel(), BLOCK=case["BLOCK"], UNROLL=case["UNROLL"])
    return y


UNROLLED = Reproducer(
    id="oracle-differential",
    title="an unrolled scale leaves the tail unwritten; UNROLL=1 is right",
    family="oracle-test",
    params=(Choice("BLOCK", (16, 32)), Choice("UNROLL", (1, 2)), SIZES),
    configs={
        "right": [{"BLOCK": 16, "UNROLL": 1, "N": 1000}],
        "wrong": [{"BLOCK": 16, "UNROLL": 2, "N": 1000}],
        "tiny": [{"BLOCK": 16, "UNROLL": 2, "N": 1}],
    },
    targets=("sm_90",),
    oracles=(Differential({"UNROLL": 1}),),
)
UNROLLED.inputs(_scale_inputs)
UNROLLED.launch(_scale_launch)

SCALED = Reproducer(
    id="oracle-reference",
    title="the same scale, judged against a float64 reference",
    family="oracle-test",
    params=(Choice("BLOCK", (16, 32)), Choice("UNROLL", (1, 2)), SIZES),
    configs={
        "right": [{"BLOCK": 32, "UNROLL": 1, "N": 4099}],
        "wrong": [{"BLOCK": 32, "UNROLL": 2, "N": 4099}],
    },
    targets=("sm_90",),
    oracles=(Reference(lambda x: x * 2),),
)
SCALED.inputs(_scale_inputs)
SCALED.launch(_scale_launch)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr, HALF_SUM: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * cols + offsets, mask=offsets < cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    if HALF_SUM:
        # The mistake: the exponentials rounded to fp16 before the sum, in an fp32 softmax.
        e = e.to(tl.float16).to(tl.float32)
    tl.store(y_ptr + row * cols + offsets, e / tl.sum(e, axis=0), mask=offsets < cols)


SOFTMAX = Reproducer(
    id="oracle-reference-softmax",
    title="an fp32 row softmax that rounds its exponentials to fp16, against float64",
    family="oracle-test",
    params=(Choice("HALF_SUM", (False, True)), Choice("SCALE", (1, 4))),
    configs={
        "right": [{"HALF_SUM": False, "SCALE": 4}],
        "wrong": [{"HALF_SUM": True, "SCALE": 4}],
    },
    targets=("sm_90",),
    oracles=(Reference(lambda x: torch.softmax(x, dim=-1)),),
)


@SOFTMAX.inputs
def _softmax_inputs(case):
    return {"x": random_input((64, 12), "fp32") * case["SCALE"]}


@SOFTMAX.launch
def _softmax_launch(case, x):
    y = poisoned(x.shape, x.dtype)
    softmax_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=16, HALF_SUM=case["HALF_SUM"])
    return y


@triton.jit
def dropout_kernel(x_ptr, y_ptr, n, seed, p, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    keep = tl.rand(seed, offsets) > p
    tl.store(y_ptr + offsets, tl.where(keep, x / (1 - p), 0.0), mask=mask)


DROPOUT = Reproducer(
    id="oracle-determinism",
    title="a dropout whose launch draws a new seed each time unless one is fixed",
    family="oracle-test",
    params=(Choice("FIXED_SEED", (True, False)),),
    configs={"right": [{"FIXED_SEED": True}], "wrong": [{"FIXED_SEED": False}]},
    targets=("sm_90",),
    oracles=(Determinism(),),
)


@DROPOUT.inputs
def _dropout_inputs(case):
    return {"x": random_input((1000,), "fp32")}


@DROPOUT.launch
def _dropout_launch(case, x):
    y = poisoned(x.shape, x.dtype)
    seed = 1234 if case["FIXED_SEED"] else int(torch.randint(0, 2**31 - 1, (1,)).item())
    dropout_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), seed, 0.5, BLOCK=256)
    return y


@triton.jit
def countdown_kernel(x_ptr, y_ptr, steps, STEP: tl.constexpr):
    # STEP=0 never moves the counter: the loop does not end.
    left = steps
    total = 0.0
    while left > 0:
        total += tl.load(x_ptr)
        left -= STEP
    tl.store(y_ptr, total)


SPIN = Reproducer(
    id="oracle-hang",
    title="a loop whose counter never moves, under a hang bound",
    family="oracle-test",
    params=(Choice("STEP", (1, 0)),),
    configs={"right": [{"STEP": 1}], "wrong": [{"STEP": 0}]},
    targets=("sm_90",),
    oracles=(Hang(bound_s=5),),
)


@SPIN.inputs
def _spin_inputs(case):
    return {"x": random_input((1,), "fp32")}


@SPIN.launch
def _spin_launch(case, x):
    y = poisoned((1,), x.dtype)
    countdown_kernel[(1,)](x, y, 3, STEP=case["STEP"])
    return y


@triton.jit
def window_kernel(x_ptr, y_ptr, n, start, BLOCK: tl.constexpr):
    # A tile copied through tensor descriptors from a window that starts at ``start``: TMA
    # needs the tile's first byte 16-byte aligned, which start=1 (fp32) breaks.
    src = tl.make_tensor_descriptor(x_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    dst = tl.make_tensor_descriptor(y_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    dst.store([start], src.load([start]))


WINDOW = Reproducer(
    id="oracle-fault",
    title="a descriptor copy from a window that starts one element in",
    family="oracle-test",
    params=(Choice("START", (0, 1)),),
    configs={"right": [{"START": 0}], "wrong": [{"START": 1}]},
    targets=("sm_90",),
)


@WINDOW.inputs
def _window_inputs(case):
    return {"x": random_input((64,), "fp32")}


@WINDOW.launch
def _window_launch(case, x):
    y = poisoned(x.shape, x.dtype)
    window_kernel[(1,)](x, y, x.numel(), case["START"], BLOCK=16)
    return y
