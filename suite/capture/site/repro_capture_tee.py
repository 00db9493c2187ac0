"""The tee of one process's compiler output: run by :mod:`repro_capture_output` as its own
process (``python -S -E repro_capture_tee.py CONTROL STREAM...``, no site, no hook).

Each ``STREAM`` is ``DESCRIPTOR:READ:LOG``: the descriptor (1 or 2) of the compiling
process that is pointed at a pipe around each compile, the pipe's read end, and the path
of a log. The compiling process sends ``B`` when its first compile in flight begins (one
message of a ``SOCK_SEQPACKET`` pair), with (as ``SCM_RIGHTS``) a duplicate of where each
teed descriptor pointed then. Every chunk read from a pipe is written at once to that
original (the program's output gets the compiler's text when it is written) and to the log
(the compile's record gets it). The tee lives in its own process so that a compile that
aborts its process (SIGABRT) still delivers every byte it wrote: the pipe keeps them, and
the tee copies them out after the death, then sees the pipe close and ends.

``S`` asks the tee to copy out what the pipes hold now and answer ``A``; ``E`` (the last
compile in flight ended, the descriptors already put back) does the same, then closes the
originals: the tee holds nothing of the program's between compiles, and nothing the
compiler wrote comes after what the program writes next. When every pipe is closed (the
process and what it started inside compiles have ended) the tee ends; it deletes its logs
unless a compile was in flight (begun, not ended): that compile's record names the log.
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
class Stream:
    descriptor: int  # of the compiling process: 1 or 2
    read: int
    log_path: str
    log: int
    original: int = -1  # during a compile: where the descriptor pointed


def main(argv: list[str]) -> None:
    # The terminal's Ctrl-C goes to the program's group: the program decides, the tee
    # copies until the pipes close.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    control = socket.socket(fileno=int(argv[0]))
    streams = []
    for spec in argv[1:]:
        teed, read, log_path = spec.split(":", 2)
        log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        streams.append(Stream(int(teed), int(read), log_path, log))
    by_read = {s.read: s for s in streams}
    in_compile = False
    control_open = True
    while by_read:
        # The control socket first: a ``B`` is sent before the descriptors point at the
        # pipes, so the originals are known before the first byte of the compile is copied.
        watched = ([control.fileno()] if control_open else []) + list(by_read)
        ready, _, _ = select.select(watched, [], [])
        for descriptor in sorted(ready, key=watched.index):
            if descriptor in by_read:
                _copy_once(by_read[descriptor], by_read)
                continue
            try:
                message, fds, _, _ = socket.recv_fds(control, 64, len(streams))
            except OSError:
                message, fds = b"", []
            if not message:
                control_open = False  # the process is gone: its pipes close next
            command, teed = message[:1], message[1:].decode()
            if command == b"B":  # with the originals of the descriptors it names
                in_compile = True
                given = iter(fds)
                for stream in streams:
                    if str(stream.descriptor) in teed:
                        stream.original = next(given, -1)
            elif command in (b"S", b"E"):
                for stream in list(by_read.values()):
                    _drain(stream, by_read)
                if command == b"E":
                    in_compile = False
                    _close_originals(streams)
                with contextlib.suppress(OSError):
                    control.sendall(b"A")
    if not in_compile:
        for stream in streams:
            with contextlib.suppress(OSError):
                os.unlink(stream.log_path)


def _close_originals(streams: list[Stream]) -> None:
    for stream in streams:
        if stream.original >= 0:
            with contextlib.suppress(OSError):
                os.close(stream.original)
            stream.original = -1


def _copy_once(stream: Stream, by_read: dict[int, Stream]) -> bool:
    """Copy one chunk; False when the pipe holds nothing now or has closed (then the
    stream is dropped)."""
    try:
        data = os.read(stream.read, 1 << 16)
    except BlockingIOError:
        return False
    except OSError:
        data = b""
    if not data:
        del by_read[stream.read]
        os.close(stream.read)
        return False
    if stream.original >= 0:
        _write_all(stream.original, data)
    _write_all(stream.log, data)
    return True


def _drain(stream: Stream, by_read: dict[int, Stream]) -> None:
    """Copy what the pipe holds now, without waiting for more."""
    os.set_blocking(stream.read, False)
    try:
        while stream.read in by_read and _copy_once(stream, by_read):
            pass
    finally:
        if stream.read in by_read:
            os.set_blocking(stream.read, True)


def _write_all(descriptor: int, data: bytes) -> None:
    """A reader that went away (a closed pipe) loses the text, as it would have without
    the tee."""
    with contextlib.suppress(OSError):
        while data:
            data = data[os.write(descriptor, data) :]


if __name__ == "__main__":
    main(sys.argv[1:])
