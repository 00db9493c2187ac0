"""What the gate's parent and its GPU child say to each other: the spec the parent writes
(:class:`GpuSpec`, one JSON file) and the events the child writes back, one JSON line each.

One module for both sides: the child (:mod:`suite.gate.gpu_child`), the parent
(:func:`suite.gate.gpu.gpu_measure`, and :class:`suite.gate.gpu.GpuEvents`, one method per
event) and the tests' fake child import these types, so a field renamed on one side cannot
silently go missing on the other; a line of a known kind with a missing or ill-typed field
is refused (:class:`suite.engine.Unreadable`), never half-read. Each event is a
:class:`suite.engine.Message` of the dialect :class:`GateEvent`. Standard library only (and
:mod:`suite.api`, and the engine's message base): the child runs in a venv that may hold
nothing but triton and torch.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field, replace
from typing import ClassVar, TypedDict

from suite.api import Config
from suite.engine import JsonRecord, Message, Unreadable, json_object

#: The key cuBLAS's timings go under, beside the configs' keys.
CUBLAS = "cublas"
#: The child's exit status that asks the parent for a new child (the CUDA context is gone).
CONTEXT_LOST = 3

#: What a spec item asks for: the full check and timing, screening, or both.
ITEM_KINDS = ("final", "screen", "both")


@dataclass(frozen=True)
class SpecItem(JsonRecord):
    """One config the child measures."""

    key: str
    config: Config
    kind: str  # one of ITEM_KINDS

    @property
    def screened(self) -> bool:
        return self.kind in ("screen", "both")

    @property
    def final(self) -> bool:
        return self.kind in ("final", "both")


@dataclass(frozen=True)
class Prior(JsonRecord):
    """What an earlier child of the same gate already measured for one config."""

    screen: float | None = None  # mean log TFLOPS of the screening medians
    checked: bool = False  # the full correctness check passed


@dataclass(frozen=True)
class GpuSpec(JsonRecord):
    """Everything one GPU child is told, written as ``spec-N.json``."""

    source: dict[str, str]  # {"module": NAME} or {"path": FILE}
    kernel: str
    events: str
    sizes: list[list[int]]
    check_shapes: list[list[int]]
    items: list[SpecItem]
    out_dtypes: dict[str, str] = field(default_factory=dict)
    input_sets: int = 3
    prior: dict[str, Prior] = field(default_factory=dict)
    finalists: int = 0
    deadline: float | None = None
    compile_jobs: int = 1
    seed: int = 0
    warmup_ms: int = 25
    rep_ms: int = 100

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, default=str)

    @classmethod
    def from_json(cls, text: str) -> GpuSpec:
        """The spec of ``text``; raises :class:`suite.engine.Unreadable` for one that is not
        (a missing or ill-typed field)."""
        record = json_object(text, "the GPU spec")
        items, prior = record.pop("items", None), record.pop("prior", None) or {}
        if not isinstance(items, list) or not isinstance(prior, dict):
            raise Unreadable("the GPU spec's items or prior are malformed")
        values = {k: v for k, v in record.items() if v is not None or k == "deadline"}
        spec = cls.from_record({**values, "items": [], "prior": {}}, "GPU spec")
        return replace(
            spec,
            items=[SpecItem.from_record(_object(i), "spec item") for i in items],
            prior={str(k): Prior.from_record(_object(p), "prior") for k, p in prior.items()},
        )

    def prior_of(self, key: str) -> Prior:
        return self.prior.get(key) or Prior()


def _object(value: object) -> dict[str, object]:
    if not isinstance(value, dict):
        raise Unreadable(f"{type(value).__name__} where a JSON object belongs")
    return value


@dataclass(frozen=True)
class GateEvent(Message):
    """One line of the GPU child's events file: the gate's dialect. ``t``: when the child
    wrote it (its wall clock, for a reader of the file)."""

    t: float = field(default_factory=time.time, kw_only=True)


class FlushCheck(TypedDict, total=False):
    """How do_bench keeps L2 cold, as the child checked it (``gpu_bench.verify_flush``)."""

    clear_in_timed_loop: bool
    buffer_bytes: int
    l2_bytes: int
    verified: bool
    how: str


@dataclass(frozen=True)
class Start(GateEvent):
    """The child is up: the device it measures on and how it measures."""

    KIND: ClassVar[str] = "start"
    device: str = ""
    capability: list[int] = field(default_factory=list)
    torch: str = ""
    triton: str = ""
    flush: FlushCheck = field(default_factory=lambda: FlushCheck())
    seed: int = 0
    cuda_visible_devices: str | None = None


@dataclass(frozen=True)
class Begin(GateEvent):
    """The child starts on one config (the item a crash is blamed on)."""

    KIND: ClassVar[str] = "begin"
    key: str = ""
    stage: str = ""
    size: list[int] | None = None
    input_set: int | None = None


@dataclass(frozen=True)
class Check(GateEvent):
    """A correctness check (or a compile/launch) passed or failed."""

    KIND: ClassVar[str] = "check"
    key: str = ""
    stage: str = ""
    ok: bool = False
    outcome: str | None = None
    message: str | None = None
    size: list[int] | None = None
    shapes: list[list[int]] | None = None
    traceback: str | None = None


@dataclass(frozen=True)
class Screen(GateEvent):
    """One screening median (``--suggest``)."""

    KIND: ClassVar[str] = "screen"
    key: str = ""
    size: list[int] = field(default_factory=list)
    ms: float = 0.0


@dataclass(frozen=True)
class Timed(GateEvent):
    """One ``do_bench`` median on one input set."""

    KIND: ClassVar[str] = "time"
    key: str = ""
    size: list[int] = field(default_factory=list)
    input_set: int = 0
    ms: float = 0.0


@dataclass(frozen=True)
class Budget(GateEvent):
    """Screening stopped at the deadline."""

    KIND: ClassVar[str] = "budget"
    screened: int = 0
    left: int = 0


@dataclass(frozen=True)
class Finalists(GateEvent):
    KIND: ClassVar[str] = "finalists"
    keys: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Note(GateEvent):
    KIND: ClassVar[str] = "note"
    text: str = ""


@dataclass(frozen=True)
class ContextLost(GateEvent):
    """The CUDA context is gone after a failure; the parent restarts the child."""

    KIND: ClassVar[str] = "context-lost"
    key: str = ""


@dataclass(frozen=True)
class Fatal(GateEvent):
    KIND: ClassVar[str] = "fatal"
    type: str = ""
    message: str = ""
    traceback: str = ""


@dataclass(frozen=True)
class Done(GateEvent):
    KIND: ClassVar[str] = "done"


class EventLog:
    """The child's side: append one line per event, flushed at once (a crash keeps them)."""

    def __init__(self, path: str) -> None:
        self.stream = open(path, "a", encoding="utf-8")  # noqa: SIM115 (kept open for the run)

    def emit(self, event: GateEvent) -> None:
        self.stream.write(event.line())
        self.stream.flush()
