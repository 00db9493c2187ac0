"""The command line's vocabulary: one flag name and one meaning per concept on every command.

A time budget is ``--time-budget S``, processes at once ``-j N``/``--workers N``, the GPU
``--gpu {auto,on,off}``, a target ``-t``/``--target``, what stdout shows ``--format``
(``--json`` is ``--format json``), seconds per execution ``--timeout S`` with one default
per kind of work (:class:`suite.engine.defaults.Work`). An old spelling is kept one release,
hidden from ``--help``: it does what the new one does and says so in one line on stderr
(:func:`add_old_spelling`).
docs/cli.md is the table of it all.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from suite.engine import Work
from suite.errors import UsageError

if TYPE_CHECKING:
    from suite.engine import Baseline, Execution, Selection


GPU_CHOICES = ("auto", "on", "off")
OLD_SPELLING_NOTE = "repro: note: {old} is now {new}; the old spelling goes in the next release"


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's, but an option whose value is optional only for an old spelling (gate's
    bare ``--gpu``) shows its value as the other commands do, not in brackets."""

    def _format_args(self, action: argparse.Action, default_metavar: str) -> str:
        if isinstance(action, GpuOption):
            return "{" + ",".join(GPU_CHOICES) + "}"
        return super()._format_args(action, default_metavar)


NOTED: set[str] = set()
"""The old spellings this process has noted: each says so once, however often it is given."""


def note_old_spelling(old: str, new: str) -> None:
    """The one line an old spelling says on stderr."""
    if old not in NOTED:
        NOTED.add(old)
        print(OLD_SPELLING_NOTE.format(old=old, new=new), file=sys.stderr)


class OldSpelling(argparse.Action):
    """An old spelling of an option, kept one release: hidden from ``--help``, it does what
    the current option does and says so on stderr."""

    def __init__(
        self, option_strings: list[str], dest: str, current: argparse.Action, **kwargs: Any
    ):
        super().__init__(option_strings, dest, **kwargs)
        self.current = current

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        new = self.current.option_strings[-1]
        note_old_spelling(option_string or self.option_strings[0], new)
        self.current(parser, namespace, values, new)


def add_old_spelling(parser: argparse.ArgumentParser, old: str, new: str) -> None:
    """Accept ``old`` for one release as the option ``new`` already on ``parser``."""
    current = parser._option_string_actions[new]
    typed: dict[str, Any] = {"type": current.type} if current.type is not None else {}
    parser.add_argument(
        old,
        action=OldSpelling,
        current=current,
        dest=current.dest,
        nargs=current.nargs,
        **typed,
        choices=current.choices,
        metavar=current.metavar,
        default=argparse.SUPPRESS,
        help=argparse.SUPPRESS,
    )


class GpuOption(argparse.Action):
    """``--gpu {auto,on,off}``; on ``repro gate`` a bare ``--gpu`` (its old spelling) is
    ``--gpu on``, with a note."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if values is None:
            note_old_spelling("--gpu without a value", "--gpu on")
            values = "on"
        setattr(namespace, self.dest, values)


def add_gpu_option(
    parser: argparse.ArgumentParser, help: str, default: str = "auto", bare: bool = False
) -> None:
    """``--gpu {auto,on,off}`` (``bare``: a bare ``--gpu`` is still ``on``, for one release)."""
    parser.add_argument(
        "--gpu",
        action=GpuOption,
        nargs="?" if bare else None,
        choices=GPU_CHOICES,
        default=default,
        help=f"{help} (default: {default})",
    )


def add_workers_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``-j N``/``--workers N``: how many processes at once."""
    parser.add_argument(
        "-j",
        "--workers",
        type=int,
        metavar="N",
        default=os.cpu_count() or 1,
        help=f"{what} at once (default: the core count)",
    )


def add_time_budget_option(
    parser: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup,
    help: str,
    default: float | None,
) -> None:
    """``--time-budget S``: the seconds a whole search, reduction or ranking may take."""
    shown = "none" if default is None else f"{default:g}"
    parser.add_argument(
        "--time-budget",
        type=float,
        metavar="S",
        default=default,
        help=f"{help} (default: {shown})",
    )


def add_timeout_option(parser: argparse.ArgumentParser, work: Work, what: str = "") -> None:
    """``--timeout S``: seconds per execution of ``work``, its kind's one default."""
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        default=work.value,
        help=f"seconds per {what or work.name.lower()} (default: {work.value:g})",
    )


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


def add_execution_options(parser: argparse.ArgumentParser, work: Work = Work.CASE) -> None:
    """How many cases at once, within which bounds, written where."""
    add_workers_option(parser, "cases run")
    add_timeout_option(parser, work)
    parser.add_argument(
        "--memory-cap",
        type=float,
        metavar="GIB",
        default=8.0,
        help="GiB of memory a case may hold (default: 8)",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=user_path,
        default=DEFAULT_OUTPUT,
        help="output root (default: reports)",
    )


def add_isolation_options(parser: argparse.ArgumentParser, work: Work = Work.CASE) -> None:
    """The bounds and isolation of every execution of reproducer code a command makes
    (``--timeout``, ``--memory-cap``, ``--isolation``), those the parser lacks."""
    have = parser._option_string_actions
    if "--timeout" not in have:
        add_timeout_option(parser, work)
    if "--memory-cap" not in have:
        parser.add_argument(
            "--memory-cap",
            type=float,
            metavar="GIB",
            default=8.0,
            help="GiB of memory a case may hold (default: 8)",
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


def add_target_option(parser: argparse.ArgumentParser, help: str) -> None:
    """``-t``/``--target``, comma-separated or repeated."""
    parser.add_argument("-t", "--target", action="append", help=help)


def add_case_options(parser: argparse.ArgumentParser) -> None:
    """What to run and how."""
    parser.add_argument("repros", nargs="*", help="reproducer ids or files (default: all)")
    add_target_option(parser, "target(s), e.g. sm_100")
    parser.add_argument("-c", "--configs", action="append", help="config set(s) to run")
    parser.add_argument(
        "--config-file", type=user_path, help="YAML/TOML/JSON list of configs to run instead"
    )
    add_gpu_option(parser, "launch and check cases on a visible GPU")
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
