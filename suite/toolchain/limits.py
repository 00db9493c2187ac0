"""Per-target hardware limits, each with where the number comes from.

One table, read by the classifier (is this compile over a limit?) and by
triage. Numbers are per thread block (shared memory is the opt-in maximum,
``cudaDevAttrMaxSharedMemoryPerBlockOptin``, which is what Triton compares
``metadata.shared`` against when it loads a kernel). docs/limits.md keeps the
sources and what was measured on real hardware.
"""

from __future__ import annotations

from dataclasses import dataclass

PROGRAMMING_GUIDE = (
    "CUDA C++ Programming Guide, 'Compute Capabilities', table 'Technical "
    "Specifications per Compute Capability' (maximum shared memory per thread block)"
)
TMEM_SOURCE = (
    "PTX ISA, 'Tensor Memory' (tcgen05): 512 columns x 128 lanes of 32-bit cells per CTA; "
    "Triton reports metadata.tmem_size in columns"
)
REGISTER_SOURCE = "CUDA C++ Programming Guide, same table: at most 255 32-bit registers per thread"


@dataclass(frozen=True)
class TargetLimits:
    """The limits a compile for one target must respect."""

    name: str
    arch: int
    shared_bytes: int
    shared_source: str
    tmem_columns: int | None = None
    registers_per_thread: int = 255

    @property
    def ptxas_arch(self) -> str:
        """The name ptxas is given: the ``a`` suffix unlocks wgmma, tcgen05 and TMA features."""
        return f"sm_{self.arch}a" if self.arch >= 90 else f"sm_{self.arch}"


def _kib(n: int) -> int:
    return n * 1024


TARGETS: dict[str, TargetLimits] = {
    t.name: t
    for t in (
        TargetLimits("sm_80", 80, _kib(163), PROGRAMMING_GUIDE),
        TargetLimits("sm_86", 86, _kib(99), PROGRAMMING_GUIDE),
        TargetLimits("sm_89", 89, _kib(99), PROGRAMMING_GUIDE),
        TargetLimits(
            "sm_90",
            90,
            _kib(227),
            PROGRAMMING_GUIDE + "; 232448 bytes seen on an H200 (driver 580.159.04)",
        ),
        TargetLimits("sm_100", 100, _kib(227), PROGRAMMING_GUIDE, tmem_columns=512),
        TargetLimits("sm_103", 103, _kib(227), PROGRAMMING_GUIDE, tmem_columns=512),
        TargetLimits("sm_110", 110, _kib(227), PROGRAMMING_GUIDE, tmem_columns=512),
        TargetLimits("sm_120", 120, _kib(99), PROGRAMMING_GUIDE),
        TargetLimits("sm_121", 121, _kib(99), PROGRAMMING_GUIDE),
    )
}


class UnknownTarget(KeyError):
    pass


def limits_for(name: str) -> TargetLimits:
    """The limits of ``name`` (``sm_100`` or ``sm_100a``); raises :class:`UnknownTarget`."""
    key = name[:-1] if name.endswith(("a", "f")) else name
    try:
        return TARGETS[key]
    except KeyError:
        known = ", ".join(TARGETS)
        raise UnknownTarget(f"unknown target {name!r} (known: {known})") from None
