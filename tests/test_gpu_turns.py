"""Launches on one GPU take turns; the cases around them do not.

Cases that launch run up to ``Execution.workers`` at a time on a GPU, each holding the GPU's
lock only around a launch and the synchronize after it (``suite.engine.launch.gpu_turn``);
the time a case waits for its turn does not count against its timeout. Real child processes
under Triton's interpreter, whose launches take 1.5 s each.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from suite.engine import discover
from suite.engine.expand import CaseSpec
from suite.engine.isolate import Bounds
from suite.engine.outcome import Outcome
from suite.engine.runner import Execution, Workers, run_case

SLOW = Path(__file__).parent / "data" / "gpu_turns" / "slow_launch.py"


def test_launches_take_turns_and_the_wait_is_not_counted_against_the_timeout(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    found = discover.from_source({"path": str(SLOW)}, str(SLOW))[0]
    log = tmp_path / "launches.jsonl"
    # Two launches of 1.5 s one after the other take 3 s: past the timeout, unless the wait
    # for the GPU is not counted (each case's own time is 1.5 s and its start).
    execution = Execution(warm=False, workers=2, bounds=Bounds(timeout_s=2.8))
    results = {}
    with Workers(execution) as workers:

        def one(n: int) -> None:
            config = {"SECONDS": 1.5, "LOG": str(log), "N": n}
            spec = CaseSpec(found, config, "sm_90", gpu=True)
            results[n] = run_case(spec, tmp_path / f"case{n}", execution, workers)

        threads = [threading.Thread(target=one, args=(n,)) for n in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert [results[n].outcome for n in (0, 1)] == [Outcome.PASSED] * 2, results
    (first, second) = sorted(json.loads(line) for line in log.read_text().splitlines())
    assert first[1] <= second[0], f"the launches overlapped: {first} {second}"


def test_without_workers_to_share_it_a_case_has_the_gpu_to_itself(tmp_path, monkeypatch):
    # One case at a time: it never waits, and a launch past the timeout is still a timeout.
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    found = discover.from_source({"path": str(SLOW)}, str(SLOW))[0]
    config = {"SECONDS": 3.0, "LOG": str(tmp_path / "log.jsonl"), "N": 0}
    execution = Execution(warm=False, bounds=Bounds(timeout_s=1.5))
    result = run_case(CaseSpec(found, config, "sm_90", gpu=True), tmp_path / "c", execution)
    assert result.outcome is Outcome.TIMEOUT, result.message
