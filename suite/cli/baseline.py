"""``repro baseline accept | check | show``: the baseline file, never edited by hand.

Exit status: 0 done (check: no problem); 2 bad usage or input, and ``check`` on any problem
(each problem one line on stdout, one line on stderr naming the first).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from suite.cli.options import DEFAULT_OUTPUT, user_path
from suite.cli.render import add_output_options
from suite.errors import UsageError


def _states() -> dict[str, str]:
    from suite.engine import baseline

    return {
        baseline.KNOWN: "expected to fail",
        baseline.FIXED: "fixed: expected to pass",
        baseline.BEFORE: "before first_bad: not expected",
        baseline.OUTSIDE: "outside its range: not expected",
    }


def add_action_output_options(
    group: argparse.ArgumentParser, action: argparse.ArgumentParser
) -> None:
    """The output options on a command with actions (``repro baseline --json show``) and on
    its action (``repro baseline show --json``): the action's copies have no default, so
    they never undo what was given before the action's name."""
    if not any(a.dest == "format" for a in group._actions):
        add_output_options(group)
    add_output_options(action)
    for option in action._actions:
        if option.dest in ("format", "quiet", "verbose"):
            option.default = argparse.SUPPRESS


def add_parsers(commands: Any) -> None:
    baseline = commands.add_parser(
        "baseline", help="accept a finding into, check or show the baseline"
    )
    actions = baseline.add_subparsers(
        dest="baseline_action", required=True, parser_class=type(baseline)
    )

    accept = actions.add_parser("accept", help="write or update the entry of a finding")
    accept.add_argument("finding", help="a finding file, or its id under <output>/findings")
    accept.add_argument("--upstream", default="", help="the upstream issue or fix (a link)")
    accept.add_argument(
        "-o",
        "--output",
        type=user_path,
        default=DEFAULT_OUTPUT,
        help="output root (default: reports)",
    )
    check = actions.add_parser("check", help="validate the file: exit 2 on any problem")
    show = actions.add_parser("show", help="the entries and their status on the installed Triton")
    show.add_argument("--python", type=user_path, help="interpreter whose Triton the status is for")
    for parser in (accept, check, show):
        parser.add_argument(
            "--baseline", type=user_path, help="the file (default: the shipped baseline)"
        )
        add_action_output_options(baseline, parser)


def _path(args: argparse.Namespace) -> Path:
    from suite.engine import DEFAULT_BASELINE

    return Path(args.baseline) if args.baseline else DEFAULT_BASELINE


def cmd_baseline(args: argparse.Namespace) -> int:
    commands = {"accept": _accept, "check": _check, "show": _show}
    return commands[args.baseline_action](args)


def _accept(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.releases.accept import accept
    from suite.subject import load_finding

    finding, _, path = load_finding(args.finding, Path(args.output))
    baseline = _path(args)
    done, fields = accept(finding, baseline, args.upstream)
    shown = {k: v for k, v in fields.items() if v not in ("", None, [], {})}
    render.output_for(args).show(
        render.View(
            data={"baseline": str(baseline), "finding": path.stem, "action": done, "entry": shown},
            lines=[f"{done} {fields['id']} in {baseline}"]
            + [f"  {k} = {json.dumps(v)}" for k, v in shown.items() if k != "id"],
        )
    )
    return 0


def _check(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.engine import discover
    from suite.releases.accept import check

    path = _path(args)
    catalogue = {found.repro.id for found in discover.select([])}
    problems = check(path, catalogue)
    render.output_for(args).show(
        render.View(
            data={"baseline": str(path), "problems": [str(p) for p in problems]},
            lines=[f"{path}: {p}" for p in problems] or [f"{path}: no problem"],
        )
    )
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise UsageError(f"baseline {path}: {problems[0]}{more}")
    return 0


def _show(args: argparse.Namespace) -> int:
    import sys

    from suite.cli import render
    from suite.engine import Baseline, capture_environment

    path = _path(args)
    baseline = Baseline.load(path)
    release = str(capture_environment(args.python or sys.executable).triton)
    listing = render.Listing(
        (
            render.Column("id", "id"),
            render.Column("repro", "id"),
            render.Column("targets", "text"),
            render.Column("releases", "text"),
            render.Column("kind", "text"),
            render.Column(f"on {release}", "text"),
        )
    )
    records = []
    for entry in baseline.expectations:
        releases = ", ".join(
            part
            for part in (
                entry.triton,
                f"first bad {entry.first_bad}" if entry.first_bad else "",
                f"fixed in {entry.fixed_in}" if entry.fixed_in else "",
            )
            if part
        )
        state = entry.state_on(release)
        listing.add(
            entry.id,
            entry.repro,
            " ".join(entry.targets) or "all",
            releases or "all",
            entry.kind,
            _states()[state],
        )
        records.append(
            {
                "id": entry.id,
                "repro": entry.repro,
                "targets": list(entry.targets),
                "triton": entry.triton,
                "first_bad": entry.first_bad,
                "fixed_in": entry.fixed_in,
                "kind": entry.kind,
                "signature": entry.signature,
                "state": state,
            }
        )
    render.output_for(args).show(
        render.View(
            data={"baseline": str(path), "triton": release, "entries": records},
            listings=[listing],
            lines=[f"{len(records)} entries in {path}; status on triton {release}"],
        )
    )
    return 0
