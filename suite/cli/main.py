"""The ``repro`` command. A thin door onto the engine."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from suite.cli import completion, guard
from suite.cli.options import (
    Parser,
    add_case_options,
    apply_wheelhouse,
    case_options,
    user_path,
)
from suite.cli.render import add_output_options
from suite.errors import EXIT_HARNESS, EXIT_STATUSES, EXIT_USAGE, HarnessError, UsageError

if TYPE_CHECKING:
    from suite.engine import CaseResult


# Each command's door: the module of suite/cli that mounts it (``add_parsers``) and runs it
# (``cmd_<command>``); "" for the two of this module. Help lists the commands in this order.
# A start imports the chosen command's door alone, so that it pays for one door's imports
# and not for those of all twelve.
DOORS: dict[str, str] = {
    "run": "",
    "list": "",
    "explore": "explore",
    "findings": "explore",
    "matrix": "releases",
    "bisect": "releases",
    "dashboard": "releases",
    "gate": "gate",
    "report": "report",
    "replay": "replay",
    "reduce": "reduce",
    "explain": "explain",
    "doctor": "doctor",
    "capture": "capture",
    "baseline": "baseline",
    "nightly": "nightly",
    "merge": "nightly",
}


def _door(name: str) -> ModuleType:
    return importlib.import_module(f"suite.cli.{name}") if name else sys.modules[__name__]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command``'s door alone (all that parsing a
    command line that starts with it needs)."""
    parser = Parser(
        prog="repro", description=help_text(), formatter_class=argparse.RawTextHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for door in dict.fromkeys(DOORS.values()):
        if command is None or DOORS[command] == door:
            _door(door).add_parsers(commands)
    return parser


def help_text() -> str:
    """The description ``repro --help`` opens with: the exit statuses, from their one home."""
    width = max(len(status) for status, _ in EXIT_STATUSES)
    lines = [f"  {status:<{width}}  {meaning}" for status, meaning in EXIT_STATUSES]
    return "\n".join([__doc__ or "", "", "Exit status of ``repro run``:", *lines])


def add_parsers(commands: Any) -> None:
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
    run.add_argument("--python", type=user_path, help="interpreter whose Triton runs the cases")
    run.add_argument(
        "--shard",
        default="",
        metavar="K/N",
        help="run only shard K of N (deterministic split for CI runners)",
    )
    run.add_argument("--keep-passing", action="store_true", help="keep output of passing cases")
    add_output_options(run)

    listing = commands.add_parser("list", help="show the catalogue of reproducers")
    listing.add_argument("repros", nargs="*", help="reproducer ids or files (default: all)")
    add_output_options(listing)


def cmd_run(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.engine import session as engine

    selection, execution, baseline = case_options(
        args, python=args.python or "", shard=args.shard, keep_passing=args.keep_passing
    )
    out = render.output_for(args)
    with out.steps("cases") as steps:

        def finished(result: CaseResult) -> None:
            steps.advance(f"{result.case_id} {result.shown.label} {result.verdict}")

        outcome = engine.run(
            selection,
            Path(args.output),
            execution,
            baseline,
            args.resume,
            lambda total, done: steps.set_total(total, done),
            finished,
        )
    env = outcome.environment
    folder = outcome.store.folder
    out.show(
        render.View(
            data={
                "run": str(folder),
                "results": str(folder / "results.jsonl"),
                "junit": str(folder / "junit.xml"),
                "exit_status": outcome.exit_status,
                "environment": {
                    "triton": env.triton,
                    "python": env.python,
                    "gpu": env.gpu,
                },
                "summary": render.summary_counts(outcome.results),
                "cases": [render.case_record(r, folder) for r in outcome.results],
            },
            listings=[render.case_listing(outcome.results)],
            lines=[
                f"triton {env.triton} | python {env.python} | gpu {env.gpu or 'none'}",
                render.summary_line(outcome.results, outcome.exit_status),
                f"results: {folder}",
            ],
        )
    )
    return outcome.exit_status


def cmd_list(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.engine import discover

    listing = render.Listing(
        (
            render.Column("id", "id"),
            render.Column("family"),
            render.Column("targets", "text"),
            render.Column("config sets", "text"),
            render.Column("needs", "text"),
            render.Column("title", "text"),
        )
    )
    records = []
    for found in discover.select(args.repros):
        repro = found.repro
        needs = ["gpu to launch" if repro.launches else "compile only", *repro.requires]
        if repro.gpu == "required":
            needs[0] = "gpu"
        listing.add(
            repro.id,
            repro.family,
            " ".join(repro.targets),
            " ".join(repro.configs),
            ", ".join(needs),
            repro.title,
        )
        records.append(
            {
                "id": repro.id,
                "family": repro.family,
                "title": repro.title,
                "targets": list(repro.targets),
                "config_sets": list(repro.configs),
                "needs": needs,
                "file": found.source.get("path"),
                "module": found.source.get("module"),
            }
        )
    render.output_for(args).show(render.View(data={"reproducers": records}, listings=[listing]))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    with guard.signals_stop():
        try:
            guard.check_process()
            status = _dispatch(argv)
            sys.stdout.flush()  # a closed pipe shows here, not at exit as a second line
            return status
        except BrokenPipeError:
            guard.silence_stdout()
            print("repro: error: the output was cut: stdout is closed", file=sys.stderr)
            return EXIT_USAGE
        except UsageError as exc:
            print(f"repro: error: {guard.one_line(exc)}", file=sys.stderr)
            return EXIT_USAGE
        except HarnessError as exc:
            print(f"repro: harness error: {guard.one_line(exc)}", file=sys.stderr)
            return EXIT_HARNESS
        except guard.Stopped as stop:
            print(f"repro: stopped by {stop}{guard.resume_hint(argv)}", file=sys.stderr)
            return stop.exit_status
        except KeyboardInterrupt:
            print(f"repro: interrupted{guard.resume_hint(argv)}", file=sys.stderr)
            return 130
        except Exception as exc:  # the tool's own failure: its own exit code
            fault = guard.storage_fault(exc)
            if fault is None:
                return guard.internal_error(exc)
            print(f"repro: {fault.line}", file=sys.stderr)
            return fault.exit_status


def _dispatch(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    chosen = words[0] if words and words[0] in DOORS else None
    # Completion and help for the whole command line want every command's parser.
    parser = build_parser(None if "_ARGCOMPLETE" in os.environ else chosen)
    completion.autocomplete(parser)
    args = parser.parse_args(argv)
    if args.command != "doctor":  # the doctor reports it instead
        guard.check_cache_root()
    guard.check_arguments(args)
    guard.choose_execution(args)
    apply_wheelhouse(args)
    door = _door(DOORS[args.command])
    command: Callable[[argparse.Namespace], int] = getattr(door, f"cmd_{args.command}")
    return command(args)


if __name__ == "__main__":
    sys.exit(main())
