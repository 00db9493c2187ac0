"""What to replay: a finding, a run's result, or reproducer files given by path."""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suite.engine.outcome import CaseResult
from suite.engine.record import RESULTS, RunStore, safe_name
from suite.errors import UsageError
from suite.replay.diagnostic import REPRODUCER_PREFIX, STAGE_ORDER, ReplayError
from suite.search.findings import locate


@dataclass
class Subject:
    """A failing case and the MLIR reproducer files it left."""

    result: CaseResult
    report_id: str
    origin: dict[str, str]
    reproducers: list[Path]
    python: str
    recorded_triton: str | None
    notes: list[str] = field(default_factory=list)


def _expand(path: str | None) -> str | None:
    return str(Path(path).expanduser()) if path else None


def _interpreter(
    python: str | None, release: str | None, environment: dict[str, Any]
) -> tuple[str, list[str]]:
    """``--python``, ``--triton``'s cached venv, the recorded interpreter, the recorded
    release's venv, or this interpreter."""
    from suite.toolchain import venvs

    if python:
        if not Path(python).exists():
            raise UsageError(f"--python: no such interpreter: {python}")
        return python, []
    if release:
        return venvs.for_version(release).python, [f"triton {release} from its cached venv"]
    recorded = _expand(environment.get("python_executable"))
    if recorded and Path(recorded).exists():
        return recorded, [f"the recorded interpreter {recorded}"]
    version = environment.get("triton")
    if version:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            if importlib.metadata.version("triton") == version:
                return sys.executable, []
        return venvs.for_version(str(version)).python, [f"triton {version} from its cached venv"]
    return sys.executable, []


def _reproducer_files(paths: list[Path]) -> list[Path]:
    return sorted(p for p in paths if p.name.startswith(REPRODUCER_PREFIX) and p.is_file())


def _from_result(result: CaseResult, case_dir: Path | None) -> list[Path]:
    files = [Path(p) for name, p in result.artifacts.items() if name.startswith(REPRODUCER_PREFIX)]
    found = _reproducer_files(files)
    if not found and case_dir is not None and case_dir.is_dir():
        found = _reproducer_files(list(case_dir.iterdir()))
    return found


def _run_folder(text: str, output: Path) -> Path | None:
    for candidate in (Path(text), output / "runs" / text):
        if candidate.name == RESULTS and candidate.is_file():
            return candidate.parent
        if candidate.is_dir() and (candidate / RESULTS).is_file():
            return candidate
    return None


def _split_result(ref: str, output: Path) -> tuple[Path, str] | None:
    for index, char in enumerate(ref):
        if char == ":":
            folder = _run_folder(ref[:index], output)
            if folder is not None and ref[index + 1 :]:
                return folder, ref[index + 1 :]
    return None


def _nothing(result: CaseResult, where: str) -> ReplayError:
    return ReplayError(f"nothing to replay: {result.case_id} {result.outcome.label} {where}")


def resolve(
    ref: str,
    output: Path,
    python: str | None = None,
    triton: str | None = None,
    work: Path | None = None,
) -> Subject:
    """The failing case named on the command line, with its MLIR reproducer(s).

    ``RUN_DIR:CASE_ID`` reads a run's result; anything else is a finding (a file, or a
    name under ``<output>/findings``), whose minimal config is run again through the
    engine when the record holds no reproducer.
    """
    split = _split_result(ref, output)
    if split is not None:
        folder, case = split
        store = RunStore(folder)
        results = [r for r in store.results() if case in (r.case_id, safe_name(r.case_id))]
        if not results:
            raise UsageError(f"no case {case!r} in {folder / RESULTS}")
        result = results[-1]
        if not result.outcome.is_failure:
            raise _nothing(result, f"in {folder}")
        environment = _environment(folder)
        interpreter, notes = _interpreter(python, triton, environment)
        files = _from_result(result, store.case_dir(result.case_id))
        if not files:
            raise _nothing(result, "and left no MLIR reproducer (not an MLIR pass failure)")
        return Subject(
            result,
            safe_name(result.case_id),
            {"run": str(folder), "case": result.case_id},
            files,
            interpreter,
            environment.get("triton"),
            notes,
        )
    if ":" in ref and not Path(ref).exists() and _run_folder(ref.split(":")[0], output) is None:
        raise UsageError(f"no run folder in {ref!r} (a result is RUN_DIR:CASE_ID)")
    return _from_finding(ref, output, python, triton, work)


def _environment(folder: Path) -> dict[str, Any]:
    path = folder / "environment.json"
    with contextlib.suppress(OSError, json.JSONDecodeError):
        return dict(json.loads(path.read_text()))
    return {}


def _load_finding(ref: str, output: Path) -> tuple[dict[str, Any], Path]:
    path = locate(ref, output)
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as exc:  # ValueError: not JSON, or not UTF-8
        raise UsageError(f"not a finding record: {path}: {exc}") from None
    if not isinstance(record, dict) or "repro" not in record or "minimal_config" not in record:
        raise UsageError(f"not a finding record: {path}")
    return record, path


def _from_finding(
    ref: str, output: Path, python: str | None, triton: str | None, work: Path | None
) -> Subject:
    from suite.search.findings import Finding

    record, path = _load_finding(ref, output)
    try:
        finding = Finding.from_json(record)
    except (TypeError, KeyError) as exc:
        raise UsageError(f"not a finding record: {path}: {exc}") from None
    interpreter, notes = _interpreter(python, triton, dict(finding.environment))
    stored = _reproducer_files(
        [
            Path(p)
            for name, p in (record.get("artifacts") or {}).items()
            if name.startswith(REPRODUCER_PREFIX)
        ]
    )
    if stored:
        result = _result_of(finding)
        files = stored
        notes.append("the finding record holds its MLIR reproducer")
    else:
        result = _rerun(finding, interpreter, work)
        if not result.outcome.is_failure:
            raise _nothing(result, f"when its minimal config ran again under {interpreter}")
        files = _from_result(result, None)
        if not files:
            raise _nothing(result, "and left no MLIR reproducer (not an MLIR pass failure)")
        notes.append(f"re-ran the minimal config under {interpreter}: {result.signature or '-'}")
    return Subject(
        result,
        path.stem,
        {"finding": str(path)},
        files,
        interpreter,
        finding.environment.get("triton"),
        notes,
    )


def _result_of(finding: Any) -> CaseResult:
    """The finding's minimal case as a result (its stage read back from the signature)."""
    from suite.engine.outcome import Outcome, Signature

    parts = finding.signature.split(":")
    detail = {"stage": parts[1]} if len(parts) > 1 else {}
    return CaseResult(
        case_id=f"{finding.repro}[{finding.target}]",
        repro=finding.repro,
        target=finding.target,
        config=dict(finding.minimal_config),
        outcome=Outcome.from_label(finding.outcome),
        signature=Signature(finding.signature),
        message=finding.message,
        detail=detail,
    )


def _rerun(finding: Any, python: str, work: Path | None) -> CaseResult:
    """The finding's minimal config run again through the engine, keeping its outputs."""
    from suite.engine.expand import expand
    from suite.engine.runner import Execution, run_case
    from suite.engine.sources import reproducer_for

    if work is None:
        raise UsageError("internal: no work folder to re-run the finding in")
    # The code the finding ran, from the source it carries (a file given by path too).
    found, _ = reproducer_for(finding.repro, finding.source)
    specs = expand([found], [finding.target], configs=[finding.minimal_config])
    if not specs:
        raise UsageError(f"{finding.repro} has no case for {finding.target}")
    spec = specs[0]
    return run_case(spec, work / safe_name(spec.case_id), Execution(python=python))


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
