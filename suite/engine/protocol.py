"""What the parent and a case's child say to each other, in one place.

The parent writes a :class:`ChildSpec` (``spec.json``); the child (``suite.engine.child``,
forked by the warm template or started fresh) answers with events, one JSON line each in
the file the spec names (``events.jsonl``), written as it goes so that a crash mid-compile
still leaves the phase it reached. The parent reads them back into a :class:`ChildReport`,
one handler per event (``on_<kind>``). A case may write anything into that file: a line that
is no event is skipped, an event of a known kind with a missing or ill-typed field makes
the report :attr:`ChildReport.unreadable` (the case is then judged by how it ended alone).

Standard library only: the child may run under a venv holding nothing but triton.
"""

from __future__ import annotations

import json
import time
import typing
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from suite.engine.wire import KIND_KEY, Message, Unreadable, parse_lines, read_lines

NOT_STARTED = "start"
"""The phase of a child that sent no event: it never read its spec or loaded the suite."""

#: The file a case's child writes its events to, in the case's folder.
EVENTS = "events.jsonl"


@dataclass(frozen=True)
class ChildSpec:
    """Everything one child is told: which reproducer, which case, where to report."""

    source: dict[str, str]  # {"path": FILE} or {"module": NAME}
    repro_id: str
    config: dict[str, Any]
    target: str
    gpu: bool = False
    report: str = ""
    timeout: float | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), default=str)

    @classmethod
    def from_json(cls, text: str) -> ChildSpec:
        return cls(**json.loads(text))

    @classmethod
    def read(cls, path: Path | str) -> ChildSpec:
        return cls.from_json(Path(path).read_text())


@dataclass(frozen=True)
class FailureSite:
    """Where a case failed: its phase, the compile stage, the MLIR pass, the ptxas error
    code, the rule a static check named, the signal that ended it (each None when unknown).
    In JSON, ``pass_name`` is ``pass``."""

    phase: str | None = None
    stage: str | None = None
    pass_name: str | None = None
    ptxas_code: str | None = None
    rule: str | None = None
    signal: str | None = None


# --- the events a child writes, in the order it may write them -----------------------------


@dataclass(frozen=True)
class Event(Message):
    """One line of ``events.jsonl``: the dialect of a case's child."""


@dataclass(frozen=True)
class Start(Event):
    KIND: ClassVar[str] = "start"
    python: str = ""
    cuda_visible_devices: str | None = None


@dataclass(frozen=True)
class Phase(Event):
    """The child entered a phase: compile or launch (before any: load)."""

    KIND: ClassVar[str] = "phase"
    phase: str


@dataclass(frozen=True)
class Stage(Event):
    """The compile entered one of Triton's stages (ttir, ttgir, llir, ptx, cubin)."""

    KIND: ClassVar[str] = "stage"
    stage: str


@dataclass(frozen=True)
class Error(Event):
    """The facts of the exception that ended a phase (``exception_facts.describe_exception``)."""

    KIND: ClassVar[str] = "error"
    phase: str = "compile"
    type: str = ""
    qualname: str = ""
    message: str = ""
    cause: str = ""
    stage: str | None = None
    # Whether Triton's compile pipeline was running; an older record has no origin.
    compiling: bool = True
    raised_in_triton: bool = False
    origin: str = ""
    traceback: str = ""


@dataclass(frozen=True)
class CompiledEvent(Event):
    """What the compile returned (``suite.api.Compiled``)."""

    KIND: ClassVar[str] = "compiled"
    shared_bytes: int | None = None
    tmem_columns: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Skipped(Event):
    """The case did not run: ``reason`` starts with unsupported or toolchain-gap."""

    KIND: ClassVar[str] = "skipped"
    reason: str
    toolchain_gap: str = ""

    def record(self) -> dict[str, Any]:
        record = super().record()
        if not self.toolchain_gap:
            del record["toolchain_gap"]
        return record


@dataclass(frozen=True)
class GpuWait(Event):
    """The child waits for its turn on its GPU (one launch at a time per GPU); the wait
    ends at its next ``LaunchStarted``. ``at``: the child's monotonic clock."""

    KIND: ClassVar[str] = "gpu-wait"
    at: float


@dataclass(frozen=True)
class LaunchStarted(Event):
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
class LaunchFinished(Event):
    """The launch and the synchronize after it returned."""

    KIND: ClassVar[str] = "launch-finished"
    launch: str


@dataclass(frozen=True)
class Judged(Event):
    """One oracle's judgement: ``difference`` is '' when the launches agree, else the kind
    of difference (``suite.oracles``: nan, inf, mismatch)."""

    KIND: ClassVar[str] = "judged"
    oracle: str
    difference: str = ""
    message: str = ""


@dataclass(frozen=True)
class Done(Event):
    """Every phase finished."""

    KIND: ClassVar[str] = "done"


LaunchEvent = GpuWait | LaunchStarted | LaunchFinished | Judged


def started(launch: str, role: str, bound_s: float | None) -> LaunchStarted:
    return LaunchStarted(launch, role, bound_s, time.monotonic())


class EventWriter:
    """The child's side: one line per event, flushed at once (a crash keeps them)."""

    def __init__(self, stream: typing.TextIO) -> None:
        self.stream = stream

    def __call__(self, event: Event) -> None:
        self.stream.write(event.line())
        self.stream.flush()


# --- the parent's side ---------------------------------------------------------------------


@dataclass
class ChildReport:
    """What a child reported, read back event by event (one ``on_<kind>`` handler each)."""

    start: Start | None = None
    phases: list[str] = field(default_factory=list)
    stage: str | None = None  # the last compile stage the child said it entered
    error: Error | None = None
    compiled: CompiledEvent | None = None
    skipped: Skipped | None = None
    launches: list[LaunchEvent] = field(default_factory=list)
    done: bool = False
    any_event: bool = False
    unreadable: bool = False  # an event the engine cannot read: judged by how it ended

    @classmethod
    def of(cls, records: list[dict[str, Any]]) -> ChildReport:
        report = cls()
        for record in records:
            report.feed(record)
        return report

    @classmethod
    def read(cls, path: Path | str | None) -> ChildReport:
        return cls.of(read_lines(path))

    def feed(self, record: dict[str, Any]) -> None:
        if isinstance(record.get(KIND_KEY), str):
            self.any_event = True
        try:
            event = Event.decode(record)
        except Unreadable:
            self.unreadable = True
            return
        if event is not None:
            getattr(self, "on_" + event.KIND.replace("-", "_"))(event)

    def on_start(self, event: Start) -> None:
        self.start = self.start or event

    def on_phase(self, event: Phase) -> None:
        self.phases.append(event.phase)

    def on_stage(self, event: Stage) -> None:
        self.stage = event.stage

    def on_error(self, event: Error) -> None:
        self.error = event

    def on_compiled(self, event: CompiledEvent) -> None:
        self.compiled = event

    def on_skipped(self, event: Skipped) -> None:
        self.skipped = event

    def on_gpu_wait(self, event: GpuWait) -> None:
        self.launches.append(event)

    def on_launch_started(self, event: LaunchStarted) -> None:
        self.launches.append(event)

    def on_launch_finished(self, event: LaunchFinished) -> None:
        self.launches.append(event)

    def on_judged(self, event: Judged) -> None:
        self.launches.append(event)

    def on_done(self, event: Done) -> None:
        self.done = True

    @property
    def phase(self) -> str:
        """The last phase the child entered ("load" before any, ``NOT_STARTED`` with no
        events). Events the engine cannot read were written by someone (a case may tamper
        with its events): the child started, and the case is judged by how it ended."""
        if self.phases:
            return self.phases[-1]
        return "load" if self.any_event or self.unreadable else NOT_STARTED

    @property
    def open_launch(self) -> LaunchStarted | None:
        """The last launch started and not finished (the one a hang or a crash was in)."""
        current = None
        for record in self.launches:
            if isinstance(record, LaunchStarted):
                current = record
            elif isinstance(record, LaunchFinished):
                current = None
        return current

    @property
    def wrong(self) -> Judged | None:
        """The first judgement that found a difference."""
        return next((r for r in self.launches if isinstance(r, Judged) and r.difference), None)


def errors_in(records: list[dict[str, Any]]) -> list[Error]:
    """The error events among ``records`` (a kept events file read again)."""
    found = []
    for record in records:
        try:
            event = Event.decode(record)
        except Unreadable:
            continue
        if isinstance(event, Error):
            found.append(event)
    return found


class LaunchWatch:
    """The parent's watch on a running case's launches (``suite.engine.isolate.Watch``):
    :meth:`overdue` is true once a launch has run past its hang bound; :meth:`waited_s` is the
    time the case waited for its turn on the GPU. Reads the events file as it grows."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._offset = 0
        self._partial = b""
        self._open: LaunchStarted | None = None
        self._waiting_since: float | None = None
        self._waited = 0.0
        self._launched = False

    def _read(self) -> None:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self._offset)
                chunk = handle.read(1 << 20)
        except OSError:
            return
        self._offset += len(chunk)
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()
        for record in parse_lines(b"\n".join(lines).decode(errors="replace")):
            try:
                event = Event.decode(record)
            except Unreadable:
                continue
            if isinstance(event, GpuWait):
                self._waiting_since = event.at
            elif isinstance(event, LaunchStarted):
                self._open = event
                self._launched = True
                if self._waiting_since is not None:
                    self._waited += max(0.0, event.at - self._waiting_since)
                    self._waiting_since = None
            elif isinstance(event, LaunchFinished):
                self._open = None

    def overdue(self) -> bool:
        self._read()
        running = self._open
        if running is None or not running.bound_s:
            return False
        return time.monotonic() - running.at > running.bound_s

    def launched(self) -> bool:
        """A launch was started (the case used its GPU)."""
        self._read()
        return self._launched

    def unfinished(self) -> bool:
        """A launch started and did not finish (it raised, crashed, hung or was killed)."""
        self._read()
        return self._open is not None

    def waited_s(self) -> float:
        self._read()
        waiting = time.monotonic() - self._waiting_since if self._waiting_since else 0.0
        return self._waited + max(0.0, waiting)


# --- the warm template's pipes (suite.engine.warm <-> suite.engine.template) ----------------


@dataclass(frozen=True)
class TemplateMessage(Message):
    """One JSON line between the parent and its warm template: the template's dialect."""


@dataclass(frozen=True)
class Fork(TemplateMessage):
    """Parent to template: fork a child for the case whose spec file is ``spec``; its
    stdout and stderr go to the FIFOs the parent reads."""

    KIND: ClassVar[str] = "fork"
    id: int
    spec: str
    env: dict[str, str]
    cwd: str
    stdout: str
    stderr: str


@dataclass(frozen=True)
class Ready(TemplateMessage):
    """Template to parent, once: imports done; the targets whose warm-up compile failed."""

    KIND: ClassVar[str] = "ready"
    pid: int
    failed_warm_up: list[int]


@dataclass(frozen=True)
class Forked(TemplateMessage):
    """The child of request ``id`` runs as ``pid``."""

    KIND: ClassVar[str] = "forked"
    id: int
    pid: int


@dataclass(frozen=True)
class Exited(TemplateMessage):
    """The child ``pid`` ended with ``code`` (negative: the signal that killed it)."""

    KIND: ClassVar[str] = "exited"
    pid: int
    code: int


@dataclass(frozen=True)
class Refused(TemplateMessage):
    """The template could not read a request (``id`` when it could tell which): no fork."""

    KIND: ClassVar[str] = "refused"
    reason: str
    id: int | None = None


def read_request(line: bytes) -> Fork | Refused:
    """The template's side: the fork request of one line, or why it is refused."""
    try:
        request = TemplateMessage.from_line(line)
    except Unreadable as exc:
        return Refused(str(exc))
    if isinstance(request, Fork):
        return request
    said = getattr(request, "id", None)
    reason = f"a {request.KIND} message is no request"
    return Refused(reason, said if isinstance(said, int) else None)
