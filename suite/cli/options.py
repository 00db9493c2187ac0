"""Command-line options shared by the commands that run cases (run, matrix)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from suite.errors import UsageError

if TYPE_CHECKING:
    from suite.engine import Baseline, Execution, Selection


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


DEFAULT_OUTPUT = "reports"
"""The output root every command writes under unless told otherwise."""


def user_path(text: str) -> str:
    """A path the user typed (or a relative default such as ``reports``), made absolute
    against the folder the command started in, as argparse reads it (the ``type`` of every
    option that names a file, a folder or an interpreter): every child runs in a working
    folder of its own, so none may be handed a path that is relative to the parent's.
    ``abspath``, not ``resolve``: a venv's python is a link that must stay the venv's.
    An empty value (``--plan ''``: none) stays empty."""
    return os.path.abspath(text) if text else text


def split(values: Sequence[str] | None) -> list[str]:
    """Repeatable, comma-separated option values as one list."""
    return [v for value in values or () for v in value.split(",") if v]


def add_execution_options(parser: argparse.ArgumentParser, timeout: float = 600.0) -> None:
    """How many cases at once, within which bounds, written where."""
    parser.add_argument(
        "-j",
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="cases run at once (default: the core count)",
    )
    parser.add_argument(
        "--timeout", type=float, default=timeout, help=f"seconds per case (default {timeout:g})"
    )
    parser.add_argument(
        "--memory-cap", type=float, default=8.0, help="GiB of resident memory per case (default 8)"
    )
    parser.add_argument(
        "-o",
        "--output",
        type=user_path,
        default=DEFAULT_OUTPUT,
        help="output root (default: reports)",
    )


def add_isolation_options(parser: argparse.ArgumentParser, timeout: float = 600.0) -> None:
    """The bounds and isolation of every execution of reproducer code a command makes
    (``--timeout``, ``--memory-cap``, ``--isolation``), those the parser lacks."""
    have = parser._option_string_actions
    if "--timeout" not in have:
        parser.add_argument(
            "--timeout", type=float, default=timeout, help=f"seconds per case (default {timeout:g})"
        )
    if "--memory-cap" not in have:
        parser.add_argument(
            "--memory-cap",
            type=float,
            default=8.0,
            help="GiB of resident memory per case (default 8)",
        )
    if "--isolation" not in have:
        parser.add_argument(
            "--isolation",
            choices=("warm", "fresh"),
            default="warm",
            help="fork cases from a warm template (default) or start fresh interpreters",
        )


def add_wheelhouse_option(parser: argparse.ArgumentParser) -> None:
    """``--wheelhouse DIR``, for the commands that may build a release venv."""
    parser.add_argument(
        "--wheelhouse",
        metavar="DIR",
        type=user_path,
        help="build release venvs from this folder of wheels, no package index "
        "(default: $REPRO_WHEELHOUSE; pip's PIP_NO_INDEX and PIP_FIND_LINKS apply too)",
    )


def apply_wheelhouse(args: argparse.Namespace) -> None:
    """Every release venv the command builds comes from ``--wheelhouse``, when given."""
    if getattr(args, "wheelhouse", None):
        from suite.toolchain.venvs import use_wheelhouse

        use_wheelhouse(args.wheelhouse)


def add_case_options(parser: argparse.ArgumentParser) -> None:
    """What to run and how."""
    parser.add_argument("repros", nargs="*", help="reproducer ids or files (default: all)")
    parser.add_argument("-t", "--target", action="append", help="target(s), e.g. sm_100")
    parser.add_argument("-c", "--configs", action="append", help="config set(s) to run")
    parser.add_argument(
        "--config-file", type=user_path, help="YAML/TOML/JSON list of configs to run instead"
    )
    parser.add_argument(
        "--gpu",
        choices=("auto", "on", "off"),
        default="auto",
        help="launch and check cases on a visible GPU (default: auto)",
    )
    parser.add_argument(
        "--no-sanitizer",
        action="store_true",
        help="do not run a launch that faults or is wrong again under compute-sanitizer",
    )
    parser.add_argument(
        "--no-ptxas-differential",
        action="store_true",
        help="do not relaunch a launch that faults or is wrong with its PTX assembled by "
        "another ptxas build and at -O0",
    )
    add_execution_options(parser)
    parser.add_argument(
        "--baseline", type=user_path, help="expectations file (default: the shipped baseline)"
    )
    add_isolation_options(parser)


def case_options(
    args: argparse.Namespace, python: str = "", shard: str = "", keep_passing: bool = False
) -> tuple[Selection, Execution, Baseline]:
    """The selection, the execution and the baseline the options describe."""
    from suite.engine import Baseline, Bounds, Execution, Selection

    if args.workers < 1 or args.timeout <= 0 or args.memory_cap <= 0:
        raise UsageError("--workers, --timeout and --memory-cap must be positive")
    for option, values in (("--target", args.target), ("--configs", args.configs)):
        if values is not None and not split(values):
            raise UsageError(f"{option} {' '.join(map(repr, values))}: names nothing")
    selection = Selection(
        repros=args.repros,
        targets=split(args.target),
        sets=split(args.configs),
        config_file=args.config_file,
        gpu=args.gpu,
        python=python,
        shard=shard,
    )
    if getattr(args, "command", "run") != "run":
        # `repro run` plans its cases before its first progress line; `repro matrix` resolves
        # (and may build) a venv per release first, so what it was told is checked here.
        check_selection(selection)
        check_release_specs(split(getattr(args, "triton", None)), getattr(args, "wheel", None))
    execution = Execution(
        python=python or sys.executable,
        bounds=Bounds(timeout_s=args.timeout, memory_bytes=int(args.memory_cap * (1 << 30))),
        workers=args.workers,
        keep_passing=keep_passing,
        warm=args.isolation == "warm",
        sanitize=not args.no_sanitizer,
        ptxas_differential=not args.no_ptxas_differential,
    )
    return selection, execution, Baseline.load(Path(args.baseline) if args.baseline else None)


def check_selection(selection: Selection) -> None:
    """Refuse, before any work, a selection that names nothing or something unknown:
    reproducers, targets, config sets, the config file, the shard."""
    from suite.engine import discover, expand_cases, load_config_file
    from suite.engine import shard as shard_of

    found = discover.select(list(selection.repros))
    configs = load_config_file(selection.config_file) if selection.config_file else []
    specs = expand_cases(found, selection.targets, selection.sets, configs)
    if not specs:
        wanted = ", ".join(selection.targets) or "their own targets"
        raise UsageError(f"nothing to run: no case of the selection has target(s) {wanted}")
    shard_of(specs, selection.shard)


def check_release_specs(specs: Sequence[str], wheels: Sequence[str] | None = None) -> None:
    """Each ``--triton`` is ``latest`` or a version, each ``--wheel`` an existing file; said
    before the first release's venv is looked up (or built: minutes)."""
    from packaging.version import InvalidVersion, Version

    for spec in specs:
        if spec == "latest" or spec.endswith(".whl") or "/" in spec:
            continue
        try:
            Version(spec)
        except InvalidVersion:
            raise UsageError(f"--triton {spec!r}: not a Triton version (e.g. 3.5.0)") from None
    for wheel in wheels or ():
        if not Path(wheel).is_file():
            raise UsageError(f"--wheel {wheel}: no such file")
