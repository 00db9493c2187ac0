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

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NotRequired, TypedDict

from suite.engine import safe_name
from suite.files import scratch_folder, write_atomic
from suite.replay.bindings import Binding, Mapped, map_passes
from suite.replay.case import ReplayCase, choose_reproducer
from suite.replay.diagnostic import (
    DIAGNOSTIC,
    EXIT_FOUND,
    EXIT_NOT_REPRODUCED,
    PASS_TIMEOUT_S,
    SCHEMA,
    Diagnostic,
    ReplayError,
)
from suite.replay.ir_reduce import Reducer, Reduction
from suite.replay.passes import PassRun, first_error_line, probe, run_pass
from suite.replay.pipeline import (
    PassSpec,
    PipelineError,
    parse_pipeline,
    pass_flag,
    split_reproducer,
)
from suite.replay.script import lit_test, replay_script

# One pass of the scan in replay.json ("pass" is a keyword, hence the functional form).
ScanStepJson = TypedDict(
    "ScanStepJson", {"index": int, "pass": str, "call": str, "status": str, "seconds": float}
)

FailingJson = TypedDict(
    "FailingJson",
    {
        "index": int,
        "of": int,
        "pass": str,
        "pass_text": str,
        "pass_name": str | None,
        "flag": str,
        "call": str,
        "binding": str,
        "args": list[dict[str, object]],
        "notes": list[str],
        "diagnostic": dict[str, object],
        "stderr": list[str],
    },
)


class ReproducerJson(TypedDict):
    path: str
    copy: str
    anchor: str
    passes: int
    style: str


class ConfirmJson(TypedDict):
    status: str
    seconds: float


class ReplayRecord(TypedDict):
    """``replay.json`` (docs/schemas.md); the steps after the scan fill in the rest."""

    schema: int
    subject: dict[str, str]
    triton: str
    recorded_triton: str | None
    python: str
    notes: list[str]
    reproducer: ReproducerJson
    mapping: list[dict[str, object]]
    scan: list[ScanStepJson]
    first_failing: FailingJson | None
    confirmed: bool
    files: dict[str, str]  # what -> its file name in the replay's folder
    reduction: dict[str, object] | None
    confirm: NotRequired[ConfirmJson]
    seconds: NotRequired[float]


@dataclass
class Replay:
    """What a replay found and wrote."""

    folder: Path
    record: ReplayRecord
    exit_status: int
    lines: list[str]


def pass_name_of(spec: PassSpec) -> str:
    """The pass's own name (the inner one of a nested ``tt.func(x)``)."""
    while spec.nested:
        spec = spec.nested[0]
    return spec.name


def pass_file_name(spec: PassSpec) -> str:
    return safe_name(pass_name_of(spec)) or "pass"


@dataclass
class ReplaySource:
    """The MLIR reproducer a replay starts from: its file, its IR, its recorded pipeline."""

    source: Path
    text: str
    ir_text: str
    anchor: str
    passes: list[PassSpec]


@dataclass
class Scan:
    """The recorded passes run one at a time, each on the IR the one before it wrote."""

    steps: list[ScanStepJson]
    current: Path  # the IR the failing pass ran on (after all passes when none failed)
    failing: int | None = None
    failed_run: PassRun | None = None


@dataclass
class Failing:
    """The first failing pass, run again alone on the IR saved just before it."""

    step: Mapped
    index: int
    name: str  # for file names
    before: Path
    before_text: str
    run: PassRun  # how it failed in the scan
    alone: PassRun  # how it went alone
    confirmed: bool
    diagnostic: Diagnostic
    flag: str  # the triton-opt flag


def replay(
    case: ReplayCase,
    folder: Path,
    reduce: bool = False,
    budget_tries: int = 400,
    budget_s: float = 600.0,
    timeout_s: float = PASS_TIMEOUT_S,
    say: Callable[[str], None] = lambda line: None,
) -> Replay:
    """Replay ``case``'s reproducer under ``case.python``; write the outputs to ``folder``.

    The steps: read the reproducer, bind its passes to the release's bindings, scan them
    one at a time, confirm the first failing pass alone, reduce its IR (``reduce``), write
    ``replay.py``, the lit test and ``replay.json``."""
    started = time.monotonic()
    captured = read_reproducer(case)
    folder.mkdir(parents=True, exist_ok=True)
    with scratch_folder("replay") as scratch:
        work = Path(scratch)
        version, table, mapped = bind_passes(case, captured, work, say)
        write_atomic(folder / "captured.mlir", captured.text)
        scan = scan_passes(case, captured, mapped, version, work, timeout_s)
        record = replay_record(case, captured, version, mapped, scan)
        if scan.failing is None or scan.failed_run is None:
            return _no_pass_failed(folder, record, scan, mapped, version, started)
        failing = confirm(case, scan, mapped, table, folder, work, timeout_s)
        lines = _describe_failing(failing, len(mapped), version, timeout_s)
        record["first_failing"] = _failing_record(failing, len(mapped))
        record["confirmed"] = failing.confirmed
        record["confirm"] = {"status": failing.alone.status, "seconds": failing.alone.seconds}
        record["files"].update({"before": failing.before.name, "replay_py": "replay.py"})
        lit_source, lit_diagnostic = failing.before_text, failing.diagnostic
        if reduce and failing.confirmed:
            reducer, outcome = reduce_ir(
                case, failing, folder, work, budget_tries, budget_s, timeout_s, say
            )
            record["reduction"] = outcome.to_json()
            record["files"]["reduced"] = f"reduced-{failing.name}.mlir"
            lit_source, lit_diagnostic = reducer.best, reducer.best_diagnostic
            lines.append(
                f"reduced: {outcome.lines_before} -> {outcome.lines_after} lines, "
                f"{outcome.ops_before} -> {outcome.ops_after} ops "
                f"({outcome.tries} tries, {outcome.seconds} s"
                + (", interrupted" if outcome.interrupted else "")
                + f"): reduced-{failing.name}.mlir"
            )
        write_outputs(case, failing, version, lit_source, lit_diagnostic, folder, record)
        record["seconds"] = round(time.monotonic() - started, 3)
        write_atomic(folder / "replay.json", json.dumps(record, indent=2) + "\n")
        lines.append(
            f"wrote {folder}/: {failing.before.name}, replay.py, {failing.name}.mlir, replay.json"
            + (f", reduced-{failing.name}.mlir" if record["reduction"] else "")
        )
        status = EXIT_FOUND if failing.confirmed else EXIT_NOT_REPRODUCED
        return Replay(folder, record, status, lines)


def read_reproducer(case: ReplayCase) -> ReplaySource:
    """Read: the reproducer of the failing stage, its IR and its recorded pipeline."""
    source = choose_reproducer(case.reproducers, case.result.site.stage)
    text = source.read_text(errors="replace")
    ir_text, pipeline = split_reproducer(text)
    if not pipeline:
        raise ReplayError(f"{source} has no mlir_reproducer pipeline: not an MLIR reproducer")
    try:
        anchor, passes = parse_pipeline(pipeline)
    except PipelineError as exc:
        raise ReplayError(f"{source}: {exc}") from None
    if not passes:
        raise ReplayError(f"{source}: the recorded pipeline is empty")
    return ReplaySource(source, text, ir_text, anchor, passes)


def bind_passes(
    case: ReplayCase, captured: ReplaySource, work: Path, say: Callable[[str], None]
) -> tuple[str, list[Binding], list[Mapped]]:
    """Bind: probe the release's bindings and map every recorded pass to one (or stop)."""
    version, table = probe(case.python, work)
    say(f"triton {version} ({case.python}): {len(table)} pass bindings probed")
    mapped, missing = map_passes(captured.passes, table)
    if missing:
        raise ReplayError(
            f"triton {version} has no binding for pass {missing[0]}"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
        )
    return version, table, mapped


def scan_passes(
    case: ReplayCase,
    captured: ReplaySource,
    mapped: list[Mapped],
    version: str,
    work: Path,
    timeout_s: float,
) -> Scan:
    """Scan: each pass in its own child on the IR the one before wrote, to the first that
    fails; an IR that does not parse, or a binding that is not there, stops the replay."""
    scan = Scan([], work / "ir-000.mlir")
    scan.current.write_text(captured.ir_text)
    for index, step in enumerate(mapped):
        after = work / f"ir-{index + 1:03d}.mlir"
        ran = run_pass(case.python, scan.current, step, after, work, timeout_s)
        scan.steps.append(
            {
                "index": index + 1,
                "pass": step.spec.text,
                "call": step.call,
                "status": ran.status,
                "seconds": ran.seconds,
            }
        )
        if ran.status == "ok":
            scan.current = after
            continue
        if ran.status == "unparsable":
            line = first_error_line(ran.stderr)
            if index == 0:
                raise ReplayError(
                    f"the reproducer does not parse under triton {version} (captured under "
                    f"triton {case.recorded_triton or 'unknown'}; MLIR text is specific "
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
        scan.failing, scan.failed_run = index, ran
        break
    return scan


def replay_record(
    case: ReplayCase, captured: ReplaySource, version: str, mapped: list[Mapped], scan: Scan
) -> ReplayRecord:
    """``replay.json`` as far as the scan goes (the later steps fill in the rest)."""
    passes = captured.passes
    return {
        "schema": SCHEMA,
        "subject": {
            **case.origin,
            "case_id": case.result.case_id,
            "signature": str(case.result.signature or ""),
            "outcome": case.result.outcome.label,
        },
        "triton": version,
        "recorded_triton": case.recorded_triton,
        "python": case.python,
        "notes": list(case.notes),
        "reproducer": {
            "path": str(captured.source),
            "copy": "captured.mlir",
            "anchor": captured.anchor,
            "passes": len(passes),
            "style": "one pass (the failing one)" if len(passes) == 1 else "whole stage",
        },
        "mapping": [m.to_json() for m in mapped],
        "scan": scan.steps,
        "first_failing": None,
        "confirmed": False,
        "files": {"captured": "captured.mlir", "record": "replay.json"},
        "reduction": None,
    }


def _no_pass_failed(
    folder: Path,
    record: ReplayRecord,
    scan: Scan,
    mapped: list[Mapped],
    version: str,
    started: float,
) -> Replay:
    write_atomic(folder / "after-all.mlir", scan.current.read_text())
    record["files"]["after_all"] = "after-all.mlir"
    record["seconds"] = round(time.monotonic() - started, 3)
    write_atomic(folder / "replay.json", json.dumps(record, indent=2) + "\n")
    last = scan.steps[-1]["status"] if scan.steps else "none"
    line = (
        f"no pass failed: all {len(mapped)} passes ran one at a time under triton "
        f"{version} (last: {last}); the failure does not replay pass by pass"
    )
    return Replay(folder, record, EXIT_NOT_REPRODUCED, [line])


def confirm(
    case: ReplayCase,
    scan: Scan,
    mapped: list[Mapped],
    table: list[Binding],
    folder: Path,
    work: Path,
    timeout_s: float,
) -> Failing:
    """Confirm: save the IR just before the failing pass and run that pass alone on it."""
    assert scan.failing is not None and scan.failed_run is not None
    step = mapped[scan.failing]
    name = pass_file_name(step.spec)
    before = folder / f"before-{name}.mlir"
    before_text = scan.current.read_text()
    write_atomic(before, before_text)
    alone = run_pass(case.python, before, step, None, work, timeout_s)
    failed = scan.failed_run
    confirmed = (
        alone.failed and alone.diagnostic.pass_name == failed.diagnostic.pass_name
    ) or alone.status == failed.status == "timeout"
    diagnostic = alone.diagnostic if alone.failed else failed.diagnostic
    flag_options = {
        o: step.spec.options[o] for o in _options_set(step, table) if o in step.spec.options
    }
    flag = (
        pass_flag(step.spec, flag_options)
        if step.spec.nested is None
        else f'-pass-pipeline="builtin.module({step.spec.text})"'
    )
    return Failing(
        step, scan.failing, name, before, before_text, failed, alone, confirmed, diagnostic, flag
    )


def _failing_record(failing: Failing, of: int) -> FailingJson:
    step = failing.step
    return {
        "index": failing.index + 1,
        "of": of,
        "pass": pass_name_of(step.spec),
        "pass_text": step.spec.text,
        "pass_name": failing.diagnostic.pass_name,
        "flag": failing.flag,
        "call": step.call,
        "binding": step.binding,
        "args": [arg.to_json() for arg in step.args],
        "notes": step.notes,
        "diagnostic": failing.diagnostic.to_json(),
        "stderr": _diagnostic_lines(failing.run.stderr),
    }


def _describe_failing(failing: Failing, of: int, version: str, timeout_s: float) -> list[str]:
    diagnostic = failing.diagnostic
    lines = [
        f"first failing pass: {pass_name_of(failing.step.spec)} "
        f"({diagnostic.pass_name or '?'}), pass {failing.index + 1} of {of}, triton {version}"
    ]
    lines += [f"  {line}" for line in diagnostic.lines()[:6]]
    how = "failed"
    if diagnostic.crashed:
        how = "crashed (a signal caught by MLIR's crash recovery)"
    if failing.run.status == "timeout":
        how = f"timed out ({timeout_s:g} s)"
    lines.append(
        f"  alone on {failing.before.name}: "
        + (
            f"{how} again"
            if failing.confirmed
            else f"did not fail the same way ({failing.alone.status})"
        )
    )
    return lines


def reduce_ir(
    case: ReplayCase,
    failing: Failing,
    folder: Path,
    work: Path,
    budget_tries: int,
    budget_s: float,
    timeout_s: float,
    say: Callable[[str], None],
) -> tuple[Reducer, Reduction]:
    """Reduce: shrink the IR before the failing pass while it fails the same way; the
    reducer (its best IR) and what it did."""
    reducer = Reducer(
        case.python,
        failing.step,
        failing.diagnostic,
        folder / f"reduced-{failing.name}.mlir",
        work,
        budget_tries=budget_tries,
        budget_s=budget_s,
        timeout_s=min(timeout_s, max(20.0, 20 * failing.alone.seconds)),
        say=say,
    )
    return reducer, reducer.run(failing.before_text)


def write_outputs(
    case: ReplayCase,
    failing: Failing,
    version: str,
    lit_source: str,
    lit_diagnostic: Diagnostic,
    folder: Path,
    record: ReplayRecord,
) -> None:
    """Write: ``replay.py`` (runs the pass on the saved IR) and the lit test."""
    script = replay_script(failing.before.name, failing.step, version, case)
    write_atomic(folder / "replay.py", script)
    (folder / "replay.py").chmod(0o755)
    lit = lit_test(lit_source, failing.step, failing.flag, lit_diagnostic, version, case)
    write_atomic(folder / f"{failing.name}.mlir", lit)
    record["files"]["lit_test"] = f"{failing.name}.mlir"


def _options_set(step: Mapped, table: list[Binding]) -> list[str]:
    """The options of ``step``'s pass that its binding's arguments set."""
    for entry in table:
        if entry.path == step.binding and entry.params:
            return [p.option for p in entry.params if p.option]
    return list(step.spec.options) if step.args else []


def _diagnostic_lines(text: str, limit: int = 40) -> list[str]:
    """The diagnostic lines of a child's stderr, without the reproducer MLIR may print."""
    return [line for line in text.splitlines() if DIAGNOSTIC.match(line.strip())][:limit]
