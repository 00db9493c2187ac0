"""``repro explain``: the first pass where a failure and the variant that avoids it part."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from suite.cli.options import DEFAULT_OUTPUT, Work, add_isolation_options, user_path
from suite.cli.render import add_output_options
from suite.errors import UsageError


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """Add ``explain`` to ``commands``. Imports nothing heavy."""
    explain = commands.add_parser(
        "explain",
        help="compile a failure and a variant that avoids it (num_stages=1, say), keep both "
        "TTGIR and PTX, and name the first pass whose output differs",
    )
    explain.add_argument(
        "subject",
        metavar="FINDING-or-RESULT",
        help="a finding id, a finding file path, or RUN_DIR:CASE_ID",
    )
    explain.add_argument(
        "--variant",
        action="append",
        required=True,
        metavar="PARAM=VALUE",
        help="what the passing variant changes, e.g. num_stages=1 (repeatable)",
    )
    explain.add_argument(
        "--python", type=user_path, help="interpreter whose Triton compiles (default: recorded)"
    )
    explain.add_argument(
        "-o",
        "--output",
        type=user_path,
        default=DEFAULT_OUTPUT,
        help="output root: findings under OUTPUT/findings, files in OUTPUT/<id>/explain/ "
        "(the report folder; default: reports)",
    )
    add_isolation_options(explain, Work.COMPILE)
    add_output_options(explain)


def cmd_explain(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.engine import Bounds, Execution
    from suite.explain.explain import explain
    from suite.report.folder import check_report_folder, default_folder
    from suite.subject import interpreter_for, subject_of

    change = {}
    for item in args.variant:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise UsageError(f"--variant {item!r}: say PARAM=VALUE (e.g. num_stages=1)")
        change[key.strip()] = value.strip()
    if args.python and not Path(args.python).exists():
        raise UsageError(f"--python: no such interpreter: {args.python}")
    output = Path(args.output)
    subject = subject_of(args.subject, output)
    found = subject.load_reproducer()
    if found is None:
        raise UsageError(f"the reproducer {subject.result.repro!r} cannot be loaded again")
    python = interpreter_for(subject.environment, args.python) or sys.executable
    execution = Execution(
        python=python,
        bounds=Bounds(timeout_s=args.timeout, memory_bytes=int(args.memory_cap * (1 << 30))),
        warm=False,
    )
    report = default_folder(output, subject.report_id)
    check_report_folder(report)  # written only beside a report or a replay, or alone
    folder = report / "explain"
    out = render.output_for(args)
    with out.steps("explain", 1) as steps:
        steps.begin(f"{subject.result.case_id}: compiling both variants with per-pass dumps")
        done = explain(
            found, subject.result.target, subject.result.config, change, folder, execution
        )
        steps.advance(done.first.line())
    out.show(render.View(data=done.to_json(), lines=done.lines()))
    return 0
