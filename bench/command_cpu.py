"""The CPU each `repro` command the tests run costs, all its processes included.

    python bench/command_cpu.py [--tree DIR] [--repeat N] [--json FILE]

Runs, from a scratch folder with ``PYTHONPATH=DIR`` (default: this checkout), the commands
below in order (explore stores the finding the next ones take), ``--repeat`` rounds of
them, and prints for each the user+system CPU seconds of the command and every process
it waited for (``RUSAGE_CHILDREN``: the warm template, its forked cases, the fresh
children, ptxas), the smallest and the median of the rounds, and its wall time. Run it on
two trees in one sitting (``--tree`` a checkout of the old commit) to compare: the machine's
load moves both. Not a test: nothing asserts a time (docs/testing.md has the figures).
Needs the cached 3.5.0, 3.5.1 and 3.6.0 release venvs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
FINDING = "tma-gemm-prefetch-dd243cf3450f"


def commands(python_350: str, program: Path) -> list[tuple[str, list[str]]]:
    """(name, the arguments after ``repro``), in the order they run."""
    return [
        ("list", ["list"]),
        ("run tma-copy (7 cases)", ["run", "tma-copy", "-t", "sm_90", "-o", "out"]),
        (
            "explore (3.5.0, 10 examples)",
            [
                *("explore", "tma-gemm-prefetch", "-t", "sm_100", "--python", python_350),
                *("--seed", "0", "--max-examples", "10", "-o", "out"),
            ],
        ),
        ("findings", ["findings", "-o", "out"]),
        ("report", ["report", FINDING, "-o", "out"]),
        (
            "bisect 3.5.1..3.6.0",
            ["bisect", FINDING, "--bad", "3.5.1", "--good", "3.6.0", "-o", "out"],
        ),
        ("reduce", ["reduce", FINDING, "-o", "out"]),
        ("capture (3.5.0)", ["capture", "-o", "out", "--", python_350, str(program)]),
    ]


def one_round(tree: Path, python_350: str) -> dict[str, tuple[float, float]]:
    """Each command's (CPU s, wall s), run once each in a new scratch folder."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    measured: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="command-cpu-") as scratch:
        program = tree / "tests" / "data" / "capture" / "several_kernels.py"
        for name, argv in commands(python_350, program):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.monotonic()
            done = subprocess.run(
                [sys.executable, "-m", "suite.cli", *argv],
                cwd=scratch,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            wall = time.monotonic() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if done.returncode not in (0, 1, 3):
                sys.exit(f"{name}: exit {done.returncode}\n{done.stderr[-2000:]}")
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            measured[name] = (cpu, wall)
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=HERE, help="the checkout to measure")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from suite.toolchain.venvs import for_version

    python_350 = str(for_version("3.5.0").python)
    rounds = [one_round(args.tree.resolve(), python_350) for _ in range(args.repeat)]
    figures = {}
    print(f"{'command':32} {'CPU min':>8} {'CPU median':>10} {'wall median':>11}")
    for name in rounds[0]:
        cpus = [r[name][0] for r in rounds]
        walls = [r[name][1] for r in rounds]
        figures[name] = {
            "cpu_min": min(cpus),
            "cpu_median": statistics.median(cpus),
            "wall_median": statistics.median(walls),
        }
        print(
            f"{name:32} {min(cpus):8.2f} {statistics.median(cpus):10.2f} "
            f"{statistics.median(walls):11.2f}"
        )
    total = sum(f["cpu_median"] for f in figures.values())
    print(f"{'all (medians)':32} {'':8} {total:10.2f}")
    if args.json:
        args.json.write_text(json.dumps({"tree": str(args.tree), "figures": figures}, indent=2))


if __name__ == "__main__":
    main()
