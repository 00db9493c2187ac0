"""A baseline entry from a finding (``repro baseline accept``), and the checks of a baseline
file against the catalogue (``repro baseline check``, ``repro baseline show``).

An accepted entry says what the finding established: its reproducer and targets, a signature
pattern (the family and ``*`` when the family names the failing pass, so that a changed
message still matches; else the whole signature), its kind (the triage of its failure), the
configs it fails on (``where``: the parameters whose one-step change made it pass, as a range
when every passing value lies on one side of the failing ones, else the failing values), and
the bisected releases (``first_bad``, ``fixed_in`` from ``first_good``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NotRequired, TypedDict

from suite.engine import (
    Baseline,
    CaseResult,
    Signature,
    TriageKind,
    entry_problem,
    failure_of,
    family_of,
    named_pass,
    range_problem,
    safe_name,
    triage_of,
    write_entry,
)
from suite.errors import UsageError
from suite.failures.findings import Finding
from suite.files import load_structured, locked


def glob_escape(text: str) -> str:
    """``text`` as an fnmatch pattern that matches only itself."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def signature_pattern(signature: str) -> str:
    if named_pass(signature):
        return glob_escape(family_of(signature)) + "*"
    return glob_escape(signature)


class EntryFields(TypedDict):
    """A baseline entry as ``repro baseline accept`` writes it (docs/releases.md)."""

    id: str
    repro: str
    targets: list[str]
    signature: str
    kind: str
    first_bad: str
    fixed_in: str
    # parameter -> a range (">=64", "<=2"), its one failing value, or its failing values
    where: NotRequired[dict[str, object]]
    note: NotRequired[str]
    upstream: NotRequired[str]


def where_of(finding: Finding) -> dict[str, object]:
    """The configs the finding fails on, from the boundary and the configs seen failing."""
    failing = [entry.config for entry in finding.configs_seen_failing()]
    where: dict[str, object] = {}
    for param in sorted({step.param for step in finding.boundary}):
        steps = [s for s in finding.boundary if s.param == param]
        passing = sorted({s.value_to for s in steps if s.passed and not s.same_signature}, key=str)
        if not passing:
            continue  # no value of it made the failure go: it does not matter
        values = sorted({c[param] for c in failing if param in c}, key=str)
        numbers = all(isinstance(v, int) and not isinstance(v, bool) for v in values + passing)
        if numbers and max(passing) < min(values):
            where[param] = f">={min(values)}"
        elif numbers and min(passing) > max(values):
            where[param] = f"<={max(values)}"
        else:
            where[param] = values[0] if len(values) == 1 else values
    return where


def _failure(finding: Finding) -> CaseResult:
    return failure_of(finding.repro, finding.target, finding.minimal_config, finding.signature)


def entry_from(finding: Finding, baseline: Baseline, upstream: str = "") -> EntryFields:
    """The entry's fields: an update of the entry that already knows the failure (its id and
    what the finding does not say are kept), else a new entry."""
    failure = _failure(finding)
    known = next(
        (e for e in baseline.expectations if e.applies(failure) and e.matches(failure)), None
    )
    found = triage_of(failure)
    digest = Signature(finding.signature).digest
    fields: EntryFields = {
        "id": known.id if known else f"{safe_name(finding.repro)}-{digest}",
        "repro": finding.repro,
        "targets": sorted(set(known.targets if known else ()) | set(finding.targets)),
        "signature": known.signature if known else signature_pattern(finding.signature),
        "kind": known.kind if known else (found.label if found else TriageKind.COMPILER_BUG),
        "first_bad": finding.first_bad or (known.first_bad if known else ""),
        "fixed_in": finding.first_good or (known.fixed_in if known else ""),
    }
    if known is None:
        fields["where"] = where_of(finding)
        fields["note"] = (
            f"{finding.message} (accepted from a finding on triton {_release(finding)})"
        )
    if upstream:
        fields["upstream"] = upstream
    problem = range_problem(fields)
    if problem:
        raise UsageError(f"cannot accept {finding.repro} {finding.signature}: {problem}")
    return fields


def _release(finding: Finding) -> str:
    return finding.environment.triton or "unknown"


def accept(finding: Finding, path: Path, upstream: str = "") -> tuple[str, EntryFields]:
    """Write the finding's entry into the baseline at ``path``: ``added`` or ``updated``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Read, add and replace under the folder's lock: two accepts at once lose nothing.
    with locked(path.parent):
        baseline = Baseline.load(path) if path.exists() else Baseline([], str(path))
        fields = entry_from(finding, baseline, upstream)
        return write_entry(path, fields), fields


@dataclass(frozen=True)
class Problem:
    entry: str
    text: str

    def __str__(self) -> str:
        return f"{self.entry}: {self.text}"


def check(path: Path, catalogue: set[str]) -> list[Problem]:
    """Every problem of the baseline file, entry by entry: not a table, missing or unknown
    keys, a bad range, a duplicate id, a reproducer the catalogue does not hold."""
    data = load_structured(path, "baseline")
    entries = data.get("known", []) if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return [Problem(str(path), "expected [[known]] entries")]
    problems: list[Problem] = []
    seen: set[str] = set()
    for number, entry in enumerate(entries, 1):
        named = entry.get("id", "no id") if isinstance(entry, dict) else "not a table"
        name = f"entry {number} ({named})"
        if isinstance(entry, dict) and entry.get("id") in seen:
            problems.append(Problem(name, f"duplicate id {entry['id']!r}"))
        problem = entry_problem(entry)
        if problem:
            problems.append(Problem(name, problem))
            continue
        seen.add(entry["id"])
        if entry["repro"] not in catalogue:
            problems.append(Problem(name, f"unknown reproducer {entry['repro']!r}"))
    return problems
