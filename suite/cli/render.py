"""What a person sees in the terminal: a progress bar while cases run, a table after.

Rendering only; nothing here decides an outcome or a verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from suite.engine.outcome import CaseResult

VERDICT_STYLE = {"ok": "green", "known": "yellow", "regression": "bold red", "fixed": "bold cyan"}

console = Console(stderr=False, highlight=False)


def progress() -> Progress:
    return Progress(
        TextColumn("[bold]cases"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )


def results_table(results: Sequence[CaseResult]) -> Table:
    table = Table(show_lines=False, header_style="bold")
    for column in ("case", "outcome", "verdict", "signature / reason", "smem", "regs", "s"):
        table.add_column(column, overflow="fold")
    for r in sorted(results, key=lambda r: (r.repro, r.target, r.case_id)):
        style = VERDICT_STYLE.get(r.verdict, "")
        reason = str(r.signature) if r.signature else r.message
        if r.expectation:
            reason += f"  ({r.expectation})"
        table.add_row(
            escape(r.case_id) + (" (gpu)" if r.gpu else ""),
            r.outcome.label,
            f"[{style}]{r.verdict}[/]" if style else r.verdict,
            escape(reason),
            _fmt(r.metrics.get("shared_bytes")),
            _fmt(r.metrics.get("registers")),
            f"{r.duration_s:.1f}",
        )
    return table


def _fmt(value: Any) -> str:
    return "" if value is None else str(value)


def summary_line(results: Sequence[CaseResult], exit_status: int) -> str:
    verdicts = Counter(r.verdict for r in results)
    outcomes = Counter(r.outcome.label for r in results)
    parts = [f"{n} {v}" for v, n in sorted(verdicts.items())]
    kinds = ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items()))
    return f"{len(results)} cases: {', '.join(parts)} ({kinds}); exit {exit_status}"
