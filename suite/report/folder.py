"""A report's folder: its name, what may be replaced, and writing it whole or not at all.

``<output>/<id>/`` holds one report (``report.json``) or one replay (``replay.json``), or
both. A new report is written into a fresh folder beside it (:class:`Draft`) and renamed
into place, so that a failure leaves the previous report whole; only a folder that a
report or a replay wrote is ever replaced.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from suite.engine import scrub_secrets, scrub_text
from suite.errors import UsageError
from suite.files import check_plain_name, process_alive, read_regular
from suite.templating import clip_lines

# A folder holding one of these was written by `repro report`, `repro replay` or `repro explain`.
REPORT_MARKS = ("report.json", "replay.json", "explain/explain.json")


def check_report_id(report_id: str) -> str:
    """``report_id`` if it can name a report folder: one plain path component, not reserved."""
    return check_plain_name(report_id, "report id")


def check_report_folder(folder: Path) -> None:
    """A report may replace only a folder that a report or a replay wrote."""
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise UsageError(f"{folder} exists and is not a report folder: choose another --id")
    unmarked = not any((folder / mark).is_file() for mark in REPORT_MARKS)
    if folder.is_dir() and any(folder.iterdir()) and unmarked:
        raise UsageError(f"{folder} exists and is not a report folder: choose another --id")


def default_folder(output: Path, report_id: str) -> Path:
    """Where the report (or replay) of ``report_id`` goes under the output root."""
    return output / check_report_id(report_id)


class Draft:
    """The report being written: a staging folder and the files put into it, in order."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.files: list[str] = []

    def put(self, name: str, text: str, secret_safe: bool = True) -> None:
        """Write ``name``, scrubbed of secrets; of the home folder too unless ``secret_safe``
        is False (generated code, which embeds the reproducer's source: its paths must run).
        A Markdown file's lines are kept to ``MARKDOWN_WIDTH`` characters."""
        text = scrub_text(text) if secret_safe else scrub_secrets(text)
        if name.endswith(".md"):
            text = clip_lines(text)
        (self.folder / name).write_text(text)
        self.files.append(name)

    def attach(self, name: str, source: Path) -> None:
        """Copy ``source`` in as ``name``, as it is (an MLIR reproducer, a replay's file): a
        regular file's bytes, never a link followed nor a FIFO waited on."""
        (self.folder / name).write_bytes(read_regular(source, "attachment", follow=False))
        self.files.append(name)

    def text(self, name: str) -> str:
        path = self.folder / name
        return path.read_text(errors="replace") if path.is_file() else ""


@contextmanager
def drafted(folder: Path) -> Iterator[Draft]:
    """A :class:`Draft` of ``folder`` that replaces it when the block ends without error.

    What ``repro replay`` wrote there (``replay.json`` and the files it lists) and the
    ``explain/`` folder of ``repro explain`` are carried into the draft first (not counted
    among the report's files)."""
    check_report_id(folder.name)
    check_report_folder(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_drafts(folder)
    staging = Path(tempfile.mkdtemp(prefix=_draft_prefix(folder, "new"), dir=folder.parent))
    try:
        for name in _replay_files(folder):
            source = folder / name
            if source.is_file() and not source.is_symlink() and Path(name).name == name:
                shutil.copyfile(source, staging / name)
        explain = folder / "explain"
        if (explain / "explain.json").is_file() and not explain.is_symlink():
            shutil.copytree(explain, staging / "explain", symlinks=True)
        yield Draft(staging)
        _swap_into_place(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _draft_prefix(folder: Path, kind: str) -> str:
    """``.<id>.new-<pid>-`` (``old``: the report being replaced): the process that made it
    is in its name, so a later report knows a draft whose writer was killed."""
    return f".{folder.name}.{kind}-{os.getpid()}-"


def _remove_stale_drafts(folder: Path) -> None:
    """The drafts of ``folder`` left by a report killed mid-way (its process is gone)."""
    for kind in ("new", "old"):
        for draft in folder.parent.glob(f".{glob.escape(folder.name)}.{kind}-*-*"):
            pid = draft.name.removeprefix(f".{folder.name}.{kind}-").split("-")[0]
            if (
                pid.isdigit()
                and not draft.is_symlink()
                and draft.is_dir()
                and not process_alive(int(pid))
            ):
                shutil.rmtree(draft, ignore_errors=True)


def _replay_files(folder: Path) -> set[str]:
    record = folder / "replay.json"
    if not record.is_file():
        return set()
    try:
        files = json.loads(record.read_text()).get("files", {})
        return {"replay.json", *(str(name) for name in files.values())}
    except (ValueError, AttributeError, OSError):
        return set()


def _swap_into_place(staging: Path, folder: Path) -> None:
    if not folder.exists():
        staging.rename(folder)
        return
    previous = Path(tempfile.mkdtemp(prefix=_draft_prefix(folder, "old"), dir=folder.parent))
    folder.rename(previous / folder.name)
    staging.rename(folder)
    shutil.rmtree(previous)  # the previous report: this command's own kind of folder
