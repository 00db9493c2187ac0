"""On any machine (no GPU): the capture hook's own Python cost per launch.

Calls each launch path of the hook around a launcher that does nothing, next to the same
path without the hook, ``--calls`` times a round, the rounds interleaved (``--rounds``):

- ``kernel[grid](x, y, n, factor, BLOCK=256)``: Triton's own ``KernelInterface.__getitem__``
  (a lambda that calls ``run``) against the hook's (``getitem_wrapper``: its launcher keeps
  the launch and calls Triton's ``run``);
- ``JITFunction.run(...)`` called directly (an autotuner's launch): bare against
  ``run_wrapper``;
- Inductor's ``CachingAutotuner.run`` (a tuner with one config): bare against the hook's
  (``inlined_run``: the ring's bookkeeping compiled into it; the kernel steady, kept by
  reference alone, and not, kept by its scalars), against the hook's wrapper
  (``inductor_run_wrapper``, where it cannot inline), and against a function that only
  calls it (a frame; capture_overhead.py's ``:bare`` mode inside a training step).

Times are this process's CPU time (``time.process_time``: what a shared, loaded machine
steals shows less), in µs per call: the median and the spread of the rounds, and the added
µs (the median of each round's hooked minus bare). Then the cost of describing the launches
kept (what happens once, when a failure surfaces or the program ends).

    python bench/capture_launch_cost.py --calls 200000 --rounds 9
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SITE = Path(__file__).resolve().parent.parent / "suite" / "capture" / "site"


class Tensor:
    """What the hook reads of a torch tensor (no torch needed)."""

    def __init__(self, n: int) -> None:
        self.shape, self.dtype, self.device = (n,), "torch.float16", "cuda:0"

    def stride(self) -> tuple[int, ...]:
        return (1,)

    def data_ptr(self) -> int:
        return 0


class Config:
    def __init__(self) -> None:
        self.kwargs, self.num_warps, self.num_stages = {"XBLOCK": 256}, 4, 1


class Launcher:
    def __init__(self) -> None:
        self.config = Config()


class Tuner:
    """The parts of Inductor's ``CachingAutotuner`` the hook reads."""

    def __init__(self, fn: Any) -> None:
        self.fn, self.configs, self.launchers = fn, [Config()], [Launcher()]
        self.triton_meta: dict[str, Any] = {"constants": {}}
        self.inductor_meta: dict[str, Any] = {}

    def _interpret_args_grid(self, args: tuple[Any, ...], config: Any) -> Any:
        return None, (16, 1, 1)


def inductor_run(self: Any, *args: Any, stream: int, **kwargs: Any) -> None:
    """Inductor's ``CachingAutotuner.run`` around a launcher that launches nothing (a
    module-level def, as Torch's is: the hook inlines into it)."""
    return None


def _per_call_us(call: Any, calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        call()
    return (time.process_time() - start) / calls * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="capture-launch-cost-")
    os.environ["REPRO_CAPTURE_DIR"] = folder
    sys.path.insert(0, str(SITE))
    os.environ["TRITON_CACHE_DIR"] = os.path.join(folder, "triton-cache")
    import repro_capture_inductor
    import repro_capture_launch
    import triton
    import triton.language as tl
    from triton.runtime.jit import KernelInterface

    @triton.jit
    def scale(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)

    @triton.jit
    def inductor_kernel(in_ptr, out_ptr, xnumel, XBLOCK: tl.constexpr):
        offsets = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
        tl.store(out_ptr + offsets, tl.load(in_ptr + offsets), mask=offsets < xnumel)

    def launcher(self: Any, *a: Any, **k: Any) -> None:
        return None

    class Kernel(KernelInterface):  # Triton's own kernel[grid], around the launcher
        run = launcher

    class Hooked(KernelInterface):  # the hook's kernel[grid], around the same launcher
        run = launcher
        __getitem__ = repro_capture_launch.getitem_wrapper(launcher, launcher)

    plain_kernel, hooked_kernel = Kernel(), Hooked()
    jit_run = repro_capture_launch.run_wrapper(launcher)

    def pass_through(self: Any, *a: Any, **k: Any) -> None:
        return inductor_run(self, *a, **k)

    class PlainTuner(Tuner):  # Inductor's run, around a launcher that launches nothing
        run = inductor_run

    class InlinedTuner(Tuner):  # the hook's: that run with the ring's bookkeeping inlined
        run = inductor_run

    class WrappedTuner(Tuner):  # where the hook cannot inline: that run behind its wrapper
        run = inductor_run

    repro_capture_inductor.hook_tuner(InlinedTuner)
    repro_capture_inductor.hook_tuner(WrappedTuner, inline=False)
    x, y = Tensor(4096), Tensor(4096)
    tuner, inlined_tuner, unsteady_tuner, wrapped_tuner = (
        PlainTuner(inductor_kernel),
        InlinedTuner(inductor_kernel),
        InlinedTuner(inductor_kernel),
        WrappedTuner(inductor_kernel),
    )
    for hooked_tuner in (inlined_tuner, unsteady_tuner, wrapped_tuner):  # past the first
        for _ in range(repro_capture_inductor.STEADY_AFTER + 1):  # launches: steady
            hooked_tuner.run(x, y, 4096, stream=0)
    unsteady_tuner._repro_capture_steady = False  # type: ignore[attr-defined]  # kept by scalars
    grid = (16,)
    paths = {
        "kernel[grid](...)": (
            lambda: plain_kernel[grid](x, y, 4096, 2.0, BLOCK=256),
            lambda: hooked_kernel[grid](x, y, 4096, 2.0, BLOCK=256),
        ),
        "JITFunction.run(...)": (
            lambda: launcher(scale, x, y, 4096, 2.0, BLOCK=256, grid=grid, warmup=False),
            lambda: jit_run(scale, x, y, 4096, 2.0, BLOCK=256, grid=grid, warmup=False),
        ),
        "Inductor's run(...)": (
            lambda: tuner.run(x, y, 4096, stream=0),
            lambda: inlined_tuner.run(x, y, 4096, stream=0),
        ),
        "Inductor's, unsteady": (
            lambda: tuner.run(x, y, 4096, stream=0),
            lambda: unsteady_tuner.run(x, y, 4096, stream=0),
        ),
        "Inductor's, wrapped": (
            lambda: tuner.run(x, y, 4096, stream=0),
            lambda: wrapped_tuner.run(x, y, 4096, stream=0),
        ),
        "a bare frame": (
            lambda: tuner.run(x, y, 4096, stream=0),
            lambda: pass_through(tuner, x, y, 4096, stream=0),
        ),
    }
    print(f"{args.calls} calls a round, {args.rounds} rounds interleaved; hook at {SITE}")
    print(f"{'path':22s} {'plain us':>18s} {'hooked us':>18s} {'added us (spread)':>24s}")
    for name, (plain, hooked) in paths.items():
        rounds = [(_per_call_us(plain, args.calls), _per_call_us(hooked, args.calls))]
        rounds += [(_per_call_us(plain, args.calls), _per_call_us(hooked, args.calls))
                   for _ in range(args.rounds - 1)]  # fmt: skip
        bare, wrapped = [r[0] for r in rounds], [r[1] for r in rounds]
        added = [w - b for b, w in rounds]
        print(f"{name:22s} {_shown(bare):>18s} {_shown(wrapped):>18s} {_shown(added):>24s}")
    start = time.perf_counter()
    repro_capture_launch.describe_kept()
    elapsed = time.perf_counter() - start
    del os.environ["REPRO_CAPTURE_DIR"]  # nothing more for the hook to write at exit
    shutil.rmtree(folder)
    print(f"describing the launches kept (once, at a failure or the end): {elapsed * 1e3:.2f} ms")
    return 0


def _shown(values: list[float]) -> str:
    """The median and the range of ``values``."""
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


if __name__ == "__main__":
    sys.exit(main())
