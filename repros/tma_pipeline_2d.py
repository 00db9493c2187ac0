"""The seeds' "CUDA 2D TMA pipeline bug": a user error, a box twice the size of its buffer.

``repros/cuda/tma_pipeline_2d.cu`` copies an fp32 matrix through a ring of shared-memory
stages: one producer thread issues ``cp.async.bulk.tensor.2d`` into stage ``i % stages`` and
arms the stage's mbarrier with the expected bytes; consumer warps wait on the barrier's phase,
write the tile out and release the stage. The seed's box was 128x64 fp32 (32 KB) while each
stage's buffer and the expected transaction bytes assumed 128x32 (16 KB): every copy writes
16 KB past its stage and the last stage's copy lands on the barriers (an illegal memory access
on an H200 too). Box 128x32 is right.

Boxes are written rows x columns; the descriptor takes them innermost first, so a 128x64 box
is ``boxDim = {64, 128}``. The static check (``suite.static_check``) runs before compiling
and raises ``LimitViolation`` (``buffer-overflow`` for the seed, with ``tx-bytes-mismatch``
among its findings); with ``static_check=False`` the program is built and, on a GPU, run.
"""

from pathlib import Path

from suite import Choice, Reproducer
from suite.nvcc import compile_checked, executable, run_cuda
from suite.static_check import check_tma_copy
from suite.tma_model import Swizzle, TensorMapArgs, TensorMapDataType

SOURCE = Path(__file__).resolve().parent / "cuda" / "tma_pipeline_2d.cu"
#: Matrices (rows, cols) the launch copies: whole tiles, and ragged edges on both sides.
SHAPES = ((1024, 1024), (1000, 1032))
MALLOC_ADDRESS = 256
SWIZZLES = {"none": Swizzle.NONE, "32B": Swizzle.B32, "64B": Swizzle.B64, "128B": Swizzle.B128}


def _config(rows, cols, buffer_elems, tx_bytes, stages=2, swizzle="none", static_check=True):
    return {
        "box_rows": rows,
        "box_cols": cols,
        "buffer_elems": buffer_elems,
        "tx_bytes": tx_bytes,
        "stages": stages,
        "swizzle": swizzle,
        "static_check": static_check,
    }


REPRO = Reproducer(
    id="cuda-tma-2d-pipeline",
    title="CUDA 2D TMA producer/consumer pipeline (seed: 128x64 box into 128x32 buffers)",
    family="cuda-tma",
    references=(
        "seed 000: ch10/tma_2d_pipeline_blackwell.cu, the 'CUDA 2D TMA pipeline bug'",
        "PTX ISA: cp.async.bulk.tensor writes the whole box; mbarrier tx-count",
    ),
    params=(
        Choice("box_rows", (16, 32, 64, 128, 256), "box rows (boxDim[1])"),
        Choice("box_cols", (8, 16, 32, 64, 128), "box columns, fp32 (boxDim[0])"),
        Choice("buffer_elems", (1024, 2048, 4096, 8192, 16384), "shared buffer per stage, fp32"),
        Choice("tx_bytes", (4096, 8192, 16384, 32768, 65536), "mbarrier expect_tx per stage"),
        Choice("stages", (1, 2, 3, 4), "shared-memory stages in the ring"),
        Choice("swizzle", tuple(SWIZZLES), "descriptor swizzle mode"),
        Choice("static_check", (True, False), "check documented limits before compiling"),
    ),
    configs={
        "seed": [_config(128, 64, 4096, 16384), _config(128, 64, 4096, 16384, static_check=False)],
        "corrected": [_config(128, 32, 4096, 16384)],
        # Each swizzle with a box whose rows span exactly its width, and a deeper ring.
        "swizzle": [
            _config(128, 8, 1024, 4096, swizzle="32B"),
            _config(128, 16, 2048, 8192, swizzle="64B"),
            _config(128, 32, 4096, 16384, swizzle="128B"),
            _config(128, 32, 4096, 16384, stages=4, swizzle="128B"),
        ],
    },
    default_sets=("seed", "corrected"),
    targets=("sm_90", "sm_100", "sm_120"),
    requires=("exe:nvcc",),
    label="{box_rows}x{box_cols}-buf{buffer_elems}-tx{tx_bytes}-s{stages}-sw{swizzle}"
    "-check{static_check}",
)


def descriptor(case, rows, cols):
    """The arguments the program passes to cuTensorMapEncodeTiled for a rows x cols matrix."""
    return TensorMapArgs.contiguous(
        TensorMapDataType.FLOAT32,
        (cols, rows),
        (case["box_cols"], case["box_rows"]),
        global_address=MALLOC_ADDRESS,
        swizzle=SWIZZLES[case["swizzle"]],
    )


def shared_bytes(case):
    """Dynamic shared memory the program requests: 1024 alignment slack, the stages (each
    rounded up to 1024 bytes), a full and an empty mbarrier per stage."""
    stage = (case["buffer_elems"] * 4 + 1023) // 1024 * 1024
    return 1024 + case["stages"] * (stage + 16)


def compute_capability(case):
    """The target's compute capability (90, 100, 120), for the architecture-dependent rules."""
    target = getattr(case, "target", None)
    return target.arch if target is not None else None


def defines(case):
    return {
        "BOX_ROWS": case["box_rows"],
        "BOX_COLS": case["box_cols"],
        "BUFFER_ELEMS": case["buffer_elems"],
        "TX_BYTES": case["tx_bytes"],
        "STAGES": case["stages"],
        "SWIZZLE": list(SWIZZLES).index(case["swizzle"]),
    }


def static_findings(case):
    """Every limit a launch would break, over the shapes it copies (deduplicated by rule)."""
    found = {}
    for rows, cols in SHAPES:
        for v in check_tma_copy(
            descriptor(case, rows, cols),
            buffer_bytes=case["buffer_elems"] * 4,
            tx_bytes=case["tx_bytes"],
            what="each stage's TMA copy",
            compute_capability=compute_capability(case),
        ):
            found.setdefault(v.rule, v)
    return list(found.values())


@REPRO.compile
def compile_case(case):
    return compile_checked(SOURCE, case, static_findings(case), defines(case), shared_bytes(case))


@REPRO.launch
def launch_case(case):
    program = executable(SOURCE, case, defines(case), shared_bytes=shared_bytes(case))
    for rows, cols in SHAPES:
        result = run_cuda(program, ["--rows", str(rows), "--cols", str(cols)])
        if result.get("shared_bytes") != shared_bytes(case):
            raise AssertionError(
                f"{SOURCE.name} requests {result.get('shared_bytes')} bytes of "
                f"shared memory, the reproducer assumed {shared_bytes(case)}"
            )
