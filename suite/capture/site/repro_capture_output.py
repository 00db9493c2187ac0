"""The compiler's own output, whatever the program does with its descriptors: teed, never
diverted.

MLIR diagnostics, ``LLVM ERROR``, assertions and ptxas are written by C++ (or a child
process) straight to file descriptors 1 and 2 of the process that compiles. A program that
compiles in a child and keeps the child's output, or that points fd 2 elsewhere, hides
them from the hook: the exception says ``PassManager::run failed`` and no more. So around
each compile both descriptors point at new pipes read by a tee (:mod:`repro_capture_tee`,
its own process, started at the process's first compile), which writes every chunk at once
to where the descriptor pointed before *and* to a log under the capture folder
(``compile-output/<pid>.<unique>.{stdout,stderr}``). When the last compile in flight ends
the descriptors are put back and the tee is asked to copy out what the pipes still hold
before the program writes on: the program's output gets every byte, in order, when it is
written.

A process that dies inside a compile (SIGABRT) leaves the bytes in the pipe: the tee copies
them to the program's output and the log after the death, then ends. The log stays (its
path and the offset the compile starts at are in the compile's record, written ahead) and
``repro capture`` reads it from there; a tee that ends with no compile in flight deletes its
logs. Two compiles in flight at once (threads) share the redirection; each keeps what was
written between its start and its end, the other's text included. A fork gives the child
its descriptors back and no tee (its first compile starts its own). When the tee cannot be
started, or stops answering, the descriptors are left alone (the records then have no
compiler output). Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from repro_capture_common import HOOK_FOLDER, folder
from repro_capture_records import CompileOutput, read_bounded

OUTPUT_FOLDER = "compile-output"
STREAMS = ((1, "stdout"), (2, "stderr"))
# Named in suite/engine/template.py (HOOK_TEE): the keeper lets it finish.
TEE_SCRIPT = os.path.join(HOOK_FOLDER, "repro_capture_tee.py")
# How long the end of a compile waits for the tee to copy out the pipes (it answers in
# microseconds; a tee gone wrong must not hang the program).
_SYNC_S = 10.0


@dataclass
class _Stream:
    descriptor: int  # 1 or 2
    log_path: Path
    saved: int = -1  # during a compile: a duplicate of where the descriptor pointed


class _Tee:
    """The process's tee: its control socket, its streams, how many compiles are in flight."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.control: socket.socket | None = None
        self.streams: list[_Stream] = []
        self.broken = False  # the tee could not be started or stopped answering: no more


_STATE = _Tee()


def begin() -> CompileOutput | None:
    """Point fds 1 and 2 at the tee (if no compile is in flight yet); where this compile
    starts in each log. None when there is no capture folder or no tee."""
    base = folder()
    if base is None:
        return None
    with _STATE.lock:
        if _STATE.control is None and not _STATE.broken:
            _start(base)
        if _STATE.control is None or (_STATE.broken and _STATE.depth == 0):
            return None
        if _STATE.depth == 0:
            _redirect(_STATE.control)
        _STATE.depth += 1
        output = CompileOutput()
        for stream in _STATE.streams:
            start = os.stat(stream.log_path).st_size
            if stream.descriptor == 1:
                output.stdout_log, output.stdout_from = str(stream.log_path), start
            else:
                output.stderr_log, output.stderr_from = str(stream.log_path), start
        return output


def end(output: CompileOutput) -> None:
    """Fill ``output`` with what this compile's descriptors received; the last compile in
    flight puts the descriptors back first. Either way the tee has copied out the pipes."""
    _flush_python()
    with _STATE.lock:
        _STATE.depth -= 1
        if _STATE.depth == 0:
            for stream in _STATE.streams:
                if stream.saved >= 0:
                    os.dup2(stream.saved, stream.descriptor)
                    os.close(stream.saved)
                    stream.saved = -1
        _sync(b"E" if _STATE.depth == 0 else b"S")
        for stream in _STATE.streams:
            start = output.stdout_from if stream.descriptor == 1 else output.stderr_from
            text, dropped = read_bounded(stream.log_path, start, None)
            if stream.descriptor == 1:
                output.stdout = text
            else:
                output.stderr = text
            output.dropped += dropped


def _redirect(control: socket.socket) -> None:
    """Hand the tee, for each open descriptor, where it points now and a new pipe's read
    end; then point the descriptor at the pipe (a descriptor the program closed is left
    closed). This process keeps no write end: once the descriptors are put back, only what
    was started inside the compile can still write to the pipe."""
    _flush_python()
    teed: list[tuple[_Stream, int]] = []
    handed: list[int] = []
    try:
        for stream in _STATE.streams:
            try:
                stream.saved = os.dup(stream.descriptor)
            except OSError:
                continue
            read, write = os.pipe()
            teed.append((stream, write))
            handed += [stream.saved, read]
        message = b"B" + "".join(str(s.descriptor) for s, _ in teed).encode()
        socket.send_fds(control, [message], handed)
    except OSError:
        _STATE.broken = True
        for stream, write in teed:
            os.close(write)
            os.close(stream.saved)
            stream.saved = -1
        raise
    finally:
        for read in handed[1::2]:
            os.close(read)
    for stream, write in teed:
        os.dup2(write, stream.descriptor)
        os.close(write)


def _start(base: Path) -> None:
    """Start the tee, with a log for each of fds 1 and 2."""
    if not sys.executable:
        _STATE.broken = True
        return
    logs = base / OUTPUT_FOLDER
    logs.mkdir(parents=True, exist_ok=True)
    streams = []
    for descriptor, name in STREAMS:
        made, path = tempfile.mkstemp(prefix=f"{os.getpid()}.", suffix=f".{name}", dir=logs)
        os.close(made)
        streams.append(_Stream(descriptor, Path(path)))
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        starter = subprocess.Popen(
            [sys.executable, "-S", "-E", TEE_SCRIPT, str(theirs.fileno())]
            + [str(s.log_path) for s in streams],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=[theirs.fileno()],
        )
        starter.wait()  # the tee forks and this parent of it exits at once
    except OSError:
        _STATE.broken = True
        ours.close()
        return
    finally:
        theirs.close()
    _STATE.control = ours
    _STATE.streams = streams


def _sync(message: bytes) -> None:
    """Ask the tee to copy out what the pipes hold; wait for its answer (bounded)."""
    control = _STATE.control
    if control is None or _STATE.broken:
        return
    try:
        control.sendall(message)
        ready, _, _ = select.select([control], [], [], _SYNC_S)
        if not ready or not control.recv(16):
            raise OSError("the tee did not answer")
    except OSError:
        # Never again: a tee that does not answer is not waited for at every compile.
        _STATE.broken = True


def _flush_python() -> None:
    """Text the program's Python buffered goes out before the descriptors change."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def _after_fork_in_child() -> None:
    """A forked child gets its descriptors back and no tee: the parent's is the parent's."""
    _STATE.lock = threading.Lock()
    for stream in _STATE.streams:
        if stream.saved >= 0:
            with contextlib.suppress(OSError):
                os.dup2(stream.saved, stream.descriptor)
                os.close(stream.saved)
    if _STATE.control is not None:
        with contextlib.suppress(OSError):
            _STATE.control.close()
    _STATE.control = None
    _STATE.depth = 0
    _STATE.streams = []
    _STATE.broken = False


os.register_at_fork(after_in_child=_after_fork_in_child)
