"""``repro matrix`` and ``repro bisect``: the catalogue across Triton releases."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version

from suite.cli.options import (
    add_case_options,
    add_isolation_options,
    add_wheelhouse_option,
    case_options,
    split,
    user_path,
)
from suite.cli.render import Output, View, add_output_options
from suite.errors import UsageError
from suite.files import locked, write_replacing

if TYPE_CHECKING:
    from suite.failures.findings import Finding
    from suite.releases.bisect import Bisection
    from suite.toolchain.venvs import Release


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
        type=user_path,
        help="an existing interpreter to include (repeatable)",
    )
    matrix.add_argument(
        "--wheel", action="append", type=user_path, default=[], help="a Triton wheel (repeatable)"
    )
    add_wheelhouse_option(matrix)
    add_output_options(matrix)

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
    bisect.add_argument(
        "-o", "--output", type=user_path, default="reports", help="output root (default: reports)"
    )
    add_isolation_options(bisect)
    add_wheelhouse_option(bisect)
    bisect.add_argument(
        "--baseline",
        type=user_path,
        help="fill first_bad/fixed_in of the entry that knows the finding in this file",
    )
    add_output_options(bisect)
    _add_dashboard_parser(commands)


def releases_of(out: Output) -> Callable[[str], Release]:
    """``venvs.resolve`` with progress: building a release's venv takes minutes."""
    from suite.toolchain import venvs

    def resolve(spec: str) -> Release:
        cached = "/" in spec or (venvs.folder_for(spec) / venvs.CHECKED).exists()
        with out.steps(f"venv {spec}", 1) as steps:
            steps.begin("cached" if cached else "building (pip install, minutes)")
            release = venvs.resolve(spec)
            steps.advance(f"triton {release.label}: {release.python}")
        return release

    return resolve


def cmd_matrix(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.releases import matrix

    selection, execution, baseline = case_options(args)
    specs = split(args.triton) + list(args.pythons) + list(args.wheel)
    if not specs and args.wheelhouse:  # every build of the wheelhouse, oldest first
        from suite.toolchain.venvs import released_versions

        specs = released_versions()
    if not specs:
        raise UsageError(
            "name releases with --triton (e.g. 3.5.0,latest), --python, --wheel or --wheelhouse"
        )
    out = render.output_for(args)
    resolve = releases_of(out)
    releases = [resolve(spec) for spec in specs]
    with out.steps("matrix", len(releases)) as steps:
        running: list[str] = []

        def on_release(release: Release) -> None:
            if running:
                steps.advance(f"triton {running[-1]}: done")
            running.append(release.label)
            steps.begin(f"triton {release.label}: running the cases")

        result = matrix.run(selection, releases, Path(args.output), execution, baseline, on_release)
        steps.advance(f"triton {running[-1]}: done")
    listing = render.Listing(
        (render.Column("case", "id"), *(render.Column(r, "text") for r in result.releases))
    )
    for _repro, case, cells in result.rows():
        listing.add(case, *(cells.get(r, "") for r in result.releases))
    out.show(
        render.View(
            data={
                "matrix": str(result.folder),
                "json": str(result.folder / "matrix.json"),
                "markdown": str(result.folder / "matrix.md"),
                **result.to_json(),
            },
            listings=[listing],
            lines=[
                *(
                    f"triton {label}: " + ", ".join(f"{n} {v}" for v, n in sorted(tally.items()))
                    for label, tally in result.verdicts().items()
                ),
                *(change.line() for change in result.changes()),
                f"matrix: {result.folder}; exit {result.exit_status}",
            ],
        )
    )
    return result.exit_status


@dataclass(frozen=True)
class BisectPlan:
    """What ``repro bisect`` searches: the two ends' labels, what resolves each build
    (its label, a version, to a release spec or a wheel), all builds in order, and the
    candidates between the ends."""

    good: str
    bad: str
    spec_of: dict[str, str]
    versions: list[str]
    candidates: list[str]


def cmd_bisect(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.subject import load_finding

    finding, _, path = load_finding(args.finding, Path(args.output))
    plan = plan_bisection(args)
    out = render.output_for(args)
    outcome = bisect_releases(finding, plan, out)
    check_conclusive(outcome, plan.good, path)
    record_bisection(finding, outcome, path, args.baseline)
    out.show(bisection_view(finding, path, outcome))
    return 0


def plan_bisection(args: argparse.Namespace) -> BisectPlan:
    """The builds to search, each checked before any work. ``--versions`` as given; ends
    that are wheel files: the wheels of their folders (a folder of nightlies); else the
    releases on offer (a wheelhouse's builds)."""
    from suite.releases import bisect, nightlies
    from suite.toolchain import venvs

    good, bad = _label(args.good, "--good"), _label(args.bad, "--bad")
    ends = [Path(end) for end in (args.good, args.bad) if end.endswith(".whl")]
    specs = split(args.versions) or (
        [str(w.path) for folder in {e.parent for e in ends} for w in venvs.wheels_in(folder)]
        if ends
        else venvs.released_versions()
    )
    spec_of: dict[str, str] = {}  # a build's label (its version) -> what resolves it
    for spec in specs:
        spec_of.setdefault(_label(spec, "--versions"), spec)
    if good == bad:
        raise UsageError(f"--good and --bad are both {good}: the range says nothing")
    versions = nightlies.chronological(list(spec_of))
    if args.baseline:  # checked before any work: the finding is rewritten at the end
        from suite.engine import Baseline

        Baseline.load(Path(args.baseline))
    return BisectPlan(good, bad, spec_of, versions, bisect.between(versions, good, bad))


def bisect_releases(finding: Finding, plan: BisectPlan, out: Output) -> Bisection:
    """Run the finding's case under the releases the bisection visits, with progress."""
    from suite.engine import Execution
    from suite.releases import bisect

    resolve = releases_of(out)
    # A bisection visits about log2(n) + 1 releases: the estimate the ETA is drawn from.
    visits = math.ceil(math.log2(max(len(plan.candidates), 2))) + 1
    with out.steps("bisect", visits) as steps:

        def release_of(label: str) -> Release:
            steps.begin(f"triton {label}")
            return resolve(plan.spec_of[label])

        return bisect.run(
            finding,
            release_of,
            plan.candidates,
            Execution(),
            lambda label, state: steps.advance(f"triton {label}: {state}"),
            chronology=plan.versions,
        )


def check_conclusive(outcome: Bisection, good: str, path: Path) -> None:
    """Only a conclusive answer is stored: a good release seen good next to the boundary (the
    --good end, or a release inside the range when the end was set aside: a regression
    whose --good end cannot run the reproducer), the first release that can run it, or
    the release where the bug's failure ends."""
    from suite.releases import bisect

    verified = outcome.good is not None and outcome.tried.get(outcome.good) == bisect.GOOD
    if verified or outcome.unsupported_before or outcome.replaced_in:
        return
    still = "; ".join(outcome.configs.get(good, []))
    raise UsageError(
        f"--good {good} does not come out good ({outcome.tried.get(good) or 'not tried'}"
        + (f": {still}" if still else "")
        + "): "
        f"the bisection is inconclusive, {path.name} is left as it was"
    )


def record_bisection(
    finding: Finding, outcome: Bisection, path: Path, baseline: str | None
) -> None:
    """The finding keeps the bisection; ``--baseline``'s entry that knows it, the range."""
    from suite.releases import bisect

    bisect.record(finding, outcome)
    with locked(path.parent):
        write_replacing(path, json.dumps(finding.to_json(), indent=2, default=str) + "\n")
    if not baseline:
        return
    # The bisected range goes into the baseline entry (issue 16).
    from suite.engine import failure_of, record_range

    failure = failure_of(finding.repro, finding.target, finding.minimal_config, finding.signature)
    first_bad = outcome.first_bad if outcome.conclusive else None
    entry = record_range(Path(baseline), failure, first_bad, outcome.first_good)
    said = f"entry {entry} updated" if entry else "no entry knows it (repro baseline accept)"
    print(f"baseline {baseline}: {said}", file=sys.stderr)


def bisection_verdict(outcome: Bisection) -> str:
    """``first bad: X (last good: Y)``, or for a fix ``first good: ...``."""
    if outcome.direction != "fix":
        return f"first bad: {outcome.bad} (last good: {outcome.good or 'none in range'})"
    verdict = f"first good: {outcome.good or 'none in range'} (last bad: {outcome.bad})"
    if outcome.replaced_in:
        verdict += f"; the bug ends in {outcome.replaced_in}, where it fails otherwise"
    return verdict


def bisection_view(finding: Finding, path: Path, outcome: Bisection) -> View:
    """What ``repro bisect`` shows: each release tried and its state, the verdict."""
    from suite.cli import render
    from suite.engine import case_id, reproducer_for

    listing = render.Listing((render.Column("release", "id"), render.Column("state", "text")))
    for label, state in outcome.tried.items():
        listing.add(label, state)
        for line in outcome.configs.get(label, []):  # which configs fail where
            listing.add("", line)
    found, _ = reproducer_for(finding.repro, finding.source)  # a file given by path too
    case = case_id(found.repro, finding.target, finding.minimal_config)
    lines = [f"{path.stem}: {case} {finding.signature}: {bisection_verdict(outcome)}"]
    if outcome.note:
        lines.append(outcome.note)
    if outcome.commits:
        lines.append(outcome.commits.line())
    return render.View(
        data={
            "finding": path.stem,
            "file": str(path),
            "case_id": case,
            "signature": finding.signature,
            "target": finding.target,
            **outcome.to_json(),
        },
        listings=[listing],
        lines=lines,
    )


def _label(spec: str, option: str) -> str:
    """A build's name: a release version as given, or the version a wheel file declares."""
    from suite.toolchain.venvs import wheel_of

    if spec.endswith(".whl"):
        if not Path(spec).is_file():
            raise UsageError(f"{option} {spec}: no such wheel file")
        return wheel_of(Path(spec)).version
    try:
        Version(spec)
    except InvalidVersion:
        raise UsageError(
            f"{option} {spec!r}: not a release version (e.g. 3.5.0) or wheel"
        ) from None
    return spec


def _add_dashboard_parser(commands: Any) -> None:
    dashboard = commands.add_parser("dashboard", help="a static HTML page of the results history")
    dashboard.add_argument(
        "-o", "--output", type=user_path, default="reports", help="output root (default: reports)"
    )
    dashboard.add_argument("--x", help="heatmap column parameter (default: the second last)")
    dashboard.add_argument("--y", help="heatmap row parameter (default: the last)")
    add_output_options(dashboard)


def cmd_dashboard(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.releases import dashboard

    root = Path(args.output)
    if not root.is_dir():
        raise UsageError(f"no output root at {root}: run `repro run` first")
    page = dashboard.render(root, args.x, args.y)
    render.output_for(args).show(
        render.View(data={"page": str(page)}, lines=[f"dashboard: {page}"])
    )
    return 0
