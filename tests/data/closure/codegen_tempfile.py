# ruff: noqa: E501 (the template is kernel source as a code generator writes it)
"""Kernel source generated from a template, written to a temporary file, imported and the file
deleted (as codegen libraries do): the kernel's text is only in Triton's JIT function.

Same bug as module_constants.py (triton-lang/triton#11586 on sm_90).
"""

import importlib.util
import os
import tempfile

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

TEMPLATE = """
import triton
import triton.language as tl

TILE_M = tl.constexpr({m})
TILE_N = tl.constexpr({n})
TILE_K = tl.constexpr({k})


@triton.jit
def load_tile(desc, row, col):
    return desc.load([row, col])


@triton.jit
def int8_gemm(out_ptr, a_ptr, b_ptr, M, N, K, WARP_SPECIALIZE: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[TILE_M, TILE_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[TILE_K, TILE_N])
    out_desc = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[TILE_M, TILE_N])
    off_m = tl.program_id(0) * TILE_M
    off_n = tl.program_id(1) * TILE_N
    acc = tl.zeros((TILE_M, TILE_N), dtype=tl.int32)
    for k in tl.range(0, tl.cdiv(K, TILE_K), warp_specialize=WARP_SPECIALIZE):
        acc = tl.dot(load_tile(a_desc, off_m, k * TILE_K), load_tile(b_desc, k * TILE_K, off_n), acc, out_dtype=tl.int32)
    out_desc.store([off_m, off_n], acc)
"""


def _generated():
    handle, path = tempfile.mkstemp(suffix=".py", prefix="generated_gemm_")
    with os.fdopen(handle, "w") as out:
        out.write(TEMPLATE.format(m=64, n=32, k=32))
    spec = importlib.util.spec_from_file_location("generated_gemm", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    os.unlink(path)
    return module


GENERATED = _generated()

REPRO = Reproducer(
    id="closure-codegen-tempfile",
    title="generated int8 GEMM in a warp-specialized loop (source from a deleted temp file)",
    family="closure",
    params=(
        Choice("WARP_SPECIALIZE", (False, True)),
        Choice("num_warps", (4,)),
        Choice("num_stages", (3,)),
    ),
    configs={
        "trigger": [{"WARP_SPECIALIZE": True, "num_warps": 4, "num_stages": 3}],
        "nearest-pass": [{"WARP_SPECIALIZE": False, "num_warps": 4, "num_stages": 3}],
    },
    targets=("sm_90",),
    requires=("triton.language.make_tensor_descriptor", "triton.language.range(warp_specialize)"),
)


@REPRO.compile
def compile_case(case):
    signature = {
        "out_ptr": "*i32",
        "a_ptr": "*i8",
        "b_ptr": "*i8",
        "M": "i32",
        "N": "i32",
        "K": "i32",
    }
    return compile_kernel(
        GENERATED.int8_gemm, case, signature, {"WARP_SPECIALIZE": case["WARP_SPECIALIZE"]}
    )
