"""Execute cases: each in its own process, cache and reproducer path.

A cached kernel skips the compiler passes and so hides a compiler crash;
every case therefore gets a fresh ``TRITON_CACHE_DIR`` (removed afterwards)
and its own ``TRITON_REPRODUCER_PATH``, so the MLIR reproducer of a failing
pass lands beside the case's captured output.
"""

from __future__ import annotations

import json
import queue
import shutil
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path

from suite.engine.classify import classify, read_events
from suite.engine.expand import CaseSpec
from suite.engine.isolate import Bounds, Exit, run_isolated
from suite.engine.outcome import CaseResult
from suite.engine.record import RunStore
from suite.engine.shim import child_env
from suite.engine.warm import Template, run_warm
from suite.toolchain.limits import limits_for


@dataclass(frozen=True)
class Execution:
    """How cases are run: which interpreter, within which bounds, how many at once."""

    python: str = sys.executable
    bounds: Bounds = field(default_factory=Bounds)
    workers: int = 1
    keep_passing: bool = False
    warm: bool = True
    gpus: tuple[str, ...] = ()


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
        self._lock = threading.Lock()
        self._gpus: queue.Queue[str] = queue.Queue()
        for gpu in execution.gpus or ("0",):
            self._gpus.put(gpu)

    def _warm(self) -> Template:
        with self._lock:
            if self._template is None or not self._template.alive:
                self._template = Template(
                    self.execution.python, child_env(), self._preload, self._archs
                )
            return self._template

    def run(self, spec_file: Path, env: dict[str, str], cwd: Path, gpu: bool) -> Exit:
        bounds = self.execution.bounds
        gpu_id = self._gpus.get() if gpu else None
        try:
            if gpu_id is not None and self.execution.gpus:
                env = {**env, "CUDA_VISIBLE_DEVICES": gpu_id}
            if self.execution.warm:
                return run_warm(self._warm(), str(spec_file), env, str(cwd), bounds)
            argv = [self.execution.python, "-m", "suite.engine.child", str(spec_file)]
            return run_isolated(argv, env=env, cwd=str(cwd), bounds=bounds)
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


def run_case(
    spec: CaseSpec, case_dir: Path, execution: Execution, workers: Workers | None = None
) -> CaseResult:
    """Run one case in isolation and classify it. Never raises for what the case does.

    Without ``workers`` the case runs as a fresh interpreter.
    """
    if case_dir.exists():
        shutil.rmtree(case_dir)
    case_dir.mkdir(parents=True)
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
        }
    )
    if workers is None:
        with Workers(replace(execution, warm=False)) as fresh:
            exit = fresh.run(spec_file, env, case_dir, spec.gpu)
    else:
        exit = workers.run(spec_file, env, case_dir, spec.gpu)
    events = read_events(report)
    verdict = classify(events, exit, limits_for(spec.target))
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
    if spec.gpu:
        start = next((e for e in events if e["event"] == "start"), {})
        result.detail["cuda_visible_devices"] = start.get("cuda_visible_devices")
    if verdict.outcome.is_failure or execution.keep_passing:
        result.artifacts = _keep_outputs(case_dir, exit.stdout.text, exit.stderr.text)
        result.detail["output_bytes"] = {
            "stdout": exit.stdout.total_bytes,
            "stderr": exit.stderr.total_bytes,
        }
    else:
        shutil.rmtree(case_dir, ignore_errors=True)
    return result


def _keep_outputs(case_dir: Path, stdout: str, stderr: str) -> dict[str, str]:
    artifacts = {}
    for name, text in (("stdout", stdout), ("stderr", stderr)):
        if text:
            (case_dir / f"{name}.txt").write_text(text)
    for path in sorted(case_dir.iterdir()):
        if path.is_file():
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
    """
    results: list[CaseResult] = []
    workers = Workers(execution, specs)

    def one(spec: CaseSpec) -> CaseResult:
        return run_case(spec, store.case_dir(spec.case_id), execution, workers)

    with workers, ThreadPoolExecutor(max_workers=max(1, execution.workers)) as pool:
        futures = [pool.submit(one, spec) for spec in specs]
        for future in as_completed(futures):
            result = on_result(future.result())
            store.append(result)
            results.append(result)
    return results
