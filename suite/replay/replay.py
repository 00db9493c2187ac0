"""Replay a captured MLIR reproducer pass by pass, find the failing pass, and reduce its IR.

``repro replay FINDING-or-RESULT`` (:mod:`suite.cli.replay`) takes the MLIR reproducer a
failing case left in its folder (``TRITON_REPRODUCER_PATH``), maps the recorded pass
pipeline to Triton's Python bindings *of the release that runs it* (probed at run time,
:mod:`suite.replay.child`), runs the passes one at a time, each in its own isolated child
that parses the IR the previous one wrote, and names the first pass that fails. That pass
is then run alone on the IR saved just before it, to confirm.

Into ``<output>/<id>/`` it writes ``before-<pass>.mlir`` (the IR just before the failing
pass), ``replay.py`` (needs only triton: exit 1 when the pass fails, 0 when it passes, 2
when the IR does not parse in the installed release), ``<pass>.mlir`` (a lit test for
Triton's ``test/`` folder) and ``replay.json``. With ``reduce`` it also shrinks the IR
(``suite.replay.ir_reduce.Reducer``) while the pass still fails with the same diagnostic,
writing the best
so far to ``reduced-<pass>.mlir`` after every improvement.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suite.engine.isolate import Bounds, Exit, run_isolated
from suite.engine.outcome import CaseResult
from suite.engine.record import RESULTS, RunStore, safe_name
from suite.engine.shim import child_env
from suite.engine.signature import normalize
from suite.errors import UsageError
from suite.replay.child import (
    EXIT_NO_BINDING,
    EXIT_OK,
    EXIT_PASS_FAILED,
    EXIT_UNPARSABLE,
    Mapped,
    PassSpec,
    PipelineError,
    map_passes,
    parse_pipeline,
    pass_flag,
    split_reproducer,
)
from suite.search.findings import locate

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
PASS_TIMEOUT_S = 300.0
PROBE_RESTARTS = 8


class ReplayError(UsageError):
    """Replay cannot go on: one line, exit 2 (an unmapped pass, an IR from another release)."""


# ---------------------------------------------------------------------------------------------
# Diagnostics.
# ---------------------------------------------------------------------------------------------


@dataclass
class Diagnostic:
    """What MLIR said when a pass failed: its error and note lines, and the pass it named."""

    errors: list[dict[str, Any]] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    pass_name: str | None = None
    crashed: bool = False
    signal: str | None = None

    @property
    def specific(self) -> list[dict[str, Any]]:
        """The errors the pass itself emitted (not MLIR's generic pipeline-failure lines)."""
        return [e for e in self.errors if not e["message"].startswith(GENERIC_ERRORS)]

    @property
    def key(self) -> tuple[Any, ...]:
        """The interestingness key: same pass, same way of failing, same messages."""
        messages = sorted({normalize(e["message"]) for e in self.specific})
        return (self.pass_name, self.crashed, self.signal, tuple(messages))

    def lines(self) -> list[str]:
        shown = [f"error: {e['message']}" for e in self.errors]
        shown += [f"note: {n['message']}" for n in self.notes]
        if self.signal:
            shown.append(f"killed by {self.signal}")
        return shown

    def to_json(self) -> dict[str, Any]:
        return {
            "pass_name": self.pass_name,
            "crashed": self.crashed,
            "signal": self.signal,
            "errors": self.errors,
            "notes": self.notes,
            "lines": self.lines(),
        }


def parse_diagnostic(stderr: str, signal_name: str | None = None) -> Diagnostic:
    diagnostic = Diagnostic(signal=signal_name, crashed=signal_name is not None)
    for raw in stderr.splitlines():
        match = DIAGNOSTIC.match(raw.strip())
        if not match or match.group("sev") not in ("error", "note"):
            continue
        where = match.group("file") or match.group("loc") or ""
        entry: dict[str, Any] = {
            "file": where,
            "line": int(match.group("line")) if match.group("line") else None,
            "message": match.group("msg").strip(),
        }
        if match.group("sev") == "error":
            diagnostic.errors.append(entry)
        else:
            diagnostic.notes.append(entry)
        if SIGNAL_CAUGHT in entry["message"]:
            diagnostic.crashed = True
    found = PASS_FAILURE.search(stderr)
    diagnostic.pass_name = found.group(1) if found else None
    return diagnostic


# ---------------------------------------------------------------------------------------------
# Children.
# ---------------------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    """The child's environment: the shim on PYTHONPATH, and no reproducer path, so that
    MLIR's crash recovery prints to stderr and says when it caught a signal."""
    env = child_env({"PYTHONUNBUFFERED": "1"})
    env.pop("TRITON_REPRODUCER_PATH", None)
    return env


def _child(python: str, args: list[str], timeout_s: float) -> Exit:
    argv = [python, "-m", "suite.replay.child", *args]
    return run_isolated(argv, env=_env(), bounds=Bounds(timeout_s=timeout_s, memory_bytes=8 << 30))


@dataclass
class PassRun:
    """How one pass went in its child."""

    status: str  # ok, failed, unparsable, no-binding, timeout, error
    diagnostic: Diagnostic
    seconds: float
    stderr: str
    pipeline: str | None = None

    @property
    def failed(self) -> bool:
        return self.status == "failed"


def run_pass(
    python: str, ir: Path, mapped: Mapped, out: Path | None, work: Path, timeout_s: float
) -> PassRun:
    """Run one pass on ``ir`` in an isolated child; write the IR after it to ``out``."""
    plan = work / f"pass-{os.getpid()}-{threading.get_ident()}.json"
    plan.write_text(json.dumps({**mapped.to_json(), "pass": mapped.spec.text}))
    args = ["run", str(ir), str(plan)] + ([str(out)] if out is not None else [])
    exit = _child(python, args, timeout_s)
    stderr = exit.stderr.text
    pipeline = None
    for line in exit.stdout.text.splitlines():
        with contextlib.suppress(json.JSONDecodeError, AttributeError):
            pipeline = json.loads(line).get("pipeline", pipeline)
    diagnostic = parse_diagnostic(stderr, exit.signal_name)
    if exit.timed_out:
        status = "timeout"
    elif exit.returncode == EXIT_OK:
        status = "ok"
    elif exit.returncode == EXIT_PASS_FAILED or (
        exit.signal_name and "replay_child: running" in stderr
    ):
        status = "failed"
    elif exit.returncode == EXIT_UNPARSABLE:
        status = "unparsable"
    elif exit.returncode == EXIT_NO_BINDING:
        status = "no-binding"
    else:
        status = "error"
    if status == "failed" and diagnostic.pass_name is None and exit.signal_name:
        diagnostic.pass_name = mapped.spec.name
    return PassRun(status, diagnostic, round(exit.duration_s, 3), stderr, pipeline)


def first_error_line(stderr: str) -> str:
    for line in stderr.splitlines():
        if "error:" in line and "replay_child:" not in line:
            return line.strip()
    lines = [line for line in stderr.splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no output"


def probe(python: str, work: Path, timeout_s: float = 300.0) -> tuple[str, list[dict[str, Any]]]:
    """The installed release's version and its binding table, probed in children.

    A binding that takes the probe down is left out and the probe runs again.
    """
    skip: list[str] = []
    table: dict[str, dict[str, Any]] = {}
    version = "unknown"
    for _ in range(PROBE_RESTARTS):
        out = work / f"probe-{len(skip)}.jsonl"
        out.unlink(missing_ok=True)
        exit = _child(python, ["probe", str(out), *skip], timeout_s)
        current = None
        done = False
        for line in out.read_text().splitlines() if out.exists() else []:
            record = json.loads(line)
            if "triton" in record:
                version = record["triton"]
            elif "probing" in record:
                current = record["probing"]
            elif "path" in record:
                table[record["path"]] = record
                current = None
            elif record.get("done"):
                done = True
        if done:
            return version, list(table.values())
        if current is None:
            reason = first_error_line(exit.stderr.text)
            raise ReplayError(f"cannot introspect Triton's bindings under {python}: {reason}")
        table[current] = {"path": current, "pass": None, "params": None, "error": "aborted"}
        skip.append(current)
    raise ReplayError(f"the binding probe under {python} kept aborting ({', '.join(skip)})")


def ir_types(python: str, ir: Path, timeout_s: float = 120.0) -> dict[str, Any] | None:
    """Result types per line and the operation count of ``ir``; None when it does not parse."""
    exit = _child(python, ["types", str(ir)], timeout_s)
    if exit.returncode != EXIT_OK:
        return None
    try:
        return dict(json.loads(exit.stdout.text.strip().splitlines()[-1]))
    except (json.JSONDecodeError, IndexError):
        return None


# ---------------------------------------------------------------------------------------------
# What to replay.
# ---------------------------------------------------------------------------------------------


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
    except (OSError, json.JSONDecodeError) as exc:
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
    from suite.engine.discover import select
    from suite.engine.expand import expand
    from suite.engine.runner import Execution, run_case

    if work is None:
        raise UsageError("internal: no work folder to re-run the finding in")
    specs = expand(select([finding.repro]), [finding.target], configs=[finding.minimal_config])
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


# ---------------------------------------------------------------------------------------------
# The replay.
# ---------------------------------------------------------------------------------------------


@dataclass
class Replay:
    """What a replay found and wrote."""

    folder: Path
    record: dict[str, Any]
    exit_status: int
    lines: list[str]


def _write(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(text)
    os.replace(partial, path)


def pass_name_of(spec: PassSpec) -> str:
    """The pass's own name (the inner one of a nested ``tt.func(x)``)."""
    while spec.nested:
        spec = spec.nested[0]
    return spec.name


def pass_file_name(spec: PassSpec) -> str:
    return safe_name(pass_name_of(spec)) or "pass"


def replay(
    subject: Subject,
    folder: Path,
    reduce: bool = False,
    budget_tries: int = 400,
    budget_s: float = 600.0,
    timeout_s: float = PASS_TIMEOUT_S,
    say: Callable[[str], None] = lambda line: None,
) -> Replay:
    """Replay ``subject``'s reproducer under ``subject.python``; write the outputs to ``folder``."""
    started = time.monotonic()
    source = choose_reproducer(subject.reproducers, subject.result.detail.get("stage"))
    ir_text, pipeline = split_reproducer(source.read_text(errors="replace"))
    if not pipeline:
        raise ReplayError(f"{source} has no mlir_reproducer pipeline: not an MLIR reproducer")
    try:
        anchor, passes = parse_pipeline(pipeline)
    except PipelineError as exc:
        raise ReplayError(f"{source}: {exc}") from None
    if not passes:
        raise ReplayError(f"{source}: the recorded pipeline is empty")
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="repro-replay-") as scratch:
        work = Path(scratch)
        version, table = probe(subject.python, work)
        say(f"triton {version} ({subject.python}): {len(table)} pass bindings probed")
        mapped, missing = map_passes(passes, table)
        if missing:
            raise ReplayError(
                f"triton {version} has no binding for pass {missing[0]}"
                + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
            )
        _write(folder / "captured.mlir", source.read_text(errors="replace"))
        current = work / "ir-000.mlir"
        current.write_text(ir_text)
        scan: list[dict[str, Any]] = []
        failing: int | None = None
        failed_run: PassRun | None = None
        for index, step in enumerate(mapped):
            after = work / f"ir-{index + 1:03d}.mlir"
            ran = run_pass(subject.python, current, step, after, work, timeout_s)
            scan.append(
                {
                    "index": index + 1,
                    "pass": step.spec.text,
                    "call": step.call,
                    "status": ran.status,
                    "seconds": ran.seconds,
                }
            )
            if ran.status == "ok":
                current = after
                continue
            if ran.status == "unparsable":
                line = first_error_line(ran.stderr)
                if index == 0:
                    raise ReplayError(
                        f"the reproducer does not parse under triton {version} (captured under "
                        f"triton {subject.recorded_triton or 'unknown'}; MLIR text is specific "
                        f"to a release): {line}"
                    )
                raise ReplayError(
                    f"the IR printed after pass {index} ({mapped[index - 1].spec.name}) does "
                    f"not parse again under triton {version}: {line}"
                )
            if ran.status == "no-binding":
                raise ReplayError(f"{step.call}: {first_error_line(ran.stderr)}")
            if ran.status == "error":
                raise ReplayError(
                    f"the replay child of {step.call} ended unexpectedly: "
                    f"{first_error_line(ran.stderr)}"
                )
            failing, failed_run = index, ran
            break
        record: dict[str, Any] = {
            "schema": SCHEMA,
            "subject": {
                **subject.origin,
                "case_id": subject.result.case_id,
                "signature": str(subject.result.signature or ""),
                "outcome": subject.result.outcome.label,
            },
            "triton": version,
            "recorded_triton": subject.recorded_triton,
            "python": subject.python,
            "notes": list(subject.notes),
            "reproducer": {
                "path": str(source),
                "copy": "captured.mlir",
                "anchor": anchor,
                "passes": len(passes),
                "style": "one pass (the failing one)" if len(passes) == 1 else "whole stage",
            },
            "mapping": [m.to_json() for m in mapped],
            "scan": scan,
            "first_failing": None,
            "confirmed": False,
            "files": {"captured": "captured.mlir", "record": "replay.json"},
            "reduction": None,
        }
        lines: list[str] = []
        if failing is None or failed_run is None:
            _write(folder / "after-all.mlir", current.read_text())
            record["files"]["after_all"] = "after-all.mlir"
            record["seconds"] = round(time.monotonic() - started, 3)
            _write(folder / "replay.json", json.dumps(record, indent=2) + "\n")
            last = scan[-1]["status"] if scan else "none"
            lines.append(
                f"no pass failed: all {len(mapped)} passes ran one at a time under triton "
                f"{version} (last: {last}); the failure does not replay pass by pass"
            )
            return Replay(folder, record, EXIT_NOT_REPRODUCED, lines)
        step = mapped[failing]
        name = pass_file_name(step.spec)
        before = folder / f"before-{name}.mlir"
        before_text = current.read_text()
        _write(before, before_text)
        confirm = run_pass(subject.python, before, step, None, work, timeout_s)
        confirmed = (
            confirm.failed and confirm.diagnostic.pass_name == failed_run.diagnostic.pass_name
        ) or confirm.status == failed_run.status == "timeout"
        diagnostic = confirm.diagnostic if confirm.failed else failed_run.diagnostic
        flag_options = {
            o: step.spec.options[o] for o in _options_set(step, table) if o in step.spec.options
        }
        flag = (
            pass_flag(step.spec, flag_options)
            if step.spec.nested is None
            else f'-pass-pipeline="builtin.module({step.spec.text})"'
        )
        record["first_failing"] = {
            "index": failing + 1,
            "of": len(mapped),
            "pass": pass_name_of(step.spec),
            "pass_text": step.spec.text,
            "pass_name": diagnostic.pass_name,
            "flag": flag,
            "call": step.call,
            "binding": step.binding,
            "args": step.args,
            "notes": step.notes,
            "diagnostic": diagnostic.to_json(),
            "stderr": _diagnostic_lines(failed_run.stderr),
        }
        record["confirmed"] = confirmed
        record["confirm"] = {"status": confirm.status, "seconds": confirm.seconds}
        record["files"].update({"before": before.name, "replay_py": "replay.py"})
        lines.append(
            f"first failing pass: {pass_name_of(step.spec)} ({diagnostic.pass_name or '?'}), pass "
            f"{failing + 1} of {len(mapped)}, triton {version}"
        )
        lines += [f"  {line}" for line in diagnostic.lines()[:6]]
        how = "failed"
        if diagnostic.crashed:
            how = "crashed (a signal caught by MLIR's crash recovery)"
        if failed_run.status == "timeout":
            how = f"timed out ({timeout_s:g} s)"
        lines.append(
            f"  alone on {before.name}: "
            + (f"{how} again" if confirmed else f"did not fail the same way ({confirm.status})")
        )
        lit_source = before_text
        lit_diagnostic = diagnostic
        if reduce and confirmed:
            from suite.replay.ir_reduce import (
                Reducer,  # the reducer runs passes through this module
            )

            reducer = Reducer(
                subject.python,
                step,
                diagnostic,
                folder / f"reduced-{name}.mlir",
                work,
                budget_tries=budget_tries,
                budget_s=budget_s,
                timeout_s=min(timeout_s, max(20.0, 20 * confirm.seconds)),
                say=say,
            )
            outcome = reducer.run(before_text)
            record["reduction"] = outcome
            record["files"]["reduced"] = f"reduced-{name}.mlir"
            lit_source = reducer.best
            lit_diagnostic = reducer.best_diagnostic
            lines.append(
                f"reduced: {outcome['lines_before']} -> {outcome['lines_after']} lines, "
                f"{outcome['ops_before']} -> {outcome['ops_after']} ops "
                f"({outcome['tries']} tries, {outcome['seconds']} s"
                + (", interrupted" if outcome["interrupted"] else "")
                + f"): reduced-{name}.mlir"
            )
        _write(folder / "replay.py", replay_script(before.name, step, diagnostic, version, subject))
        (folder / "replay.py").chmod(0o755)
        lit = lit_test(lit_source, step, flag, lit_diagnostic, version, subject)
        _write(folder / f"{name}.mlir", lit)
        record["files"]["lit_test"] = f"{name}.mlir"
        record["seconds"] = round(time.monotonic() - started, 3)
        _write(folder / "replay.json", json.dumps(record, indent=2) + "\n")
        lines.append(
            f"wrote {folder}/: {before.name}, replay.py, {name}.mlir, replay.json"
            + (f", reduced-{name}.mlir" if record["reduction"] else "")
        )
        return Replay(folder, record, EXIT_FOUND if confirmed else EXIT_NOT_REPRODUCED, lines)


def _options_set(step: Mapped, table: list[dict[str, Any]]) -> list[str]:
    """The options of ``step``'s pass that its binding's arguments set."""
    for entry in table:
        if entry.get("path") == step.binding and entry.get("params"):
            return [p["option"] for p in entry["params"] if p.get("option")]
    return list(step.spec.options) if step.args else []


def _diagnostic_lines(text: str, limit: int = 40) -> list[str]:
    """The diagnostic lines of a child's stderr, without the reproducer MLIR may print."""
    return [line for line in text.splitlines() if DIAGNOSTIC.match(line.strip())][:limit]


# ---------------------------------------------------------------------------------------------
# replay.py and the lit test.
# ---------------------------------------------------------------------------------------------

REPLAY_SCRIPT = '''#!/usr/bin/env python3
"""Replay one MLIR pass that fails: {pass_text} ({pass_name}).

Written by `repro replay` for {case_id}, from a reproducer captured under triton {recorded}
and replayed under triton {version}. Needs only triton.

    python replay.py [IR]          # default: {before}

Exit status: 1 the pass fails (the bug reproduces); 0 the pass succeeds; 2 this cannot be
replayed here: the IR does not parse in the installed release (MLIR text is specific to a
release), or the release has no binding {binding}.
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
IR = os.path.join(HERE, {before!r})
BINDING = {binding!r}
ARGS = {args!r}
PASS = {pass_text!r}
CAPTURED_UNDER = {recorded!r}
PASSED, FAILED, UNPARSABLE, NO_BINDING = 0, 10, 11, 12


def _in_child(ir):
    """Parse IR and run the pass in this process; the parent maps the outcome."""
    try:
        from triton._C import libtriton as lt
        import triton
    except ImportError as exc:
        print(f"replay.py: cannot import triton: {{exc}}", file=sys.stderr)
        return NO_BINDING
    ctx = lt.ir.context()
    lt.ir.load_dialects(ctx)
    for backend in ("nvidia", "amd"):
        module = getattr(lt, backend, None)
        if module is not None and hasattr(module, "load_dialects"):
            module.load_dialects(ctx)
    try:
        mod = lt.ir.parse_mlir_module(ir, ctx)
        mod.context = ctx
    except Exception:
        return UNPARSABLE
    target = lt
    for part in BINDING.split("."):
        target = getattr(target, part, None)
        if target is None:
            print(f"replay.py: triton {{triton.__version__}} has no {{BINDING}}", file=sys.stderr)
            return NO_BINDING
    args = []
    for kind, value in ARGS:
        if kind == "object":
            cls = lt
            for part in value.split("."):
                cls = getattr(cls, part)
            args.append(cls())
        else:
            args.append(value)
    pm = lt.ir.pass_manager(ctx)
    target(pm, *args)
    doc = (pm.run.__doc__ or "").splitlines()[:1]
    try:
        if doc and ("arg1: str" in doc[0] or ", str" in doc[0]):
            pm.run(mod, "replay")
        else:
            pm.run(mod)
    except Exception:
        return FAILED
    return PASSED


def _diagnostics(text):
    """MLIR's error and note lines (the crash reproducer it may print is left out)."""
    keep = ("error:", "note:", "warning:", "replay.py:")
    return [line for line in text.splitlines() if any(k in line for k in keep)]


def main(argv):
    if len(argv) > 1 and argv[1] == "--in-process":
        return _in_child(argv[2])
    ir = os.path.abspath(argv[1]) if len(argv) > 1 else IR
    try:
        import triton

        version = triton.__version__
    except ImportError:
        version = "?"
    env = dict(os.environ)
    env.pop("TRITON_REPRODUCER_PATH", None)
    child = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--in-process", ir],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )
    lines = _diagnostics(child.stderr)
    if child.returncode == PASSED:
        print(f"replay.py: {{PASS}} succeeded under triton {{version}}: the bug does not reproduce")
        return 0
    if child.returncode == UNPARSABLE:
        first = lines[0].strip() if lines else "no diagnostic"
        print(
            f"replay.py: {{os.path.basename(ir)}} does not parse under triton {{version}} "
            f"(captured under triton {{CAPTURED_UNDER}}; MLIR text is specific to a release): "
            f"{{first}}"
        )
        return 2
    for line in lines:
        print(line, file=sys.stderr)
    if child.returncode == NO_BINDING:
        print(f"replay.py: cannot replay {{PASS}} under triton {{version}}")
        return 2
    if child.returncode == FAILED or child.returncode < 0:
        how = f"killed by signal {{-child.returncode}}" if child.returncode < 0 else "failed"
        print(f"replay.py: {{PASS}} {{how}} under triton {{version}}: the bug reproduces")
        return 1
    print(f"replay.py: unexpected exit {{child.returncode}} of the replay child")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
'''


def replay_script(
    before: str, step: Mapped, diagnostic: Diagnostic, version: str, subject: Subject
) -> str:
    args = [(a["kind"], a["class"] if a["kind"] == "object" else a["value"]) for a in step.args]
    return REPLAY_SCRIPT.format(
        pass_text=step.spec.text,
        pass_name=diagnostic.pass_name or step.spec.name,
        case_id=subject.result.case_id,
        recorded=subject.recorded_triton or version,
        version=version,
        before=before,
        binding=step.binding,
        args=args,
    )


FUNC = re.compile(r"^(\s*)tt\.func\b[^@]*@([\w$.-]+)")


def lit_test(
    ir_text: str,
    step: Mapped,
    flag: str,
    diagnostic: Diagnostic,
    version: str,
    subject: Subject,
) -> str:
    """A lit test in the style of Triton's ``test/TritonGPU/*.mlir``.

    When the pass emits its own located errors, ``-verify-diagnostics`` with an
    ``expected-error`` on each failing op; when it crashes or fails without one, a
    regression test that passes once the pass no longer fails (``FileCheck`` on the
    function), with the failure it documents in comments.
    """
    body = ir_text.rstrip("\n").splitlines()
    located = [e for e in diagnostic.specific if e.get("line")]
    who = diagnostic.pass_name or step.spec.name
    captured = subject.recorded_triton or version
    head: list[str] = []
    if located:
        head.append(f"// RUN: triton-opt %s -split-input-file {flag} -verify-diagnostics")
        head.append("")
        head.append(
            f"// Generated by `repro replay` from {subject.result.case_id}: under triton "
            f"{captured}, {who} reports the errors below on this IR."
        )
        by_line: dict[int, list[str]] = {}
        for entry in located:
            message = entry["message"].replace("}}", "} }")
            by_line.setdefault(int(entry["line"]), []).append(message)
        out = []
        for number, line in enumerate(body, start=1):
            indent = re.match(r"\s*", line).group(0)  # type: ignore[union-attr]
            for message in by_line.get(number, []):
                out.append(f"{indent}// expected-error @+1 {{{{{message}}}}}")
            out.append(line)
        return "\n".join([*head, "", *out]) + "\n"
    head.append(f"// RUN: triton-opt %s -split-input-file {flag} | FileCheck %s")
    head.append("")
    how = (
        "crashes (a signal, caught by MLIR's crash recovery)"
        if diagnostic.crashed
        else "fails without a diagnostic of its own"
    )
    head.append(f"// Regression test generated by `repro replay` from {subject.result.case_id}.")
    head.append(f"// Under triton {captured}, {who} {how} on this IR:")
    for line in diagnostic.lines()[:4]:
        head.append(f"//   {_one_line(line)}")
    head.append("// The pass must succeed and keep the function.")
    out = []
    for line in body:
        match = FUNC.match(line)
        if match:
            out.append(f"// CHECK-LABEL: @{match.group(2)}")
        out.append(line)
    if any(line.strip().startswith("tt.return") for line in body):
        index = max(i for i, line in enumerate(out) if line.strip().startswith("tt.return"))
        indent = re.match(r"\s*", out[index]).group(0)  # type: ignore[union-attr]
        out.insert(index, f"{indent}// CHECK: tt.return")
    return "\n".join([*head, "", *out]) + "\n"


def _one_line(text: str) -> str:
    text = re.sub(r"reproducer generated at `[^`]*`", "reproducer generated at `...`", text)
    return text[:200]


def default_folder(output: Path, report_id: str) -> Path:
    return output / report_id


__all__ = [
    "Diagnostic",
    "Replay",
    "ReplayError",
    "Subject",
    "choose_reproducer",
    "lit_test",
    "parse_diagnostic",
    "probe",
    "replay",
    "resolve",
    "run_pass",
]
