"""Descriptor stores write past the tensor's inner extent, up to the next 16-byte boundary.

triton-lang/triton#11583 (reported 2026-09 on an H100, open; #11893 proposes documenting
it as a TMA limitation): ``tensor_descriptor.store`` documents that values outside the
tensor are ignored, but a block that ends beyond the inner extent ``N`` also writes the
elements from ``N`` up to the next 16-byte boundary of the row. With a column slice of a
larger tensor as the destination, that is another tensor's data: int8 N=466 writes
columns 466..479, int16 N=470 writes 470..471, int32 N=466 writes 466..467; N=464 (int8)
and N=468 (int32), whole 16-byte rows, write nothing past N.

The kernel here is the issue's copy through device-side descriptors
(``tl.make_tensor_descriptor``, shape ``[M, N]``, row stride 512): ``a[:, :N]`` into
``out[:, :N]`` of a (32, 512) buffer filled with 7. The oracle is exact: the first N
columns equal ``a``'s, and every column from N on still holds 7. Wrong on an H200 with
triton 3.6.0 (2026-11-26, docs/gpu-results.md) at the three triggers; N=464 and N=468 are
right.
"""

import triton
import triton.language as tl

from suite import Choice, Reference, Reproducer, Size
from suite.checks import ensure_allocator
from suite.tritonc import compile_kernel

M = 32
WIDTH = 512  # the row stride of both buffers: 16-byte aligned for every dtype
SENTINEL = 7
DTYPES = {"int8": "i8", "int16": "i16", "int32": "i32"}


def _config(dtype, n, block_n=128):
    return {"dtype": dtype, "N": n, "BLOCK_N": block_n}


def _expected(a, n):
    """The first n columns copied from a; the rest of the buffer untouched."""
    out = a.new_full((M, WIDTH), SENTINEL)
    out[:, :n] = a[:, :n]
    return out


REPRO = Reproducer(
    id="upstream-11583-descriptor-store-past-extent",
    title="a descriptor store writes past the inner extent up to the next 16-byte boundary",
    family="triton-tensor-descriptor",
    references=("https://github.com/triton-lang/triton/issues/11583",),
    params=(
        Choice("dtype", tuple(DTYPES)),
        Size("N", (464, 466, 468, 470)),
        Choice("BLOCK_N", (64, 128)),
    ),
    configs={
        "trigger": [_config("int8", 466), _config("int16", 470), _config("int32", 466)],
        "nearest-pass": [_config("int8", 464), _config("int32", 468)],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    requires=("triton.language.make_tensor_descriptor",),
    label="{dtype}-n{N}-bn{BLOCK_N}",
    oracles=(Reference(_expected),),
)


@triton.jit
def copy_columns(
    out_ptr, a_ptr, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, WIDTH: tl.constexpr
):
    a_desc = tl.make_tensor_descriptor(a_ptr, [BLOCK_M, N], [WIDTH, 1], [BLOCK_M, BLOCK_N])
    out_desc = tl.make_tensor_descriptor(out_ptr, [BLOCK_M, N], [WIDTH, 1], [BLOCK_M, BLOCK_N])
    off_m = tl.program_id(0) * BLOCK_M
    for ni in range(0, tl.cdiv(N, BLOCK_N)):
        tile = a_desc.load([off_m, ni * BLOCK_N])
        out_desc.store([off_m, ni * BLOCK_N], tile)


def _constexprs(case):
    return {"BLOCK_M": M, "BLOCK_N": case["BLOCK_N"], "WIDTH": WIDTH}


@REPRO.compile
def compile_case(case):
    element = "*" + DTYPES[case["dtype"]]
    signature = {"out_ptr": element, "a_ptr": element, "N": "i32"}
    return compile_kernel(copy_columns, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    import torch

    from suite.checks import device

    dtype = getattr(torch, case["dtype"])
    low, high = torch.iinfo(dtype).min, torch.iinfo(dtype).max
    a = torch.randint(low, high, (M, WIDTH), dtype=dtype, device=device())
    a[a == SENTINEL] = SENTINEL + 1  # a written 7 would hide a stray write
    return {"a": a, "n": case["N"]}


@REPRO.launch
def launch_case(case, a, n):
    ensure_allocator()
    out = a.new_full((M, WIDTH), SENTINEL)
    copy_columns[(1,)](out, a, n, **_constexprs(case), **case.options)
    return out
