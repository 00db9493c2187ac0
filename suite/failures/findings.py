"""Findings that outlast a run: one record per failure signature of a reproducer.

``repro explore`` turns each distinct signature it meets into a :class:`Finding`:
the smallest config it could shrink the failure to, the one-step neighbours
around that config (the boundary table), every config seen failing the same
way, and the environment it ran on. A record is keyed by reproducer and
signature, because a minimal config only means something inside one
reproducer's parameter space.

The store is an interface so that the search does not care where records live;
the directory backend writes one JSON file per record under
``<output>/findings/`` and keeps Hypothesis's example database beside them, in
``<output>/findings/hypothesis-db``, so that a re-run replays what an earlier
one found before it searches anew.
"""

from __future__ import annotations

import json
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from suite.api import Config
from suite.engine import (
    CaseResult,
    Environment,
    Outcome,
    Signature,
    family_of,
    is_same_bug,
    message_of,
    runtime_failure,
    safe_name,
)
from suite.errors import UsageError
from suite.files import locked, own_folder, read_regular, write_replacing

if TYPE_CHECKING:
    from hypothesis.database import ExampleDatabase

SCHEMA = 1
BUG = "bug"
LIMIT = "limit"
INSUFFICIENT_REGISTERS = "C7602"


def now_utc() -> str:
    """This moment as a finding records it: UTC, ISO 8601, to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def kind_of(result: CaseResult) -> str:
    """``limit`` when a documented hardware limit explains the failure, else ``bug``.

    Running out of shared memory or tensor memory, or ptxas's C7602
    ('insufficient registers'), is the config asking for more than the target
    has: worth knowing where that boundary lies, but not a compiler bug. So is a limit
    Triton's own Python names when it refuses the case (``user-error:triton-rejects``).
    """
    signature = result.signature.text if result.signature else ""
    if result.outcome is Outcome.RESOURCE_LIMIT or result.refused:
        return LIMIT
    if result.outcome is Outcome.PTXAS_ERROR and INSUFFICIENT_REGISTERS in signature:
        return LIMIT
    return BUG


@dataclass(frozen=True)
class BoundaryStep:
    """One parameter moved away from the minimal config (the others kept), and what that gave.

    ``same_signature`` is the interestingness predicate's answer for the step:
    whether the neighbour still fails with the finding's signature.
    """

    param: str
    direction: str
    value_from: Any
    value_to: Any
    config: Config
    outcome: str
    signature: str | None
    same_signature: bool

    @property
    def passed(self) -> bool:
        return self.outcome == Outcome.PASSED.label


@dataclass(frozen=True)
class SeenConfig:
    """A config seen failing (or passing) on a target: ``{"target", "config"}`` in a record."""

    target: str
    config: Config

    @classmethod
    def from_json(cls, entry: object) -> SeenConfig:
        if not isinstance(entry, dict):
            raise TypeError(f"a config entry is a {type(entry).__name__}, not a mapping")
        target, config = entry["target"], entry["config"]
        if not isinstance(target, str) or not isinstance(config, dict):
            raise TypeError("a config entry's target is not a string or its config a mapping")
        return cls(target, config)


class ReducedRecord(TypedDict):
    """``repro reduce``'s result in a finding: the reduced file, the original, their sizes."""

    path: str
    original: str
    lines: int
    tokens: int
    original_lines: int
    original_tokens: int
    complete: bool
    # The config change each kept kernel also launched with, without failing (a runtime
    # finding's passing neighbour), and whether its values were checked there. A record
    # written before they existed lacks them: read them with ``get``.
    passing_change: dict[str, Any] | None
    values_checked: bool
    # ``reduced.py``, the reduced kernel as a standalone program (None: not written).
    standalone: str | None


@dataclass
class Finding:
    """Everything known about one signature of one reproducer.

    ``target`` is where the config was shrunk and the boundary measured;
    ``targets`` lists every target on which the signature was seen.
    ``failing_configs`` and ``passing_neighbours`` hold :class:`SeenConfig`
    (``{"target", "config"}`` in the record). ``seed`` is the Hypothesis seed of the last
    search that saw the finding (``None`` for a derandomized search); ``first_seen`` and
    ``last_seen`` are UTC timestamps in ISO 8601.
    """

    repro: str
    signature: str
    kind: str
    outcome: str
    message: str
    target: str
    targets: list[str]
    minimal_config: Config
    failing_configs: list[SeenConfig]
    passing_neighbours: list[SeenConfig]
    boundary: list[BoundaryStep]
    environment: Environment  # where it ran
    seed: int | None
    first_seen: str
    last_seen: str
    schema: int = SCHEMA
    first_bad: str | None = None
    first_good: str | None = None
    # The last bisection (suite.releases.bisect.Bisection.to_json), kept as recorded.
    bisect: dict[str, object] | None = None
    # The reproducer's source as it ran (suite.engine.sources.CarriedSource, with its text).
    source: dict[str, str] | None = None
    # The signature seen on each Triton release ("3.5.0": "compiler-error:...").
    signatures: dict[str, str] = field(default_factory=dict)
    # When the search met it: the evaluation numbers of its first failure and of the
    # minimal config.
    evaluations: dict[str, int] = field(default_factory=dict)
    # `repro reduce`'s result: the reduced reproducer file, the original, their sizes.
    reduced: ReducedRecord | None = None
    # The failing launch rerun under compute-sanitizer (suite.engine.sanitizer.Evidence).
    sanitizer: dict[str, object] | None = None
    # The failing launch relaunched with other ptxas builds (suite.engine.ptxas.Evidence).
    ptxas: dict[str, object] | None = None
    # The minimal case's failure site and facts as results.jsonl writes them
    # (CaseResult.failure_detail); None in a record written before findings kept them.
    detail: dict[str, object] | None = None

    @classmethod
    def of(
        cls,
        result: CaseResult,
        signature: str,
        environment: Environment,
        *,
        failing: list[SeenConfig],
        boundary: list[BoundaryStep] | None = None,
        seed: int | None = None,
        source: dict[str, str] | None = None,
        evaluations: dict[str, int] | None = None,
        sanitizer: dict[str, object] | None = None,
        ptxas: dict[str, object] | None = None,
        seen_at: str = "",
    ) -> Finding:
        """The finding of ``result`` (its minimal case) failing with ``signature``, first
        seen now (``seen_at``, else this moment): the one way a finding is made, by explore
        and by capture. ``failing`` holds every config seen failing that way (its targets are
        the finding's); a step of ``boundary`` that passed is a passing neighbour."""
        seen_at = seen_at or now_utc()
        steps = list(boundary or [])
        return cls(
            repro=result.repro,
            signature=signature,
            kind=kind_of(result),
            outcome=result.outcome.label,
            message=result.message,
            target=result.target,
            targets=sorted({entry.target for entry in failing}),
            minimal_config=dict(result.config),
            failing_configs=list(failing),
            passing_neighbours=[
                SeenConfig(result.target, step.config) for step in steps if step.passed
            ],
            boundary=steps,
            environment=environment,
            seed=seed,
            first_seen=seen_at,
            last_seen=seen_at,
            source=source,
            signatures={environment.triton or "unknown": signature},
            evaluations=dict(evaluations or {}),
            sanitizer=sanitizer,
            ptxas=ptxas,
            detail=result.failure_detail(),
        )

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def message_changes(self) -> list[tuple[str, str]]:
        """``(release, signature)`` for each release, oldest first, whose signature differs
        from the release before it (the same bug, its message changed)."""
        return [(r, seen) for r, seen, _ in _changes(self.signatures.items())]

    def message_note(self) -> str:
        """``message changed in 3.7.1: <key>`` for each change ('' when there is none); see
        :func:`change_note`."""
        return change_note(self.signatures.items())

    def failure_detail(self) -> dict[str, object]:
        """The minimal case's failure site and facts (``CaseResult.failure_detail``): as
        recorded, or, for a record written before findings kept them, what its signature and
        message name (the stage and pass, the ptxas code, the resource and its numbers, the
        rule, the signal)."""
        if self.detail is not None:
            return self.detail
        outcome = Outcome.from_label(self.outcome)
        parts = Signature(self.signature).family.split(":")
        first, second = [*parts, "", ""][1:3]
        detail: dict[str, object] = {
            "phase": "launch" if runtime_failure(self.signature) else "compile"
        }
        if len(parts) < 2:
            return detail
        if outcome is Outcome.COMPILER_ERROR:
            detail["stage"] = first
            if re.fullmatch(r"[A-Za-z][\w.-]*", second):
                detail["pass"] = second
        elif outcome is Outcome.PTXAS_ERROR and re.fullmatch(r"C\d{4,5}", first):
            detail["ptxas_code"] = first
        elif outcome is Outcome.RESOURCE_LIMIT:
            detail["resource"] = first
            numbers = re.findall(r"(\d+) needed, the \S+ limit is (\d+)", self.message)
            if numbers:
                detail["used"], detail["limit"] = int(numbers[0][0]), int(numbers[0][1])
        elif outcome is Outcome.USER_ERROR:
            detail["rule"] = first
        if outcome is Outcome.CRASH:
            detail["signal"] = first
        return detail

    def configs_seen_failing(self, limit: int = 0) -> list[SeenConfig]:
        """The minimal config first, then every config seen failing (at most ``limit`` in all
        when given)."""
        entries = [SeenConfig(self.target, dict(self.minimal_config))]
        for entry in self.failing_configs:
            if entry not in entries:
                entries.append(entry)
        return entries[:limit] if limit else entries

    @classmethod
    def from_json(cls, record: object) -> Finding:
        """A finding from its JSON record; TypeError (or KeyError) when the record is not one
        (a finding file is input: any field may have any type)."""
        if not isinstance(record, dict):
            raise TypeError(f"a {type(record).__name__}, not a mapping")
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in record.items() if k in known}
        for name, kinds in _FIELD_TYPES.items():
            if name in values and not isinstance(values[name], kinds):
                raise TypeError(f"{name} is {type(values[name]).__name__}")
        steps = record.get("boundary", ())
        if not all(isinstance(step, dict) for step in steps):
            raise TypeError("boundary holds a step that is not a mapping")
        values["boundary"] = [BoundaryStep(**step) for step in steps]
        if "environment" in values:
            try:
                values["environment"] = Environment.from_json(values["environment"])
            except ValueError as exc:
                raise TypeError(str(exc)) from None
        for name in ("failing_configs", "passing_neighbours"):
            if name in values:
                values[name] = [SeenConfig.from_json(entry) for entry in values[name]]
        return cls(**values)


# The type each field of a finding record must have (None too where its default is None).
_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {
    "repro": str,
    "signature": str,
    "kind": str,
    "outcome": str,
    "message": str,
    "target": str,
    "targets": list,
    "minimal_config": dict,
    "failing_configs": list,
    "passing_neighbours": list,
    "boundary": list,
    "environment": dict,
    "seed": (int, type(None)),
    "first_seen": str,
    "last_seen": str,
    "schema": int,
    "first_bad": (str, type(None)),
    "first_good": (str, type(None)),
    "bisect": (dict, type(None)),
    "source": (dict, type(None)),
    "signatures": dict,
    "evaluations": dict,
    "reduced": (dict, type(None)),
    "ptxas": (dict, type(None)),
    "detail": (dict, type(None)),
}


def _changes(seen: Iterable[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """``(release, signature, previous signature)`` where the signature changed, oldest
    release first."""
    changes, previous = [], None
    for release, signature in sorted(seen, key=lambda pair: _version_key(pair[0])):
        if previous is not None and signature != previous:
            changes.append((release, signature, previous))
        previous = signature
    return changes


def change_note(seen: Iterable[tuple[str, str]]) -> str:
    """What changed in one bug's signature across releases, given ``(release, signature)``
    pairs of that one bug: ``message changed in 3.7.1: <key>`` for each change, and
    ``reported as <family> from 3.3.0 (same message)`` where only the family changed (a
    crash that a later release reports as a compiler error). '' when nothing changed.
    Used by ``repro findings``, the report and the dashboard alike."""
    notes = []
    for release, signature, previous in _changes(seen):
        key = message_of(signature)
        if key and key == message_of(previous):
            notes.append(f"reported as {family_of(signature)} from {release} (same message)")
        else:
            notes.append(f"message changed in {release}: {key or family_of(signature)}")
    return "; ".join(notes)


def _version_key(release: str) -> tuple[int, ...]:
    numbers = [int(n) for n in re.findall(r"\d+", release.split("+")[0])[:3]]
    return tuple(numbers)


def related(finding: Finding, repro: str, signature: str, configs: list[SeenConfig]) -> bool:
    """Whether a failure of ``repro`` with ``signature`` on ``configs`` is ``finding`` with
    another message: the same bug (``suite.engine.same_bug.is_same_bug``) on a config the
    finding has seen failing."""
    if finding.repro != repro or not is_same_bug(finding.signature, signature):
        return False
    seen = finding.configs_seen_failing()
    return any(entry in seen for entry in configs)


def merge(previous: Finding | None, current: Finding) -> Finding:
    """The record after a run: this run's minimal config and boundary, all history kept.

    A re-run starts its shrink from the stored minimal config, so its result
    is never larger when the failure still reproduces there; the dates, the
    configs seen failing and the targets accumulate.
    """
    if previous is None:
        return current
    seen: list[SeenConfig] = []
    for entry in previous.failing_configs + current.failing_configs:
        if entry not in seen:
            seen.append(entry)
    current.first_seen = min(previous.first_seen, current.first_seen)
    current.first_bad = current.first_bad or previous.first_bad
    current.first_good = current.first_good or previous.first_good
    current.bisect = current.bisect or previous.bisect
    current.failing_configs = seen
    current.targets = sorted(set(previous.targets) | set(current.targets))
    current.signatures = {**previous.signatures, **current.signatures}
    current.source = current.source or previous.source
    current.reduced = current.reduced or previous.reduced
    if previous.signature != current.signature:
        # The same bug with a changed message: it keeps its record (and its id).
        current.signature, current.kind = previous.signature, previous.kind
        current.outcome, current.message = previous.outcome, previous.message
        current.minimal_config, current.target = previous.minimal_config, previous.target
        current.boundary = previous.boundary
        current.passing_neighbours = previous.passing_neighbours
        current.detail = previous.detail
    return current


def read_finding(path: Path) -> tuple[Finding, dict[str, object]]:
    """The finding in ``path`` and its raw record. Anything that is not one (not a regular
    file, not JSON, the wrong shape) is a one-line UsageError naming it, never waited on."""
    data = read_regular(path, "finding", limit=64 << 20)
    try:
        record = json.loads(data.decode("utf-8"))
        return Finding.from_json(record), record
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # not UTF-8, too
        raise UsageError(f"not a finding record: {path}: {type(exc).__name__}: {exc}") from None


class FindingsStore(ABC):
    """Where findings live. The search talks to this interface only."""

    @abstractmethod
    def get(self, repro: str, signature: str) -> Finding | None:
        """The stored record of ``signature`` in ``repro``, if any."""

    @abstractmethod
    def put(self, finding: Finding) -> None:
        """Write ``finding``, replacing the record of the same reproducer and signature."""

    @abstractmethod
    def all(self) -> list[Finding]:
        """Every stored finding, sorted by reproducer, kind and signature."""

    @abstractmethod
    def example_database(self) -> ExampleDatabase:
        """The Hypothesis example database kept with the findings."""

    def record(self, finding: Finding) -> Finding:
        """Merge ``finding`` into what is stored and write the result.

        A finding stored under another signature of the same bug, seen failing on one of
        this finding's configs, is this finding with its message changed: the two merge
        under the stored one.
        """
        previous = self.get(finding.repro, finding.signature)
        if previous is None:
            configs = finding.configs_seen_failing()
            previous = next(
                (f for f in self.all() if related(f, finding.repro, finding.signature, configs)),
                None,
            )
        merged = merge(previous, finding)
        self.put(merged)
        return merged


class DirectoryFindingsStore(FindingsStore):
    """One ``<repro>-<digest>.json`` per finding in a folder, written atomically, under a
    lock on the folder while a record is read, merged and replaced (two explores at once
    lose nothing)."""

    DATABASE = "hypothesis-db"

    def __init__(self, root: Path) -> None:
        self.root = root
        # The files :meth:`all` read, by (repro, signature): a finding saved under another
        # name (a copy, a checked-in one) is handed on by the file that holds it.
        self._read: dict[tuple[str, str], Path] = {}
        self._holding = 0

    @contextmanager
    def _held(self) -> Iterator[None]:
        """The folder's lock, taken once however deeply held (``record`` calls ``put``)."""
        if not self._holding:
            own_folder(self.root.parent, self.root.name)
        with locked(self.root) if not self._holding else nullcontext():
            self._holding += 1
            try:
                yield
            finally:
                self._holding -= 1

    def _path(self, repro: str, signature: str) -> Path:
        return self.root / f"{safe_name(repro)}-{Signature(signature).digest}.json"

    def path_of(self, finding: Finding) -> Path:
        """The file of ``finding``; its stem is the finding's id (what
        :func:`suite.subject.locate` takes)."""
        key = (finding.repro, finding.signature)
        return self._read.get(key) or self._path(*key)

    def get(self, repro: str, signature: str) -> Finding | None:
        path = self._path(repro, signature)
        if not os.path.lexists(path):
            return None
        return read_finding(path)[0]

    def put(self, finding: Finding) -> None:
        with self._held():
            path = self._path(finding.repro, finding.signature)
            write_replacing(path, json.dumps(finding.to_json(), indent=2, default=str) + "\n")

    def record(self, finding: Finding) -> Finding:
        with self._held():
            return super().record(finding)

    def all(self) -> list[Finding]:
        if not os.path.lexists(self.root):
            return []
        if not self.root.is_dir():
            raise UsageError(f"{self.root} is not a folder")
        found = []
        for path in sorted(self.root.glob("*.json")):
            finding = read_finding(path)[0]
            self._read.setdefault((finding.repro, finding.signature), path)
            found.append(finding)
        return sorted(found, key=lambda f: (f.repro, f.kind, f.signature))

    def example_database(self) -> ExampleDatabase:
        # Hypothesis takes a quarter of a second to import: only explore pays for it.
        from hypothesis.database import DirectoryBasedExampleDatabase

        return DirectoryBasedExampleDatabase(str(own_folder(self.root, self.DATABASE)))
