"""The one message base of every parent-child JSON-lines dialect, and the typed reading of
JSON records.

A parent and its child speak one dialect: a case's child and the engine
(:class:`suite.engine.protocol.Event`), the warm template and its parent
(:class:`suite.engine.protocol.TemplateMessage`), the gate's GPU child
(:class:`suite.gate.events.GateEvent`), the replay child
(:class:`suite.replay.protocol.ReplayMessage`). Each dialect is one direct subclass of
:class:`Message`; each message of it names its kind in ``KIND``, which goes under the one
discriminator :data:`KIND_KEY` of its JSON line, and is found again through the one registry
(``Message`` subclasses register themselves, per dialect, as they are defined). A line read
back is typed field by field (:meth:`JsonRecord.from_record`): a missing or ill-typed field
raises :class:`Unreadable`, never a half-read message.

Standard library only: every child imports it, under a venv that may hold nothing but
triton (and torch).
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, ClassVar, TypeVar

#: The key of a JSON line that names its message's kind, in every dialect.
KIND_KEY = "event"

T = TypeVar("T")
R = TypeVar("R", bound="JsonRecord")
M = TypeVar("M", bound="Message")


class Unreadable(ValueError):
    """A record of a known kind whose fields are missing or of the wrong type, or a line that
    is no message of a known kind."""


def fits(hint: Any, value: Any) -> bool:
    """Whether a decoded JSON ``value`` is of the type ``hint`` (a field's annotation)."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return any(fits(h, value) for h in typing.get_args(hint))
    if hint is Any:
        return True
    if typing.is_typeddict(hint):
        return isinstance(value, dict)
    if hint is type(None):
        return value is None
    origin = typing.get_origin(hint) or hint
    if origin is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if origin is int:
        return isinstance(value, int) and not isinstance(value, bool)
    args = typing.get_args(hint)
    if origin is list and args:
        return isinstance(value, list) and all(fits(args[0], item) for item in value)
    if origin is dict and args:
        return isinstance(value, dict) and all(
            fits(args[0], k) and fits(args[1], v) for k, v in value.items()
        )
    return isinstance(value, origin)


def typed(kind: type[T], record: Mapping[str, object], name: str) -> T:
    """``kind`` (a dataclass) made of the fields of ``record`` (other keys ignored), each
    checked against its annotation. Raises :class:`Unreadable` for a missing or ill-typed
    field."""
    hints = typing.get_type_hints(kind)
    values = {}
    for f in fields(kind):  # type: ignore[arg-type]
        if f.name not in record:
            continue
        if not fits(hints[f.name], record[f.name]):
            raise Unreadable(f"{name}: {f.name} is {type(record[f.name]).__name__}")
        values[f.name] = record[f.name]
    try:
        return kind(**values)
    except TypeError as exc:  # a required field is missing
        raise Unreadable(f"{name}: {exc}") from None


def parse_lines(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines text; a torn line (its writer died mid-write) or a
    line that is no object is skipped."""
    records = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def read_lines(path: Path | str | None, limit: int = 64 << 20) -> list[dict[str, Any]]:
    """:func:`parse_lines` of a file (of nothing when there is none)."""
    if not path or not Path(path).is_file():
        return []
    with open(path, errors="replace") as handle:
        return parse_lines(handle.read(limit))


def json_object(text: str | bytes, what: str) -> dict[str, object]:
    """The JSON object of ``text``; raises :class:`Unreadable` for text that is none."""
    try:
        record = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        raise Unreadable(f"{what} is not JSON: {text[:80]!r}") from None
    if not isinstance(record, dict):
        raise Unreadable(f"{what} is no JSON object: {text[:80]!r}")
    return record


@dataclass(frozen=True)
class JsonRecord:
    """A frozen dataclass read back from JSON with each field checked against its type."""

    @classmethod
    def from_record(cls: type[R], record: Mapping[str, object], name: str = "") -> R:
        """The record of ``record``'s fields; raises :class:`Unreadable` for a missing or
        ill-typed one."""
        return typed(cls, record, name or cls.__name__)


#: The one registry: each dialect (a direct subclass of :class:`Message`) -> kind -> class.
REGISTRY: dict[type[Message], dict[str, type[Message]]] = {}


@dataclass(frozen=True)
class Message(JsonRecord):
    """One JSON line between a parent and its child; ``KIND`` goes under :data:`KIND_KEY`."""

    KIND: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        dialect = cls.dialect()
        kinds = REGISTRY.setdefault(dialect, {})
        if cls is dialect or not cls.__dict__.get("KIND"):
            return
        if kinds.get(cls.KIND, cls) is not cls:
            raise TypeError(f"two {dialect.__name__} messages of kind {cls.KIND!r}")
        kinds[cls.KIND] = cls

    @classmethod
    def dialect(cls) -> type[Message]:
        """The dialect this message belongs to: its ancestor directly below :class:`Message`."""
        return next(c for c in cls.__mro__ if Message in c.__bases__)

    @classmethod
    def kinds(cls) -> dict[str, type[Message]]:
        """The kinds of this message's dialect, as registered."""
        return REGISTRY.get(cls.dialect(), {})

    def record(self) -> dict[str, Any]:
        return {KIND_KEY: self.KIND, **asdict(self)}

    def line(self) -> str:
        return json.dumps(self.record(), default=str) + "\n"

    @classmethod
    def decode(cls: type[M], record: object) -> M | None:
        """The typed message of one decoded JSON line of this dialect; None when it is no
        message of a kind the dialect knows. Raises :class:`Unreadable` for a known kind
        with a missing or ill-typed field."""
        if not isinstance(record, dict):
            return None
        name = record.get(KIND_KEY)
        kind = cls.kinds().get(name) if isinstance(name, str) else None
        if kind is None:
            return None
        return typing.cast(M, kind.from_record(record, kind.KIND))

    @classmethod
    def from_line(cls: type[M], line: str | bytes) -> M:
        """The typed message of one line; raises :class:`Unreadable` for a line that is no
        message of a known kind with every field of its type (a foreign or torn line)."""
        message = cls.decode(json_object(line, "the line"))
        if message is None:
            raise Unreadable(f"no {cls.dialect().__name__}: {line[:80]!r}")
        return message
