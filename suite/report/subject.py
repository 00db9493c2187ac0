"""What a report, a replay or a bisect is about: a finding or one result of a run."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suite.engine.discover import Found
from suite.engine.outcome import CaseResult, Outcome, Signature
from suite.engine.record import RESULTS, RunStore, safe_name
from suite.engine.scrub import home_to_tilde
from suite.engine.signature import same_bug
from suite.errors import UsageError
from suite.search.findings import DirectoryFindingsStore, Finding, locate
from suite.toolchain.venvs import folder_for

#: How long a re-run of the failing case may take.
REPRO_TIMEOUT_S = 600


@dataclass
class Subject:
    """One failure to report, with everything known about it."""

    result: CaseResult
    environment: dict[str, Any]
    report_id: str
    origin: dict[str, str]
    finding: Finding | None = None
    finding_record: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # The reproducer as it ran (from the carried source), when it can be loaded again.
    found: Found | None = None

    @property
    def triton_version(self) -> str:
        return str(self.environment.get("triton") or "unknown")


def load_finding(ref: str, output: Path) -> tuple[Finding, dict[str, Any], Path]:
    """A finding by file, by id (``<repro>-<digest>``, the file's stem) or by a unique prefix."""
    path = locate(ref, output)
    try:
        record = json.loads(path.read_text())
        finding = Finding.from_json(record)
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:  # not UTF-8, too
        raise UsageError(f"not a finding record: {path}: {type(exc).__name__}: {exc}") from None
    return finding, record, path


def _run_folder(text: str, output: Path) -> Path | None:
    path = Path(text)
    if path.name == RESULTS and path.is_file():
        return path.parent
    if path.is_dir() and (path / RESULTS).is_file():
        return path
    named = output / "runs" / text
    if text and named.is_dir() and (named / RESULTS).is_file():
        return named
    return None


def split_result_ref(ref: str, case: str | None, output: Path) -> tuple[Path, str | None] | None:
    """``RUN_DIR:CASE_ID``, ``results.jsonl`` (or a run folder) with ``--case``; else None."""
    folder = _run_folder(ref, output)
    if folder is not None:
        return folder, case
    for index, char in enumerate(ref):
        if char == ":":
            folder = _run_folder(ref[:index], output)
            if folder is not None:
                return folder, ref[index + 1 :] or case
    return None


def load_result(folder: Path, case: str | None) -> tuple[CaseResult, dict[str, Any]]:
    results = RunStore(folder).results()
    if case is None:
        failing = [r for r in results if r.outcome.is_failure]
        if len(failing) != 1:
            ids = ", ".join(r.case_id for r in failing[:6])
            raise UsageError(
                f"{folder} has {len(failing)} failing cases; name one with --case or "
                f"RUN_DIR:CASE_ID ({ids})"
            )
        return failing[0], _environment_of(folder)
    for result in results:
        if result.case_id == case or safe_name(result.case_id) == case:
            return result, _environment_of(folder)
    raise UsageError(f"no case {case!r} in {folder / RESULTS}")


def _environment_of(folder: Path) -> dict[str, Any]:
    path = folder / "environment.json"
    if path.is_file():
        try:
            return dict(json.loads(path.read_text()))
        except json.JSONDecodeError:
            pass
    return {}


def result_from_finding(finding: Finding) -> CaseResult:
    """The finding's minimal case as a result, its detail read back from the signature."""
    outcome = Outcome.from_label(finding.outcome)
    parts = Signature(finding.signature).family.split(":")
    detail: dict[str, Any] = {"phase": "compile"}
    if outcome is Outcome.COMPILER_ERROR and len(parts) >= 2:
        detail["stage"] = parts[1]
        if len(parts) >= 3 and re.fullmatch(r"[A-Za-z][\w.-]*", parts[2]):
            detail["pass"] = parts[2]
    elif outcome is Outcome.PTXAS_ERROR and len(parts) >= 2:
        detail["ptxas_code"] = parts[1] if re.fullmatch(r"C\d{4,5}", parts[1]) else None
    elif outcome is Outcome.RESOURCE_LIMIT and len(parts) >= 2:
        detail["resource"] = parts[1]
        numbers = re.findall(r"(\d+) needed, the \S+ limit is (\d+)", finding.message)
        if numbers:
            detail["used"], detail["limit"] = (int(n) for n in numbers[0])
    elif outcome is Outcome.USER_ERROR and len(parts) >= 2:
        detail["rule"] = parts[1]
    if outcome is Outcome.CRASH and len(parts) >= 2:
        detail["signal"] = parts[1]
    return CaseResult(
        case_id=f"{finding.repro}[{finding.target}]",
        repro=finding.repro,
        target=finding.target,
        config=dict(finding.minimal_config),
        outcome=outcome,
        signature=Signature(finding.signature),
        message=finding.message,
        detail=detail,
        source={k: v for k, v in (finding.source or {}).items() if k != "text"},
    )


def interpreter_for(environment: Mapping[str, Any], python: str | None) -> str | None:
    """The interpreter a case ran under: ``--python``, the recorded one, or the cached venv."""
    if python:
        return python
    recorded = environment.get("python_executable")
    if recorded and Path(str(recorded)).expanduser().exists():
        return str(Path(str(recorded)).expanduser())
    version = environment.get("triton")
    if version:
        cached = folder_for(str(version)) / "bin" / "python"
        if cached.exists():
            return str(cached)
    return None


def rerun(finding: Finding, found: Found, python: str, work: Path) -> CaseResult:
    """The finding's minimal config run again through the engine, to capture its output,
    within the command's --timeout, --memory-cap and --isolation."""
    from suite.engine.expand import CaseSpec
    from suite.engine.runner import Execution, run_case

    spec = CaseSpec(found, dict(finding.minimal_config), finding.target)
    execution = Execution(python=python)
    result = run_case(spec, work / safe_name(spec.case_id), execution)
    if result is None:  # stopped while it ran
        raise KeyboardInterrupt
    return result


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


def _load_reproducer(subject: Subject, record: dict[str, Any] | None, base: Path) -> None:
    """Load the subject's reproducer from what was recorded; say where from, or why not."""
    from suite.engine.discover import from_source
    from suite.engine.sources import reproducer_for

    repro = subject.result.repro
    try:
        if record and "sha256" not in record and ("path" in record or "module" in record):
            found = [f for f in from_source(record, repro) if f.repro.id == repro]
            if not found:
                raise UsageError(f"{record} no longer defines {repro!r}")
            subject.found, note = found[0], ""
        else:
            subject.found, note = reproducer_for(repro, record, base)
    except UsageError as exc:
        subject.notes.append(f"the reproducer {repro!r} cannot be loaded again: {exc}")
        return
    if note:
        subject.notes.append(note)


def resolve(
    ref: str,
    output: Path,
    case: str | None = None,
    python: str | None = None,
    work: Path | None = None,
    rerun_finding: bool = True,
) -> Subject:
    """The :class:`Subject` named on the command line."""
    split = split_result_ref(ref, case, output)
    if split is not None:
        folder, case_id = split
        result, environment = load_result(folder, case_id)
        subject = Subject(
            result,
            environment,
            safe_name(result.case_id),
            {"run": home_to_tilde(str(folder)), "case": result.case_id},
        )
        stored = DirectoryFindingsStore(output / "findings")
        if result.signature is not None:
            finding = stored.get(result.repro, result.signature.text)
            if finding is not None:
                subject.finding = finding
                subject.finding_record = finding.to_json()
        _load_reproducer(subject, result.source or _spec_source(result), folder)
        return subject
    if case:
        raise UsageError(f"--case goes with a run's results, and {ref!r} is not a run")
    finding, record, path = load_finding(ref, output)
    environment = dict(finding.environment)
    subject = Subject(
        result_from_finding(finding),
        environment,
        path.stem,
        {"finding": home_to_tilde(str(path))},
        finding,
        record,
    )
    _load_reproducer(subject, finding.source, path.parent)
    interpreter = interpreter_for(environment, python) if rerun_finding else None
    if subject.found is None and interpreter and work is not None:
        subject.notes.append("the reproducer could not be loaded again: the case was not re-run")
    elif interpreter and work is not None and subject.found is not None:
        try:
            again = rerun(finding, subject.found, interpreter, work)
        except (UsageError, ValueError) as exc:
            subject.notes.append(f"the minimal config could not be run again: {exc}")
        else:
            seen = again.signature.text if again.signature else again.outcome.label
            if seen == finding.signature or same_bug(seen, finding.signature):
                subject.result = again
                subject.notes.append(
                    f"re-ran the minimal config under {home_to_tilde(interpreter)}: same signature"
                )
            else:
                subject.notes.append(
                    f"re-running the minimal config under {home_to_tilde(interpreter)} gave "
                    f"{seen}, not {finding.signature}; the report uses the finding's record"
                )
    elif rerun_finding:
        subject.notes.append(
            f"no interpreter with triton {subject.triton_version} to re-run the minimal config; "
            "no captured output or MLIR reproducer"
        )
    return subject
