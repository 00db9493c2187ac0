"""kernlib's least-squares statistics: X^T Y and the column sums in one pipelined loop
(triton-lang/triton#6691's kernel), its tile sizes ``tl.constexpr`` globals of the module."""

import torch
import triton
import triton.language as tl

D_MODEL = tl.constexpr(128)
ROWS_PER_TILE = tl.constexpr(64)


@triton.jit
def _load_rows(ptr, start, N):
    rows = start * ROWS_PER_TILE + tl.arange(0, ROWS_PER_TILE)
    cols = tl.arange(0, D_MODEL)
    return tl.load(
        ptr + rows[:, None] * D_MODEL + cols[None, :], mask=(rows < N)[:, None], other=0.0
    )


@triton.jit
def normal_equations(x_ptr, y_ptr, xty_ptr, colsum_ptr, N):
    cols = tl.arange(0, D_MODEL)
    xty = tl.zeros((D_MODEL, D_MODEL), dtype=tl.float32)
    colsum = tl.zeros((D_MODEL,), dtype=tl.float32)
    for start in range(0, tl.cdiv(N, ROWS_PER_TILE)):
        x = _load_rows(x_ptr, start, N)
        y = _load_rows(y_ptr, start, N)
        colsum += tl.sum(x.to(tl.float32), axis=0)
        xty += tl.dot(tl.trans(x), y)
    tl.store(colsum_ptr + cols, colsum)
    tl.store(xty_ptr + cols[:, None] * D_MODEL + cols[None, :], xty)


def statistics(x, y, **options):
    """X^T Y and the column sums of x: what kernlib's users call."""
    xty = torch.full((D_MODEL, D_MODEL), float("nan"), device=x.device)
    colsum = torch.full((D_MODEL,), float("nan"), device=x.device)
    normal_equations[(1,)](x, y, xty, colsum, x.shape[0], **options)
    return {"xty": xty, "colsum": colsum}
