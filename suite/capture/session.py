"""``repro capture``: run the program with the hook, then turn each failure into a
reproducer file, run it in isolation and keep it as a finding only if it fails there
with the signature the program showed.

Steps, in order: :func:`run_program`, :func:`write_reproducers`, :func:`confirm`,
:func:`write_kernel_reproducers` (``--all``), :func:`write_summary`.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypedDict

from suite.api import Config
from suite.capture import generate, program
from suite.capture.generate import Failure
from suite.capture.site.repro_capture_records import load_autotune
from suite.engine import (
    Baseline,
    Bounds,
    CaseResult,
    Environment,
    Execution,
    capture_source,
    scrub_secrets,
)
from suite.engine import session as engine
from suite.failures.findings import DirectoryFindingsStore, Finding, SeenConfig
from suite.files import own_folder


class CapturedFailureJson(TypedDict):
    """One failure in ``capture.json`` (docs/schemas.md)."""

    kernel: str
    defined_at: str
    phase: str
    surfaced_later: bool
    target: str
    triton: str
    record: str
    same_signature_records: list[str]
    observed: str
    handled_by: str
    file: str | None
    not_generated: str
    isolated: str | None
    isolated_outcome: str
    reproduced: bool
    evidence: str
    result: str
    finding: str


class ProgramJson(TypedDict):
    pid: int
    returncode: int
    signal: str | None
    duration_s: float
    timeout_s: float | None
    memory_cap_bytes: int | None
    timed_out: bool
    memory_exceeded: bool
    left_behind: int
    stopped: bool


class CaptureSummary(TypedDict):
    """``capture.json``, and ``repro capture --json`` (docs/schemas.md)."""

    folder: str
    command: list[str]
    exit_status: int
    program: ProgramJson
    confirmed: bool
    compile_records: int
    failures: list[CapturedFailureJson]
    kernel_reproducers: list[str]
    autotune_configs: list[str]
    hook_errors: str


@dataclass
class CapturedFailure:
    """One failure, its reproducer file, and what the isolated run of it said."""

    failure: Failure
    file: Path | None = None
    not_generated: str = ""  # why no file was written
    isolated: str | None = None  # the isolated run's signature
    isolated_outcome: str = ""
    reproduced: bool = False
    evidence: str = ""  # on what the isolated run confirms it (generate.confirmation)
    result_ref: str = ""  # RUN_DIR:CASE_ID, for `repro report`
    finding: str = ""  # the finding's id, for `repro report`

    def to_json(self) -> CapturedFailureJson:
        return {
            "kernel": self.failure.kernel.name,
            "defined_at": f"{self.failure.kernel.file}:{self.failure.kernel.line}",
            "phase": self.failure.phase,
            "surfaced_later": self.failure.deferred,
            "target": self.failure.target,
            "triton": self.failure.triton,
            "record": str(self.failure.path),
            "same_signature_records": [str(p) for p in self.failure.duplicates],
            "observed": self.failure.signature,
            "handled_by": self.failure.handled_by,
            "file": str(self.file) if self.file else None,
            "not_generated": self.not_generated,
            "isolated": self.isolated,
            "isolated_outcome": self.isolated_outcome,
            "reproduced": self.reproduced,
            "evidence": self.evidence,
            "result": self.result_ref,
            "finding": self.finding,
        }


@dataclass
class Capture:
    """The capture folder and everything found there."""

    folder: Path
    output: Path
    program: program.ProgramRun | None = None
    captured: list[CapturedFailure] = field(default_factory=list)
    autotune_configs: list[Path] = field(default_factory=list)
    kernel_reproducers: list[Path] = field(default_factory=list)
    compiles_recorded: int = 0
    hook_errors: str = ""
    bounds: Bounds | None = None
    confirmed: bool = False  # the reproducers were run in isolation


def new_folder(output: Path) -> Path:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    folder = own_folder(output, "captures") / stamp
    folder.mkdir()
    return folder


def run_program(
    capture: Capture,
    command: list[str],
    keep_all: bool,
    bounds: Bounds | None = None,
    stdout_to_stderr: bool = False,
) -> None:
    """Run the program within ``bounds`` (none by default: see :mod:`suite.capture.program`);
    ``stdout_to_stderr``: its stdout goes to this process's stderr (``--json``)."""
    capture.bounds = bounds or program.program_bounds(None, None)
    capture.program = program.run(
        command, capture.folder, keep_all, capture.bounds, stdout_to_stderr
    )
    errors = capture.folder / "hook-errors.txt"
    capture.hook_errors = errors.read_text() if errors.exists() else ""


def write_reproducers(capture: Capture) -> None:
    assert capture.program is not None
    capture.compiles_recorded = len(list((capture.folder / "compiles").glob("*.json")))
    folder = capture.folder / "reproducers"
    for failure in generate.failures(capture.folder, capture.program):
        captured = CapturedFailure(failure)
        capture.captured.append(captured)
        if failure.handled_by:
            captured.not_generated = f"the program caught it ({failure.handled_by})"
        elif failure.refused:
            captured.not_generated = f"Triton's frontend refused it, not a bug: {failure.message}"
        elif not failure.target:
            captured.not_generated = "not a CUDA target"
        else:
            folder.mkdir(exist_ok=True)
            path = folder / f"{generate.reproducer_id(failure).replace('-', '_')}.py"
            path.write_text(scrub_secrets(generate.render(failure)))
            captured.file = path


def confirm(capture: Capture, execution: Execution, on_result: Callable[[str], None]) -> None:
    """Run each reproducer in isolation under the program's interpreter, for its target and
    its ``captured`` config, and compare the signature with the program's."""
    store = DirectoryFindingsStore(capture.output / "findings")
    capture.confirmed = True
    for captured in capture.captured:
        if captured.file is None:
            continue
        failure = captured.failure
        selection = engine.Selection(
            repros=[str(captured.file)], targets=[failure.target], sets=["captured"]
        )
        outcome = engine.run(
            selection,
            capture.output,
            replace(execution, python=failure.python),
            Baseline.load(None),
        )
        result = outcome.results[0]
        captured.isolated = result.signature.text if result.signature else None
        captured.isolated_outcome = result.outcome.label
        captured.result_ref = f"{outcome.store.folder}:{result.case_id}"
        if result.outcome.is_failure:
            captured.evidence = generate.confirmation(
                failure.signature, captured.isolated, failure.deferred
            )
        captured.reproduced = bool(captured.evidence)
        if captured.reproduced and captured.isolated:
            if captured.isolated != failure.signature:
                # Run by itself, the file judges what it prints against the engine's own
                # signature of it, not against what the program could show.
                text = generate.render(failure, expected=captured.isolated)
                captured.file.write_text(scrub_secrets(text))
            captured.finding = _remember(store, captured, result, outcome.environment)
        verdict = f"reproduced ({captured.evidence})" if captured.reproduced else "NOT reproduced"
        on_result(
            f"{failure.kernel.name}: {verdict} in isolation"
            f" ({captured.isolated_outcome}: {captured.isolated})"
        )


def _remember(
    store: DirectoryFindingsStore,
    captured: CapturedFailure,
    result: CaseResult,
    environment: Environment,
) -> str:
    carried = capture_source({"path": str(captured.file)})
    finding = Finding.of(
        result,
        captured.isolated or "",
        environment,
        failing=[SeenConfig(result.target, dict(result.config))],
        source=carried.to_json(with_text=True) if carried else None,
        sanitizer=result.notes.sanitizer,
    )
    return store.path_of(store.record(finding)).stem


def write_kernel_reproducers(capture: Capture) -> None:
    """With ``--all``: a reproducer of each kernel that compiled (its first compile), whose
    domains hold its autotuner's configs, and those configs as a JSON list completed with
    the kernel's captured values, ready for ``repro gate --kernel FILE --current LIST``."""
    tuned = {}
    for path in sorted((capture.folder / "autotune").glob("*.json")):
        record = load_autotune(path)
        tuned[(record.kernel.file, record.kernel.name)] = record
    folder = capture.folder / "reproducers"
    for kernel in generate.compiled_kernels(capture.folder):
        autotuner = tuned.get((kernel.kernel.file, kernel.kernel.name))
        configs = [_gate_entry(c) for c in autotuner.configs] if autotuner else []
        folder.mkdir(exist_ok=True)
        path = folder / f"{generate.reproducer_id(kernel).replace('-', '_')}.py"
        path.write_text(scrub_secrets(generate.render(kernel, configs)))
        capture.kernel_reproducers.append(path)
        if autotuner is not None:
            captured = generate.captured_config(kernel)
            listing = capture.folder / "autotune-configs" / f"{path.stem}.json"
            listing.parent.mkdir(exist_ok=True)
            entries = [{**captured, **config} for config in configs]
            listing.write_text(json.dumps(entries, indent=1) + "\n")
            capture.autotune_configs.append(listing)


def _gate_entry(config: Config) -> Config:
    """A ``triton.Config`` as the gate reads it: Triton's defaults left out."""
    return {
        k: v
        for k, v in config.items()
        if not (k == "num_ctas" and v == 1) and not (k == "maxnreg" and v is None)
    }


def write_summary(capture: Capture) -> CaptureSummary:
    """``capture.json``, also what ``repro capture --json`` prints (``docs/schemas.md``)."""
    ran = capture.program
    assert ran is not None
    bounds = capture.bounds
    timeout = bounds.timeout_s if bounds is not None else math.inf
    summary: CaptureSummary = {
        "folder": str(capture.folder),
        "command": ran.command,
        "exit_status": ran.exit_status,
        "program": {
            "pid": ran.pid,
            "returncode": ran.returncode,
            "signal": ran.signal_name,
            "duration_s": round(ran.duration_s, 3),
            "timeout_s": timeout if math.isfinite(timeout) else None,
            "memory_cap_bytes": bounds.memory_bytes if bounds is not None else None,
            "timed_out": ran.timed_out,
            "memory_exceeded": ran.memory_exceeded,
            "left_behind": ran.left_behind,
            "stopped": ran.stopped,
        },
        "confirmed": capture.confirmed,
        "compile_records": capture.compiles_recorded,
        "failures": [c.to_json() for c in capture.captured],
        "kernel_reproducers": [str(p) for p in capture.kernel_reproducers],
        "autotune_configs": [str(p) for p in capture.autotune_configs],
        "hook_errors": capture.hook_errors,
    }
    (capture.folder / "capture.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary
