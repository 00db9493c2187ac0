"""A runtime failure with stage, warp-specialization and tile knobs, for the variant table.

Under ``TRITON_INTERPRET=1`` the launches run on torch CPU tensors. The kernel takes the
mean of each row in ``BLOCK``-wide chunks, ``STAGES`` chunks per loop trip (a pipeline by
hand), and makes a real mistake: it divides by the lanes it walked, masked ones included,
instead of the row's length. With 64 columns that is right for 1 and 2 stages (64 lanes
walked) and wrong for 3 (96). The interpreter has no warp specialization: the flag picks
the second code path a warp-specialized kernel would have, which counts with the mask.

The row length is a ``tl.constexpr``: a loop bound from a runtime argument is a Python
``range`` over an interpreter tensor, whose ``__index__`` in Triton 3.6.0 is
``int(np.array([n]))``, a ``TypeError`` under NumPy 2.4 on ("only 0-dimensional arrays can
be converted to Python scalars"; 3.7.0 squeezes the array first).
"""

import triton
import triton.language as tl

from suite import Choice, Differential, Reproducer
from suite.checks import poisoned, random_input

COLS = 64


@triton.jit
def row_mean_kernel(
    x_ptr,
    y_ptr,
    N_COLS: tl.constexpr,
    BLOCK: tl.constexpr,
    STAGES: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr,
):
    row = tl.program_id(0)
    total = 0.0
    count = 0.0
    for trip in range(0, tl.cdiv(N_COLS, BLOCK * STAGES)):
        for stage in tl.static_range(STAGES):
            offsets = (trip * STAGES + stage) * BLOCK + tl.arange(0, BLOCK)
            inside = offsets < N_COLS
            total += tl.sum(tl.load(x_ptr + row * N_COLS + offsets, mask=inside, other=0.0))
            if WARP_SPECIALIZE:
                count += BLOCK  # the mistake: masked lanes counted
            else:
                count += tl.sum(inside.to(tl.float32))
    tl.store(y_ptr + row, total / count)


ROW_MEAN = Reproducer(
    id="variant-row-mean",
    title="a hand-pipelined row mean that counts masked lanes with 3 stages",
    family="oracle-test",
    params=(
        Choice("BLOCK", (8, 16, 32)),
        Choice("STAGES", (1, 2, 3)),
        Choice("WARP_SPECIALIZE", (False, True)),
    ),
    configs={
        "wrong": [{"BLOCK": 16, "STAGES": 3, "WARP_SPECIALIZE": True}],
        "right": [{"BLOCK": 16, "STAGES": 2, "WARP_SPECIALIZE": True}],
    },
    targets=("sm_90",),
    oracles=(Differential({"STAGES": 1}),),
)


@ROW_MEAN.inputs
def _row_mean_inputs(case):
    return {"x": random_input((4, COLS), "fp32")}


@ROW_MEAN.launch
def _row_mean_launch(case, x):
    y = poisoned((x.shape[0],), x.dtype)
    row_mean_kernel[(x.shape[0],)](
        x,
        y,
        N_COLS=x.shape[1],
        BLOCK=case["BLOCK"],
        STAGES=case["STAGES"],
        WARP_SPECIALIZE=case["WARP_SPECIALIZE"],
    )
    return y
