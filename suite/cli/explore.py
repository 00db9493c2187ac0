"""The ``repro explore`` and ``repro findings`` commands, for :mod:`suite.cli.main` to mount.

``explore`` searches one reproducer's parameter space with Hypothesis, shrinks
each distinct failure to a minimal config and maps its boundary
(:mod:`suite.search.explore`); ``findings`` lists what the findings store holds.
Both exit 0 when they did their work: a finding is data, not an error (``repro
run`` with its baseline is the gate). Bad input raises :class:`UsageError`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from suite.cli.options import (
    DEFAULT_OUTPUT,
    add_gpu_option,
    add_isolation_options,
    add_target_option,
    add_time_budget_option,
    user_path,
)
from suite.cli.render import Column, Listing, add_output_options
from suite.errors import UsageError

if TYPE_CHECKING:
    from suite.api import Config
    from suite.cli.render import Output, View
    from suite.engine import Described, Execution, Found
    from suite.failures.findings import DirectoryFindingsStore, Finding
    from suite.search.explore import Exploration


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
    add_target_option(explore, "target(s) (repeatable; default: all of its own)")
    budget = explore.add_mutually_exclusive_group()
    budget.add_argument(
        "--max-examples",
        type=int,
        help="examples Hypothesis draws (default: 40)",
    )
    add_time_budget_option(budget, "seconds of search", None)
    explore.add_argument("--seed", type=int, help="Hypothesis seed: repeats a search exactly")
    explore.add_argument(
        "--profile",
        default="explore",
        help="Hypothesis settings profile: explore, or ci (derandomized) (default: explore)",
    )
    explore.add_argument(
        "-o",
        "--output",
        type=user_path,
        default=DEFAULT_OUTPUT,
        help="output root (default: reports)",
    )
    explore.add_argument("--python", type=user_path, help="interpreter whose Triton runs the cases")
    add_gpu_option(explore, "launch and judge cases on a visible GPU of their target")
    add_isolation_options(explore)
    add_output_options(explore)

    findings = commands.add_parser("findings", help="list the findings of earlier explores")
    findings.add_argument("repros", nargs="*", help="only these reproducer ids")
    findings.add_argument("--kind", choices=("bug", "limit"), help="only this kind")
    findings.add_argument(
        "-o",
        "--output",
        type=user_path,
        default=DEFAULT_OUTPUT,
        help="output root (default: reports)",
    )
    add_output_options(findings)


def cmd_explore(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.failures.findings import DirectoryFindingsStore

    check_search_options(args)
    found = one_reproducer(args.repro)
    targets = chosen_targets(found, args.target)
    execution, launch_arch = search_execution(args)
    store = DirectoryFindingsStore(Path(args.output) / "findings")
    out = render.output_for(args)
    exploration = run_search(args, found, targets, store, execution, launch_arch, out)
    out.show(exploration_view(args, found, targets, store, exploration))
    return 0


def check_search_options(args: argparse.Namespace) -> None:
    """The bounds, the budget and the profile, checked before any work."""
    from suite.search.explore import PROFILES

    if args.timeout <= 0 or args.memory_cap <= 0:
        raise UsageError("--timeout and --memory-cap must be positive")
    if (args.max_examples is not None and args.max_examples < 1) or (
        args.time_budget is not None and args.time_budget <= 0
    ):
        raise UsageError("--max-examples and --time-budget must be positive")
    if args.profile not in PROFILES:
        raise UsageError(f"unknown --profile {args.profile!r} (known: {', '.join(PROFILES)})")


def one_reproducer(name: str) -> Found:
    """The one reproducer ``name`` names (an id, or a file that defines one)."""
    from suite.engine import discover

    found = discover.select([name])
    if len(found) != 1:
        ids = ", ".join(f.repro.id for f in found)
        raise UsageError(f"{name} defines {len(found)} reproducers ({ids}); name one by id")
    return found[0]


def chosen_targets(found: Found, given: Sequence[str] | None) -> list[str]:
    """``--target``'s targets, each one of the reproducer's own (default: all of them)."""
    from suite.engine import check_targets

    repro = found.repro
    targets = _split(given) or list(repro.targets)
    check_targets(targets)
    foreign = [t for t in targets if t not in repro.targets]
    if foreign:
        raise UsageError(
            f"{repro.id} does not apply to {', '.join(foreign)} (its targets: "
            f"{', '.join(repro.targets)})"
        )
    return targets


def search_execution(args: argparse.Namespace) -> tuple[Execution, int | None]:
    """How each case of the search runs (interpreter, bounds, GPUs), and the compute
    capability launches run on (None: compile only)."""
    from suite.engine import Bounds, Execution, capture_environment, visible_gpus

    execution = Execution(
        python=args.python or sys.executable,
        bounds=Bounds(timeout_s=args.timeout, memory_bytes=int(args.memory_cap * (1 << 30))),
    )
    environment = capture_environment(execution.python)
    gpu_arch = environment.gpu_arch
    if args.gpu == "on" and gpu_arch is None:
        raise UsageError("--gpu on, but no NVIDIA GPU is visible (nvidia-smi found none)")
    launch_arch = gpu_arch if args.gpu != "off" else None
    return replace(execution, gpus=visible_gpus(environment)), launch_arch


def run_search(
    args: argparse.Namespace,
    found: Found,
    targets: list[str],
    store: DirectoryFindingsStore,
    execution: Execution,
    launch_arch: int | None,
    out: Output,
) -> Exploration:
    """Hypothesis's search, each evaluation a progress line."""
    from suite.search.evaluate import Evaluation
    from suite.search.explore import DEFAULT_MAX_EXAMPLES, Budget, explore

    budget = Budget(
        max_examples=None if args.time_budget else args.max_examples or DEFAULT_MAX_EXAMPLES,
        time_budget_s=args.time_budget,
    )
    # Shrinking and the boundary add evaluations nobody can count ahead: no total, no ETA.
    with out.steps(f"explore {found.repro.id}") as steps:

        def ran(evaluation: Evaluation) -> None:
            result = evaluation.result
            what = result.signature or result.outcome.label
            steps.advance(f"{evaluation.phase}: {result.case_id} {what}")

        return explore(
            found,
            targets,
            store,
            execution,
            Path(args.output),
            budget,
            args.seed,
            args.profile,
            ran,
            launch_arch,
        )


def exploration_view(
    args: argparse.Namespace,
    found: Found,
    targets: list[str],
    store: DirectoryFindingsStore,
    exploration: Exploration,
) -> View:
    """What ``repro explore`` shows: each finding's boundary, the count, the seed."""
    from suite.cli import render

    repro = found.repro
    seed = exploration.seed if exploration.seed is not None else f"derandomized ({args.profile})"
    view = render.View(
        data={
            "repro": repro.id,
            "targets": targets,
            "seed": exploration.seed,
            "profile": args.profile,
            "evaluations": len(exploration.evaluations),
            "findings_dir": str(store.root),
            "findings": [_finding_record(store, f) for f in exploration.findings],
        }
    )
    for finding in exploration.findings:
        view.listings.append(_boundary_listing(store, finding, repro))
    view.lines.append(
        f"{len(exploration.findings)} finding(s) in {len(exploration.evaluations)} evaluations"
        f" of {repro.id} on {', '.join(targets)} | seed {seed}"
    )
    view.lines.append(f"findings: {store.root}")
    return view


def _config_text(config: Config) -> str:
    return ", ".join(f"{name}={value}" for name, value in config.items())


def _finding_record(store: DirectoryFindingsStore, finding: Finding) -> dict[str, object]:
    """A finding in ``--json`` output: its id and file (what report, replay and bisect take)
    with the record itself."""
    path = store.path_of(finding)
    return {"id": path.stem, "file": str(path), **finding.to_json()}


def _boundary_listing(store: DirectoryFindingsStore, finding: Finding, repro: Described) -> Listing:
    """One finding: its id, signature and minimal case and config as the title, its
    boundary below."""
    from suite.engine import case_id

    title = (
        f"{finding.kind} {store.path_of(finding).stem}: {finding.signature} "
        f"({finding.repro} on {', '.join(finding.targets)}); minimal case "
        f"{case_id(repro, finding.target, finding.minimal_config)}: "
        f"{_config_text(finding.minimal_config)}"
    )
    met = finding.evaluations
    if met:
        title += (
            f"; first failure at evaluation {met.get('first_failure')}, minimal config at "
            f"evaluation {met.get('minimal')}"
        )
    if finding.message_note():
        title += f"; {finding.message_note()}"
    listing = Listing(
        (Column("param", "id"), Column("step"), Column("outcome"), Column("signature", "text")),
        title=title,
    )
    for step in finding.boundary:
        verdict = "same failure" if step.same_signature else step.signature or ""
        style = "green" if step.passed else "red" if step.same_signature else "yellow"
        listing.add(
            step.param, f"{step.value_from} -> {step.value_to}", step.outcome, verdict, style=style
        )
    return listing


class _MinimalCases:
    """The full case id of each finding's minimal config on its target.

    A case id is the reproducer's label of the config, so the reproducer is loaded again
    from the source the finding carries (or the catalogue), once per source; a finding
    whose reproducer cannot be loaded keeps an empty cell and a line in ``problems``.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.problems: list[str] = []
        self._loaded: dict[tuple[str, str], Described | str] = {}

    def of(self, finding: Finding, name: str) -> str:
        """The case id of ``finding`` (named ``name`` in problems), or ''."""
        from suite.engine import case_id

        repro = self._reproducer(finding)
        if isinstance(repro, str):
            self.problems.append(f"finding {name}: no minimal case id: {repro}")
            return ""
        try:
            return case_id(repro, finding.target, finding.minimal_config)
        except (KeyError, IndexError, ValueError, TypeError, AttributeError) as exc:
            self.problems.append(
                f"finding {name}: no minimal case id: its label does not fit the minimal config "
                f"({type(exc).__name__}: {exc})"
            )
            return ""

    def _reproducer(self, finding: Finding) -> Described | str:
        """The reproducer, or why it cannot be loaded."""
        from suite.engine import reproducer_for

        key = (finding.repro, str((finding.source or {}).get("sha256", "")))
        if key not in self._loaded:
            try:
                found, _ = reproducer_for(finding.repro, finding.source, self.root)
                self._loaded[key] = found.repro
            except UsageError as exc:
                self._loaded[key] = str(exc)
        return self._loaded[key]


def cmd_findings(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.failures.findings import DirectoryFindingsStore

    store = DirectoryFindingsStore(Path(args.output) / "findings")
    findings = [
        f
        for f in store.all()
        if (not args.repros or f.repro in args.repros) and (not args.kind or f.kind == args.kind)
    ]
    listing = Listing(
        (
            Column("id", "id"),
            Column("kind"),
            Column("signature", "text"),
            Column("minimal case", "id"),
            Column("minimal config", "text"),
            Column("targets"),
            Column("seen"),
            Column("last seen"),
        )
    )
    out = render.output_for(args)
    cases = _MinimalCases(store.root)
    for f in findings:
        name = store.path_of(f).stem
        listing.add(
            name,
            f.kind,
            f.signature,
            cases.of(f, name),
            _config_text(f.minimal_config),
            " ".join(f.targets),
            f"{len(f.failing_configs)} configs",
            f.last_seen[:10],
        )
    for problem in cases.problems:
        out.note(problem)
    summary = (
        f"{len(findings)} finding(s) under {store.root}"
        if findings
        else (f"no findings under {store.root}")
    )
    # The same bug failing with another message on a later release (issue 13).
    changed = [f"{store.path_of(f).stem}: {f.message_note()}" for f in findings if f.message_note()]
    out.show(
        render.View(
            data={
                "findings_dir": str(store.root),
                "findings": [_finding_record(store, f) for f in findings],
            },
            listings=[listing] if findings else [],
            lines=[*changed, summary],
        )
    )
    return 0
