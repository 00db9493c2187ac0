import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def gemm_prefetch(
    a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
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


signature = {
    'a_ptr': '*fp16', 'b_ptr': '*fp16', 'c_ptr': '*fp16', 'M': 'i32', 'N': 'i32', 'K': 'i32',
    'BLOCK_M': 'constexpr', 'BLOCK_N': 'constexpr', 'BLOCK_K': 'constexpr',
}
constexprs = {'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 32}
attrs = {
    (0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]],
    (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]],
    (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]],
}
src = ASTSource(gemm_prefetch, signature, constexprs=constexprs, attrs=attrs)
triton.compile(src, target=GPUTarget("cuda", 100, 32), options={'num_warps': 4, 'num_stages': 2})
