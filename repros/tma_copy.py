"""A persistent 2D descriptor copy: each program walks tiles, load then store.

The loop over tiles is what the pipeliner works on (num_stages), as in the
seeds' TMA copy kernel; the seed-003 copy configs are the curated sets.
256x256 tiles are at the TMA box limit (256 per dimension) and need far more
shared memory than one stage per target allows once pipelined.
"""

import triton
import triton.language as tl

from suite import Choice, Pow2, Reproducer
from suite.tritonc import compile_kernel


def _seed(m, n, warps, stages, dtype="fp16"):
    return {"BLOCK_M": m, "BLOCK_N": n, "num_warps": warps, "num_stages": stages, "dtype": dtype}


REPRO = Reproducer(
    id="tma-copy",
    title="Persistent 2D tensor-descriptor copy (seed-003 copy configs)",
    family="triton-pipeliner",
    references=("seed 003: TMA copy autotune configs",),
    params=(
        Pow2("BLOCK_M", 16, 256),
        Pow2("BLOCK_N", 16, 256),
        Choice("num_stages", (1, 2, 3, 4, 5)),
        Choice("num_warps", (4, 8, 16)),
        Choice("dtype", ("fp16", "fp32")),
    ),
    configs={
        "current": [
            _seed(128, 128, 8, 4),
            _seed(64, 128, 4, 3),
            _seed(128, 64, 4, 3),
            _seed(256, 256, 16, 5),
            _seed(256, 128, 8, 5),
        ],
        "proposed": [
            _seed(256, 256, 16, 5),
            _seed(256, 128, 8, 5),
            _seed(128, 256, 8, 5),
            _seed(128, 128, 8, 4),
            _seed(64, 128, 4, 3),
        ],
        "fp32": [_seed(64, 64, 4, 2, "fp32")],
    },
    targets=("sm_90", "sm_100", "sm_103", "sm_120", "sm_121"),
    requires=("triton.language.make_tensor_descriptor",),
    label="{BLOCK_M}x{BLOCK_N}-w{num_warps}-s{num_stages}-{dtype}",
)


@triton.jit
def copy(src_ptr, dst_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    src = tl.make_tensor_descriptor(src_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    dst = tl.make_tensor_descriptor(dst_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles = tl.cdiv(M, BLOCK_M) * tiles_n
    for tile in range(tl.program_id(0), tiles, tl.num_programs(0)):
        off_m = (tile // tiles_n) * BLOCK_M
        off_n = (tile % tiles_n) * BLOCK_N
        dst.store([off_m, off_n], src.load([off_m, off_n]))


@REPRO.compile
def compile_case(case):
    dtype = case["dtype"]
    signature = {"src_ptr": f"*{dtype}", "dst_ptr": f"*{dtype}", "M": "i32", "N": "i32"}
    return compile_kernel(
        copy, case, signature, {"BLOCK_M": case["BLOCK_M"], "BLOCK_N": case["BLOCK_N"]}
    )


@REPRO.launch
def launch_case(case):
    from suite.checks import ensure_allocator, poisoned, random_input, torch_dtype

    ensure_allocator()
    for m, n in ((1024, 1024), (1000, 1032)):
        src = random_input((m, n), case["dtype"])
        dst = poisoned((m, n), torch_dtype(case["dtype"]))
        tiles = triton.cdiv(m, case["BLOCK_M"]) * triton.cdiv(n, case["BLOCK_N"])
        copy[(min(tiles, 132),)](
            src, dst, m, n, BLOCK_M=case["BLOCK_M"], BLOCK_N=case["BLOCK_N"], **case.options
        )
        _exact(dst, src, f"copy {m}x{n}")


def _exact(dst, src, what):
    import torch

    from suite import WrongResult

    if not torch.equal(dst, src):
        wrong = int((dst != src).sum())
        raise WrongResult(f"{what}: {wrong} of {dst.numel()} elements differ (copy must be exact)")
