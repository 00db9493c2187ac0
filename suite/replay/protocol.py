"""What ``repro replay`` and its child (``python -m suite.children replay``) say to each other.

The parent (:mod:`suite.replay.passes`) writes a :class:`PassPlan` for ``run``; the child
answers with JSON lines, each a :class:`ReplayMessage` (a :class:`suite.engine.Message` of
replay's dialect): in the
probe's file (``probe``: :class:`Version`, then :class:`Probing` and :class:`Probed` per
binding, then :class:`ProbeDone`) or on stdout (``run``: :class:`PipelineSaid` and
:class:`PassOk`; ``types``: :class:`TypesSaid`). A line that is no message of a known kind
with every field of its type is refused (:class:`suite.engine.Unreadable`), never half-read.

A module of replay's own, not of the engine's protocol: its messages carry replay's types
(a probed :class:`~suite.replay.bindings.Binding`, a binding's arguments), which the engine
must not know (the engine imports no command package). Standard library only, like the
child.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

from suite.engine import JsonRecord, Message, Unreadable, json_object
from suite.replay.bindings import Binding, BindingArg, Mapped


@dataclass(frozen=True)
class PassPlan(JsonRecord):
    """The one pass ``run`` adds: the binding, its arguments, the pass as recorded."""

    binding: str
    args: list[dict[str, object]]  # BindingArg.to_json() each
    pass_text: str  # in JSON: ``pass``

    @classmethod
    def of(cls, mapped: Mapped) -> PassPlan:
        return cls(mapped.binding, [arg.to_json() for arg in mapped.args], mapped.spec.text)

    def to_json(self) -> str:
        return json.dumps({"binding": self.binding, "args": self.args, "pass": self.pass_text})

    @classmethod
    def from_json(cls, text: str) -> PassPlan:
        record = json_object(text, "the pass plan")
        plan = cls.from_record({**record, "pass_text": record.get("pass")}, "pass plan")
        for arg in plan.args:
            _binding_arg(arg)
        return plan

    @property
    def binding_args(self) -> list[BindingArg]:
        return [_binding_arg(arg) for arg in self.args]


@dataclass(frozen=True)
class ReplayMessage(Message):
    """One JSON line from the replay child: replay's dialect."""


@dataclass(frozen=True)
class Version(ReplayMessage):
    """The probe starts: the release it probes."""

    KIND: ClassVar[str] = "version"
    triton: str


@dataclass(frozen=True)
class Probing(ReplayMessage):
    """The probe calls this binding next (the one to blame when it aborts)."""

    KIND: ClassVar[str] = "probing"
    path: str


@dataclass(frozen=True)
class Probed(ReplayMessage):
    """What the probe learned of one binding (``Binding.to_json()``)."""

    KIND: ClassVar[str] = "probed"
    binding: dict[str, object]

    @property
    def read(self) -> Binding:
        try:
            return Binding.from_json(self.binding)
        except (KeyError, TypeError, ValueError) as exc:
            raise Unreadable(f"probed: {exc!r}") from None


@dataclass(frozen=True)
class ProbeDone(ReplayMessage):
    KIND: ClassVar[str] = "probe-done"


@dataclass(frozen=True)
class PipelineSaid(ReplayMessage):
    """The pipeline the pass manager holds after the binding's call."""

    KIND: ClassVar[str] = "pipeline"
    pipeline: str


@dataclass(frozen=True)
class PassOk(ReplayMessage):
    """The pass ran and its IR is written."""

    KIND: ClassVar[str] = "ok"


@dataclass(frozen=True)
class TypesSaid(ReplayMessage):
    """The ``types`` command's answer: the operation count, and the result types of the op
    on each line (by line number, as text)."""

    KIND: ClassVar[str] = "types"
    ops: int
    results: dict[str, list[str]]


def _binding_arg(record: object) -> BindingArg:
    if not isinstance(record, dict) or not isinstance(record.get("kind"), str):
        raise Unreadable(f"a binding argument without a kind: {record!r}"[:120])
    return BindingArg.from_json(record)
