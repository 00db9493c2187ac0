import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def pointer_dot(
    a_ptr, b_ptr, c_ptr, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr,
):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, warp_specialize=WARP_SPECIALIZE):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BLOCK_N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * BLOCK_N + rn[None, :], acc.to(tl.float16))


signature = {
    'a_ptr': '*fp16', 'b_ptr': '*fp16', 'c_ptr': '*fp16', 'K': 'i32', 'BLOCK_M': 'constexpr',
    'BLOCK_N': 'constexpr', 'BLOCK_K': 'constexpr', 'WARP_SPECIALIZE': 'constexpr',
}
constexprs = {'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 64, 'WARP_SPECIALIZE': True}
attrs = {
    (0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]],
    (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]],
}
src = ASTSource(pointer_dot, signature, constexprs=constexprs, attrs=attrs)
triton.compile(src, target=GPUTarget("cuda", 90, 32), options={'num_warps': 4, 'num_stages': 3})
