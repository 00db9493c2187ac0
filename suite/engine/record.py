"""Where a run's results live, written so that a killed run keeps what it finished.

A run is a folder under ``<output>/runs/``:

- ``run.json``: the selection that defines the run, so ``--resume`` can finish it;
- ``results.jsonl``: one line per finished case, appended, flushed and synced
  as each case ends;
- ``cases/<case>/``: the captured output and MLIR reproducers of failing cases;
- ``environment.json``, ``summary.json`` and ``junit.xml`` at the end, also when the run
  was interrupted or broke (``summary.json`` then says ``"partial": true``);
- ``run.lock``: who holds the run now (an exclusive ``flock``; one process at a time).

Every record is scrubbed of secrets as it is written (``suite.engine.scrub``): these
files are uploaded as CI artifacts.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from suite.engine.outcome import CaseResult, Outcome
from suite.engine.scrub import scrub_secrets, scrub_tree
from suite.errors import UsageError

RESULTS = "results.jsonl"
LOCK = "run.lock"
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


class RunStore:
    """One run folder. Appends are thread-safe; reads tolerate a torn last line."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._held: int | None = None

    @classmethod
    def create(cls, root: Path, selection: dict[str, Any]) -> RunStore:
        folder = unique_folder(root.resolve() / "runs", time.strftime("%Y%m%d-%H%M%S"))
        store = cls(folder)
        store.hold()
        tmp = folder / "run.json.tmp"
        tmp.write_text(json.dumps(selection, indent=2, sort_keys=True))
        tmp.replace(folder / "run.json")
        return store

    def hold(self) -> None:
        """Take the run's exclusive lock for this process's lifetime; exit 2 if another has it."""
        fd = os.open(self.folder / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
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
        if run:
            folder = Path(run).resolve() if Path(run).is_dir() else root / "runs" / run
        else:
            runs = sorted(p for p in (root / "runs").glob("*") if (p / "run.json").exists())
            if not runs:
                raise UsageError(f"nothing to resume: no run under {root / 'runs'}")
            folder = runs[-1]
        if not (folder / "run.json").is_file():
            raise UsageError(f"not a run folder: {folder}")
        store = cls(folder)
        store.hold()
        store._drop_torn_line()
        return store

    def _drop_torn_line(self) -> None:
        """A run killed mid-append leaves half a line; cut it so new lines start clean."""
        path = self.folder / RESULTS
        if not path.exists():
            return
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            path.write_bytes(data[: data.rfind(b"\n") + 1])

    @property
    def selection(self) -> dict[str, Any]:
        try:
            selection = json.loads((self.folder / "run.json").read_text())
        except (OSError, ValueError) as exc:
            raise UsageError(f"unreadable run.json in {self.folder}: {exc}") from None
        if not isinstance(selection, dict):
            raise UsageError(f"malformed run.json in {self.folder}: not a mapping")
        return selection

    def case_dir(self, case_id: str) -> Path:
        return self.folder / "cases" / safe_name(case_id)

    def results(self) -> list[CaseResult]:
        """Every recorded case, the last record winning if one was written twice."""
        path = self.folder / RESULTS
        if not path.exists():
            return []
        found: dict[str, CaseResult] = {}
        for line in path.read_text(errors="replace").splitlines():
            try:
                result = CaseResult.from_json(json.loads(line))
            except (json.JSONDecodeError, TypeError, KeyError, ValueError):
                continue
            found[result.case_id] = result
        return list(found.values())

    def append(self, result: CaseResult) -> None:
        line = json.dumps(scrub_tree(result.to_json()), default=str) + "\n"
        with self._lock, open(self.folder / RESULTS, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def write_json(self, name: str, content: Any) -> Path:
        path = self.folder / name
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(scrub_tree(content), indent=2, default=str))
        tmp.replace(path)
        return path

    def write_summary(self, results: Iterable[CaseResult], extra: dict[str, Any]) -> Path:
        results = list(results)
        summary = {
            "cases": len(results),
            "outcomes": dict(Counter(r.outcome.label for r in results)),
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
            if result.verdict in ("regression", "fixed"):
                counts["failures"] += 1
                failure = ET.SubElement(
                    case, "failure", type=result.outcome.label, message=_junit_message(result)
                )
                failure.text = _xml_text(json.dumps(result.to_json(), indent=2, default=str))
            elif result.verdict == "harness-error":
                # JUnit's "error": the test's own machinery broke, not the thing tested.
                counts["errors"] += 1
                ET.SubElement(
                    case, "error", type=result.outcome.label, message=_junit_message(result)
                )
            elif result.outcome is Outcome.SKIPPED or result.verdict in ("known", "refused"):
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=_junit_message(result))
        suite.set("failures", str(counts["failures"]))
        suite.set("errors", str(counts["errors"]))
        suite.set("skipped", str(counts["skipped"]))
        path = self.folder / "junit.xml"
        tmp = path.with_suffix(".tmp")
        ET.ElementTree(suite).write(tmp, encoding="utf-8", xml_declaration=True)
        tmp.replace(path)
        return path


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", scrub_secrets(text))


def _junit_message(result: CaseResult) -> str:
    triage = f"{result.triage}: {result.triage_explanation}" if result.triage else ""
    parts = [result.verdict, result.outcome.label, triage or result.message, result.expectation]
    return _xml_text(" | ".join(p for p in parts if p))
