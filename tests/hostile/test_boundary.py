"""The kernel's boundary around a case (issue 36): a cgroup per case where the machine allows
one (``suite.engine.boundary``), the process tree and the PSS measure where it does not."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from suite.engine.boundary import FALLBACK, FORCE_VARIABLE, Kill, case_boundary, tree_memory
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


@pytest.mark.skipif(case_boundary().kill is not Kill.CGROUP, reason="no cgroup for a case here")
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


_HOLDER = """
import mmap, os, sys, time
fd = os.memfd_create("held")
os.write(fd, b"\\1" * (64 << 20))
if sys.argv[1] == "mapped":
    held = mmap.mmap(fd, 64 << 20)
    held[:: 4096] = b"\\2" * (16384)  # every page touched through the mapping too
print("ready", flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("how", ["open", "mapped"])
def test_the_fallback_counts_a_memfd_once_whether_held_open_or_mapped(how):
    """Without a cgroup: a 64 MiB memfd held open (in nobody's RSS) counts, and one both
    open and mapped counts once (its pages are in the PSS; the open object is not added)."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, how], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"ready\n"
        held = tree_memory(holder.pid)
    finally:
        holder.kill()
        holder.wait()
    assert 64 << 20 <= held < (64 << 20) * 3 // 2, held >> 20


@pytest.mark.skipif(case_boundary().kill is not Kill.CGROUP, reason="no cgroup for a case here")
def test_a_cgroup_left_by_a_killed_run_is_removed_by_the_next(tmp_path):
    """Only this tool's: ``repro-<pid>-...`` of a dead pid; a live pid's and another name stay."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    base = Path(case_boundary().kill_base)
    left, live, other = (
        base / f"repro-{dead.pid}-left",
        base / f"repro-{os.getpid()}-live",
        base / "not-repro-x",
    )
    for folder in (left, live, other):
        folder.mkdir()
    try:
        code = "from suite.engine.boundary import case_boundary; case_boundary()"
        subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
        assert (left.exists(), live.exists(), other.exists()) == (False, True, True)
    finally:
        for folder in (left, live, other):
            with contextlib.suppress(OSError):
                folder.rmdir()
