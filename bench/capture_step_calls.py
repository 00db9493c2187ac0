"""What one warm training step runs in Python, alone and under ``repro capture``.

The MLP step of ``capture_overhead.py`` (its ``mlp`` workload, warm and past the launches
after which the hook keeps a steady kernel by reference alone) runs in two processes: the
program alone, and the same program under ``repro capture``, both after a warm-up process
has compiled the step into the run's own caches, so both load the same step. Each counts the
Python functions one step starts, on every thread (``sys.monitoring``, Python 3.12 on; before it,
``sys.setprofile`` sees the calling thread alone, not the autograd engine's), by file and
qualified name. The bench prints both totals and every function whose count differs: what
a captured step does in Python that the program alone does not (the hook's own functions,
or Torch's doing more, such as Dynamo judging a frame it has not seen). A captured step's
cost that shows no such difference is not Python work of the step's.

    python bench/capture_step_calls.py                 # on a GPU
    python bench/capture_step_calls.py --device cpu    # anywhere (Inductor's C++ kernels)

Exit 0 when both steps start the same functions as often, 1 when they differ.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from capture_overhead import _mlp, cached_environment  # noqa: E402


def _where(filename: str) -> str:
    """A code object's file, short: from the package folder on (``torch/_inductor/...``)."""
    parts = Path(filename).parts
    for anchor in ("site-packages", "dist-packages", "site"):
        if anchor in parts:
            return "/".join(parts[len(parts) - parts[::-1].index(anchor) :])
    return filename


def _counted(step: Callable[[], None], sync: Callable[[], None]) -> collections.Counter[str]:
    """The Python functions one ``step`` starts (each by file and qualified name)."""
    counts: collections.Counter[str] = collections.Counter()
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:  # every thread's
        # A tool id nobody holds (a profiler of the program's may hold PROFILER_ID).
        tool = next(i for i in (monitoring.PROFILER_ID, 3, 4) if monitoring.get_tool(i) is None)

        def started(code: object, offset: int) -> None:
            counts[f"{_where(code.co_filename)}:{code.co_qualname}"] += 1  # type: ignore[attr-defined]

        monitoring.use_tool_id(tool, "capture_step_calls")
        monitoring.register_callback(tool, monitoring.events.PY_START, started)
        monitoring.set_events(tool, monitoring.events.PY_START)
        try:
            step()
            sync()
        finally:
            monitoring.set_events(tool, 0)
            monitoring.free_tool_id(tool)
        return counts

    def profiled(frame: object, event: str, arg: object) -> None:
        if event == "call":
            code = frame.f_code  # type: ignore[attr-defined]
            counts[f"{_where(code.co_filename)}:{code.co_qualname}"] += 1

    sys.setprofile(profiled)
    try:
        step()
        sync()
    finally:
        sys.setprofile(None)
    return counts


def child(device: str, into: Path) -> int:
    """The program: warm the step past the hook's steady launches, count one step's
    functions, write them to ``into``."""
    import torch

    step, facts = _mlp(device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    for _ in range(20):  # a kernel is steady after its first 17 launches
        step()
    sync()
    counts = _counted(step, sync)
    into.write_text(json.dumps({"facts": facts, "counts": counts}))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.device, args.child)
    with tempfile.TemporaryDirectory(prefix="capture-step-calls-") as scratch:
        folder = Path(scratch)
        env = cached_environment(folder)
        program = [sys.executable, str(Path(__file__).resolve()), "--device", args.device]
        # The warm-up compiles into the run's own caches; the counted two then load the same
        # compiled step from them (a step compiled afresh is wrapped otherwise than one loaded
        # from Torch's cache: one function of a step differs, whoever runs second).
        runs = {"warm-up": [], "plain": []}
        runs["captured"] = [sys.executable, "-m", "suite.capture", "-q", "--output"]
        runs["captured"] += [str(folder / "reports"), "--no-confirm", "--"]
        seen: dict[str, collections.Counter[str]] = {}
        for name, around in runs.items():
            into = folder / f"{name}.json"
            command = [*around, *program, "--child", str(into)]
            done = subprocess.run(command, env=env, check=False)
            if done.returncode != 0 or not into.exists():
                print(f"the {name} program exited {done.returncode}", file=sys.stderr)
                return 4
            if name == "warm-up":
                continue
            written = json.loads(into.read_text())
            seen[name] = collections.Counter(written["counts"])
            total = sum(seen[name].values())
            print(f"{name}: {total} Python functions started in a step ({written['facts']})")
    plain, captured = seen["plain"], seen["captured"]
    differing = sorted(
        (captured[k] - plain[k], k)
        for k in plain.keys() | captured.keys()
        if captured[k] != plain[k]
    )
    for more, where in differing:
        print(f"  {more:+d}  {where}  (alone {plain[where]}, captured {captured[where]})")
    print(f"{len(differing)} functions started a different number of times")
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
