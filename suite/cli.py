"""The ``repro`` command. A thin door onto the engine.

Exit status of ``repro run``:
  0  nothing changed against the baseline
  1  a failure that the baseline does not list (a regression)
  2  bad usage or bad input (one line on stderr, never a traceback)
  3  a known bug no longer reproduces (fixed upstream)
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from suite import explore_cli
from suite.baseline import EXIT_USAGE, Baseline
from suite.errors import UsageError
from suite.isolate import Bounds
from suite.outcome import CaseResult


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _split(values: Sequence[str] | None) -> list[str]:
    return [v for value in values or () for v in value.split(",") if v]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="repro", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = commands.add_parser(
        "run", help="run reproducers in isolation and compare with the baseline"
    )
    run.add_argument("repros", nargs="*", help="reproducer ids or reproducer files (default: all)")
    run.add_argument("-t", "--target", action="append", help="target(s), e.g. sm_100 (repeatable)")
    run.add_argument("-c", "--configs", action="append", help="config set(s) of the reproducers")
    run.add_argument("--config-file", help="YAML/TOML/JSON list of configs to run instead")
    run.add_argument(
        "--gpu",
        choices=("auto", "on", "off"),
        default="auto",
        help="launch and check cases on a visible GPU (default: auto)",
    )
    run.add_argument(
        "-j",
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="cases run at once (default: the core count)",
    )
    run.add_argument("--timeout", type=float, default=600.0, help="seconds per case (default 600)")
    run.add_argument(
        "--memory-cap", type=float, default=8.0, help="GiB of resident memory per case (default 8)"
    )
    run.add_argument("-o", "--output", default="reports", help="output root (default: reports)")
    run.add_argument(
        "--resume",
        nargs="?",
        const="",
        default=None,
        metavar="RUN",
        help="finish an interrupted run (default: the newest under the output root)",
    )
    run.add_argument("--baseline", help="expectations file (default: the shipped baseline)")
    run.add_argument("--python", help="interpreter whose Triton runs the cases")
    run.add_argument(
        "--shard",
        default="",
        metavar="K/N",
        help="run only shard K of N (deterministic split for CI runners)",
    )
    run.add_argument(
        "--isolation",
        choices=("warm", "fresh"),
        default="warm",
        help="fork cases from a warm template (default) or start fresh interpreters",
    )
    run.add_argument("--keep-passing", action="store_true", help="keep output of passing cases")

    listing = commands.add_parser("list", help="show the catalogue of reproducers")
    listing.add_argument("repros", nargs="*", help="reproducer ids or files (default: all)")
    explore_cli.add_parsers(commands)
    return parser


def cmd_run(args: argparse.Namespace) -> int:
    from suite import engine, render
    from suite.runner import Execution

    if args.workers < 1 or args.timeout <= 0 or args.memory_cap <= 0:
        raise UsageError("--workers, --timeout and --memory-cap must be positive")
    baseline = Baseline.load(Path(args.baseline) if args.baseline else None)
    selection = engine.Selection(
        repros=args.repros,
        targets=_split(args.target),
        sets=_split(args.configs),
        config_file=args.config_file,
        gpu=args.gpu,
        python=args.python or "",
        shard=args.shard,
    )
    execution = Execution(
        python=args.python or sys.executable,
        bounds=Bounds(timeout_s=args.timeout, memory_bytes=int(args.memory_cap * (1 << 30))),
        workers=args.workers,
        keep_passing=args.keep_passing,
        warm=args.isolation == "warm",
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

    from suite import discover, render

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
        }
        return commands[args.command](args)
    except UsageError as exc:
        print(f"repro: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("repro: interrupted; finished cases are kept (repro run --resume)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
