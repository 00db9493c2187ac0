"""Running passes: each pass, probe or IR query in its own isolated child."""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from suite.children import Role, child_argv
from suite.engine import DEFAULTS, Bounds, Exit, Unreadable, child_env, run_isolated
from suite.replay.bindings import Binding, Mapped
from suite.replay.child import EXIT_NO_BINDING, EXIT_OK, EXIT_PASS_FAILED, EXIT_UNPARSABLE
from suite.replay.diagnostic import PROBE_RESTARTS, Diagnostic, ReplayError, parse_diagnostic
from suite.replay.protocol import (
    PassPlan,
    PipelineSaid,
    Probed,
    ProbeDone,
    Probing,
    ReplayMessage,
    TypesSaid,
    Version,
)


def _env() -> dict[str, str]:
    """The child's environment: the shim on PYTHONPATH, and no reproducer path, so that
    MLIR's crash recovery prints to stderr and says when it caught a signal."""
    env = child_env({"PYTHONUNBUFFERED": "1"})
    env.pop("TRITON_REPRODUCER_PATH", None)
    return env


def _child(python: str, args: list[str], timeout_s: float) -> Exit:
    argv = child_argv(python, Role.REPLAY, *args)
    bounds = Bounds(timeout_s=timeout_s, memory_bytes=DEFAULTS.bounds.memory_bytes)
    return run_isolated(argv, env=_env(), bounds=bounds)


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
    plan.write_text(PassPlan.of(mapped).to_json())
    args = ["run", str(ir), str(plan)] + ([str(out)] if out is not None else [])
    ended = _child(python, args, timeout_s)
    stderr = ended.stderr.text
    pipeline = None
    for line in ended.stdout.text.splitlines():  # MLIR may print there too: skipped
        with contextlib.suppress(Unreadable):
            said = ReplayMessage.from_line(line)
            pipeline = said.pipeline if isinstance(said, PipelineSaid) else pipeline
    diagnostic = parse_diagnostic(stderr, ended.signal_name)
    if ended.timed_out:
        status = "timeout"
    elif ended.returncode == EXIT_OK:
        status = "ok"
    elif ended.returncode == EXIT_PASS_FAILED or (
        ended.signal_name and "replay_child: running" in stderr
    ):
        status = "failed"
    elif ended.returncode == EXIT_UNPARSABLE:
        status = "unparsable"
    elif ended.returncode == EXIT_NO_BINDING:
        status = "no-binding"
    else:
        status = "error"
    if status == "failed" and diagnostic.pass_name is None and ended.signal_name:
        diagnostic.pass_name = mapped.spec.name
    return PassRun(status, diagnostic, round(ended.duration_s, 3), stderr, pipeline)


def first_error_line(stderr: str) -> str:
    for line in stderr.splitlines():
        if "error:" in line and "replay_child:" not in line:
            return line.strip()
    lines = [line for line in stderr.splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no output"


class ProbeReader:
    """Reads one probe's file, one ``on_<kind>`` handler per message; a line it cannot read
    (the probe died mid-line) is skipped."""

    def __init__(self, table: dict[str, Binding]) -> None:
        self.table = table
        self.version: str | None = None
        self.current: str | None = None  # the binding being probed when the file ends
        self.done = False

    def feed(self, text: str) -> ProbeReader:
        for line in text.splitlines():
            with contextlib.suppress(Unreadable):
                said = ReplayMessage.from_line(line)
                handler = getattr(self, "on_" + said.KIND.replace("-", "_"), None)
                if handler is not None:  # another command's message: none of the probe's
                    handler(said)
        return self

    def on_version(self, said: Version) -> None:
        self.version = said.triton

    def on_probing(self, said: Probing) -> None:
        self.current = said.path

    def on_probed(self, said: Probed) -> None:
        binding = said.read
        self.table[binding.path] = binding
        self.current = None

    def on_probe_done(self, said: ProbeDone) -> None:
        self.done = True


def probe(python: str, work: Path, timeout_s: float = 300.0) -> tuple[str, list[Binding]]:
    """The installed release's version and its binding table, probed in children.

    A binding that takes the probe down is left out and the probe runs again.
    """
    skip: list[str] = []
    table: dict[str, Binding] = {}
    version = "unknown"
    for _ in range(PROBE_RESTARTS):
        out = work / f"probe-{len(skip)}.jsonl"
        out.unlink(missing_ok=True)
        ended = _child(python, ["probe", str(out), *skip], timeout_s)
        seen = ProbeReader(table).feed(out.read_text() if out.exists() else "")
        version = seen.version or version
        if seen.done:
            return version, list(table.values())
        if seen.current is None:
            reason = first_error_line(ended.stderr.text)
            raise ReplayError(f"cannot introspect Triton's bindings under {python}: {reason}")
        table[seen.current] = Binding(seen.current, error="aborted")
        skip.append(seen.current)
    raise ReplayError(f"the binding probe under {python} kept aborting ({', '.join(skip)})")


@dataclass(frozen=True)
class IRTypes:
    """What the child's ``types`` command says of an IR file."""

    ops: int  # operations in the module
    results: dict[str, list[str]]  # line number -> the result types of the op on it


def ir_types(python: str, ir: Path, timeout_s: float = 120.0) -> IRTypes | None:
    """Result types per line and the operation count of ``ir``; None when it does not parse."""
    ended = _child(python, ["types", str(ir)], timeout_s)
    if ended.returncode != EXIT_OK:
        return None
    try:
        said = ReplayMessage.from_line((ended.stdout.text.strip().splitlines() or [""])[-1])
    except Unreadable:
        return None
    return IRTypes(said.ops, said.results) if isinstance(said, TypesSaid) else None
