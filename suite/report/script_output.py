"""The signature the suite reads from what ``repro.py`` printed.

``repro.py`` (``templates/repro.py.j2``) runs the call in a child, forwards the child's
output to its stderr and prints one line saying how the call ended (:data:`ENDED`). It
judges that output itself with the code of :mod:`suite.judgement` it carries; the suite reads
the ending and the output back and judges them with that same code, never with what the
script says of itself.
"""

from __future__ import annotations

import re
import signal

from suite.judgement import printed_signature

#: The line ``repro.py`` prints on stdout after the call: ``triton 3.5.0, sm_100: compile
#: failed (exit status 1)``; ``succeeded``, ``crashed (SIGABRT)``, ``hung (killed after 540 s)``.
ENDED = re.compile(
    r"^triton (?P<triton>\S+), (?P<target>\S+): (?P<phase>\w+) (?:(?P<ok>succeeded)"
    r"|failed \(exit status (?P<code>\d+)\)|crashed \((?P<signal>\w+)\)|(?P<hung>hung) .*)$",
    re.MULTILINE,
)


def signature_of_run(stdout: str, stderr: str) -> str | None:
    """The signature of what ``repro.py`` saw: its ending line (stdout) and the child's
    output (stderr), judged by :func:`suite.judgement.printed_signature`; ``None`` when it
    ended cleanly or printed no ending."""
    ended = ENDED.search(stdout)
    if ended is None:
        return None
    if ended.group("hung"):
        returncode = None
    elif ended.group("signal"):
        returncode = -signal.Signals[ended.group("signal")].value
    else:
        returncode = int(ended.group("code") or 0)
    return printed_signature(stderr, returncode)
