"""What one case came to: the outcome kinds, the signature, the result record.

The outcome kinds are one short list, as lit's ``ResultCode`` is: each says
whether it is a failure. A skip is not a failure; everything that stops a
kernel from compiling, fitting, running or being right is. A harness error is
not one either (the compiler was never reached), but it is always shown.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

from suite.engine.signature import family_of, message_of


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

    def __init__(self, label: str, is_failure: bool) -> None:
        self.label = label
        self.is_failure = is_failure

    @classmethod
    def from_label(cls, label: str) -> Outcome:
        for outcome in cls:
            if outcome.label == label:
                return outcome
        raise ValueError(f"unknown outcome {label!r}")


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


@dataclass
class CaseResult:
    """One finished case, as appended to ``results.jsonl``."""

    case_id: str
    repro: str
    target: str
    config: dict[str, Any]
    outcome: Outcome
    signature: Signature | None = None
    message: str = ""
    detail: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    gpu: bool = False
    duration_s: float = 0.0
    artifacts: dict[str, str] = field(default_factory=dict)
    verdict: str = ""
    expectation: str = ""
    # compiler-bug, driver-bug, toolchain-gap or user-error:<rule>, and its one line.
    triage: str = ""
    triage_explanation: str = ""
    # The reproducer's source as the case ran it (suite.engine.sources.CarriedSource.to_json).
    source: dict[str, str] = field(default_factory=dict)

    @property
    def skip_kind(self) -> str:
        """``unsupported`` or ``toolchain-gap`` for a skipped case, '' otherwise."""
        if self.outcome is not Outcome.SKIPPED:
            return ""
        return TOOLCHAIN_GAP if self.detail.get("toolchain_gap") else UNSUPPORTED

    @property
    def refused(self) -> bool:
        """Triton's own Python refused the case (``suite.engine.signature.triton_refusal``):
        unsupported, or ``user-error:triton-rejects``; never a bug, never a regression."""
        return bool(self.detail.get("triton_refused"))

    def to_json(self) -> dict[str, Any]:
        record = asdict(self)
        record["outcome"] = self.outcome.label
        record["signature"] = self.signature.text if self.signature else None
        return record

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> CaseResult:
        fields = dict(record)
        fields["outcome"] = Outcome.from_label(fields["outcome"])
        signature = fields.get("signature")
        if signature is not None and not isinstance(signature, str):
            raise TypeError(f"signature: {type(signature).__name__}")
        fields["signature"] = Signature(signature) if signature else None
        known = set(cls.__dataclass_fields__)
        values = {k: v for k, v in fields.items() if k in known}
        for name, kinds in _FIELD_TYPES.items():
            if name in values and not isinstance(values[name], kinds):
                raise TypeError(f"{name}: {type(values[name]).__name__}")
        for name in ("artifacts", "source"):
            if not all(isinstance(v, str) for v in values.get(name, {}).values()):
                raise TypeError(f"{name}: not strings")
        return cls(**values)


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
