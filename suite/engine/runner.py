"""Execute cases: each in its own process, cache and reproducer path.

A cached kernel skips the compiler passes and so hides a compiler crash;
every case therefore gets a fresh ``TRITON_CACHE_DIR`` (removed afterwards)
and its own ``TRITON_REPRODUCER_PATH``, so the MLIR reproducer of a failing
pass lands beside the case's captured output.
"""

from __future__ import annotations

import contextlib
import json
import queue
import shutil
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from suite.engine.classify import classify, read_events
from suite.engine.events import LaunchWatch
from suite.engine.expand import CaseSpec
from suite.engine.gpu_evidence import NOT_LAUNCHED, needs_gpu
from suite.engine.isolate import Bounds, Captured, Exit, Overdue, run_isolated, stop_all
from suite.engine.outcome import CaseResult, Outcome
from suite.engine.record import RunStore
from suite.engine.sanitizer import Rerun, gather
from suite.engine.scrub import scrub_secrets, scrub_tree
from suite.engine.shim import child_env
from suite.engine.warm import Template, WarmUnavailable, run_warm
from suite.toolchain.limits import limits_for

# A template that keeps dying (a reproducer that kills it) is given up after this many starts.
_TEMPLATE_STARTS = 3


@dataclass
class Defaults:
    """The bounds and isolation the command line chose (``--timeout``, ``--memory-cap``,
    ``--isolation``): every execution of reproducer code that does not say otherwise, in
    every command (report, replay, bisect, gate, explore, capture), runs within them."""

    bounds: Bounds = field(default_factory=Bounds)
    warm: bool = True


DEFAULTS = Defaults()


def choose_defaults(bounds: Bounds, warm: bool) -> None:
    """Set :data:`DEFAULTS`; done once, by the command line, before anything runs."""
    DEFAULTS.bounds, DEFAULTS.warm = bounds, warm


@dataclass(frozen=True)
class Execution:
    """How cases are run: which interpreter, within which bounds, how many at once."""

    python: str = sys.executable
    bounds: Bounds = field(default_factory=lambda: DEFAULTS.bounds)
    workers: int = 1
    keep_passing: bool = False
    warm: bool = field(default_factory=lambda: DEFAULTS.warm)
    gpus: tuple[str, ...] = ()
    # A launch that faults or gives a wrong result is run again under compute-sanitizer.
    sanitize: bool = True


class Workers:
    """Starts cases: forked from a warm template, or as fresh interpreters.

    Also hands out GPUs: a case that launches takes one visible GPU for itself
    (``CUDA_VISIBLE_DEVICES``), so with several GPUs there is one launching
    worker per GPU, and with one GPU launches never share it.
    """

    def __init__(self, execution: Execution, specs: Sequence[CaseSpec] = ()) -> None:
        self.execution = execution
        paths = {s.found.source["path"] for s in specs if "path" in s.found.source}
        self._preload = sorted(paths) + (["torch"] if any(s.gpu for s in specs) else [])
        self._archs = sorted({limits_for(s.target).arch for s in specs})
        self._template: Template | None = None
        self._starts = 0
        self.cold_reason = ""  # why cases run fresh although warm was asked for
        self._lock = threading.Lock()
        self._gpus: queue.Queue[str] = queue.Queue()
        for gpu in execution.gpus or ("0",):
            self._gpus.put(gpu)

    def _warm(self) -> Template | None:
        """The running template, started (again) if need be; None once it cannot start."""
        with self._lock:
            if self._template is not None and self._template.alive:
                return self._template
            if self._template is not None:
                self._template.close()
                self._template = None
            if self._starts >= _TEMPLATE_STARTS:
                return None
            self._starts += 1
            try:
                self._template = Template(
                    self.execution.python,
                    child_env(),
                    self._preload,
                    self._archs,
                    self.execution.bounds.timeout_s,
                )
            except WarmUnavailable as exc:
                self.cold_reason = str(exc)
                self._starts = _TEMPLATE_STARTS
            return self._template

    def fresh_because(self, target: str) -> str:
        """Why a case of ``target`` runs as a fresh interpreter ("" when it is forked warm)."""
        if not self.execution.warm:
            return ""
        template = self._warm()
        if template is None:
            return self.cold_reason or "the warm template could not start"
        if target and limits_for(target).arch in template.failed_warm_up:
            return f"the warm template's warm-up compile for {target} failed"
        return ""

    def run(
        self,
        spec_file: Path,
        env: dict[str, str],
        cwd: Path,
        gpu: bool,
        target: str = "",
        overdue: Overdue | None = None,
    ) -> Exit:
        bounds = self.execution.bounds
        gpu_id = self._gpus.get() if gpu else None
        try:
            if gpu_id is not None and self.execution.gpus:
                env = {**env, "CUDA_VISIBLE_DEVICES": gpu_id}
            template = self._warm() if self.execution.warm else None
            if template is not None and not self.fresh_because(target):
                try:
                    return run_warm(template, str(spec_file), env, str(cwd), bounds, overdue)
                except WarmUnavailable:
                    pass  # it died before forking this case: the case runs fresh
            argv = [self.execution.python, "-m", "suite.engine.child", str(spec_file)]
            return run_isolated(argv, env=env, cwd=str(cwd), bounds=bounds, overdue=overdue)
        finally:
            if gpu_id is not None:
                self._gpus.put(gpu_id)

    def close(self) -> None:
        if self._template is not None:
            self._template.close()
            self._template = None

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _fresh_folder(folder: Path) -> None:
    """``folder`` empty and real: whatever a previous attempt (or a case) left there removed."""
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)


def _scrubbed(exit: Exit) -> Exit:
    """``exit`` with secrets taken out of its captured output, before anything reads it."""
    streams = [
        Captured(scrub_secrets(c.text), c.total_bytes, c.dropped_bytes)
        for c in (exit.stdout, exit.stderr)
    ]
    return replace(exit, stdout=streams[0], stderr=streams[1])


def _events(report: Path) -> list[dict[str, Any]]:
    """The child's events as the classifier expects them: a case may write anything there."""
    try:
        events = read_events(report)
    except OSError:
        return []
    return [
        scrub_tree(e) for e in events if isinstance(e, dict) and isinstance(e.get("event"), str)
    ]


class CaseInterrupted(Exception):
    """The run was stopped while the case ran: it has no result (``--resume`` runs it again)."""


def run_case(
    spec: CaseSpec,
    case_dir: Path,
    execution: Execution,
    workers: Workers | None = None,
    knobs: Mapping[str, str] | None = None,
) -> CaseResult:
    """Run one case in isolation and classify it. Never raises for what the case does;
    raises :class:`CaseInterrupted` when the run is stopped meanwhile.

    Without ``workers`` the case runs as a fresh interpreter. ``knobs`` are more
    environment variables for the case (Triton's dump knobs, say).
    """
    _fresh_folder(case_dir)
    report = case_dir / "events.jsonl"
    spec_file = case_dir / "spec.json"
    spec_file.write_text(
        json.dumps(
            {
                "source": spec.found.source,
                "repro_id": spec.repro.id,
                "config": spec.config,
                "target": spec.target,
                "gpu": spec.gpu,
                "report": str(report),
                "timeout": execution.bounds.timeout_s,
            },
            default=str,
        )
    )
    env = child_env(
        {
            "TRITON_CACHE_DIR": str(case_dir / "cache"),
            "TRITON_REPRODUCER_PATH": str(case_dir / "mlir-reproducer"),
            "PYTHONUNBUFFERED": "1",
            "PYTHONFAULTHANDLER": "1",
            **(knobs or {}),
        }
    )
    # A launch past the hang oracle's bound is killed as the timeout kills a case.
    overdue = LaunchWatch(str(report)).overdue if spec.gpu else None
    if workers is None:
        with Workers(replace(execution, warm=False)) as fresh:
            exit = fresh.run(spec_file, env, case_dir, spec.gpu, spec.target, overdue)
        fresh_because = ""
    else:
        fresh_because = workers.fresh_because(spec.target)
        exit = workers.run(spec_file, env, case_dir, spec.gpu, spec.target, overdue)
    if exit.interrupted:
        raise CaseInterrupted(spec.case_id)
    # Secrets out first: the signature is normalized from this text, and kept with the case.
    exit = _scrubbed(exit)
    events = _events(report)
    try:
        verdict = classify(events, exit, limits_for(spec.target))
    except (KeyError, TypeError, ValueError, AttributeError):
        # The case wrote events of its own making: judge it by how it ended alone.
        verdict = classify([], exit, limits_for(spec.target))
        verdict.detail["events"] = "unreadable: the case wrote events the engine cannot read"
    folder_lost = not case_dir.is_dir() or case_dir.is_symlink()
    if folder_lost:
        _fresh_folder(case_dir)  # the case removed or replaced its own folder
    shutil.rmtree(case_dir / "cache", ignore_errors=True)
    result = CaseResult(
        case_id=spec.case_id,
        repro=spec.repro.id,
        target=spec.target,
        config=spec.config,
        outcome=verdict.outcome,
        signature=verdict.signature,
        message=verdict.message,
        detail=verdict.detail,
        metrics=verdict.metrics,
        gpu=spec.gpu,
        duration_s=round(exit.duration_s, 3),
    )
    if exit.stragglers_killed:
        result.detail["stragglers_killed"] = exit.stragglers_killed
    if fresh_because:
        result.detail["isolation"] = f"fresh: {fresh_because}"
    if folder_lost:
        result.detail["case_folder"] = "removed or replaced by the case; its events are lost"
    if spec.gpu:
        start = next((e for e in events if e["event"] == "start"), {})
        result.detail["cuda_visible_devices"] = start.get("cuda_visible_devices")
    elif spec.repro.launch_fn is not None:
        result.detail[NOT_LAUNCHED] = needs_gpu(spec.target)
    if verdict.outcome.is_failure or execution.keep_passing:
        result.artifacts = _keep_outputs(case_dir, exit.stdout.text, exit.stderr.text)
        result.detail["output_bytes"] = {
            "stdout": exit.stdout.total_bytes,
            "stderr": exit.stderr.total_bytes,
        }
    else:
        shutil.rmtree(case_dir, ignore_errors=True)
    failure = _launch_failure(result)
    if failure and execution.sanitize:
        evidence = gather(
            failure, execution.python, case_dir, _rerun(spec_file, case_dir, env, execution)
        )
        result.detail["sanitizer"] = evidence.to_json()
        result.artifacts.update({f"sanitizer-{t}": p for t, p in evidence.outputs.items()})
    return result


def _launch_failure(result: CaseResult) -> str:
    """``fault`` or ``wrong-result`` for a launch that failed so, else ""."""
    if not result.gpu:
        return ""
    if result.outcome is Outcome.WRONG_RESULT:
        return "wrong-result"
    launching = result.detail.get("phase") in (None, "launch")
    if result.outcome is Outcome.RUNTIME_ERROR or (result.outcome is Outcome.CRASH and launching):
        return "fault"
    return ""


def _rerun(spec_file: Path, case_dir: Path, env: dict[str, str], execution: Execution) -> Rerun:
    """The case run again as a fresh interpreter behind ``prefix`` (compute-sanitizer), its
    own events file, each tensor its own allocation (exact bounds for memcheck)."""

    def rerun(
        prefix: Sequence[str], more: Mapping[str, str], output: Path
    ) -> tuple[int | None, str]:
        spec = json.loads(spec_file.read_text())
        spec["report"] = str(output.with_suffix(".events.jsonl"))
        again = output.with_suffix(".spec.json")
        again.write_text(json.dumps(spec))
        argv = [*prefix, execution.python, "-m", "suite.engine.child", str(again)]
        allocations = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
        ended = run_isolated(
            argv, env={**env, **allocations, **more}, cwd=str(case_dir), bounds=execution.bounds
        )
        text = scrub_secrets(ended.stdout.text + ended.stderr.text)
        output.write_text(text)
        return ended.returncode, text

    return rerun


# Files a case leaves (events, MLIR reproducers) are scrubbed up to this size; none is larger
# in practice, and a larger one is cut by nothing else.
_SCRUB_LIMIT = 16 << 20


def _scrub_file(path: Path) -> None:
    """``path`` without secrets: what a case keeps may be uploaded as a CI artifact."""
    if path.stat().st_size > _SCRUB_LIMIT:
        path.write_text(f"[{path.stat().st_size} bytes removed: too large to scrub]\n")
        return
    data = path.read_bytes()
    if b"\0" in data:
        return  # binary (a cubin): no text secret to find, and rewriting would corrupt it
    text = data.decode(errors="replace")
    clean = scrub_secrets(text)
    if clean != text:
        path.write_text(clean)


def _keep_outputs(case_dir: Path, stdout: str, stderr: str) -> dict[str, str]:
    artifacts = {}
    for name, text in (("stdout", stdout), ("stderr", stderr)):
        if text:
            (case_dir / f"{name}.txt").write_text(text)
    for path in sorted(case_dir.iterdir()):
        # A link the case planted (to a key, to another run) is not its output.
        if path.is_file() and not path.is_symlink():
            _scrub_file(path)
            artifacts[path.name] = str(path)
    return artifacts


def execute(
    specs: Sequence[CaseSpec],
    store: RunStore,
    execution: Execution,
    on_result: Callable[[CaseResult], CaseResult] = lambda r: r,
) -> list[CaseResult]:
    """Run every case, appending each result to the store as soon as it ends.

    ``on_result`` sees each result first (the baseline's verdict goes in there).
    Interrupted (a signal raises in this thread), it stops at once: queued cases never
    start, running ones are killed with their trees and left unrecorded, finished ones
    are recorded, and the interruption goes on up.
    """
    results: list[CaseResult] = []
    workers = Workers(execution, specs)
    recorded: set[Future[CaseResult]] = set()

    def one(spec: CaseSpec) -> CaseResult:
        return run_case(spec, store.case_dir(spec.case_id), execution, workers)

    def record(future: Future[CaseResult]) -> None:
        recorded.add(future)
        try:
            result = future.result()
        except CaseInterrupted:
            return
        store.append(on_result(result))
        results.append(result)

    pool = ThreadPoolExecutor(max_workers=max(1, execution.workers))
    futures = [pool.submit(one, spec) for spec in specs]
    try:
        for future in as_completed(futures):
            record(future)
    except BaseException:
        stop_all()
        pool.shutdown(wait=True, cancel_futures=True)
        for future in futures:
            if future.done() and not future.cancelled() and future not in recorded:
                with contextlib.suppress(Exception):
                    record(future)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        workers.close()
    return results
