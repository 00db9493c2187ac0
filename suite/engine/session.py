"""The pipeline of a run, one stage per module: discover, expand, isolate and
classify (``runner``), record, compare with the baseline. The CLI and the
pytest plugin are doors onto this.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from suite.engine import discover
from suite.engine.baseline import Baseline, exit_status
from suite.engine.environment import Environment, capture_environment, visible_gpu_ids
from suite.engine.expand import CaseSpec, expand_cases, load_config_file, shard
from suite.engine.outcome import CaseResult
from suite.engine.record import RunStore
from suite.engine.runner import Execution, Workers, execute, run_case
from suite.engine.sources import capture_source, keep_copy
from suite.engine.triage import annotate
from suite.errors import UsageError


@dataclass
class Selection:
    """What a run covers; stored in ``run.json`` so that ``--resume`` can finish it."""

    repros: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    sets: list[str] = field(default_factory=list)
    config_file: str | None = None
    gpu: str = "auto"
    python: str = ""
    shard: str = ""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Selection:
        """The selection a run stored; every field must be there with its type (an empty or
        hand-edited ``run.json`` must not turn into "the whole catalogue")."""
        defaults = asdict(cls())
        for name, default in defaults.items():
            value = data.get(name, ...)
            if isinstance(default, list):
                ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
            else:
                ok = isinstance(value, str) or (value is None and default is None)
            if not ok:
                raise UsageError(f"malformed run.json: {name} is missing or of the wrong type")
        return cls(**{k: v for k, v in data.items() if k in defaults})


@dataclass
class RunOutcome:
    store: RunStore
    results: list[CaseResult]
    environment: Environment
    exit_status: int


def visible_gpus(environment: Environment) -> tuple[str, ...]:
    """The GPU ids a launching case may be pinned to: ``CUDA_VISIBLE_DEVICES``, else all."""
    return visible_gpu_ids(len(environment.gpus))


def plan(selection: Selection, environment: Environment) -> list[CaseSpec]:
    """The cases of a selection, given what the environment offers (a GPU or not)."""
    found = discover.select(selection.repros)
    configs = load_config_file(selection.config_file) if selection.config_file else []
    gpu_arch = environment.gpu_arch
    if selection.gpu == "on" and gpu_arch is None:
        raise UsageError("--gpu on, but no NVIDIA GPU is visible (nvidia-smi found none)")
    launch_arch = gpu_arch if selection.gpu != "off" else None
    specs = expand_cases(found, selection.targets, selection.sets, configs, launch_arch)
    if not specs:
        wanted = ", ".join(selection.targets) or "their own targets"
        raise UsageError(f"nothing to run: no case of the selection has target(s) {wanted}")
    return shard(specs, selection.shard)


def run(
    selection: Selection,
    output: Path,
    execution: Execution,
    baseline: Baseline,
    resume: str | None = None,
    on_start: Callable[[int, int], None] = lambda total, done: None,
    on_result: Callable[[CaseResult], None] = lambda result: None,
) -> RunOutcome:
    """Run (or finish, with ``resume``: a run name, or "" for the newest) a selection,
    and judge every case against the baseline."""
    store = RunStore.open(output, resume or None) if resume is not None else None
    selection = Selection.from_json(store.selection) if store is not None else absolute(selection)
    if selection.python:
        execution = replace(execution, python=selection.python)
    environment = capture_environment(execution.python)
    execution = replace(execution, gpus=visible_gpus(environment))
    specs = plan(selection, environment)
    if store is None:
        store = RunStore.create(output, asdict(selection))
    if not (store.folder / "environment.json").exists():
        store.write_json("environment.json", environment.to_json())
    done = {r.case_id for r in store.results()}
    todo = [s for s in specs if s.case_id not in done]
    triton_version = str(environment.triton)
    on_start(len(specs), len(specs) - len(todo))

    sources = carry_sources(specs, store.folder)
    families = {spec.repro.id: spec.repro.family for spec in specs}

    def judged(result: CaseResult) -> CaseResult:
        result = baseline.judge(result, triton_version)
        result = annotate(result, family=families.get(result.repro, ""))
        result = replace(result, source=sources.get(result.repro, {}))
        on_result(result)
        return result

    finished = False
    try:
        recorded_cases(todo, store, execution, judged)
        finished = True
    finally:
        # Also for a run stopped by a signal or broken: what finished is summarized.
        results = [baseline.judge(r, triton_version) for r in store.results()]
        status = exit_status(results)
        extra: dict[str, Any] = {
            "exit_status": status,
            "triton": triton_version,
            "baseline": baseline.source,
        }
        if not finished:
            extra.update(partial=True, planned=len(specs), exit_status=None)
        store.restore()
        store.write_summary(results, extra)
        store.write_junit(results)
        store.release()
    return RunOutcome(store, results, environment, status)


@dataclass(frozen=True)
class Planned:
    """One case a command runs: its spec, its folder, more environment for it (dump knobs)."""

    spec: CaseSpec
    folder: Path
    knobs: Mapping[str, str] = field(default_factory=dict)


def cases(
    planned: Iterable[Planned], execution: Execution, workers: Workers | None = None
) -> Iterator[CaseResult]:
    """The one way a command runs cases one at a time (explore, reduce, report's re-run,
    explain, the pytest door): each planned case run in isolation and classified, in order,
    as the caller asks for the next. A run of a whole selection is :func:`run` (the cases
    in parallel, recorded as they end). Raises ``CaseInterrupted`` when stopped meanwhile."""
    for case in planned:
        yield run_case(case.spec, case.folder, execution, workers, case.knobs)


def recorded_cases(
    specs: Sequence[CaseSpec],
    store: RunStore,
    execution: Execution,
    on_result: Callable[[CaseResult], CaseResult] = lambda result: result,
) -> list[CaseResult]:
    """The way a command runs a set of cases at once (a run of a selection, the gate's static
    checks): in parallel on ``execution.workers``, each result seen by ``on_result`` and then
    recorded in ``store`` as it ends, in the order they end. Not :func:`cases`: that one runs
    one case at a time, as the caller asks, and records nothing. Raises what stopped it
    (cases finished meanwhile are recorded)."""
    return execute(specs, store, execution, on_result)


def run_one(
    spec: CaseSpec,
    folder: Path,
    execution: Execution,
    workers: Workers | None = None,
    knobs: Mapping[str, str] | None = None,
) -> CaseResult:
    """:func:`cases` of one case."""
    return next(cases([Planned(spec, folder, dict(knobs or {}))], execution, workers))


def carry_sources(specs: list[CaseSpec], folder: Path) -> dict[str, dict[str, str]]:
    """A copy of each reproducer's source in the run folder, by reproducer id, so that
    report, bisect and replay load the code that ran (``suite.engine.sources``)."""
    carried: dict[str, dict[str, str]] = {}
    for spec in specs:
        if spec.repro.id not in carried:
            source = capture_source(spec.found.source)
            carried[spec.repro.id] = keep_copy(source, folder).to_json() if source else {}
    return carried


def absolute(selection: Selection) -> Selection:
    """``selection`` with its file paths made absolute, so ``--resume`` works from anywhere."""

    def resolved(name: str) -> str:
        # abspath, not resolve: a venv's python is a link that must stay the venv's.
        return os.path.abspath(name) if name.endswith(".py") or Path(name).is_file() else name

    python = selection.python
    return replace(
        selection,
        repros=[resolved(name) for name in selection.repros],
        config_file=os.path.abspath(selection.config_file) if selection.config_file else None,
        python=os.path.abspath(python) if os.sep in python else python,
    )
