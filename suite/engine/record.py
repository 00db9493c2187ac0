"""Where a run's results live, written so that a killed run keeps what it finished.

A run is a folder under ``<output>/runs/``:

- ``run.json``: the selection that defines the run, so ``--resume`` can finish it;
- ``results.jsonl``: one line per finished case, appended, flushed and synced
  as each case ends;
- ``cases/<case>/``: the captured output and MLIR reproducers of failing cases;
- ``environment.json``, ``summary.json`` and ``junit.xml`` at the end, also when the run
  was interrupted or broke (``summary.json`` then says ``"partial": true``);
- ``run.lock``: who holds the run now (an exclusive ``flock``; one process at a time).

A case runs inside the run folder and may write to ``results.jsonl``. So each line carries
``mac``, an HMAC-SHA256 of the record under a key the process that writes the run makes at
random and keeps out of the run folder and out of every child's environment (in the cache
folder, ``run-keys/``, mode 0600). ``--resume`` and every reader keep only lines whose
``mac`` holds: a line a case forged, or one of a run made elsewhere or before keys, is not
believed (a run without its key on this machine is read as it is, but never resumed).

Every record is scrubbed of secrets as it is written (``suite.engine.scrub``): these
files are uploaded as CI artifacts.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import hmac
import json
import os
import re
import secrets
import socket
import stat
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from suite.engine.outcome import CaseResult, Outcome, Verdict
from suite.engine.scrub import scrub_secrets, scrub_tree
from suite.errors import UsageError
from suite.files import cache_root, lies_under, own_folder, read_regular, write_replacing

RESULTS = "results.jsonl"
LOCK = "run.lock"
MAC = "mac"
# Characters XML 1.0 cannot hold at all; a case's message may carry any of them.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def unique_folder(parent: Path, stamp: str) -> Path:
    """A new folder ``parent/stamp`` (``stamp-2``, ... when taken), made atomically: two
    processes asking at once never get the same one."""
    parent.mkdir(parents=True, exist_ok=True)
    suffix = 1
    while True:
        folder = parent / (stamp if suffix == 1 else f"{stamp}-{suffix}")
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            suffix += 1


def safe_name(case_id: str) -> str:
    """A file name for a case id (ids hold brackets and dots)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", case_id).strip("_")


def case_folder_name(case_id: str) -> str:
    """The folder of a case: :func:`safe_name`, and where that changed the id, a digest of
    the id, so two ids that write alike (``a b``, ``a_b``) never share a folder."""
    name = safe_name(case_id)
    if name == case_id:
        return name
    return f"{name}-{hashlib.sha256(case_id.encode()).hexdigest()[:8]}"


class RunStore:
    """One run folder. Appends are thread-safe; reads tolerate a torn last line."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._held: int | None = None
        # Held by the process that writes the run: every line of results.jsonl and the
        # selection, so that a case that deletes or replaces them (its folder is inside the
        # run) takes nothing away: they are written again from here.
        self._lines: list[str] | None = None
        self._selection: dict[str, Any] | None = None
        self._results_file: tuple[int, int] | None = None  # (device, inode) written here
        self._key: bytes | None = None

    @classmethod
    def create(cls, root: Path, selection: dict[str, Any]) -> RunStore:
        folder = unique_folder(own_folder(root.resolve(), "runs"), time.strftime("%Y%m%d-%H%M%S"))
        store = cls(folder)
        store.hold()
        store._key = _new_key(folder)
        store._lines = []
        store._selection = selection
        write_replacing(folder / "run.json", json.dumps(selection, indent=2, sort_keys=True))
        return store

    def hold(self) -> None:
        """Take the run's exclusive lock for this process's lifetime; exit 2 if another has it."""
        fd = _open_lock(self.folder / LOCK)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 4096).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise UsageError(f"run {self.folder} is in use by {holder}: wait for it") from None
        holder = f"pid {os.getpid()} on {socket.gethostname()} ({' '.join(sys.argv[:3])})"
        os.ftruncate(fd, 0)
        os.write(fd, holder.encode())
        self._held = fd

    def release(self) -> None:
        if self._held is not None:
            with contextlib.suppress(OSError):
                os.close(self._held)
            self._held = None

    @classmethod
    def open(cls, root: Path, run: str | None) -> RunStore:
        """An existing run: by folder, by name under ``<root>/runs``, or the newest."""
        root = root.resolve()
        runs = root / "runs"
        if os.path.lexists(runs) and not (runs.is_dir() and not runs.is_symlink()):
            raise UsageError(f"{runs} is not a folder")
        if run:
            folder = Path(run).resolve() if Path(run).is_dir() else runs / run
        else:
            found = sorted(p for p in runs.glob("*") if _is_run(p))
            if not found:
                raise UsageError(f"nothing to resume: no run under {runs}")
            folder = found[-1]
        if not _is_run(folder):
            raise UsageError(f"not a run folder: {folder}")
        store = cls(folder)
        store.hold()
        store._selection = store._read_selection()
        store._key = _key_of(folder)
        if store._key is None:
            store.release()
            raise UsageError(
                f"cannot resume {folder}: its key is not on this machine (the run was made "
                "elsewhere or by an older repro), so its results cannot be told from a "
                "case's: start a new run"
            )
        store._lines = store._read_lines()
        if os.path.lexists(folder / RESULTS):
            # A run killed mid-append leaves half a line: the file anew, whole lines only.
            write_replacing(folder / RESULTS, "".join(store._lines))
            info = os.lstat(folder / RESULTS)
            store._results_file = (info.st_dev, info.st_ino)
        return store

    def _read_lines(self) -> list[str]:
        """The whole lines of ``results.jsonl`` (a torn last one, from a killed run, left out)."""
        path = self.folder / RESULTS
        if not os.path.lexists(path):
            return []
        data = read_regular(path, "results file", follow=False)
        lines = [line + "\n" for line in data.decode(errors="replace").split("\n")[:-1]]
        key = self._key or _key_of(self.folder)
        if key is None:  # a run made elsewhere or before keys: read as it is
            return lines
        return [line for line in lines if _sealed_by(key, line)]

    def _read_selection(self) -> dict[str, Any]:
        try:
            text = read_regular(self.folder / "run.json", "run.json", follow=False).decode()
            selection = json.loads(text)
        except (UnicodeDecodeError, ValueError) as exc:
            raise UsageError(f"unreadable run.json in {self.folder}: {exc}") from None
        if not isinstance(selection, dict):
            raise UsageError(f"malformed run.json in {self.folder}: not a mapping")
        return selection

    @property
    def selection(self) -> dict[str, Any]:
        return self._read_selection() if self._selection is None else self._selection

    def case_dir(self, case_id: str) -> Path:
        return self.folder / "cases" / case_folder_name(case_id)

    def results(self) -> list[CaseResult]:
        """Every recorded case, the last record winning if one was written twice; a line that
        is not a record (torn, or of the wrong shape) is left out."""
        if self._lines is None:
            try:
                lines = self._read_lines()
            except UsageError:
                lines = []
        else:
            with self._lock:
                lines = list(self._lines)
        found: dict[str, CaseResult] = {}
        cases = self.folder / "cases"
        for line in lines:
            try:
                result = CaseResult.from_json(json.loads(line))
            except (json.JSONDecodeError, TypeError, KeyError, ValueError, AttributeError):
                continue
            # A path read from the file is used only if it lies in this run's case folders.
            kept = {n: p for n, p in result.artifacts.items() if lies_under(Path(p), cases)}
            result = replace(result, artifacts=kept)
            found[result.case_id] = result
        return list(found.values())

    def append(self, result: CaseResult) -> None:
        record = json.loads(json.dumps(scrub_tree(result.to_json()), default=str))
        with self._lock:
            if self._key is None:
                self._key = _key_of(self.folder) or _new_key(self.folder)
            line = json.dumps({**record, MAC: _mac(self._key, record)}) + "\n"
            if self._lines is None:
                self._lines = self._read_lines()
            self._lines.append(line)
            path = self.folder / RESULTS
            if not self._append_in_place(path, line):
                # Not the file this process wrote (none yet, or a case removed, replaced or
                # linked it): every line again, in a new file.
                write_replacing(path, "".join(self._lines))
                info = os.lstat(path)
                self._results_file = (info.st_dev, info.st_ino)

    def _append_in_place(self, path: Path, line: str) -> bool:
        """Append ``line`` to ``path`` if it is still the regular, unshared file this process
        wrote; False if it must be written anew."""
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return False
        try:
            info = os.fstat(fd)
            mine = self._results_file == (info.st_dev, info.st_ino)
            if not (mine and stat.S_ISREG(info.st_mode) and info.st_nlink == 1):
                return False
            try:
                os.write(fd, line.encode())
                os.fsync(fd)
            except OSError as exc:  # a full disk: the file it could not grow, named
                raise OSError(exc.errno, exc.strerror, str(path)) from None
            return True
        finally:
            os.close(fd)

    def restore(self) -> None:
        """Write ``run.json`` and ``results.jsonl`` again from what this process holds, if a
        case removed or replaced them (``--resume`` needs both)."""
        if self._selection is not None and not _regular(self.folder / "run.json"):
            text = json.dumps(self._selection, indent=2, sort_keys=True)
            write_replacing(self.folder / "run.json", text)
        with self._lock:
            if self._lines is not None and not _regular(self.folder / RESULTS):
                write_replacing(self.folder / RESULTS, "".join(self._lines))

    def write_json(self, name: str, content: Any) -> Path:
        path = self.folder / name
        write_replacing(path, json.dumps(scrub_tree(content), indent=2, default=str))
        return path

    def write_summary(self, results: Iterable[CaseResult], extra: dict[str, Any]) -> Path:
        results = list(results)
        summary = {
            "cases": len(results),
            "outcomes": dict(Counter(r.shown.label for r in results)),
            "verdicts": dict(Counter(r.verdict for r in results)),
            "signatures": dict(Counter(str(r.signature) for r in results if r.signature)),
            **extra,
        }
        return self.write_json("summary.json", summary)

    def write_junit(self, results: Iterable[CaseResult]) -> Path:
        """JUnit XML: one testcase per case; known bugs are skipped with their reason."""
        results = list(results)
        suite = ET.Element("testsuite", name="triton-repro-suite", tests=str(len(results)))
        counts: Counter[str] = Counter()
        for result in results:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=_xml_text(f"repro.{result.repro}"),
                name=_xml_text(result.case_id),
                time=f"{result.duration_s:.3f}",
            )
            # The outcome as every rendering shows it (``compiled`` for a launching case only
            # compiled), a property as pytest's record_property writes one.
            properties = ET.SubElement(case, "properties")
            ET.SubElement(properties, "property", name="outcome", value=result.shown.label)
            if result.verdict in (Verdict.REGRESSION, Verdict.FIXED):
                counts["failures"] += 1
                failure = ET.SubElement(
                    case, "failure", type=result.shown.label, message=_junit_message(result)
                )
                failure.text = _xml_text(json.dumps(result.to_json(), indent=2, default=str))
            elif result.verdict is Verdict.HARNESS_ERROR:
                # JUnit's "error": the test's own machinery broke, not the thing tested.
                counts["errors"] += 1
                ET.SubElement(
                    case, "error", type=result.shown.label, message=_junit_message(result)
                )
            elif result.outcome is Outcome.SKIPPED or result.verdict in (
                Verdict.KNOWN,
                Verdict.REFUSED,
            ):
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=_junit_message(result))
        suite.set("failures", str(counts["failures"]))
        suite.set("errors", str(counts["errors"]))
        suite.set("skipped", str(counts["skipped"]))
        path = self.folder / "junit.xml"
        write_replacing(path, ET.tostring(suite, encoding="utf-8", xml_declaration=True))
        return path


def _key_file(folder: Path) -> Path:
    """Where the key of the run at ``folder`` lives: the cache folder, named by a hash of
    the run's real path (nothing in the run folder chooses it)."""
    name = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()
    return cache_root() / "run-keys" / name


def _key_of(folder: Path) -> bytes | None:
    try:
        key = read_regular(_key_file(folder), "run key", limit=4096, follow=False)
    except UsageError:
        return None
    return key if len(key) == 32 else None


def _new_key(folder: Path) -> bytes:
    key = secrets.token_bytes(32)
    path = _key_file(folder)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)
        write_replacing(path, key, mode=0o600)
    except OSError as exc:
        raise UsageError(f"cannot keep the run's key in {path.parent}: {exc.strerror}") from None
    return key


def _mac(key: bytes, record: dict[str, Any]) -> str:
    canonical = json.dumps(record, sort_keys=True, separators=(",", ":"))
    return hmac.new(key, canonical.encode(), hashlib.sha256).hexdigest()


def _sealed_by(key: bytes, line: str) -> bool:
    """Whether ``line`` is a record with the ``mac`` that ``key`` gives it."""
    try:
        record = json.loads(line)
    except ValueError:
        return False
    if not isinstance(record, dict):
        return False
    mac = record.pop(MAC, None)
    return isinstance(mac, str) and hmac.compare_digest(mac, _mac(key, record))


def _open_lock(path: Path) -> int:
    """The run's lock file, opened for this process; a link or odd file a case planted in
    its place is replaced (never followed)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
        os.close(fd)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise UsageError(f"cannot lock {path}: {exc.strerror}") from None
    try:
        if path.is_dir() and not path.is_symlink():
            raise UsageError(f"cannot lock {path}: a folder is in its place")
        path.unlink()
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise UsageError(f"cannot lock {path}: {exc.strerror}") from None


def _is_run(folder: Path) -> bool:
    return not folder.name.startswith(".") and any(
        os.path.lexists(folder / name) for name in ("run.json", RESULTS)
    )


def _regular(path: Path) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_nlink == 1


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", scrub_secrets(text))


def _junit_message(result: CaseResult) -> str:
    triage = f"{result.triage}: {result.triage_explanation}" if result.triage else ""
    parts = [result.verdict, result.shown.label, triage or result.message, result.expectation]
    return _xml_text(" | ".join(p for p in parts if p))
