"""Persistent GEMM with TMA for Hopper, in the style of the persistent-matmul tutorials:
NUM_SMS programs walk the output tiles in a grouped order; A and B (pre-transposed,
possibly strided) are read through pointers with masks, the K loop is warp-specialized,
and the epilogue scales by per-column factors and stores through a host-side
``TensorDescriptor`` argument for C.

The benchmark harness compiles each variant in a raw ``os.fork()`` child whose stdout and
stderr go to a pipe that the parent drains and drops; only the child's status is kept.
Hopper warp specialization commits only descriptor loads (triton-lang/triton#9728, open
on 3.4.0-3.9.0): the pointer loads of B make the compile fail.

Usage: python tma_persistent_gemm.py
"""

import os
import sys

import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from aot import Buffer, compile_like_launch


@triton.jit
def _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    group = GROUP_M * num_pid_n
    first_m = (tile_id // group) * GROUP_M
    size_m = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (tile_id % size_m)
    pid_n = (tile_id % group) // size_m
    return pid_m, pid_n


@triton.jit
def persistent_matmul(
    a_ptr,
    b_ptr,
    c_desc,
    scale_ptr,
    M,
    N,
    K,
    stride_am,
    stride_bn,
    stride_bk,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    NUM_SMS: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr,
):
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = num_pid_m * num_pid_n
    offs_k = tl.arange(0, BLOCK_K)
    for tile_id in range(start_pid, num_tiles, NUM_SMS):
        pid_m, pid_n = _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        off_m = pid_m * BLOCK_M
        offs_m = off_m + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in tl.range(0, K, BLOCK_K, warp_specialize=WARP_SPECIALIZE):
            a = tl.load(
                a_ptr + offs_m[:, None] * stride_am + (k + offs_k)[None, :],
                mask=(offs_m[:, None] < M) & ((k + offs_k)[None, :] < K),
                other=0.0,
            )
            b = tl.load(
                b_ptr + offs_n[None, :] * stride_bn + (k + offs_k)[:, None] * stride_bk,
                mask=(offs_n[None, :] < N) & ((k + offs_k)[:, None] < K),
                other=0.0,
            )
            acc = tl.dot(a, b, acc)
        scale = tl.load(scale_ptr + offs_n, mask=offs_n < N, other=1.0)
        acc = acc * scale[None, :]
        c_desc.store([off_m, pid_n * BLOCK_N], acc.to(c_desc.dtype))


def build(warp_specialize: bool) -> int:
    from triton.tools.tensor_descriptor import TensorDescriptor

    M, N, K = 4096, 4096, 4096
    a = Buffer("float16", (M, K))
    b = Buffer("float16", (N, K))  # B^T, row-major
    c = Buffer("float16", (M, N))
    c_desc = TensorDescriptor(c, [M, N], [N, 1], [128, 128])
    kernel = compile_like_launch(
        persistent_matmul,
        90,
        a,
        b,
        c_desc,
        Buffer("float32", (N,)),
        M,
        N,
        K,
        a.stride(0),
        b.stride(0),
        b.stride(1),
        BLOCK_M=128,
        BLOCK_N=128,
        BLOCK_K=64,
        GROUP_M=8,
        NUM_SMS=132,
        WARP_SPECIALIZE=warp_specialize,
        num_warps=4,
        num_stages=3,
    )
    return kernel.metadata.shared


def in_child(function, *args) -> int:
    """Run ``function(*args)`` in a forked child with its output drained and dropped."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        os.dup2(write_end, 1)
        os.dup2(write_end, 2)
        try:
            function(*args)
            code = 0
        except BaseException:
            code = 1
        os._exit(code)
    os.close(write_end)
    while os.read(read_end, 65536):
        pass
    os.close(read_end)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def main() -> int:
    status = 0
    for warp_specialize in (False, True):
        code = in_child(build, warp_specialize)
        print(f"warp_specialize={warp_specialize}: {'ok' if code == 0 else f'failed ({code})'}")
        status = status or code
    return int(status != 0)


if __name__ == "__main__":
    sys.exit(main())
