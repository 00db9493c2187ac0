"""A run killed with SIGKILL and resumed loses no case and duplicates none."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import repro_cli


def test_sigkill_then_resume(planted, tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, "PLANTED_SLEEP": "0.6"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "suite.cli.main",
            "run",
            str(planted),
            "--configs",
            "slow",
            "-j",
            "1",
            "-o",
            str(out),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    results = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = list(out.glob("runs/*/results.jsonl"))
        if found and len(found[0].read_text().splitlines()) >= 2:
            results = found[0]
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert results is not None, "the run never recorded two cases"
    before = [json.loads(line)["case_id"] for line in results.read_text().splitlines()]
    assert 2 <= len(before) < 6

    done = repro_cli("run", "--resume", "-o", str(out), env={"PLANTED_SLEEP": "0"})
    assert done.code == 0, done.stderr
    after = [json.loads(line)["case_id"] for line in results.read_text().splitlines()]
    assert len(after) == len(set(after)) == 6
    assert after[: len(before)] == before
    summary = json.loads((results.parent / "summary.json").read_text())
    assert summary["cases"] == 6


HOSTILE = Path(__file__).resolve().parent / "hostile" / "repros" / "misbehave.py"


@pytest.mark.parametrize(
    "signum, expected",
    [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGKILL, -signal.SIGKILL)],
)
@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_signal_at_a_random_point_then_resume_records_every_case_once(
    tmp_path, signum, expected, seed
):
    """SIGINT, SIGTERM or SIGKILL at a random point of a run; --resume finishes it."""
    out = tmp_path / "out"
    private_tmp = tmp_path / "tmp"  # where the run's temporary folders go: none may stay
    private_tmp.mkdir()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "suite.cli.main",
            "run",
            str(HOSTILE),
            "-c",
            "slow",
            "-j",
            "2",
            "-o",
            str(out),
        ],
        env={**os.environ, "HOSTILE_SLEEP": "0.4", "TMPDIR": str(private_tmp)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not list(out.glob("runs/*/run.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(random.Random(seed * 100 + signum).uniform(0.0, 3.0))
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=120)
    (run,) = (out / "runs").iterdir()
    recorded = _case_ids(run)
    assert len(recorded) == len(set(recorded))
    if len(recorded) < 8:  # the signal came before the end
        assert proc.returncode == expected, stderr
        assert "Traceback" not in stderr
        if signum != signal.SIGKILL:
            summary = json.loads((run / "summary.json").read_text())
            assert summary["partial"] is True and summary["cases"] == len(recorded)
    done = repro_cli("run", "--resume", "-o", str(out), env={"HOSTILE_SLEEP": "0"})
    assert done.code == 0, done.stderr
    after = _case_ids(run)
    assert len(after) == len(set(after)) == 8
    assert after[: len(recorded)] == recorded
    assert json.loads((run / "summary.json").read_text())["cases"] == 8
    deadline = time.monotonic() + 30  # after a SIGKILL the template cleans up on EOF
    while list(private_tmp.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not list(private_tmp.iterdir())


def _case_ids(run: Path) -> list[str]:
    lines = (
        (run / "results.jsonl").read_text().splitlines() if (run / "results.jsonl").exists() else []
    )
    return [json.loads(line)["case_id"] for line in lines]
