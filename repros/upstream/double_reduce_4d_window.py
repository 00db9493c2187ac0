"""Two chained tl.sum over the inner axes of a 4-D tile give a wrong result.

triton-lang/triton#4379 (reported 2024-07 with triton 3.0.0, open): a kernel loads a 4-D
tile ``x[h, w, kh, kw] = image[h + kh, w + kw]`` (masked to the image) and reduces it with
``tl.sum(tl.sum(x, 2), 2)``: the output differs from the same sums computed by torch. The
stored report gives the kernel but not its launch sizes, so the sizes here are the usual
ones for such a window sum (16x16 outputs, 4x4 and 2x2 windows).

``out[h, w]`` is the sum of the KxK window of ``image`` whose corner is ``(h, w)``, with the
parts past the image's edge counted as zero (a box filter). The oracle is a float64
reference of the same windows (``torch.nn.functional.unfold`` of the zero-padded image).
``REDUCE="flat"`` computes the same sums from a 3-D tile with the window flattened and one
``tl.sum``: the nearest pass.
"""

import triton
import triton.language as tl

from suite import Choice, Reference, Reproducer
from suite.checks import poisoned, random_input, torch_dtype
from suite.tritonc import compile_kernel

IN_H = 19  # not a multiple of any block: the masks cut windows at the edge
IN_W = 21


def _config(block, window, reduce="chained", warps=4, dtype="fp32"):
    return {
        "BLOCK_H": block,
        "BLOCK_W": block,
        "WINDOW": window,
        "REDUCE": reduce,
        "num_warps": warps,
        "dtype": dtype,
    }


def _window_sums(image, block_h, block_w, window):
    import torch

    padded = torch.zeros(
        (block_h + window - 1, block_w + window - 1), dtype=image.dtype, device=image.device
    )
    rows, cols = min(image.shape[0], padded.shape[0]), min(image.shape[1], padded.shape[1])
    padded[:rows, :cols] = image[:rows, :cols]
    windows = padded.unfold(0, window, 1).unfold(1, window, 1)  # [block_h, block_w, K, K]
    return windows.sum(dim=(2, 3))


REPRO = Reproducer(
    id="upstream-4379-double-reduce-4d",
    title="two chained tl.sum over the inner axes of a 4-D tile give a wrong result",
    family="triton-reduction",
    references=("https://github.com/triton-lang/triton/issues/4379",),
    params=(
        Choice("BLOCK_H", (8, 16, 32)),
        Choice("BLOCK_W", (8, 16, 32)),
        Choice("WINDOW", (2, 4, 8)),
        Choice("REDUCE", ("chained", "flat")),
        Choice("num_warps", (1, 4, 8)),
        Choice("dtype", ("fp32", "fp16")),
    ),
    configs={
        "trigger": [
            _config(16, 4),
            _config(16, 2, warps=8),
            _config(32, 4, dtype="fp16"),
            _config(8, 2, warps=1),
            _config(32, 8),
        ],
        "nearest-pass": [_config(16, 4, reduce="flat")],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    label="h{BLOCK_H}-w{BLOCK_W}-k{WINDOW}-{REDUCE}-w{num_warps}-{dtype}",
    oracles=(
        Reference(
            lambda image, block_h, block_w, window: _window_sums(image, block_h, block_w, window)
        ),
    ),
)


@triton.jit
def window_sum(
    x_base,
    y_base,
    stride_x_h,
    stride_y_h,
    IN_H,
    IN_W,
    BLOCK_H: tl.constexpr,
    BLOCK_W: tl.constexpr,
    WINDOW: tl.constexpr,
    REDUCE: tl.constexpr,
):
    h = tl.arange(0, BLOCK_H)
    w = tl.arange(0, BLOCK_W)
    if REDUCE == "chained":
        kh = tl.arange(0, WINDOW)
        kw = tl.arange(0, WINDOW)
        rows = h[:, None, None, None] + kh[None, None, :, None]
        cols = w[None, :, None, None] + kw[None, None, None, :]
        x = tl.load(
            x_base + rows * stride_x_h + cols,
            mask=(rows < IN_H) & (rows >= 0) & (cols < IN_W) & (cols >= 0),
            other=0.0,
        )
        out = tl.sum(tl.sum(x, 2), 2)
    else:
        k = tl.arange(0, WINDOW * WINDOW)
        rows = h[:, None, None] + (k // WINDOW)[None, None, :]
        cols = w[None, :, None] + (k % WINDOW)[None, None, :]
        x = tl.load(
            x_base + rows * stride_x_h + cols,
            mask=(rows < IN_H) & (cols < IN_W),
            other=0.0,
        )
        out = tl.sum(x, 2)
    tl.store(y_base + h[:, None] * stride_y_h + w[None, :], out)


def _constexprs(case):
    return {
        "BLOCK_H": case["BLOCK_H"],
        "BLOCK_W": case["BLOCK_W"],
        "WINDOW": case["WINDOW"],
        "REDUCE": case["REDUCE"],
    }


@REPRO.compile
def compile_case(case):
    element = "*" + case["dtype"]
    signature = {"x_base": element, "y_base": element}
    signature.update({"stride_x_h": "i32", "stride_y_h": "i32", "IN_H": "i32", "IN_W": "i32"})
    divisible = ("x_base", "y_base", "stride_y_h")  # IN_H, IN_W and the image's row stride are odd
    return compile_kernel(window_sum, case, signature, _constexprs(case), divisible=divisible)


@REPRO.inputs
def make_inputs(case):
    return {
        "image": random_input((IN_H, IN_W), case["dtype"]),
        "block_h": case["BLOCK_H"],
        "block_w": case["BLOCK_W"],
        "window": case["WINDOW"],
    }


@REPRO.launch
def launch_case(case, image, block_h, block_w, window):
    out = poisoned((block_h, block_w), torch_dtype(case["dtype"]))
    window_sum[(1,)](
        image, out, image.stride(0), out.stride(0), IN_H, IN_W, **_constexprs(case), **case.options
    )
    return out
