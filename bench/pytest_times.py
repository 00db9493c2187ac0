"""Where the project's own tests spend their time: wall and CPU seconds per test.

A pytest plugin and its summary. On a shared machine a test's wall time says mostly how
loaded the machine was; its CPU seconds (the worker's own and those of the child processes
it waited for: compiles, ``repro`` command lines, release venvs) say what it costs::

    REPRO_TEST_TIMES=/tmp/times python -m pytest -n 2 -p bench.pytest_times
    python -m bench.pytest_times /tmp/times.*.jsonl        # per file, then the 40 largest tests

Each xdist worker appends one JSON line per test to ``$REPRO_TEST_TIMES.<worker>.jsonl``.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TIMES = "REPRO_TEST_TIMES"


def cpu_seconds() -> float:
    """User and system seconds of this process and of every child it has waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    prefix = os.environ.get(TIMES)
    started, cpu = time.monotonic(), cpu_seconds()
    yield
    if not prefix:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    line = {
        "test": item.nodeid,
        "wall": round(time.monotonic() - started, 3),
        "cpu": round(cpu_seconds() - cpu, 3),
        "worker": worker,
        "ended": time.time(),
    }
    with open(f"{prefix}.{worker}.jsonl", "a") as out:
        out.write(json.dumps(line) + "\n")


def summary(lines: list[dict[str, Any]], largest: int = 40) -> str:
    wall = sum(line["wall"] for line in lines)
    cpu = sum(line["cpu"] for line in lines)
    rows = [f"{len(lines)} tests: {wall:.1f} worker-seconds wall, {cpu:.1f} CPU seconds", ""]
    by_file: Counter[str] = Counter()
    for line in lines:
        by_file[line["test"].split("::")[0]] += line["cpu"]
    rows += [f"{seconds:8.1f} CPU s  {name}" for name, seconds in by_file.most_common()]
    rows.append("")
    for line in sorted(lines, key=lambda line: -line["cpu"])[:largest]:
        rows.append(f"{line['cpu']:8.1f} CPU s {line['wall']:8.1f} s wall  {line['test']}")
    return "\n".join(rows)


def main(paths: list[str]) -> int:
    lines = [json.loads(text) for path in paths for text in Path(path).read_text().splitlines()]
    print(summary(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
