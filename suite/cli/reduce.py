"""The ``repro reduce`` command, for :mod:`suite.cli.main` to mount.

``repro reduce FINDING`` reduces the finding's reproducer kernel at the Python AST level
while it still fails with the finding's signature (:mod:`suite.reduce.reducer`), writes
``<output>/reduce/<finding id>/reduced.py`` and points the finding at it.

A runtime failure (a fault, a hang, a wrong result) is reduced by launching every candidate
on a GPU of its target (or under Triton's interpreter, ``TRITON_INTERPRET=1``); without one it
is refused with the command to run where there is one.

Exit status: 0 reduced (or stopped by --time-budget with the best so far written); 2 bad
usage or input, a finding whose reproducer does not fail that way, or a runtime failure with
no GPU of its target here (one line on stderr).
Progress lines go to stderr; the last line on stdout is the reduced file's path.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from suite.cli.options import (
    DEFAULT_OUTPUT,
    add_isolation_options,
    add_wheelhouse_option,
    user_path,
)
from suite.cli.render import add_output_options
from suite.errors import UsageError
from suite.files import check_plain_name, locked, own_folder, write_replacing

if TYPE_CHECKING:
    from suite.engine import Environment


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """Add ``reduce`` to ``commands``. Imports nothing heavy."""
    reduce = commands.add_parser(
        "reduce", help="reduce a finding's kernel to the smallest one that fails the same way"
    )
    reduce.add_argument("finding", help="a finding (file, or name under OUTPUT/findings)")
    reduce.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="candidates compiled at once (default: the core count)",
    )
    reduce.add_argument(
        "--time-budget",
        type=float,
        default=900.0,
        metavar="S",
        help="stop after S seconds with the best so far (default: 900)",
    )
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
    add_isolation_options(reduce, timeout=120.0)
    add_wheelhouse_option(reduce)
    add_output_options(reduce, formats=False)


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


def cmd_reduce(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.engine import capture_environment, case_id, reproducer_for, runtime_failure
    from suite.reduce.interesting import values_checked
    from suite.reduce.launching import launch_gpus, passing_config
    from suite.reduce.reducer import reduce
    from suite.subject import load_finding
    from suite.toolchain.venvs import for_version

    if args.jobs < 1 or args.time_budget <= 0:
        raise UsageError("--jobs and --time-budget must be positive")
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
    out = render.output_for(args)
    if note:
        out.note(note)
    case = f"{case_id(found.repro, finding.target, finding.minimal_config)} {finding.signature}"
    origin = (finding.source or {}).get("origin") or found.source["path"]
    done = reduce(
        finding,
        finding_id,
        found,
        origin,
        python,
        own_folder(output, "reduce", finding_id),
        args.jobs,
        args.time_budget,
        args.seed,
        out.note,
        fixed_python,
        gpus,
    )
    progress = done.progress
    passing = passing_config(finding) if gpus is not None else None
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
    }
    with locked(path.parent):
        write_replacing(path, json.dumps(finding.to_json(), indent=2, default=str) + "\n")
    state = "reduced" if progress.done else "stopped by --time-budget; best so far"
    out.show(
        render.View(
            data={"finding": str(path), **finding.reduced, "tries": progress.tries},
            lines=[
                f"{case} {state}: kernel lines {progress.original_lines} -> {progress.lines}, "
                f"tokens {progress.original_tokens} -> {progress.tokens}, "
                f"{progress.tries} {'launches' if gpus is not None else 'compiles'}, "
                f"{progress.seconds:.0f} s",
                f"finding {path} points to it",
                str(done.path),
            ],
        )
    )
    return 0
