"""``repro matrix`` and ``repro bisect``: the catalogue across Triton releases."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.table import Table

from suite.cli.options import add_case_options, case_options, split
from suite.engine.isolate import Bounds
from suite.errors import UsageError


def add_parsers(commands: Any) -> None:
    matrix = commands.add_parser("matrix", help="run the same cases under several Triton releases")
    add_case_options(matrix)
    matrix.add_argument(
        "--triton",
        action="append",
        default=[],
        help="releases, e.g. 3.5.0,3.6.0,latest (a cached venv each)",
    )
    matrix.add_argument(
        "--python",
        action="append",
        default=[],
        dest="pythons",
        help="an existing interpreter to include (repeatable)",
    )
    matrix.add_argument("--wheel", action="append", default=[], help="a Triton wheel (repeatable)")

    bisect = commands.add_parser("bisect", help="find the release that introduced or fixed a bug")
    bisect.add_argument("finding", help="a finding file, or its name under <output>/findings")
    bisect.add_argument("--good", required=True, help="a release where it does not reproduce")
    bisect.add_argument("--bad", required=True, help="a release where it reproduces")
    bisect.add_argument(
        "--versions",
        action="append",
        default=[],
        help="search this list (releases, wheels) instead of all releases",
    )
    bisect.add_argument("-o", "--output", default="reports", help="output root (default: reports)")
    bisect.add_argument("--timeout", type=float, default=600.0, help="seconds per case")


def cmd_matrix(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.releases import matrix
    from suite.toolchain import venvs

    selection, execution, baseline = case_options(args)
    specs = split(args.triton) + list(args.pythons) + list(args.wheel)
    if not specs:
        raise UsageError("name releases with --triton (e.g. 3.5.0,latest), --python or --wheel")
    releases = [venvs.resolve(spec) for spec in specs]
    result = matrix.run(
        selection,
        releases,
        Path(args.output),
        execution,
        baseline,
        lambda release: render.console.print(f"running under {release.label}"),
    )
    table = Table(header_style="bold")
    for column in ("reproducer", "case", *result.releases):
        table.add_column(column, overflow="fold")
    for repro, case, cells in result.rows():
        table.add_row(repro, render.escape(case), *(cells.get(r, "") for r in result.releases))
    render.console.print(table)
    render.console.print(f"matrix: {result.folder}")
    return 0


def cmd_bisect(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.engine.runner import Execution
    from suite.releases import bisect
    from suite.search.findings import Finding, locate
    from suite.toolchain import venvs

    path = locate(args.finding, Path(args.output))
    try:
        finding = Finding.from_json(json.loads(path.read_text()))
    except (ValueError, TypeError, KeyError) as exc:
        raise UsageError(f"malformed finding {path}: {exc}") from None
    versions = split(args.versions) or venvs.released_versions()
    candidates = bisect.between(versions, args.good, args.bad)
    outcome = bisect.run(
        finding,
        venvs.resolve,
        candidates,
        Execution(bounds=Bounds(timeout_s=args.timeout)),
        lambda label, state: render.console.print(f"  triton {label}: {state}"),
    )
    finding.first_good = outcome.first_good or finding.first_good
    finding.first_bad = outcome.first_bad or finding.first_bad
    finding.bisect = outcome.to_json()
    path.write_text(json.dumps(finding.to_json(), indent=2, default=str) + "\n")
    if outcome.direction == "fix":
        verdict = f"first good: {outcome.good or 'none in range'} (last bad: {outcome.bad})"
    else:
        verdict = f"first bad: {outcome.bad} (last good: {outcome.good or 'none in range'})"
    render.console.print(f"{finding.signature} on {finding.target}: {verdict}")
    if outcome.note:
        render.console.print(outcome.note)
    return 0


def add_dashboard_parser(commands: Any) -> None:
    dashboard = commands.add_parser("dashboard", help="a static HTML page of the results history")
    dashboard.add_argument(
        "-o", "--output", default="reports", help="output root (default: reports)"
    )
    dashboard.add_argument("--x", help="heatmap column parameter (default: the second last)")
    dashboard.add_argument("--y", help="heatmap row parameter (default: the last)")


def cmd_dashboard(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.releases import dashboard

    root = Path(args.output)
    if not root.is_dir():
        raise UsageError(f"no output root at {root}: run `repro run` first")
    page = dashboard.render(root, args.x, args.y)
    render.console.print(f"dashboard: {page}")
    return 0
