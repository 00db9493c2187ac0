"""kernlib's tile helpers: constants and @triton.jit helpers another module's kernel calls."""

import triton
import triton.language as tl

TILE_M = tl.constexpr(64)
TILE_N = tl.constexpr(32)
TILE_K = tl.constexpr(32)
ACC = tl.int32


@triton.jit
def make_desc(ptr, rows, cols, BR: tl.constexpr, BC: tl.constexpr):
    return tl.make_tensor_descriptor(
        ptr, shape=[rows, cols], strides=[cols, 1], block_shape=[BR, BC]
    )


def _zeros():
    return tl.zeros((TILE_M, TILE_N), dtype=tl.int32)


zeros_tile = triton.jit(_zeros)
