"""The one place that turns how a compile ended into an outcome and a signature.

The suite's classifier (``suite.engine.classify``) adds what only it knows (the compile's
metadata against the target's limits, the memory cap, skips) and calls :func:`classify_ending`
and :func:`classify_diagnostic` for the rest. The facts judged (an exception's type, stage,
origin) come from :mod:`suite.engine.exception_facts`; the normalisation of failure text,
and the reading of what a standalone ``repro.py`` printed, from :mod:`suite.judgement`,
which every ``repro.py`` carries.

A signature is ``<family>: <message key>``. The family is the outcome, the phase or stage,
the pass (or the signal, the ptxas code, the rule), colon-joined, without spaces. The
message key is the first meaningful message, normalized: the assertion text, the
``LLVM ERROR`` line, the MLIR diagnostic, the Python error; paths, line numbers,
addresses, SSA names and shapes stripped, the intrinsic name kept. Two aborts in one
stage are two signatures; the same pass failing with another message on another release
is the same family (``family_of``), which is how a finding notices a changed message.
Whether two signatures are one bug is :mod:`suite.engine.same_bug`'s question.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from suite.engine.exception_facts import Origin
from suite.engine.protocol import NOT_STARTED, Error
from suite.judgement import (
    NOT_IMPLEMENTED,
    PTXAS_CODE,
    PTXAS_ERROR_LINE,
    PTXAS_FATAL_LINE,
    PTXAS_UNKNOWN_ARCH,
    REFUSAL_TYPES,
    REQUIREMENT,
    compose,
    failed_pass,
    faulthandler_stage,
    first_line,
    meaningful_message,
    normalize,
)
from suite.judgement import family_of as family_of
from suite.judgement import message_of as message_of
from suite.judgement import python_message as judgement_python_message

# A process that could not get a CUDA context: the driver's, the runtime's and torch's words
# for a machine (or a torch build) that gives it none. On an H100 new processes were refused
# so after launches hung and were killed (docs/gpu-results.md, 2026-11-25).
GPU_UNAVAILABLE = re.compile(
    r"No CUDA GPUs are available|no CUDA-capable device is detected|CUDA_ERROR_NO_DEVICE"
    r"|all CUDA-capable devices are busy or unavailable|CUDA_ERROR_DEVICE_UNAVAILABLE"
    r"|CUDA driver initialization failed|Found no NVIDIA driver on your system"
    r"|Torch not compiled with CUDA enabled|without ATen_cuda library"
)
GPU_UNAVAILABLE_RULE = "gpu-unavailable"
GPU_UNAVAILABLE_SIGNATURE = f"harness-error:{GPU_UNAVAILABLE_RULE}"


# Python errors of the glue around a compile: raised before Triton's pipeline runs, never bugs.
HARNESS_TYPES = frozenset(
    {
        "TypeError",
        "AttributeError",
        "NameError",
        "KeyError",
        "IndexError",
        "ImportError",
        "ModuleNotFoundError",
        "ValueError",
        "SyntaxError",
        "UnboundLocalError",
        "ZeroDivisionError",
        "NotImplementedError",
        "AssertionError",
        "RecursionError",
    }
)


def python_message(error: Error) -> str:
    """``Type: message`` of a Python error (:func:`suite.judgement.python_message`)."""
    return judgement_python_message(error.type, error.message, error.cause)


@dataclass
class SignatureParts:
    """An outcome (its label) with its signature parts, a one-line message and the facts."""

    outcome: str
    family: list[str | None]
    key: str = ""
    message: str = ""
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def refused(self) -> bool:
        """Triton's own Python refused the program (:func:`triton_refusal`): never a bug."""
        return bool(self.detail.get("triton_refused"))

    @property
    def signature(self) -> str | None:
        if self.outcome in ("passed", "skipped"):
            return None
        return compose([self.outcome, *self.family], self.key)


def _shown(text: str | None, limit: int = 300) -> str:
    return (text or "").strip()[:limit]


def classify_ending(
    error: Error | None,
    *,
    stderr: str,
    phase: str,
    returncode: int | None,
    signal_name: str | None,
    timed_out: bool,
    done: bool,
    entered_stage: str | None = None,
) -> SignatureParts | None:
    """The verdict of a case from what the child reported and how it ended.

    ``None`` when it finished cleanly (the caller then checks limits and
    :func:`classify_diagnostic`). ``error`` is :func:`describe_exception`'s record;
    ``entered_stage`` the last compile stage the child reported entering, for a native
    crash or hang whose frames faulthandler could not print.
    """
    if phase == NOT_STARTED:
        return _not_started(stderr, returncode, signal_name, timed_out)
    if timed_out:
        stage = (faulthandler_stage(stderr) or entered_stage) if phase == "compile" else None
        return SignatureParts(
            "timeout",
            [phase, stage],
            message=f"killed after the timeout in {phase}",
            detail={"phase": phase, "stage": stage},
        )
    if signal_name:
        stage = (faulthandler_stage(stderr) or entered_stage) if phase == "compile" else None
        pass_name = failed_pass(stderr)
        raw = meaningful_message(stderr)
        where = f" ({stage})" if stage else ""
        return SignatureParts(
            "crash",
            [signal_name, phase, stage, pass_name],
            normalize(raw) if raw else "",
            f"{signal_name} in {phase}{where}" + (f": {_shown(raw)}" if raw else ""),
            {
                "phase": phase,
                "signal": signal_name,
                "stage": stage,
                "pass": pass_name,
                "diagnostic": _shown(raw),
            },
        )
    if error is not None:
        return _from_error(error, stderr)
    if not done:
        raw = meaningful_message(stderr)
        return SignatureParts(
            "crash",
            [f"exit-{returncode}", phase],
            normalize(raw) if raw else "",
            f"exited with status {returncode} in {phase} without reporting"
            + (f": {_shown(raw)}" if raw else ""),
            {"phase": phase, "returncode": returncode, "diagnostic": _shown(raw)},
        )
    return None


def _not_started(
    stderr: str, returncode: int | None, signal_name: str | None, timed_out: bool
) -> SignatureParts:
    """A child that ended before its first event: it never read its spec or never loaded
    the reproducer (a spec path it could not open, an interpreter that cannot import the
    suite's child), so nothing of the reproducer ran. The tool's own glue failed: a harness
    error, never a finding (issue 35: every evaluation of an explore failed so, and became
    one)."""
    how = (
        "was killed after the timeout"
        if timed_out
        else f"died of {signal_name}"
        if signal_name
        else f"exited with status {returncode}"
    )
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = _shown(lines[-1]) if lines else ""
    return SignatureParts(
        "harness-error",
        [NOT_STARTED],
        "",
        f"the case's child {how} before it reported its start (the harness, not the "
        "reproducer or the compiler)" + (f": {said}" if said else ""),
        {"phase": NOT_STARTED, "returncode": returncode, "signal": signal_name, "diagnostic": said},
    )


def classify_diagnostic(stderr: str) -> SignatureParts | None:
    """A compile that succeeded but printed an MLIR ``error:`` diagnostic (old pipeliners
    reported a failure that way and went on)."""
    raw = meaningful_message(stderr)
    if raw is None:
        return None
    return SignatureParts(
        "compiler-diagnostic",
        [],
        normalize(raw),
        f"the compile succeeded but printed: {_shown(raw)}",
        {"phase": "compile", "diagnostic": _shown(raw)},
    )


TRITON_REJECTS = "triton-rejects"


def error_origin(error: Error) -> Origin:
    """The record's origin; a record written before origins existed is read from its
    ``compiling`` flag and stage (a frontend stage is ``ttir`` with no pass running)."""
    try:
        return Origin(error.origin)
    except ValueError:
        return Origin.COMPILE if error.compiling else Origin.GLUE


def triton_refusal(error: Error, stderr: str) -> SignatureParts | None:
    """A compile that Triton's own Python refused: never a compiler bug.

    Decided by where it was raised. Anything Triton's frontend raised while it turned the
    kernel into TTIR, before any MLIR pass ran (``Origin.FRONTEND``: options, the code
    generator, ``tl`` semantics, whatever the exception's type or words), is the release
    refusing the program. Its words only pick the verdict: a refusal that names a limit
    ("num_ctas > 1 requires SM90+", "must be a tensor of shape ...") is
    ``user-error:triton-rejects``; any other ("NYI: ...", "Invalid float format: fp16") is
    ``unsupported``, its message kept. Raised by ``triton.compile`` around the stages or by a
    stage's own Python (``COMPILE``, ``PIPELINE``), only a refusal type that says so in
    words, with no failing pass and no native message, counts: the rest is the compiler's.
    """
    origin = error_origin(error)
    said = python_message(error) or first_line(error.message) or error.type
    detail = {
        "phase": error.phase,
        "stage": error.stage,
        "exception": error.type,
        "origin": origin.value,
        "triton_refused": True,
    }
    if origin is not Origin.FRONTEND and not (
        origin in (Origin.COMPILE, Origin.PIPELINE)
        and error.raised_in_triton
        and error.type in REFUSAL_TYPES
        and (NOT_IMPLEMENTED.search(said) or REQUIREMENT.search(said))
        and not failed_pass(stderr)
        and not meaningful_message(stderr)
    ):
        return None
    if REQUIREMENT.search(said) and not NOT_IMPLEMENTED.search(said):
        return SignatureParts(
            "user-error",
            [TRITON_REJECTS],
            normalize(said),
            f"{TRITON_REJECTS}: {_shown(said)}",
            {**detail, "rule": TRITON_REJECTS},
        )
    why = "does not implement it" if NOT_IMPLEMENTED.search(said) else "refuses it"
    return SignatureParts(
        "skipped",
        [],
        message=f"unsupported: this Triton {why}: {_shown(said)}",
        detail={**detail, "refusal": _shown(said)},
    )


def _from_error(error: Error, stderr: str) -> SignatureParts:
    """The parts of a failure the child reported as an error: the first of
    :data:`_ERROR_READERS` that knows it, else a runtime error of its phase."""
    for read in _ERROR_READERS:
        parts = read(error, stderr)
        if parts is not None:
            return parts
    line = first_line(error.message)
    return SignatureParts(
        "runtime-error",
        [error.phase, error.type],
        normalize(line),
        f"{error.phase}: {error.type}: {line}",
        {"phase": error.phase, "exception": error.type},
    )


def _gpu_unavailable(error: Error, stderr: str) -> SignatureParts | None:
    """The machine's GPU refused this process a context: nothing was judged. (The error's own
    message only: torch warns in those words on stderr of a run that needs no GPU.)"""
    text, kind = error.message, error.type
    if not GPU_UNAVAILABLE.search(text):
        return None
    shown = f"{kind}: {first_line(text)}" if kind else first_line(text)
    return SignatureParts(
        "harness-error",
        [GPU_UNAVAILABLE_RULE],
        "",
        f"{GPU_UNAVAILABLE_RULE}: {shown} (the GPU would not give this process a context:"
        " the machine, not the compiler)",
        {"phase": error.phase, "exception": kind, "rule": GPU_UNAVAILABLE_RULE},
    )


def _toolchain_gap(error: Error, stderr: str) -> SignatureParts | None:
    """This Triton's ptxas does not know the target. The stage is the one the compile had
    reached (cubin: ptxas runs there): every stage before it completed, which bisection reads
    as "past a bug of an earlier stage"."""
    unknown_arch = PTXAS_UNKNOWN_ARCH.search(error.message + "\n" + stderr)
    if not unknown_arch:
        return None
    return SignatureParts(
        "skipped",
        [],
        message=f"toolchain-gap: this Triton's ptxas does not know {unknown_arch.group(1)}",
        detail={"toolchain_gap": unknown_arch.group(1), "stage": error.stage},
    )


def _ptxas_error(error: Error, stderr: str) -> SignatureParts | None:
    """ptxas failed. A ptxas error code names the diagnostic; its text only adds numbers and
    names."""
    text, kind = error.message, error.type
    if kind != "PTXASError" and "ptxas" not in text.lower():
        return None
    combined = text + "\n" + stderr
    code_match = PTXAS_CODE.search(combined)
    line_match = PTXAS_ERROR_LINE.search(combined) or PTXAS_FATAL_LINE.search(combined)
    line = line_match.group(1).strip() if line_match else first_line(text) or kind
    code = code_match.group(1) if code_match else None
    return SignatureParts(
        "ptxas-error",
        [code],
        "" if code else normalize(line),
        f"ptxas: {line}",
        {"phase": error.phase, "stage": "cubin", "ptxas_code": code, "diagnostic": _shown(line)},
    )


def _named_failure(error: Error, stderr: str) -> SignatureParts | None:
    """An exception type that names the failure: a resource limit, a reproducer's static
    check refusing the case before anything ran, a wrong result."""
    phase, text, kind = error.phase, error.message, error.type
    if kind == "OutOfResources":
        resource = "shared-memory" if "shared" in text.lower() else normalize(text)
        return SignatureParts(
            "resource-limit",
            [resource],
            message=first_line(text) or kind,
            detail={"phase": phase, "resource": resource},
        )
    if kind == "LimitViolation":
        rule = first_line(text).split(":", 1)[0].strip()
        return SignatureParts(
            "user-error", [rule], message=first_line(text), detail={"phase": phase, "rule": rule}
        )
    if kind == "WrongResult":
        return SignatureParts(
            "wrong-result", [phase], message=first_line(text) or kind, detail={"phase": phase}
        )
    return None


def _glue_error(error: Error, stderr: str) -> SignatureParts | None:
    """Raised before Triton compiled anything: the harness or the reproducer's glue."""
    phase, kind = error.phase, error.type
    glue = phase == "load" or (
        phase == "compile" and error_origin(error) is Origin.GLUE and kind in HARNESS_TYPES
    )
    if not glue:
        return None
    shown = f"{kind}: {first_line(error.message)}"
    return SignatureParts(
        "harness-error",
        [phase],
        normalize(shown),
        f"{phase}: {shown} (raised before Triton compiled anything: the harness or the "
        "reproducer's glue, not the compiler)",
        {"phase": phase, "exception": kind},
    )


def _frontend_refusal(error: Error, stderr: str) -> SignatureParts | None:
    """Triton's own Python refusing the program. A launch compiles too (the JIT): its
    frontend refusing is the same refusal."""
    if error.phase == "compile" or error_origin(error) is Origin.FRONTEND:
        return triton_refusal(error, stderr)
    return None


def _compiler_error(error: Error, stderr: str) -> SignatureParts | None:
    """A compile that failed: its stage, the pass that failed, the first meaningful message."""
    if error.phase != "compile":
        return None
    stage, kind = error.stage, error.type
    pass_name = failed_pass(stderr)
    raw = meaningful_message(stderr) or python_message(error)
    where = f"pass {pass_name} failed" if pass_name else ""
    shown = ": ".join(p for p in (where, _shown(raw)) if p) or kind
    return SignatureParts(
        "compiler-error",
        [stage, pass_name],
        normalize(raw) if raw else "",
        f"{stage or 'compile'}: {shown}",
        {
            "phase": error.phase,
            "stage": stage,
            "pass": pass_name,
            "exception": kind,
            "origin": error_origin(error).value,
            "diagnostic": _shown(raw),
        },
    )


#: In order: the first that knows an error reads it.
_ERROR_READERS: tuple[Callable[[Error, str], SignatureParts | None], ...] = (
    _gpu_unavailable,
    _toolchain_gap,
    _ptxas_error,
    _named_failure,
    _glue_error,
    _frontend_refusal,
    _compiler_error,
)
