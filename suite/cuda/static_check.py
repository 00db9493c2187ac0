"""Check a TMA copy's documented limits before compiling or running it.

A TMA reproducer that crashes is only a bug report if what it asked for was legal. Two
kinds of mistakes make a TMA copy fail without any bug in the driver or the compiler:

* a descriptor ``cuTensorMapEncodeTiled`` must reject (``suite.tma_model`` restates the
  documented requirements, e.g. ``box-dim-range``: at most 256 elements per box dimension,
  and the rules a real driver was observed to enforce, e.g. ``rank1-null-strides``; give
  ``compute_capability`` to judge the architecture-dependent ones);
* a copy that does not fit the kernel around it: TMA always writes the whole box into
  shared memory and completes that many transaction bytes on the mbarrier, so the box must
  fit the shared buffer it lands in (``buffer-overflow``) and the barrier must expect exactly
  its bytes (``tx-bytes-mismatch``).

:func:`check_tma_copy` lists every such finding; :func:`enforce_tma_copy` raises
:class:`LimitViolation` for them, naming the first rule (descriptor rules first, then
``buffer-overflow``, then ``tx-bytes-mismatch``), so that the case is classified as a user
error with that rule rather than as a bug. Runs in the child: standard library only.
"""

from __future__ import annotations

from collections.abc import Sequence

from suite.cuda.footprint import box_bytes
from suite.cuda.model import TensorMapArgs, Violation
from suite.cuda.rules import check

__all__ = [
    "BUFFER_OVERFLOW",
    "BUFFER_SOURCE",
    "TX_BYTES_MISMATCH",
    "TX_SOURCE",
    "LimitViolation",
    "check_tma_copy",
    "enforce_tma_copy",
]

BUFFER_OVERFLOW = "buffer-overflow"
TX_BYTES_MISMATCH = "tx-bytes-mismatch"

_PTX = "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html"
BUFFER_SOURCE = (
    "PTX ISA, cp.async.bulk.tensor: a tile-mode load copies the whole bounding box (boxDim "
    "elements per dimension, out-of-bound elements filled) to the shared memory at dstMem; "
    "CUDA Driver API cuTensorMapEncodeTiled, boxDim: 'the number of elements to be traversed "
    f"along each of the tensorRank dimensions' ({_PTX})"
)
TX_SOURCE = (
    "PTX ISA, mbarrier: tx-count and phase completion (a phase completes when the pending "
    "arrival count and the tx-count both reach zero; expect-tx raises the tx-count by its "
    "operand) and cp.async.bulk.tensor .mbarrier::complete_tx::bytes (complete-tx with "
    f"completeCount equal to the bytes copied) ({_PTX})"
)


class LimitViolation(Exception):
    """A case breaks a documented limit: a user error, not a driver or compiler bug.

    ``rule`` is a stable kebab-case id (one of ``suite.tma_model``'s rule ids,
    ``buffer-overflow`` or ``tx-bytes-mismatch``), ``message`` says which values broke it and
    what would satisfy it, ``source`` names the documentation it comes from. ``findings``
    holds every broken rule of the case, the first being the one named.

    ``str()`` starts with ``"<rule>: <message>"`` on its first line, so the classifier can
    read the rule back from the child's error event (``type == "LimitViolation"``).
    """

    def __init__(
        self, rule: str, message: str, source: str, findings: Sequence[Violation] = ()
    ) -> None:
        super().__init__(rule, message, source)
        self.rule = rule
        self.message = message
        self.source = source
        self.findings: tuple[Violation, ...] = tuple(findings)

    def __str__(self) -> str:
        lines = [f"{self.rule}: {self.message}", f"source: {self.source}"]
        for other in self.findings[1:]:
            lines.append(f"also {other.rule}: {other.message}")
        return "\n".join(lines)

    @classmethod
    def from_findings(cls, findings: Sequence[Violation]) -> LimitViolation:
        if not findings:
            raise ValueError("a LimitViolation needs at least one finding")
        first = findings[0]
        return cls(first.rule, first.message, first.source, findings)


# Its public name, where reproducer files import it and the child's error event names it.
LimitViolation.__module__ = "suite.static_check"


def check_tma_copy(
    args: TensorMapArgs,
    *,
    buffer_bytes: int,
    tx_bytes: int,
    what: str = "the copy",
    compute_capability: int | None = None,
    driver_cuda_version: int | None = None,
) -> list[Violation]:
    """Every limit the copy of one box through ``args`` breaks.

    ``buffer_bytes`` is the shared memory the kernel set aside for one box (one stage of a
    pipeline); ``tx_bytes`` is what it passes to ``mbarrier.arrive.expect_tx`` for one box.
    Descriptor rules come first, in ``suite.tma_model.check`` order (documented rules, then
    observed ones); ``compute_capability`` and ``driver_cuda_version`` are passed to it.
    """
    verdict = check(
        args, compute_capability=compute_capability, driver_cuda_version=driver_cuda_version
    )
    found = list(verdict.violations)
    try:
        box = box_bytes(args)
    except ValueError:
        return found  # the descriptor's arrays do not even describe a box (array-length)
    dims = "x".join(str(d) for d in reversed(args.box_dim))
    if box > buffer_bytes:
        found.append(
            Violation(
                BUFFER_OVERFLOW,
                f"{what} writes a {dims} box of {box} bytes into a {buffer_bytes}-byte shared "
                f"buffer: {box - buffer_bytes} bytes land past it (on the next stage or the "
                f"barriers); give each stage {box} bytes or shrink the box",
                {"box_bytes": box, "buffer_bytes": buffer_bytes, "box_dim": list(args.box_dim)},
                BUFFER_SOURCE,
            )
        )
    if tx_bytes != box:
        effect = (
            "the barrier waits for bytes that never come (hang)"
            if tx_bytes > box
            else "the copy completes more bytes than the barrier expects (the phase can "
            "complete before the data lands, or the tx-count underflows)"
        )
        found.append(
            Violation(
                TX_BYTES_MISMATCH,
                f"the mbarrier expects {tx_bytes} transaction bytes but {what} of a {dims} box "
                f"completes {box}: {effect}; pass expect_tx = {box}",
                {"tx_bytes": tx_bytes, "box_bytes": box},
                TX_SOURCE,
            )
        )
    return found


def enforce_tma_copy(
    args: TensorMapArgs,
    *,
    buffer_bytes: int,
    tx_bytes: int,
    what: str = "the copy",
    compute_capability: int | None = None,
) -> int:
    """Raise :class:`LimitViolation` for what :func:`check_tma_copy` finds; else the box bytes."""
    found = check_tma_copy(
        args,
        buffer_bytes=buffer_bytes,
        tx_bytes=tx_bytes,
        what=what,
        compute_capability=compute_capability,
    )
    if found:
        raise LimitViolation.from_findings(found)
    return box_bytes(args)
