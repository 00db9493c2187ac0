"""The GPU side of ``repro gate``: ``python -m suite.children gate-gpu SPEC.json``.

One child per target whose GPU is visible. It loads the reproducer module,
takes its ``@triton.jit`` GEMM kernel (launched as ``kernel[grid](a, b, c, M,
N, K, **meta)``, the contract of :func:`suite.checks.check_gemm`) and, for
each config it is given:

- checks correctness: NaN-poisoned outputs, fresh random inputs, several
  shapes (tile-aligned and ragged) against a float64 reference, tolerance by
  dtype (:func:`suite.checks.assert_close`), and the timed size itself;
- times it with ``triton.testing.do_bench`` (median; do_bench zeroes a
  256 MiB buffer before every timed call, which evicts the inputs from L2;
  checked in do_bench's source at start-up and reported), over several fresh
  input sets, together with cuBLAS (``torch.matmul``) on the same inputs.

``screen`` items (``repro gate --suggest``) are first timed once per size, in
priority order, until the spec's deadline; the best of them then join the
``final`` items for the full check and the timing over every input set.
Kernels are compiled ahead by a pool of spawned processes into the shared
``TRITON_CACHE_DIR`` so that the GPU never waits for the compiler.

The protocol is :data:`CHILD_STEPS`, named steps over one :class:`ChildState`, as the
gate's own :data:`suite.gate.gate.GATE_STEPS`. Facts only, as JSON lines in the spec's
events file, flushed as they happen (a crash still leaves what came before and the item it
hit, from its ``begin`` event). The parent (:mod:`suite.gate.gate`) judges. Standard
library, triton and torch only (and :mod:`suite.checks`, :mod:`suite.gate.events`,
:mod:`suite.gate.gpu_bench`).
"""

from __future__ import annotations

import math
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from suite.engine import Unreadable, hold_to_exit
from suite.gate.events import (
    CONTEXT_LOST,
    CUBLAS,
    Begin,
    Budget,
    Check,
    ContextLost,
    Done,
    EventLog,
    Fatal,
    Finalists,
    GpuSpec,
    Note,
    Screen,
    SpecItem,
    Start,
    Timed,
)
from suite.gate.gpu_bench import (
    Bench,
    Warmer,
    classify_exception,
    context_alive,
    dtypes,
    verify_flush,
)


class ContextGone(Exception):
    """A failure took the CUDA context with it: this child can measure nothing more."""


@dataclass
class ChildState:
    """What the steps of one child know so far; each step reads it and adds to it."""

    spec: GpuSpec
    events: EventLog
    screen: list[SpecItem] = field(default_factory=list)  # to screen in this child
    final: list[SpecItem] = field(default_factory=list)  # to check and time
    screened: dict[str, float] = field(default_factory=dict)  # key -> mean log TFLOPS
    timed: list[SpecItem] = field(default_factory=list)  # checked, to time
    dropped: set[str] = field(default_factory=set)  # failed while timed
    warmer: Warmer | None = None
    bench: Bench | None = None

    @property
    def shapes(self) -> list[list[int]]:
        """Every shape a final item is launched at (one compile per specialization)."""
        return [*self.spec.check_shapes, *self.spec.sizes]

    @property
    def gpu(self) -> Bench:
        assert self.bench is not None
        return self.bench

    @property
    def compiles(self) -> Warmer:
        assert self.warmer is not None
        return self.warmer


def failed(
    state: ChildState, key: str, stage: str, exc: BaseException, size: list[int] | None = None
) -> None:
    """Record a failure; raise :class:`ContextGone` when the CUDA context went with it."""
    outcome, message = classify_exception(exc)
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    state.events.emit(
        Check(
            key=key,
            stage=stage,
            ok=False,
            outcome=outcome,
            message=message,
            size=size,
            traceback=text[-4000:],
        )
    )
    if outcome != "wrong-result" and not context_alive():
        state.events.emit(ContextLost(key=key))
        raise ContextGone(key)


def compile_failed(state: ChildState, key: str, stage: str, wait: float = 600.0) -> bool:
    """The compile pool's error for ``key``, recorded (False: compiled, or not known)."""
    error = state.compiles.compile_error(key, timeout=wait)
    if error is not None:
        state.events.emit(
            Check(key=key, stage=stage, ok=False, outcome="compiler-error", message=error)
        )
    return error is not None


# -- the steps -----------------------------------------------------------------------------


def plan(state: ChildState) -> None:
    """What is left to screen (an earlier child's medians count) and what to check and time."""
    spec = state.spec
    state.screen = [i for i in spec.items if i.screened and spec.prior_of(i.key).screen is None]
    state.final = [i for i in spec.items if i.final]
    state.screened = {k: p.screen for k, p in spec.prior.items() if p.screen is not None}


def start_compiles(state: ChildState) -> None:
    """Hand every compile to the pool at once, before the GPU is touched."""
    spec = state.spec
    state.warmer = Warmer(spec)
    for item in state.final:
        if not spec.prior_of(item.key).checked:
            state.warmer.submit(item.key, item.config, state.shapes)
    for item in state.screen:
        state.warmer.submit(item.key, item.config, spec.sizes[:1])


def take_the_gpu(state: ChildState) -> None:
    """From here the child uses the GPU, and what it launches (unproven configs) may fault:
    it holds the GPU's machine-wide lock (``GPU_LOCK``, given by the parent) to its exit, so
    no other repro process launches beside it, while its compiles, started before, go on.
    The parent checks the GPU after it (:func:`suite.gate.gpu.run_child`)."""
    hold_to_exit("gate child", "a gate child's checks and timing, to its exit")


def announce(state: ChildState) -> None:
    """Load the kernel, set Triton's allocator, and say what measures and how."""
    state.bench = bench = Bench(state.spec)
    bench.checks.ensure_allocator()
    torch = bench.torch
    props = torch.cuda.get_device_properties(0)
    state.events.emit(
        Start(
            device=props.name,
            capability=[props.major, props.minor],
            torch=torch.__version__,
            triton=bench.triton.__version__,
            flush=verify_flush(),
            seed=bench.seed,
            cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
        )
    )


def screen(state: ChildState) -> None:
    """``--suggest``: one checked median per size, best-first order, until the deadline."""
    spec = state.spec
    references: dict[int, tuple[Any, Any, Any]] = {}
    for position, item in enumerate(state.screen):
        if spec.deadline is not None and time.time() > spec.deadline:
            state.events.emit(Budget(screened=position, left=len(state.screen) - position))
            break
        wait = 600.0 if spec.deadline is None else max(1.0, spec.deadline - time.time())
        if compile_failed(state, item.key, "compile", wait):
            continue
        state.events.emit(Begin(key=item.key, stage="screen"))
        try:
            logs = [
                screen_size(state, item, index, size, references)
                for index, size in enumerate(spec.sizes)
            ]
        except Exception as exc:
            failed(state, item.key, "screen", exc)
            continue
        state.screened[item.key] = sum(logs) / len(logs)
    references.clear()
    state.gpu.torch.cuda.empty_cache()


def screen_size(
    state: ChildState,
    item: SpecItem,
    index: int,
    size: list[int],
    references: dict[int, tuple[Any, Any, Any]],
) -> float:
    """Check ``item`` at one size and time it once: log TFLOPS (inputs shared by all items)."""
    bench = state.gpu
    dtype, out_dtype = dtypes(item.config, bench.out_dtypes)
    if index not in references:
        a, b = bench.inputs(size, dtype, 0)
        references[index] = (a, b, a.double() @ b.double())
    a, b, expected = references[index]
    bench.check_once(item.config, a, b, expected, f"C[{size[0]}x{size[1]}]")
    out = bench.checks.torch_dtype(out_dtype)
    c = bench.torch.empty((size[0], size[1]), device="cuda", dtype=out)
    ms = bench.median_ms(bench.launcher(item.config, a, b, c))
    state.events.emit(Screen(key=item.key, size=size, ms=ms))
    m, n, k = size
    return math.log(2 * m * n * k / (ms * 1e-3) / 1e12)


def pick_finalists(state: ChildState) -> None:
    """The best screened items join the final ones (compiled ahead for every shape)."""
    if not (state.screen or state.screened):
        return
    spec = state.spec
    by_key = {i.key: i for i in spec.items}
    best = sorted(state.screened, key=lambda k: -state.screened[k])[: spec.finalists]
    finalists = [by_key[k] for k in best if k in by_key and by_key[k] not in state.final]
    for item in finalists:
        state.compiles.submit(item.key, item.config, state.shapes)
    state.final += finalists
    state.events.emit(Finalists(keys=best))


def check_finals(state: ChildState) -> None:
    """Full correctness on the check shapes, ragged ones included."""
    spec = state.spec
    for item in state.final:
        if spec.prior_of(item.key).checked:
            state.timed.append(item)
            continue
        if compile_failed(state, item.key, "check"):
            continue
        state.events.emit(Begin(key=item.key, stage="check"))
        try:
            state.gpu.check_shapes(item.config)
        except Exception as exc:
            failed(state, item.key, "check", exc)
            continue
        state.events.emit(Check(key=item.key, stage="check", ok=True, shapes=spec.check_shapes))
        state.timed.append(item)
    state.compiles.close()


@dataclass(frozen=True)
class Problem:
    """One input set of one size: the operands every timed item shares."""

    size: list[int]
    input_set: int
    a: Any
    b: Any
    c: Any
    expected: Any  # the float64 reference, on the first input set only


def time_sizes(state: ChildState) -> None:
    """Every timed item and cuBLAS, over fresh input sets per size, interleaved."""
    bench = state.gpu
    dtype = dtypes(state.final[0].config, bench.out_dtypes)[0] if state.final else "fp16"
    out_dtype = dtypes({"dtype": dtype}, bench.out_dtypes)[1]
    cublas = out_dtype == dtype and dtype != "fp8e4nv"
    if not cublas:
        state.events.emit(Note(text=f"no cuBLAS comparison for {dtype} -> {out_dtype}"))
    for size in state.spec.sizes:
        m, n, _ = size
        for input_set in range(state.spec.input_sets):
            a, b = bench.inputs(size, dtype, 10 * (input_set + 1))
            expected = a.double() @ b.double() if input_set == 0 else None
            c = bench.torch.empty((m, n), device="cuda", dtype=bench.checks.torch_dtype(out_dtype))
            problem = Problem(size, input_set, a, b, c, expected)
            for item in state.timed:
                if item.key not in state.dropped:
                    time_item(state, item, problem)
            if cublas:
                time_cublas(state, problem)
            del a, b, c, expected, problem
            bench.torch.cuda.empty_cache()


def time_item(state: ChildState, item: SpecItem, problem: Problem) -> None:
    """One do_bench median of ``item`` (checked first on the first input set)."""
    bench, size = state.gpu, problem.size
    m, n, k = size
    state.events.emit(Begin(key=item.key, stage="time", size=size, input_set=problem.input_set))
    try:
        if problem.expected is not None:
            what = f"C[{m}x{n}] (K={k})"
            bench.check_once(item.config, problem.a, problem.b, problem.expected, what)
            state.events.emit(Check(key=item.key, stage="size", ok=True, size=size))
        ms = bench.median_ms(bench.launcher(item.config, problem.a, problem.b, problem.c))
    except Exception as exc:
        state.dropped.add(item.key)
        failed(state, item.key, "size", exc, size)
        return
    state.events.emit(Timed(key=item.key, size=size, input_set=problem.input_set, ms=ms))


def time_cublas(state: ChildState, problem: Problem) -> None:
    """cuBLAS (``torch.matmul``) on the same inputs: the baseline of the speed table."""
    bench, size = state.gpu, problem.size
    torch, a, b = bench.torch, problem.a, problem.b
    state.events.emit(Begin(key=CUBLAS, stage="time", size=size, input_set=problem.input_set))
    out = torch.empty((size[0], size[1]), device="cuda", dtype=a.dtype)

    def matmul() -> None:
        torch.matmul(a, b, out=out)

    ms = bench.median_ms(matmul)
    state.events.emit(Timed(key=CUBLAS, size=size, input_set=problem.input_set, ms=ms))


def finish(state: ChildState) -> None:
    state.events.emit(Done())


#: The child, step by step.
CHILD_STEPS: tuple[Callable[[ChildState], None], ...] = (
    plan,
    start_compiles,
    take_the_gpu,
    announce,
    screen,
    pick_finalists,
    check_finals,
    time_sizes,
    finish,
)


def run(spec: GpuSpec, events: EventLog) -> int:
    """:data:`CHILD_STEPS` in order; 0 when done, :data:`CONTEXT_LOST` when the CUDA context
    was lost (restart me)."""
    state = ChildState(spec, events)
    try:
        for step in CHILD_STEPS:
            step(state)
    except ContextGone:
        return CONTEXT_LOST
    return 0


def run_spec(path: str) -> int:
    """Run the plan at ``path``; the exit status."""
    try:
        spec = GpuSpec.from_json(Path(path).read_text())
    except Unreadable as exc:  # no events file to say it in: one line on stderr
        print(f"gpu_child: refused {path}: {exc}", file=sys.stderr)
        return 2
    events = EventLog(spec.events)
    try:
        return run(spec, events)
    except BaseException as exc:
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        events.emit(Fatal(type=type(exc).__name__, message=str(exc)[:2000], traceback=text[-4000:]))
        return 1


def main(argv: list[str]) -> NoReturn:
    """The ``gate-gpu`` child: ``SPEC.json``."""
    code = run_spec(argv[0])
    sys.stdout.flush()
    sys.stderr.flush()
    # No interpreter teardown: a compile pool's threads or CUDA's exit hooks must not
    # turn a finished run into a hang (the supervisor kills what is left in the group).
    os._exit(code)
