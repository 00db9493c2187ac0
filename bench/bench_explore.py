"""What ``repro explore`` costs, in evaluations, against a grid and against random sampling.

An evaluation is one distinct case run in isolation (about a second for a
Triton compile), so evaluations are the cost that matters. For one
reproducer and target (by default ``tma-gemm-prefetch`` on ``sm_100`` under
Triton 3.5.0, which fails in ``TritonGPUAssignLatencies``) this measures:

- explore, for each seed: the evaluation that first fails, the evaluation that
  reaches the final minimal config, the one after which the shrink has
  confirmed it is a local minimum, and the whole explore's count;
- the full grid of the same space, in its natural order (parameters in
  declaration order, the last varying fastest): its size, and the position of
  its first failure and of the minimal config;
- uniform random sampling without replacement: the expected evaluations to the
  first failure, ``(N + 1) / (F + 1)`` for ``F`` failing points of ``N``, and to
  the minimal config, ``(N + 1) / 2``. ``F`` is counted by running the whole
  grid (``--full-grid``) or estimated from a random sample (``--sample K``).

    python bench/bench_explore.py --full-grid --workers 2 --json bench-explore.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from suite.engine import Bounds, CaseResult, CaseSpec, Execution, Found, run_one, select
from suite.failures.findings import DirectoryFindingsStore
from suite.search.evaluate import failure_signature
from suite.search.explore import Budget, Exploration, explore
from suite.toolchain.venvs import folder_for

DEFAULT_PYTHON = folder_for("3.5.0") / "bin" / "python"
GOAL_FIRST_FAILURE = 20
GOAL_MINIMAL = 80

Config = dict[str, Any]


def _key(config: Config) -> str:
    return json.dumps(config, sort_keys=True)


def explore_figures(exploration: Exploration) -> dict[str, Any]:
    """Evaluation numbers of one explore: first failure, minimal reached and confirmed."""
    log = exploration.evaluations
    first = next((e.number for e in log if failure_signature(e.result)), None)
    if not exploration.findings:
        return {"seed": exploration.seed, "first_failure": first, "total": len(log)}
    finding = min(exploration.findings, key=lambda f: _number_of(log, f.minimal_config))
    reached = _number_of(log, finding.minimal_config)
    confirmed = reached
    while confirmed < len(log) and log[confirmed].phase == "shrink":
        confirmed += 1
    return {
        "seed": exploration.seed,
        "first_failure": first,
        "minimal_reached": reached,
        "minimal_confirmed": confirmed,
        "total": len(log),
        "signature": finding.signature,
        "minimal_config": finding.minimal_config,
        "findings": len(exploration.findings),
    }


def _number_of(log: Sequence[Any], config: Config) -> int:
    return next(e.number for e in log if e.config == config)


class Grid:
    """The reproducer's whole space in natural order, with a cache of run results."""

    def __init__(self, found: Found, target: str, execution: Execution, work: Path) -> None:
        self.found = found
        self.target = target
        self.execution = execution
        self.work = work
        repro = found.repro
        points = itertools.product(*(p.values for p in repro.params))
        every = (dict(zip(repro.param_names, values, strict=True)) for values in points)
        self.points = [config for config in every if not repro.problems(config)]
        self.results: dict[str, CaseResult] = {}

    def absorb(self, exploration: Exploration) -> None:
        for evaluation in exploration.evaluations:
            if evaluation.target == self.target:
                self.results[_key(evaluation.config)] = evaluation.result

    def run(self, configs: Sequence[Config], workers: int) -> None:
        todo = [c for c in configs if _key(c) not in self.results]

        def one(numbered: tuple[int, Config]) -> tuple[Config, CaseResult]:
            number, config = numbered
            spec = CaseSpec(self.found, config, self.target)
            return config, run_one(spec, self.work / f"grid-{number:05d}", self.execution)

        with ThreadPoolExecutor(max_workers=workers) as pool:
            for config, result in pool.map(one, enumerate(todo)):
                self.results[_key(config)] = result

    def fails(self, config: Config) -> bool:
        return failure_signature(self.results[_key(config)]) is not None

    def first_failure(self) -> int | None:
        """The 1-based position of the first failing point, running points in order up to it."""
        for number, config in enumerate(self.points, 1):
            self.run([config], 1)
            if self.fails(config):
                return number
        return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=str(DEFAULT_PYTHON), help="interpreter with Triton")
    parser.add_argument("--repro", default="tma-gemm-prefetch")
    parser.add_argument("--target", default="sm_100")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--max-examples", type=int, default=20, help="per explore")
    sampling = parser.add_mutually_exclusive_group()
    sampling.add_argument("--full-grid", action="store_true", help="run every grid point")
    sampling.add_argument("--sample", type=int, default=60, help="random points to estimate F")
    parser.add_argument("--workers", type=int, default=1, help="grid/sample cases run at once")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per case")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    if not Path(args.python).exists():
        parser.error(f"no interpreter at {args.python} (build the triton 3.5.0 venv first)")

    (found,) = select([args.repro])
    execution = Execution(python=args.python, bounds=Bounds(timeout_s=args.timeout))
    console = Console(highlight=False)
    with tempfile.TemporaryDirectory(prefix="bench-explore-") as scratch:
        root = Path(scratch)
        grid = Grid(found, args.target, execution, root / "grid")
        runs = []
        for seed in args.seeds:
            output = root / f"explore-{seed}"
            exploration = explore(
                found,
                [args.target],
                DirectoryFindingsStore(output / "findings"),
                execution,
                output,
                Budget(max_examples=args.max_examples),
                seed,
            )
            runs.append(explore_figures(exploration))
            grid.absorb(exploration)
            console.print(f"explore seed {seed}: {runs[-1]}")
        grid_first = grid.first_failure()
        minimal = runs[0].get("minimal_config")
        grid_minimal = grid.points.index(minimal) + 1 if minimal else None
        if args.full_grid:
            measured = grid.points
        else:
            measured = random.Random(0).sample(grid.points, min(args.sample, len(grid.points)))
        grid.run(measured, args.workers)
    size = len(grid.points)
    failing = sum(grid.fails(c) for c in measured)
    fraction = failing / len(measured)
    estimated_failing = fraction * size
    figures = {
        "repro": args.repro,
        "target": args.target,
        "python": args.python,
        "explore": runs,
        "grid": {
            "points": size,
            "first_failure": grid_first,
            "minimal_config_at": grid_minimal,
        },
        "random": {
            "measured_points": len(measured),
            "failing_points": failing,
            "failing_fraction": round(fraction, 4),
            "expected_to_first_failure": round((size + 1) / (estimated_failing + 1), 2),
            "expected_to_minimal_config": (size + 1) / 2,
            "exact": args.full_grid,
        },
    }
    worst_first = max((r["first_failure"] or size) for r in runs)
    worst_minimal = max(r.get("minimal_confirmed", size) for r in runs)
    figures["goals"] = {
        "first_failure_le_20": worst_first <= GOAL_FIRST_FAILURE,
        "minimal_le_80": worst_minimal <= GOAL_MINIMAL,
    }
    table = Table(header_style="bold", title=f"{args.repro} on {args.target} ({size} points)")
    for column in ("strategy", "to first failure", "to minimal config", "total"):
        table.add_column(column)
    for r in runs:
        table.add_row(
            f"explore seed {r['seed']}",
            str(r["first_failure"]),
            f"{r.get('minimal_reached')} (confirmed {r.get('minimal_confirmed')})",
            str(r["total"]),
        )
    table.add_row("grid, natural order", str(grid_first), str(grid_minimal), f"{size} for all")
    random_figures = figures["random"]
    table.add_row(
        "uniform random (expected)",
        str(random_figures["expected_to_first_failure"]),
        str(random_figures["expected_to_minimal_config"]),
        f"F={failing}/{len(measured)} measured",
    )
    console.print(table)
    console.print(f"goals: {figures['goals']}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2, default=str) + "\n")
    return 0 if all(figures["goals"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
