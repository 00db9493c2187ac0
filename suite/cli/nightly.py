"""``repro nightly plan | advance | show`` and ``repro merge``: the nightly's loop.

A night: ``repro run --shard K/N`` on N runners; ``repro merge`` of their run folders;
``repro nightly plan RUN --state DIR --plan plan.json`` (what to do on GitHub, and the next
state, written nowhere yet); the workflow applies the plan; ``repro nightly advance plan.json
--state DIR`` keeps the next state. A night whose GitHub step broke keeps the old state, so
the next night plans the same actions again.

Exit status: 0 done; 2 bad usage or input. ``repro merge`` exits as ``repro run`` would have
on the merged run (0, 1, 3 or 4).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from suite.cli.baseline import add_action_output_options
from suite.cli.options import DEFAULT_OUTPUT, user_path
from suite.cli.render import add_output_options
from suite.errors import UsageError


def add_parsers(commands: Any) -> None:
    nightly = commands.add_parser("nightly", help="the nightly's state and its GitHub plan")
    actions = nightly.add_subparsers(
        dest="nightly_action", required=True, parser_class=type(nightly)
    )
    plan = actions.add_parser("plan", help="compare the state with a run: the actions, as JSON")
    plan.add_argument("run", type=user_path, help="the run folder (merged, for a sharded run)")
    plan.add_argument(
        "--plan", type=user_path, default="", help="write the plan here (default: stdout)"
    )
    plan.add_argument(
        "--baseline", type=user_path, help="expectations file (default: the shipped baseline)"
    )
    advance = actions.add_parser("advance", help="keep a plan's next state (once applied)")
    advance.add_argument("plan", type=user_path, help="the plan file `repro nightly plan` wrote")
    show = actions.add_parser("show", help="the findings the state tracks")
    for parser in (plan, advance, show):
        parser.add_argument(
            "--state", required=True, type=user_path, help="the folder that keeps state.json"
        )
        add_action_output_options(nightly, parser)

    merge = commands.add_parser("merge", help="merge the run folders of a sharded run")
    merge.add_argument("runs", nargs="+", type=user_path, help="the shards' run folders")
    merge.add_argument(
        "-o",
        "--output",
        type=user_path,
        default=DEFAULT_OUTPUT,
        help="output root (default: reports)",
    )
    merge.add_argument(
        "--baseline", type=user_path, help="expectations file (default: the shipped baseline)"
    )
    add_output_options(merge)


def cmd_nightly(args: argparse.Namespace) -> int:
    commands = {"plan": _plan, "advance": _advance, "show": _show}
    return commands[args.nightly_action](args)


def _plan(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.engine import Baseline
    from suite.files import write_atomic
    from suite.releases import nightly

    state = nightly.load_state(Path(args.state))
    release, results = nightly.read_run(Path(args.run))
    baseline = Baseline.load(Path(args.baseline) if args.baseline else None)
    planned = nightly.plan(state, release, results, baseline)
    text = nightly.dumps(planned.to_json())
    if not args.plan:
        print(text, end="")
        return 0
    write_atomic(Path(args.plan), text)
    render.output_for(args).show(
        render.View(
            data={"plan": args.plan, **planned.to_json()},
            lines=[*nightly.summary_lines(planned), f"plan: {args.plan}"],
        )
    )
    return 0


def _advance(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.files import read_regular_text
    from suite.releases import nightly

    path = Path(args.plan)
    try:
        record = json.loads(read_regular_text(path, "plan"))
        state = nightly.State.from_json(record["state"], str(path))
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"unreadable plan {path}: {type(exc).__name__}: {exc}") from None
    kept = nightly.save_state(Path(args.state), state)
    render.output_for(args).show(
        render.View(
            data={"state": str(kept), "release": state.release, "findings": len(state.findings)},
            lines=[f"state: {kept} (triton {state.release}, {len(state.findings)} findings)"],
        )
    )
    return 0


def _show(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from suite.cli import render
    from suite.releases import nightly

    state = nightly.load_state(Path(args.state))
    listing = render.Listing(
        (
            render.Column("finding", "id"),
            render.Column("status"),
            render.Column("issue"),
            render.Column("release"),
            render.Column("targets", "text"),
            render.Column("signature", "text"),
        )
    )
    for tracked in sorted(state.findings.values(), key=lambda t: t.finding):
        listing.add(
            tracked.finding,
            tracked.status,
            tracked.issue,
            tracked.release,
            " ".join(tracked.targets),
            tracked.signature,
        )
    render.output_for(args).show(
        render.View(
            data={
                "release": state.release,
                "findings": [asdict(t) for t in state.findings.values()],
            },
            listings=[listing],
            lines=[f"{len(state.findings)} findings; last night on triton {state.release or '-'}"],
        )
    )
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.engine import Baseline
    from suite.releases.merge import merge

    baseline = Baseline.load(Path(args.baseline) if args.baseline else None)
    merged = merge([Path(r) for r in args.runs], Path(args.output), baseline)
    folder = merged.store.folder
    render.output_for(args).show(
        render.View(
            data={
                "run": str(folder),
                "results": str(folder / "results.jsonl"),
                "exit_status": merged.exit_status,
                "summary": render.summary_counts(merged.results),
            },
            lines=[
                render.summary_line(merged.results, merged.exit_status),
                f"results: {folder}",
            ],
        )
    )
    return merged.exit_status
