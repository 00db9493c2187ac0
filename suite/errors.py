"""The error types the command line turns into a single line and an exit status: bad usage
(2) and a harness that cannot go on (4)."""

from __future__ import annotations


class UsageError(Exception):
    """Bad usage or bad input: an unknown reproducer or target, a malformed file.

    The message is one line that names the problem; the CLI prints it and
    exits 2, never with a traceback.
    """


class HarnessError(Exception):
    """The suite's own environment stopped it (the GPU stopped accepting new processes, say):
    never a bug of the code under test. One line, exit 4."""


EXIT_USAGE = 2
"""The exit status of bad usage or bad input (a :class:`UsageError`), in every command."""

EXIT_HARNESS = 4
"""The exit status of a harness error (a :class:`HarnessError`, or a run's harness-error
case), in every command."""

EXIT_INTERNAL = 70
"""The exit status of an unexpected internal error (sysexits' EX_SOFTWARE), never 1."""
