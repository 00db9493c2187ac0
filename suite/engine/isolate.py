"""Run one command so that nothing it does can take the run down.

A compiler that segfaults, aborts, hangs, floods its output or eats memory is
data, not the end of a nightly run. Each case therefore runs as its own
process in its own session (so the whole process group can be killed), with:

- a wall-clock timeout that kills the whole group;
- a memory cap on what the case holds, polled: charged to its cgroup, or its tree's PSS
  plus the ``memfd`` and ``/dev/shm`` objects it holds (``suite.engine.boundary``);
- stdout and stderr kept only up to a head and a tail, counted beyond that;
- no core files;
- a hunt, after it ends, for descendants that left the group (``setsid`` and
  double forks): by a token planted in their environment and, for cases forked
  from a warm template (where a plain fork shows no new environment in ``/proc``),
  by the process tree, since such a case is a child subreaper
  (``suite.engine.template``) that adopts every orphan below it.

A fresh process runs under a keeper (``suite.engine.template.keep``), a child subreaper that
kills everything below it when the case ends or when this process dies, SIGKILL included
(``prctl(PR_SET_PDEATHSIG)``); a warm template does the same for the cases it forks.

Where the machine allows, each case also runs in a cgroup of its own
(``suite.engine.boundary``): the kernel keeps every process it starts in it, and everything
left in it dies when the case ends, whatever it did to the process tree.

Every case being watched is registered here, so that an interrupted run
(``stop_all``) kills each one and its whole tree at once.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Protocol

import psutil

from suite.engine.boundary import CGROUP_VARIABLE, CaseGroup, tree_memory
from suite.engine.defaults import Bounds
from suite.engine.template import keeper_argv, keeper_report

TOKEN_VARIABLE = "REPRO_CASE_TOKEN"
# How often the timeout and the memory cap are checked. An exit is noticed at once
# (the wait returns); a tighter poll only steals CPU from the compile it watches.
POLL_SECONDS = 0.2


@dataclass
class BoundedOutput:
    """A bounded copy of one output stream: its head and tail, and how much was dropped."""

    text: str
    total_bytes: int
    dropped_bytes: int

    @property
    def truncated(self) -> bool:
        return self.dropped_bytes > 0


@dataclass
class Exit:
    """How an isolated process ended."""

    returncode: int | None
    timed_out: bool
    memory_exceeded: bool
    peak_memory_bytes: int  # the most it held; measured only under a memory cap (else 0)
    duration_s: float
    stdout: BoundedOutput
    stderr: BoundedOutput
    stragglers_killed: int = 0
    interrupted: bool = False  # killed because the run was stopped: not the case's result

    @property
    def signal_name(self) -> str | None:
        if self.returncode is None or self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"


@dataclass
class _Drain:
    """Reads a pipe to its end, keeping a head and a tail of at most ``limit`` bytes."""

    limit: int
    head: bytearray = field(default_factory=bytearray)
    tail: deque[bytes] = field(default_factory=deque)
    tail_size: int = 0
    total: int = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit // 2 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail.append(chunk)
        self.tail_size += len(chunk)
        while self.tail and self.tail_size - len(self.tail[0]) >= self.limit // 2:
            self.tail_size -= len(self.tail.popleft())

    def captured(self) -> BoundedOutput:
        tail = b"".join(self.tail)
        kept_tail = tail[-(self.limit // 2) :] if self.limit else b""
        head = bytes(self.head)
        if self.total > len(head) + len(kept_tail):
            # Cut at line ends: a token, or a "password=" and its value, split by the cut
            # would leave a piece that no scrubbing pattern recognizes.
            head = head[: _edge(head, head.rfind(b"\n"), head.rfind(b" ")) + 1]
            start = _edge(kept_tail, kept_tail.find(b"\n"), kept_tail.find(b" "))
            kept_tail = kept_tail[start + 1 :] if start >= 0 else b""
        dropped = self.total - len(head) - len(kept_tail)
        text = head.decode("utf-8", "replace")
        if dropped:
            text += f"\n[... {dropped} bytes cut by the output bound ...]\n"
        text += kept_tail.decode("utf-8", "replace")
        return BoundedOutput(text, self.total, dropped)


def _edge(data: bytes, line_end: int, space: int) -> int:
    """Where to cut ``data`` at its edge by a kept stream's cut: at a line end, else (one
    long line) at a space, else nothing of it is kept (-1)."""
    return line_end if line_end >= 0 else space


def _pump(pipe: IO[bytes], drain: _Drain) -> None:
    with pipe:
        for chunk in iter(lambda: pipe.read1(65536), b""):  # type: ignore[attr-defined]
            drain.feed(chunk)


class Watch(Protocol):
    """A case's bounds of its own making beside the timeout: ``overdue`` once it broke one
    (a launch past the hang oracle's bound); ``waited_s``, the time it spent waiting for its
    turn on a GPU, which its timeout does not count (another case's launch held the GPU)."""

    def overdue(self) -> bool: ...

    def waited_s(self) -> float: ...


class Started(Protocol):
    """A case process the supervisor watches: a plain child, or one forked by a warm template."""

    pid: int
    stdout: IO[bytes]
    stderr: IO[bytes]

    def wait_for(self, timeout: float) -> int | None:
        """The return code once the process has ended (negative: a signal), else None."""

    def release(self) -> int | None:
        """Called once the process and its stragglers are dead: let the streams reach EOF;
        the number of stragglers it killed itself, if it says."""


class KeeperPipe:
    """The pipe a keeper (``suite.engine.template.keep``) reports on, seen from the process
    that starts it: the case's pid once the keeper started it, then, as it exits, how many
    processes it killed below the case."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.told = b""

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run under a keeper that reports here (``write_fd`` passed to it)."""
        return keeper_argv(sys.executable, list(argv), self.write_fd)

    def started(self) -> None:
        """The keeper started (or could not): this process's write end is closed, so that a
        read ends once the keeper exits."""
        os.close(self.write_fd)

    def read(self) -> None:
        with contextlib.suppress(OSError):
            self.told += os.read(self.read_fd, 64)

    def close(self) -> None:
        os.close(self.read_fd)

    @property
    def pid(self) -> int | None:
        return keeper_report(self.told)[0]

    @property
    def killed(self) -> int:
        return keeper_report(self.told)[1]


def exit_within(proc: subprocess.Popen[bytes], timeout: float) -> int | None:
    """``proc``'s return code once it has ended, waiting at most ``timeout`` seconds, else
    None. The wait is one wake-up on the process's pidfd: ``Popen.wait(timeout)`` sleeps
    and polls (1 ms doubling to 50 ms, about 45 wake-ups a second of a supervisor's
    watch), which a program sharing the supervisor's CPU pays for."""
    if proc.returncode is None and timeout > 0 and hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(proc.pid)
        except OSError:  # reaped already, or a kernel without pidfds: Popen's own wait
            pass
        else:
            try:
                select.select([pidfd], [], [], timeout)
            finally:
                os.close(pidfd)
            timeout = 0
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


class _FreshCase:
    """A case started as a fresh process (``subprocess.Popen``), as the supervisor watches
    it; a warm template's forked case is ``suite.engine.warm._ForkedCase``."""

    def __init__(self, proc: subprocess.Popen[bytes], keeper: KeeperPipe) -> None:
        self.proc = proc
        self.pid = proc.pid
        assert proc.stdout is not None and proc.stderr is not None
        self.stdout: IO[bytes] = proc.stdout
        self.stderr: IO[bytes] = proc.stderr
        self._keeper = keeper

    def wait_for(self, timeout: float) -> int | None:
        return exit_within(self.proc, timeout)

    def release(self) -> int:
        """How many processes the keeper killed below the case (none told when it was killed
        itself: the supervisor counts those)."""
        try:
            self._keeper.read()
        finally:
            self._keeper.close()
        return self._keeper.killed


def new_token() -> str:
    """The mark planted in a case's environment to find its escaped descendants."""
    return uuid.uuid4().hex


def run_isolated(
    argv: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    bounds: Bounds | None = None,
    watch: Watch | None = None,
) -> Exit:
    """Run ``argv`` as a fresh process to completion or to a bound, and say how it ended."""
    token = new_token()
    child_env = dict(os.environ if env is None else env)
    child_env[TOKEN_VARIABLE] = token
    _check_runnable(argv[0], child_env, cwd)
    group = CaseGroup.make()
    if group is not None:
        child_env[CGROUP_VARIABLE] = group.join_value()
    started = time.monotonic()
    # Under a keeper (``suite.engine.template.keep``): the case and everything it starts die
    # with this process, even a SIGKILLed one.
    keeper = KeeperPipe()
    try:
        proc = subprocess.Popen(
            keeper.command(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env,
            cwd=cwd,
            start_new_session=True,
            pass_fds=(keeper.write_fd,),
        )
    except BaseException:
        keeper.close()
        if group is not None:
            group.end()
        raise
    finally:
        keeper.started()
    return supervise(_FreshCase(proc, keeper), token, bounds or Bounds(), started, watch, group)


def _check_runnable(program: str, env: Mapping[str, str], cwd: str | None) -> None:
    """Raise what ``subprocess.Popen`` would for a program that cannot start: the keeper
    would only see it fail in its child."""
    if os.sep in program:  # a path, relative to the child's folder: no PATH search
        path = os.path.join(cwd or os.getcwd(), program)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return
        if os.path.exists(path):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
    elif shutil.which(program, path=env.get("PATH", os.defpath)) is not None:
        return
    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


class _Watched:
    """The cases being supervised now, so that a stopped run can kill them all."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pids: set[int] = set()
        self.stopping = threading.Event()

    def add(self, pid: int) -> None:
        with self.lock:
            self.pids.add(pid)

    def discard(self, pid: int) -> None:
        with self.lock:
            self.pids.discard(pid)


WATCHED = _Watched()


def stop_all() -> None:
    """Stop the run: kill every case being watched (and its tree) now; new ones die at start."""
    WATCHED.stopping.set()
    with WATCHED.lock:
        pids = list(WATCHED.pids)
    for pid in pids:
        kill_tree(pid)


def stopping() -> bool:
    return WATCHED.stopping.is_set()


def supervise(
    case: Started,
    token: str,
    bounds: Bounds,
    started: float,
    watch: Watch | None = None,
    group: CaseGroup | None = None,
) -> Exit:
    """Watch a started case until it ends or breaks a bound (``watch``: bounds of its own
    making, e.g. a launch past the hang oracle's); then clean up after it. ``group``: the
    case's cgroups, which it joined as it started; ended and removed here."""
    WATCHED.add(case.pid)
    try:
        return _supervise(case, token, bounds, started, watch, group)
    except BaseException:
        # Stopped (a signal in this thread) or broken: the case must not outlive its watcher.
        kill_tree(case.pid)
        _kill_by_token(token)
        if group is not None:
            group.end()
        raise
    finally:
        WATCHED.discard(case.pid)


def _supervise(
    case: Started,
    token: str,
    bounds: Bounds,
    started: float,
    watch: Watch | None,
    group: CaseGroup | None,
) -> Exit:
    _no_core_files(case.pid)
    drains = (_Drain(bounds.output_bytes), _Drain(bounds.output_bytes))
    pumps = [
        threading.Thread(target=_pump, args=(stream, drain), daemon=True)
        for stream, drain in zip((case.stdout, case.stderr), drains, strict=True)
    ]
    for pump in pumps:
        pump.start()
    timed_out = memory_exceeded = False
    peak = 0
    returncode = case.wait_for(0 if stopping() else POLL_SECONDS)
    while returncode is None:
        if not (timed_out or memory_exceeded):
            waited = watch.waited_s() if watch else 0.0
            timed_out = time.monotonic() - started - waited > bounds.timeout_s or bool(
                watch and watch.overdue()
            )
            # Measured only under a cap: walking the tree's memory maps (no cgroup) takes
            # each process's mmap lock, which its own mmap/munmap then waits for.
            if bounds.memory_bytes is not None:
                held = _held(case.pid, group)
                peak = max(peak, held)
                memory_exceeded = held > bounds.memory_bytes
        if timed_out or memory_exceeded or stopping():
            kill_tree(case.pid)
        returncode = case.wait_for(POLL_SECONDS)
    duration = time.monotonic() - started
    stragglers = kill_tree(case.pid) + _kill_by_token(token)
    stragglers += case.release() or 0
    if group is not None:
        stragglers += group.end()  # what left the tree, but not the case's cgroup
    for pump in pumps:
        pump.join(timeout=5)
    return Exit(
        returncode=returncode,
        timed_out=timed_out,
        memory_exceeded=memory_exceeded,
        peak_memory_bytes=peak,
        duration_s=duration,
        stdout=drains[0].captured(),
        stderr=drains[1].captured(),
        stragglers_killed=stragglers,
        interrupted=stopping(),
    )


def _no_core_files(pid: int) -> None:
    import resource

    with contextlib.suppress(OSError, ValueError):
        resource.prlimit(pid, resource.RLIMIT_CORE, (0, 0))


def _held(pid: int, group: CaseGroup | None) -> int:
    """The memory the case holds: charged to its cgroup, else measured over its tree."""
    charged = group.charge() if group is not None else None
    return tree_memory(pid) if charged is None else charged


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def kill_tree(pid: int) -> int:
    """SIGKILL ``pid``'s process group and every descendant of ``pid`` (whatever their
    session); the number of descendants killed outside the group."""
    try:
        descendants = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        descendants = []
    _kill_group(pid)
    killed = 0
    for proc in descendants:
        try:
            if os.getpgid(proc.pid) != pid:
                killed += 1
            proc.kill()
        except (psutil.Error, OSError):
            continue
    return killed


def _kill_by_token(token: str) -> int:
    """Kill processes that escaped the group but still carry the case's token. Every
    process's environment is read raw from /proc (an entry ``NAME=VALUE`` between NULs): at
    every case's end, a dict of each environment cost four times as much."""
    entry = f"{TOKEN_VARIABLE}={token}".encode()
    killed = 0
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as environ:
                carries = entry in environ.read().split(b"\0")
            if carries:
                psutil.Process(int(name)).kill()
                killed += 1
        except (OSError, psutil.Error):
            continue
    return killed
