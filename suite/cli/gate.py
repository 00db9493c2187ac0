"""The ``repro gate`` command, for :mod:`suite.cli.main` to mount.

``gate`` decides whether a proposed set of autotune configs may replace the
current one (:mod:`suite.gate.gate`). Exit status: 0 pass, 1 fail, 2 bad input (one
line on stderr, via :class:`~suite.errors.UsageError`), or a proposal the release that
compiled it could not check (the report is written; its one line on stderr).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from suite.cli.options import (
    Parser,
    Work,
    add_execution_options,
    add_gpu_option,
    add_isolation_options,
    add_old_spelling,
    add_target_option,
    add_time_budget_option,
    user_path,
)
from suite.cli.render import add_output_options
from suite.errors import UsageError

DEFAULT_SIZES = "4096,8192"


def _split(values: Sequence[str] | None) -> list[str]:
    return [v for value in values or () for v in value.split(",") if v]


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """Add ``gate`` to ``commands`` (built with the CLI's parser class). Imports nothing heavy."""
    gate = commands.add_parser(
        "gate",
        help="decide whether proposed autotune configs may replace the current ones",
        description=(
            "Static checks of every config x target (compile, shared/tensor memory, registers, "
            "spills), with --gpu correctness and do_bench speed against cuBLAS; exit 0 pass, "
            "1 fail, 2 bad input or a proposed config this Triton cannot check."
        ),
    )
    gate.add_argument("--kernel", required=True, help="reproducer id or reproducer file (.py)")
    gate.add_argument(
        "--current",
        required=True,
        metavar="FILE",
        type=user_path,
        help="current configs: YAML/TOML/JSON list, or a .py with a triton.autotune kernel "
        "(FILE.py::KERNEL when it has several)",
    )
    gate.add_argument(
        "--proposed",
        metavar="FILE",
        type=user_path,
        help="proposed configs (same forms; optional with --suggest)",
    )
    add_target_option(
        gate, "targets, comma-separated or repeated (default: all of the reproducer's)"
    )
    add_old_spelling(gate, "--targets", "--target")
    gate.add_argument(
        "--sizes",
        default=DEFAULT_SIZES,
        help=f"GEMM sizes timed on the GPU: N (cube) or MxNxK, comma-separated "
        f"(default {DEFAULT_SIZES})",
    )
    # Off unless asked: checking and timing every config at each size takes minutes of GPU.
    add_gpu_option(gate, "check correctness and time on a visible GPU", default="off", bare=True)
    gate.add_argument(
        "--suggest",
        action="store_true",
        help="rank the kernel's declared space by measured speed; write suggested.yaml "
        "(needs a GPU)",
    )
    gate.add_argument("--suggest-count", type=int, default=4, help="configs to suggest (default 4)")
    add_time_budget_option(
        gate, "seconds for the whole --suggest run, static checks included", 480.0
    )
    add_old_spelling(gate, "--budget-s", "--time-budget")
    gate.add_argument(
        "--input-sets", type=int, default=3, help="fresh input sets timed per size (default 3)"
    )
    gate.add_argument(
        "--noise-floor",
        type=float,
        default=1.0,
        metavar="PCT",
        help="smallest noise band, in percent, when comparing best proposed with best current "
        "(default 1.0; the measured spread counts when larger)",
    )
    gate.add_argument("--jit", help="the @triton.jit kernel to time, when the module has several")
    gate.add_argument("--seed", type=int, help="seed of the random inputs (default: the clock)")
    add_execution_options(gate, Work.COMPILE)
    gate.add_argument("--python", type=user_path, help="interpreter whose Triton runs the cases")
    add_output_options(gate)
    add_isolation_options(gate)


def cmd_gate(args: argparse.Namespace) -> int:
    from suite.cli import render
    from suite.cli.guard import one_line
    from suite.gate.decide import ProposalOutcome
    from suite.gate.gate import run_gate
    from suite.gate.inputs import GateOptions, parse_sizes
    from suite.gate.static import StaticStatus

    if args.workers < 1 or args.timeout <= 0 or args.memory_cap <= 0:
        raise UsageError("--workers, --timeout and --memory-cap must be positive")
    if args.noise_floor < 0:
        raise UsageError("--noise-floor must not be negative")
    options = GateOptions(
        kernel=args.kernel,
        current=args.current,
        proposed=args.proposed,
        targets=_split(args.target),
        sizes=parse_sizes(args.sizes),
        gpu=_gpu_wanted(args.gpu) or args.suggest,
        suggest=args.suggest,
        suggest_count=args.suggest_count,
        budget_s=args.time_budget,
        input_sets=args.input_sets,
        noise_floor=args.noise_floor / 100.0,
        jit=args.jit,
        output=Path(args.output),
        workers=args.workers,
        timeout_s=args.timeout,
        memory_bytes=int(args.memory_cap * (1 << 30)),
        python=args.python or sys.executable,
        seed=args.seed,
    )

    out = render.output_for(args)
    with out.steps("gate") as steps:
        result = run_gate(options, steps.advance)
    checks = [
        {
            "case_id": check["case_id"],
            "target": target,
            "role": row["role"],
            "config": row["label"],
            "status": check["status"],
            "signature": check["signature"],
            "triage": (check.get("triage") or {}).get("label"),
            "reason": check["reason"],
        }
        for row in result.report["configs"]
        for target, check in row["static"].items()
    ]
    listing = render.Listing(
        (
            render.Column("case", "id"),
            render.Column("role"),
            render.Column("status"),
            render.Column("triage"),
            render.Column("signature / reason", "text"),
        )
    )
    for check in checks:
        listing.add(
            check["case_id"],
            check["role"],
            check["status"],
            check["triage"],
            check["signature"] or check["reason"],
            style="red" if check["status"] == StaticStatus.REJECT else "",
        )
    verdict = f"gate: {result.report['verdict']} (exit {result.exit_status})"
    view = render.View(
        data={
            "verdict": result.report["verdict"],
            "exit_status": result.exit_status,
            "folder": str(result.folder),
            "markdown": str(result.folder / "gate.md"),
            "json": str(result.folder / "gate.json"),
            "checks": checks,
            "report": result.report,
        },
        listings=[listing],
        lines=[result.markdown, verdict, f"report: {result.folder / 'gate.md'} (and gate.json)"],
    )
    out.show(view)
    if result.report["verdict"] is ProposalOutcome.UNCHECKED:
        # The input does not fit the release that checked it (exit 2): its one line.
        print(f"repro: error: {one_line('; '.join(result.report['reasons']))}", file=sys.stderr)
    return result.exit_status


def _gpu_wanted(gpu: str) -> bool:
    """``--gpu``: ``on``, or ``auto`` with a GPU visible."""
    if gpu == "auto":
        from suite.engine import gpu_arch

        return gpu_arch() is not None
    return gpu == "on"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m suite.cli.gate ...``: the command without the main parser (tests, the device)."""
    parser = Parser(prog="repro")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    add_parsers(commands)
    try:
        args = parser.parse_args(["gate", *(sys.argv[1:] if argv is None else argv)])
        return cmd_gate(args)
    except UsageError as exc:
        print(f"repro: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("repro: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
