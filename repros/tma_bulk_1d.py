"""The seeds' "CUDA 1D TMA descriptor bug": a user error, a box of 1024 elements.

``repros/cuda/tma_bulk_1d.cu`` copies an fp32 vector through shared memory, one box per TMA
copy (``cp.async.bulk.tensor.1d`` completing on an mbarrier). The seed used a box of 1024
fp32 elements; ``cuTensorMapEncodeTiled`` allows at most 256 per box dimension and returns
CUDA_ERROR_INVALID_VALUE (on an H200: 1024, 512 and 257 fail, 256 succeeds).

Before compiling, the static check (``suite.static_check``) compares the descriptor with the
documented limits and the box with the shared buffer and the mbarrier's expected bytes; a
violation is raised as ``LimitViolation`` (a user error with the rule's name). With
``static_check=False`` the program is built and, on a GPU, run anyway, to show what the
driver does: the "seed" set holds the seed's config both ways.

Rank-1 encodes on an H200 (driver 580.159.04, CUDA 13.0): the first GPU run had every 1D
config, box 256 included, fail to encode with CUDA_ERROR_INVALID_VALUE. The program then
passed a null ``globalStrides`` (the reference says a rank-1 map reads no strides) and copied
1,000,003 elements, 4,000,012 bytes, not a multiple of 16. The differential run of 2026-11-22
settled it: the driver refuses every rank-1 map whose ``globalStrides`` is NULL, whatever the
length, and accepts a one-entry array, ragged byte sizes included. ``suite.tma_model`` now has
that as an observed rule, ``rank1-null-strides`` (``TensorMapArgs.global_strides_pointer``),
so with the static check on the "null" configs are user errors before anything is built. The
launch copies lengths whose byte size is a multiple of 16 but not of the box (2^20 and
1,000,004 elements) with a one-entry stride array (``strides="padded"``, as Triton, CCCL and
cuda.core pass one); the "rank1-probe" set keeps the ragged length 1,000,003 with each stride
form and the null strides with the aligned lengths (``docs/tma-disagreements.md``).
"""

from pathlib import Path

from suite import Choice, Reproducer
from suite.nvcc import compile_checked, executable, run_cuda
from suite.static_check import check_tma_copy
from suite.tma_model import TensorMapArgs, TensorMapDataType

SOURCE = Path(__file__).resolve().parent / "cuda" / "tma_bulk_1d.cu"
#: Vector lengths the launch copies: a whole number of boxes, and a ragged tail (1,000,004 is not
#: a multiple of any box but is 4,000,016 bytes, a multiple of 16).
LENGTHS = (1 << 20, 1_000_004)
#: A length whose byte size (4,000,012) is not a multiple of 16: suspected to be rejected by the
#: driver for a rank-1 map (not a documented rule). Only the "rank1-probe" set launches it.
RAGGED_LENGTH = 1_000_003
#: What each ``lengths`` value launches, in order (the probe runs its aligned neighbour first,
#: so a failure at 1,000,003 alone points at the byte size).
LENGTH_SETS = {"x16": LENGTHS, "ragged": (1_000_004, RAGGED_LENGTH)}
#: cudaMalloc returns 256-byte aligned memory; the model only checks the alignment.
MALLOC_ADDRESS = 256


def _config(box, buffer_elems, tx_bytes, static_check=True, lengths="x16", strides="padded"):
    return {
        "box": box,
        "buffer_elems": buffer_elems,
        "tx_bytes": tx_bytes,
        "static_check": static_check,
        "lengths": lengths,
        "strides": strides,
    }


REPRO = Reproducer(
    id="cuda-tma-1d",
    title="CUDA 1D TMA copy through shared memory (seed: box of 1024 fp32 elements)",
    family="cuda-tma",
    references=(
        "seed 000: ch7/async_prefetch_tma.cu, the 'CUDA 1D TMA descriptor bug'",
        "CUDA Driver API, cuTensorMapEncodeTiled, boxDim: each entry non-zero and at most 256",
    ),
    params=(
        Choice("box", (32, 64, 128, 256, 257, 512, 1024), "descriptor boxDim[0], elements"),
        Choice("buffer_elems", (32, 64, 128, 256, 512, 1024), "shared buffer, fp32 elements"),
        Choice("tx_bytes", (128, 256, 512, 1024, 1028, 2048, 4096), "mbarrier expect_tx bytes"),
        Choice("static_check", (True, False), "check documented limits before compiling"),
        Choice(
            "lengths",
            tuple(LENGTH_SETS),
            "x16: 2^20 and 1,000,004 elements (byte sizes multiples of 16); ragged: 1,000,004 "
            "then 1,000,003 (4,000,012 bytes, a GPU probe of an undocumented rank-1 rejection)",
        ),
        Choice(
            "strides",
            ("padded", "bytes", "null"),
            "globalStrides passed for the rank-1 map (0 entries are read): padded {n*4 rounded up "
            "to 16}, bytes {n*4} (Triton's form), null (nullptr)",
        ),
    ),
    configs={
        "seed": [_config(1024, 1024, 4096), _config(1024, 1024, 4096, False)],
        "corrected": [_config(256, 256, 1024)],
        # The driver's edge, checked off so that a GPU run shows the encode's own verdict.
        "boundary": [
            _config(256, 512, 1024, False),
            _config(257, 512, 1028, False),
            _config(512, 512, 2048, False),
        ],
        # The rank-1 probes (module docstring). With the static check on, the two "null"
        # configs are user errors (rank1-null-strides, observed on an H200); the others copy.
        "rank1-probe": [
            _config(256, 256, 1024, lengths="ragged", strides="padded"),
            _config(256, 256, 1024, lengths="ragged", strides="bytes"),
            _config(256, 256, 1024, lengths="ragged", strides="null"),
            _config(256, 256, 1024, lengths="x16", strides="bytes"),
            _config(256, 256, 1024, lengths="x16", strides="null"),
        ],
    },
    default_sets=("seed", "corrected"),
    targets=("sm_90", "sm_100", "sm_120"),
    requires=("exe:nvcc",),
    label="box{box}-buf{buffer_elems}-tx{tx_bytes}-check{static_check}-len{lengths}-gs{strides}",
)


def lengths_for(case):
    """The vector lengths the launch copies for this case, in order."""
    return LENGTH_SETS[case["lengths"]]


def descriptor(case, length):
    """The arguments the program passes to cuTensorMapEncodeTiled for a vector of ``length``.

    ``global_strides`` is empty: the documented rank-1 call reads no strides, so the value the
    program passes there (``case["strides"]``: padded or bytes) is not one the driver reads.
    Whether it passes a pointer at all is: ``strides="null"`` passes NULL, which the H200
    refuses (``global_strides_pointer="null"``, rule ``rank1-null-strides``).
    """
    return TensorMapArgs(
        dtype=TensorMapDataType.FLOAT32,
        rank=1,
        global_address=MALLOC_ADDRESS,
        global_dim=(length,),
        global_strides=(),
        box_dim=(case["box"],),
        element_strides=(1,),
        global_strides_pointer="null" if case["strides"] == "null" else "array",
    )


def compute_capability(case):
    """The target's compute capability (90, 100, 120), for the architecture-dependent rules."""
    target = getattr(case, "target", None)
    return target.arch if target is not None else None


def shared_bytes(case):
    """Dynamic shared memory the program requests: 128 alignment slack, buffer, one mbarrier."""
    return 128 + (case["buffer_elems"] * 4 + 7) // 8 * 8 + 8


def defines(case):
    return {"BOX": case["box"], "BUFFER_ELEMS": case["buffer_elems"], "TX_BYTES": case["tx_bytes"]}


def static_findings(case):
    """Every limit a launch would break, over the lengths it copies (deduplicated by rule)."""
    found = {}
    for length in lengths_for(case):
        for v in check_tma_copy(
            descriptor(case, length),
            buffer_bytes=case["buffer_elems"] * 4,
            tx_bytes=case["tx_bytes"],
            what="each TMA copy",
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
    for length in lengths_for(case):
        result = run_cuda(program, ["--n", str(length), "--strides", case["strides"]])
        if result.get("shared_bytes") != shared_bytes(case):
            raise AssertionError(
                f"{SOURCE.name} requests {result.get('shared_bytes')} bytes of "
                f"shared memory, the reproducer assumed {shared_bytes(case)}"
            )
