"""What a failing pass said: its diagnostic, parsed from MLIR's stderr."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from suite.engine import Work, normalize
from suite.errors import UsageError

SCHEMA = 1
EXIT_FOUND = 0
EXIT_NOT_REPRODUCED = 1
EXIT_USAGE = 2
REPRODUCER_PREFIX = "mlir-reproducer"
STAGE_ORDER = ("make_ttir", "make_ttgir", "make_llir", "make_ptx", "make_cubin", "make_amdgcn")
PASS_FAILURE = re.compile(r"Pipeline failed while executing \[?`([^`]+)`")
SIGNAL_CAUGHT = "A signal was caught while processing the MLIR module"
GENERIC_ERRORS = (
    "Failures have been detected while processing an MLIR pass pipeline",
    SIGNAL_CAUGHT,
)
DIAGNOSTIC = re.compile(
    r"^(?:(?P<file>.*?):(?P<line>\d+):(?P<col>\d+)|loc\((?P<loc>.*)\)|(?P<bare>))"
    r":?\s*(?P<sev>error|warning|note|remark): (?P<msg>.*)$"
)
PASS_TIMEOUT_S = Work.COMPILE.value
PROBE_RESTARTS = 8


class ReplayError(UsageError):
    """Replay cannot go on: one line, exit 2 (an unmapped pass, an IR from another release)."""


@dataclass(frozen=True)
class DiagnosticLine:
    """One ``error:`` or ``note:`` line: where (file or location, and line) and what."""

    file: str
    line: int | None
    message: str


@dataclass
class Diagnostic:
    """What MLIR said when a pass failed: its error and note lines, and the pass it named."""

    errors: list[DiagnosticLine] = field(default_factory=list)
    notes: list[DiagnosticLine] = field(default_factory=list)
    pass_name: str | None = None
    crashed: bool = False
    signal: str | None = None

    @property
    def specific(self) -> list[DiagnosticLine]:
        """The errors the pass itself emitted (not MLIR's generic pipeline-failure lines)."""
        return [e for e in self.errors if not e.message.startswith(GENERIC_ERRORS)]

    @property
    def key(self) -> tuple[Any, ...]:
        """The interestingness key: same pass, same way of failing, same messages."""
        messages = sorted({normalize(e.message) for e in self.specific})
        return (self.pass_name, self.crashed, self.signal, tuple(messages))

    def lines(self) -> list[str]:
        shown = [f"error: {e.message}" for e in self.errors]
        shown += [f"note: {n.message}" for n in self.notes]
        if self.signal:
            shown.append(f"killed by {self.signal}")
        return shown

    def to_json(self) -> dict[str, object]:
        return {
            "pass_name": self.pass_name,
            "crashed": self.crashed,
            "signal": self.signal,
            "errors": [asdict(e) for e in self.errors],
            "notes": [asdict(n) for n in self.notes],
            "lines": self.lines(),
        }


def parse_diagnostic(stderr: str, signal_name: str | None = None) -> Diagnostic:
    diagnostic = Diagnostic(signal=signal_name, crashed=signal_name is not None)
    for raw in stderr.splitlines():
        match = DIAGNOSTIC.match(raw.strip())
        if not match or match.group("sev") not in ("error", "note"):
            continue
        where = match.group("file") or match.group("loc") or ""
        entry = DiagnosticLine(
            file=where,
            line=int(match.group("line")) if match.group("line") else None,
            message=match.group("msg").strip(),
        )
        if match.group("sev") == "error":
            diagnostic.errors.append(entry)
        else:
            diagnostic.notes.append(entry)
        if SIGNAL_CAUGHT in entry.message:
            diagnostic.crashed = True
    found = PASS_FAILURE.search(stderr)
    diagnostic.pass_name = found.group(1) if found else None
    return diagnostic
