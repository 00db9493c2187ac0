"""The compiler's own output, whatever the program does with its descriptors.

MLIR diagnostics, ``LLVM ERROR``, assertions and ptxas are written by C++ (or a child
process) straight to file descriptors 2 and 1 of the process that compiles. A program that
compiles in a child and keeps the child's output, or that points fd 2 elsewhere, hides
them: the exception says ``PassManager::run failed`` and no more. So around each compile
both descriptors go to log files under the capture folder
(``compile-output/<pid>.<n>.{stdout,stderr}``), and when the last compile in flight ends
what they received is copied to where the descriptors pointed before, in order, the
descriptors are put back and the logs deleted. Whoever reads the program's output gets
all of it, at the end of the compile rather than during it.

A process killed inside a compile never copies its text back: it stays in the log (named,
with the offset the compile starts at, in the compile's record written ahead), and
``repro capture`` reads it from there. Two
compiles in flight at once (threads) share the redirection; each keeps what was written
between its start and its end, the other's text included. A fork while a compile is in
flight gives the child its descriptors back. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from repro_capture_common import folder
from repro_capture_records import CompileOutput, read_bounded

OUTPUT_FOLDER = "compile-output"
STREAMS = ((1, "stdout"), (2, "stderr"))


@dataclass
class _Stream:
    descriptor: int  # 1 or 2
    log: int  # the log file's descriptor (append)
    log_path: Path
    saved: int  # a duplicate of where the descriptor pointed before


class _Redirection:
    """The process's redirection: how many compiles are in flight, the streams."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.streams: list[_Stream] = []
        self.redirections = 0  # how many this process made: each has its own logs


_STATE = _Redirection()


def begin() -> CompileOutput | None:
    """Point fds 1 and 2 at the logs (if no compile is in flight yet); where this compile
    starts in each. None when there is no capture folder or neither descriptor is open."""
    base = folder()
    if base is None:
        return None
    with _STATE.lock:
        if _STATE.depth == 0:
            _STATE.streams = _redirect(base)
        if not _STATE.streams:
            return None
        _STATE.depth += 1
        output = CompileOutput()
        for stream in _STATE.streams:
            start = os.fstat(stream.log).st_size
            if stream.descriptor == 1:
                output.stdout_log, output.stdout_from = str(stream.log_path), start
            else:
                output.stderr_log, output.stderr_from = str(stream.log_path), start
        return output


def end(output: CompileOutput) -> None:
    """Fill ``output`` with what this compile's descriptors received; the last compile in
    flight copies the logs back to where the descriptors pointed and restores them."""
    _flush_python()
    with _STATE.lock:
        for stream in _STATE.streams:
            start = output.stdout_from if stream.descriptor == 1 else output.stderr_from
            text, dropped = read_bounded(stream.log_path, start, os.fstat(stream.log).st_size)
            if stream.descriptor == 1:
                output.stdout = text
            else:
                output.stderr = text
            output.dropped += dropped
        _STATE.depth -= 1
        if _STATE.depth == 0:
            _restore(_STATE.streams)
            _STATE.streams = []


def _redirect(base: Path) -> list[_Stream]:
    _flush_python()
    streams = []
    logs = base / OUTPUT_FOLDER
    logs.mkdir(parents=True, exist_ok=True)
    _STATE.redirections += 1
    for descriptor, name in STREAMS:
        try:
            saved = os.dup(descriptor)
        except OSError:  # the program closed it: nothing to tee
            continue
        path = logs / f"{os.getpid()}.{_STATE.redirections}.{name}"
        log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        os.dup2(log, descriptor)
        streams.append(_Stream(descriptor, log, path, saved))
    return streams


def _restore(streams: list[_Stream]) -> None:
    for stream in streams:
        with open(stream.log_path, "rb") as log:
            for chunk in iter(lambda: log.read(1 << 20), b""):
                _write_all(stream.saved, chunk)
        os.dup2(stream.saved, stream.descriptor)
        os.close(stream.saved)
        os.close(stream.log)
        with contextlib.suppress(OSError):
            stream.log_path.unlink()


def _write_all(descriptor: int, data: bytes) -> None:
    """Write ``data`` where the program's descriptor pointed; a reader that went away (a
    closed pipe) loses it, as it would have without the hook."""
    with contextlib.suppress(OSError):
        while data:
            data = data[os.write(descriptor, data) :]


def _flush_python() -> None:
    """Text the program's Python buffered goes out before the descriptors change."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def _after_fork_in_child() -> None:
    """A child forked while a compile was in flight gets its descriptors back (what the
    log held then belongs to the parent, which copies it)."""
    _STATE.lock = threading.Lock()
    for stream in _STATE.streams:
        with contextlib.suppress(OSError):
            os.dup2(stream.saved, stream.descriptor)
            os.close(stream.saved)
            os.close(stream.log)
    _STATE.depth = 0
    _STATE.streams = []


os.register_at_fork(after_in_child=_after_fork_in_child)
