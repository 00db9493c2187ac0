"""A small program of several kernels, compiled for sm_100 through ``triton.compile``
(no GPU needed); run it under Triton 3.5.0 and the third one fails in
TritonGPUAssignLatencies. Used by tests/test_capture.py as "the user's program".

Usage: python several_kernels.py [--only-good]
"""

import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

SCALE = tl.constexpr(3)


@triton.jit
def scaled(x):
    return x * SCALE


@triton.jit
def add_scaled(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, scaled(tl.load(x_ptr + offsets, mask=mask)), mask=mask)


@triton.jit
def row_sum(x_ptr, out_ptr, stride, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    values = tl.load(x_ptr + row * stride + tl.arange(0, BLOCK_N))
    tl.store(out_ptr + row, tl.sum(values, axis=0))


@triton.jit
def gemm_prefetch(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    a_cur = a_desc.load([off_m, 0])
    b_cur = b_desc.load([0, off_n])
    for k in range(0, K, BLOCK_K):
        next_k = k + BLOCK_K
        a_next = a_cur
        b_next = b_cur
        if next_k < K:
            a_next = a_desc.load([off_m, next_k])
            b_next = b_desc.load([next_k, off_n])
        acc += tl.dot(a_cur, b_cur)
        a_cur = a_next
        b_cur = b_next
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


def compile_for_sm100(kernel, signature, constexprs, options):
    """As the JIT states it: every pointer and integer argument divisible by 16."""
    names = kernel.arg_names
    full = {n: signature.get(n, "constexpr") for n in names}
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in signature}
    source = ASTSource(kernel, full, constexprs=constexprs, attrs=attrs)
    return triton.compile(source, target=GPUTarget("cuda", 100, 32), options=options)


def main() -> int:
    compiled = compile_for_sm100(
        add_scaled,
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"},
        {"BLOCK": 256},
        {"num_warps": 4},
    )
    print(f"add_scaled: {compiled.metadata.shared} bytes of shared memory")
    compiled = compile_for_sm100(
        row_sum,
        {"x_ptr": "*fp16", "out_ptr": "*fp32", "stride": "i32"},
        {"BLOCK_N": 128},
        {"num_warps": 2},
    )
    print(f"row_sum: {compiled.metadata.shared} bytes of shared memory")
    if "--only-good" in sys.argv:
        return 0
    signature = {
        "a_ptr": "*fp16",
        "b_ptr": "*fp16",
        "c_ptr": "*fp16",
        "M": "i32",
        "N": "i32",
        "K": "i32",
    }
    compile_for_sm100(
        gemm_prefetch,
        signature,
        {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32},
        {"num_warps": 4, "num_stages": 2},
    )
    print("gemm_prefetch compiled")
    return 0


if __name__ == "__main__":
    sys.exit(main())
