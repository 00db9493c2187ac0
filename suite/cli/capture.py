"""The ``repro capture`` command, for :mod:`suite.cli.main` to mount.

``repro capture [--all] [--output DIR] -- python my_script.py args...`` runs the program
unchanged with the capture hook (:mod:`suite.capture`), writes one reproducer file per
distinct failure, runs each in isolation and keeps it as a finding when it fails there
with the signature the program showed. ``repro report <finding> --verify`` goes on from
there.

Exit status: the program's own (128+N when signal N killed it), so that a wrapper script
behaves as before; 2 bad usage (no program given). What was captured is printed on
stderr (stdout stays the program's) and written to ``OUTPUT/captures/<stamp>/capture.json``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from suite.cli.options import DEFAULT_OUTPUT, add_isolation_options
from suite.errors import UsageError

if TYPE_CHECKING:
    from suite.capture.session import Capture


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """Add ``capture`` to ``commands``. Imports nothing heavy."""
    capture = commands.add_parser(
        "capture", help="run a program and turn each Triton failure in it into a reproducer"
    )
    capture.add_argument(
        "--all",
        action="store_true",
        dest="keep_all",
        help="keep the successful compiles too, and each autotuned kernel's config list",
    )
    capture.add_argument(
        "-o",
        "--output",
        default=DEFAULT_OUTPUT,
        help="output root: OUTPUT/captures/<stamp>/, runs under OUTPUT/runs, findings "
        "under OUTPUT/findings (default: reports)",
    )
    capture.add_argument(
        "--no-confirm",
        action="store_true",
        help="write the reproducers without running them in isolation",
    )
    add_isolation_options(capture, timeout=600.0)
    capture.add_argument(
        "program", nargs=argparse.REMAINDER, help="-- then the program and its arguments"
    )


def cmd_capture(args: argparse.Namespace) -> int:
    from suite.capture import session
    from suite.engine.runner import Execution

    command = list(args.program)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise UsageError("capture: no program given (repro capture -- python my_script.py)")
    output = Path(args.output).absolute()
    capture = session.Capture(session.new_folder(output), output)
    session.run_program(capture, command, args.keep_all)
    session.write_reproducers(capture)

    def say(line: str) -> None:
        print(f"repro capture: {line}", file=sys.stderr)

    if not args.no_confirm:
        session.confirm(capture, Execution(workers=1), say)
    if args.keep_all:
        session.write_kernel_reproducers(capture)
    session.write_summary(capture)
    _tell(capture, say)
    assert capture.program is not None
    return capture.program.exit_status


def _tell(capture: Capture, say: Callable[[str], None]) -> None:
    failures = len(capture.captured)
    say(f"{capture.compiles_recorded} compile record(s), {failures} distinct failure(s)")
    for captured in capture.captured:
        failure = captured.failure
        where = f"{failure.kernel.name} ({failure.phase}, {failure.target}): {failure.signature}"
        if captured.file is None:
            say(f"{where}: no reproducer ({captured.not_generated})")
        elif captured.finding:
            say(f"{where}\n  {captured.file}\n  next: repro report {captured.finding} --verify")
        else:
            say(f"{where}\n  {captured.file} (not confirmed in isolation: not a finding)")
    for path in capture.kernel_reproducers:
        say(f"kernel that compiled: {path}")
    for path in capture.autotune_configs:
        say(f"autotune configs: {path} (repro gate --current)")
    if capture.hook_errors:
        say(f"the hook had errors: {capture.folder / 'hook-errors.txt'}")
    say(f"summary: {capture.folder / 'capture.json'}")
