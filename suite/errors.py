"""The one error type the command line turns into a single line and exit status 2."""

from __future__ import annotations


class UsageError(Exception):
    """Bad usage or bad input: an unknown reproducer or target, a malformed file.

    The message is one line that names the problem; the CLI prints it and
    exits 2, never with a traceback.
    """


EXIT_USAGE = 2
"""The exit status of bad usage or bad input (a :class:`UsageError`), in every command."""

EXIT_INTERNAL = 70
"""The exit status of an unexpected internal error (sysexits' EX_SOFTWARE), never 1."""
