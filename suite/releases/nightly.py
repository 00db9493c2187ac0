"""The nightly's memory: which findings it has told GitHub about, and what to tell it tonight.

The state (``state.json`` in a folder the nightly keeps between nights) holds one
:class:`Tracked` per finding: its reproducer, its newest signature, its last status
(``failing`` or ``fixed``), the release it was last seen on, the targets and cases it failed
on, and whether its GitHub issue is open. :func:`plan` compares the state with a new run and
gives one :class:`Action` per finding:

- ``open``: a failure no tracked finding explains (a new finding);
- ``comment``: its message changed, it spread to another target, it stopped failing while
  the baseline does not know the fix yet, or it fails again while its issue is still open;
- ``close``: it stopped failing and the baseline knows the fix (an entry whose ``fixed_in``
  is at or before tonight's release), or the baseline learnt the fix of a fixed finding;
- ``reopen``: a finding whose issue was closed fails again;
- ``none``: nothing changed (also when none of its cases ran tonight), or a new finding that
  the baseline knows with a link to its upstream issue (its issue is ``upstream``: the nightly
  never opens, reopens or closes one for it).

A finding is a bug of one reproducer: tonight's failures of one signature, joined with the
same bug under another message (:func:`suite.engine.same_bug.is_same_bug`). It is matched to
the tracked finding with the same signature, else the same bug, else the one that failed on
the same cases (a message whose pass changed is still the bug of those cases). User errors
(broken documented limits) and toolchain gaps are never findings.

The plan holds no time, no host and no path: the same state and run give the same plan, byte
for byte, and a merged sharded run gives the plan of the unsharded one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from suite.engine import (
    Baseline,
    CaseResult,
    Environment,
    Outcome,
    RunStore,
    Signature,
    TriageKind,
    Verdict,
    could_show,
    is_same_bug,
    safe_name,
)
from suite.errors import UsageError
from suite.files import locked, read_regular_text, write_atomic

SCHEMA = 1
STATE = "state.json"
FAILING, FIXED = "failing", "fixed"
OPEN, CLOSED = "open", "closed"
#: The issue of a known bug whose baseline entry links its upstream issue: that thread is the
#: bug's, so the nightly opens, reopens and closes none of its own.
UPSTREAM = "upstream"
#: The actions a plan holds; every one but ``none`` is a GitHub action.
ACTIONS = ("open", "comment", "close", "reopen", "none")
TITLE_CHARS = 200


@dataclass
class Tracked:
    """One finding as the nightly last saw it."""

    finding: str
    repro: str
    signature: str
    status: str
    release: str
    targets: list[str]
    cases: list[str]
    issue: str
    first_release: str

    @classmethod
    def from_json(cls, record: Mapping[str, object]) -> Tracked:
        """A tracked finding from the state file; TypeError when a field has the wrong type
        (a state file is input: a corrupt one must never be planned from, nor saved)."""
        names = {k: record[k] for k in cls.__dataclass_fields__}  # KeyError: a field missing

        def text(name: str) -> str:
            value = names[name]
            if not isinstance(value, str):
                raise TypeError(f"{name} of {names.get('finding')!r} is {type(value).__name__}")
            return value

        def texts(name: str) -> list[str]:
            value = names[name]
            if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                raise TypeError(f"{name} of {names.get('finding')!r} is {type(value).__name__}")
            return value

        return cls(
            finding=text("finding"),
            repro=text("repro"),
            signature=text("signature"),
            status=text("status"),
            release=text("release"),
            targets=texts("targets"),
            cases=texts("cases"),
            issue=text("issue"),
            first_release=text("first_release"),
        )


class StateJson(TypedDict):
    schema: int
    release: str
    findings: dict[str, dict[str, object]]  # finding id -> its Tracked fields


@dataclass
class State:
    release: str = ""
    findings: dict[str, Tracked] = field(default_factory=dict)
    schema: int = SCHEMA

    def to_json(self) -> StateJson:
        return {
            "schema": self.schema,
            "release": self.release,
            "findings": {k: asdict(v) for k, v in sorted(self.findings.items())},
        }

    @classmethod
    def from_json(cls, record: Any, where: str) -> State:
        try:
            if record.get("schema") != SCHEMA:
                raise ValueError(f"schema {record.get('schema')!r}, expected {SCHEMA}")
            findings = {k: Tracked.from_json(v) for k, v in record["findings"].items()}
            if not isinstance(record["release"], str):
                raise TypeError(f"release is {type(record['release']).__name__}")
            return cls(record["release"], findings)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"malformed nightly state {where}: {exc}") from None


def load_state(folder: Path) -> State:
    """The state kept in ``folder`` (an empty one on the first night)."""
    if os.path.lexists(folder) and not folder.is_dir():
        raise UsageError(f"--state {folder}: not a folder (the folder that keeps {STATE})")
    path = folder / STATE
    if not os.path.lexists(path):
        return State()
    try:
        record = json.loads(read_regular_text(path, "nightly state"))
    except ValueError as exc:
        raise UsageError(f"unreadable nightly state {path}: {exc}") from None
    return State.from_json(record, str(path))


def save_state(folder: Path, state: State) -> Path:
    if os.path.lexists(folder) and not folder.is_dir():
        raise UsageError(f"--state {folder}: not a folder (the folder that keeps {STATE})")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / STATE
    State.from_json(json.loads(dumps(state.to_json())), str(path))  # never save a corrupt one
    with locked(folder):
        write_atomic(path, dumps(state.to_json()))
    return path


@dataclass
class Action:
    """What to do on GitHub for one finding tonight."""

    action: str
    finding: str
    repro: str
    signature: str
    title: str
    release: str
    targets: list[str]
    # The case `repro report RUN:CASE --format github` renders the issue from ('' if none fails).
    case: str
    reasons: list[str]
    message: str


@dataclass
class Plan:
    release: str
    previous_release: str
    actions: list[Action]
    state: State

    @property
    def changes(self) -> list[Action]:
        """The actions that touch GitHub."""
        return [a for a in self.actions if a.action != "none"]

    def to_json(self) -> PlanJson:
        counts = {name: sum(a.action == name for a in self.actions) for name in ACTIONS}
        return {
            "schema": SCHEMA,
            "release": self.release,
            "previous_release": self.previous_release,
            "counts": counts,
            "changed": bool(self.changes),
            "actions": [asdict(a) for a in self.actions],
            "state": self.state.to_json(),
        }


class PlanJson(TypedDict):
    """``repro nightly``'s plan (docs/releases.md)."""

    schema: int
    release: str
    previous_release: str
    counts: dict[str, int]
    changed: bool
    actions: list[dict[str, object]]
    state: StateJson


def dumps(record: Mapping[str, object]) -> str:
    """The one JSON form of plans and states: sorted keys, so equal input gives equal bytes."""
    return json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def read_run(folder: Path) -> tuple[str, list[CaseResult]]:
    """A run folder's Triton release and its cases (sorted by id)."""
    if not (folder / "run.json").is_file() or not (folder / "environment.json").is_file():
        raise UsageError(f"not a finished run folder: {folder} (no run.json/environment.json)")
    try:
        release = Environment.from_json(
            json.loads((folder / "environment.json").read_text())
        ).triton
    except (OSError, ValueError) as exc:
        raise UsageError(f"unreadable environment.json in {folder}: {exc}") from None
    if release is None:
        raise UsageError(f"unreadable environment.json in {folder}: no triton release")
    results = sorted(RunStore(folder).results(), key=lambda r: r.case_id)
    if not results:
        raise UsageError(f"run {folder} holds no results")
    return release, results


def is_tracked(result: CaseResult, baseline: Baseline) -> bool:
    """Whether a failing case is a bug for the nightly: not a user error, not a toolchain gap.
    A known case has its entry's kind; any other its triage."""
    if not result.outcome.is_failure or result.signature is None:
        return False
    entry = baseline.entry(result.expectation) if result.verdict is Verdict.KNOWN else None
    kind = entry.kind if entry is not None else result.triage
    return not (kind.startswith(TriageKind.USER_ERROR) or kind == TriageKind.TOOLCHAIN_GAP)


@dataclass
class _Tonight:
    """Tonight's failing cases of one bug of one reproducer."""

    repro: str
    results: list[CaseResult]

    @property
    def signatures(self) -> list[str]:
        return sorted({str(r.signature) for r in self.results})

    @property
    def cases(self) -> list[str]:
        return sorted(r.case_id for r in self.results)

    @property
    def targets(self) -> list[str]:
        return sorted({r.target for r in self.results})

    def signature_for(self, tracked: Tracked | None) -> str:
        """The tracked signature when it is still seen, else the commonest (then the first)."""
        if tracked is not None and tracked.signature in self.signatures:
            return tracked.signature
        counts = {s: sum(str(r.signature) == s for r in self.results) for s in self.signatures}
        return min(self.signatures, key=lambda s: (-counts[s], s))

    def upstream_issue(self, baseline: Baseline) -> str:
        """The upstream issue of the baseline entry that knows these failures ('' when none
        does, or its entry links none)."""
        for result in self.results:
            entry = baseline.entry(result.expectation) if result.verdict is Verdict.KNOWN else None
            if entry is not None and entry.upstream_issue:
                return entry.upstream_issue
        return ""

    def explains(self, tracked: Tracked) -> int:
        """How well this is the tracked finding: 3 same signature, 2 same bug, 1 same cases."""
        if tracked.repro != self.repro:
            return 0
        if tracked.signature in self.signatures:
            return 3
        if any(is_same_bug(tracked.signature, s) for s in self.signatures):
            return 2
        return 1 if set(tracked.cases) & set(self.cases) else 0


def group(results: Iterable[CaseResult], baseline: Baseline) -> list[_Tonight]:
    """Tonight's tracked failures, one group per bug (same reproducer, same bug)."""
    groups: list[_Tonight] = []
    failing = sorted(
        (r for r in results if is_tracked(r, baseline)),
        key=lambda r: (r.repro, str(r.signature), r.case_id),
    )
    for result in failing:
        home = next(
            (
                g
                for g in groups
                if g.repro == result.repro
                and any(is_same_bug(s, str(result.signature)) for s in g.signatures)
            ),
            None,
        )
        if home is None:
            groups.append(_Tonight(result.repro, [result]))
        else:
            home.results.append(result)
    return groups


def _match(groups: list[_Tonight], state: State) -> dict[int, Tracked]:
    """Each group's tracked finding (by group index), best explanation first; each tracked
    finding explains one group at most."""
    pairs = sorted(
        (
            (-g.explains(t), index, t.finding)
            for index, g in enumerate(groups)
            for t in state.findings.values()
            if g.explains(t)
        ),
    )
    matched: dict[int, Tracked] = {}
    taken: set[str] = set()
    for _, index, finding in pairs:
        if index not in matched and finding not in taken:
            matched[index] = state.findings[finding]
            taken.add(finding)
    return matched


def plan(state: State, release: str, results: list[CaseResult], baseline: Baseline) -> Plan:
    """The actions that take GitHub from ``state`` to tonight's run, and the next state."""
    groups = group(results, baseline)
    matched = _match(groups, state)
    by_case = {r.case_id: r for r in results}
    actions: list[Action] = []
    findings: dict[str, Tracked] = {}

    for index, tonight in enumerate(groups):
        tracked = matched.get(index)
        signature = tonight.signature_for(tracked)
        first = next(r for r in tonight.results if str(r.signature) == signature)
        upstream = tonight.upstream_issue(baseline)
        issue = UPSTREAM if upstream else OPEN
        if tracked is None:
            finding = f"{safe_name(tonight.repro)}-{Signature(signature).digest}"
            action, reasons = "open", [f"new: fails on {', '.join(tonight.targets)}"]
            if upstream:
                action, reasons = "none", [f"known upstream: {upstream}"]
            targets, first_release = tonight.targets, release
        else:
            finding, reasons = tracked.finding, _changes(tracked, tonight, signature)
            targets = sorted(set(tracked.targets) | set(tonight.targets))
            first_release = tracked.first_release
            issue = UPSTREAM if tracked.issue == UPSTREAM else OPEN
            if tracked.status == FIXED:
                action = "reopen" if tracked.issue == CLOSED else "comment"
                reasons.insert(0, f"fails again (fixed on {tracked.release})")
            else:
                action = "comment" if reasons else "none"
        actions.append(
            Action(
                action,
                finding,
                tonight.repro,
                signature,
                title(tonight.repro, signature),
                release,
                tonight.targets,
                first.case_id,
                reasons,
                _message(release, reasons),
            )
        )
        findings[finding] = Tracked(
            finding,
            tonight.repro,
            signature,
            FAILING,
            release,
            targets,
            tonight.cases,
            issue,
            first_release,
        )

    seen = {t.finding for t in matched.values()}
    for tracked in sorted(state.findings.values(), key=lambda t: t.finding):
        if tracked.finding in seen:
            continue
        action, reasons, kept = _not_failing(tracked, release, by_case, baseline)
        findings[tracked.finding] = kept
        actions.append(
            Action(
                action,
                tracked.finding,
                tracked.repro,
                tracked.signature,
                title(tracked.repro, tracked.signature),
                release,
                [],
                "",
                reasons,
                _message(release, reasons),
            )
        )
    actions.sort(key=lambda a: a.finding)
    return Plan(release, state.release, actions, State(release, findings))


def _changes(tracked: Tracked, tonight: _Tonight, signature: str) -> list[str]:
    reasons = []
    if signature != tracked.signature:
        reasons.append(f"message changed: {tracked.signature} -> {signature}")
    spread = sorted(set(tonight.targets) - set(tracked.targets))
    if spread:
        reasons.append(f"spread to {', '.join(spread)}")
    return reasons


def _not_failing(
    tracked: Tracked, release: str, by_case: dict[str, CaseResult], baseline: Baseline
) -> tuple[str, list[str], Tracked]:
    """A tracked finding that no failure explains tonight: fixed (when one of its cases ran and
    passed, launched for a runtime failure), or unknown (none did: nothing changes)."""
    # A runtime failure's case that was only compiled passed nothing: it needs a GPU.
    passed = [
        by_case[c]
        for c in tracked.cases
        if c in by_case and _passed(by_case[c]) and could_show(tracked.signature, by_case[c])
    ]
    knows_fix = any(_fix_known(tracked, r, release, baseline) for r in passed)
    kept = Tracked(**asdict(tracked))
    if tracked.status == FIXED:
        if tracked.issue == OPEN and passed and knows_fix:
            kept.issue, kept.release = CLOSED, release
            return "close", [f"the baseline now knows the fix (fixed on {tracked.release})"], kept
        return "none", [], kept
    if not passed:
        return "none", [], kept
    kept.status, kept.release = FIXED, release
    if knows_fix and tracked.issue == UPSTREAM:
        return "none", [f"fixed in {release}; the baseline knows the fix"], kept
    if knows_fix:
        kept.issue = CLOSED
        return "close", [f"fixed in {release}; the baseline knows the fix"], kept
    return (
        "comment",
        [
            f"fixed in {release}: the baseline does not know the fix yet "
            "(repro bisect, then repro baseline accept, closes this issue)"
        ],
        kept,
    )


def _passed(result: CaseResult) -> bool:
    return result.outcome is Outcome.PASSED


def _fix_known(tracked: Tracked, result: CaseResult, release: str, baseline: Baseline) -> bool:
    """Whether an entry of the baseline says the finding's bug is fixed on ``release`` for
    this case."""
    shell = CaseResult(
        result.case_id,
        result.repro,
        result.target,
        result.config,
        Outcome.COMPILER_ERROR,
        Signature(tracked.signature),
        gpu=result.gpu,
    )
    return any(e.expects_fix(shell, release) and e.matches(shell) for e in baseline.expectations)


def title(repro: str, signature: str) -> str:
    """The issue title: the signature and the reproducer."""
    text = f"{signature} ({repro})"
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 3] + "..."


def _message(release: str, reasons: list[str]) -> str:
    return f"triton {release}: " + "; ".join(reasons) if reasons else ""


def summary_lines(plan_: Plan) -> list[str]:
    """What the step summary says: ``no change``, or one line per GitHub action."""
    if not plan_.changes:
        return [f"triton {plan_.release}: no change ({len(plan_.actions)} findings tracked)"]
    return [f"{a.action} {a.finding}: {a.message or a.title}" for a in plan_.changes]
