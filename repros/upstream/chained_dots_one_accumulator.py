"""Two tl.dot chained through one accumulator in a K loop: wrong result (seen on sm_103).

triton-lang/triton#10821 (reported 2026-07, closed): a K loop that issues
``acc = tl.dot(a1, b1, acc); acc = tl.dot(a2, b2, acc)`` gives deterministic wrong values
(max error 50-70 on values near 25) on a B300 (sm_103) with triton 3.6.0, 3.7.1 and main
whenever the tile takes the tcgen05 path (BLOCK_M >= 64); one dot per iteration, two
accumulators summed after the loop, and BLOCK_M=16 are right. Related to Blackwell's
back-to-back MMA pipelining (#10858, reverted in #10971 and relanded in #10988).
On Hopper the same loop goes through the pipelined wgmma path instead: this port asks
whether sm_90 shows it too; it may well not (not yet launched on a GPU,
bench/probes/runtime_candidates/).

The kernel here is the issue's: ``C = A1 @ B1 + A2 @ B2`` over K in BLOCK_K steps. The
oracle is a float64 reference judged against the same sum computed in the inputs' own
precision; ``CHAIN="two-accumulators"`` is the issue's passing control.
"""

import triton
import triton.language as tl

from suite import Choice, Reference, Reproducer, Size
from suite.checks import poisoned, random_input
from suite.tritonc import compile_kernel


def _config(dtype="bf16", chain="one-accumulator", block_m=128, stages=3, size=512):
    return {
        "dtype": dtype,
        "CHAIN": chain,
        "BLOCK_M": block_m,
        "BLOCK_N": 128,
        "BLOCK_K": 64,
        "num_stages": stages,
        "num_warps": 4 if block_m <= 64 else 8,
        "SIZE": size,
    }


REPRO = Reproducer(
    id="upstream-10821-chained-dots-one-accumulator",
    title="two tl.dot chained through one accumulator in a K loop give wrong results",
    family="triton-pipeliner",
    references=("https://github.com/triton-lang/triton/issues/10821",),
    params=(
        Choice("dtype", ("bf16", "fp16")),  # fp32 dots are tf32: the reference is not
        Choice("CHAIN", ("one-accumulator", "two-accumulators")),
        Choice("BLOCK_M", (16, 64, 128)),
        Choice("BLOCK_N", (64, 128)),
        Choice("BLOCK_K", (32, 64)),
        Choice("num_stages", (1, 2, 3)),
        Choice("num_warps", (4, 8)),
        Size("SIZE", (256, 512, 1024)),
    ),
    configs={
        "trigger": [_config(), _config(dtype="fp16", block_m=64, stages=2)],
        "nearest-pass": [_config(chain="two-accumulators"), _config(block_m=16)],
    },
    default_sets=("trigger", "nearest-pass"),
    targets=("sm_90",),
    label="{dtype}-{CHAIN}-m{BLOCK_M}n{BLOCK_N}k{BLOCK_K}-s{num_stages}-w{num_warps}-{SIZE}",
    oracles=(Reference(lambda a1, a2, b1, b2: a1 @ b1 + a2 @ b2),),
)


@triton.jit
def two_dots(
    a1_ptr,
    a2_ptr,
    b1_ptr,
    b2_ptr,
    c_ptr,
    SIZE: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    CHAIN: tl.constexpr,
):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    other = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, SIZE, BLOCK_K):
        ks = k + tl.arange(0, BLOCK_K)
        a1 = tl.load(a1_ptr + rows[:, None] * SIZE + ks[None, :])
        a2 = tl.load(a2_ptr + rows[:, None] * SIZE + ks[None, :])
        b1 = tl.load(b1_ptr + ks[:, None] * SIZE + cols[None, :])
        b2 = tl.load(b2_ptr + ks[:, None] * SIZE + cols[None, :])
        acc = tl.dot(a1, b1, acc)
        if CHAIN == "one-accumulator":
            acc = tl.dot(a2, b2, acc)
        else:
            other = tl.dot(a2, b2, other)
    total = acc + other
    tl.store(c_ptr + rows[:, None] * SIZE + cols[None, :], total.to(c_ptr.dtype.element_ty))


def _constexprs(case):
    keys = ("SIZE", "BLOCK_M", "BLOCK_N", "BLOCK_K", "CHAIN")
    return {k: case[k] for k in keys}


@REPRO.compile
def compile_case(case):
    element = "*" + case["dtype"]
    signature = {name: element for name in ("a1_ptr", "a2_ptr", "b1_ptr", "b2_ptr", "c_ptr")}
    return compile_kernel(two_dots, case, signature, _constexprs(case))


@REPRO.inputs
def make_inputs(case):
    shape = (case["SIZE"], case["SIZE"])
    return {name: random_input(shape, case["dtype"]) for name in ("a1", "a2", "b1", "b2")}


@REPRO.launch
def launch_case(case, a1, a2, b1, b2):
    size = case["SIZE"]
    c = poisoned((size, size), a1.dtype)
    grid = (triton.cdiv(size, case["BLOCK_M"]), triton.cdiv(size, case["BLOCK_N"]))
    two_dots[grid](a1, a2, b1, b2, c, **_constexprs(case), **case.options)
    return c
