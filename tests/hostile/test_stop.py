"""SIGTERM always ends ``repro run`` promptly (issue 36): while the scrubber works on a
case's adversarial output, and while a case runs on. Exit 143, one stop line, no process
of the run left. Bounded by generous timeouts, never a wall-clock figure."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "repros"
# Generous: the run must end by itself long before these; they only keep a broken run from
# hanging the test suite.
REACH_S, END_S = 120, 60


def _holders(marker: str) -> list[int]:
    """Live processes whose environment holds ``marker`` (a forked case shows its template's,
    which holds it too)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as environ:
                if marker.encode() in environ.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("isolation", ["warm", "fresh"])
@pytest.mark.parametrize("busy", ["scrubber", "long"])
def test_sigterm_ends_a_busy_run_with_143_and_no_process_left(tmp_path, busy, isolation):
    marker, there = uuid.uuid4().hex, tmp_path / "there"
    env = {**os.environ, "HOSTILE_STOP_MARKER": marker, "HOSTILE_BUSY": str(there)}
    run = subprocess.Popen(
        [
            *(sys.executable, "-m", "suite.cli.main", "run", str(HERE / "busy.py")),
            *("--configs", busy, "--isolation", isolation, "-j", "1", "--timeout", "600"),
            *("-o", str(tmp_path / "out")),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + REACH_S
        while not there.exists() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert there.exists(), "the case never got busy: the test proves nothing"
        run.send_signal(signal.SIGTERM)
        _, stderr = run.communicate(timeout=END_S)
    finally:
        run.kill()
    assert run.returncode == 143, (run.returncode, stderr)
    assert "Traceback" not in stderr, stderr
    assert "repro run --resume" in stderr, stderr
    deadline = time.monotonic() + 30  # a killed template or keeper takes a moment
    while _holders(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _holders(marker) == []
