"""What a failing case left behind, read for a report: its output, its error, its records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from suite.engine import EVENTS, CaseResult, Error, Outcome, errors_in, read_lines

#: The MLIR reproducers Triton writes for a failing compile start with this.
MLIR_REPRODUCER = "mlir-reproducer"


def read_artifact(path: str | None, limit: int = 64 << 20) -> str:
    """The text of an artifact file ('' when there is none), at most ``limit`` characters."""
    if not path or not Path(path).is_file():
        return ""
    with open(path, errors="replace") as handle:
        return handle.read(limit)


def error_events(result: CaseResult) -> list[Error]:
    """The ``error`` events the case's child recorded, in order."""
    return errors_in(read_lines(result.artifacts.get(EVENTS)))


def captured_output(result: CaseResult) -> str:
    """What the case printed (stderr, stdout) and its error event's traceback."""
    parts = []
    for name in ("stderr.txt", "stdout.txt"):
        text = read_artifact(result.artifacts.get(name))
        if text.strip():
            parts.append(text.rstrip("\n"))
    for event in error_events(result):
        parts.append((event.traceback or event.message).rstrip("\n"))
    if not parts and result.message:
        parts.append(result.message)
    return "\n".join(parts)


def error_line(result: CaseResult) -> str:
    """``Type: first line`` of the exception the case raised, else the result's message."""
    for event in error_events(result):
        first = next((x.strip() for x in event.message.splitlines() if x), "")
        return f"{event.type or 'Error'}: {first}" if first else event.type
    exception = result.facts.exception
    if exception and result.outcome is Outcome.COMPILER_ERROR and result.site.pass_name:
        return f"{exception} (pass {result.site.pass_name} failed)"
    return result.message


def mlir_reproducers(result: CaseResult) -> dict[str, Path]:
    """The MLIR reproducer files the case left, by artifact name."""
    return {
        name: Path(path)
        for name, path in sorted(result.artifacts.items())
        if name.startswith(MLIR_REPRODUCER) and Path(path).is_file()
    }


def program_record(text: str) -> str:
    """The last JSON object a CUDA reproducer program printed (its descriptor and errors)."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict) and len(value) > 1:
                return json.dumps(value, indent=2)
    return ""


def ptxas_invocation(text: str) -> str:
    """The ptxas command lines a failure's text shows (``Repro command:``, ``--gpu-name``)."""
    lines = [
        line.strip()
        for line in text.splitlines()
        if "Repro command:" in line or ("ptxas" in line and "--gpu-name" in line)
    ]
    return "\n".join(dict.fromkeys(lines))


def explained(folder: Path) -> dict[str, Any] | None:
    """What ``repro explain`` left in the report folder (``explain/explain.json``): the
    first pass where the failure and its passing variant part, for the issue's IR section."""
    record = folder / "explain" / "explain.json"
    if not record.is_file():
        return None
    found = json.loads(record.read_text())
    first = found.get("first_difference") or {}
    return {
        "line": first.get("line", ""),
        "pass_name": first.get("pass", ""),
        "change": ", ".join(f"{k}={v}" for k, v in (found.get("change") or {}).items()),
        "diff": "\n".join(str(first.get("diff", "")).splitlines()[:40]),
        "ptx_differs": found.get("ptx_differs"),
        "stopped": first.get("stopped", False),
    }


def ir_replay(folder: Path) -> dict[str, Any] | None:
    """What ``repro replay`` left in the report folder, for the issue's IR section."""
    record = folder / "replay.json"
    if not record.is_file():
        return None
    replay = json.loads(record.read_text())
    failing = replay.get("first_failing")
    if not failing:
        return None
    files = replay.get("files", {})
    lit = files.get("lit_test")
    return {
        "pass_name": failing.get("pass_name") or failing.get("pass"),
        "flag": failing.get("flag", ""),
        "call": failing.get("call", ""),
        "triton": replay.get("triton", ""),
        "confirmed": replay.get("confirmed", False),
        "files": files,
        "reduction": replay.get("reduction"),
        "lit_text": (folder / lit).read_text() if lit and (folder / lit).is_file() else "",
    }
