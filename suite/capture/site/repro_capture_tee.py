"""The tee of one process's compiler output: run by :mod:`repro_capture_output` as its own
process (``python -S -E repro_capture_tee.py CONTROL STDOUT_LOG STDERR_LOG``, no site, no
hook), detached from the compiling process (it forks and its parent exits at once, so the
program never sees a child of its own it did not start).

``CONTROL`` is one end of a ``SOCK_SEQPACKET`` pair. When its first compile in flight
begins, the compiling process sends ``B`` and the names of the descriptors it tees (``B12``)
with, as ``SCM_RIGHTS``, for each one a duplicate of where it pointed then (its original)
and the read end of a new pipe, which the descriptor then points at. Every chunk read from
a pipe is written at once to its original (the program's output gets the compiler's text
when it is written) and to the descriptor's log (the compile's record gets it). The tee is
a process of its own so that a compile that aborts its process (SIGABRT) still delivers
every byte it wrote: the pipe keeps them, and the tee copies them out after the death.

``S`` asks the tee to copy out what the pipes hold now and answer ``A``; ``E`` (the last
compile in flight ended, the descriptors already put back) does the same and ends the
compile. A pipe is read until every writer has closed it (a process started inside the
compile may still write to it), then closed with its original: the tee holds a descriptor
of the program's exactly as long as something could write to it. When the compiling
process is gone and every pipe is closed the tee ends; it deletes the logs unless a compile
was in flight (begun, not ended): that compile's record names the log.
Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import sys
from dataclasses import dataclass


@dataclass
class Pipe:
    """One compile's pipe for one descriptor: read until every writer has closed it."""

    read: int
    original: int  # where the descriptor pointed when the compile began
    log: int


def main(argv: list[str]) -> None:
    if os.fork():  # detached: the compiling process gets no child of its own
        os._exit(0)
    # The terminal's Ctrl-C goes to the program's group: the program decides, the tee
    # copies until the pipes close.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    control = socket.socket(fileno=int(argv[0]))
    log_paths = {"1": argv[1], "2": argv[2]}
    logs = {
        d: os.open(p, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) for d, p in log_paths.items()
    }
    pipes: dict[int, Pipe] = {}
    in_compile = False
    control_open = True
    while control_open or pipes:
        # The control socket first: ``B`` hands over a pipe before anything is written to it.
        watched = ([control.fileno()] if control_open else []) + list(pipes)
        ready, _, _ = select.select(watched, [], [])
        for descriptor in sorted(ready, key=watched.index):
            if descriptor in pipes:
                _copy_once(pipes[descriptor], pipes)
                continue
            try:
                message, fds, _, _ = socket.recv_fds(control, 64, 8)
            except OSError:
                message, fds = b"", []
            command, teed = message[:1], message[1:].decode(errors="replace")
            if not message:
                control_open = False  # the process is gone: its pipes close next
            elif command == b"B":
                in_compile = True
                given = iter(fds)
                for name in teed:
                    original, read = next(given), next(given)
                    pipes[read] = Pipe(read, original, logs[name])
            elif command in (b"S", b"E"):
                for pipe in list(pipes.values()):
                    _drain(pipe, pipes)
                in_compile = command == b"S"
                with contextlib.suppress(OSError):
                    control.sendall(b"A")
    if not in_compile:
        for path in log_paths.values():
            with contextlib.suppress(OSError):
                os.unlink(path)


def _copy_once(pipe: Pipe, pipes: dict[int, Pipe]) -> bool:
    """Copy one chunk; False when the pipe holds nothing now or has closed (then it is
    dropped, with its original)."""
    try:
        data = os.read(pipe.read, 1 << 16)
    except BlockingIOError:
        return False
    except OSError:
        data = b""
    if not data:
        del pipes[pipe.read]
        os.close(pipe.read)
        os.close(pipe.original)
        return False
    _write_all(pipe.original, data)
    _write_all(pipe.log, data)
    return True


def _drain(pipe: Pipe, pipes: dict[int, Pipe]) -> None:
    """Copy what the pipe holds now, without waiting for more."""
    os.set_blocking(pipe.read, False)
    try:
        while pipe.read in pipes and _copy_once(pipe, pipes):
            pass
    finally:
        if pipe.read in pipes:
            os.set_blocking(pipe.read, True)


def _write_all(descriptor: int, data: bytes) -> None:
    """A reader that went away (a closed pipe) loses the text, as it would have without
    the tee."""
    with contextlib.suppress(OSError):
        while data:
            data = data[os.write(descriptor, data) :]


if __name__ == "__main__":
    main(sys.argv[1:])
