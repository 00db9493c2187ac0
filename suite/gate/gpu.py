"""The GPU side: one isolated child per target, restarted after a lost CUDA context."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from suite.children import Role, child_argv
from suite.engine import (
    GPU_LOCK,
    Bounds,
    Exit,
    Found,
    Unreadable,
    check_after,
    child_env,
    first_visible_gpu,
    gpu_arch,
    machine_lock,
    read_lines,
    run_isolated,
)
from suite.gate import events
from suite.gate.events import CONTEXT_LOST, CUBLAS
from suite.gate.inputs import GateConfig, JitKernel, size_label

# Correctness shapes: tile-aligned, ragged (checks.GEMM_SHAPES), and ragged in M, N and K
# at once (every dimension 8 mod 16: no BLOCK divides it; strides stay 16-byte multiples).
CHECK_SHAPES = ((512, 512, 512), (520, 1040, 1008), (1000, 776, 264))
MAX_CHILDREN = 3


@dataclass(frozen=True)
class Failure:
    """Why one config failed on the GPU (reported by the child, or blamed on a crash)."""

    stage: str | None
    outcome: str | None
    message: str | None
    size: list[int] | None = None
    traceback: str | None = None


@dataclass
class Measured:
    """What the GPU child reported for one config (or cuBLAS)."""

    key: str
    failure: Failure | None = None
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
    device: events.Start | None = None  # what the (last) child said when it came up
    measured: dict[str, Measured] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    children: int = 0
    budget: events.Budget | None = None
    finalists: list[str] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0

    def of(self, key: str) -> Measured:
        return self.measured.setdefault(key, Measured(key))


def tflops(size: Sequence[int], ms: float) -> float:
    m, n, k = size
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12


class GpuEvents:
    """Folds one child's events into a :class:`GpuRun`, one ``on_<event>`` method per event
    (xdist's ``worker_<event>``): adding an event means adding a method."""

    def __init__(self, run: GpuRun) -> None:
        self.run = run
        self.done = False
        #: The config the child began and never finished: a crash is blamed on it.
        self.open_key: str | None = None
        self.open_stage: str | None = None

    def feed(self, path: Path) -> GpuEvents:
        unreadable = 0
        for record in read_lines(path):
            try:
                event = events.GateEvent.decode(record)
            except Unreadable:  # a known event with an ill-typed field: skipped, counted
                unreadable += 1
                continue
            if event is not None:
                getattr(self, "on_" + event.KIND.replace("-", "_"))(event)
        if unreadable:
            self.run.notes.append(f"{unreadable} unreadable event(s) from the GPU child skipped")
        return self

    def on_start(self, event: events.Start) -> None:
        self.run.device = event

    def on_begin(self, event: events.Begin) -> None:
        self.open_key, self.open_stage = event.key, event.stage

    def on_check(self, event: events.Check) -> None:
        measured = self.run.of(event.key)
        if not event.ok:
            measured.failure = Failure(
                event.stage, event.outcome, event.message, event.size, event.traceback
            )
        elif event.stage == "check":
            measured.checked = True
        elif event.size:
            measured.size_checked.append(size_label(event.size))
        self.open_key = None

    def on_screen(self, event: events.Screen) -> None:
        self.run.of(event.key).screen[size_label(event.size)] = float(event.ms)
        self.open_key = None

    def on_time(self, event: events.Timed) -> None:
        self.run.of(event.key).times.setdefault(size_label(event.size), []).append(event.ms)
        self.open_key = None

    def on_budget(self, event: events.Budget) -> None:
        self.run.budget = event

    def on_finalists(self, event: events.Finalists) -> None:
        self.run.finalists = list(event.keys)

    def on_note(self, event: events.Note) -> None:
        self.run.notes.append(event.text)

    def on_context_lost(self, event: events.ContextLost) -> None:
        self.open_key = None

    def on_fatal(self, event: events.Fatal) -> None:
        self.run.error = f"{event.type}: {event.message}"

    def on_done(self, event: events.Done) -> None:
        self.done = True


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
    """Run the ``gate-gpu`` child (``suite.gate.gpu_child``) for one target, restarting it
    after a lost CUDA context."""
    folder.mkdir(parents=True, exist_ok=True)
    run = GpuRun(target)
    started = time.monotonic()
    excluded: set[str] = set()
    while run.children < MAX_CHILDREN:
        run.children += 1
        spec = child_spec(found, kernel, plan, run, excluded, folder)
        log(f"gpu {target}: child {run.children}, {len(spec.items)} configs")
        ended = run_child(spec, folder, run.children, plan.timeout_s, python)
        seen = GpuEvents(run).feed(Path(spec.events))
        if seen.done:
            break
        stop = after_child(run, plan, ended, seen)
        excluded.update(k for k, m in run.measured.items() if m.failure is not None)
        if stop:
            break
    else:
        run.error = run.error or f"gave up after {MAX_CHILDREN} GPU children"
    run.seconds = round(time.monotonic() - started, 1)
    return run


def child_spec(
    found: Found, kernel: JitKernel, plan: GpuPlan, run: GpuRun, excluded: set[str], folder: Path
) -> events.GpuSpec:
    """The spec of the next child: what is left, and what earlier children already know."""
    for measured in run.measured.values():  # a restarted child times everything again
        measured.times.clear()
        measured.size_checked.clear()
    prior = {
        key: events.Prior(screen=m.score(plan.sizes), checked=m.checked)
        for key, m in run.measured.items()
        if m.failure is None
    }
    finals = {c.key for c in plan.final}
    screens = {c.key for c in plan.screen}
    configs = {c.key: c for c in [*plan.final, *plan.screen]}
    items = [
        events.SpecItem(key, configs[key].config, _kind(key in finals, key in screens))
        for key in configs
        if key not in excluded
    ]
    return events.GpuSpec(
        source=found.source,
        kernel=kernel.name,
        out_dtypes=kernel.out_dtypes,
        events=str(folder / f"events-{run.children}.jsonl"),
        sizes=[list(s) for s in plan.sizes],
        check_shapes=[list(s) for s in CHECK_SHAPES],
        input_sets=plan.input_sets,
        items=items,
        prior=prior,
        finalists=plan.finalists,
        deadline=plan.deadline,
        compile_jobs=plan.compile_jobs,
        seed=plan.seed,
        warmup_ms=plan.warmup_ms,
        rep_ms=plan.rep_ms,
    )


def _kind(final: bool, screen: bool) -> str:
    return "both" if final and screen else "final" if final else "screen"


def run_child(
    spec: events.GpuSpec, folder: Path, number: int, timeout_s: float, python: str
) -> Exit:
    """One isolated child on ``spec``; its spec and captured output kept in ``folder``.

    It launches configs nobody has run, which may fault: it takes its GPU's machine-wide
    lock once it uses the GPU and holds it to its exit (``suite.gate.gpu_child``'s
    ``take_the_gpu``), as every repro process's launches take turns there; after it, on a
    real GPU, a fresh process must make a CUDA context there (``GpuStopped``, exit 4, if not).
    """
    spec_path = folder / f"spec-{number}.json"
    spec_path.write_text(spec.to_json())
    gpu = first_visible_gpu()
    lock = machine_lock(gpu)
    turns = {GPU_LOCK: str(lock)} if lock is not None else {}
    env = child_env(
        {
            "TRITON_CACHE_DIR": str(folder / "cache"),
            "PYTHONUNBUFFERED": "1",
            "CUDA_VISIBLE_DEVICES": gpu,
            **turns,
        }
    )
    memory = int(_total_memory() * 0.75) or None
    ended = run_isolated(
        child_argv(python, Role.GATE_GPU, str(spec_path)),
        env=env,
        cwd=str(folder),
        bounds=Bounds(timeout_s=timeout_s, memory_bytes=memory),
    )
    if gpu_arch() is not None:  # a real GPU (a test's stand-in child launches nothing)
        check_after(gpu, lock)
    for name, captured in (("stdout", ended.stdout), ("stderr", ended.stderr)):
        if captured.text:
            (folder / f"{name}-{number}.txt").write_text(captured.text)
    return ended


def after_child(run: GpuRun, plan: GpuPlan, ended: Exit, seen: GpuEvents) -> bool:
    """A child that did not finish: blame the config it was on; True when no new child
    should follow (a timeout, a fatal error, a death at no config, or out of time)."""
    open_key, stage = seen.open_key, seen.open_stage
    how = (
        "timed out"
        if ended.timed_out
        else f"died ({ended.signal_name})"
        if ended.signal_name
        else f"exited {ended.returncode}"
    )
    if open_key is not None and open_key != CUBLAS:
        run.of(open_key).failure = Failure(
            stage=stage,
            outcome="timeout" if ended.timed_out else "crash",
            message=f"the GPU child {how} while at this config ({stage})",
        )
    if ended.timed_out or run.error or (open_key is None and ended.returncode != CONTEXT_LOST):
        tail = ended.stderr.text.strip().splitlines()[-1:] or [""]
        run.error = run.error or f"the GPU child {how}: {tail[0]}"
        return True
    if plan.deadline is not None and time.time() > plan.deadline + plan.timeout_s:
        run.error = "out of time after a lost CUDA context"
        return True
    run.notes.append(f"child {run.children} {how} at {open_key or 'a lost context'}; restarted")
    return False


def _total_memory() -> int:
    try:
        import psutil

        return int(psutil.virtual_memory().total)
    except Exception:
        return 0
