"""The ``repro`` command. A thin door onto the engine.

Exit status of ``repro run``:
  0  nothing changed against the baseline
  1  a failure that the baseline does not list (a regression)
  2  bad usage or bad input (one line on stderr, never a traceback)
  3  a known bug no longer reproduces (fixed upstream)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from suite.cli import explore as explore_cli
from suite.cli import gate as gate_cli
from suite.cli import releases as releases_cli
from suite.cli import replay as replay_cli
from suite.cli import report as report_cli
from suite.cli.options import add_case_options, case_options
from suite.engine.baseline import EXIT_USAGE
from suite.engine.outcome import CaseResult
from suite.errors import UsageError


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="repro", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = commands.add_parser("run", help="run reproducers in isolation, compare with the baseline")
    add_case_options(run)
    run.add_argument(
        "--resume",
        nargs="?",
        const="",
        default=None,
        metavar="RUN",
        help="finish an interrupted run (default: the newest under the output root)",
    )
    run.add_argument("--python", help="interpreter whose Triton runs the cases")
    run.add_argument(
        "--shard",
        default="",
        metavar="K/N",
        help="run only shard K of N (deterministic split for CI runners)",
    )
    run.add_argument("--keep-passing", action="store_true", help="keep output of passing cases")

    listing = commands.add_parser("list", help="show the catalogue of reproducers")
    listing.add_argument("repros", nargs="*", help="reproducer ids or files (default: all)")
    explore_cli.add_parsers(commands)
    releases_cli.add_parsers(commands)
    releases_cli.add_dashboard_parser(commands)
    gate_cli.add_parsers(commands)
    report_cli.add_parsers(commands)
    replay_cli.add_parsers(commands)
    return parser


def cmd_run(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.engine import session as engine

    selection, execution, baseline = case_options(
        args, python=args.python or "", shard=args.shard, keep_passing=args.keep_passing
    )
    with render.progress() as bar:
        task = bar.add_task("", total=None)

        def started(total: int, done: int) -> None:
            bar.update(task, total=total, completed=done)

        def finished(result: CaseResult) -> None:
            label = render.escape(f"{result.case_id} {result.outcome.label}")
            bar.update(task, advance=1, description=label)

        outcome = engine.run(
            selection, Path(args.output), execution, baseline, args.resume, started, finished
        )
    render.console.print(render.results_table(outcome.results))
    env = outcome.environment
    render.console.print(
        f"triton {env['triton']} | python {env['python']} | gpu {env.get('gpu') or 'none'}"
    )
    render.console.print(render.summary_line(outcome.results, outcome.exit_status))
    render.console.print(f"results: {outcome.store.folder}")
    return outcome.exit_status


def cmd_list(args: argparse.Namespace) -> int:
    from rich.table import Table

    from suite.cli import render
    from suite.engine import discover

    table = Table(header_style="bold")
    for column in ("id", "family", "targets", "config sets", "needs", "title"):
        table.add_column(column, overflow="fold")
    for found in discover.select(args.repros):
        repro = found.repro
        needs = ["gpu to launch" if repro.launch_fn else "compile only", *repro.requires]
        if repro.gpu == "required":
            needs[0] = "gpu"
        table.add_row(
            render.escape(repro.id),
            repro.family,
            " ".join(repro.targets),
            " ".join(repro.configs),
            ", ".join(needs),
            repro.title,
        )
    render.console.print(table)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        commands = {
            "run": cmd_run,
            "list": cmd_list,
            "explore": explore_cli.cmd_explore,
            "findings": explore_cli.cmd_findings,
            "matrix": releases_cli.cmd_matrix,
            "bisect": releases_cli.cmd_bisect,
            "dashboard": releases_cli.cmd_dashboard,
            "gate": gate_cli.cmd_gate,
            "report": report_cli.cmd_report,
            "replay": replay_cli.cmd_replay,
        }
        return commands[args.command](args)
    except UsageError as exc:
        print(f"repro: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("repro: interrupted (repro run keeps finished cases: --resume)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
