"""Run each config of a runtime probe in its own process; print one line per config.

A probe defines ``CONFIGS`` (a list of dicts), ``label(config) -> str`` and
``launch(config) -> str`` (``"ok"`` or ``"wrong (...)"``; it raises on a fault), then calls
:func:`main`. The parent starts one child per config and trial (``--one <json>``), each in
its own session: a fault or a hang in one config never ends the others. A child whose
launch (from its ``STARTED`` line: compile and reference included) runs past the timeout is
a ``hang``; one that dies without a verdict is a ``fault``. Only triton and torch are
needed (the suite is not imported).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

# Seconds a launch may take, compile and reference included (``PROBE_TIMEOUT_S`` overrides),
# counted from the child's STARTED line so that a slow start-up is never taken for a hang.
TIMEOUT_S = float(os.environ.get("PROBE_TIMEOUT_S", "30"))
START_S = 60.0
STARTED = "STARTED"
VERDICT = "VERDICT "
# Triton's interpreter (TRITON_INTERPRET=1) runs the kernels on CPU tensors: a check of a
# probe's reference and tolerance on a machine with no GPU (it cannot show a GPU bug).
DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


def first_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return lines[0][:200] if lines else "(no message)"


def compare(got: Any, want: Any, atol: float, rtol: float) -> str:
    """``ok``, or how many elements differ (a NaN left by the poison counts) and the worst."""
    import torch

    got = got.detach().double().cpu()
    want = want.detach().double().cpu()
    error = (got - want).abs()
    bound = atol + rtol * want.abs()
    bad_mask = (error > bound) | torch.isnan(got)
    bad = int(bad_mask.sum())
    if not bad:
        return "ok"
    unwritten = int(torch.isnan(got).sum())
    excess = torch.where(torch.isnan(error), torch.full_like(error, float("inf")), error - bound)
    worst = int(torch.argmax(excess))
    return (
        f"wrong ({bad} of {got.numel()} differ, {unwritten} NaN; worst at {worst}: "
        f"got {got.flatten()[worst].item():.5g}, want {want.flatten()[worst].item():.5g})"
    )


def synchronize() -> None:
    """Wait for the launches so far (a fault surfaces here); nothing to wait for on CPU."""
    import torch

    if DEVICE == "cuda":
        torch.cuda.synchronize()


def _kind(error: BaseException) -> str:
    """What an exception from a launch means: Triton refused or failed to compile, the
    launch faulted, or the probe's own code went wrong (never counted as a bug)."""
    name = type(error).__name__
    text = f"{name} {error}".lower()
    if name in ("CompilationError", "OutOfResources", "PTXASError") or "passmanager" in text:
        return "compile-error"
    if any(word in text for word in ("cuda error", "illegal", "misaligned", "acceleratorerror")):
        return "fault"
    return "harness-error"


def _child(launch: Callable[[dict[str, Any]], str], config: dict[str, Any]) -> str:
    import torch

    if DEVICE == "cuda" and not torch.cuda.is_available():
        return "harness-error: no CUDA device here (nothing was launched)"
    print(STARTED, flush=True)
    try:
        verdict = launch(config)
        synchronize()
    except Exception as error:
        return f"{_kind(error)}: {type(error).__name__}: {first_line(str(error))}"
    return verdict


def _drain(stream: Any, lines: list[str], started: threading.Event | None = None) -> None:
    for line in stream:
        lines.append(line.rstrip("\n"))
        if started is not None and line.startswith(STARTED):
            started.set()


def _run_one(script: str, config: dict[str, Any], cache: str) -> str:
    env = dict(os.environ, TRITON_CACHE_DIR=cache)
    command = [sys.executable, script, "--one", json.dumps(config)]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    out: list[str] = []
    err: list[str] = []
    started = threading.Event()
    readers = [
        threading.Thread(target=_drain, args=(process.stdout, out, started), daemon=True),
        threading.Thread(target=_drain, args=(process.stderr, err), daemon=True),
    ]
    for reader in readers:
        reader.start()
    verdict = ""
    began = time.monotonic()
    while process.poll() is None and not started.wait(0.2):
        if time.monotonic() - began > START_S:
            verdict = f"harness-error: nothing launched within {START_S:.0f} s of start-up"
            break
    if not verdict and process.poll() is None:
        try:
            process.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            verdict = f"hang (the launch did not end within {TIMEOUT_S:.0f} s)"
    if verdict:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    for reader in readers:
        reader.join(timeout=5)
    if verdict:
        return verdict
    for line in reversed(out):
        if line.startswith(VERDICT):
            return line[len(VERDICT) :]
    tail = [line for line in err if line.strip()]
    return f"fault: child exited {process.returncode} with no verdict: " + (
        tail[-1][:200] if tail else "(no stderr)"
    )


def _summary(verdicts: list[str]) -> str:
    if len(verdicts) == 1:
        return verdicts[0]
    bad = [v for v in verdicts if v != "ok"]
    if not bad:
        return f"ok (all {len(verdicts)} processes)"
    others = "; the others ok" if len(bad) < len(verdicts) else ""
    unlike = sorted(set(bad) - {bad[0]})
    also = f"; also: {unlike[0]}" if unlike else ""
    return f"{bad[0]} [{len(bad)} of {len(verdicts)} processes{others}{also}]"


def main(
    configs: list[dict[str, Any]],
    label: Callable[[dict[str, Any]], str],
    launch: Callable[[dict[str, Any]], str],
    *,
    trials: int = 1,
    workers: int = 4,
) -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        print(VERDICT + _child(launch, json.loads(sys.argv[2])), flush=True)
        return 0
    script = os.path.abspath(sys.argv[0])
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="runtime-port-cache-") as cache:
        jobs = [(config, trial) for config in configs for trial in range(trials)]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            verdicts = list(pool.map(lambda job: _run_one(script, job[0], cache), jobs))
    for index, config in enumerate(configs):
        mine = verdicts[index * trials : (index + 1) * trials]
        print(f"{label(config)} -> {_summary(mine)}", flush=True)
    print(f"# {len(jobs)} processes in {time.monotonic() - started:.1f} s", flush=True)
    return 0
