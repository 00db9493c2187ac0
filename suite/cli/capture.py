"""The ``repro capture`` command, for :mod:`suite.cli.main` to mount.

``repro capture [--all] [--output DIR] -- python my_script.py args...`` runs the program
unchanged with the capture hook (:mod:`suite.capture`), writes one reproducer file per
distinct failure, runs each in isolation and keeps it as a finding when it fails there
with the signature the program showed. ``repro report <finding> --verify`` goes on from
there.

Exit status: the program's own (128+N when signal N killed it), so that a wrapper script
behaves as before; 2 bad usage (no program given, or no such program). What was captured
is said on stderr (stdout stays the program's) and written to
``OUTPUT/captures/<stamp>/capture.json``. With ``--json``, stdout carries only that
document and the program's stdout goes to stderr.

Bounds: the program runs with no timeout and no memory cap unless ``--timeout`` /
``--memory-cap`` are given; the isolated confirmation runs take the same options, or the
usual case bounds (600 s, 8 GiB) when they are not given.
"""

from __future__ import annotations

import argparse
import os
import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from suite.cli.options import DEFAULT_OUTPUT, Work, add_isolation_options, user_path
from suite.cli.render import add_output_options
from suite.errors import UsageError

if TYPE_CHECKING:
    from suite.capture.generate import Failure
    from suite.capture.session import Capture

UNSEEN_TAIL = 2000  # characters of a dead compile's output shown on stderr


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
        type=user_path,
        default=DEFAULT_OUTPUT,
        help="output root: OUTPUT/captures/<stamp>/, runs under OUTPUT/runs, findings "
        "under OUTPUT/findings (default: reports)",
    )
    capture.add_argument(
        "--no-confirm",
        action="store_true",
        help="write the reproducers without running them in isolation",
    )
    capture.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        default=None,
        help="seconds for the program and for each isolated confirmation (default: the "
        f"program runs unbounded, a confirmation {Work.CASE.value:g})",
    )
    capture.add_argument(
        "--memory-cap",
        type=float,
        metavar="GIB",
        default=None,
        help="GiB of resident memory for the program's process tree and for each "
        "confirmation (default: none for the program, 8 for a confirmation)",
    )
    add_isolation_options(capture)
    add_output_options(capture)
    capture.add_argument(
        "program", nargs=argparse.REMAINDER, help="-- then the program and its arguments"
    )


def cmd_capture(args: argparse.Namespace) -> int:
    from suite.capture import program, session
    from suite.cli import render
    from suite.engine import Execution

    command = list(args.program)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise UsageError("capture: no program given (repro capture -- python my_script.py)")
    if shutil.which(command[0]) is None and not os.access(command[0], os.X_OK):
        raise UsageError(f"capture: {command[0]}: no such program")
    out = render.output_for(args)
    as_json = out.format == "json"
    output = Path(args.output)
    memory = None if args.memory_cap is None else int(args.memory_cap * (1 << 30))
    bounds = program.program_bounds(args.timeout, memory)
    capture = session.Capture(session.new_folder(output), output)
    out.detail(f"repro capture: {capture.folder}; the program's bounds: {_bounds(bounds)}")
    session.run_program(capture, command, args.keep_all, bounds, stdout_to_stderr=as_json)
    session.write_reproducers(capture)

    def say(line: str) -> None:
        out.note(f"repro capture: {line}")

    assert capture.program is not None
    if capture.program.stopped:
        say("stopped by SIGTERM: the reproducers are written but not run in isolation")
    elif not args.no_confirm:
        session.confirm(capture, Execution(workers=1), say)
    if args.keep_all:
        session.write_kernel_reproducers(capture)
    summary = session.write_summary(capture)
    _tell(capture, say, out.detail)
    if as_json:
        out.show(render.View(data=summary))
    return capture.program.exit_status


def _died_with(failure: Failure) -> str:
    """The tail of what a compile wrote before its process died inside it: held in the
    hook's log, never copied back to where the program's descriptors pointed."""
    from suite.capture.generate import compile_stderr

    record = failure.compile
    if record is None or record.output is None or record.output.complete:
        return ""
    return compile_stderr(record).strip()[-UNSEEN_TAIL:]


def _bounds(bounds: object) -> str:
    timeout = getattr(bounds, "timeout_s", None)
    memory = getattr(bounds, "memory_bytes", None)
    shown_timeout = "no timeout" if timeout in (None, float("inf")) else f"timeout {timeout:g} s"
    shown_memory = "no memory cap" if memory is None else f"memory cap {memory / (1 << 30):g} GiB"
    return f"{shown_timeout}, {shown_memory}"


def _tell(capture: Capture, say: Callable[[str], None], detail: Callable[[str], None]) -> None:
    ran = capture.program
    assert ran is not None
    if ran.timed_out:
        say(f"the program ran past --timeout and was killed (exit {ran.exit_status})")
    if ran.memory_exceeded:
        say(f"the program's processes went over --memory-cap and were killed ({ran.exit_status})")
    if ran.left_behind:
        say(f"{ran.left_behind} process(es) the program left behind were killed")
    failures = len(capture.captured)
    say(f"{capture.compiles_recorded} compile record(s), {failures} distinct failure(s)")
    for captured in capture.captured:
        failure = captured.failure
        later = ", surfaced after the launch" if failure.deferred else ""
        if captured.result_ref:  # the case that ran it in isolation, greppable with its signature
            case_id = captured.result_ref.rsplit(":", 1)[-1]
            isolated = captured.isolated or captured.isolated_outcome
            seen = "" if isolated == failure.signature else f"; the program's {failure.signature}"
            kernel = f"kernel {failure.kernel.name} ({failure.phase}{later})"
            where = f"{case_id} {isolated}: {kernel}{seen}"
        else:
            where = f"{failure.kernel.name} ({failure.phase}{later}, {failure.target}): "
            where += failure.signature
        detail(f"  record: {failure.path}")
        unseen = _died_with(failure)
        if unseen:
            say(
                f"{failure.kernel.name}: its process died inside the compile; what the compiler"
                f" wrote then (teed by the hook: the program's output got it too):\n"
                + textwrap.indent(unseen, "  | ")
            )
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
