"""Launches on one GPU take turns; the cases around them do not.

Cases that launch run up to ``Execution.workers`` at a time on a GPU, each holding the GPU's
lock only around a launch and the synchronize after it (``suite.engine.launch.gpu_turn``);
the time a case waits for its turn does not count against its timeout. A launch that raises
(a fault) keeps it until its process has ended, and the GPU is checked after it; cases
expected to fault (``Execution.faults``) let it go after their launches unless one raised, and
the GPU is checked after each that launched. A gate's GPU child holds it from its first use
of the GPU to its exit. Every hold can be logged (``suite.engine.gpu_lock_log``). Real child
processes under Triton's interpreter, whose launches take 1.5 s each.
"""

from __future__ import annotations

import contextlib
import ctypes.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from suite.engine import discover
from suite.engine.expand import CaseSpec
from suite.engine.gpu_check import GpuStopped, alone_on, machine_lock
from suite.engine.gpu_lock_log import LOCK_LOG, GpuLock, HoldEnd, held_for, read_holds
from suite.engine.isolate import Bounds
from suite.engine.outcome import Outcome
from suite.engine.runner import Execution, Workers, run_case

SLOW = Path(__file__).parent / "data" / "gpu_turns" / "slow_launch.py"
NO_LAUNCH = SLOW.with_name("no_launch.py")


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


def test_in_a_reduction_a_case_that_did_not_raise_lets_its_gpu_go_after_its_launch(
    tmp_path, monkeypatch
):
    """With ``faults`` (a reduction of a launch fault) a case whose launch returned needs no
    turn for its exit: the next case launches while it lingers 5 s. Each hold is in the lock
    log (``REPRO_GPU_LOCK_LOG``): both launches let go, and the parent checked the GPU after
    each case."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv(LOCK_LOG, str(tmp_path / "holds.jsonl"))
    found = discover.from_source({"path": str(SLOW)}, str(SLOW))[0]
    log = tmp_path / "launches.jsonl"
    execution = Execution(warm=False, workers=2, bounds=Bounds(timeout_s=60), faults=True)
    results = {}
    with Workers(execution) as workers:

        def one(n: int) -> None:
            config = {"SECONDS": 0.5, "LOG": str(log), "N": n, "LINGER": 5.0}
            spec = CaseSpec(found, config, "sm_90", gpu=True)
            results[n] = run_case(spec, tmp_path / f"case{n}", execution, workers)

        threads = [threading.Thread(target=one, args=(n,)) for n in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert [results[n].outcome for n in (0, 1)] == [Outcome.PASSED] * 2, results
    (_first, second) = sorted(json.loads(line) for line in log.read_text().splitlines())
    first_exit = min(json.loads(line) for line in Path(f"{log}.exits").read_text().splitlines())
    assert second[0] < first_exit, f"waited for the first case's exit: {first_exit} {second}"
    holds = read_holds((tmp_path / "holds.jsonl").read_text().splitlines())
    launches = [h for h in holds if h.who == "launch"]
    assert [h.until for h in launches] == [HoldEnd.RELEASED] * 2, holds
    assert all(h.held_s is not None and h.held_s >= 0.5 for h in launches), launches
    assert {h.process.split()[-1] for h in launches} == {
        str(tmp_path / f"case{n}" / "spec.json") for n in (0, 1)
    }


def test_a_launch_that_raised_holds_its_gpu_until_its_process_has_ended(tmp_path, monkeypatch):
    """Not a reduction (no ``faults``): the case whose launch raised keeps the GPU until its
    process (its context) is gone; it lingers 4 s, and the next case's launch waits."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv(LOCK_LOG, str(tmp_path / "holds.jsonl"))
    found = discover.from_source({"path": str(SLOW)}, str(SLOW))[0]
    log = tmp_path / "launches.jsonl"
    execution = Execution(warm=False, workers=2, bounds=Bounds(timeout_s=60))
    results = {}
    with Workers(execution) as workers:

        def one(n: int, fault: bool) -> None:
            config = {"SECONDS": 0.1, "LOG": str(log), "N": n, "LINGER": 4.0 * fault}
            spec = CaseSpec(found, {**config, "FAULT": fault}, "sm_90", gpu=True)
            results[n] = run_case(spec, tmp_path / f"case{n}", execution, workers)

        faulting = threading.Thread(target=one, args=(0, True))
        faulting.start()
        while not log.exists() and faulting.is_alive():  # it has launched: the next one starts
            time.sleep(0.05)
        one(1, False)
        faulting.join()
    assert results[0].outcome is Outcome.RUNTIME_ERROR, results[0].message
    assert results[1].outcome is Outcome.PASSED, results[1].message
    (_first, second) = sorted(json.loads(line) for line in log.read_text().splitlines())
    (first_exit,) = (json.loads(line) for line in Path(f"{log}.exits").read_text().splitlines())
    assert first_exit <= second[0], f"launched beside the faulted process: {first_exit} {second}"
    # The lock log: the hold to the process's end, as long as the next launch waited for it.
    holds = read_holds((tmp_path / "holds.jsonl").read_text().splitlines())
    kept, let_go = holds
    assert (kept.until, kept.why, kept.held_s) == (HoldEnd.PROCESS_END, "its launch raised", None)
    assert let_go.until is HoldEnd.RELEASED and let_go.waited_s > 0, holds
    assert held_for(holds)[0] >= 4.0, held_for(holds)


def test_what_runs_alone_on_a_gpu_holds_its_machine_wide_lock(tmp_path, monkeypatch):
    """``alone_on``: another process cannot take the GPU's lock meanwhile, and the GPU is
    checked after it (with no driver here, as on a GPU that stopped answering: GpuStopped)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    lock = tmp_path / f"repro-gpu-locks-{os.getuid()}" / "gpu-3.lock"
    probe = "import fcntl, sys; fcntl.flock(open(sys.argv[1], 'a'), fcntl.LOCK_EX | fcntl.LOCK_NB)"
    stopped = pytest.raises(GpuStopped, match="made no CUDA context on GPU 3")
    if ctypes.util.find_library("cuda") is not None:
        stopped = contextlib.nullcontext()  # a driver here: a working GPU passes the check
    with stopped, alone_on("3"):
        taken = subprocess.run([sys.executable, "-c", probe, str(lock)], capture_output=True)
        assert taken.returncode != 0 and b"BlockingIOError" in taken.stderr
    freed = subprocess.run([sys.executable, "-c", probe, str(lock)], capture_output=True)
    assert freed.returncode == 0, freed.stderr
    if ctypes.util.find_library("cuda") is None:  # what raised (a fault) is checked after too
        with pytest.raises(GpuStopped) as caught, alone_on("3"):
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        assert isinstance(caught.value.__context__, RuntimeError)


@pytest.mark.skipif(ctypes.util.find_library("cuda") is not None, reason="a CUDA driver is here")
def test_a_gpu_that_gives_no_context_after_a_faulting_case_stops_the_run(tmp_path, monkeypatch):
    """After a faulting case on a GPU, a fresh process must make a CUDA context there; here
    there is no driver, as on a GPU that stopped answering: the run stops."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the GPUs' locks go
    found = discover.from_source({"path": str(SLOW)}, str(SLOW))[0]
    config = {"SECONDS": 0.1, "LOG": str(tmp_path / "log.jsonl"), "N": 0}
    execution = Execution(warm=False, gpus=("0",), faults=True)
    with pytest.raises(GpuStopped, match="made no CUDA context on GPU 0"):
        run_case(CaseSpec(found, config, "sm_90", gpu=True), tmp_path / "c", execution)
    # A case that never launched (its inputs failed, as a candidate that does not compile
    # fails) left the GPU as it was: not checked, even in a reduction of a fault.
    never = discover.from_source({"path": str(NO_LAUNCH)}, str(NO_LAUNCH))[0]
    refused = run_case(CaseSpec(never, {}, "sm_90", gpu=True), tmp_path / "n", execution)
    assert "no inputs: nothing is launched" in refused.message, refused.message
    plain = Execution(warm=False, gpus=("0",))  # a case not expected to fault: not checked
    result = run_case(CaseSpec(found, config, "sm_90", gpu=True), tmp_path / "d", plain)
    assert result.outcome is Outcome.PASSED, result.message
    # ... unless its launch raised (a fault): then the GPU is checked after it.
    faulted = CaseSpec(found, {**config, "FAULT": True}, "sm_90", gpu=True)
    with pytest.raises(GpuStopped, match="made no CUDA context on GPU 0"):
        run_case(faulted, tmp_path / "e", plain)


def test_two_runs_take_turns_on_a_real_gpu(tmp_path, monkeypatch):
    """The lock files of real GPUs (``Execution.gpus``) are the machine's, not a run's: the
    launches of two runs side by side (two ``Workers``) on one GPU never overlap either."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    found = discover.from_source({"path": str(SLOW)}, str(SLOW))[0]
    log = tmp_path / "launches.jsonl"
    execution = Execution(warm=False, gpus=("0",), bounds=Bounds(timeout_s=60))
    results = {}

    def one(n: int) -> None:
        with Workers(execution) as workers:  # a run of its own
            config = {"SECONDS": 1.0, "LOG": str(log), "N": n}
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
    assert (tmp_path / f"repro-gpu-locks-{os.getuid()}" / "gpu-0.lock").is_file()  # kept


def test_a_gate_child_takes_the_gpus_machine_wide_lock_and_holds_it_to_its_exit(
    tmp_path, monkeypatch
):
    """``repro gate``'s GPU child launches configs nobody has run: once it uses the GPU it
    takes the same machine-wide lock as every repro launch (waiting while another holds it)
    and keeps it to its exit. The real child on a spec whose kernel does not load: it takes
    the lock, then stops (here without torch, or at the kernel)."""
    from suite.gate import gpu
    from suite.gate.events import GpuSpec

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the GPUs' locks go
    monkeypatch.setenv(LOCK_LOG, str(tmp_path / "holds.jsonl"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    spec = GpuSpec(
        source={"module": "repros.none"},
        kernel="gemm",
        events=str(tmp_path / "events-1.jsonl"),
        sizes=[[512, 512, 512]],
        check_shapes=[[512, 512, 512]],
        items=[],
        prior={},
        deadline=None,
    )
    lock = machine_lock("0")
    assert lock is not None and lock.parent.parent == tmp_path
    mine = GpuLock(lock, "a test")
    ended = {}
    child = threading.Thread(
        target=lambda: ended.update(exit=gpu.run_child(spec, tmp_path, 1, 120, sys.executable))
    )
    child.start()
    time.sleep(2.0)  # the child asks for the lock meanwhile
    released = time.time()
    mine.release()
    child.join()
    assert ended["exit"].returncode == 1, ended["exit"].stderr.text  # the kernel never loaded
    holds = read_holds((tmp_path / "holds.jsonl").read_text().splitlines())
    (held,) = [h for h in holds if h.who == "gate child"]
    assert held.until is HoldEnd.PROCESS_END and held.pid != os.getpid(), holds
    # The log keeps its times to the millisecond: got it when released, to that rounding.
    assert held.asked_at + held.waited_s >= released - 0.002, (held, released)
