"""The ``repro`` command. A thin door onto the engine.

Exit status of ``repro run``:
  0  nothing changed against the baseline
  1  a failure that the baseline does not list (a regression)
  2  bad usage or bad input (one line on stderr, never a traceback)
  3  a known bug no longer reproduces (fixed upstream)
  70 an internal error: the tool broke (one line on stderr; the traceback is kept in a file)
  130, 143  stopped by SIGINT, SIGTERM (finished cases are kept: --resume)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from suite.cli import baseline as baseline_cli
from suite.cli import capture as capture_cli
from suite.cli import completion, guard
from suite.cli import doctor as doctor_cli
from suite.cli import explain as explain_cli
from suite.cli import explore as explore_cli
from suite.cli import gate as gate_cli
from suite.cli import nightly as nightly_cli
from suite.cli import reduce as reduce_cli
from suite.cli import releases as releases_cli
from suite.cli import replay as replay_cli
from suite.cli import report as report_cli
from suite.cli.options import Parser, add_case_options, apply_wheelhouse, case_options
from suite.cli.render import add_output_options
from suite.engine import EXIT_USAGE, CaseResult
from suite.errors import UsageError


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="repro", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

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
    add_output_options(run)

    listing = commands.add_parser("list", help="show the catalogue of reproducers")
    listing.add_argument("repros", nargs="*", help="reproducer ids or files (default: all)")
    add_output_options(listing)
    explore_cli.add_parsers(commands)
    releases_cli.add_parsers(commands)
    releases_cli.add_dashboard_parser(commands)
    gate_cli.add_parsers(commands)
    report_cli.add_parsers(commands)
    replay_cli.add_parsers(commands)
    reduce_cli.add_parsers(commands)
    explain_cli.add_parsers(commands)
    doctor_cli.add_parsers(commands)
    capture_cli.add_parsers(commands)
    baseline_cli.add_parsers(commands)
    nightly_cli.add_parsers(commands)
    return parser


def cmd_run(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.engine import session as engine

    selection, execution, baseline = case_options(
        args, python=args.python or "", shard=args.shard, keep_passing=args.keep_passing
    )
    out = render.output_for(args)
    with out.steps("cases") as steps:

        def finished(result: CaseResult) -> None:
            steps.advance(f"{result.case_id} {result.outcome.label} {result.verdict}")

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
        needs = ["gpu to launch" if repro.launch_fn else "compile only", *repro.requires]
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
        except guard.Stopped as stop:
            print(f"repro: stopped by {stop}{guard.resume_hint(argv)}", file=sys.stderr)
            return stop.exit_status
        except KeyboardInterrupt:
            print(f"repro: interrupted{guard.resume_hint(argv)}", file=sys.stderr)
            return 130
        except Exception as exc:  # the tool's own failure: its own exit code
            return guard.internal_error(exc)


def _dispatch(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    completion.autocomplete(parser)
    args = parser.parse_args(argv)
    if args.command != "doctor":  # the doctor reports it instead
        guard.check_cache_root()
    guard.check_arguments(args)
    guard.choose_execution(args)
    apply_wheelhouse(args)
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
        "reduce": reduce_cli.cmd_reduce,
        "explain": explain_cli.cmd_explain,
        "doctor": doctor_cli.cmd_doctor,
        "capture": capture_cli.cmd_capture,
        "baseline": baseline_cli.cmd_baseline,
        "nightly": nightly_cli.cmd_nightly,
        "merge": nightly_cli.cmd_merge,
    }
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
