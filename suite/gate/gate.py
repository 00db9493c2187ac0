"""``repro gate``: may a proposed set of autotune configs replace the current one?

Three steps, each through the engine:

1. **Static, no GPU** (:func:`static_checks`): every config x target runs as an
   isolated case (:func:`suite.engine.expand.expand_cases` +
   :func:`suite.engine.session.recorded_cases`, warm workers): it compiles, its
   shared/tensor memory fits (the classifier's
   ``resource-limit``), registers and spills come from the cubin
   (``registers``, ``local_bytes``), and the reason of a failure comes from
   :func:`suite.engine.triage.triage_of` when that module is there (else the outcome and
   its signature). Configs that Triton's autotuner silently drops (its
   ``_bench`` turns ``OutOfResources`` and ``PTXASError`` into an infinite time)
   are named as such.
2. **On a GPU** (``--gpu``, :func:`gpu_measure`): one child per target whose GPU
   is visible, ``python -m suite.children gate-gpu SPEC`` under
   :func:`suite.engine.isolate.run_isolated`:
   correctness (NaN-poisoned outputs, fresh inputs, ragged shapes) and
   ``do_bench`` medians over several input sets against cuBLAS. A child that
   loses its CUDA context or dies is restarted without the config it was on
   (at most :data:`MAX_CHILDREN` per target).
3. **Pass or fail** (:func:`decide`): pass only if no proposed config fails to compile
   or launch on a named target, none gives a wrong result, and the best proposed
   config is not slower than the best current one beyond the measured noise.

``--suggest`` ranks the statically clean points of the kernel's declared space
by measured speed within a time budget and proposes the best few.

The report is Markdown rendered from ``suite/templates/gate.md.j2`` plus ``gate.json``,
under ``<output>/gate/<timestamp>/``.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from suite.engine import Bounds, Execution, check_targets, unique_folder
from suite.errors import UsageError
from suite.files import own_folder
from suite.gate.decide import decide
from suite.gate.gpu import GpuPlan, GpuRun, gpu_measure, tflops
from suite.gate.inputs import (
    Configs,
    GateOptions,
    declared_space,
    jit_kernel,
    load_configs,
    priority,
    resolve_kernel,
    size_label,
    tunable_params,
)
from suite.gate.report import build_report, render_markdown, yaml_list
from suite.gate.state import GateResult, GateState, Ranked, Suggestion
from suite.gate.static import StaticCheck, StaticStatus, static_checks
from suite.toolchain.limits import limits_for

GATE_FOLDER = "gate"
"""The output root's folder of gate reports, one ``<stamp>`` folder per run."""


def gate_folder(root: Path) -> Path:
    """``<root>/gate/<stamp>``; an output root that is a gate folder already (``-o out/gate``)
    gets no second one: ``out/gate/<stamp>``, not ``out/gate/gate/<stamp>`` (where earlier
    releases wrote, and which stays as it is)."""
    root = root.resolve()
    folder = own_folder(root) if root.name == GATE_FOLDER else own_folder(root, GATE_FOLDER)
    return unique_folder(folder, time.strftime("%Y%m%d-%H%M%S"))


def validate(state: GateState) -> None:
    """The kernel exists, the targets are its own, the numbers make sense."""
    options = state.options
    state.found = resolve_kernel(options.kernel)
    repro = state.repro
    state.targets = list(options.targets) or list(repro.targets)
    check_targets(state.targets)
    foreign = [t for t in state.targets if t not in repro.targets]
    if foreign:
        raise UsageError(
            f"{repro.id} does not apply to {', '.join(foreign)} "
            f"(its targets: {', '.join(repro.targets)})"
        )
    if options.suggest_count < 1 or options.input_sets < 1 or options.budget_s <= 0:
        raise UsageError("--suggest-count, --input-sets and --budget-s must be positive")
    if options.proposed is None and not options.suggest:
        raise UsageError("--proposed is required (unless --suggest proposes the configs)")


def read_inputs(state: GateState) -> None:
    """The current and proposed configs, and the JIT kernel when the GPU is used."""
    options, found = state.options, state.found
    assert found is not None
    state.current = load_configs(options.current, found)
    state.proposed = load_configs(options.proposed, found) if options.proposed else []
    if options.gpu or options.suggest:
        state.kernel = jit_kernel(found, options.jit)
        state.tunable = tunable_params(found, state.kernel)


def find_gpu(state: GateState) -> None:
    """The visible GPU, the one target it is, and a kernel it can launch as a GEMM."""
    options, kernel, repro = state.options, state.kernel, state.repro
    if not (options.gpu or options.suggest):
        return
    from suite.engine import capture_environment

    state.environment = capture_environment(options.python)
    arch = state.environment.gpu_arch
    if arch is None:
        raise UsageError("--gpu/--suggest, but no NVIDIA GPU is visible (nvidia-smi found none)")
    matching = [t for t in state.targets if limits_for(t).arch == arch]
    if not matching:
        raise UsageError(
            f"--gpu: none of the targets ({', '.join(state.targets)}) is the visible GPU's "
            f"sm_{arch}"
        )
    state.gpu_targets = matching[:1]
    assert kernel is not None
    missing = [a for a in ("BLOCK_M", "BLOCK_N") if a not in kernel.arg_names]
    if missing or len(kernel.arg_names) < 6:
        raise UsageError(
            f"{repro.id}: the gate launches GEMM kernels as kernel[grid](a, b, c, M, N, K, "
            f"BLOCK_M=.., BLOCK_N=.., ...); {kernel.name} takes ({', '.join(kernel.arg_names)})"
        )
    fixed_names = [n for n in repro.param_names if n not in state.tunable]
    both = state.current + state.proposed
    mixed = [n for n in fixed_names if len({repr(c[n]) for c in both}) > 1]
    if mixed:
        raise UsageError(
            f"the configs mix values of {', '.join(mixed)}; the GPU side times one problem "
            "(gate one dtype at a time)"
        )


def collect_configs(state: GateState) -> None:
    """One entry per distinct config with its roles; with --suggest, the declared space."""
    assert state.found is not None
    configs = Configs(state.found)
    for config in state.current:
        configs.add(config, "current")
    for config in state.proposed:
        configs.add(config, "proposed")
    if state.options.suggest:
        fixed = {k: v for k, v in state.current[0].items() if k not in state.tunable}
        for config in declared_space(state.found, state.tunable, fixed):
            configs.add(config, "candidate")
    state.configs = configs
    state.folder = gate_folder(state.options.output)
    options = state.options
    state.execution = Execution(
        python=options.python,
        bounds=Bounds(timeout_s=options.timeout_s, memory_bytes=options.memory_bytes),
        workers=max(1, options.workers),
    )


def check_static(state: GateState) -> None:
    """Every named config on every target, then the declared space on the GPU's target."""
    configs, found, execution = state.configs, state.found, state.execution
    assert configs is not None and found is not None and execution is not None
    named = [c for c in configs.items if c.roles != ["candidate"]]
    state.log(f"static: {len(named)} configs x {len(state.targets)} targets")
    state.static = static_checks(found, named, state.targets, state.folder / "static", execution)
    todo = [c for c in configs.with_role("candidate") if c.roles == ["candidate"]]
    if todo:
        # The declared space is checked on the GPU's target only; what gets suggested is
        # checked on the other named targets afterwards.
        state.log(f"static: {len(todo)} points of the declared space x {state.gpu_targets}")
        space = static_checks(
            found, todo, state.gpu_targets, state.folder / "static-space", execution
        )
        state.static.update(space)


def measure_on_gpu(state: GateState) -> None:
    """Check and time the statically clean configs on the GPU (and screen the space)."""
    for target in state.gpu_targets:
        plan = gpu_plan(state, target)
        state.log(
            f"gpu {target}: {len(plan.final)} configs to check and time, "
            f"{len(plan.screen)} to screen"
        )
        assert state.found is not None and state.kernel is not None
        state.gpu[target] = gpu_measure(
            state.found,
            state.kernel,
            target,
            plan,
            state.folder / "gpu" / target,
            state.options.python,
            state.log,
        )
        if state.options.suggest:
            adopt_suggestion(state, plan, target)


def gpu_plan(state: GateState, target: str) -> GpuPlan:
    """What the GPU child measures on ``target`` and the time it may take (the budget)."""
    options, configs = state.options, state.configs
    assert configs is not None
    clean = [c for c in configs.items if "current" in c.roles or "proposed" in c.roles]
    plan = GpuPlan(
        sizes=list(options.sizes),
        input_sets=options.input_sets,
        final=[c for c in clean if state.static[(c.key, target)].status.usable],
        timeout_s=max(options.timeout_s, 600.0),
        seed=options.seed if options.seed is not None else int(time.time()) % 100000,
        compile_jobs=max(1, min((os.cpu_count() or 2) - 2, 12)),
    )
    if options.suggest:
        candidates = configs.with_role("candidate")
        screen = [c for c in candidates if state.static[(c.key, target)].status is StaticStatus.OK]
        assert state.found is not None
        order = priority(state.found, state.tunable)
        screen.sort(key=lambda c: order(c.config))
        plan.screen = screen
        plan.finalists = 2 * options.suggest_count
        per_item = 4.0 + len(options.sizes) * options.input_sets * 0.4
        reserve = 30.0 + (plan.finalists + len(plan.final)) * per_item
        plan.deadline = state.started + options.budget_s - reserve
        # The budget is a limit: the child is killed a minute after it is spent.
        plan.timeout_s = max(60.0, state.started + options.budget_s + 60 - time.time())
    return plan


def adopt_suggestion(state: GateState, plan: GpuPlan, target: str) -> None:
    """The fastest checked candidates become the proposal (statically checked everywhere)."""
    configs, found, execution = state.configs, state.found, state.execution
    assert configs is not None and found is not None and execution is not None
    state.suggestion = suggest(
        configs, state.gpu[target], plan, state.options, state.static, target
    )
    chosen = [configs.by_key(key) for key in state.suggestion.keys]
    others = [t for t in state.targets if t != target]
    unchecked = [c for c in chosen if c.roles == ["candidate"]]
    if others and unchecked:
        state.log(f"static: the suggested configs x {', '.join(others)}")
        folder = state.folder / "static-suggested"
        state.static.update(static_checks(found, unchecked, others, folder, execution))
    if not state.proposed:
        for item in chosen:
            item.roles.append("proposed")


def pass_or_fail(state: GateState) -> None:
    """Pass or fail, with reasons."""
    assert state.configs is not None
    options = state.options
    state.decision = decide(
        state.configs, state.static, state.gpu, state.targets, options.sizes, options.noise_floor
    )


def write(state: GateState) -> None:
    """``suggested.yaml`` (with --suggest), then ``gate.json`` and ``gate.md``."""
    suggestion = state.suggestion
    if suggestion is not None and suggestion.configs:
        suggested = state.folder / "suggested.yaml"
        suggested.write_text(suggested_yaml(state, suggestion))
        state.suggestion = replace(suggestion, file=str(suggested))
    report = build_report(state)
    markdown = render_markdown(report)
    (state.folder / "gate.json").write_text(json.dumps(report, indent=2, default=str))
    (state.folder / "gate.md").write_text(markdown)
    state.result = GateResult(report, markdown, state.folder, report["exit_status"])


def suggested_yaml(state: GateState, suggestion: Suggestion) -> str:
    """The suggested configs as a config file, headed by where and how fast they ran."""
    devices = ", ".join(str(r.device.device if r.device else None) for r in state.gpu.values())
    header = [
        f"# repro gate --suggest: {state.repro.id} on {', '.join(state.gpu)} ({devices}), "
        f"sizes {', '.join(size_label(s) for s in state.options.sizes)}, "
        f"{time.strftime('%Y-%m-%d')}; fastest first, median TFLOPS:",
    ]
    pairs = zip(suggestion.labels, suggestion.tflops, strict=True)
    header += [f"#   {label}: {value}" for label, value in pairs]
    return "\n".join(header) + "\n" + yaml_list(suggestion.configs)


#: The gate, step by step (each is small enough to test alone).
GATE_STEPS: tuple[Callable[[GateState], None], ...] = (
    validate,
    read_inputs,
    find_gpu,
    collect_configs,
    check_static,
    measure_on_gpu,
    pass_or_fail,
    write,
)


def run_gate(options: GateOptions, log: Callable[[str], None] = lambda line: None) -> GateResult:
    """The whole gate: :data:`GATE_STEPS` in order over one :class:`GateState`."""
    state = GateState(options, log)
    for step in GATE_STEPS:
        step(state)
    assert state.result is not None
    return state.result


def suggest(
    configs: Configs,
    run: GpuRun,
    plan: GpuPlan,
    options: GateOptions,
    static: dict[tuple[str, str], StaticCheck],
    target: str,
) -> Suggestion:
    """The best measured candidates (full check passed), fastest first."""
    ranked = []
    for item in configs.with_role("candidate"):
        measured = run.measured.get(item.key)
        if measured is None or measured.failure or not measured.checked:
            continue
        if not all(measured.times.get(size_label(s)) for s in plan.sizes):
            continue
        logs = [
            math.log(tflops(s, statistics.median(measured.times[size_label(s)])))
            for s in plan.sizes
        ]
        ranked.append((sum(logs) / len(logs), item))
    ranked.sort(key=lambda pair: -pair[0])
    chosen = [item for _, item in ranked[: options.suggest_count]]
    screened = screening(configs, run, plan)
    eligible = sum(
        1
        for c in configs.with_role("candidate")
        if static[(c.key, target)].status is StaticStatus.OK
    )
    return Suggestion(
        keys=[c.key for c in chosen],
        configs=[c.config for c in chosen],
        labels=[c.label for c in chosen],
        tflops=[round(math.exp(score), 1) for score, _ in ranked[: options.suggest_count]],
        space=len(configs.with_role("candidate")),
        eligible=eligible,
        screened=len([s for s in screened if s.tflops is not None]),
        budget=run.budget,
        budget_s=options.budget_s,
        ranking=screened[:15],
    )


def screening(configs: Configs, run: GpuRun, plan: GpuPlan) -> list[Ranked]:
    """Every candidate the child screened, by screening TFLOPS (failures last)."""
    screened = []
    for item in configs.with_role("candidate"):
        measured = run.measured.get(item.key)
        if measured is None:
            continue
        score = measured.score(plan.sizes)
        failure = measured.failure.message if measured.failure else None
        value = round(math.exp(score), 1) if score is not None else None
        screened.append(Ranked(item.key, item.label, value, failure))
    screened.sort(key=lambda r: -float(r.tflops or 0.0))
    return screened
