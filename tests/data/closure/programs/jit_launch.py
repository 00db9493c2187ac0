"""A library's int8 GEMM over host-side tensor descriptors (``TensorDescriptor.from_tensor``),
called through the JIT as any user calls it: ``int8_gemm[grid](c_desc, a_desc, b_desc, ...)``.

Run on a build machine with no GPU (``build_host``), the launch compiles for sm_90 first and
the compile fails: under warp specialization the int8 WGMMA has no PTX on sm_90
(triton-lang/triton#11586).
"""

import build_host
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

BLOCK_M, BLOCK_N, BLOCK_K = 64, 32, 32


@triton.jit
def int8_gemm(c_desc, a_desc, b_desc, K, WARP_SPECIALIZE: tl.constexpr):
    BM: tl.constexpr = c_desc.block_shape[0]
    BN: tl.constexpr = c_desc.block_shape[1]
    BK: tl.constexpr = a_desc.block_shape[1]
    off_m = tl.program_id(0) * BM
    off_n = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    for k in tl.range(0, tl.cdiv(K, BK), warp_specialize=WARP_SPECIALIZE):
        a = a_desc.load([off_m, k * BK])
        b = b_desc.load([k * BK, off_n])
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
    c_desc.store([off_m, off_n], acc)


def matmul(a, b, c, warp_specialize=True):
    M, K = a.shape
    N = b.shape[1]
    a_desc = TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K])
    b_desc = TensorDescriptor.from_tensor(b, [BLOCK_K, BLOCK_N])
    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N])
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    int8_gemm[grid](
        c_desc, a_desc, b_desc, K, WARP_SPECIALIZE=warp_specialize, num_warps=4, num_stages=3
    )


if __name__ == "__main__":
    build_host.target(90)
    M, N, K = 256, 256, 512
    a = build_host.Tensor((M, K), build_host.int8)
    b = build_host.Tensor((K, N), build_host.int8)
    matmul(a, b, build_host.Tensor((M, N), build_host.int32))
