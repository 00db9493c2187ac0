"""What every ``repro`` command shares at its edge: input checks, signals, exit codes.

Exit status of every command (``suite.errors.EXIT_STATUSES`` says it for ``repro --help``):

- 0, 1, 3: the command's answer (for ``repro run``: nothing changed, a regression, a
  known bug fixed upstream);
- 2: bad usage or input, one line on stderr naming the problem, nothing half-written;
- 4 (``EXIT_HARNESS``): a harness error, one line on stderr: the suite, a reproducer's glue
  or the machine failed before Triton compiled; never a finding;
- 70 (``EXIT_INTERNAL``, sysexits' EX_SOFTWARE): the tool itself broke; one line on
  stderr names the file that holds the traceback. Never 1: a broken tool is not a
  regression;
- 130 / 143: stopped by SIGINT / SIGTERM; running cases were killed, finished ones
  recorded, and ``repro run --resume`` finishes the run.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import math
import os
import re
import signal
import sys
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from suite.errors import EXIT_HARNESS, EXIT_INTERNAL, EXIT_USAGE, UsageError
from suite.files import cache_root

# Options that must be a positive, finite number wherever a command has them.
POSITIVE = frozenset(
    {
        "timeout",
        "memory_cap",
        "time_budget",
        "max_tries",
        "workers",
        "max_examples",
        "suggest_count",
        "input_sets",
    }
)


class Stopped(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived: the command stops at once and exits 128 + the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.exit_status = 128 + signum


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def check_arguments(args: argparse.Namespace) -> None:
    """Reject, in one line, what no command can use: a number that is not finite or not
    positive, an interpreter that does not exist, an output root that cannot be written."""
    for name, value in vars(args).items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if not math.isfinite(value):
            raise UsageError(f"{_option(name)} {value}: not a finite number")
        if name in POSITIVE and value <= 0:
            raise UsageError(f"{_option(name)} {value}: must be positive")
    pythons = [getattr(args, "python", None), *(getattr(args, "pythons", None) or ())]
    for python in filter(None, pythons):
        if not (os.path.isfile(python) and os.access(python, os.X_OK)):
            raise UsageError(f"--python {python}: no such interpreter")
    output = getattr(args, "output", None)
    if isinstance(output, str):
        check_output_root(Path(output))


def choose_execution(args: argparse.Namespace) -> None:
    """The command's --timeout, --memory-cap and --isolation become the bounds of every
    execution of reproducer code it makes (``suite.engine.defaults.DEFAULTS``)."""
    from suite.engine import DEFAULTS, Bounds, choose_defaults

    timeout = getattr(args, "timeout", None)
    memory_cap = getattr(args, "memory_cap", None)
    bounds = Bounds(
        timeout_s=DEFAULTS.bounds.timeout_s if timeout is None else float(timeout),
        memory_bytes=(
            DEFAULTS.bounds.memory_bytes if memory_cap is None else int(memory_cap * (1 << 30))
        ),
    )
    choose_defaults(bounds, getattr(args, "isolation", "warm") != "fresh")


def check_output_root(root: Path) -> None:
    """``root`` is (or can become) a folder this process may write in."""
    if root.exists():
        if not root.is_dir():
            raise UsageError(f"--output {root}: not a folder")
        if not os.access(root, os.W_OK | os.X_OK):
            raise UsageError(f"--output {root}: not writable")
        return
    parent = root.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise UsageError(f"--output {root}: {parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"--output {root}: cannot create it under {parent} (not writable)")


@contextlib.contextmanager
def signals_stop() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Stopped` in the main thread (once; a second one
    while stopping is ignored, so the partial results still get written)."""
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        if stopping:
            return
        stopping = True
        raise Stopped(signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def check_process() -> None:
    """What every command needs from its process: an open stdout and a working folder that
    still exists."""
    if sys.stdout is None or sys.stderr is None:
        raise UsageError("stdout or stderr is closed: repro has nowhere to write")
    try:
        os.getcwd()
    except OSError:
        raise UsageError("the working folder was deleted: cd to a folder that exists") from None


def check_cache_root() -> None:
    """The cache folder (``$XDG_CACHE_HOME`` or ``$HOME/.cache``) exists or can be made, and
    can be written."""
    root = cache_root()
    if not root.is_absolute():
        raise UsageError(f"cache folder {root} is not absolute: set HOME or XDG_CACHE_HOME")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"cache folder {root} cannot be made ({exc.strerror}): set XDG_CACHE_HOME"
        ) from None
    if not os.access(root, os.W_OK | os.X_OK):
        raise UsageError(f"cache folder {root} is not writable: set XDG_CACHE_HOME")


def silence_stdout() -> None:
    """Point stdout at /dev/null: what is still buffered for a closed pipe is dropped, and
    the interpreter's last flush does not print a second line."""
    with contextlib.suppress(OSError, AttributeError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())


# What finishes the work a signal stopped, by command (nothing for the others).
_RESUME = {
    "run": "repro run --resume finishes the run",
    "reduce": "the same repro reduce resumes from the best so far",
    "explore": "the findings met so far are kept",
    "matrix": "the releases finished so far are kept",
}


def resume_hint(argv: Sequence[str] | None) -> str:
    """`` (how to finish)`` for the command in ``argv`` (the process's own when None)."""
    words = list(sys.argv[1:] if argv is None else argv)
    command = next((w for w in words if not w.startswith("-")), "")
    hint = _RESUME.get(command)
    return f" ({hint})" if hint else ""


# What a terminal would act on or a reader misread: C0 and C1 controls (an ESC sequence
# clears the screen, a carriage return overwrites a line, a line break forges one),
# invisible format characters and bidi overrides (U+202E shows text reversed).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def printable(text: object, lines: bool = False) -> str:
    """``text`` for a terminal or a log: every control, format and bidi character written
    as its escape (``\\x1b``, ``\\n``, ``\\u202e``), so text from a case is shown, never obeyed.
    ``lines``: a block of lines (a rendered report) keeps its line breaks."""
    if lines:
        return "\n".join(printable(line) for line in str(text).split("\n"))
    return _UNPRINTABLE.sub(_escaped, str(text))


def _escaped(match: re.Match[str]) -> str:
    return match.group(0).encode("unicode_escape").decode("ascii")


def one_line(message: object) -> str:
    return printable(" ".join(str(message).split())) or "(no message)"


@dataclass(frozen=True)
class StorageFault:
    """A file the command could not read or write, in one line: the user's input (exit 2:
    ``--output`` read-only, a link loop) or the machine's (exit 4: a full disk, no file
    descriptors left)."""

    exit_status: int
    line: str


# Whose fault each errno is: the path the user gave, or the machine the command runs on.
_INPUT_ERRNOS = frozenset(
    {errno.EROFS, errno.ELOOP, errno.ENOTDIR, errno.EACCES, errno.EPERM, errno.ENAMETOOLONG}
)
_MACHINE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EMFILE, errno.ENFILE, errno.EIO, errno.EFBIG}
)


def storage_fault(exc: BaseException) -> StorageFault | None:
    """The one line for a storage error (None for any other failure: that one is the tool's
    own). pathlib before Python 3.13 says a link loop with a RuntimeError."""
    if isinstance(exc, RuntimeError) and str(exc).startswith("Symlink loop from "):
        where = str(exc).removeprefix("Symlink loop from ").strip("'")
        return StorageFault(EXIT_USAGE, f"error: {printable(where)}: a link loop (ELOOP)")
    if not isinstance(exc, OSError) or exc.errno not in _INPUT_ERRNOS | _MACHINE_ERRNOS:
        return None
    name = errno.errorcode[exc.errno]
    where = f"{printable(exc.filename)}: " if exc.filename is not None else ""
    said = f"{where}{exc.strerror or os.strerror(exc.errno)} ({name})"
    if exc.errno in _INPUT_ERRNOS:
        return StorageFault(EXIT_USAGE, f"error: {said}")
    return StorageFault(EXIT_HARNESS, f"harness error: {said}")


def internal_error(exc: BaseException) -> int:
    """Keep the traceback in a file, say where in one line, exit ``EXIT_INTERNAL``."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    name = f"internal-error-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"
    saved = "(could not be saved)"
    for folder in (cache_root() / "crashes", Path(os.environ.get("TMPDIR", "/tmp"))):
        with contextlib.suppress(OSError):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(f"repro {' '.join(sys.argv[1:])}\n{text}")
            saved = str(folder / name)
            break
    first = one_line(f"{type(exc).__name__}: {exc}")[:300]
    print(
        f"repro: internal error (a bug in repro, not in the input): {first}; traceback: {saved}",
        file=sys.stderr,
    )
    return EXIT_INTERNAL
