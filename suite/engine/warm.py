"""Warm isolated workers: the parent's side of the template that forks cases.

A fresh interpreter per case spends most of its time starting Python and
importing Triton (about 1.5 s against 0.3 s for the compile itself). The
template (``suite.engine.template``) pays that once: it imports triton, the child
module and the reproducer files, then forks a child per case. Each child still
gets its own process session, environment (its own Triton cache and
reproducer path), working folder and output streams (FIFOs read here), so
``suite.engine.isolate.supervise`` treats it exactly like a fresh process: same
timeout, memory cap, output bounds and straggler hunt.

A template that cannot start (a reproducer file that exits at import, an interpreter
without Triton) raises :class:`WarmUnavailable`, and one whose warm-up compile failed for
a target names that target in ``failed_warm_up``: the runner then starts those cases as
fresh interpreters. Neither ends a run.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

import psutil

from suite.children import Role, child_argv
from suite.engine.boundary import CGROUP_VARIABLE, CaseGroup
from suite.engine.defaults import Bounds
from suite.engine.isolate import (
    TOKEN_VARIABLE,
    Exit,
    Watch,
    kill_tree,
    new_token,
    supervise,
)
from suite.engine.protocol import (
    Exited,
    Fork,
    Forked,
    Ready,
    Refused,
    TemplateMessage,
    Unreadable,
)
from suite.engine.template import (
    FOLDER_VARIABLE,
    PRELOAD_VARIABLE,
    PROTOCOL_FD_VARIABLE,
    WARM_UP_VARIABLE,
)

# How often a wait on the template looks whether it can still answer.
_POLL_S = 0.5
_STOPPED = (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP)


class WarmUnavailable(RuntimeError):
    """The template did not start or died: cases run as fresh interpreters instead."""


class _ForkedCase:
    """A case forked by the template, as the supervisor sees it."""

    def __init__(
        self,
        template: Template,
        pid: int,
        fifos: list[Path],
        keep: list[int],
        streams: list[IO[bytes]],
    ) -> None:
        self.template = template
        self.pid = pid
        self.stdout, self.stderr = streams
        self._fifos = fifos
        self._keep = keep

    def wait_for(self, timeout: float) -> int | None:
        return self.template.exit_code(self.pid, timeout)

    def release(self) -> None:
        for fd in self._keep:
            with contextlib.suppress(OSError):
                os.close(fd)
        for fifo in self._fifos:
            with contextlib.suppress(OSError):
                fifo.unlink()


class Template:
    """One warm template process for one interpreter, shared by the run's worker threads."""

    def __init__(
        self,
        python: str,
        env: Mapping[str, str],
        preload: Sequence[str] = (),
        warm_up: Sequence[int] = (),
        start_timeout_s: float = 600.0,
    ) -> None:
        template_env = dict(env)
        template_env[PRELOAD_VARIABLE] = os.pathsep.join(preload)
        template_env[WARM_UP_VARIABLE] = ",".join(str(arch) for arch in warm_up)
        self._folder = Path(tempfile.mkdtemp(prefix="repro-fifo-"))
        # The template's own output (warm-up warnings, a ptxas complaint) goes to a log;
        # its answers come on a pipe of their own, which nothing else writes to.
        self._log = self._folder / "template.log"
        answers, answers_write = os.pipe()
        template_env[PROTOCOL_FD_VARIABLE] = str(answers_write)
        template_env[FOLDER_VARIABLE] = str(self._folder)
        try:
            with open(self._log, "wb") as log:
                self.proc = subprocess.Popen(
                    child_argv(python, Role.WARM_TEMPLATE),
                    stdin=subprocess.PIPE,
                    stdout=log,
                    stderr=log,
                    env=template_env,
                    start_new_session=True,
                    pass_fds=(answers_write,),
                )
        except OSError as exc:
            os.close(answers)
            self._remove_folder()
            raise WarmUnavailable(
                f"the warm template under {python} did not start: {exc}"
            ) from None
        finally:
            os.close(answers_write)
        assert self.proc.stdin is not None
        self._stdin = self.proc.stdin
        # Unbuffered: a line read leaves no other line in a buffer that select cannot see.
        self._stdout = os.fdopen(answers, "rb", buffering=0)
        #: Lines from the template this side could not read (skipped, never fatal).
        self.unreadable: list[str] = []
        ready = self._wait_ready(time.monotonic() + start_timeout_s)
        if ready is not None:
            self.failed_warm_up = frozenset(ready.failed_warm_up)
        else:
            last = (self._log.read_text(errors="replace").strip().splitlines() or ["no output"])[-1]
            self.close()
            raise WarmUnavailable(
                f"the warm template under {python} did not start: {last}"
            ) from None
        self._lock = threading.Lock()
        self._changed = threading.Condition()
        self._pids: dict[int, int] = {}
        self._codes: dict[int, int] = {}
        self._refused: dict[int | None, str] = {}
        self._next = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _wait_ready(self, deadline: float) -> Ready | None:
        """The template's ready message (lines before it that are none are skipped); None
        when it died or said nothing in time."""
        while (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([self._stdout], [], [], left)
            line = self._stdout.readline() if readable else b""
            if not line:
                return None
            try:
                said = TemplateMessage.from_line(line)
            except Unreadable as exc:
                self.unreadable.append(str(exc))
                continue
            if isinstance(said, Ready):
                return said
            self.unreadable.append(f"a {said.KIND} message before ready")
        return None

    def _read(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._read_answers()
        with self._changed:
            self._changed.notify_all()

    def _read_answers(self) -> None:
        for line in self._stdout:
            with self._changed:
                try:
                    message = TemplateMessage.from_line(line)
                except Unreadable as exc:  # skipped: a foreign line never ends the reader
                    self.unreadable.append(str(exc))
                    continue
                handler = getattr(self, "on_" + message.KIND, None)
                if handler is None:
                    self.unreadable.append(f"a {message.KIND} message is no answer")
                else:
                    handler(message)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    # One handler per answer (called with ``_changed`` held).

    def on_forked(self, message: Forked) -> None:
        self._pids[message.id] = message.pid

    def on_exited(self, message: Exited) -> None:
        self._codes[message.pid] = message.code

    def on_refused(self, message: Refused) -> None:
        self._refused[message.id] = message.reason

    @property
    def alive(self) -> bool:
        """Running and able to answer: a template stopped (a case it forked sent it SIGSTOP)
        would never answer again, so it is killed here and counts as dead."""
        if self.proc.poll() is not None:
            return False
        try:
            stopped = psutil.Process(self.proc.pid).status() in _STOPPED
        except psutil.Error:
            return self.proc.poll() is None
        if stopped:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            return False
        return True

    def start(self, spec: str, env: Mapping[str, str], cwd: str) -> _ForkedCase:
        """Fork a case; its stdout and stderr arrive on FIFOs this side reads."""
        with self._lock:
            self._next += 1
            request_id = self._next
        fifos = [self._folder / f"{request_id}.{name}" for name in ("out", "err")]
        streams: list[IO[bytes]] = []
        keep: list[int] = []
        for fifo in fifos:
            os.mkfifo(fifo)
            read_fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            # Hold a write end open so the reader sees no EOF before the child opens its end.
            keep.append(os.open(fifo, os.O_WRONLY))
            os.set_blocking(read_fd, True)
            streams.append(os.fdopen(read_fd, "rb"))
        request = Fork(request_id, spec, dict(env), cwd, str(fifos[0]), str(fifos[1]))
        with self._lock:
            self._stdin.write(request.line().encode())
            self._stdin.flush()
        with self._changed:
            while request_id not in self._pids:
                refused = self._refused.pop(request_id, None)
                if refused is not None or not self.alive:
                    for fd in keep:
                        os.close(fd)
                    for stream in streams:
                        stream.close()
                    raise WarmUnavailable(
                        f"the warm template refused the case: {refused}"
                        if refused is not None
                        else "the warm template died"
                    )
                self._changed.wait(_POLL_S)
            pid = self._pids.pop(request_id)
        return _ForkedCase(self, pid, fifos, keep, streams)

    def exit_code(self, pid: int, timeout: float) -> int | None:
        deadline = time.monotonic() + timeout
        with self._changed:
            while pid not in self._codes:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                if not self.alive:
                    return -signal.SIGKILL
                self._changed.wait(min(left, _POLL_S))  # a stopped template says nothing
            return self._codes.pop(pid)

    def close(self) -> None:
        """Stop the template and everything it started (cases live in sessions of their own)."""
        with contextlib.suppress(OSError, ValueError):
            self.proc.stdin.close()  # type: ignore[union-attr]
        kill_tree(self.proc.pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        with contextlib.suppress(OSError, AttributeError):
            self._stdout.close()
        self._remove_folder()

    def _remove_folder(self) -> None:
        with contextlib.suppress(OSError):
            for leftover in self._folder.glob("*"):
                leftover.unlink()
            self._folder.rmdir()


def run_warm(
    template: Template,
    spec: str,
    env: Mapping[str, str],
    cwd: str,
    bounds: Bounds,
    watch: Watch | None = None,
) -> Exit:
    """Run one case forked from ``template``, supervised like a fresh process."""
    token = new_token()
    case_env = {**env, TOKEN_VARIABLE: token}
    group = CaseGroup.make()
    if group is not None:
        case_env[CGROUP_VARIABLE] = group.join_value()  # the forked case joins it first
    started = time.monotonic()
    try:
        case = template.start(spec, case_env, cwd)
    except BaseException:
        if group is not None:
            group.end()
        raise
    return supervise(case, token, bounds, started, watch, group)
