"""What a case leaves in its folder, kept safely: its captured streams and the regular files
it wrote, scrubbed of secrets and written back by replacing; anything else it planted (links,
FIFOs, devices, sockets, folders) removed, never followed or waited on."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import uuid
from dataclasses import dataclass
from pathlib import Path

from suite.engine.scrub import REDACTED, scrub_secrets

# Files a case leaves (events, MLIR reproducers) are scrubbed up to this size; none is larger
# in practice, and a larger one is cut by nothing else.
_SCRUB_LIMIT = 16 << 20


def regular_at(folder: int, name: str) -> tuple[bytes, int] | None:
    """The bytes of the regular file ``name`` in the folder open as ``folder``, and its link
    count; None for anything else a case may plant there (a link, FIFO, device, socket or
    folder), which is never followed nor waited on."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        if info.st_size > _SCRUB_LIMIT:
            # Kept as a note, never cut in place (the file may be hard-linked from elsewhere):
            # counted as shared so that the note replaces it.
            return f"[{info.st_size} bytes removed: too large to scrub]\n".encode(), 2
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(_SCRUB_LIMIT + 1), info.st_nlink
    finally:
        os.close(fd)


def _replace_at(folder: int, name: str, data: bytes) -> str:
    """Make ``name`` in ``folder`` a new file holding ``data``: written under a fresh name
    (``O_EXCL``) and renamed over whatever the case left there, so nothing is written
    through a link and no file a case hard-linked from elsewhere is changed. Why it could
    not ("" when it could): a full disk, say."""
    partial = f".{name}.{uuid.uuid4().hex}.partial"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    try:
        fd = os.open(partial, flags, 0o644, dir_fd=folder)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(partial, name, src_dir_fd=folder, dst_dir_fd=folder)
        return ""
    except OSError as exc:  # the name cannot be replaced: not kept
        with contextlib.suppress(OSError):
            os.unlink(partial, dir_fd=folder)
        return errno.errorcode.get(exc.errno or 0, exc.strerror or "error")


def _scrubbed_bytes(data: bytes) -> bytes:
    """``data`` without secrets: what a case keeps may be uploaded as a CI artifact. Read as
    Latin-1, one character per byte, so text after a NUL byte is scrubbed too and every byte
    that is not part of a secret stays as it was (a cubin stays loadable)."""
    text = data.decode("latin-1")
    clean = scrub_secrets(text)
    return data if clean == text else clean.encode("latin-1", "replace")


def _safe_file_name(name: str) -> str:
    """``name`` with any secret in it replaced (a case may name a file after a token)."""
    clean = scrub_secrets(name)
    return name if clean == name else clean.replace(REDACTED, "redacted").replace("/", "_")


@dataclass(frozen=True)
class Kept:
    """What :func:`keep_outputs` kept of a case's folder, and what it could not."""

    artifacts: dict[str, str]  # kept file name -> path
    planted: list[str]  # what else the case left, removed: "NAME (KIND)"
    lost: list[str]  # files that could not be written: "NAME (ERRNO)", e.g. a full disk


def keep_outputs(case_dir: Path, stdout: str, stderr: str) -> Kept:
    """Keep the captured streams and the regular files the case left, scrubbed; and the
    names of what else it planted (links, FIFOs, devices, sockets, folders), removed so that
    nothing reading the run later follows or waits on them. Everything the case left is
    data: read without following a link, written back by replacing. A file that cannot be
    written (a full disk) is named in ``lost``, and what the case left under its name removed
    (it was not scrubbed)."""
    kept = Kept({}, [], [])
    try:
        folder = os.open(case_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        kept.lost.append(f"{case_dir.name}/ ({errno.errorcode.get(exc.errno or 0, 'error')})")
        return kept
    try:
        for name in sorted(os.listdir(folder)):
            if not stat.S_ISREG(os.lstat(name, dir_fd=folder).st_mode):
                kept.planted.append(f"{_safe_file_name(name)} ({_remove_at(folder, name)})")
        for name, text in (("stdout.txt", stdout), ("stderr.txt", stderr)):
            why = _replace_at(folder, name, text.encode()) if text else ""
            if why:
                kept.lost.append(f"{name} ({why})")
        for name in sorted(os.listdir(folder)):
            found = regular_at(folder, name)
            if found is None:
                continue
            data, links = found
            clean = _scrubbed_bytes(data)
            safe = _safe_file_name(name)
            rewrite = clean is not data or links > 1 or safe != name
            why = _replace_at(folder, safe, clean) if rewrite else ""
            if why:
                kept.lost.append(f"{safe} ({why})")
            if why or safe != name:
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=folder)
            if not why:
                kept.artifacts[safe] = str(case_dir / safe)
    finally:
        os.close(folder)
    return kept


def _remove_at(folder: int, name: str) -> str:
    """Remove what a case planted as ``name`` (a link itself, never its target); its kind."""
    try:
        mode = os.lstat(name, dir_fd=folder).st_mode
    except OSError:
        return "gone"
    kind = next((k for test, k in _KINDS if test(mode)), "file")
    with contextlib.suppress(OSError):
        if stat.S_ISDIR(mode):
            shutil.rmtree(name, dir_fd=folder)
        else:
            os.unlink(name, dir_fd=folder)
    return kind


_KINDS = (
    (stat.S_ISLNK, "link"),
    (stat.S_ISFIFO, "fifo"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "device"),
    (stat.S_ISBLK, "device"),
    (stat.S_ISDIR, "folder"),
)
