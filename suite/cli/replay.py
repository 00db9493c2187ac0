"""The ``repro replay`` command, for :mod:`suite.cli.main` to mount.

``repro replay FINDING-or-RESULT`` replays the MLIR reproducer of one failing case pass
by pass under a Triton release's own bindings, names the first pass that fails, and
writes ``before-<pass>.mlir``, ``replay.py``, a lit test and ``replay.json`` into
``<output>/<id>/`` (:mod:`suite.replay.replay`); ``--reduce`` also shrinks the IR.

Exit status: 0 the failing pass was found and confirmed alone; 1 the replay ran but no
pass failed (or the failure did not repeat alone); 2 bad usage or input, nothing to
replay (the case passes, or left no MLIR reproducer), an IR that does not parse under the
chosen release, or a pass that release has no binding for (one line on stderr).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from suite.cli.options import (
    DEFAULT_OUTPUT,
    Work,
    add_isolation_options,
    add_old_spelling,
    add_time_budget_option,
    add_timeout_option,
    add_wheelhouse_option,
    user_path,
)
from suite.cli.render import add_output_options
from suite.errors import UsageError
from suite.files import scratch_folder

if TYPE_CHECKING:
    from suite.engine import CaseResult


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """Add ``replay`` to ``commands``. Imports nothing heavy."""
    replay = commands.add_parser(
        "replay",
        help="replay a failure's MLIR reproducer pass by pass; find, confirm and reduce the pass",
    )
    replay.add_argument(
        "subject",
        metavar="FINDING-or-RESULT",
        help="a finding id, a finding file path, or RUN_DIR:CASE_ID (findings under "
        "OUTPUT/findings)",
    )
    which = replay.add_mutually_exclusive_group()
    which.add_argument(
        "--python", type=user_path, help="interpreter whose Triton replays the passes"
    )
    which.add_argument(
        "--triton", metavar="VERSION", help="replay under this release (a cached venv)"
    )
    add_wheelhouse_option(replay)
    replay.add_argument(
        "-o",
        "--output",
        type=user_path,
        default=DEFAULT_OUTPUT,
        help="output root: findings are read from OUTPUT/findings, files are written to "
        "OUTPUT/<id>/ (default: reports)",
    )
    replay.add_argument(
        "--reduce", action="store_true", help="shrink the IR while the pass fails the same way"
    )
    replay.add_argument(
        "--max-tries",
        type=int,
        default=400,
        metavar="N",
        help="reduction: at most N candidates (default: 400)",
    )
    add_old_spelling(replay, "--budget-tries", "--max-tries")
    add_time_budget_option(replay, "reduction: at most S seconds", 600.0)
    add_old_spelling(replay, "--budget-s", "--time-budget")
    add_timeout_option(replay, Work.COMPILE, "pass child")
    add_isolation_options(replay)
    add_output_options(replay)


def cmd_replay(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.replay.case import check_interpreter, recorded_reproducers, replay_case_of
    from suite.replay.replay import replay
    from suite.report.folder import default_folder
    from suite.subject import subject_of

    if args.max_tries < 1:
        raise UsageError("--max-tries must be at least 1")
    if args.time_budget <= 0 or args.timeout <= 0:
        raise UsageError("--time-budget and --timeout must be positive")
    check_interpreter(args.python, args.triton)
    output = Path(args.output)
    # What can be found wrong without running anything is, before the first progress line.
    subject = subject_of(args.subject, output)
    recorded_reproducers(subject)
    out = render.output_for(args)
    with (
        scratch_folder("replay-case") as scratch,
        out.steps("replay") as steps,
    ):
        steps.begin(f"resolving {args.subject}")
        case = replay_case_of(subject, Path(scratch), python=args.python, triton=args.triton)
        for note in case.notes:
            out.note(note)
        done = replay(
            case,
            default_folder(output, case.report_id),
            reduce=args.reduce,
            budget_tries=args.max_tries,
            budget_s=args.time_budget,
            timeout_s=args.timeout,
            say=steps.advance,
        )
    out.show(
        render.View(
            data={
                "id": case.report_id,
                "folder": str(done.folder),
                "exit_status": done.exit_status,
                "record": str(done.folder / "replay.json"),
                **done.record,
            },
            lines=[_subject_line(case.result), *done.lines],
        )
    )
    return done.exit_status


def _subject_line(result: CaseResult) -> str:
    """The case replayed, on one line: its full case id and its signature (or outcome)."""
    return f"{result.case_id} {result.signature or result.outcome.label}"
