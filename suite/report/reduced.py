"""What ``repro report`` takes from a reduction: the reduced kernel for the issue, the
original reproducer as an attachment.

``repro reduce`` points the finding at its result (``finding.reduced``: ``path``,
``original``, sizes, ``complete``; ``path`` is the reducer's form, :data:`REDUCED_CASE`).
:func:`reduced_of` reads that record back and checks the
files are still there; a report then captures its compile call from the reduced file (so
``repro.py``, the snippet in the issue and ``--verify`` all use the reduced kernel) and
attaches the original as :data:`ORIGINAL_NAME`. A record whose files are gone is ignored:
the report falls back to the original reproducer, as before ``repro reduce`` ran.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ORIGINAL_NAME = "original_repro.py"
#: The reducer's form of the reduced kernel (``suite.reduce.reducer.REDUCED_CASE``): what a
#: report captures; ``reduced.py`` beside it is the same kernel as a standalone program.
REDUCED_CASE = "reduced_case.py"


@dataclass(frozen=True)
class Reduced:
    """A finding's reduction, as the report uses it."""

    path: Path
    original: Path
    lines: int
    tokens: int
    original_lines: int
    original_tokens: int
    complete: bool
    # The change to the config that each kept candidate was also launched with, without
    # failing (None: none), and whether its values were checked there (a wrong result's).
    passing_change: dict[str, Any] | None = None
    values_checked: bool = False

    @property
    def source(self) -> dict[str, str]:
        """The reduced file as a reproducer source (what ``capture_compile`` loads)."""
        return {"path": str(self.path)}

    def context(self) -> dict[str, Any]:
        """What the issue template says about the reduction."""
        return {**asdict(self), "original_name": ORIGINAL_NAME}


def reduced_of(record: dict[str, Any] | None, finding_id: str) -> Reduced | None:
    """The reduction a finding's record points to, or None (none, or its files are gone, or
    they are not ``reduced_case.py`` and ``original.py`` of a ``reduce/<finding_id>/`` folder: a
    crafted record never makes a report read, nor attach, a file from anywhere else)."""
    entry = (record or {}).get("reduced")
    if not isinstance(entry, dict):
        return None
    try:
        reduced = Reduced(
            path=Path(entry["path"]),
            original=Path(entry["original"]),
            lines=int(entry["lines"]),
            tokens=int(entry["tokens"]),
            original_lines=int(entry["original_lines"]),
            original_tokens=int(entry["original_tokens"]),
            complete=bool(entry.get("complete")),
            passing_change=change
            if isinstance(change := entry.get("passing_change"), dict)
            else None,
            values_checked=bool(entry.get("values_checked")),
        )
    except (KeyError, TypeError, ValueError):
        return None
    folder = reduced.path.parent
    if (
        reduced.path.name != REDUCED_CASE
        or reduced.original != folder / "original.py"
        or folder.name != finding_id
        or folder.parent.name != "reduce"
        or not all(_plain_file(p) for p in (reduced.path, reduced.original))
    ):
        return None
    return reduced


def _plain_file(path: Path) -> bool:
    """A regular file reached without a link anywhere on its way."""
    try:
        return path.is_absolute() and path.resolve() == path and path.is_file()
    except (OSError, RuntimeError):
        return False
