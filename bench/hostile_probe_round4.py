"""The fourth round of hostile angles (issue 36, what round 3 left), run by
``bench/hostile_probe.py --round 4``; each through the real command with the reproducers of
``tests/hostile/repros/``:

- the kernel's boundary: a double-forked daemon that clears its subreaper and parent-death
  flags, overwrites its environment and kills its keeper (or template), warm and fresh:
  dead when the run ends, nothing written after it;
- the memory cap under a 1 GiB cap, warm and fresh, with the boundary this machine gives
  and with ``REPRO_BOUNDARY=process-tree`` (the fallback): 3 GiB in a ``memfd`` is a
  ``crash`` at the cap, 300 idle forked children pass; 3 GiB in a ``/dev/shm`` file is a
  ``crash`` at the cap (warm, this machine's boundary);
- SIGTERM while the scrubber works on 2 MiB of adversarial output and while a case runs
  on, warm and fresh: exit 143, no process of the run left;
- a disk that fills mid-run: the case's record names the file it lost (``stderr.txt``);
- ``repro doctor`` names the boundary in force.

A report SIGKILLed mid-way (round 3) must now leave no scratch folder either: the probe's
last check counts every ``repro-*`` left in its private ``TMPDIR``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hostile_probe_round3 import HOSTILE, command, mounted, records

from suite.engine.boundary import FALLBACK, FORCE_VARIABLE


def faults(work: Path, check: Callable[..., Any]) -> list[Any]:
    checks: list[Any] = []
    for step in (_daemon, _memory, _shm, _sigterm, _lost_file, _doctor):
        folder = work / step.__name__.strip("_")
        folder.mkdir(parents=True)
        checks += step(folder, check)
    return checks


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def _daemon(work: Path, check: Callable[..., Any]) -> list[Any]:
    checks = []
    for isolation in ("warm", "fresh"):
        mark, pids = work / f"{isolation}.writes", work / f"{isolation}.pids"
        done = command(
            [
                *("run", str(HOSTILE / "boundary.py"), "--configs", "daemon"),
                *("--isolation", isolation, "--timeout", "60", "-o", str(work / isolation)),
            ],
            HOSTILE_DAEMON_FILE=str(mark),
            HOSTILE_PIDS=str(pids),
        )
        daemons = [int(p) for p in pids.read_text().split()] if pids.exists() else []
        written = mark.stat().st_size if mark.exists() else -1
        time.sleep(1.0)
        later = mark.stat().st_size if mark.exists() else -1
        living = [pid for pid in daemons if _alive(pid)]
        for pid in living:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        ok = bool(daemons) and written > 0 and not living and later == written
        why = f"exit {done.returncode}, daemons {daemons}, alive {living}, {written} -> {later} B"
        checks.append(check("fault", f"a daemon that left the tree ({isolation})", ok, why))
    return checks


def _memory(work: Path, check: Callable[..., Any]) -> list[Any]:
    checks = []
    for boundary, env in (("machine's", {}), (FALLBACK, {FORCE_VARIABLE: FALLBACK})):
        for isolation in ("warm", "fresh"):
            out = work / f"{boundary}-{isolation}"
            done = command(
                [
                    *("run", str(HOSTILE / "boundary.py"), "--configs", "memory"),
                    *("--isolation", isolation, "--memory-cap", "1", "--timeout", "120"),
                    *("-o", str(out)),
                ],
                **env,
            )
            found = {r["config"]["fault"]: r for r in records(out)}
            memfd, forks = found.get("memfd", {}), found.get("forks", {})
            ok = (
                done.returncode == 1
                and memfd.get("outcome") == "crash"
                and "memory cap" in memfd.get("message", "")
                and forks.get("outcome") == "passed"
            )
            why = f"exit {done.returncode}: {memfd.get('outcome')}, {forks.get('outcome')}"
            checks.append(
                check(
                    "fault",
                    f"3 GiB memfd over, 300 forks under a 1 GiB cap ({boundary}, {isolation})",
                    ok,
                    why,
                )
            )
    return checks


def _shm(work: Path, check: Callable[..., Any]) -> list[Any]:
    shm = Path("/dev/shm") / f"repro-probe-{uuid.uuid4().hex}"
    try:
        done = command(
            [
                *("run", str(HOSTILE / "boundary.py"), "--configs", "shm", "--memory-cap", "1"),
                *("--timeout", "120", "-o", str(work / "out")),
            ],
            HOSTILE_SHM=str(shm),
        )
    finally:
        with contextlib.suppress(OSError):
            shm.unlink()
    (found,) = records(work / "out") or [{}]
    ok = done.returncode == 1 and found.get("outcome") == "crash"
    why = f"exit {done.returncode}: {found.get('outcome')} {found.get('message', '')[:80]}"
    return [check("fault", "3 GiB in a /dev/shm file over a 1 GiB cap", ok, why)]


def _holders(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            with contextlib.suppress(OSError), open(f"/proc/{entry}/environ", "rb") as environ:
                if marker.encode() in environ.read():
                    found.append(int(entry))
    return found


def _sigterm(work: Path, check: Callable[..., Any]) -> list[Any]:
    checks = []
    for busy in ("scrubber", "long"):
        for isolation in ("warm", "fresh"):
            marker, there = uuid.uuid4().hex, work / f"{busy}-{isolation}.there"
            run = subprocess.Popen(
                [
                    *(sys.executable, "-m", "suite.cli.main", "run", str(HOSTILE / "busy.py")),
                    *("--configs", busy, "--isolation", isolation, "-j", "1", "--timeout", "600"),
                    *("-o", str(work / f"{busy}-{isolation}")),
                ],
                env={**os.environ, "HOSTILE_STOP_MARKER": marker, "HOSTILE_BUSY": str(there)},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + 120
            while not there.exists() and run.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            run.send_signal(signal.SIGTERM)
            try:
                run.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                run.kill()
                run.communicate()
            deadline = time.monotonic() + 30
            while _holders(marker) and time.monotonic() < deadline:
                time.sleep(0.2)
            left = _holders(marker)
            ok = there.exists() and run.returncode == 143 and not left
            why = f"busy {there.exists()}, exit {run.returncode}, left {left}"
            checks.append(check("fault", f"SIGTERM while {busy} ({isolation})", ok, why))
    return checks


def _lost_file(work: Path, check: Callable[..., Any]) -> list[Any]:
    disk = work / "disk"
    if not mounted(disk, "size=4m"):
        return []
    try:
        done = command(["run", str(HOSTILE / "fills_disk.py"), "-o", str(disk / "out")])
        (found,) = records(disk / "out") or [{}]
    finally:
        subprocess.run(["umount", str(disk)], check=False)
    lost = found.get("detail", {}).get("lost", [])
    ok = done.returncode == 1 and "stderr.txt (ENOSPC)" in lost
    why = f"exit {done.returncode}, lost {lost}"
    return [check("fault", "a disk that fills mid-run: the lost file named", ok, why)]


def _doctor(work: Path, check: Callable[..., Any]) -> list[Any]:
    done = command(["doctor", "--json", "-o", str(work / "out")], REPRO_VENV_ROOT=str(work))
    try:
        found = json.loads(done.stdout)["case_boundary"]
    except (ValueError, KeyError) as exc:
        return [check("fault", "repro doctor names the case boundary", False, repr(exc))]
    return [check("fault", "repro doctor names the case boundary", True, found["in_force"])]
