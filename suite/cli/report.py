"""The ``repro report`` command, for :mod:`suite.cli.main` to mount.

``repro report FINDING-or-RESULT`` writes an upstream-ready report folder
(:mod:`suite.report.report`): a Triton issue, an NVIDIA report, a comment on a known upstream
issue, or, for a user error, an explanation and never an issue.

Exit status: 0 the report was written; 1 ``--verify`` did not see the bug reproduce (the
report is written but not ready), or ``--format github`` was asked of a case with nothing
to file (a user error); 2 bad usage or input (one line on stderr), or a finding whose minimal
config, run again, does not fail the same way (stdout says so; nothing is written).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from suite.cli.options import (
    DEFAULT_OUTPUT,
    add_isolation_options,
    add_wheelhouse_option,
    user_path,
)
from suite.cli.render import add_output_options
from suite.errors import UsageError
from suite.files import scratch_folder

if TYPE_CHECKING:
    from suite.cli.render import Output, View
    from suite.engine import Baseline
    from suite.report.report import Written
    from suite.subject import NotReproduced, Subject


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """Add ``report`` to ``commands``. Imports nothing heavy."""
    report = commands.add_parser(
        "report", help="write an upstream-ready report of one finding or one run result"
    )
    report.add_argument(
        "subject",
        metavar="FINDING-or-RESULT",
        help="a finding id, a finding file path, or RUN_DIR:CASE_ID (findings under "
        "OUTPUT/findings), or a results.jsonl / run folder with --case",
    )
    report.add_argument("--case", help="the case id, with a results.jsonl or a run folder")
    report.add_argument(
        "-o",
        "--output",
        type=user_path,
        default=DEFAULT_OUTPUT,
        help="output root: findings are read from OUTPUT/findings, the report is written to "
        "OUTPUT/<id>/ (default: reports)",
    )
    report.add_argument("--id", help="name of the report folder (default: the finding or case)")
    report.add_argument(
        "--verify",
        action="store_true",
        help="run repro.py in a clean venv holding only the affected Triton release",
    )
    report.add_argument(
        "--templates", type=user_path, help="folder of templates that replace the shipped ones"
    )
    add_isolation_options(report)
    add_wheelhouse_option(report)
    report.add_argument(
        "--baseline", type=user_path, help="expectations file (default: the shipped baseline)"
    )
    report.add_argument(
        "--python",
        type=user_path,
        help="interpreter to re-run a finding's minimal config under (default: its own)",
    )
    report.add_argument(
        "--no-rerun",
        action="store_true",
        help="do not re-run a finding's minimal config to capture its output",
    )
    add_output_options(
        report,
        extra={
            "github": "a title line, then the body, for `gh issue create --title ... --body-file -`"
        },
        old=("md",),  # the old name of the default
    )


def cmd_report(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.subject import subject_of

    templates, baseline = check_options(args)
    # Looked up before the first progress line: a subject that is not there is exit 2 alone.
    subject = subject_of(args.subject, Path(args.output), case=args.case)
    out = render.output_for(args)
    written = report_subject(args, subject, templates, baseline, out)
    if args.format == "github":
        return print_for_github(written)
    exit_status = (
        1 if args.verify and written.verification is not None and not written.verification.ok else 0
    )
    out.show(report_view(subject, written, exit_status))
    return exit_status


def check_options(args: argparse.Namespace) -> tuple[Path | None, Baseline]:
    """What can be found wrong with the options before any work: the templates folder and
    the baseline they name."""
    from suite.engine import Baseline, safe_name
    from suite.report.folder import check_report_folder, check_report_id, default_folder

    if args.id is not None and (not args.id or safe_name(args.id) != args.id):
        raise UsageError(f"--id {args.id!r}: use letters, digits, '.', '_' and '-'")
    if args.id is not None:
        check_report_folder(default_folder(Path(args.output), check_report_id(args.id)))
    templates = Path(args.templates) if args.templates else None
    if templates is not None and not templates.is_dir():
        raise UsageError(f"--templates: not a folder: {templates}")
    if args.python and not Path(args.python).exists():
        raise UsageError(f"--python: no such interpreter: {args.python}")
    return templates, Baseline.load(Path(args.baseline) if args.baseline else None)


def report_subject(
    args: argparse.Namespace,
    subject: Subject,
    templates: Path | None,
    baseline: Baseline,
    out: Output,
) -> Written:
    """Run the minimal config again (unless ``--no-rerun``), then gather and render the
    report folder, with progress."""
    from suite.report.folder import default_folder
    from suite.report.gather import rerun
    from suite.report.report import write_report
    from suite.subject import NotReproduced

    with (
        scratch_folder("report") as scratch,
        out.steps("report", 2) as steps,
    ):
        steps.begin(f"resolving {args.subject}")
        try:
            reran = rerun(subject, args.python, Path(scratch), skip=args.no_rerun)
        except NotReproduced as refusal:
            steps.advance("not reproduced")
            _show_refusal(out, subject.result.case_id, refusal)
            raise
        steps.advance(f"subject {subject.report_id}")
        subject.report_id = args.id or subject.report_id
        steps.begin(
            "writing and verifying repro.py in a clean venv (built on first use: minutes)"
            if args.verify
            else "writing"
        )
        written = write_report(
            subject,
            default_folder(Path(args.output), subject.report_id),
            templates=templates,
            baseline=baseline,
            verify_release=args.verify,
            reran=reran,
        )
        steps.advance(f"{written.kind} in {written.folder}")
    return written


def print_for_github(written: Written) -> int:
    """``--format github``: the title line, then the body; 1 (and what was written) when
    there is nothing to file."""
    from suite.report.report import describe, github_text

    if not written.body_file:
        for line in describe(written):
            print(line)
        return 1
    print(github_text(written), end="")
    return 0


def report_view(subject: Subject, written: Written, exit_status: int) -> View:
    """What ``repro report`` shows: the case, what was written, its status."""
    from suite.cli import render
    from suite.report.report import describe

    result = subject.result
    return render.View(
        data={
            "id": subject.report_id,
            "case_id": result.case_id,
            "signature": str(result.signature) if result.signature else None,
            "folder": str(written.folder),
            "kind": written.kind,
            "status": written.status,
            "triage": written.triage.label,
            "title": written.title,
            "body_file": str(written.folder / written.body_file) if written.body_file else None,
            "files": written.files,
            "verification": written.verification.to_json() if written.verification else None,
            "upstream": written.upstream or None,
            "exit_status": exit_status,
        },
        lines=[f"{result.case_id} {result.signature or result.outcome.label}", *describe(written)],
    )


def _show_refusal(out: Output, case_id: str, refusal: NotReproduced) -> None:
    """What a refused report says on stdout (the error line goes to stderr): the finding did
    not fail the same way when run again, so nothing was written."""
    from suite.cli import render

    out.show(
        render.View(
            data={"case_id": case_id, "reported": False, "reason": str(refusal), "exit_status": 2},
            lines=[f"{case_id} not reported: {refusal}"],
        )
    )
