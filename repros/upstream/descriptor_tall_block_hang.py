"""A tensor-descriptor load of a block taller than one TMA box (512 x 16 int32) hangs.

triton-lang/triton#6354 (reported 2025-03 on an H100 with a source build, open): one
program loads one (BLOCK_M, BLOCK_N) block of an n x n matrix through
``tl.make_tensor_descriptor``; with BLOCK_M=512, BLOCK_N=16 and int32 the kernel never
ends, spinning on the mbarrier wait of the load (BLOCK_M 128 and 256 end). A TMA box holds
at most 256 rows, so the block takes more than one copy. The PTX that triton 3.6.0 emits
for sm_90 issues two 256-row copies against one barrier expecting 32768 bytes, which looks
right: the bug may be fixed there; only a launch can tell. Compiles on every target.
"""

import triton
import triton.language as tl

from suite import Choice, Hang, Reference, Reproducer
from suite.checks import device, ensure_allocator, poisoned, random_input
from suite.tritonc import compile_kernel

N = 4096


def _config(block_m, block_n=16, dtype="i32", programs=1):
    return {"BLOCK_M": block_m, "BLOCK_N": block_n, "dtype": dtype, "PROGRAMS": programs}


REPRO = Reproducer(
    id="upstream-6354-descriptor-tall-block-hang",
    title="a tensor-descriptor load of a 512-row block hangs",
    family="triton-tensor-descriptor",
    references=("https://github.com/triton-lang/triton/issues/6354",),
    params=(
        Choice("BLOCK_M", (128, 256, 512, 1024)),
        Choice("BLOCK_N", (16, 32)),
        Choice("dtype", ("i32", "fp32", "fp16")),
        Choice("PROGRAMS", (1, 8)),
    ),
    configs={
        "trigger": [_config(512), _config(1024)],
        "nearest-pass": [_config(256), _config(128)],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    requires=("triton.language.make_tensor_descriptor",),
    label="{dtype}-m{BLOCK_M}-n{BLOCK_N}-p{PROGRAMS}",
    oracles=(Hang(bound_s=30), Reference(lambda src, rows, cols: src[:rows, :cols])),
)


@triton.jit
def tile_copy(src_ptr, dst_ptr, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    row0 = tl.program_id(0) * BLOCK_M
    desc = tl.make_tensor_descriptor(
        src_ptr, shape=[n, n], strides=[n, 1], block_shape=[BLOCK_M, BLOCK_N]
    )
    tile = desc.load([row0, 0])
    rows = row0 + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    tl.store(dst_ptr + rows[:, None] * BLOCK_N + cols[None, :], tile)


def _constexprs(case):
    return {"BLOCK_M": case["BLOCK_M"], "BLOCK_N": case["BLOCK_N"]}


@REPRO.compile
def compile_case(case):
    element = "*" + case["dtype"]
    signature = {"src_ptr": element, "dst_ptr": element, "n": "i32"}
    return compile_kernel(tile_copy, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    if case["dtype"] == "i32":
        import torch

        src = torch.randint(-(2**30), 2**30, (N, N), dtype=torch.int32, device=device())
    else:
        src = random_input((N, N), case["dtype"])
    return {"src": src, "rows": case["BLOCK_M"] * case["PROGRAMS"], "cols": case["BLOCK_N"]}


@REPRO.launch
def launch_case(case, src, rows, cols):
    ensure_allocator()
    dst = poisoned((rows, cols), src.dtype)
    tile_copy[(case["PROGRAMS"],)](src, dst, N, **_constexprs(case), **case.options)
    return dst
