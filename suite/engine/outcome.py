"""What one case came to: the outcome kinds, the signature, the result record.

The outcome kinds are one short list, as lit's ``ResultCode`` is: each says
whether it is a failure. A skip is not a failure; everything that stops a
kernel from compiling, fitting, running or being right is. A harness error is
not one either (the compiler was never reached), but it is always shown.
"""

from __future__ import annotations

import hashlib
import typing
from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from typing import Any

from suite.api import Config
from suite.engine.protocol import FailureSite
from suite.engine.signature import family_of, message_of
from suite.engine.wire import fits


class Outcome(Enum):
    PASSED = ("passed", False)
    SKIPPED = ("skipped", False)
    COMPILER_ERROR = ("compiler-error", True)
    PTXAS_ERROR = ("ptxas-error", True)
    RESOURCE_LIMIT = ("resource-limit", True)
    USER_ERROR = ("user-error", True)
    CRASH = ("crash", True)
    TIMEOUT = ("timeout", True)
    WRONG_RESULT = ("wrong-result", True)
    RUNTIME_ERROR = ("runtime-error", True)
    # The compile succeeded but printed an MLIR ``error:`` diagnostic.
    COMPILER_DIAGNOSTIC = ("compiler-diagnostic", True)
    # A Python error of the harness or the reproducer's glue before Triton compiled
    # anything: not the compiler's failure, so never a finding, a report or exit 1.
    HARNESS_ERROR = ("harness-error", False)
    # A pass of a case that launches, only compiled (no GPU of its target): it says nothing
    # of the launch. Shown, never recorded: results.jsonl keeps ``passed`` with
    # ``detail.not_launched``, and every rendering of a run reads ``CaseResult.shown``.
    COMPILED = ("compiled", False)

    def __init__(self, label: str, is_failure: bool) -> None:
        self.label = label
        self.is_failure = is_failure

    @classmethod
    def from_label(cls, label: str) -> Outcome:
        for outcome in cls:
            if outcome.label == label:
                return outcome
        raise ValueError(f"unknown outcome {label!r}")


class Verdict(str, Enum):
    """What one case is against the baseline (``suite.engine.baseline``): the one vocabulary
    of run, matrix, nightly, JUnit and the pytest door. A ``str`` so that ``results.jsonl``,
    ``summary.json`` and every rendering keep the word as it was written."""

    NONE = ""  # not judged against a baseline
    OK = "ok"  # passed or skipped, and nothing expected it to fail
    KNOWN = "known"  # failed as an entry says
    REGRESSION = "regression"  # failed with no entry, or otherwise than its entry says
    FIXED = "fixed"  # an entry covers it and it passed: fixed upstream
    HARNESS_ERROR = "harness-error"  # the suite or the reproducer's glue failed
    REFUSED = "refused"  # Triton's own Python refused it, and no entry lists it
    NEEDS_GPU = "needs-gpu"  # passed compiled alone, where only a launch could show a fix

    def __str__(self) -> str:
        return self.value


# Why a skipped case did not run: one vocabulary for run, matrix and bisect.
# unsupported: a ``requires`` entry is unmet (an API, a release range) or the
# reproducer raised ``Unsupported``; toolchain-gap: the ptxas Triton compiles with
# does not know the target (a ``ptxas:`` requirement, or found at run time).
UNSUPPORTED = "unsupported"
TOOLCHAIN_GAP = "toolchain-gap"


@dataclass(frozen=True)
class Signature:
    """A failure's identity across configs: the outcome and its normalized key.

    Two cases with the same signature are the same bug; the digest is a short
    stable handle for file names and issue titles.
    """

    text: str

    @property
    def family(self) -> str:
        """Outcome, stage, pass (or signal, code, rule): the signature without its message."""
        return family_of(self.text)

    @property
    def key(self) -> str:
        """The normalized first meaningful message ('' when there is none)."""
        return message_of(self.text)

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:12]

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class FailureFacts:
    """What the classifier found about a failure besides its site (each None when it does
    not apply). In JSON, ``limit_target`` is ``target``."""

    diagnostic: str | None = None  # the first meaningful message, as shown
    exception: str | None = None  # the Python error's type
    origin: str | None = None  # who raised it (suite.engine.exception_facts.Origin)
    returncode: int | None = None  # of a child that exited without reporting
    triton_refused: bool | None = None  # Triton's own Python refused the program
    refusal: str | None = None  # what it said
    toolchain_gap: str | None = None  # the target this Triton's ptxas does not know
    memory_cap: bool | None = None  # killed at the memory cap
    resource: str | None = None  # shared-memory, tensor-memory
    used: int | None = None
    limit: int | None = None
    limit_target: str | None = None
    launch: str | None = None  # the launch a fault or hang was in
    oracle: str | None = None  # the oracle that judged a wrong result or hang
    difference: str | None = None  # nan, inf, mismatch
    bound_s: float | None = None  # the hang oracle's bound (None: the case's timeout)


@dataclass(frozen=True)
class OutputBytes:
    """How many bytes each captured stream had before it was cut."""

    stdout: int
    stderr: int


@dataclass(frozen=True)
class RunNotes:
    """What the runner saw of a case besides its outcome (each None when it did not happen).

    ``launched_on`` is set for a case that launched: the ``CUDA_VISIBLE_DEVICES`` it ran
    with, which may be None (it saw every GPU). In JSON, ``launched_on`` is
    ``cuda_visible_devices`` and ``events`` keeps its name.
    """

    events: str | None = None  # why the case's events could not be read
    stragglers_killed: int | None = None
    isolation: str | None = None  # why it ran as a fresh interpreter
    case_folder: str | None = None  # the case removed or replaced its own folder
    launched_on: tuple[str | None] | None = None
    not_launched: str | None = None  # it launches but was only compiled: needs a GPU
    planted: tuple[str, ...] | None = None  # links, FIFOs ... the case left, removed
    lost: tuple[str, ...] | None = None  # its files that could not be written: "NAME (ERRNO)"
    output_bytes: OutputBytes | None = None
    sanitizer: dict[str, object] | None = None  # the sanitizer's evidence (Evidence.to_json)
    # the ptxas differential's evidence (suite.engine.ptxas.Evidence.to_json)
    ptxas: dict[str, object] | None = None


_RENAMED = {"pass_name": "pass", "limit_target": "target", "launched_on": "cuda_visible_devices"}


def _detail_of(part: FailureSite | FailureFacts | RunNotes) -> dict[str, Any]:
    detail: dict[str, Any] = {}
    for f in fields(part):
        value = getattr(part, f.name)
        if value is None and not (f.name == "bound_s" and getattr(part, "oracle", "") == "hang"):
            continue
        if f.name == "launched_on":
            value = value[0]
        elif isinstance(value, OutputBytes):
            value = asdict(value)
        elif isinstance(value, tuple):
            value = list(value)
        detail[_RENAMED.get(f.name, f.name)] = value
    return detail


Part = typing.TypeVar("Part", FailureSite, FailureFacts, RunNotes)


def site_and_facts(detail: dict[str, Any]) -> tuple[FailureSite, FailureFacts]:
    """The site and facts of a verdict's ``detail`` (``suite.engine.signature.SignatureParts``),
    its empty values left out."""
    given = {k: v for k, v in detail.items() if v not in (None, "")}
    return _part_from(FailureSite, given), _part_from(FailureFacts, given)


def _part_from(kind: type[Part], detail: dict[str, Any]) -> Part:
    """The typed part of a JSON ``detail``; a known key of the wrong type raises TypeError
    (a results.jsonl line is input: it may lie), an unknown key is ignored."""
    hints = typing.get_type_hints(kind)
    values: dict[str, Any] = {}
    for f in fields(kind):
        key = _RENAMED.get(f.name, f.name)
        if key not in detail:
            continue
        value = detail[key]
        if f.name == "launched_on":
            if value is not None and not isinstance(value, str):
                raise TypeError(f"detail.{key}: {type(value).__name__}")
            values[f.name] = (value,)
            continue
        if f.name == "output_bytes" and isinstance(value, dict):
            value = OutputBytes(**value) if set(value) == {"stdout", "stderr"} else value
        elif f.name in ("planted", "lost") and isinstance(value, list):
            value = tuple(value)
        if not fits(hints[f.name], value) or (
            isinstance(value, tuple) and not all(isinstance(v, str) for v in value)
        ):
            raise TypeError(f"detail.{key}: {type(value).__name__}")
        values[f.name] = value
    return kind(**values)


@dataclass(frozen=True)
class CaseResult:
    """One finished case, as appended to ``results.jsonl``.

    Made once: a later step (the baseline's verdict, the triage, the carried source) makes a
    new one with ``dataclasses.replace``. ``site``, ``facts`` and ``notes`` are the JSON
    record's ``detail``.
    """

    case_id: str
    repro: str
    target: str
    config: Config
    outcome: Outcome
    signature: Signature | None = None
    message: str = ""
    site: FailureSite = field(default_factory=FailureSite)
    facts: FailureFacts = field(default_factory=FailureFacts)
    notes: RunNotes = field(default_factory=RunNotes)
    metrics: dict[str, Any] = field(default_factory=dict)
    gpu: bool = False
    duration_s: float = 0.0
    artifacts: dict[str, str] = field(default_factory=dict)
    verdict: Verdict = Verdict.NONE
    expectation: str = ""
    # compiler-bug, driver-bug, ptxas-bug, toolchain-gap or user-error:<rule>, and its line.
    triage: str = ""
    triage_explanation: str = ""
    # The reproducer's source as the case ran it (suite.engine.sources.CarriedSource.to_json).
    source: dict[str, str] = field(default_factory=dict)

    @property
    def shown(self) -> Outcome:
        """The outcome as every rendering of a run shows it (the progress line, the table,
        summary.json, JUnit, the closing line): a pass that was only compiled, though the case
        launches, is ``compiled``, never ``passed``."""
        if self.outcome is Outcome.PASSED and self.notes.not_launched:
            return Outcome.COMPILED
        return self.outcome

    @property
    def skip_kind(self) -> str:
        """``unsupported`` or ``toolchain-gap`` for a skipped case, '' otherwise."""
        if self.outcome is not Outcome.SKIPPED:
            return ""
        return TOOLCHAIN_GAP if self.facts.toolchain_gap else UNSUPPORTED

    @property
    def refused(self) -> bool:
        """Triton's own Python refused the case (``suite.engine.signature.triton_refusal``):
        unsupported, or ``user-error:triton-rejects``; never a bug, never a regression."""
        return bool(self.facts.triton_refused)

    def failure_detail(self) -> dict[str, Any]:
        """The site and the facts of ``detail`` (what a finding keeps of its minimal case;
        :func:`site_and_facts` reads them back)."""
        return {**_detail_of(self.site), **_detail_of(self.facts)}

    def detail(self) -> dict[str, Any]:
        """The record's ``detail``: the site, the facts and the notes that apply."""
        return {**self.failure_detail(), **_detail_of(self.notes)}

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {}
        for name, value in asdict(self).items():
            if name == "site":
                record["detail"] = self.detail()
            elif name not in ("facts", "notes"):
                record[name] = value
        record["outcome"] = self.outcome.label
        record["signature"] = self.signature.text if self.signature else None
        return record

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> CaseResult:
        fields_ = dict(record)
        fields_["outcome"] = Outcome.from_label(fields_["outcome"])
        signature = fields_.get("signature")
        if signature is not None and not isinstance(signature, str):
            raise TypeError(f"signature: {type(signature).__name__}")
        fields_["signature"] = Signature(signature) if signature else None
        known = set(cls.__dataclass_fields__) - {"site", "facts", "notes"}
        values = {k: v for k, v in fields_.items() if k in known}
        for name, kinds in _FIELD_TYPES.items():
            if name in fields_ and not isinstance(fields_[name], kinds):
                raise TypeError(f"{name}: {type(fields_[name]).__name__}")
        for name in ("artifacts", "source"):
            if not all(isinstance(v, str) for v in values.get(name, {}).values()):
                raise TypeError(f"{name}: not strings")
        try:
            values["verdict"] = Verdict(values.get("verdict", ""))
        except ValueError:
            raise TypeError(f"verdict: {values['verdict']!r}") from None
        detail = fields_.get("detail", {})
        return cls(
            **values,
            site=_part_from(FailureSite, detail),
            facts=_part_from(FailureFacts, detail),
            notes=_part_from(RunNotes, detail),
        )


# The type each field of a record must have (a results.jsonl line is input: it may lie).
_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {
    "case_id": str,
    "repro": str,
    "target": str,
    "config": dict,
    "message": str,
    "detail": dict,
    "metrics": dict,
    "gpu": bool,
    "duration_s": (int, float),
    "artifacts": dict,
    "verdict": str,
    "expectation": str,
    "triage": str,
    "triage_explanation": str,
    "source": dict,
}
