"""The ``repro reduce`` command, for :mod:`suite.cli.main` to mount.

``repro reduce FINDING`` reduces the finding's reproducer kernel at the Python AST level
while it still fails with the finding's signature (:mod:`suite.reduce.reducer`), writes
``<output>/reduce/<finding id>/reduced_case.py`` (the reducer's form, which the engine runs)
and ``reduced.py`` (the same kernel as a standalone program, which never imports the suite)
and points the finding at them.

A runtime failure (a fault, a hang, a wrong result) is reduced by launching every candidate
on a GPU of its target (or under Triton's interpreter, ``TRITON_INTERPRET=1``); without one it
is refused with the command to run where there is one.

Exit status: 0 reduced (or stopped by --time-budget with the best so far written); 2 bad
usage or input, a finding whose reproducer does not fail that way, or a runtime failure with
no GPU of its target here (one line on stderr).
Progress lines go to stderr; the last line on stdout is the reducer's form's path
(``reduced_case.py``), the line before it names ``reduced.py``.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from suite.cli.options import (
    DEFAULT_OUTPUT,
    Work,
    add_isolation_options,
    add_old_spelling,
    add_time_budget_option,
    add_wheelhouse_option,
    add_workers_option,
    user_path,
)
from suite.cli.render import add_output_options
from suite.errors import UsageError
from suite.files import check_plain_name, locked, own_folder, write_replacing

if TYPE_CHECKING:
    from suite.cli.render import Output, View
    from suite.engine import Environment, Found
    from suite.failures.findings import Finding
    from suite.reduce.reducer import Reduction


#: What ``reduced.py`` does, as the command says it.
STANDALONE_SAYS = "python reduced.py: exit 1 when the bug shows"


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """Add ``reduce`` to ``commands``. Imports nothing heavy."""
    reduce = commands.add_parser(
        "reduce", help="reduce a finding's kernel to the smallest one that fails the same way"
    )
    reduce.add_argument("finding", help="a finding (file, or name under OUTPUT/findings)")
    add_workers_option(reduce, "candidates compiled")
    add_old_spelling(reduce, "--jobs", "--workers")
    add_time_budget_option(reduce, "stop after S seconds with the best so far", 900.0)
    reduce.add_argument(
        "--seed", type=int, default=0, help="order of the edits (0: the passes' own order)"
    )
    reduce.add_argument(
        "-o",
        "--output",
        type=user_path,
        default=DEFAULT_OUTPUT,
        help="output root: findings under OUTPUT/findings, the reduction in "
        "OUTPUT/reduce/<finding id>/ (default: reports)",
    )
    reduce.add_argument(
        "--python", type=user_path, help="interpreter whose Triton judges the candidates"
    )
    reduce.add_argument(
        "--fixed-release",
        metavar="VERSION",
        help="a Triton release where the bug is fixed: every kept kernel must compile there "
        "(default: the finding's first_good, once bisect has found it; 'none' to skip)",
    )
    add_isolation_options(reduce, Work.CANDIDATE)
    add_wheelhouse_option(reduce)
    add_output_options(reduce)


def _interpreter(environment: Environment, python: str | None) -> str:
    from suite.subject import interpreter_for
    from suite.toolchain.venvs import for_version

    if python and not Path(python).exists():
        raise UsageError(f"--python: no such interpreter: {python}")
    chosen = interpreter_for(environment, python)
    if chosen:
        return chosen
    version = environment.triton
    if not version:
        raise UsageError("the finding records no Triton release; name one with --python")
    return for_version(str(version)).python


@dataclass(frozen=True)
class ReducePlan:
    """What ``repro reduce`` reduces, checked before any work: the finding (its file and
    id), the reproducer file, the interpreter that judges candidates, the GPUs a runtime
    failure's candidates launch on (None: compiled only), the fixed release's interpreter
    every kept kernel must compile under ('' for none)."""

    finding: Finding
    finding_id: str
    path: Path
    found: Found
    note: str
    python: str
    gpus: tuple[str, ...] | None
    fixed_python: str


def cmd_reduce(args: argparse.Namespace) -> int:
    from suite.cli import render

    plan = plan_reduction(args)
    out = render.output_for(args)
    if plan.note:
        out.note(plan.note)
    done = run_reduction(args, plan, out)
    record_reduction(plan, done)
    out.show(reduction_view(plan, done))
    return 0


def plan_reduction(args: argparse.Namespace) -> ReducePlan:
    """The finding, its reproducer file and the interpreters, each refused before any work
    when it cannot be reduced here."""
    from suite.engine import capture_environment, reproducer_for, runtime_failure
    from suite.reduce.launching import launch_gpus
    from suite.subject import load_finding
    from suite.toolchain.venvs import for_version

    if args.workers < 1 or args.time_budget <= 0:
        raise UsageError("--workers and --time-budget must be positive")
    output = Path(args.output)
    finding, _, path = load_finding(args.finding, output)
    finding_id = check_plain_name(path.stem, "finding id")
    own_folder(output, "reduce", finding_id, make=False)  # refused before any work
    python = _interpreter(finding.environment, args.python)
    found, note = reproducer_for(finding.repro, finding.source, path.parent)
    if "path" not in found.source:
        raise UsageError(f"{finding.repro} comes from a module, not a file: nothing to reduce")
    gpus = None
    if runtime_failure(finding.signature):
        # Refused before any work when nothing here can launch it.
        gpus = launch_gpus(finding, args.finding, capture_environment(python))
    fixed = args.fixed_release or finding.first_good or ""
    fixed_python = "" if fixed in ("", "none") else for_version(fixed).python
    return ReducePlan(finding, finding_id, path, found, note, python, gpus, fixed_python)


def run_reduction(args: argparse.Namespace, plan: ReducePlan, out: Output) -> Reduction:
    """The reduction, written under ``<output>/reduce/<finding id>/``."""
    from suite.reduce.reducer import reduce

    finding, found = plan.finding, plan.found
    origin = (finding.source or {}).get("origin") or found.source["path"]
    return reduce(
        finding,
        plan.finding_id,
        found,
        origin,
        plan.python,
        own_folder(Path(args.output), "reduce", plan.finding_id),
        args.workers,
        args.time_budget,
        args.seed,
        out.note,
        plan.fixed_python,
        plan.gpus,
    )


def record_reduction(plan: ReducePlan, done: Reduction) -> None:
    """The finding points to the reduced kernel, with what it was checked with."""
    from suite.reduce.interesting import values_checked
    from suite.reduce.launching import passing_config

    finding, progress = plan.finding, done.progress
    passing = passing_config(finding) if plan.gpus is not None else None
    finding.reduced = {
        "path": str(done.path.resolve()),
        "original": str((done.path.parent / "original.py").resolve()),
        "lines": progress.lines,
        "tokens": progress.tokens,
        "original_lines": progress.original_lines,
        "original_tokens": progress.original_tokens,
        "complete": progress.done,
        # What every kept candidate was also launched with (the finding's config changed to
        # its passing neighbour), where it did not fail; its values were checked there only
        # for a wrong result (a fault keeps its tie to the config, not the arithmetic).
        "passing_change": {
            k: v for k, v in (passing or {}).items() if finding.minimal_config.get(k) != v
        }
        or None,
        "values_checked": values_checked(finding.signature),
        "standalone": str(done.standalone.resolve()) if done.standalone else None,
    }
    with locked(plan.path.parent):
        write_replacing(plan.path, json.dumps(finding.to_json(), indent=2, default=str) + "\n")


def reduction_view(plan: ReducePlan, done: Reduction) -> View:
    """What ``repro reduce`` shows: the case, the sizes before and after, the file last."""
    from suite.cli import render
    from suite.engine import case_id

    finding, progress = plan.finding, done.progress
    case = (
        f"{case_id(plan.found.repro, finding.target, finding.minimal_config)} {finding.signature}"
    )
    state = "reduced" if progress.done else "stopped by --time-budget; best so far"
    return render.View(
        data={"finding": str(plan.path), **(finding.reduced or {}), "tries": progress.tries},
        lines=[
            f"{case} {state}: kernel lines {progress.original_lines} -> {progress.lines}, "
            f"tokens {progress.original_tokens} -> {progress.tokens}, "
            f"{progress.tries} {'launches' if plan.gpus is not None else 'compiles'}, "
            f"{progress.seconds:.0f} s",
            f"finding {plan.path} points to it",
            *([f"standalone: {done.standalone} ({STANDALONE_SAYS})"] if done.standalone else []),
            str(done.path),
        ],
    )
