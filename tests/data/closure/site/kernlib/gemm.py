"""kernlib's int8 GEMM: the kernel reads helpers and constants of a sibling module, by name
and through the module."""

import triton
import triton.language as tl

from kernlib import tiles
from kernlib.tiles import TILE_K, TILE_M, TILE_N, make_desc


@triton.jit
def int8_gemm(out_ptr, a_ptr, b_ptr, M, N, K, WARP_SPECIALIZE: tl.constexpr):
    a_desc = make_desc(a_ptr, M, K, TILE_M, TILE_K)
    b_desc = make_desc(b_ptr, K, N, TILE_K, TILE_N)
    out_desc = make_desc(out_ptr, M, N, TILE_M, TILE_N)
    off_m = tl.program_id(0) * TILE_M
    off_n = tl.program_id(1) * TILE_N
    acc = tiles.zeros_tile()
    for k in tl.range(0, tl.cdiv(K, TILE_K), warp_specialize=WARP_SPECIALIZE):
        a = a_desc.load([off_m, k * TILE_K])
        b = b_desc.load([k * TILE_K, off_n])
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
    out_desc.store([off_m, off_n], acc)
