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
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suite.engine.record import safe_name
from suite.files import write_atomic
from suite.replay.bindings import Mapped, map_passes
from suite.replay.case import ReplayCase, choose_reproducer
from suite.replay.diagnostic import (
    DIAGNOSTIC,
    EXIT_FOUND,
    EXIT_NOT_REPRODUCED,
    PASS_TIMEOUT_S,
    SCHEMA,
    ReplayError,
)
from suite.replay.passes import PassRun, first_error_line, probe, run_pass
from suite.replay.pipeline import (
    PassSpec,
    PipelineError,
    parse_pipeline,
    pass_flag,
    split_reproducer,
)
from suite.replay.script import lit_test, replay_script

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


def pass_name_of(spec: PassSpec) -> str:
    """The pass's own name (the inner one of a nested ``tt.func(x)``)."""
    while spec.nested:
        spec = spec.nested[0]
    return spec.name


def pass_file_name(spec: PassSpec) -> str:
    return safe_name(pass_name_of(spec)) or "pass"


def replay(
    case: ReplayCase,
    folder: Path,
    reduce: bool = False,
    budget_tries: int = 400,
    budget_s: float = 600.0,
    timeout_s: float = PASS_TIMEOUT_S,
    say: Callable[[str], None] = lambda line: None,
) -> Replay:
    """Replay ``case``'s reproducer under ``case.python``; write the outputs to ``folder``."""
    started = time.monotonic()
    source = choose_reproducer(case.reproducers, case.result.detail.get("stage"))
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
        version, table = probe(case.python, work)
        say(f"triton {version} ({case.python}): {len(table)} pass bindings probed")
        mapped, missing = map_passes(passes, table)
        if missing:
            raise ReplayError(
                f"triton {version} has no binding for pass {missing[0]}"
                + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
            )
        write_atomic(folder / "captured.mlir", source.read_text(errors="replace"))
        current = work / "ir-000.mlir"
        current.write_text(ir_text)
        scan: list[dict[str, Any]] = []
        failing: int | None = None
        failed_run: PassRun | None = None
        for index, step in enumerate(mapped):
            after = work / f"ir-{index + 1:03d}.mlir"
            ran = run_pass(case.python, current, step, after, work, timeout_s)
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
            failing, failed_run = index, ran
            break
        record: dict[str, Any] = {
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
            write_atomic(folder / "after-all.mlir", current.read_text())
            record["files"]["after_all"] = "after-all.mlir"
            record["seconds"] = round(time.monotonic() - started, 3)
            write_atomic(folder / "replay.json", json.dumps(record, indent=2) + "\n")
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
        write_atomic(before, before_text)
        confirm = run_pass(case.python, before, step, None, work, timeout_s)
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
                case.python,
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
        write_atomic(folder / "replay.py", replay_script(before.name, step, version, case))
        (folder / "replay.py").chmod(0o755)
        lit = lit_test(lit_source, step, flag, lit_diagnostic, version, case)
        write_atomic(folder / f"{name}.mlir", lit)
        record["files"]["lit_test"] = f"{name}.mlir"
        record["seconds"] = round(time.monotonic() - started, 3)
        write_atomic(folder / "replay.json", json.dumps(record, indent=2) + "\n")
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
