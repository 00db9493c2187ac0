"""``repro gate``: may a proposed set of autotune configs replace the current one?

Three steps, each through the engine:

1. **Static, no GPU** (:func:`static_checks`): every config x target runs as an
   isolated case (:func:`suite.engine.expand.expand` + :func:`suite.engine.runner.execute`,
   warm workers): it compiles, its shared/tensor memory fits (the classifier's
   ``resource-limit``), registers and spills come from the cubin
   (``registers``, ``local_bytes``), and the reason of a failure comes from
   :func:`suite.engine.triage.triage` when that module is there (else the outcome and
   its signature). Configs that Triton's autotuner silently drops (its
   ``_bench`` turns ``OutOfResources`` and ``PTXASError`` into an infinite time)
   are named as such.
2. **On a GPU** (``--gpu``, :func:`gpu_measure`): one child per target whose GPU
   is visible, ``python -m suite.gate.gpu_child SPEC`` under
   :func:`suite.engine.isolate.run_isolated`:
   correctness (NaN-poisoned outputs, fresh inputs, ragged shapes) and
   ``do_bench`` medians over several input sets against cuBLAS. A child that
   loses its CUDA context or dies is restarted without the config it was on
   (at most :data:`MAX_CHILDREN` per target).
3. **Verdict** (:func:`decide`): pass only if no proposed config fails to compile
   or launch on a named target, none gives a wrong result, and the best proposed
   config is not slower than the best current one beyond the measured noise.

``--suggest`` ranks the statically clean points of the kernel's declared space
by measured speed within a time budget and proposes the best few.

The report is Markdown rendered from ``suite/templates/gate.md.j2`` plus ``gate.json``,
under ``<output>/gate/<timestamp>/``.
"""

from __future__ import annotations

import ast
import itertools
import json
import math
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from suite.engine import discover
from suite.engine.discover import Found
from suite.engine.expand import case_id, check_targets, expand, load_config_file
from suite.engine.isolate import Bounds, run_isolated
from suite.engine.outcome import CaseResult, Outcome
from suite.engine.record import RunStore
from suite.engine.runner import Execution, execute
from suite.engine.shim import child_env
from suite.errors import UsageError
from suite.templating import template_environment
from suite.toolchain.limits import limits_for

TEMPLATE = "gate.md.j2"

# What a triton.Config means when num_warps / num_stages are left out.
TRITON_CONFIG_DEFAULTS = {"num_warps": 4, "num_stages": 3}
CONFIG_POSITIONAL = ("num_warps", "num_stages", "num_ctas", "maxnreg")
OPTION_KEYS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
# Triton's autotuner (runtime/autotuner.py, Autotuner._bench) catches these and times
# the config as infinitely slow: the config vanishes without a word.
SILENTLY_DROPPED = (Outcome.PTXAS_ERROR, Outcome.RESOURCE_LIMIT)
# Correctness shapes: tile-aligned, ragged (checks.GEMM_SHAPES), and ragged in M, N and K
# at once (every dimension 8 mod 16: no BLOCK divides it; strides stay 16-byte multiples).
CHECK_SHAPES = ((512, 512, 512), (520, 1040, 1008), (1000, 776, 264))
MAX_CHILDREN = 3
# How the GPU child is started (after the interpreter); tests swap in a fake.
GPU_CHILD: tuple[str, ...] = ("-m", "suite.gate.gpu_child")
CUBLAS = "cublas"
PTXAS_LINE = re.compile(r"ptxas[\w-]*\s+(?:fatal|error)\s*:\s*(.+)")


# --------------------------------------------------------------------------- inputs


@dataclass
class GateConfig:
    """One distinct config and the roles it plays (current, proposed, candidate)."""

    key: str
    label: str
    config: dict[str, Any]
    roles: list[str] = field(default_factory=list)

    @property
    def role(self) -> str:
        return "+".join(self.roles)


def parse_sizes(text: str) -> list[tuple[int, int, int]]:
    """``4096,8192`` (cubes) or ``4096x4096x1024``, comma-separated."""
    sizes = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            dims = [int(d) for d in part.lower().split("x")]
        except ValueError:
            raise UsageError(f"--sizes: {part!r} is not N or MxNxK") from None
        if len(dims) == 1:
            dims *= 3
        if len(dims) != 3 or min(dims) < 1:
            raise UsageError(f"--sizes: {part!r} is not N or MxNxK with positive sizes")
        sizes.append((dims[0], dims[1], dims[2]))
    if not sizes:
        raise UsageError("--sizes names no size")
    return sizes


def size_label(size: Sequence[int]) -> str:
    return "x".join(str(d) for d in size)


def resolve_kernel(name: str) -> Found:
    """``--kernel``: a reproducer id or a reproducer file defining exactly one."""
    found = discover.select([name])
    if len(found) != 1:
        ids = ", ".join(f.repro.id for f in found)
        raise UsageError(f"{name} defines {len(found)} reproducers ({ids}); name one by id")
    return found[0]


def module_of(found: Found) -> Any:
    fn = found.repro.compile_fn or found.repro.launch_fn
    module = sys.modules.get(fn.__module__) if fn is not None else None
    if module is None:
        raise UsageError(f"{found.repro.id}: cannot find the module of its compile function")
    return module


@dataclass(frozen=True)
class JitKernel:
    """The reproducer's ``@triton.jit`` kernel that the GPU side launches and times."""

    name: str
    arg_names: tuple[str, ...]
    out_dtypes: dict[str, str]


def jit_kernel(found: Found, name: str | None = None) -> JitKernel:
    """The one ``@triton.jit`` kernel defined in the reproducer's module (or ``name``)."""
    from triton.runtime.jit import JITFunction

    module = module_of(found)
    jits = {
        n: obj
        for n, obj in vars(module).items()
        if isinstance(obj, JITFunction)
        and getattr(getattr(obj, "fn", None), "__module__", None) == module.__name__
    }
    if name is not None:
        if name not in jits:
            raise UsageError(
                f"{found.repro.id}: no @triton.jit kernel {name!r} (has: {', '.join(jits)})"
            )
    elif len(jits) == 1:
        (name,) = jits
    else:
        raise UsageError(
            f"{found.repro.id} defines {len(jits)} @triton.jit kernels "
            f"({', '.join(jits) or 'none'}); name one with --jit"
        )
    out = getattr(module, "OUT_DTYPE", None)
    out_dtypes = {str(k): str(v) for k, v in out.items()} if isinstance(out, dict) else {}
    return JitKernel(name, tuple(jits[name].arg_names), out_dtypes)


def tunable_params(found: Found, kernel: JitKernel) -> list[str]:
    """Parameters that are the kernel's constexprs or Triton launch options."""
    return [
        p.name for p in found.repro.params if p.name in kernel.arg_names or p.name in OPTION_KEYS
    ]


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _literal(node: ast.AST, path: Path, what: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        raise UsageError(
            f"{path}:{getattr(node, 'lineno', '?')}: {what} is not a literal; "
            "the gate reads autotune configs without running the file"
        ) from None


def read_autotune_configs(path: Path, kernel: str | None = None) -> list[dict[str, Any]]:
    """The configs of a ``triton.autotune``-decorated kernel, read with ``ast``: no import,
    no GPU.

    Finds ``@triton.autotune(configs=[triton.Config({...}, num_warps=.., num_stages=..), ...])``
    (or ``configs=NAME`` bound at module level to such a list) and evaluates the
    literal dicts and keyword values. ``pre_hook`` and ``ir_override`` are ignored;
    ``num_ctas=1`` and ``maxnreg=None`` (Triton's defaults) are dropped.
    """
    if not path.is_file():
        raise UsageError(f"no such config file: {path}")
    try:
        tree = ast.parse(path.read_text(), filename=str(path))
    except SyntaxError as exc:
        raise UsageError(f"malformed config file {path}: line {exc.lineno}: {exc.msg}") from None
    bound: dict[str, ast.AST] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    bound[target.id] = statement.value
        elif (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and statement.value is not None
        ):
            bound[statement.target.id] = statement.value
    decorated: dict[str, ast.Call] = {}
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for decorator in function.decorator_list:
            if isinstance(decorator, ast.Call) and _dotted(decorator.func).split(".")[-1] == (
                "autotune"
            ):
                decorated[function.name] = decorator
    if not decorated:
        raise UsageError(f"{path}: no triton.autotune-decorated kernel found")
    if kernel is None:
        if len(decorated) > 1:
            raise UsageError(
                f"{path} has {len(decorated)} autotuned kernels ({', '.join(decorated)}); "
                f"name one as {path}::KERNEL"
            )
        (kernel,) = decorated
    if kernel not in decorated:
        raise UsageError(f"{path}: no autotuned kernel {kernel!r} (has: {', '.join(decorated)})")
    call = decorated[kernel]
    node: ast.AST | None = next((k.value for k in call.keywords if k.arg == "configs"), None)
    if node is None and call.args:
        node = call.args[0]
    if isinstance(node, ast.Name) and node.id in bound:
        node = bound[node.id]
    if not isinstance(node, ast.List | ast.Tuple):
        line = getattr(node, "lineno", call.lineno)
        raise UsageError(
            f"{path}:{line}: the configs of {kernel} are not a literal list of triton.Config"
        )
    configs = []
    for element in node.elts:
        if not (isinstance(element, ast.Call) and _dotted(element.func).split(".")[-1] == "Config"):
            raise UsageError(f"{path}:{element.lineno}: not a triton.Config(...) call")
        if not element.args:
            raise UsageError(f"{path}:{element.lineno}: triton.Config without its kwargs dict")
        meta = _literal(element.args[0], path, "the Config's kwargs")
        if not isinstance(meta, dict):
            raise UsageError(f"{path}:{element.lineno}: the Config's first argument is no dict")
        config = dict(meta)
        for name, value in zip(CONFIG_POSITIONAL, element.args[1:], strict=False):
            config[name] = _literal(value, path, name)
        for keyword in element.keywords:
            if keyword.arg in (None, "pre_hook", "ir_override"):
                continue
            config[keyword.arg] = _literal(keyword.value, path, keyword.arg)
        if config.get("num_ctas") == 1:
            del config["num_ctas"]
        if "maxnreg" in config and config["maxnreg"] is None:
            del config["maxnreg"]
        configs.append(config)
    return configs


def complete_config(found: Found, entry: dict[str, Any], where: str) -> dict[str, Any]:
    """A config file entry made a point of the reproducer's space.

    Missing ``num_warps`` / ``num_stages`` take ``triton.Config``'s defaults (4, 3);
    any other missing parameter (e.g. ``dtype``) takes the first value of its domain.
    """
    repro = found.repro
    config = dict(entry)
    for name, default in TRITON_CONFIG_DEFAULTS.items():
        if name in repro.param_names:
            config.setdefault(name, default)
    for param in repro.params:
        config.setdefault(param.name, param.values[0])
    problems = repro.problems(config)
    if problems:
        raise UsageError(f"{where}: bad config {entry}: {'; '.join(problems)}")
    return {name: config[name] for name in repro.param_names}


def load_configs(text: str, found: Found) -> list[dict[str, Any]]:
    """``--current`` / ``--proposed``: a YAML/TOML/JSON list, or ``file.py[::kernel]``."""
    path_text, _, kernel = text.partition("::")
    path = Path(path_text)
    if path.suffix == ".py":
        entries = read_autotune_configs(path, kernel or None)
    else:
        if kernel:
            raise UsageError(f"{text}: '::KERNEL' only applies to a Python file")
        entries = load_config_file(path_text)
    if not entries:
        raise UsageError(f"{text}: no configs")
    return [complete_config(found, e, f"{path}: config {i + 1}") for i, e in enumerate(entries)]


def declared_space(
    found: Found, tunable: Sequence[str], fixed: dict[str, Any]
) -> list[dict[str, Any]]:
    """Every point of the reproducer's space over ``tunable``, the rest held at ``fixed``."""
    repro = found.repro
    axes = [p.values if p.name in tunable else (fixed[p.name],) for p in repro.params]
    points = []
    for values in itertools.product(*axes):
        config = dict(zip(repro.param_names, values, strict=True))
        if not repro.problems(config):
            points.append(config)
    return points


def priority(found: Found, tunable: Sequence[str]) -> Callable[[dict[str, Any]], tuple]:
    """Screening order under a budget: big tiles first (fewer, larger CTAs), then deeper
    pipelines; what the budget cuts is the small-tile tail."""
    sizes = [n for n in tunable if n not in OPTION_KEYS]

    def key(config: dict[str, Any]) -> tuple:
        area = math.prod(int(config[n]) for n in sizes if isinstance(config[n], int))
        return (-area, -int(config.get("num_stages", 0)), int(config.get("num_warps", 0)))

    return key


class Configs:
    """The distinct configs of a gate, in first-seen order, each with its roles."""

    def __init__(self, found: Found) -> None:
        self.found = found
        self.items: list[GateConfig] = []
        self._by_config: dict[str, GateConfig] = {}

    def add(self, config: dict[str, Any], role: str) -> GateConfig:
        canonical = json.dumps(config, sort_keys=True, default=str)
        item = self._by_config.get(canonical)
        if item is None:
            label = self.found.repro.case_label(config)
            key = label if all(i.key != label for i in self.items) else f"{label}#{len(self.items)}"
            item = GateConfig(key, label, dict(config))
            self._by_config[canonical] = item
            self.items.append(item)
        if role not in item.roles:
            item.roles.append(role)
        return item

    def with_role(self, role: str) -> list[GateConfig]:
        return [i for i in self.items if role in i.roles]

    def by_key(self, key: str) -> GateConfig:
        return next(i for i in self.items if i.key == key)


# --------------------------------------------------------------------------- static


@dataclass
class StaticCheck:
    """One config on one target, without a GPU."""

    target: str
    outcome: str
    status: str  # ok | warn | reject | unchecked
    reason: str = ""
    summary: str = ""
    signature: str | None = None
    shared_bytes: int | None = None
    registers: int | None = None
    local_bytes: int | None = None
    dropped: bool = False
    triage: dict[str, Any] | None = None
    case_id: str = ""


def _triage(result: CaseResult) -> tuple[dict[str, Any] | None, str]:
    """``suite.engine.triage.triage(result)`` when that module exists; never breaks the gate."""
    try:
        from suite.engine.triage import triage  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None, ""
    try:
        found = triage(result)
    except Exception as exc:
        return None, f"(triage failed: {type(exc).__name__}: {exc})"
    if found is None:
        return None, ""
    fields = {k: getattr(found, k, None) for k in ("label", "rule", "explanation", "source")}
    return fields, ""


def _ptxas_line(result: CaseResult) -> str | None:
    """The ptxas diagnostic (``(C7602) Insufficient registers ...``), read from the kept events."""
    events = result.artifacts.get("events.jsonl")
    texts = [result.message]
    if events and Path(events).is_file():
        texts.append(Path(events).read_text(errors="replace"))
    for text in texts:
        for line in text.replace("\\n", "\n").splitlines():
            match = PTXAS_LINE.search(line)
            if match and "aborted" not in match.group(1):
                return match.group(1).strip().rstrip('",')
    return None


def judge_static(result: CaseResult) -> StaticCheck:
    """ok / warn (spills, register cap) / reject (with the reason) / unchecked (skipped)."""
    metrics = result.metrics
    check = StaticCheck(
        target=result.target,
        outcome=result.outcome.label,
        status="ok",
        signature=result.signature.text if result.signature else None,
        shared_bytes=metrics.get("shared_bytes"),
        registers=metrics.get("registers"),
        local_bytes=metrics.get("local_bytes"),
        case_id=result.case_id,
    )
    if result.outcome is Outcome.PASSED:
        notes = []
        if check.local_bytes:
            notes.append(f"spills {check.local_bytes} bytes/thread to local memory")
        limit = limits_for(result.target).registers_per_thread
        if check.registers is not None and check.registers >= limit:
            notes.append(f"{check.registers} registers/thread, at the {limit} cap")
        check.status = "warn" if notes else "ok"
        check.reason = check.summary = "; ".join(notes)
        return check
    if result.outcome is Outcome.SKIPPED:
        check.status = "unchecked"
        check.reason = check.summary = f"not checked: {result.message}"
        return check
    check.status = "reject"
    check.dropped = result.outcome in SILENTLY_DROPPED
    if result.outcome is Outcome.PTXAS_ERROR:
        line = _ptxas_line(result)
        check.summary = f"ptxas {line.split('. ')[0]}" if line else result.message
    else:
        check.summary = result.message or result.outcome.label
    check.triage, note = _triage(result)
    if check.triage and check.triage.get("explanation"):
        explanation = str(check.triage["explanation"])
        config = ", ".join(f"{k}={v}" for k, v in result.config.items())
        explanation = explanation.removesuffix(f" ({config})")
        label = check.triage.get("label")
        check.reason = explanation + (f" [{label}]" if label else "")
    else:
        check.reason = check.summary + (f" [{check.signature}]" if check.signature else "")
    if note:
        check.reason += f" {note}"
    return check


def static_checks(
    found: Found,
    configs: Sequence[GateConfig],
    targets: Sequence[str],
    folder: Path,
    execution: Execution,
    on_result: Callable[[CaseResult], None] = lambda r: None,
) -> dict[tuple[str, str], StaticCheck]:
    """Every config x target as an isolated compile-only case; ``(key, target) -> check``."""
    folder.mkdir(parents=True, exist_ok=True)
    specs = expand([found], targets, configs=[c.config for c in configs])
    keys = {case_id(found.repro, t, c.config): c.key for c in configs for t in targets}

    def seen(result: CaseResult) -> CaseResult:
        on_result(result)
        return result

    results = execute(specs, RunStore(folder), execution, seen)
    return {(keys[r.case_id], r.target): judge_static(r) for r in results}


# --------------------------------------------------------------------------- GPU


@dataclass
class Measured:
    """What the GPU child reported for one config (or cuBLAS)."""

    key: str
    failure: dict[str, Any] | None = None
    checked: bool = False
    size_checked: list[str] = field(default_factory=list)
    screen: dict[str, float] = field(default_factory=dict)
    times: dict[str, list[float]] = field(default_factory=dict)

    def score(self, sizes: Sequence[Sequence[int]]) -> float | None:
        """Mean log TFLOPS of the screening medians over all sizes (None if any is missing)."""
        logs = []
        for size in sizes:
            ms = self.screen.get(size_label(size))
            if ms is None:
                return None
            logs.append(math.log(tflops(size, ms)))
        return sum(logs) / len(logs)


@dataclass
class GpuRun:
    target: str
    device: dict[str, Any] = field(default_factory=dict)
    measured: dict[str, Measured] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    children: int = 0
    budget: dict[str, Any] | None = None
    finalists: list[str] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0

    def of(self, key: str) -> Measured:
        return self.measured.setdefault(key, Measured(key))


def tflops(size: Sequence[int], ms: float) -> float:
    m, n, k = size
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12


def _read_events(path: Path) -> list[dict[str, Any]]:
    from suite.engine.classify import read_events

    return read_events(path)


def _absorb(run: GpuRun, events: Iterable[dict[str, Any]]) -> tuple[bool, str | None, str | None]:
    """Fold one child's events into ``run``; returns (done, open item, its stage)."""
    done = False
    open_key: str | None = None
    open_stage: str | None = None
    for event in events:
        kind = event["event"]
        key = event.get("key")
        if kind == "start":
            run.device = {k: v for k, v in event.items() if k not in ("event", "t")}
        elif kind == "begin":
            open_key, open_stage = key, event.get("stage")
        elif kind == "check" and key is not None:
            measured = run.of(key)
            if event.get("ok"):
                if event.get("stage") == "check":
                    measured.checked = True
                elif event.get("size"):
                    measured.size_checked.append(size_label(event["size"]))
            else:
                measured.failure = {
                    k: event.get(k) for k in ("stage", "outcome", "message", "size", "traceback")
                }
            open_key = None
        elif kind == "screen" and key is not None:
            run.of(key).screen[size_label(event["size"])] = float(event["ms"])
            open_key = None
        elif kind == "time" and key is not None:
            run.of(key).times.setdefault(size_label(event["size"]), []).append(float(event["ms"]))
            open_key = None
        elif kind == "budget":
            run.budget = {"screened": event["screened"], "left": event["left"]}
        elif kind == "finalists":
            run.finalists = list(event["keys"])
        elif kind == "note":
            run.notes.append(str(event["text"]))
        elif kind == "context-lost":
            open_key = None
        elif kind == "fatal":
            run.error = f"{event.get('type')}: {event.get('message')}"
        elif kind == "done":
            done = True
    return done, open_key, open_stage


@dataclass
class GpuPlan:
    """What the GPU side of one gate measures, and how."""

    sizes: list[tuple[int, int, int]]
    input_sets: int = 3
    final: list[GateConfig] = field(default_factory=list)
    screen: list[GateConfig] = field(default_factory=list)
    finalists: int = 0
    deadline: float | None = None
    timeout_s: float = 600.0
    compile_jobs: int = 1
    seed: int = 0
    warmup_ms: int = 25
    rep_ms: int = 100


def gpu_measure(
    found: Found,
    kernel: JitKernel,
    target: str,
    plan: GpuPlan,
    folder: Path,
    python: str = sys.executable,
    log: Callable[[str], None] = lambda line: None,
) -> GpuRun:
    """Run ``suite.gate.gpu_child`` for one target, restarting it after a lost CUDA context."""
    folder.mkdir(parents=True, exist_ok=True)
    run = GpuRun(target)
    started = time.monotonic()
    finals = {c.key for c in plan.final}
    screens = {c.key for c in plan.screen}
    configs = {c.key: c for c in [*plan.final, *plan.screen]}
    excluded: set[str] = set()
    while run.children < MAX_CHILDREN:
        run.children += 1
        for measured in run.measured.values():  # a restarted child times everything again
            measured.times.clear()
            measured.size_checked.clear()
        prior = {
            key: {"screen": m.score(plan.sizes), "checked": m.checked}
            for key, m in run.measured.items()
            if m.failure is None
        }
        items = [
            {
                "key": key,
                "config": configs[key].config,
                "kind": "both"
                if key in finals and key in screens
                else "final"
                if key in finals
                else "screen",
            }
            for key in configs
            if key not in excluded
        ]
        events_path = folder / f"events-{run.children}.jsonl"
        spec = {
            "source": found.source,
            "kernel": kernel.name,
            "out_dtypes": kernel.out_dtypes,
            "events": str(events_path),
            "sizes": [list(s) for s in plan.sizes],
            "check_shapes": [list(s) for s in CHECK_SHAPES],
            "input_sets": plan.input_sets,
            "items": items,
            "prior": prior,
            "finalists": plan.finalists,
            "deadline": plan.deadline,
            "compile_jobs": plan.compile_jobs,
            "seed": plan.seed,
            "warmup_ms": plan.warmup_ms,
            "rep_ms": plan.rep_ms,
        }
        spec_path = folder / f"spec-{run.children}.json"
        spec_path.write_text(json.dumps(spec, indent=1, default=str))
        env = child_env({"TRITON_CACHE_DIR": str(folder / "cache"), "PYTHONUNBUFFERED": "1"})
        memory = int(_total_memory() * 0.75) or None
        log(f"gpu {target}: child {run.children}, {len(items)} configs")
        exit = run_isolated(
            [python, *GPU_CHILD, str(spec_path)],
            env=env,
            cwd=str(folder),
            bounds=Bounds(timeout_s=plan.timeout_s, memory_bytes=memory),
        )
        for name, captured in (("stdout", exit.stdout), ("stderr", exit.stderr)):
            if captured.text:
                (folder / f"{name}-{run.children}.txt").write_text(captured.text)
        done, open_key, stage = _absorb(run, _read_events(events_path))
        if done:
            break
        how = (
            "timed out"
            if exit.timed_out
            else f"died ({exit.signal_name})"
            if exit.signal_name
            else f"exited {exit.returncode}"
        )
        if open_key is not None and open_key != CUBLAS:
            run.of(open_key).failure = {
                "stage": stage,
                "outcome": "timeout" if exit.timed_out else "crash",
                "message": f"the GPU child {how} while at this config ({stage})",
            }
        lost = [k for k, m in run.measured.items() if m.failure is not None]
        excluded.update(lost)
        if exit.timed_out or run.error or (open_key is None and exit.returncode != 3):
            tail = exit.stderr.text.strip().splitlines()[-1:] or [""]
            run.error = run.error or f"the GPU child {how}: {tail[0]}"
            break
        if plan.deadline is not None and time.time() > plan.deadline + plan.timeout_s:
            run.error = "out of time after a lost CUDA context"
            break
        run.notes.append(f"child {run.children} {how} at {open_key or 'a lost context'}; restarted")
    else:
        run.error = run.error or f"gave up after {MAX_CHILDREN} GPU children"
    run.seconds = round(time.monotonic() - started, 1)
    return run


def _total_memory() -> int:
    try:
        import psutil

        return int(psutil.virtual_memory().total)
    except Exception:
        return 0


# --------------------------------------------------------------------------- verdict


@dataclass
class SpeedRow:
    key: str
    role: str
    label: str
    medians_ms: list[float]
    tflops: float
    tflops_min: float
    tflops_max: float
    spread: float  # (max - min) / median of the per-input-set medians
    percent_of_cublas: float | None = None
    correct: str = ""
    best: bool = False


def speed_row(key: str, role: str, label: str, size: Sequence[int], ms: list[float]) -> SpeedRow:
    median = statistics.median(ms)
    return SpeedRow(
        key=key,
        role=role,
        label=label,
        medians_ms=[round(m, 4) for m in ms],
        tflops=tflops(size, median),
        tflops_min=tflops(size, max(ms)),
        tflops_max=tflops(size, min(ms)),
        spread=(max(ms) - min(ms)) / median if median else 0.0,
    )


@dataclass
class Decision:
    verdict: str
    reasons: list[str]
    config_verdicts: dict[str, dict[str, Any]]
    speed: dict[str, dict[str, list[SpeedRow]]]
    comparisons: dict[str, dict[str, dict[str, Any]]]


def decide(
    configs: Configs,
    static: dict[tuple[str, str], StaticCheck],
    gpu: dict[str, GpuRun],
    targets: Sequence[str],
    sizes: Sequence[tuple[int, int, int]],
    noise_floor: float,
) -> Decision:
    """Per config accept/reject with reasons, the speed tables, and the overall verdict."""
    verdicts: dict[str, dict[str, Any]] = {}
    for item in configs.items:
        reasons, warnings = [], []
        for target in targets:
            check = static.get((item.key, target))
            if check is None:
                continue
            if check.status == "reject":
                reasons.append(f"{target}: {check.reason}")
            elif check.status in ("warn", "unchecked"):
                warnings.append(f"{target}: {check.reason}")
        for target, run in gpu.items():
            measured = run.measured.get(item.key)
            if measured is not None and measured.failure:
                failure = measured.failure
                at = f" at {size_label(failure['size'])}" if failure.get("size") else ""
                reasons.append(f"{target} (GPU{at}): {failure['outcome']}: {failure['message']}")
        verdicts[item.key] = {
            "verdict": "reject" if reasons else "accept",
            "reasons": reasons,
            "warnings": warnings,
        }

    overall: list[str] = []
    proposed = configs.with_role("proposed")
    bad = [c for c in proposed if verdicts[c.key]["verdict"] == "reject"]
    if bad:
        overall.append(
            f"{len(bad)} of {len(proposed)} proposed configs fail to compile, fit, launch "
            f"or compute correctly on a named target: {', '.join(c.label for c in bad)}"
        )
    for target, run in gpu.items():
        if run.error:
            overall.append(f"{target}: the GPU measurement did not finish: {run.error}")
        unmeasured = [
            c.label
            for c in proposed
            if verdicts[c.key]["verdict"] == "accept"
            and static[(c.key, target)].status in ("ok", "warn")
            and not all(
                (run.measured.get(c.key) or Measured(c.key)).times.get(size_label(s)) for s in sizes
            )
        ]
        if unmeasured:
            overall.append(f"{target}: proposed configs not measured: {', '.join(unmeasured)}")

    speed: dict[str, dict[str, list[SpeedRow]]] = {}
    comparisons: dict[str, dict[str, dict[str, Any]]] = {}
    for target, run in gpu.items():
        speed[target] = {}
        comparisons[target] = {}
        for size in sizes:
            label = size_label(size)
            rows = []
            cublas = run.measured.get(CUBLAS)
            base = None
            if cublas and cublas.times.get(label):
                times = cublas.times[label]
                base = speed_row(CUBLAS, "baseline", "cuBLAS (torch.matmul)", size, times)
                base.percent_of_cublas = 100.0
                rows.append(base)
            for item in configs.items:
                measured = run.measured.get(item.key)
                if measured is None or not measured.times.get(label):
                    continue
                row = speed_row(item.key, item.role, item.label, size, measured.times[label])
                if base is not None:
                    row.percent_of_cublas = 100.0 * row.tflops / base.tflops
                row.correct = "yes" if label in measured.size_checked else ""
                if measured.checked and row.correct:
                    row.correct = "yes (+ragged)"
                rows.append(row)
            speed[target][label] = rows
            comparison = _compare(rows, noise_floor)
            comparisons[target][label] = comparison
            if comparison.get("slower"):
                overall.append(f"{target} at {label}: {comparison['text']}")
    return Decision("fail" if overall else "pass", overall, verdicts, speed, comparisons)


def _compare(rows: list[SpeedRow], noise_floor: float) -> dict[str, Any]:
    """Best proposed against best current, beyond the larger of the two spreads (and the floor)."""
    current = [r for r in rows if "current" in r.role.split("+")]
    proposed = [r for r in rows if "proposed" in r.role.split("+")]
    if not current or not proposed:
        missing = "current" if not current else "proposed"
        return {"slower": False, "text": f"no {missing} config measured: no speed comparison"}
    best_current = max(current, key=lambda r: r.tflops)
    best_proposed = max(proposed, key=lambda r: r.tflops)
    best_current.best = best_proposed.best = True
    change = best_proposed.tflops / best_current.tflops - 1.0
    noise = max(best_current.spread, best_proposed.spread, noise_floor)
    slower = change < -noise
    text = (
        f"best proposed {best_proposed.label} {best_proposed.tflops:.0f} TFLOPS vs best current "
        f"{best_current.label} {best_current.tflops:.0f} TFLOPS: {change:+.1%} "
        f"(noise {noise:.1%}); " + ("slower beyond the noise" if slower else "not slower")
    )
    return {
        "slower": slower,
        "change": change,
        "noise": noise,
        "best_current": best_current.key,
        "best_proposed": best_proposed.key,
        "text": text,
    }


# --------------------------------------------------------------------------- the gate


@dataclass
class GateOptions:
    kernel: str
    current: str
    proposed: str | None = None
    targets: list[str] = field(default_factory=list)
    sizes: list[tuple[int, int, int]] = field(default_factory=lambda: [(4096,) * 3, (8192,) * 3])
    gpu: bool = False
    suggest: bool = False
    suggest_count: int = 4
    budget_s: float = 480.0
    input_sets: int = 3
    noise_floor: float = 0.01
    jit: str | None = None
    output: Path = Path("reports")
    workers: int = os.cpu_count() or 1
    timeout_s: float = 300.0
    memory_bytes: int | None = 8 << 30
    python: str = sys.executable
    seed: int | None = None


@dataclass
class GateResult:
    report: dict[str, Any]
    markdown: str
    folder: Path
    exit_status: int


def gate_folder(root: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    folder = root.resolve() / "gate" / stamp
    suffix = 1
    while folder.exists():
        suffix += 1
        folder = root.resolve() / "gate" / f"{stamp}-{suffix}"
    folder.mkdir(parents=True)
    return folder


def run_gate(options: GateOptions, log: Callable[[str], None] = lambda line: None) -> GateResult:
    """The whole gate: inputs, static checks, GPU measurements, verdict, report."""
    started = time.time()
    found = resolve_kernel(options.kernel)
    repro = found.repro
    targets = list(options.targets) or list(repro.targets)
    check_targets(targets)
    foreign = [t for t in targets if t not in repro.targets]
    if foreign:
        raise UsageError(
            f"{repro.id} does not apply to {', '.join(foreign)} "
            f"(its targets: {', '.join(repro.targets)})"
        )
    if options.suggest_count < 1 or options.input_sets < 1 or options.budget_s <= 0:
        raise UsageError("--suggest-count, --input-sets and --budget-s must be positive")
    if options.proposed is None and not options.suggest:
        raise UsageError("--proposed is required (unless --suggest proposes the configs)")
    current = load_configs(options.current, found)
    proposed = load_configs(options.proposed, found) if options.proposed else []
    kernel = jit_kernel(found, options.jit) if options.gpu or options.suggest else None
    tunable = tunable_params(found, kernel) if kernel is not None else []

    environment: dict[str, Any] = {}
    gpu_targets: list[str] = []
    if options.gpu or options.suggest:
        from suite.engine.environment import capture

        environment = capture(options.python)
        arch = environment.get("gpu_arch")
        if arch is None:
            raise UsageError(
                "--gpu/--suggest, but no NVIDIA GPU is visible (nvidia-smi found none)"
            )
        gpu_targets = [t for t in targets if limits_for(t).arch == arch]
        if not gpu_targets:
            raise UsageError(
                f"--gpu: none of the targets ({', '.join(targets)}) is the visible GPU's sm_{arch}"
            )
        gpu_targets = gpu_targets[:1]
        assert kernel is not None
        missing = [a for a in ("BLOCK_M", "BLOCK_N") if a not in kernel.arg_names]
        if missing or len(kernel.arg_names) < 6:
            raise UsageError(
                f"{repro.id}: the gate launches GEMM kernels as kernel[grid](a, b, c, M, N, K, "
                f"BLOCK_M=.., BLOCK_N=.., ...); {kernel.name} takes ({', '.join(kernel.arg_names)})"
            )

    if gpu_targets:
        fixed_names = [n for n in repro.param_names if n not in tunable]
        mixed = [n for n in fixed_names if len({repr(c[n]) for c in current + proposed}) > 1]
        if mixed:
            raise UsageError(
                f"the configs mix values of {', '.join(mixed)}; the GPU side times one problem "
                "(gate one dtype at a time)"
            )

    configs = Configs(found)
    for config in current:
        configs.add(config, "current")
    for config in proposed:
        configs.add(config, "proposed")
    if options.suggest:
        fixed = {k: v for k, v in current[0].items() if k not in tunable}
        for config in declared_space(found, tunable, fixed):
            configs.add(config, "candidate")

    folder = gate_folder(options.output)
    execution = Execution(
        python=options.python,
        bounds=Bounds(timeout_s=options.timeout_s, memory_bytes=options.memory_bytes),
        workers=max(1, options.workers),
    )
    named = [c for c in configs.items if c.roles != ["candidate"]]
    log(f"static: {len(named)} configs x {len(targets)} targets")
    static = static_checks(found, named, targets, folder / "static", execution)
    candidates = configs.with_role("candidate")
    todo = [c for c in candidates if c.roles == ["candidate"]]
    if todo:
        # The declared space is checked on the GPU's target only; what gets suggested is
        # checked on the other named targets afterwards.
        log(f"static: {len(todo)} points of the declared space x {', '.join(gpu_targets)}")
        static.update(static_checks(found, todo, gpu_targets, folder / "static-space", execution))

    gpu: dict[str, GpuRun] = {}
    suggestion: dict[str, Any] | None = None
    for target in gpu_targets:

        def clean(item: GateConfig, target: str = target) -> bool:
            return static[(item.key, target)].status in ("ok", "warn")

        final = [c for c in configs.items if ("current" in c.roles or "proposed" in c.roles)]
        final = [c for c in final if clean(c)]
        screen: list[GateConfig] = []
        plan = GpuPlan(
            sizes=list(options.sizes),
            input_sets=options.input_sets,
            final=final,
            timeout_s=max(options.timeout_s, 600.0),
            seed=options.seed if options.seed is not None else int(time.time()) % 100000,
            compile_jobs=max(1, min((os.cpu_count() or 2) - 2, 12)),
        )
        if options.suggest:
            screen = [c for c in candidates if static[(c.key, target)].status == "ok"]
            order = priority(found, tunable)
            screen.sort(key=lambda c: order(c.config))
            plan.screen = screen
            plan.finalists = 2 * options.suggest_count
            per_item = 4.0 + len(options.sizes) * options.input_sets * 0.4
            reserve = 30.0 + (plan.finalists + len(final)) * per_item
            plan.deadline = started + options.budget_s - reserve
            # The budget is a limit: the child is killed a minute after it is spent.
            plan.timeout_s = max(60.0, started + options.budget_s + 60 - time.time())
        log(f"gpu {target}: {len(final)} configs to check and time, {len(screen)} to screen")
        assert kernel is not None
        gpu[target] = gpu_measure(
            found, kernel, target, plan, folder / "gpu" / target, options.python, log
        )
        if options.suggest:
            suggestion = _suggestion(configs, gpu[target], plan, options, static, target)
            chosen = [configs.by_key(key) for key in suggestion["keys"]]
            others = [t for t in targets if t != target]
            unchecked = [c for c in chosen if c.roles == ["candidate"]]
            if others and unchecked:
                log(f"static: the suggested configs x {', '.join(others)}")
                static.update(
                    static_checks(found, unchecked, others, folder / "static-suggested", execution)
                )
            if not proposed:
                for item in chosen:
                    item.roles.append("proposed")

    decision = decide(configs, static, gpu, targets, options.sizes, options.noise_floor)
    exit_status = 0 if decision.verdict == "pass" else 1
    report = build_report(
        options,
        found,
        kernel,
        targets,
        configs,
        static,
        gpu,
        decision,
        suggestion,
        environment,
        folder,
        started,
    )
    report["exit_status"] = exit_status
    if suggestion is not None and suggestion["configs"]:
        header = [
            f"# repro gate --suggest: {repro.id} on {', '.join(gpu)} "
            f"({', '.join(str(r.device.get('device')) for r in gpu.values())}), "
            f"sizes {', '.join(size_label(s) for s in options.sizes)}, "
            f"{time.strftime('%Y-%m-%d')}; fastest first, median TFLOPS:",
        ]
        pairs = zip(suggestion["labels"], suggestion["tflops"], strict=True)
        header += [f"#   {label}: {value}" for label, value in pairs]
        (folder / "suggested.yaml").write_text(
            "\n".join(header) + "\n" + yaml_list(suggestion["configs"])
        )
        report["suggest"]["file"] = str(folder / "suggested.yaml")
    markdown = render_markdown(report)
    (folder / "gate.json").write_text(json.dumps(report, indent=2, default=str))
    (folder / "gate.md").write_text(markdown)
    return GateResult(report, markdown, folder, exit_status)


def _suggestion(
    configs: Configs,
    run: GpuRun,
    plan: GpuPlan,
    options: GateOptions,
    static: dict[tuple[str, str], StaticCheck],
    target: str,
) -> dict[str, Any]:
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
    chosen_tflops = [round(math.exp(score), 1) for score, _ in ranked[: options.suggest_count]]
    screened = []
    for item in configs.with_role("candidate"):
        measured = run.measured.get(item.key)
        if measured is None:
            continue
        score = measured.score(plan.sizes)
        screened.append(
            {
                "key": item.key,
                "label": item.label,
                "tflops": round(math.exp(score), 1) if score is not None else None,
                "failure": (measured.failure or {}).get("message"),
            }
        )
    screened.sort(key=lambda r: -float(r["tflops"] or 0.0))
    eligible = sum(
        1 for c in configs.with_role("candidate") if static[(c.key, target)].status == "ok"
    )
    return {
        "keys": [c.key for c in chosen],
        "configs": [c.config for c in chosen],
        "labels": [c.label for c in chosen],
        "tflops": chosen_tflops,
        "space": len(configs.with_role("candidate")),
        "eligible": eligible,
        "screened": len([s for s in screened if s["tflops"] is not None]),
        "budget": run.budget,
        "budget_s": options.budget_s,
        "ranking": screened[:15],
        "file": None,
    }


# --------------------------------------------------------------------------- report


def yaml_list(configs: Sequence[dict[str, Any]]) -> str:
    """A YAML list of flat configs, one flow mapping per line (what ``load_config_file`` reads).

    Written by hand: values are numbers, booleans and short strings (JSON-quoted, which
    YAML reads as the same string), so no YAML library is needed on the device.
    """
    lines = []
    for config in configs:
        cells = ", ".join(f"{k}: {json.dumps(v)}" for k, v in config.items())
        lines.append(f"- {{{cells}}}")
    return "\n".join(lines) + "\n"


def _kb(value: int | None) -> str:
    return "" if value is None else f"{value / 1024:.0f} KiB"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def build_report(
    options: GateOptions,
    found: Found,
    kernel: JitKernel | None,
    targets: Sequence[str],
    configs: Configs,
    static: dict[tuple[str, str], StaticCheck],
    gpu: dict[str, GpuRun],
    decision: Decision,
    suggestion: dict[str, Any] | None,
    environment: dict[str, Any],
    folder: Path,
    started: float,
) -> dict[str, Any]:
    """Everything the Markdown and ``gate.json`` say, as plain data."""
    import triton

    shown = [c for c in configs.items if c.roles != ["candidate"]]
    static_tables = []
    for target in targets:
        rows = []
        for item in shown:
            check = static[(item.key, target)]
            verdict = {"ok": "ok", "warn": "ok (warning)", "reject": "reject"}.get(
                check.status, check.status
            )
            rows.append(
                {
                    "role": item.role,
                    "config": item.label,
                    "verdict": verdict,
                    "shared": _kb(check.shared_bytes),
                    "registers": "" if check.registers is None else str(check.registers),
                    "spills": "" if check.local_bytes is None else f"{check.local_bytes} B",
                    "reason": _cell(check.reason),
                    "dropped": check.dropped,
                }
            )
        limit = limits_for(target)
        static_tables.append(
            {
                "target": target,
                "shared_limit": limit.shared_bytes,
                "rows": rows,
            }
        )
    rejected = [
        (item, target, static[(item.key, target)])
        for item in shown
        for target in targets
        if static[(item.key, target)].status == "reject"
    ]
    dropped = [
        {"config": item.label, "target": target, "reason": _cell(check.summary)}
        for item, target, check in rejected
        if check.dropped
    ]
    raises = [
        {"config": item.label, "target": target, "reason": _cell(check.summary)}
        for item, target, check in rejected
        if not check.dropped
    ]
    gpu_sections = []
    for target, run in gpu.items():
        sizes = []
        for size in options.sizes:
            label = size_label(size)
            rows = [
                {
                    "role": r.role,
                    "config": r.label,
                    "best": r.best,
                    "correct": r.correct or ("n/a" if r.key == CUBLAS else "no"),
                    "tflops": f"{r.tflops:.0f}",
                    "cublas": "" if r.percent_of_cublas is None else f"{r.percent_of_cublas:.0f}%",
                    "range": f"{r.tflops_min:.0f}-{r.tflops_max:.0f}",
                    "spread": f"{r.spread:.1%}",
                    "ms": f"{statistics.median(r.medians_ms):.4g}",
                }
                for r in decision.speed[target][label]
            ]
            sizes.append(
                {
                    "size": label,
                    "rows": rows,
                    "comparison": decision.comparisons[target][label]["text"],
                }
            )
        failures = [
            {
                "config": configs.by_key(key).label if key != CUBLAS else "cuBLAS",
                "outcome": m.failure["outcome"],
                "message": _cell(str(m.failure.get("message") or "")),
            }
            for key, m in run.measured.items()
            if m.failure
        ]
        flush = run.device.get("flush") or {}
        gpu_sections.append(
            {
                "target": target,
                "device": run.device.get("device", "unknown GPU"),
                "torch": run.device.get("torch", ""),
                "triton": run.device.get("triton", ""),
                "flush": flush.get("how", "not reported"),
                "flush_verified": bool(flush.get("verified")),
                "sizes": sizes,
                "failures": failures,
                "notes": run.notes,
                "error": run.error,
                "children": run.children,
                "seconds": run.seconds,
                "seed": run.device.get("seed"),
            }
        )
    config_rows = [
        {
            "key": item.key,
            "label": item.label,
            "role": item.role,
            "config": item.config,
            **decision.config_verdicts[item.key],
            "static": {t: asdict(static[(item.key, t)]) for t in targets},
        }
        for item in shown
    ]
    return {
        "verdict": decision.verdict,
        "exit_status": None,
        "scope": "static + GPU"
        if gpu
        else "static only (no --gpu: correctness and speed unchecked)",
        "reasons": decision.reasons,
        "kernel": {
            "id": found.repro.id,
            "title": found.repro.title,
            "source": found.source,
            "jit": kernel.name if kernel is not None else None,
        },
        "files": {"current": options.current, "proposed": options.proposed},
        "targets": list(targets),
        "gpu_targets": list(gpu),
        "sizes": [size_label(s) for s in options.sizes],
        "input_sets": options.input_sets,
        "noise_floor": options.noise_floor,
        "triton": triton.__version__,
        "environment": {k: environment.get(k) for k in ("gpu", "driver", "python", "triton")},
        "counts": {
            "current": len(configs.with_role("current")),
            "proposed": len(configs.with_role("proposed")),
        },
        "configs": config_rows,
        "static_tables": static_tables,
        "dropped": dropped,
        "raises": raises,
        "gpu": gpu_sections,
        "suggest": suggestion,
        "check_shapes": [size_label(s) for s in CHECK_SHAPES],
        "created": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started)),
        "seconds": round(time.time() - started, 1),
        "folder": str(folder),
    }


def render_markdown(report: dict[str, Any]) -> str:
    """``suite/templates/gate.md.j2``, through the one template environment."""
    return template_environment().get_template(TEMPLATE).render(report=report)
