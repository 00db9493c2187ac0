"""Run the user's program, unchanged, with the capture hook on its ``PYTHONPATH``.

The program's stdout is its own; its stderr goes to a log file in the capture folder,
which this process copies to its own stderr as it grows (so the user sees the same
text), and which lets the hook note where each compile's diagnostics start and end (an
MLIR pass failure is printed there, not carried by the exception). Children of the
program inherit both the PYTHONPATH and the log.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from suite.capture.site.repro_capture_records import ENV_ALL, ENV_DIR

SITE = Path(__file__).resolve().parent / "site"
STDERR_LOG = "stderr.log"
POLL_S = 0.05


@dataclass(frozen=True)
class ProgramRun:
    """How the program ended: its pid, its exit status (negative: killed by that signal)."""

    command: list[str]
    pid: int
    returncode: int

    @property
    def exit_status(self) -> int:
        """What ``repro capture`` exits with: the program's status, 128+N for signal N."""
        return self.returncode if self.returncode >= 0 else 128 - self.returncode

    @property
    def signal_name(self) -> str | None:
        if self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal-{-self.returncode}"


def environment(folder: Path, keep_all: bool) -> dict[str, str]:
    """The program's environment: this one, plus the hook's folder first on PYTHONPATH."""
    env = dict(os.environ)
    paths = [str(SITE), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env[ENV_DIR] = str(folder)
    env[ENV_ALL] = "1" if keep_all else "0"
    return env


def run(command: list[str], folder: Path, keep_all: bool) -> ProgramRun:
    """Run ``command`` to its end; SIGINT reaches it from the terminal, SIGTERM is passed on."""
    folder.mkdir(parents=True, exist_ok=True)
    log_path = folder / STDERR_LOG
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        process = subprocess.Popen(command, env=environment(folder, keep_all), stderr=log)
    finally:
        os.close(log)
    stop = threading.Event()
    copier = threading.Thread(target=_copy_stderr, args=(log_path, stop), daemon=True)
    copier.start()
    previous_int = signal.signal(signal.SIGINT, signal.SIG_IGN)
    previous_term = signal.signal(signal.SIGTERM, lambda *_: process.send_signal(signal.SIGTERM))
    try:
        returncode = process.wait()
    finally:
        signal.signal(signal.SIGINT, previous_int)
        signal.signal(signal.SIGTERM, previous_term)
        stop.set()
        copier.join()
    return ProgramRun(list(command), process.pid, returncode)


def _copy_stderr(log_path: Path, stop: threading.Event) -> None:
    """``tail -f`` of the log onto this process's stderr, drained once the program ended."""
    out = sys.stderr.buffer
    with open(log_path, "rb") as log:
        while True:
            finished = stop.is_set()
            chunk = log.read(1 << 16)
            if chunk:
                out.write(chunk)
                out.flush()
                continue
            if finished:
                return
            stop.wait(POLL_S)


def stderr_between(folder: Path, start: int | None, end: int | None) -> str:
    """The program's stderr from byte ``start`` to ``end`` (to its end when ``end`` is None)."""
    if start is None:
        return ""
    with open(folder / STDERR_LOG, "rb") as log:
        log.seek(start)
        data = log.read() if end is None else log.read(max(0, end - start))
    return data.decode(errors="replace")
