"""A run killed with SIGKILL and resumed loses no case and duplicates none."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

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
