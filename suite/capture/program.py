"""Run the user's program, unchanged, with the capture hook on its ``PYTHONPATH``, inside
the suite's isolation (:mod:`suite.engine.isolate`).

Streams. The program reads this process's stdin and writes its stdout (with ``--json``,
this process's stderr instead, so that stdout holds only the capture document); its
stderr goes to a log file in the capture folder, which this process copies to its own
stderr as it grows (so the user sees the same text), and which lets the hook note where
each compile's diagnostics start and end (an MLIR pass failure is printed there, not
carried by the exception). Children of the program inherit the PYTHONPATH and the log.

Isolation. The program is supervised by :func:`suite.engine.isolate.supervise`: a
wall-clock timeout and a cap on the resident memory of its process tree (both off unless
the command was given ``--timeout`` / ``--memory-cap``: a training run may legitimately
run for hours and use a lot of memory), no core files, registration with the run's
``stop_all``, and the token hunt for escaped descendants. On top of that, this process is
a child subreaper while the program runs, so a descendant that escapes with ``setsid``
or a double fork and never execs (no token in its environment) is adopted here; once the
program has ended, every descendant still alive is killed and reaped. The program's parent
is a keeper (``suite.engine.template.keep``, as for a fresh case): a child subreaper too,
which gets SIGTERM when this process dies (``PR_SET_PDEATHSIG``), even SIGKILLed, and then
kills the program and everything below it, escaped or not. The program runs in
its own process group (which the timeout kills as a whole); when this process owns the
terminal, the program's group is made the terminal's foreground group for as long as it
runs, as a shell does for a job, so the terminal's Ctrl-C and reads of the terminal reach
it as they would without ``repro capture``, and the terminal is given back afterwards.

Signals. A SIGINT that reaches this process is passed on to the program's group; the
first SIGTERM is passed on to the program, a second one kills its whole tree. Either way
the program's end is then recorded as usual; after a SIGTERM ``stopped`` is set.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import io
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import psutil

from suite.capture.site.repro_capture_records import ENV_ALL, ENV_DIR
from suite.engine import Bounds, isolate

SITE = Path(__file__).resolve().parent / "site"
STDERR_LOG = "stderr.log"
POLL_S = 0.05
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
# A fork bomb adopted round after round still ends: this many kill rounds, then give up.
_KILL_ROUNDS = 200


@dataclass(frozen=True)
class ProgramRun:
    """How the program ended: its pid, its exit status (negative: killed by that signal),
    and what the isolation did to it."""

    command: list[str]
    pid: int
    returncode: int
    timed_out: bool = False
    memory_exceeded: bool = False
    left_behind: int = 0  # descendants still alive after it ended, killed then
    stopped: bool = False  # this process got SIGTERM while the program ran
    duration_s: float = 0.0

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


def program_bounds(timeout_s: float | None, memory_bytes: int | None) -> Bounds:
    """The program's bounds: none unless the command was given them."""
    return Bounds(
        timeout_s=math.inf if timeout_s is None else timeout_s,
        memory_bytes=memory_bytes,
    )


def environment(
    folder: Path, keep_all: bool, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The program's environment: ``base`` (this process's by default), plus the hook's
    folder first on PYTHONPATH."""
    env = dict(os.environ if base is None else base)
    paths = [str(SITE), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env[ENV_DIR] = str(folder)
    env[ENV_ALL] = "1" if keep_all else "0"
    return env


class _Program:
    """The program as :func:`suite.engine.isolate.supervise` watches it. Its streams are
    not piped through the supervisor (they are the terminal's and the log's), so the
    supervisor's bounded copies of them are empty."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.pid = process.pid
        self.stdout: IO[bytes] = io.BytesIO()
        self.stderr: IO[bytes] = io.BytesIO()

    def wait_for(self, timeout: float) -> int | None:
        return isolate.exit_within(self.process, timeout)

    def release(self) -> None:
        pass


def run(
    command: list[str],
    folder: Path,
    keep_all: bool,
    bounds: Bounds | None = None,
    stdout_to_stderr: bool = False,
) -> ProgramRun:
    """Run ``command`` to its end (or its bounds), then kill whatever it left behind."""
    bounds = bounds or program_bounds(None, None)
    folder.mkdir(parents=True, exist_ok=True)
    log_path = folder / STDERR_LOG
    token = isolate.new_token()
    env = {**environment(folder, keep_all), isolate.TOKEN_VARIABLE: token}
    was_subreaper = _subreaper(True)
    others = _children()  # this process's children from before: not the program's
    stopped = threading.Event()
    stop = threading.Event()
    copier = threading.Thread(target=_copy_stderr, args=(log_path, stop), daemon=True)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    keeper = isolate.KeeperPipe()
    try:
        sys.stdout.flush()
        started = time.monotonic()
        terminal = _terminal()
        try:
            # The keeper is the program's parent: a child subreaper that kills everything
            # below it when the program ends, or when this process dies, even SIGKILLed.
            process = subprocess.Popen(
                keeper.command(command),
                env=env,
                stdout=2 if stdout_to_stderr else None,
                stderr=log,
                preexec_fn=functools.partial(_own_group, terminal),
                pass_fds=(keeper.write_fd,),
            )
        finally:
            os.close(log)
            keeper.started()
        # The keeper writes the program's pid at once, in one write (then what it killed).
        keeper.read()
        program_pid = keeper.pid or process.pid

        def interrupt(signum: int, frame: object) -> None:
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGINT)

        def terminate(signum: int, frame: object) -> None:
            if stopped.is_set():  # the second SIGTERM: no more waiting
                isolate.kill_tree(process.pid)
            stopped.set()
            with contextlib.suppress(OSError):
                os.kill(program_pid, signal.SIGTERM)

        copier.start()
        previous_int = signal.signal(signal.SIGINT, interrupt)
        previous_term = signal.signal(signal.SIGTERM, terminate)
        try:
            ended = isolate.supervise(_Program(process), token, bounds, started)
        finally:
            signal.signal(signal.SIGINT, previous_int)
            signal.signal(signal.SIGTERM, previous_term)
            if terminal is not None:
                _foreground(terminal, os.getpgrp())
    finally:
        left = _kill_adopted(others)
        _subreaper(was_subreaper)
        stop.set()
        if copier.is_alive():
            copier.join()
        keeper.read()  # the keeper has exited: the rest of its report
        keeper.close()
    assert ended.returncode is not None
    return ProgramRun(
        command=list(command),
        pid=program_pid,
        returncode=ended.returncode,
        timed_out=ended.timed_out,
        memory_exceeded=ended.memory_exceeded,
        left_behind=ended.stragglers_killed + left + keeper.killed,
        stopped=stopped.is_set(),
        duration_s=ended.duration_s,
    )


def _terminal() -> int | None:
    """The terminal on stdin, when this process is its foreground job (else None)."""
    try:
        if os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp():
            return 0
    except OSError:
        pass
    return None


def _own_group(terminal: int | None) -> None:
    """In the keeper's process, before exec: its own group (the program's too), the
    terminal's foreground."""
    os.setpgid(0, 0)
    if terminal is not None:
        _foreground(terminal, os.getpgrp())


def _foreground(terminal: int, group: int) -> None:
    """Make ``group`` the terminal's foreground group (SIGTTOU held off meanwhile)."""
    previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        with contextlib.suppress(OSError):
            os.tcsetpgrp(terminal, group)
    finally:
        signal.signal(signal.SIGTTOU, previous)


def _subreaper(on: bool) -> bool:
    """Make this process a child subreaper (or not); whether it was one before."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        before = ctypes.c_int(0)
        libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(before), 0, 0, 0)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)
        return bool(before.value)
    except (OSError, AttributeError):
        return False


def _children() -> set[int]:
    try:
        return {p.pid for p in psutil.Process().children()}
    except psutil.Error:
        return set()


def _kill_adopted(others: set[int]) -> int:
    """Kill and reap every descendant of this process that is not under one of ``others``:
    what the program left behind, adopted here as the subreaper. How many were killed."""
    killed = 0
    me = psutil.Process()
    for _ in range(_KILL_ROUNDS):
        try:
            mine = [p for p in me.children() if p.pid not in others]
            found = [d for p in mine for d in (p, *_descendants(p))]
        except psutil.Error:
            found = []
        if not found:
            break
        for proc in found:
            with contextlib.suppress(psutil.Error):
                proc.kill()
                killed += 1
        for proc in mine:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(proc.pid, 0)
    return killed


def _descendants(proc: psutil.Process) -> list[psutil.Process]:
    try:
        return list(proc.children(recursive=True))
    except psutil.Error:
        return []


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
