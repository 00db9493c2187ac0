"""What a child reports about its launches: typed records that the child writes and the
parent reads, one JSON line each in the case's ``events.jsonl``.

The parent decides a case from how the child ended (exit status, signal, its own timeout)
together with these records: a launch started and never finished is the launch a hang or
a fault was in; a judgement that found a difference is a wrong result. Standard library
only (the child may run under a venv holding nothing but triton).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar


@dataclass(frozen=True)
class LaunchStarted:
    """A launch is about to be made (``role``: kernel, variant:<name>, repeat).

    ``bound_s`` is the hang oracle's bound for it (None: only the case's timeout);
    ``at`` the child's monotonic clock, which is the parent's (one host).
    """

    KIND: ClassVar[str] = "launch-started"
    launch: str
    role: str
    bound_s: float | None = None
    at: float = 0.0


@dataclass(frozen=True)
class LaunchFinished:
    """The launch and the synchronize after it returned."""

    KIND: ClassVar[str] = "launch-finished"
    launch: str


@dataclass(frozen=True)
class Judged:
    """One oracle's judgement: ``difference`` is '' when the launches agree, else the kind
    of difference (``suite.oracles``: nan, inf, mismatch)."""

    KIND: ClassVar[str] = "judged"
    oracle: str
    difference: str = ""
    message: str = ""


LaunchEvent = LaunchStarted | LaunchFinished | Judged
_KINDS: dict[str, type[LaunchStarted] | type[LaunchFinished] | type[Judged]] = {
    kind.KIND: kind for kind in (LaunchStarted, LaunchFinished, Judged)
}


def started(launch: str, role: str, bound_s: float | None) -> LaunchStarted:
    return LaunchStarted(launch, role, bound_s, time.monotonic())


def to_event(record: LaunchEvent) -> dict[str, Any]:
    """The JSON object of ``record`` (its kind under ``event``)."""
    return {"event": record.KIND, **asdict(record)}


def from_event(event: dict[str, Any]) -> LaunchEvent | None:
    """The typed record of a JSON event, or None when it is not a well-formed launch event."""
    kind = _KINDS.get(str(event.get("event")))
    if kind is None:
        return None
    names = {f.name for f in fields(kind)}
    try:
        return kind(**{k: v for k, v in event.items() if k in names})
    except TypeError:
        return None


@dataclass(frozen=True)
class Launches:
    """The launch records of a case, in order, and what they say."""

    records: tuple[LaunchEvent, ...] = ()

    @classmethod
    def of(cls, events: list[dict[str, Any]]) -> Launches:
        typed = (from_event(e) for e in events)
        return cls(tuple(r for r in typed if r is not None))

    @property
    def open(self) -> LaunchStarted | None:
        """The last launch started and not finished (the one a hang or a crash was in)."""
        current = None
        for record in self.records:
            if isinstance(record, LaunchStarted):
                current = record
            elif isinstance(record, LaunchFinished):
                current = None
        return current

    @property
    def wrong(self) -> Judged | None:
        """The first judgement that found a difference."""
        return next((r for r in self.records if isinstance(r, Judged) and r.difference), None)

    @property
    def judged(self) -> tuple[Judged, ...]:
        return tuple(r for r in self.records if isinstance(r, Judged))


class LaunchWatch:
    """The parent's watch on a running case's launches: :meth:`overdue` is true once a
    launch has run past its hang bound. Reads the events file as it grows."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._offset = 0
        self._partial = b""
        self._open: LaunchStarted | None = None

    def _read(self) -> None:
        import json

        try:
            with open(self.path, "rb") as handle:
                handle.seek(self._offset)
                chunk = handle.read(1 << 20)
        except OSError:
            return
        self._offset += len(chunk)
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            record = from_event(event) if isinstance(event, dict) else None
            if isinstance(record, LaunchStarted):
                self._open = record
            elif isinstance(record, LaunchFinished):
                self._open = None

    def overdue(self) -> bool:
        self._read()
        running = self._open
        if running is None or not running.bound_s:
            return False
        return time.monotonic() - running.at > running.bound_s
