"""On any machine (no GPU): the capture hook's own Python cost per launch.

Calls the hook's launch wrappers directly, around a launcher that does nothing, ``--calls``
times each: ``JITFunction.run``'s wrapper (``kernel[grid](x, y, n, factor, BLOCK=256)`` with
two tensor-like arguments) and Inductor's ``CachingAutotuner.run`` wrapper (a tuner with one
config), next to the bare launcher. Then the cost of describing the launches kept (what
happens once, when a failure surfaces or the program ends).

    python bench/capture_launch_cost.py --calls 100000

prints µs per call for each, and the added µs per launch (wrapped minus bare).
"""

from __future__ import annotations

import argparse
import os
import shutil
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


def _per_call_us(call: Any, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="capture-launch-cost-")
    os.environ["REPRO_CAPTURE_DIR"] = folder
    sys.path.insert(0, str(SITE))
    os.environ["TRITON_CACHE_DIR"] = os.path.join(folder, "triton-cache")
    import repro_capture_inductor
    import repro_capture_launch
    import triton
    import triton.language as tl

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

    jit_run = repro_capture_launch.run_wrapper(launcher)
    inductor_run = repro_capture_inductor.inductor_run_wrapper(launcher)
    x, y = Tensor(4096), Tensor(4096)
    tuner = Tuner(inductor_kernel)
    grid = (16,)
    cases = {
        "bare launcher": lambda: launcher(scale, x, y, 4096, 2.0, BLOCK=256, grid=grid),
        "kernel[grid](...) wrapped": lambda: jit_run(scale, x, y, 4096, 2.0, BLOCK=256, grid=grid),
        "Inductor run wrapped": lambda: inductor_run(tuner, x, y, 4096, stream=0),
    }
    print(f"{args.calls} calls a round, best of {args.rounds} rounds; hook at {SITE}")
    best = {
        name: min(_per_call_us(c, args.calls) for _ in range(args.rounds))
        for name, c in cases.items()
    }
    for name, us in best.items():
        added = us - best["bare launcher"]
        print(f"{name:28s} {us:7.3f} us/call   added {added:7.3f} us")
    start = time.perf_counter()
    repro_capture_launch.describe_kept()
    elapsed = time.perf_counter() - start
    del os.environ["REPRO_CAPTURE_DIR"]  # nothing more for the hook to write at exit
    shutil.rmtree(folder)
    print(f"describing the launches kept (once, at a failure or the end): {elapsed * 1e3:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
