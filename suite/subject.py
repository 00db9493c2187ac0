"""What report, replay, bisect and reduce are about: a finding, or one result of a run.

The one place that turns what a user names on the command line into a failure. A
reference takes one of these forms:

- a finding id: ``<repro>-<digest>``, a finding file's stem under ``<output>/findings``,
  or a unique part of one;
- a finding file path;
- ``RUN_DIR:CASE_ID``: one result of a run (``RUN_DIR`` a path, or a run's name
  under ``<output>/runs``; ``CASE_ID`` the case id or its folder name); a run folder, or
  its ``results.jsonl``, names its one failing case (``repro report`` also takes
  ``--case``).

:func:`subject_of` answers with a :class:`Subject`: the failing result, the environment it
ran in, the finding that knows it, and where it came from. A finding's result is rebuilt
from its record (:func:`result_from_finding`); :func:`rerun` runs the finding's minimal
config again through the engine, within the command's ``--timeout``, ``--memory-cap``
and ``--isolation`` (the one timeout every re-run obeys).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from suite.engine import (
    RESULTS,
    CaseResult,
    Environment,
    Found,
    Outcome,
    RunNotes,
    RunStore,
    Signature,
    case_folder_name,
    home_to_tilde,
    is_same_bug,
    runtime_failure,
    safe_name,
    site_and_facts,
)
from suite.errors import UsageError
from suite.failures.findings import DirectoryFindingsStore, Finding, read_finding
from suite.toolchain.venvs import folder_for


@dataclass
class Subject:
    """One failure a command is about, with everything known about it."""

    result: CaseResult
    environment: Environment
    report_id: str
    origin: dict[str, str]
    finding: Finding | None = None
    finding_record: dict[str, object] = field(default_factory=dict)  # the record as read
    notes: list[str] = field(default_factory=list)
    # The reproducer as it ran (from the carried source), once loaded again.
    found: Found | None = None
    # Where the subject's record lives: the finding's file, or the run folder.
    home: Path | None = None
    _loaded: bool = field(default=False, init=False, repr=False)

    @property
    def is_finding(self) -> bool:
        """Whether the subject was named as a finding (not as a run's result)."""
        return "finding" in self.origin

    @property
    def recorded_triton(self) -> str | None:
        """The Triton release the failure was recorded under, when known."""
        return self.environment.triton or None

    @property
    def triton_version(self) -> str:
        return self.recorded_triton or "unknown"

    @property
    def case_dir(self) -> Path | None:
        """The case's folder in its run (None for a finding)."""
        if self.home is None or self.is_finding:
            return None
        return RunStore(self.home).case_dir(self.result.case_id)

    def load_reproducer(self) -> Found | None:
        """The reproducer as it ran, loaded again from what was recorded (once); a note says
        where from, or why it cannot be. A finding's rebuilt result then gets its minimal
        config's full case id (its record names only the reproducer and the target)."""
        if not self._loaded:
            self._loaded = True
            self.found = _reproducer_of(self)
            if self.found is not None and self.is_finding:
                self.result = _with_full_case_id(self.result, self.found)
        return self.found


def _with_full_case_id(result: CaseResult, found: Found) -> CaseResult:
    """``result`` named by its reproducer's case id of its config (unchanged when the
    reproducer's label does not fit the config)."""
    from suite.engine import case_id

    try:
        full = case_id(found.repro, result.target, result.config)
    except (KeyError, IndexError, ValueError, TypeError, AttributeError):
        return result
    return replace(result, case_id=full)


def locate(ref: str, output: Path) -> Path:
    """A finding's file: ``ref`` itself, or by id (``<repro>-<digest>``, the file's stem)
    or a unique part of one, under ``<output>/findings``."""
    path = Path(ref)
    if path.is_file() or (os.path.lexists(path) and not path.is_dir()):
        return path  # a FIFO or a device too: read_finding refuses it, without waiting
    root = output / "findings"
    candidates = sorted(root.glob("*.json")) if root.is_dir() else []
    exact = [p for p in candidates if p.stem == ref or p.name == ref]
    matches = exact or [p for p in candidates if p.stem.startswith(ref) or ref in p.stem]
    if not matches:
        raise UsageError(
            f"no finding or run result {ref!r} (findings under {root}; a result is RUN_DIR:CASE_ID)"
        )
    if len(matches) > 1:
        names = ", ".join(p.stem for p in matches[:8])
        raise UsageError(f"{ref!r} matches {len(matches)} findings ({names}); name one")
    return matches[0]


def load_finding(ref: str, output: Path) -> tuple[Finding, dict[str, object], Path]:
    """A finding by file or id (:func:`locate`): the finding, its raw record, its file."""
    path = locate(ref, output)
    finding, record = read_finding(path)
    return finding, record, path


def _run_folder(text: str, output: Path) -> Path | None:
    """The run folder ``text`` names (a path, its ``results.jsonl``, or a run's name under
    ``<output>/runs``); None when it names none."""
    if not text:
        return None
    for candidate in (Path(text), output / "runs" / text):
        if candidate.name == RESULTS and candidate.is_file():
            return candidate.parent
        if candidate.is_dir() and (candidate / RESULTS).is_file():
            return candidate
    return None


def split_result_ref(ref: str, case: str | None, output: Path) -> tuple[Path, str | None] | None:
    """``RUN_DIR:CASE_ID``, or a run folder (``results.jsonl``) with ``case``; else None."""
    folder = _run_folder(ref, output)
    if folder is not None:
        return folder, case
    for index, char in enumerate(ref):
        if char == ":":
            folder = _run_folder(ref[:index], output)
            if folder is not None:
                return folder, ref[index + 1 :] or case
    return None


def load_result(folder: Path, case: str | None) -> tuple[CaseResult, Environment]:
    """The result of ``case`` in the run ``folder`` (its one failing case when None), and
    the environment the run recorded."""
    results = RunStore(folder).results()
    if case is None:
        failing = [r for r in results if r.outcome.is_failure]
        if len(failing) != 1:
            ids = ", ".join(r.case_id for r in failing[:6])
            raise UsageError(
                f"{folder} has {len(failing)} failing cases; name one as RUN_DIR:CASE_ID ({ids})"
            )
        return failing[0], environment_of(folder)
    for result in results:
        if case in (result.case_id, safe_name(result.case_id), case_folder_name(result.case_id)):
            return result, environment_of(folder)
    raise UsageError(f"no case {case!r} in {folder / RESULTS}")


def environment_of(folder: Path) -> Environment:
    """A run's ``environment.json`` (every field unknown when it is missing or unreadable)."""
    with contextlib.suppress(OSError, ValueError):
        return Environment.from_json(json.loads((folder / "environment.json").read_text()))
    return Environment()


def result_from_finding(finding: Finding) -> CaseResult:
    """The finding's minimal case as a result, with the site and facts the finding keeps."""
    site, facts = site_and_facts(finding.failure_detail())
    notes = RunNotes(sanitizer=finding.sanitizer or None, ptxas=finding.ptxas or None)
    return CaseResult(
        case_id=f"{finding.repro}[{finding.target}]",
        repro=finding.repro,
        target=finding.target,
        config=dict(finding.minimal_config),
        outcome=Outcome.from_label(finding.outcome),
        signature=Signature(finding.signature),
        message=finding.message,
        site=site,
        facts=facts,
        notes=notes,
        gpu=runtime_failure(finding.signature),
        source={k: v for k, v in (finding.source or {}).items() if k != "text"},
    )


def subject_of(ref: str, output: Path, case: str | None = None) -> Subject:
    """The :class:`Subject` named on the command line (nothing is run)."""
    split = split_result_ref(ref, case, output)
    if split is not None:
        folder, case_id = split
        result, environment = load_result(folder, case_id)
        subject = Subject(
            result,
            environment,
            safe_name(result.case_id),
            {"run": home_to_tilde(str(folder)), "case": result.case_id},
            home=folder,
        )
        if result.signature is not None:
            stored = DirectoryFindingsStore(output / "findings")
            subject.finding = stored.get(result.repro, result.signature.text)
            if subject.finding is not None:
                subject.finding_record = subject.finding.to_json()
        return subject
    if case:
        raise UsageError(f"--case goes with a run's results, and {ref!r} is not a run")
    finding, record, path = load_finding(ref, output)
    return Subject(
        result_from_finding(finding),
        finding.environment,
        path.stem,
        {"finding": home_to_tilde(str(path))},
        finding,
        record,
        home=path,
    )


def interpreter_for(environment: Environment, python: str | None) -> str | None:
    """The interpreter a case ran under: ``--python``, the recorded one, or the recorded
    release's cached venv (None when there is none; nothing is built)."""
    if python:
        return python
    recorded = environment.python_executable
    if recorded and Path(recorded).expanduser().exists():
        return str(Path(recorded).expanduser())
    version = environment.triton
    if version:
        cached = folder_for(version) / "bin" / "python"
        if cached.exists():
            return str(cached)
    return None


def _spec_source(result: CaseResult) -> dict[str, str] | None:
    """What a run made before sources were carried points at: the spec's source, as a
    record without a hash (the file is loaded as it is now)."""
    spec = result.artifacts.get("spec.json")
    if not spec or not Path(spec).is_file():
        return None
    try:
        source = json.loads(Path(spec).read_text()).get("source") or {}
    except (OSError, json.JSONDecodeError):
        return None
    return dict(source) if isinstance(source, dict) else None


def _reproducer_of(subject: Subject) -> Found | None:
    """Load the subject's reproducer from what was recorded; note where from, or why not."""
    from suite.engine import from_source, reproducer_for

    repro = subject.result.repro
    if subject.finding is not None and subject.is_finding:
        record, base = subject.finding.source, subject.home.parent if subject.home else None
    else:
        record, base = subject.result.source or _spec_source(subject.result), subject.home
    try:
        if record and "sha256" not in record and ("path" in record or "module" in record):
            found = [f for f in from_source(record, repro) if f.repro.id == repro]
            if not found:
                raise UsageError(f"{record} no longer defines {repro!r}")
            loaded, note = found[0], ""
        else:
            loaded, note = reproducer_for(repro, record, base)
    except UsageError as exc:
        subject.notes.append(f"the reproducer {repro!r} cannot be loaded again: {exc}")
        return None
    if note:
        subject.notes.append(note)
    return loaded


def rerun(subject: Subject, python: str, work: Path) -> CaseResult:
    """The finding's minimal config run again through the engine under ``python``, its
    outputs kept under ``work``; raises UsageError when the reproducer cannot be loaded
    or has no such case."""
    from suite.engine import Execution, expand_cases, gpu_arch, run_one

    finding = subject.finding
    if finding is None:
        raise UsageError(f"{subject.report_id} is a run's result, not a finding: nothing to re-run")
    found = subject.load_reproducer()
    if found is None:
        raise UsageError(f"the reproducer {finding.repro!r} cannot be loaded again")
    # A GPU of the target launches it: a runtime failure shows only there.
    specs = expand_cases(
        [found], [finding.target], configs=[dict(finding.minimal_config)], gpu_arch=gpu_arch()
    )
    if not specs:
        raise UsageError(f"{finding.repro} has no case for {finding.target}")
    result = run_one(specs[0], work / safe_name(specs[0].case_id), Execution(python=python))
    if result is None:  # stopped while it ran
        raise KeyboardInterrupt
    return result


class NotReproduced(UsageError):
    """A finding whose minimal config, run again, does not fail the same way (it passes, is
    a harness error, or fails another way): nothing of it may go upstream."""


def recapture(subject: Subject, python: str | None, work: Path) -> None:
    """Run a finding's minimal config again to capture its output and MLIR reproducer; the
    new result replaces the rebuilt one when it fails the same way, and
    :class:`NotReproduced` says when it does not. Notes say what came of it (a run's result
    is left as it is; a finding that could not be run again keeps its record)."""
    finding = subject.finding
    if finding is None or not subject.is_finding:
        return
    interpreter = interpreter_for(subject.environment, python)
    if interpreter is None:
        subject.notes.append(
            f"no interpreter with triton {subject.triton_version} to re-run the minimal config; "
            "no captured output or MLIR reproducer"
        )
        return
    if subject.load_reproducer() is None:
        subject.notes.append("the reproducer could not be loaded again: the case was not re-run")
        return
    try:
        again = rerun(subject, interpreter, work)
    except (UsageError, ValueError) as exc:
        subject.notes.append(f"the minimal config could not be run again: {exc}")
        return
    seen = again.signature.text if again.signature else again.outcome.label
    shown = home_to_tilde(interpreter)
    if again.shown is Outcome.COMPILED:
        # Compiled, not launched (no GPU of its target here): this run cannot show a launch's
        # failure either way, so the finding keeps its record and the report says where to
        # check it.
        subject.notes.append(
            f"re-ran the minimal config under {shown}: it compiled; only a launch shows the "
            "failure, so the finding's record stands"
        )
        return
    if seen == finding.signature or is_same_bug(seen, finding.signature):
        if finding.sanitizer and again.notes.sanitizer is None:
            # The finding's evidence stays.
            again = replace(again, notes=replace(again.notes, sanitizer=finding.sanitizer))
        if finding.ptxas and again.notes.ptxas is None:
            again = replace(again, notes=replace(again.notes, ptxas=finding.ptxas))
        subject.result = again
        subject.notes.append(f"re-ran the minimal config under {shown}: same signature")
    else:
        raise NotReproduced(
            f"{subject.report_id}: re-running its minimal config under {shown} gave {seen}, "
            f"not {finding.signature}: it does not reproduce, so no report was written"
        )
