"""Warm Triton's cache for sm_90 before the wheel ships: each kernel of the library is compiled
with ``kernel.warmup`` for the shapes it serves, on a build machine with no GPU (``build_host``).
Tiles come from a module table through ``tl.constexpr`` globals; the offsets helper is made by
assignment.

The warp-specialized loop of pointer loads feeding ``tl.dot`` fails to compile on Hopper
(triton-lang/triton#9728; an ``Assertion `false' failed`` up to 3.6, "unsupported load type
for producer commit" from 3.7): the build dies.
"""

import build_host
import triton
import triton.language as tl

TILE = {"M": 128, "N": 128, "K": 64}
BLOCK_M = tl.constexpr(TILE["M"])
BLOCK_N: tl.constexpr = tl.constexpr(TILE["N"])
BLOCK_K = tl.constexpr(TILE["K"])
SHAPES = [(512, 512, 512)]


def _tile_offsets(start, SIZE: tl.constexpr):
    return start + tl.arange(0, SIZE)


tile_offsets = triton.jit(_tile_offsets, noinline=False)


@triton.jit
def pointer_dot(a_ptr, b_ptr, c_ptr, M, N, K, WARP_SPECIALIZE: tl.constexpr):
    rm = tile_offsets(tl.program_id(0) * BLOCK_M, BLOCK_M)
    rn = tile_offsets(tl.program_id(1) * BLOCK_N, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, warp_specialize=WARP_SPECIALIZE):
        rk = tile_offsets(k, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def warm(arch):
    build_host.target(arch)
    for m, n, k in SHAPES:
        a = build_host.Tensor((m, k), build_host.float16)
        b = build_host.Tensor((k, n), build_host.float16)
        c = build_host.Tensor((m, n), build_host.float16)
        grid = (triton.cdiv(m, TILE["M"]), triton.cdiv(n, TILE["N"]))
        pointer_dot.warmup(
            a, b, c, m, n, k, WARP_SPECIALIZE=True, grid=grid, num_warps=4, num_stages=3
        )
        print(f"warmed pointer_dot {m}x{n}x{k} for sm_{arch}")


if __name__ == "__main__":
    warm(90)
