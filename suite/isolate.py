"""Run one command so that nothing it does can take the run down.

A compiler that segfaults, aborts, hangs, floods its output or eats memory is
data, not the end of a nightly run. Each case therefore runs as its own
process in its own session (so the whole process group can be killed), with:

- a wall-clock timeout that kills the whole group;
- a memory cap on the resident size of the process tree, polled;
- stdout and stderr kept only up to a head and a tail, counted beyond that;
- no core files;
- a hunt, after it ends, for descendants that left the group (``setsid`` and
  double forks) by a token planted in their environment.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
import uuid
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import psutil

TOKEN_VARIABLE = "REPRO_CASE_TOKEN"
POLL_SECONDS = 0.05


@dataclass(frozen=True)
class Bounds:
    """Per-case limits. ``memory_bytes=None`` disables the cap."""

    timeout_s: float = 600.0
    memory_bytes: int | None = 8 << 30
    output_bytes: int = 1 << 20


@dataclass
class Captured:
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
    peak_rss_bytes: int
    duration_s: float
    stdout: Captured
    stderr: Captured
    stragglers_killed: int = 0

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

    def captured(self) -> Captured:
        tail = b"".join(self.tail)
        kept_tail = tail[-(self.limit // 2) :] if self.limit else b""
        dropped = self.total - len(self.head) - len(kept_tail)
        text = self.head.decode("utf-8", "replace")
        if dropped:
            text += f"\n[... {dropped} bytes cut by the output bound ...]\n"
        text += kept_tail.decode("utf-8", "replace")
        return Captured(text, self.total, dropped)


def _pump(pipe, drain: _Drain) -> None:
    with pipe:
        for chunk in iter(lambda: pipe.read1(65536), b""):
            drain.feed(chunk)


def run_isolated(
    argv: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    bounds: Bounds = Bounds(),
) -> Exit:
    """Run ``argv`` to completion or to a bound, and say how it ended."""
    token = uuid.uuid4().hex
    child_env = dict(os.environ if env is None else env)
    child_env[TOKEN_VARIABLE] = token
    started = time.monotonic()
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env,
        cwd=cwd,
        start_new_session=True,
    )
    _no_core_files(proc.pid)
    drains = (_Drain(bounds.output_bytes), _Drain(bounds.output_bytes))
    pumps = [
        threading.Thread(target=_pump, args=(pipe, drain), daemon=True)
        for pipe, drain in zip((proc.stdout, proc.stderr), drains, strict=True)
    ]
    for pump in pumps:
        pump.start()
    timed_out = memory_exceeded = False
    peak = 0
    while True:
        try:
            proc.wait(timeout=POLL_SECONDS)
            break
        except subprocess.TimeoutExpired:
            pass
        if time.monotonic() - started > bounds.timeout_s:
            timed_out = True
        else:
            rss = _tree_rss(proc.pid)
            peak = max(peak, rss)
            memory_exceeded = bounds.memory_bytes is not None and rss > bounds.memory_bytes
        if timed_out or memory_exceeded:
            _kill_group(proc.pid)
            proc.wait()
            break
    duration = time.monotonic() - started
    _kill_group(proc.pid)
    stragglers = _kill_by_token(token)
    for pump in pumps:
        pump.join(timeout=5)
    return Exit(
        returncode=proc.returncode,
        timed_out=timed_out,
        memory_exceeded=memory_exceeded,
        peak_rss_bytes=peak,
        duration_s=duration,
        stdout=drains[0].captured(),
        stderr=drains[1].captured(),
        stragglers_killed=stragglers,
    )


def _no_core_files(pid: int) -> None:
    import resource

    with contextlib.suppress(OSError, ValueError):
        resource.prlimit(pid, resource.RLIMIT_CORE, (0, 0))


def _tree_rss(pid: int) -> int:
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            continue
    return total


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _kill_by_token(token: str) -> int:
    """Kill processes that escaped the group but still carry the case's token."""
    killed = 0
    for proc in psutil.process_iter():
        try:
            if proc.pid != os.getpid() and proc.environ().get(TOKEN_VARIABLE) == token:
                proc.kill()
                killed += 1
        except psutil.Error:
            continue
    return killed
