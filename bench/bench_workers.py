"""How much isolation costs: in-process compiles vs fresh interpreters vs warm workers.

    python bench/bench_workers.py [--json FILE] [--repeat N]

Measures the same compile-only matrix (at least 40 cases) three ways:
  (a) back to back in this one warm process, each compile with its own Triton
      cache folder: the limit, with no isolation at all;
  (b) a fresh interpreter per case (``--isolation fresh``);
  (c) the suite's warm workers (a template forking one child per case), with
      one worker and with two.
Prints (c)/(a) with one worker, (b)/(a), and the two-worker speedup of (c).
Wall-clock medians over ``--repeat`` rounds; not a test, nothing asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from suite.api import Case, Target
from suite.engine import Execution, Workers, expand_cases, load_reproducers, run_one, select

MATRIX = (
    ("tma-gemm-prefetch", ("sm_90", "sm_100", "sm_103", "sm_120", "sm_121"), ("all",)),
    ("tma-copy", ("sm_90", "sm_100", "sm_120"), ("current",)),
    ("tma-gemm", ("sm_90", "sm_100"), ("conservative",)),
)


def matrix():
    specs = []
    for repro_id, targets, sets in MATRIX:
        specs += expand_cases(select([repro_id]), list(targets), list(sets))
    return specs


def in_process(specs, work: Path) -> float:
    """(a): each reproducer's compile function called directly, a fresh cache per case."""
    started = time.perf_counter()
    for number, spec in enumerate(specs):
        os.environ["TRITON_CACHE_DIR"] = str(work / f"inproc-{number}")
        (repro,) = [r for r in load_reproducers(spec.found.source) if r.id == spec.repro.id]
        repro.compile_fn(Case(spec.repro.id, spec.config, Target(spec.target)))
    return time.perf_counter() - started


def isolated(specs, work: Path, warm: bool, workers: int) -> float:
    execution = Execution(warm=warm, workers=workers)
    started = time.perf_counter()
    with Workers(execution, specs) as pool, ThreadPoolExecutor(workers) as threads:
        results = list(
            threads.map(
                lambda item: run_one(
                    item[1], work / f"{warm}-{workers}-{item[0]}", execution, pool
                ),
                enumerate(specs),
            )
        )
    elapsed = time.perf_counter() - started
    bad = [
        r.case_id
        for r in results
        if r.outcome.label not in ("passed", "skipped", "resource-limit", "ptxas-error")
    ]
    if bad:
        sys.exit(f"unexpected outcomes: {bad}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the ratios here")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    specs = matrix()
    import triton

    print(f"{len(specs)} compile-only cases, triton {triton.__version__}, {os.cpu_count()} cores")
    in_process(specs[:2], Path(tempfile.mkdtemp()))  # warm this process's imports and caches
    times: dict[str, list[float]] = {k: [] for k in ("inprocess", "fresh", "warm1", "warm2")}
    for round_number in range(args.repeat):
        work = Path(tempfile.mkdtemp(prefix=f"bench-{round_number}-"))
        times["inprocess"].append(in_process(specs, work))
        times["fresh"].append(isolated(specs, work, warm=False, workers=1))
        times["warm1"].append(isolated(specs, work, warm=True, workers=1))
        times["warm2"].append(isolated(specs, work, warm=True, workers=2))
        print(
            f"round {round_number + 1}: " + ", ".join(f"{k} {v[-1]:.1f}s" for k, v in times.items())
        )
    median = {k: statistics.median(v) for k, v in times.items()}
    fresh_ratio = median["fresh"] / median["inprocess"]
    warm_ratio = median["warm1"] / median["inprocess"]
    speedup = median["warm1"] / median["warm2"]
    ratios = {
        "cases": len(specs),
        "triton": triton.__version__,
        "seconds": median,
        "warm_over_inprocess": warm_ratio,
        "fresh_over_inprocess": fresh_ratio,
        "two_worker_speedup": speedup,
    }
    per_case = median["inprocess"] / len(specs)
    print(f"(a) in-process      {median['inprocess']:7.1f} s  {per_case:.3f} s/case")
    print(f"(b) fresh per case  {median['fresh']:7.1f} s  (b)/(a) = {fresh_ratio:.2f}")
    print(f"(c) warm, 1 worker  {median['warm1']:7.1f} s  (c)/(a) = {warm_ratio:.2f}")
    print(f"(c) warm, 2 workers {median['warm2']:7.1f} s  speedup = {speedup:.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(ratios, indent=2))


if __name__ == "__main__":
    main()
