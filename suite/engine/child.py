"""The isolated side of a case: ``python -m suite.engine.child SPEC.json``.

The child loads one reproducer, compiles one case and, on a GPU, launches and
checks it. It reports raw facts only, as JSON lines in the report file named by
the spec, written as it goes so that a crash mid-compile still leaves the phase
it reached. Classification happens in the parent (``suite.engine.classify``), which
also sees the exit status and the captured stderr.

Standard library and triton only: this runs under whatever interpreter the
user points at, including a venv that holds nothing but one Triton release.
"""

from __future__ import annotations

import faulthandler
import hashlib
import importlib
import importlib.util
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from suite.api import Case, Reproducer, Target, Unsupported
from suite.engine.events import LaunchEvent, to_event
from suite.engine.launch import LAUNCH_ONLY, run_launch
from suite.engine.signature import describe_exception, stages_entered

EVENTS = "events.jsonl"


@dataclass
class EventLog:
    """What a child reported, read back: the one reader of ``events.jsonl``.

    A torn last line (the child died mid-write) is ignored.
    """

    events: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str) -> EventLog:
        events = []
        for line in text.splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict) and "event" in event:
                events.append(event)
        return cls(events)

    @classmethod
    def read(cls, path: Path | str | None, limit: int = 64 << 20) -> EventLog:
        if not path or not Path(path).is_file():
            return cls()
        with open(path, errors="replace") as handle:
            return cls.parse(handle.read(limit))

    def last(self, kind: str) -> dict[str, Any] | None:
        """The last event of ``kind``."""
        return next((e for e in reversed(self.events) if e["event"] == kind), None)

    @property
    def error(self) -> dict[str, Any] | None:
        return self.last("error")

    @property
    def phase(self) -> str:
        """The last phase the child entered ("load" before any, "start" with no events)."""
        phases = [e["phase"] for e in self.events if e["event"] == "phase"]
        return phases[-1] if phases else ("load" if self.events else "start")

    @property
    def done(self) -> bool:
        return self.last("done") is not None

    @property
    def stage(self) -> str | None:
        """The last compile stage the child said it entered (``stages_entered``)."""
        entered = self.last("stage")
        return str(entered["stage"]) if entered else None


def load_reproducers(source: dict[str, str]) -> list[Reproducer]:
    """Import a reproducer file (by path) or module (by name) and return what it declares."""
    if "path" in source:
        path = Path(source["path"]).resolve()
        digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
        name = "repro_" + "".join(ch if ch.isalnum() else "_" for ch in path.stem) + "_" + digest
        if name in sys.modules:  # preloaded by the warm template: reuse, don't re-execute
            module = sys.modules[name]
        else:
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot import {path}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[name]
                raise
    else:
        module = importlib.import_module(source["module"])
    return [v for v in vars(module).values() if isinstance(v, Reproducer)]


class Reporter:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def emit(self, event: str, **fields: Any) -> None:
        self.stream.write(json.dumps({"event": event, **fields}, default=str) + "\n")
        self.stream.flush()

    def error(self, phase: str, exc: BaseException) -> None:
        self.emit("error", **describe_exception(exc, phase))

    def record(self, record: LaunchEvent) -> None:
        self.stream.write(json.dumps(to_event(record)) + "\n")
        self.stream.flush()


def run(spec: dict[str, Any], reporter: Reporter) -> int:
    reporter.emit(
        "start",
        python=sys.version.split()[0],
        cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
    )
    try:
        repro = next(r for r in load_reproducers(spec["source"]) if r.id == spec["repro_id"])
        case = Case(
            spec["repro_id"], spec["config"], Target(spec["target"]), spec.get("gpu", False)
        )
        problems = repro.oracle_problems()
        if problems:
            raise TypeError("; ".join(problems))
        missing = repro.missing_requirements(case.target.name)
    except BaseException as exc:
        reporter.error("load", exc)
        return 1
    if missing:
        gaps = [r.removeprefix("ptxas:") for r in missing if r.startswith("ptxas:")]
        if len(gaps) == len(missing):
            reporter.emit(
                "skipped",
                reason=f"toolchain-gap: this Triton's ptxas does not know {', '.join(gaps)}",
                toolchain_gap=", ".join(gaps),
            )
        else:
            reporter.emit("skipped", reason=f"unsupported: requires {', '.join(missing)}")
        return 0
    # Triton's interpreter runs a launch as NumPy on the CPU and compiles nothing: a case it
    # launches has no compile phase (``triton.compile`` refuses an interpreted function).
    # Nor has a launch whose compile the caller judged already.
    skip_compile = case.gpu and (
        os.environ.get("TRITON_INTERPRET") == "1" or os.environ.get(LAUNCH_ONLY) == "1"
    )
    for phase, fn in (("compile", repro.compile_fn), ("launch", repro.launch_fn)):
        if fn is None or (phase == "launch" and not case.gpu):
            continue
        if phase == "compile" and skip_compile:
            continue
        reporter.emit("phase", phase=phase)
        try:
            if phase == "compile":
                with stages_entered(lambda stage: reporter.emit("stage", stage=stage)):
                    compiled = fn(case)
            else:
                compiled = None
                run_launch(repro, case, reporter.record)
        except Unsupported as exc:
            reporter.emit("skipped", reason=f"unsupported: {exc}")
            return 0
        except BaseException as exc:
            reporter.error(phase, exc)
            return 1
        if phase == "compile" and compiled is not None:
            reporter.emit(
                "compiled",
                shared_bytes=compiled.shared_bytes,
                tmem_columns=compiled.tmem_columns,
                extra=compiled.extra,
            )
    reporter.emit("done")
    return 0


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[1]).read_text())
    faulthandler.enable()
    if spec.get("timeout"):
        # Shortly before the parent kills a hang, say where it hangs.
        faulthandler.dump_traceback_later(max(spec["timeout"] * 0.9, spec["timeout"] - 5))
    with open(spec["report"], "a", encoding="utf-8") as stream:
        return run(spec, Reporter(stream))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
