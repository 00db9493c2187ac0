"""The kernel's boundary around a case (issue 36): a cgroup per case where the machine allows
one (``suite.engine.boundary``), the process tree and the PSS measure where it does not."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

import pytest

from suite.engine.boundary import FALLBACK, FORCE_VARIABLE, Kill, boundary
from tests.conftest import repro_cli

HERE = Path(__file__).resolve().parent / "repros"
BOUNDARIES = {"kernel": {}, FALLBACK: {FORCE_VARIABLE: FALLBACK}}


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def _outcomes(out: Path) -> dict[str, dict]:
    (run,) = (out / "runs").iterdir()
    lines = (run / "results.jsonl").read_text().splitlines()
    return {json.loads(line)["config"]["fault"]: json.loads(line) for line in lines}


@pytest.mark.skipif(boundary().kill is not Kill.CGROUP, reason="no cgroup for a case here")
@pytest.mark.parametrize("isolation", ["warm", "fresh"])
def test_a_daemon_that_left_the_tree_dies_with_its_case(tmp_path, isolation):
    """Double-forked, out of the session, subreaper and parent-death signal cleared, its
    environment overwritten, its keeper (or template) killed: the case's cgroup still holds
    it, and it dies when its case ends; it writes nothing after the run."""
    mark, pids = tmp_path / "daemon-writes", tmp_path / "pids"
    env = {"HOSTILE_DAEMON_FILE": str(mark), "HOSTILE_PIDS": str(pids)}
    done = repro_cli(
        "run",
        str(HERE / "boundary.py"),
        "--configs",
        "daemon",
        "--isolation",
        isolation,
        "--timeout",
        "60",
        "-o",
        str(tmp_path / "out"),
        env=env,
    )
    daemons = [int(pid) for pid in pids.read_text().split()] if pids.exists() else []
    try:
        assert daemons, (done.code, done.stdout, done.stderr)
        assert mark.exists(), "the daemon never got to write: the test proves nothing"
        written = mark.stat().st_size
        time.sleep(1.0)  # the daemon writes every 0.1 s while it lives
        assert [pid for pid in daemons if _alive(pid)] == []
        assert mark.stat().st_size == written
        assert done.code in (0, 1), (done.code, done.stderr)
    finally:
        for pid in daemons:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("isolation", ["warm", "fresh"])
@pytest.mark.parametrize("measure", sorted(BOUNDARIES))
def test_the_memory_cap_counts_a_memfd_and_shared_pages_once(tmp_path, measure, isolation):
    """3 GiB written into a memfd (in nobody's RSS) is over a 1 GiB cap; 300 idle forked
    children (a sum of RSS counts their shared pages 300 times) are not."""
    done = repro_cli(
        "run",
        str(HERE / "boundary.py"),
        "--configs",
        "memory",
        "--isolation",
        isolation,
        "--memory-cap",
        "1",
        "--timeout",
        "120",
        "-o",
        str(tmp_path / "out"),
        env=BOUNDARIES[measure],
    )
    results = _outcomes(tmp_path / "out")
    assert results["memfd"]["outcome"] == "crash", results["memfd"]
    assert "memory cap" in results["memfd"]["message"]
    assert results["forks"]["outcome"] == "passed", results["forks"]
    assert done.code == 1, (done.code, done.stderr)
