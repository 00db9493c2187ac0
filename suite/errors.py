"""The error types the command line turns into a single line and an exit status: bad usage
(2) and a harness that cannot go on (4); and every exit status of ``repro``, the one home of
the contract (``repro --help`` shows :data:`EXIT_STATUSES`)."""

from __future__ import annotations


class UsageError(Exception):
    """Bad usage or bad input: an unknown reproducer or target, a malformed file.

    The message is one line that names the problem; the CLI prints it and
    exits 2, never with a traceback.
    """


class HarnessError(Exception):
    """The suite's own environment stopped it (the GPU stopped accepting new processes, say):
    never a bug of the code under test. One line, exit 4."""


EXIT_OK = 0
"""Nothing changed against the baseline (the command did its work)."""

EXIT_REGRESSION = 1
"""A failure that the baseline does not list: a regression. Never the tool's own failure."""

EXIT_USAGE = 2
"""The exit status of bad usage or bad input (a :class:`UsageError`), in every command."""

EXIT_FIXED = 3
"""A known bug with no known fix no longer reproduces: fixed upstream."""

EXIT_HARNESS = 4
"""The exit status of a harness error (a :class:`HarnessError`, or a run's harness-error
case), in every command."""

EXIT_INTERNAL = 70
"""The exit status of an unexpected internal error (sysexits' EX_SOFTWARE), never 1."""

EXIT_STATUSES: tuple[tuple[str, str], ...] = (
    (str(EXIT_OK), "nothing changed against the baseline"),
    (str(EXIT_REGRESSION), "a failure that the baseline does not list (a regression)"),
    (str(EXIT_USAGE), "bad usage or bad input (one line on stderr, never a traceback)"),
    (str(EXIT_FIXED), "a known bug no longer reproduces (fixed upstream)"),
    (
        str(EXIT_HARNESS),
        "a harness error: the suite, a reproducer's glue or the machine failed before Triton "
        "compiled (shown, never a finding)",
    ),
    (
        str(EXIT_INTERNAL),
        "an internal error: the tool broke (one line on stderr; the traceback is kept in a file)",
    ),
    ("130, 143", "stopped by SIGINT, SIGTERM (finished cases are kept: --resume)"),
)
"""Every exit status and what it means, in the order ``repro --help`` lists them."""
