"""Execute cases: each in its own process, cache and reproducer path.

A cached kernel skips the compiler passes and so hides a compiler crash;
every case therefore gets a fresh ``TRITON_CACHE_DIR`` (removed afterwards)
and its own ``TRITON_REPRODUCER_PATH``, so the MLIR reproducer of a failing
pass lands beside the case's captured output.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from suite.classify import classify, read_events
from suite.expand import CaseSpec
from suite.isolate import Bounds, run_isolated
from suite.limits import limits_for
from suite.outcome import CaseResult
from suite.record import RunStore
from suite.shim import child_env


@dataclass(frozen=True)
class Execution:
    """How cases are run: which interpreter, within which bounds, how many at once."""

    python: str = sys.executable
    bounds: Bounds = field(default_factory=Bounds)
    workers: int = 1
    keep_passing: bool = False


def run_case(spec: CaseSpec, case_dir: Path, execution: Execution) -> CaseResult:
    """Run one case in isolation and classify it. Never raises for what the case does."""
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
    exit = run_isolated(
        [execution.python, "-m", "suite.child", str(spec_file)],
        env=env,
        cwd=str(case_dir),
        bounds=execution.bounds,
    )
    verdict = classify(read_events(report), exit, limits_for(spec.target))
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

    def one(spec: CaseSpec) -> CaseResult:
        return run_case(spec, store.case_dir(spec.case_id), execution)

    with ThreadPoolExecutor(max_workers=max(1, execution.workers)) as pool:
        futures = [pool.submit(one, spec) for spec in specs]
        for future in as_completed(futures):
            result = on_result(future.result())
            store.append(result)
            results.append(result)
    return results
