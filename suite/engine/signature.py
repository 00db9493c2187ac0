"""The one place that turns how a compile ended into an outcome and a signature.

Standard library only: ``repro.py`` (``templates/repro.py.j2``) embeds this file's source,
so a standalone reproducer computes the signature exactly as the suite does. The suite's
classifier (``suite.engine.classify``) adds what only it knows (the compile's metadata
against the target's limits, the memory cap, skips) and calls :func:`judge` and
:func:`diagnostic_verdict` for the rest.

A signature is ``<family>: <message key>``. The family is the outcome, the phase or stage,
the pass (or the signal, the ptxas code, the rule), colon-joined, without spaces. The
message key is the first meaningful message, normalized: the assertion text, the
``LLVM ERROR`` line, the MLIR diagnostic, the Python error; paths, line numbers,
addresses, SSA names and shapes stripped, the intrinsic name kept. Two aborts in one
stage are two signatures; the same pass failing with another message on another release
is the same family (``family_of``), which is how a finding notices a changed message; a
compile crash and a compiler error with one message are one failure told two ways
(:func:`reported_apart`).
"""

from __future__ import annotations

import difflib
import re
import traceback
from dataclasses import dataclass, field
from typing import Any

# Names of the functions that run each compile stage, from Triton's backends.
STAGE_FUNCTIONS = {
    "make_ir": "ttir",
    "ast_to_ttir": "ttir",
    "make_ttir": "ttir",
    "make_ttgir": "ttgir",
    "make_llir": "llir",
    "make_ptx": "ptx",
    "make_cubin": "cubin",
}

PASS_FAILURE = re.compile(r"Pipeline failed while executing \[?`([^`]+)`")
# An MLIR diagnostic: "<location>: error: text" or a bare "error: text".
MLIR_ERROR = re.compile(r"^(?:.*?:\d+:\d+: |loc\(.*?\): |\S*: )?error: (.*)$", re.MULTILINE)
GENERIC_MESSAGES = (
    "Failures have been detected while processing an MLIR pass pipeline",
    "PassManager::run failed",
)
ASSERTION = re.compile(r"Assertion [`'](.+?)' failed")
LLVM_ERROR = re.compile(r"LLVM ERROR: (.+)")
UNREACHABLE = re.compile(r"(?:^|\n)([^\n]+)\nUNREACHABLE executed")
TERMINATE = re.compile(
    r"terminate called after throwing an instance of '([^']+)'(?:\s+what\(\):\s*(.+))?"
)
PTXAS_CODE = re.compile(r"\b(C\d{4,5})\b")
PTXAS_ERROR_LINE = re.compile(r"ptxas[\w-]*\s*(?:fatal|error)\s*:\s*(.*)")
PTXAS_UNKNOWN_ARCH = re.compile(r"Value '(sm_\w+)' is not defined for option 'gpu-name'")
FAULTHANDLER_FRAME = re.compile(r'File ".*?", line \d+ in (\w+)')
CARET_LINE = re.compile(r"^\s*\^+\s*$")
COMPILATION_AT = re.compile(r"^at \d+:\d+:")

# Python errors of the glue around a compile (the harness, the reproducer's own code, a
# bad signature dict): raised before Triton's pipeline runs, they are never compiler bugs.
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

_NORMALIZE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"%(?=llvm\.)"), ""),  # an intrinsic's name is kept, not taken for an SSA value
    (re.compile(r"0x[0-9a-fA-F]+"), "<addr>"),
    (re.compile(r"(?:[A-Za-z]:)?(?:/[\w.+@~-]+)+/?"), "<path>"),
    (re.compile(r"\btmp[\w-]*"), "<tmp>"),
    (re.compile(r"%[\w.#$-]+"), "%V"),
    (re.compile(r"\^bb\d+"), "^bbN"),
    (re.compile(r"#[A-Za-z_][\w.]*"), "#A"),
    (re.compile(r"\b\d+(?:x\d+)*x(?=[A-Za-z?!])"), "?x"),  # tensor<128x64xf16> -> tensor<?xf16>
    (re.compile(r"\bm\d+n\d+k\d+"), "mMnNkK"),  # MMA instruction shapes
    (re.compile(r"\bt\d+\b"), "tN"),  # SelectionDAG node names
    (re.compile(r"(?<![\w.])\d+(?:\.\d+)?\b"), "N"),
    (re.compile(r"\s+"), " "),
)

MAX_LENGTH = 200


def normalize(text: str) -> str:
    """The stable form of one line of failure text."""
    for pattern, placeholder in _NORMALIZE:
        text = pattern.sub(placeholder, text)
    return text.strip()[:MAX_LENGTH]


def compose(family: list[str | None], key: str = "") -> str:
    """``family`` colon-joined (empty parts dropped), then ``: key`` when there is one."""
    head = ":".join(p for p in family if p)
    return f"{head}: {key}" if key else head


def family_of(signature: str) -> str:
    """The family of a signature: everything before the message key."""
    return signature.split(": ", 1)[0]


def message_of(signature: str) -> str:
    """The normalized message key of a signature ('' when it has none)."""
    parts = signature.split(": ", 1)
    return parts[1] if len(parts) == 2 else ""


# A pass: CamelCase with at least one lower-case letter (TritonGPUAssignLatencies,
# NVGPUWarpSpecialization, NVWSInsertAref; never a signal like SIGABRT), or a dashed
# pipeline name (tritongpu-assign-latencies; never an exit status like exit-1).
_PASS_NAME = re.compile(r"^(?!SIG)[A-Z]\w*[a-z]\w*$|^(?!exit-\d+$)[a-z]\w*-[\w-]+$")
_PASS_OUTCOMES = ("compiler-error", "crash", "timeout")
SIMILAR = 0.6


def named_pass(signature: str) -> str | None:
    """The pass a compile failure's family names, if any."""
    parts = family_of(signature).split(":")
    if parts[0] not in _PASS_OUTCOMES:
        return None
    return next((p for p in parts[1:] if _PASS_NAME.match(p)), None)


def same_bug(one: str, other: str) -> bool:
    """Whether two signatures are one bug whose message may have changed between releases.

    The same family is needed. Where the family names the failing pass, that is enough
    (the pass failed again, with another message); without a pass (a frontend error, an
    abort outside any pass), the messages must also be alike, so that two unrelated
    errors of one stage stay apart.

    One exception to "the same family": a crash in the compile and a compiler error whose
    message keys are identical and informative, and whose stage and pass do not
    contradict each other, are one failure reported two ways (:func:`reported_apart`).
    """
    if family_of(one) != family_of(other):
        return reported_apart(one, other)
    if one == other or named_pass(one):
        return True
    ratio = difflib.SequenceMatcher(None, message_of(one), message_of(other)).ratio()
    return ratio >= SIMILAR


#: Words that say nothing about where a failure happened: a message made of these alone
#: (``Assertion `false' failed``, ``Assertion `!empty()' failed``) could come from anywhere.
_BOILERPLATE = frozenset(
    {"assertion", "failed", "llvm", "error", "false", "true", "nullptr", "null", "unreachable"}
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_STAGES = frozenset(STAGE_FUNCTIONS.values())


def informative(key: str) -> bool:
    """Whether a message key names its failure: at least two words that are not boilerplate
    (``computeCapability not supported`` does, a bare ``false`` or ``!empty()`` does not)."""
    words = {w.lower() for w in _WORD.findall(key)} - _BOILERPLATE
    return len(words) >= 2


def compile_failure_site(signature: str) -> tuple[str, str | None, str | None] | None:
    """``(outcome, stage, pass)`` of a crash during the compile or of a compiler error
    (``None`` for any other signature); stage and pass are ``None`` where not named."""
    parts = family_of(signature).split(":")
    if parts[0] == "crash" and len(parts) > 2 and parts[2] == "compile":
        rest = parts[3:]
    elif parts[0] == "compiler-error":
        rest = parts[1:]
    else:
        return None
    stage = next((p for p in rest if p in _STAGES), None)
    pass_name = next((p for p in rest if _PASS_NAME.match(p)), None)
    return parts[0], stage, pass_name


def reported_apart(one: str, other: str) -> bool:
    """Whether a compile crash and a compiler error are one failure reported two ways.

    The same native failure reaches the suite as a signal on some releases and as an
    exception on others: Triton 3.0-3.2 run their passes without MLIR's crash recovery, so
    an assertion in a pass aborts the process (``crash:SIGABRT:compile: Assertion ...``);
    3.3 and later recover, and the same assertion, printed the same way, comes back as
    ``PassManager::run failed`` naming the pass (``compiler-error:ttgir:<pass>: Assertion
    ...``). They are one bug when the message keys are identical and informative
    (:func:`informative`) and the stage and pass, where both name one, agree.
    """
    site_a, site_b = compile_failure_site(one), compile_failure_site(other)
    if site_a is None or site_b is None or site_a[0] == site_b[0]:
        return False
    key = message_of(one)
    if not key or key != message_of(other) or not informative(key):
        return False
    (_, stage_a, pass_a), (_, stage_b, pass_b) = site_a, site_b
    return (not stage_a or not stage_b or stage_a == stage_b) and (
        not pass_a or not pass_b or pass_a == pass_b
    )


#: The compile stages in the order they run.
STAGE_ORDER = ("ttir", "ttgir", "llir", "ptx", "cubin")


def completed_stage(signature: str, reached: str | None) -> bool:
    """Whether a compile that reached stage ``reached`` (and stopped there for another
    reason, such as a ptxas that does not know the target) had completed the stage in which
    ``signature``'s compile failure happens. ``False`` when either stage is unknown."""
    site = compile_failure_site(signature)
    stage = site[1] if site else None
    if stage not in STAGE_ORDER or reached not in STAGE_ORDER:
        return False
    return STAGE_ORDER.index(str(reached)) > STAGE_ORDER.index(str(stage))


def stage_of(frames: list[str]) -> str | None:
    """The compile stage of the innermost frame that names one (frames outermost first)."""
    stage = None
    for name in frames:
        stage = STAGE_FUNCTIONS.get(name, stage)
    return stage


def _entered_compile(tb: list[traceback.FrameSummary]) -> bool:
    """Whether Triton's compile pipeline (``triton.compile`` or a stage) was running."""
    for frame in tb:
        path = frame.filename.replace("\\", "/")
        if frame.name in STAGE_FUNCTIONS:
            return True
        if frame.name == "compile" and path.endswith("triton/compiler/compiler.py"):
            return True
    return False


def describe_exception(exc: BaseException, phase: str) -> dict[str, Any]:
    """The facts of an exception that :func:`judge` reads, as JSON-ready data."""
    tb = traceback.extract_tb(exc.__traceback__)
    cause = exc.__cause__ or exc.__context__
    return {
        "phase": phase,
        "type": type(exc).__name__,
        "qualname": f"{type(exc).__module__}.{type(exc).__qualname__}",
        "message": str(exc),
        "cause": f"{type(cause).__name__}: {cause}" if cause is not None else "",
        "stage": stage_of([f.name for f in tb]),
        "compiling": _entered_compile(tb),
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
    }


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def meaningful_message(text: str) -> str | None:
    """The first meaningful message of native output: an assertion, ``LLVM ERROR``, an
    unreachable, an uncaught C++ exception, else the first non-generic MLIR error."""
    for pattern, shape in (
        (ASSERTION, "Assertion `{}' failed"),
        (LLVM_ERROR, "LLVM ERROR: {}"),
        (UNREACHABLE, "{} (UNREACHABLE)"),
    ):
        found = pattern.search(text)
        if found:
            return shape.format(found.group(1).strip())
    thrown = TERMINATE.search(text)
    if thrown:
        return f"uncaught {thrown.group(1)}" + (
            f": {thrown.group(2).strip()}" if thrown.group(2) else ""
        )
    for match in MLIR_ERROR.finditer(text):
        message = match.group(1).strip()
        if message and message not in GENERIC_MESSAGES:
            return message
    return None


def python_message(error: dict[str, Any]) -> str:
    """``Type: message`` of a Python error; a frontend ``CompilationError`` gives the error
    under its source excerpt (or its cause), not ``at 12:8:``."""
    kind, text = error.get("type", ""), error.get("message", "")
    if kind == "CompilationError":
        lines = text.splitlines()
        carets = [i for i, line in enumerate(lines) if CARET_LINE.match(line)]
        after = first_line("\n".join(lines[carets[-1] + 1 :])) if carets else ""
        if after:
            return after
        # Older releases keep the message in the cause ("AssertionError: ..."), newer ones
        # after the excerpt: the same text either way, without the cause's type.
        cause = first_line(error.get("cause") or "")
        if cause:
            return re.sub(r"^\w+: ", "", cause)
        return next(
            (ln.strip() for ln in lines if ln.strip() and not COMPILATION_AT.match(ln)), kind
        )
    line = first_line(text)
    if not line or line in GENERIC_MESSAGES:
        return ""
    return f"{kind}: {line}" if kind else line


def faulthandler_stage(stderr: str) -> str | None:
    """faulthandler lists the innermost frame first."""
    for name in FAULTHANDLER_FRAME.findall(stderr):
        if name in STAGE_FUNCTIONS:
            return STAGE_FUNCTIONS[name]
    return None


def failed_pass(stderr: str) -> str | None:
    match = PASS_FAILURE.search(stderr)
    return match.group(1) if match else None


@dataclass
class Verdict:
    """An outcome (its label) with its signature parts, a one-line message and the facts."""

    outcome: str
    family: list[str | None]
    key: str = ""
    message: str = ""
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def signature(self) -> str | None:
        if self.outcome in ("passed", "skipped"):
            return None
        return compose([self.outcome, *self.family], self.key)


def _shown(text: str | None, limit: int = 300) -> str:
    return (text or "").strip()[:limit]


def judge(
    error: dict[str, Any] | None,
    *,
    stderr: str,
    phase: str,
    returncode: int | None,
    signal_name: str | None,
    timed_out: bool,
    done: bool,
) -> Verdict | None:
    """The verdict of a case from what the child reported and how it ended.

    ``None`` when it finished cleanly (the caller then checks limits and
    :func:`diagnostic_verdict`). ``error`` is :func:`describe_exception`'s record.
    """
    if timed_out:
        stage = faulthandler_stage(stderr) if phase == "compile" else None
        return Verdict(
            "timeout",
            [phase, stage],
            message=f"killed after the timeout in {phase}",
            detail={"phase": phase, "stage": stage},
        )
    if signal_name:
        stage = faulthandler_stage(stderr) if phase == "compile" else None
        pass_name = failed_pass(stderr)
        raw = meaningful_message(stderr)
        where = f" ({stage})" if stage else ""
        return Verdict(
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
        return Verdict(
            "crash",
            [f"exit-{returncode}", phase],
            normalize(raw) if raw else "",
            f"exited with status {returncode} in {phase} without reporting"
            + (f": {_shown(raw)}" if raw else ""),
            {"phase": phase, "returncode": returncode, "diagnostic": _shown(raw)},
        )
    return None


def diagnostic_verdict(stderr: str) -> Verdict | None:
    """A compile that succeeded but printed an MLIR ``error:`` diagnostic (old pipeliners
    reported a failure that way and went on)."""
    raw = meaningful_message(stderr)
    if raw is None:
        return None
    return Verdict(
        "compiler-diagnostic",
        [],
        normalize(raw),
        f"the compile succeeded but printed: {_shown(raw)}",
        {"phase": "compile", "diagnostic": _shown(raw)},
    )


def _from_error(error: dict[str, Any], stderr: str) -> Verdict:
    phase = error.get("phase", "compile")
    text = error.get("message", "")
    kind = error.get("type", "")
    combined = text + "\n" + stderr
    unknown_arch = PTXAS_UNKNOWN_ARCH.search(combined)
    if unknown_arch:
        # The stage the compile had reached (cubin: ptxas runs there): every stage before it
        # completed, which bisection reads as "past a bug of an earlier stage".
        return Verdict(
            "skipped",
            [],
            message=f"toolchain-gap: this Triton's ptxas does not know {unknown_arch.group(1)}",
            detail={"toolchain_gap": unknown_arch.group(1), "stage": error.get("stage")},
        )
    if kind == "PTXASError" or "ptxas" in text.lower():
        code_match = PTXAS_CODE.search(combined)
        line_match = PTXAS_ERROR_LINE.search(combined)
        line = line_match.group(1).strip() if line_match else first_line(text) or kind
        code = code_match.group(1) if code_match else None
        # A ptxas error code names the diagnostic; its text only adds numbers and names.
        return Verdict(
            "ptxas-error",
            [code],
            "" if code else normalize(line),
            f"ptxas: {line}",
            {"phase": phase, "stage": "cubin", "ptxas_code": code, "diagnostic": _shown(line)},
        )
    if kind == "OutOfResources":
        resource = "shared-memory" if "shared" in text.lower() else normalize(text)
        return Verdict(
            "resource-limit",
            [resource],
            message=first_line(text) or kind,
            detail={"phase": phase, "resource": resource},
        )
    if kind == "LimitViolation":
        # A reproducer's static check refused the case before anything ran.
        rule = first_line(text).split(":", 1)[0].strip()
        return Verdict(
            "user-error", [rule], message=first_line(text), detail={"phase": phase, "rule": rule}
        )
    if kind == "WrongResult":
        return Verdict(
            "wrong-result", [phase], message=first_line(text) or kind, detail={"phase": phase}
        )
    glue = phase == "load" or (
        phase == "compile" and not error.get("compiling", True) and kind in HARNESS_TYPES
    )
    if glue:
        shown = f"{kind}: {first_line(text)}"
        return Verdict(
            "harness-error",
            [phase],
            normalize(shown),
            f"{phase}: {shown} (raised before Triton compiled anything: the harness or the "
            "reproducer's glue, not the compiler)",
            {"phase": phase, "exception": kind},
        )
    if phase == "compile":
        stage = error.get("stage")
        pass_name = failed_pass(stderr)
        raw = meaningful_message(stderr) or python_message(error)
        where = f"pass {pass_name} failed" if pass_name else ""
        shown = ": ".join(p for p in (where, _shown(raw)) if p) or kind
        return Verdict(
            "compiler-error",
            [stage, pass_name],
            normalize(raw) if raw else "",
            f"{stage or 'compile'}: {shown}",
            {
                "phase": phase,
                "stage": stage,
                "pass": pass_name,
                "exception": kind,
                "diagnostic": _shown(raw),
            },
        )
    line = first_line(text)
    return Verdict(
        "runtime-error",
        [phase, kind],
        normalize(line),
        f"{phase}: {kind}: {line}",
        {"phase": phase, "exception": kind},
    )
