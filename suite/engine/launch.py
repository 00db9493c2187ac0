"""The launch phase of a case, in the child: launch, synchronize, judge with the oracles.

Each launch is announced before it is made and marked finished after the synchronize that
follows it (``suite.engine.protocol``), so that the parent can name the launch a fault, a
crash or a hang was in, and kill a launch that outlives the hang oracle's bound. A
reproducer with ``@REPRO.inputs`` is judged by its oracles (``suite.oracles``); one whose
``@REPRO.launch`` takes the case alone checks itself and is launched once.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from suite.api import Case, Reproducer
from suite.engine.gpu_lock_log import GpuLock
from suite.engine.protocol import GpuWait, Judged, LaunchEvent, LaunchFinished, started
from suite.judgement import build_launcher
from suite.oracles import (
    Determinism,
    Differential,
    Hang,
    Judgement,
    Reference,
    against_reference,
    agree,
    identical,
)

Emit = Callable[[LaunchEvent], None]

#: Environment knob of a case (a JSON list of configs, the case's own first): its compile
#: phase is its launch code run for each config with every kernel compiled, loaded and its
#: launcher built, but nothing launched and no GPU turn taken. A case that launches then
#: launches in the same process and holds its GPU only to launch; a compile-only case leaves
#: the kernels built for launches under the same ``TRITON_CACHE_DIR``.
COMPILE_LAUNCHES = "REPRO_COMPILE_LAUNCHES"

#: Environment knob of a case that launches: a lock file of its GPU, held around each launch
#: (and the synchronize after it) so that launches on one GPU are one at a time while the
#: cases around them (start, CUDA context, inputs, oracles) run side by side.
GPU_LOCK = "REPRO_GPU_LOCK"

#: Environment knob, with ``GPU_LOCK``: once the case has launched, it holds its GPU's lock
#: until it exits (``"1"``). For a run again of a launch that failed (a sanitizer's rerun, a
#: ptxas relaunch), every launch of which may fault: one process with a launched, maybe
#: faulted, context per GPU at a time, and its context torn down (the process gone) before
#: another launches beside it; its start, context and compiles still run beside others.
GPU_HOLD = "REPRO_GPU_HOLD"

_HELD: list[GpuLock] = []  # the lock held to the process's exit (GPU_HOLD, or a launch raised)


def hold_to_exit(who: str, why: str) -> None:
    """Take this process's GPU lock (``GPU_LOCK``, if named) and hold it until the process
    ends (the lock goes with it, whatever the way it ends): for a process whose every launch
    from here on may fault. ``who`` and ``why`` name the hold in the lock log."""
    path = os.environ.get(GPU_LOCK)
    if not path or _HELD:
        return
    lock = GpuLock(path, who)
    _HELD.append(lock)  # never released here
    lock.keep_to_exit(why)


@contextlib.contextmanager
def gpu_turn(emit: Emit) -> Iterator[None]:
    """Hold this case's GPU for one launch, or to the process's end when the launch raised
    (no lock named: the GPU is this case's alone)."""
    path = os.environ.get(GPU_LOCK)
    if not path or _HELD:
        yield
        return
    emit(GpuWait(time.monotonic()))
    if os.environ.get(GPU_HOLD) == "1":
        hold_to_exit("launch", "held from its first launch to its exit (REPRO_GPU_HOLD)")
        yield
        return
    lock = GpuLock(path, "launch")
    try:
        yield
    except BaseException:
        # A launch that raised (a fault) leaves a context torn down only at the process's
        # end: no launch beside it on this GPU before then (the parent checks the GPU).
        _HELD.append(lock)
        lock.keep_to_exit("its launch raised")
        raise
    lock.release()


def _synchronize() -> None:
    """Wait for the GPU (a fault often surfaces only here); nothing to wait for on the CPU."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        return
    import torch

    torch.cuda.synchronize()


class _Launcher:
    def __init__(self, repro: Reproducer, emit: Emit) -> None:
        self.repro = repro
        self.emit = emit
        hangs = [o for o in repro.oracles if isinstance(o, Hang)]
        self.bound_s = min(h.bound_s for h in hangs) if hangs else None

    def __call__(self, launch: str, role: str, case: Case, inputs: Mapping[str, Any]) -> Any:
        assert self.repro.launch_fn is not None
        with gpu_turn(self.emit):
            self.emit(started(launch, role, self.bound_s))
            outputs = self.repro.launch_fn(case, **inputs)
            _synchronize()
            self.emit(LaunchFinished(launch))
        return outputs


def _variant(case: Case, variant: Mapping[str, Any]) -> Case:
    return Case(case.repro_id, {**case.config, **variant}, case.target, case.gpu)


def run_launch(repro: Reproducer, case: Case, emit: Emit) -> None:
    """Launch ``case`` and judge it; raises what a launch raised (a fault)."""
    assert repro.launch_fn is not None
    if repro.inputs_fn is None:
        with gpu_turn(emit):
            emit(started("kernel", "kernel", None))
            repro.launch_fn(case)
            _synchronize()
            emit(LaunchFinished("kernel"))
        return
    launch = _Launcher(repro, emit)
    inputs = dict(repro.inputs_fn(case))
    outputs = launch("kernel", "kernel", case, inputs)
    for oracle in repro.oracles:
        judgement: Judgement | None = None
        if isinstance(oracle, Reference):
            judgement = against_reference(oracle, outputs, inputs)
        elif isinstance(oracle, Differential) and oracle.applies_to(case.config):
            other = launch(
                f"variant {oracle.describe()}", oracle.name, _variant(case, oracle.variant), inputs
            )
            judgement = agree(oracle.name, outputs, other, f"differ from {oracle.describe()}")
        elif isinstance(oracle, Determinism):
            again = launch("repeat", "repeat", case, inputs)
            judgement = identical(oracle.name, outputs, again)
        if judgement is not None:
            emit(Judged(judgement.oracle, judgement.difference, judgement.message))


def compile_launches(repro: Reproducer, case: Case, configs: list[dict[str, Any]]) -> None:
    """Build what launching ``case`` under each of ``configs`` would build (Triton's
    ``warmup``: compiled, not launched), oracle variants included; launches nothing. What the
    first config's launch raises (its kernel does not compile, say) is raised."""
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction

    original = JITFunction.run
    tuned = Autotuner.run

    def build_only(self: JITFunction, *args: Any, **kwargs: Any) -> Any:
        kwargs["warmup"] = True
        return build_launcher(original(self, *args, **kwargs))

    def build_every_config(self: Autotuner, *args: Any, **kwargs: Any) -> Any:
        # Each config built, none timed: timing launches that are not made would pick (and
        # cache, for the launch after) a config at random.
        kwargs.pop("warmup", None)
        return self.warmup(*args, **kwargs)

    JITFunction.run = build_only
    Autotuner.run = build_every_config
    turns = os.environ.pop(GPU_LOCK, None)  # nothing is launched: no GPU turn to wait for
    try:
        first, *others = configs
        run_launch(repro, _variant(case, first), lambda event: None)
        for config in others:
            # Only a head start: the launch that follows meets any failure again and judges it.
            with contextlib.suppress(Exception):
                run_launch(repro, _variant(case, config), lambda event: None)
    finally:
        JITFunction.run = original
        Autotuner.run = tuned
        if turns is not None:
            os.environ[GPU_LOCK] = turns


def build_ahead(repro: Reproducer, case: Case) -> None:
    """Before a case asks for its GPU turn: build what its launch will launch (its launch
    code run as :func:`compile_launches` runs it: kernels compiled and loaded, launchers
    built, no kernel launched), so that the turn holds launches, not Triton's compiler or a
    C compiler. Only a head start: what it raises the launch meets again and reports (a
    self-checking launch stops at its first check: later kernels build in the turn). Work a
    launch does beside its Triton kernels (torch's own ops) runs here outside the turn, as
    its inputs and oracles always do."""
    with contextlib.suppress(Exception):
        compile_launches(repro, case, [dict(case.config)])
