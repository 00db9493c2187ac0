"""What ``repro.py`` checks and prints, and the signature the suite reads from it.

``repro.py`` (``templates/repro.py.j2``) carries no signature code: it runs the call in a
child, forwards the child's output to its stderr, prints one line saying how the call
ended (:data:`ENDED`), one line per piece of evidence, and exits 1 when every piece was
seen. The evidence is literal text a maintainer can grep for: the failing pass, the
stable part of the message, the signal. The suite reads the ending and the output back
and judges them with :mod:`suite.engine.signature`, as it judges a case.
"""

from __future__ import annotations

import re

from suite.engine import (
    classify_diagnostic,
    classify_ending,
    describe_printed,
    family_of,
    message_of,
    named_pass,
)

#: The line ``repro.py`` prints on stdout after the call: ``triton 3.5.0, sm_100: compile
#: failed (exit status 1)``; ``succeeded``, ``crashed (SIGABRT)``, ``hung (killed after 540 s)``.
ENDED = re.compile(
    r"^triton (?P<triton>\S+), (?P<target>\S+): (?P<phase>\w+) (?:(?P<ok>succeeded)"
    r"|failed \(exit status (?P<code>\d+)\)|crashed \((?P<signal>\w+)\)|(?P<hung>hung) .*)$",
    re.MULTILINE,
)
#: The placeholders :func:`suite.engine.signature.normalize` puts in a message key, and the
#: words it adds around one: what is between them was printed as it stands.
_NOT_PRINTED = re.compile(
    r"<addr>|<path>|<tmp>|%V|\^bbN|#A|\?x|mMnNkK|\btN\b|\bN\b|\s\(UNREACHABLE\)$|^uncaught\s"
    r"|\sin\s\w+$"
)
#: The function a bare ``assert(false)`` failed in, as the signature adds it (printed before
#: the assertion, not after it: evidence of its own).
_FAILED_IN = re.compile(r"' failed in (\w+)$")
#: A literal piece shorter than this says too little to be evidence.
SHORTEST = 6
#: What each ending of the call prints, for evidence without a message.
_ENDING_WORD = {"compiler-error": "failed", "timeout": "hung", "runtime-error": "failed"}


def message_evidence(signature: str) -> str:
    """The longest part of the signature's message key that the failure printed verbatim
    ('' when none is long enough to tell one failure from another)."""
    pieces = [piece.strip() for piece in _NOT_PRINTED.split(message_of(signature))]
    longest = max(pieces, key=len, default="")
    return longest if len(longest) >= SHORTEST else ""


def evidence_for(signature: str) -> list[str]:
    """What ``repro.py`` must see for ``signature`` to show: the ptxas code, the failing pass,
    the message; else the signal or the exit status of a crash, the ending word ("failed",
    "hung") of anything else."""
    parts = family_of(signature).split(":")
    outcome = parts[0]
    evidence = [p for p in parts[1:] if re.fullmatch(r"C\d{4,5}", p)]
    failing_pass = named_pass(signature)
    if failing_pass:
        evidence.append(failing_pass)
    message = message_evidence(signature)
    if message:
        evidence.append(message)
        evidence += _FAILED_IN.findall(message_of(signature))
    elif not evidence:
        # A crash with nothing printed: the signal or the exit status is all there is. With a
        # message, the same abort comes back as an exception on releases that recover.
        evidence += [p for p in parts[1:2] if p.startswith("SIG")]
        evidence += [f"exit status {p[5:]}" for p in parts[1:2] if re.fullmatch(r"exit-\d+", p)]
    if not evidence and outcome in _ENDING_WORD:
        evidence.append(_ENDING_WORD[outcome])
    return evidence or [outcome]


def same_bug_evidence(signature: str) -> list[str]:
    """What ``repro.py`` must see to call it the same bug, by the engine's rule
    (:func:`suite.engine.same_bug.is_same_bug`): where the signature names the failing pass,
    the pass (and a ptxas code) alone, since its message changes between releases while
    the bug stays; else every piece of :func:`evidence_for`."""
    evidence = evidence_for(signature)
    failing_pass = named_pass(signature)
    if failing_pass is None:
        return evidence
    return [
        piece for piece in evidence if piece == failing_pass or re.fullmatch(r"C\d{4,5}", piece)
    ]


def signature_of_run(stdout: str, stderr: str) -> str | None:
    """The signature of what ``repro.py`` saw: its ending line (stdout) and the child's
    output (stderr), judged as the suite judges a case; ``None`` when it ended cleanly or
    printed no ending."""
    ended = ENDED.search(stdout)
    if ended is None:
        return None
    phase = ended.group("phase")
    verdict = classify_ending(
        describe_printed(stderr, phase) if ended.group("code") else None,
        stderr=stderr,
        phase=phase,
        returncode=int(ended.group("code") or 0),
        signal_name=ended.group("signal"),
        timed_out=bool(ended.group("hung")),
        done=bool(ended.group("ok")),
    )
    if verdict is None:
        verdict = classify_diagnostic(stderr)
    return verdict.signature if verdict is not None else None
