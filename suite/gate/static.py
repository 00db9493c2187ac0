"""Static checks, no GPU: every config x target compiled as an isolated case."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TypedDict

from suite.engine import (
    EVENTS,
    PTXAS_ERROR_LINE,
    CaseResult,
    Execution,
    Found,
    Outcome,
    RunStore,
    case_id,
    errors_in,
    expand_cases,
    read_lines,
    recorded_cases,
    triage_of,
)
from suite.gate.inputs import GateConfig
from suite.toolchain.limits import limits_for

# Triton's autotuner (runtime/autotuner.py, Autotuner._bench) catches these and times
# the config as infinitely slow: the config vanishes without a word.
SILENTLY_DROPPED = (Outcome.PTXAS_ERROR, Outcome.RESOURCE_LIMIT)


class StaticStatus(str, Enum):
    """What the static check of one config on one target found. A ``str`` so that gate.json
    and gate.md keep the word as written."""

    OK = "ok"
    WARN = "warn"  # it compiles and fits, but spills or sits at the register cap
    REJECT = "reject"
    UNCHECKED = "unchecked"  # skipped: an unmet requirement or a toolchain gap

    def __str__(self) -> str:
        return self.value

    @property
    def usable(self) -> bool:
        """Whether the config may be measured on a GPU."""
        return self in (StaticStatus.OK, StaticStatus.WARN)

    @property
    def shown(self) -> str:
        """The word the static table of gate.md shows."""
        return "ok (warning)" if self is StaticStatus.WARN else self.value


@dataclass
class StaticCheck:
    """One config on one target, without a GPU."""

    target: str
    outcome: str
    status: StaticStatus
    reason: str = ""
    summary: str = ""
    signature: str | None = None
    shared_bytes: int | None = None
    registers: int | None = None
    local_bytes: int | None = None
    dropped: bool = False
    triage: TriageFields | None = None
    case_id: str = ""


class TriageFields(TypedDict, total=False):
    """The triage of a failed static check, as the report shows it (empty: none)."""

    label: str
    rule: str | None
    explanation: str
    source: str


def triage_fields(result: CaseResult) -> TriageFields:
    """The triage of a failed static check, as the report shows it."""
    found = triage_of(result)
    if found is None:
        return {}
    return {
        "label": found.label,
        "rule": found.rule,
        "explanation": found.explanation,
        "source": found.source,
    }


def _ptxas_line(result: CaseResult) -> str | None:
    """The ptxas diagnostic (``(C7602) Insufficient registers ...``), read from the kept events."""
    errors = errors_in(read_lines(result.artifacts.get(EVENTS)))
    texts = [result.message, *(e.message for e in errors)]
    for text in texts:
        for line in text.splitlines():
            match = PTXAS_ERROR_LINE.search(line)
            if match and match.group(1).strip() and "aborted" not in match.group(1):
                return match.group(1).strip()
    return None


def judge_static(result: CaseResult) -> StaticCheck:
    """ok / warn (spills, register cap) / reject (with the reason) / unchecked (skipped)."""
    metrics = result.metrics
    check = StaticCheck(
        target=result.target,
        outcome=result.outcome.label,
        status=StaticStatus.OK,
        signature=result.signature.text if result.signature else None,
        shared_bytes=metrics.get("shared_bytes"),
        registers=metrics.get("registers"),
        local_bytes=metrics.get("local_bytes"),
        case_id=result.case_id,
    )
    if result.outcome is Outcome.PASSED:
        notes = []
        if check.local_bytes:
            notes.append(f"spills {check.local_bytes} bytes/thread to local memory")
        limit = limits_for(result.target).registers_per_thread
        if check.registers is not None and check.registers >= limit:
            notes.append(f"{check.registers} registers/thread, at the {limit} cap")
        check.status = StaticStatus.WARN if notes else StaticStatus.OK
        check.reason = check.summary = "; ".join(notes)
        return check
    if result.outcome is Outcome.SKIPPED:
        check.status = StaticStatus.UNCHECKED
        check.reason = check.summary = f"not checked: {result.message}"
        return check
    check.status = StaticStatus.REJECT
    check.dropped = result.outcome in SILENTLY_DROPPED
    if result.outcome is Outcome.PTXAS_ERROR:
        line = _ptxas_line(result)
        check.summary = f"ptxas {line.split('. ')[0]}" if line else result.message
    else:
        check.summary = result.message or result.outcome.label
    check.triage = triage_fields(result)
    if check.triage and check.triage.get("explanation"):
        explanation = str(check.triage["explanation"])
        config = ", ".join(f"{k}={v}" for k, v in result.config.items())
        explanation = explanation.removesuffix(f" ({config})")
        label = check.triage.get("label")
        check.reason = explanation + (f" [{label}]" if label else "")
    else:
        check.reason = check.summary + (f" [{check.signature}]" if check.signature else "")
    return check


def static_checks(
    found: Found,
    configs: Sequence[GateConfig],
    targets: Sequence[str],
    folder: Path,
    execution: Execution,
    on_result: Callable[[CaseResult], None] = lambda r: None,
) -> dict[tuple[str, str], StaticCheck]:
    """Every config x target as an isolated compile-only case; ``(key, target) -> check``."""
    folder.mkdir(parents=True, exist_ok=True)
    specs = expand_cases([found], targets, configs=[c.config for c in configs])
    keys = {case_id(found.repro, t, c.config): c.key for c in configs for t in targets}

    def seen(result: CaseResult) -> CaseResult:
        on_result(result)
        return result

    results = recorded_cases(specs, RunStore(folder), execution, seen)
    return {(keys[r.case_id], r.target): judge_static(r) for r in results}
