"""The case a replay works on: a failing :class:`~suite.subject.Subject`, the MLIR
reproducer files it left, and the interpreter whose Triton replays them."""

from __future__ import annotations

import contextlib
import importlib.metadata
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from suite.engine import CaseResult
from suite.errors import UsageError
from suite.replay.diagnostic import REPRODUCER_PREFIX, STAGE_ORDER, ReplayError
from suite.subject import Subject, interpreter_for, rerun


@dataclass
class ReplayCase:
    """A failing case and the MLIR reproducer files it left."""

    result: CaseResult
    report_id: str
    origin: dict[str, str]
    reproducers: list[Path]
    python: str
    recorded_triton: str | None
    notes: list[str] = field(default_factory=list)


def replay_case_of(
    subject: Subject, work: Path, python: str | None = None, triton: str | None = None
) -> ReplayCase:
    """What to replay of ``subject``: the MLIR reproducers its result left (a finding whose
    record holds none has its minimal config run again under the chosen interpreter, with
    its outputs kept under ``work``)."""
    files = recorded_reproducers(subject)
    interpreter, notes = _interpreter(subject, python, triton)
    if files is None:
        result = rerun(subject, interpreter, work)
        if not result.outcome.is_failure:
            raise _nothing(result, f"when its minimal config ran again under {interpreter}")
        files = _reproducers_of(result, None)
        notes.append(f"re-ran the minimal config under {interpreter}: {result.signature or '-'}")
        if not files:
            raise _nothing(result, _NO_REPRODUCER)
    else:
        if subject.is_finding:
            subject.load_reproducer()  # the minimal config's full case id, when it loads
            notes.append("the finding record holds its MLIR reproducer")
        result = subject.result
    return ReplayCase(
        result,
        subject.report_id,
        subject.origin,
        files,
        interpreter,
        subject.recorded_triton,
        [*subject.notes, *notes],
    )


_NO_REPRODUCER = "and left no MLIR reproducer (not an MLIR pass failure)"


def recorded_reproducers(subject: Subject) -> list[Path] | None:
    """The MLIR reproducer files ``subject`` already has: a run's result, the ones its case
    left; a finding, the ones its record holds, or None (its minimal config must run again).

    Nothing is run, so the command checks this before its first progress line: a run's
    case that passed, or failed without an MLIR reproducer, is a ``ReplayError``.
    """
    result = subject.result
    if subject.is_finding:
        stored = _reproducer_files(_artifact_paths(subject.finding_record.get("artifacts")))
        return stored or None
    if not result.outcome.is_failure:
        raise _nothing(result, f"in {subject.origin.get('run', '')}")
    files = _reproducers_of(result, subject.case_dir)
    if not files:
        raise _nothing(result, _NO_REPRODUCER)
    return files


def check_interpreter(python: str | None, release: str | None) -> None:
    """``--python`` names an interpreter that exists, ``--triton`` a version (checked before
    any progress; the release's venv is built later, on first use)."""
    from packaging.version import InvalidVersion, Version

    if python and not Path(python).exists():
        raise UsageError(f"--python: no such interpreter: {python}")
    if release:
        try:
            Version(release)
        except InvalidVersion:
            raise UsageError(f"not a Triton version: {release!r}") from None


def _interpreter(
    subject: Subject, python: str | None, release: str | None
) -> tuple[str, list[str]]:
    """``--python``, ``--triton``'s cached venv, the recorded interpreter or release
    (:func:`suite.subject.interpreter_for`), this interpreter when it holds the
    recorded release, else that release's venv (built on first use)."""
    from suite.toolchain import venvs

    if python:
        if not Path(python).exists():
            raise UsageError(f"--python: no such interpreter: {python}")
        return python, []
    if release:
        return venvs.for_version(release).python, [f"triton {release} from its cached venv"]
    recorded = interpreter_for(subject.environment, None)
    version = subject.recorded_triton
    if recorded and version and Path(recorded).is_relative_to(venvs.folder_for(version)):
        return recorded, [f"triton {version} from its cached venv"]
    if recorded:
        return recorded, [f"the recorded interpreter {recorded}"]
    if version:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            if importlib.metadata.version("triton") == version:
                return sys.executable, []
        return venvs.for_version(version).python, [f"triton {version} from its cached venv"]
    return sys.executable, []


def _artifact_paths(artifacts: object) -> list[Path]:
    if not isinstance(artifacts, dict):
        return []
    return [Path(p) for name, p in artifacts.items() if str(name).startswith(REPRODUCER_PREFIX)]


def _reproducer_files(paths: list[Path]) -> list[Path]:
    return sorted(p for p in paths if p.name.startswith(REPRODUCER_PREFIX) and p.is_file())


def _reproducers_of(result: CaseResult, case_dir: Path | None) -> list[Path]:
    found = _reproducer_files(_artifact_paths(result.artifacts))
    if not found and case_dir is not None and case_dir.is_dir():
        found = _reproducer_files(list(case_dir.iterdir()))
    return found


def _nothing(result: CaseResult, where: str) -> ReplayError:
    return ReplayError(f"nothing to replay: {result.case_id} {result.outcome.label} {where}")


def choose_reproducer(files: list[Path], stage: str | None) -> Path:
    """The reproducer of the failing stage: one file from releases that write one, else
    ``<prefix>.make_<stage>.repro.mlir``, else the last stage written."""
    if len(files) == 1:
        return files[0]
    staged = {}
    for path in files:
        found = re.search(r"\.(make_\w+)\.repro\.mlir$", path.name)
        if found:
            staged[found.group(1)] = path
    if stage and f"make_{stage}" in staged:
        return staged[f"make_{stage}"]
    for name in reversed(STAGE_ORDER):
        if name in staged:
            return staged[name]
    return files[-1]
