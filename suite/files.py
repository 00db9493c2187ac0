"""Files the suite reads and keeps: structured user files (configs, baselines), the cache
folder, and the one way every command reads, writes and locks a file it shares with others
or that a case or a user may have planted: regular files only, never through a link, by
replacing, under a folder lock."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from suite.errors import UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def load_structured(path: Path, what: str) -> Any:
    """Parse a TOML, JSON or YAML file (by suffix); any problem is a one-line UsageError."""
    text = read_regular_text(path, what)
    try:
        if path.suffix == ".toml":
            return tomllib.loads(text)
        if path.suffix == ".json":
            return json.loads(text)
        return _load_yaml(text, path, what)
    except UsageError:
        raise
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"malformed {what} {path}: {first}") from None


#: The most nodes a YAML document may stand for once its aliases are expanded: a config
#: file is a few hundred; an alias bomb (each level ten aliases of the last) is billions,
#: and grows to gigabytes wherever it is printed or copied.
YAML_NODES = 100_000


def _load_yaml(text: str, path: Path, what: str) -> Any:
    """``yaml.safe_load``, refusing a document whose aliases expand past ``YAML_NODES``
    (counted on the node graph before anything is built, each node once)."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded(node, {}) > YAML_NODES:
            raise UsageError(f"malformed {what} {path}: its aliases expand past {YAML_NODES} nodes")
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _expanded(node: Any, sizes: dict[int, int]) -> int:
    """How many nodes ``node`` stands for, every alias expanded (an alias is the very node
    it names: counted once per use, computed once)."""
    if id(node) in sizes:
        return sizes[id(node)]
    sizes[id(node)] = YAML_NODES + 1  # a node inside itself (a recursive alias) is too many
    children: list[Any] = []
    if isinstance(node.value, list):
        for item in node.value:
            children += list(item) if isinstance(item, tuple) else [item]
    total = 1 + sum(min(_expanded(child, sizes), YAML_NODES + 1) for child in children)
    sizes[id(node)] = total
    return total


def cache_root() -> Path:
    """The user's cache folder for the suite (venvs, the import shim)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "triton-repro-suite"


# Folders of an output root that commands write: a report id, a finding id or a reduction
# may never name one (`repro report --id reduce` would replace the reductions).
RESERVED_FOLDERS = frozenset(
    {
        "runs",
        "findings",
        "reduce",
        "captures",
        "matrix",
        "nightly",
        "dashboard",
        "examples",
        "baselines",
        "cases",
        "sources",
        "explore",
        "gate",
    }
)


def check_plain_name(name: str, what: str) -> str:
    """``name`` if it can name one folder of an output root: one plain path component, not
    hidden, not ``..``, not reserved (:data:`RESERVED_FOLDERS`)."""
    if (
        not name
        or name.startswith(".")
        or name != Path(name).name
        or any(ch in name for ch in "/\\\x00")
        or any(ord(ch) < 32 for ch in name)
    ):
        raise UsageError(f"{what} {name!r}: must be one plain folder name")
    if name.lower() in RESERVED_FOLDERS:
        raise UsageError(f"{what} {name!r}: reserved for the output root's own folders")
    return name


def own_folder(root: Path, *names: str, make: bool = True) -> Path:
    """``root/names...``, each level a real folder (made when missing, unless ``make`` is
    False: then only checked), never a link nor a file: what a command writes under the
    output root stays under it."""
    folder = root
    try:
        if make:
            root.mkdir(parents=True, exist_ok=True)
        for name in names:
            if name != Path(name).name or name in ("", ".", ".."):
                raise UsageError(f"{folder / name}: not a plain folder name")
            folder = folder / name
            if not os.path.lexists(folder):
                if not make:
                    continue
                with contextlib.suppress(FileExistsError):
                    os.mkdir(folder)
            info = os.lstat(folder)
            if not stat.S_ISDIR(info.st_mode):
                kind = "a link" if stat.S_ISLNK(info.st_mode) else "not a folder"
                raise UsageError(f"{folder} is {kind}: move it away")
    except OSError as exc:
        raise UsageError(f"cannot make {folder}: {exc.strerror}") from None
    return folder


def lies_under(path: Path, folder: Path) -> bool:
    """Whether ``path``, every link in it followed, lies inside ``folder`` (also resolved):
    the check a path read from a finding, run or state file passes before any use."""
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError, ValueError):
        return False


def read_regular(path: Path, what: str, limit: int = 256 << 20, follow: bool = True) -> bytes:
    """The bytes of ``path`` if it is a regular file: a FIFO, device, socket or folder is
    refused at once (never waited on), and so is a link when ``follow`` is False."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise UsageError(f"no such {what}: {path}") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(f"{what} {path} is a link: not followed") from None
        raise UsageError(f"unreadable {what} {path}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(f"{what} {path} is not a regular file")
        if info.st_size > limit:
            raise UsageError(f"{what} {path} is too large ({info.st_size} bytes)")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise UsageError(f"unreadable {what} {path}: {exc.strerror}") from None
    finally:
        os.close(fd)


def read_regular_text(path: Path, what: str, follow: bool = True) -> str:
    """:func:`read_regular` decoded as UTF-8 (not UTF-8: a one-line UsageError)."""
    try:
        return read_regular(path, what, follow=follow).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"unreadable {what} {path}: not UTF-8 ({exc.reason})") from None


def write_replacing(path: Path, data: str | bytes, mode: int = 0o644) -> None:
    """Give ``path`` the content ``data`` by writing a fresh file of a unique name beside it
    (``O_EXCL``, never through a link) and renaming it over ``path``: a reader sees the old
    file or the new one, two writers never share a temporary file, and a link, FIFO or hard
    link planted at ``path`` is replaced, never written through."""
    try:
        fd, partial = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    except OSError as exc:  # the file a full disk or a read-only folder refused: named
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode() if isinstance(data, str) else data)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
        os.replace(partial, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        if isinstance(exc, OSError) and exc.filename is None:
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise


def copy_regular_tree(source: Path, target: Path, overwrite: bool = True) -> list[Path]:
    """Copy every regular file under ``source`` to the same place under ``target``, level by
    level, never through a link: a link (to a key, to ``/dev/zero``), a FIFO, a socket or a
    device is left behind, and so returned; a file already at ``target`` is replaced unless
    ``overwrite`` is False. Each folder made under ``target`` is checked as
    :func:`own_folder` checks it."""
    left: list[Path] = []
    own_folder(target.parent, target.name)
    try:
        entries = sorted(os.scandir(source), key=lambda e: e.name)
    except OSError as exc:
        raise UsageError(f"unreadable folder {source}: {exc.strerror}") from None
    for entry in entries:
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            left += copy_regular_tree(path, target / entry.name, overwrite)
        elif not entry.is_file(follow_symlinks=False):
            left.append(path)
        elif overwrite or not os.path.lexists(target / entry.name):
            write_replacing(target / entry.name, read_regular(path, "file", follow=False))
    return left


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader sees the old file or the new one, never half."""
    write_replacing(path, text)


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` (``flock`` on the folder itself: no lock file to
    leave behind) while a shared file in it is read, changed and replaced; a second writer
    waits. Not re-entrant: never nest two on one folder."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


_SCRATCH = re.compile(r"repro-[a-z-]+?-p(\d+)t(\d+)-[A-Za-z0-9_]+")


def _process_mark(pid: int) -> str | None:
    """``p<pid>t<start time in clock ticks since boot>``: one process for good, even once its
    pid is used again; None when no such process lives."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return f"p{pid}t{int(stat.read().rsplit(b')', 1)[1].split()[19])}"
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def scratch_folder(kind: str) -> Iterator[str]:
    """A fresh folder in ``TMPDIR`` for one command's scratch files, removed when done (its
    path, as ``tempfile.TemporaryDirectory`` gives it).

    Its name says which process made it (``repro-<kind>-p<pid>t<start time>-<random>``): a
    process killed with SIGKILL cannot remove its own, so each new scratch folder first
    removes those of this user whose process is gone. Nothing else is ever removed: a name
    of another form, a link, a folder of another user, a folder of a live process.
    """
    base = Path(tempfile.gettempdir())
    _remove_dead_scratch(base)
    me = _process_mark(os.getpid()) or f"p{os.getpid()}t0"
    folder = tempfile.mkdtemp(prefix=f"repro-{kind}-{me}-", dir=base)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user's counts: it cannot be signalled
    but is there)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_dead_scratch(base: Path) -> None:
    with contextlib.suppress(OSError), os.scandir(base) as entries:
        for entry in entries:
            found = _SCRATCH.fullmatch(entry.name)
            if found is None or not entry.is_dir(follow_symlinks=False):
                continue
            pid, mark = int(found.group(1)), f"p{found.group(1)}t{found.group(2)}"
            if entry.stat(follow_symlinks=False).st_uid == os.getuid() and (
                _process_mark(pid) != mark
            ):
                shutil.rmtree(entry.path, ignore_errors=True)
