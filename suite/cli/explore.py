"""The ``repro explore`` and ``repro findings`` commands, for :mod:`suite.cli.main` to mount.

``explore`` searches one reproducer's parameter space with Hypothesis, shrinks
each distinct failure to a minimal config and maps its boundary
(:mod:`suite.search.explore`); ``findings`` lists what the findings store holds.
Both exit 0 when they did their work: a finding is data, not an error (``repro
run`` with its baseline is the gate). Bad input raises :class:`UsageError`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from suite.cli.options import DEFAULT_OUTPUT
from suite.errors import UsageError

if TYPE_CHECKING:
    from suite.search.findings import Finding


def _split(values: Sequence[str] | None) -> list[str]:
    return [v for value in values or () for v in value.split(",") if v]


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """Add ``explore`` and ``findings`` to ``commands`` (built with the CLI's parser class).

    It imports nothing heavy: every ``repro`` command builds the parser, and Hypothesis
    alone takes a third of a second to import.
    """
    explore = commands.add_parser(
        "explore", help="search a reproducer's parameter space and shrink each failure"
    )
    explore.add_argument("repro", help="reproducer id or reproducer file")
    explore.add_argument(
        "-t", "--target", action="append", help="target(s) (repeatable; default: all of its own)"
    )
    budget = explore.add_mutually_exclusive_group()
    budget.add_argument(
        "--max-examples",
        type=int,
        help="examples Hypothesis draws (default: 40)",
    )
    budget.add_argument("--time-budget", type=float, metavar="S", help="seconds of search")
    explore.add_argument("--seed", type=int, help="Hypothesis seed: repeats a search exactly")
    explore.add_argument(
        "--profile",
        default="explore",
        help="Hypothesis settings profile: explore, or ci (derandomized) (default: explore)",
    )
    explore.add_argument(
        "-o", "--output", default=DEFAULT_OUTPUT, help="output root (default: reports)"
    )
    explore.add_argument("--python", help="interpreter whose Triton runs the cases")
    explore.add_argument("--timeout", type=float, default=600.0, help="seconds per case")
    explore.add_argument(
        "--memory-cap", type=float, default=8.0, help="GiB of resident memory per case"
    )

    findings = commands.add_parser("findings", help="list the findings of earlier explores")
    findings.add_argument("repros", nargs="*", help="only these reproducer ids")
    findings.add_argument("--kind", choices=("bug", "limit"), help="only this kind")
    findings.add_argument(
        "-o", "--output", default=DEFAULT_OUTPUT, help="output root (default: reports)"
    )
    findings.add_argument("--json", action="store_true", help="print the records as JSON")


def cmd_explore(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.engine import discover
    from suite.engine.expand import check_targets
    from suite.engine.isolate import Bounds
    from suite.engine.runner import Execution
    from suite.search.explore import DEFAULT_MAX_EXAMPLES, PROFILES, Budget, Evaluation, explore
    from suite.search.findings import DirectoryFindingsStore

    if args.timeout <= 0 or args.memory_cap <= 0:
        raise UsageError("--timeout and --memory-cap must be positive")
    if (args.max_examples is not None and args.max_examples < 1) or (
        args.time_budget is not None and args.time_budget <= 0
    ):
        raise UsageError("--max-examples and --time-budget must be positive")
    if args.profile not in PROFILES:
        raise UsageError(f"unknown --profile {args.profile!r} (known: {', '.join(PROFILES)})")
    found = discover.select([args.repro])
    if len(found) != 1:
        ids = ", ".join(f.repro.id for f in found)
        raise UsageError(f"{args.repro} defines {len(found)} reproducers ({ids}); name one by id")
    repro = found[0].repro
    targets = _split(args.target) or list(repro.targets)
    check_targets(targets)
    foreign = [t for t in targets if t not in repro.targets]
    if foreign:
        raise UsageError(
            f"{repro.id} does not apply to {', '.join(foreign)} (its targets: "
            f"{', '.join(repro.targets)})"
        )
    budget = Budget(
        max_examples=None if args.time_budget else args.max_examples or DEFAULT_MAX_EXAMPLES,
        time_budget_s=args.time_budget,
    )
    execution = Execution(
        python=args.python or sys.executable,
        bounds=Bounds(timeout_s=args.timeout, memory_bytes=int(args.memory_cap * (1 << 30))),
    )
    output = Path(args.output)
    with render.progress() as bar:
        task = bar.add_task("", total=None)

        def ran(evaluation: Evaluation) -> None:
            result = evaluation.result
            label = f"{evaluation.phase}: {result.case_id} {result.outcome.label}"
            bar.update(task, advance=1, description=render.escape(label))

        exploration = explore(
            found[0],
            targets,
            DirectoryFindingsStore(output / "findings"),
            execution,
            output,
            budget,
            args.seed,
            args.profile,
            ran,
        )
    for finding in exploration.findings:
        _print_finding(finding)
    seed = exploration.seed if exploration.seed is not None else f"derandomized ({args.profile})"
    render.console.print(
        f"{len(exploration.findings)} finding(s) in {len(exploration.evaluations)} evaluations"
        f" of {repro.id} on {', '.join(targets)} | seed {seed}"
    )
    render.console.print(f"findings: {output / 'findings'}")
    return 0


def _config_text(config: dict[str, Any]) -> str:
    return ", ".join(f"{name}={value}" for name, value in config.items())


def _print_finding(finding: Finding) -> None:
    from rich.table import Table

    from suite.cli import render

    style = "bold red" if finding.kind == "bug" else "yellow"
    render.console.print(
        f"[{style}]{finding.kind}[/] {render.escape(finding.signature)}"
        f"  ({finding.repro} on {', '.join(finding.targets)})"
    )
    render.console.print(
        f"  minimal config ({finding.target}): {_config_text(finding.minimal_config)}"
    )
    table = Table(header_style="bold", title_justify="left")
    for column in ("param", "step", "outcome", "signature"):
        table.add_column(column, overflow="fold")
    for step in finding.boundary:
        verdict = "same failure" if step.same_signature else step.signature or ""
        style = "green" if step.passed else "red" if step.same_signature else "yellow"
        table.add_row(
            step.param,
            f"{step.value_from} -> {step.value_to}",
            f"[{style}]{step.outcome}[/]",
            render.escape(verdict),
        )
    render.console.print(table)


def cmd_findings(args: argparse.Namespace) -> int:
    from rich.table import Table

    from suite.cli import render
    from suite.search.findings import DirectoryFindingsStore

    root = Path(args.output) / "findings"
    findings = [
        f
        for f in DirectoryFindingsStore(root).all()
        if (not args.repros or f.repro in args.repros) and (not args.kind or f.kind == args.kind)
    ]
    if args.json:
        print(json.dumps([f.to_json() for f in findings], indent=2, default=str))
        return 0
    if not findings:
        render.console.print(f"no findings under {root}")
        return 0
    table = Table(header_style="bold")
    for column in ("repro", "kind", "signature", "minimal config", "targets", "seen", "last seen"):
        table.add_column(column, overflow="fold")
    for f in findings:
        table.add_row(
            render.escape(f.repro),
            f.kind,
            render.escape(f.signature),
            _config_text(f.minimal_config),
            " ".join(f.targets),
            f"{len(f.failing_configs)} configs",
            f.last_seen[:10],
        )
    render.console.print(table)
    render.console.print(f"{len(findings)} finding(s) under {root}")
    return 0
