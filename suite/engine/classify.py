"""Turn how a child ended into an outcome and a signature.

The child reports facts (the phase it reached, the exception it saw, the
compile metadata); the parent adds what only it knows (the exit status, the
signal, a timeout, the memory cap) and the stderr it captured. MLIR pass
failures are the reason stderr matters: the Python exception only says
``PassManager::run failed``, and the pass is named in the MLIR diagnostic.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suite.engine.child import STAGE_FUNCTIONS
from suite.engine.isolate import Exit
from suite.engine.outcome import Outcome, Signature
from suite.engine.signature import normalize, signature_text
from suite.toolchain.limits import TargetLimits

PASS_FAILURE = re.compile(r"Pipeline failed while executing \[?`([^`]+)`")
MLIR_ERROR = re.compile(r"^.*?\berror: (.*)$", re.MULTILINE)
GENERIC_MLIR_ERRORS = ("Failures have been detected while processing an MLIR pass pipeline",)
PTXAS_CODE = re.compile(r"\b(C\d{4,5})\b")
PTXAS_ERROR_LINE = re.compile(r"ptxas[\w-]*\s*(?:fatal|error)\s*:\s*(.*)")
PTXAS_UNKNOWN_ARCH = re.compile(r"Value '(sm_\w+)' is not defined for option 'gpu-name'")
FAULTHANDLER_FRAME = re.compile(r'File ".*?", line \d+ in (\w+)')


@dataclass
class Classification:
    outcome: Outcome
    signature: Signature | None = None
    message: str = ""
    detail: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)


def read_events(report: Path) -> list[dict[str, Any]]:
    """The child's events; a torn last line (the child died mid-write) is ignored."""
    if not report.exists():
        return []
    events = []
    for line in report.read_text(errors="replace").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return events


def classify(events: list[dict[str, Any]], exit: Exit, limits: TargetLimits) -> Classification:
    """The one outcome for a case, with its signature when it is a failure."""
    by_kind: dict[str, dict[str, Any]] = {}
    for event in events:
        by_kind[event["event"]] = event
    phases = [e["phase"] for e in events if e["event"] == "phase"]
    phase = phases[-1] if phases else ("load" if events else "start")
    compiled = by_kind.get("compiled", {})
    metrics = _metrics(compiled)
    stderr = exit.stderr.text

    if "skipped" in by_kind:
        return Classification(Outcome.SKIPPED, message=by_kind["skipped"]["reason"])
    if exit.timed_out:
        stage = _stage_from_faulthandler(stderr) if phase == "compile" else None
        return _failure(
            Outcome.TIMEOUT,
            [phase, stage],
            f"killed after the timeout in {phase}",
            {"phase": phase, "stage": stage},
            metrics,
        )
    if exit.memory_exceeded:
        mib = exit.peak_rss_bytes >> 20
        return _failure(
            Outcome.CRASH,
            ["memory-cap", phase],
            f"killed at the memory cap ({mib} MiB resident) in {phase}",
            {"phase": phase, "signal": "SIGKILL", "memory_cap": True},
            metrics,
        )
    if exit.signal_name:
        stage = _stage_from_faulthandler(stderr) if phase == "compile" else None
        pass_name = _failed_pass(stderr)
        return _failure(
            Outcome.CRASH,
            [exit.signal_name, phase, stage, pass_name],
            f"{exit.signal_name} in {phase}" + (f" ({stage})" if stage else ""),
            {"phase": phase, "signal": exit.signal_name, "stage": stage, "pass": pass_name},
            metrics,
        )
    if "error" in by_kind:
        return _from_error(by_kind["error"], stderr, metrics)
    if "done" not in by_kind:
        return _failure(
            Outcome.CRASH,
            [f"exit-{exit.returncode}", phase],
            f"exited with status {exit.returncode} in {phase} without reporting",
            {"phase": phase, "returncode": exit.returncode},
            metrics,
        )
    over = _over_limit(compiled, limits)
    if over:
        resource, used, limit = over
        return _failure(
            Outcome.RESOURCE_LIMIT,
            [resource],
            f"{resource}: {used} needed, the {limits.name} limit is {limit}",
            {"resource": resource, "used": used, "limit": limit, "target": limits.name},
            metrics,
        )
    return Classification(Outcome.PASSED, metrics=metrics)


def _failure(
    outcome: Outcome,
    parts: list[str | None],
    message: str,
    detail: dict[str, Any],
    metrics: dict[str, Any],
) -> Classification:
    signature = Signature(signature_text(outcome.label, *parts))
    return Classification(outcome, signature, message, detail, metrics)


def _from_error(error: dict[str, Any], stderr: str, metrics: dict[str, Any]) -> Classification:
    phase = error["phase"]
    text = error.get("message", "")
    kind = error.get("type", "")
    combined = text + "\n" + stderr
    unknown_arch = PTXAS_UNKNOWN_ARCH.search(combined)
    if unknown_arch:
        return Classification(
            Outcome.SKIPPED,
            message=f"toolchain-gap: this Triton's ptxas does not know {unknown_arch.group(1)}",
            detail={"toolchain_gap": unknown_arch.group(1)},
        )
    if kind == "PTXASError" or "ptxas" in text.lower():
        code_match = PTXAS_CODE.search(combined)
        line_match = PTXAS_ERROR_LINE.search(combined)
        line = line_match.group(1) if line_match else text.splitlines()[0] if text else kind
        code = code_match.group(1) if code_match else None
        return _failure(
            Outcome.PTXAS_ERROR,
            [code or normalize(line)],
            f"ptxas: {line.strip()}",
            {"phase": phase, "stage": "cubin", "ptxas_code": code},
            metrics,
        )
    if kind == "OutOfResources":
        resource = "shared-memory" if "shared" in text.lower() else normalize(text)
        return _failure(
            Outcome.RESOURCE_LIMIT,
            [resource],
            text.splitlines()[0] if text else kind,
            {"phase": phase, "resource": resource},
            metrics,
        )
    if kind == "LimitViolation":
        # A reproducer's static check refused the case before anything ran.
        rule = _first_line(text).split(":", 1)[0].strip()
        return _failure(
            Outcome.USER_ERROR,
            [rule],
            _first_line(text),
            {"phase": phase, "rule": rule},
            metrics,
        )
    if kind == "WrongResult":
        return _failure(
            Outcome.WRONG_RESULT,
            [phase],
            text.splitlines()[0] if text else kind,
            {"phase": phase},
            metrics,
        )
    if phase == "compile":
        stage = error.get("stage")
        pass_name = _failed_pass(stderr)
        reason = pass_name or _first_mlir_error(stderr) or _first_line(text) or kind
        return _failure(
            Outcome.COMPILER_ERROR,
            [stage, pass_name or normalize(f"{kind}: {reason}")],
            f"{stage or 'compile'}: " + (f"pass {pass_name} failed" if pass_name else reason),
            {"phase": phase, "stage": stage, "pass": pass_name, "exception": kind},
            metrics,
        )
    return _failure(
        Outcome.RUNTIME_ERROR,
        [phase, normalize(f"{kind}: {_first_line(text)}")],
        f"{phase}: {kind}: {_first_line(text)}",
        {"phase": phase, "exception": kind},
        metrics,
    )


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _failed_pass(stderr: str) -> str | None:
    match = PASS_FAILURE.search(stderr)
    return match.group(1) if match else None


def _first_mlir_error(stderr: str) -> str | None:
    for match in MLIR_ERROR.finditer(stderr):
        message = match.group(1).strip()
        if message not in GENERIC_MLIR_ERRORS:
            return message
    return None


def _stage_from_faulthandler(stderr: str) -> str | None:
    """faulthandler lists the innermost frame first."""
    for name in FAULTHANDLER_FRAME.findall(stderr):
        if name in STAGE_FUNCTIONS:
            return STAGE_FUNCTIONS[name]
    return None


def _metrics(compiled: dict[str, Any]) -> dict[str, Any]:
    metrics = {
        k: compiled[k] for k in ("shared_bytes", "tmem_columns") if compiled.get(k) is not None
    }
    metrics.update(compiled.get("extra") or {})
    return metrics


def _over_limit(compiled: dict[str, Any], limits: TargetLimits) -> tuple[str, int, int] | None:
    shared = compiled.get("shared_bytes")
    if shared is not None and shared > limits.shared_bytes:
        return ("shared-memory", shared, limits.shared_bytes)
    tmem = compiled.get("tmem_columns")
    if tmem and limits.tmem_columns is not None and tmem > limits.tmem_columns:
        return ("tensor-memory", tmem, limits.tmem_columns)
    return None
