"""Whether two signatures are one bug: the same family and pass, or alike messages, or one
failure told two ways (a compile crash on one release, a compiler error on another).

Standard library only, like :mod:`suite.engine.signature`.
"""

from __future__ import annotations

import difflib
import re

from suite.engine.exception_facts import STAGE_FUNCTIONS
from suite.engine.signature import family_of, message_of

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


def is_same_bug(one: str, other: str) -> bool:
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

    The same holds for two crashes of which only one names the stage: the stage comes from
    faulthandler's frames, and a fresh child (where libtriton's LLVM installs its signal
    handlers over faulthandler's during the compile) loses them where a warm child (whose
    template loaded LLVM first) keeps them (``crash:SIGABRT:compile`` and
    ``crash:SIGABRT:compile:ptx`` with one ``LLVM ERROR``).
    """
    site_a, site_b = compile_failure_site(one), compile_failure_site(other)
    if site_a is None or site_b is None:
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
