"""What people and scripts read: one output interface, three formats, progress on stderr.

Every command builds a :class:`View` (its listings, its closing lines, and the JSON document
that says the same) and hands it to the :class:`Output` its options chose:

- ``table``: rich tables for a terminal. Ids and short labels never wrap; long text folds in
  its own column; a table that cannot fit the width is shown row by row instead, never with
  an id cut.
- ``plain``: one line per row, cells separated by a tab, nothing wrapped or cut: what a CI log
  keeps and ``grep``/``cut -f`` read. The default when stdout is not a terminal.
- ``json``: the view's document on stdout, nothing else (``docs/schemas.md``).

Notes and progress go to stderr, so stdout holds only the result. In a terminal, a long
step shows a progress bar with an ETA; in a log, one line per step with the elapsed time.
``--quiet`` drops notes and progress, ``--verbose`` adds detail lines and the start of each step.

Rendering only; nothing here decides an outcome or a verdict.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from suite.cli.guard import printable
from suite.cli.options import note_old_spelling
from suite.engine import Verdict

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from suite.api import Config
    from suite.engine import CaseResult

__all__ = [
    "FORMATS",
    "Column",
    "Listing",
    "Output",
    "Steps",
    "View",
    "add_output_options",
    "output_for",
]

FORMATS = ("table", "plain", "json")
VERDICT_STYLE = {
    Verdict.OK: "green",
    Verdict.KNOWN: "yellow",
    Verdict.REGRESSION: "bold red",
    Verdict.FIXED: "bold cyan",
    Verdict.HARNESS_ERROR: "bold magenta",
    Verdict.REFUSED: "cyan",
}
EMPTY_CELL = "-"
NARROWEST_TEXT = 24
"""Below this many columns for a folding column, a table is shown row by row."""

Kind = Literal["id", "label", "text"]


@dataclass(frozen=True)
class Column:
    """A column of a listing. ``id`` (case ids, paths) and ``label`` (outcomes, verdicts,
    numbers) cells are never wrapped; ``text`` cells fold within their own column."""

    name: str
    kind: Kind = "label"


@dataclass
class Listing:
    """One table of a command's output: plain text cells, a style per row for the terminal."""

    columns: tuple[Column, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)
    styles: list[str] = field(default_factory=list)
    title: str = ""

    def add(self, *cells: Any, style: str = "") -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        self.rows.append(tuple("" if c is None else printable(c) for c in cells))
        self.styles.append(style)


@dataclass
class View:
    """What a command shows: listings, then closing lines (summary, paths); ``data`` is the
    JSON document of the same (``docs/schemas.md``)."""

    data: Any
    listings: list[Listing] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


class Steps:
    """Progress of one long operation: a bar with an ETA in a terminal, one line per step
    with the elapsed time in a log, nothing with ``--quiet``."""

    def __init__(self, what: str, total: int | None, mode: str, verbose: bool) -> None:
        self.what = what
        self.total = total
        self.done = 0
        self.mode = mode
        self.verbose = verbose
        self.started = time.monotonic()
        self._bar: Progress | None = None
        self._task: Any = None

    def __enter__(self) -> Steps:
        if self.mode == "bar":
            from rich.markup import escape
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("[bold]{task.fields[what]}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                TextColumn("{task.description}"),
                console=_stderr(),
                transient=True,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task("", total=self.total, what=escape(self.what))
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)

    def set_total(self, total: int, done: int = 0) -> None:
        """The number of steps, once known (and how many were done before, on a resume)."""
        self.total, self.done = total, done
        if self._bar is not None:
            self._bar.update(self._task, total=total, completed=done)

    def begin(self, description: str) -> None:
        """A step starts: the bar says so; a log says so only with ``--verbose``."""
        if self._bar is not None:
            from rich.markup import escape

            self._bar.update(self._task, description=escape(printable(description)))
        elif self.mode == "log" and self.verbose:
            self._line(f"{description} ...", self.done)

    def advance(self, description: str) -> None:
        """A step finished: what it came to."""
        self.done += 1
        if self._bar is not None:
            from rich.markup import escape

            self._bar.update(self._task, advance=1, description=escape(printable(description)))
        elif self.mode == "log":
            self._line(description, self.done)

    def _line(self, text: str, count: int) -> None:
        elapsed = time.monotonic() - self.started
        of = f"{count}/{self.total}" if self.total else str(count)
        line = f"[{elapsed:8.1f}s] {self.what} {of}: {text}"
        print(printable(line), file=sys.stderr, flush=True)


@functools.cache
def _stderr() -> Console:
    """Rich's console on stderr: whether it is a terminal, and where a bar is drawn (rich is
    imported only by the output that draws with it)."""
    from rich.console import Console

    return Console(stderr=True, highlight=False)


class Output:
    """The formatter every command writes through; :func:`output_for` picks the subclass."""

    format: str = ""

    def __init__(self, verbosity: int = 0) -> None:
        self.verbosity = verbosity

    @property
    def quiet(self) -> bool:
        return self.verbosity < 0

    @property
    def verbose(self) -> bool:
        return self.verbosity > 0

    def show(self, view: View) -> None:
        raise NotImplementedError

    def note(self, line: str) -> None:
        """A line about what is happening (stderr), dropped by ``--quiet``."""
        if not self.quiet:
            print(printable(line), file=sys.stderr, flush=True)

    def detail(self, line: str) -> None:
        """A line only ``--verbose`` wants (stderr)."""
        if self.verbose:
            print(printable(line), file=sys.stderr, flush=True)

    def steps(self, what: str, total: int | None = None) -> Steps:
        """Progress of a long operation, as a context manager."""
        mode = "off" if self.quiet else "bar" if _stderr().is_terminal else "log"
        return Steps(what, total, mode, self.verbose)


class TableOutput(Output):
    format = "table"

    @functools.cached_property
    def console(self) -> Console:
        from rich.console import Console

        return Console(highlight=False)

    def show(self, view: View) -> None:
        from rich.text import Text

        for listing in view.listings:
            if listing.title:
                self.console.print(Text(printable(listing.title), style="bold"))
            if self._fits(listing):
                self.console.print(self._table(listing))
            else:
                self._stacked(listing)
        for line in view.lines:
            self.console.print(Text(printable(line, lines=True)), overflow="ignore", crop=False)

    def _fixed_width(self, listing: Listing) -> int:
        widths = [
            max([len(column.name)] + [len(row[i]) for row in listing.rows])
            for i, column in enumerate(listing.columns)
            if column.kind != "text"
        ]
        return sum(widths) + 3 * len(listing.columns) + 1

    def _fits(self, listing: Listing) -> bool:
        folding = sum(1 for c in listing.columns if c.kind == "text")
        return self.console.width - self._fixed_width(listing) >= NARROWEST_TEXT * folding

    def _table(self, listing: Listing) -> Table:
        from rich import box
        from rich.table import Table
        from rich.text import Text

        table = Table(header_style="bold", box=box.SIMPLE_HEAD)
        for column in listing.columns:
            if column.kind == "text":
                table.add_column(column.name, overflow="fold", ratio=1)
            else:
                table.add_column(column.name, no_wrap=True, overflow="ignore")
        for row, style in zip(listing.rows, listing.styles, strict=True):
            table.add_row(*(Text(cell) for cell in row), style=style or None)
        return table

    def _stacked(self, listing: Listing) -> None:
        """Too narrow for a table: each row's id on its own line, its other cells below."""
        from rich.padding import Padding
        from rich.text import Text

        rest = listing.columns[1:]
        for row, style in zip(listing.rows, listing.styles, strict=True):
            self.console.print(Text(row[0], style=style or "bold"), overflow="ignore", crop=False)
            cells = [f"{c.name}: {v}" for c, v in zip(rest, row[1:], strict=True) if v]
            if cells:
                self.console.print(Padding(Text("  ".join(cells)), (0, 0, 0, 2), expand=False))


class PlainOutput(Output):
    format = "plain"

    def show(self, view: View) -> None:
        for listing in view.listings:
            if listing.title:
                print(f"# {printable(listing.title)}")
            print("# " + "\t".join(c.name for c in listing.columns))
            for row in listing.rows:
                print("\t".join(_plain_cell(cell) for cell in row))
        for line in view.lines:
            print(printable(line, lines=True))
        sys.stdout.flush()


class JsonOutput(Output):
    format = "json"

    def show(self, view: View) -> None:
        print(json.dumps(view.data, indent=2, default=str))
        sys.stdout.flush()


def _plain_cell(cell: str) -> str:
    return " ".join(cell.split()) or EMPTY_CELL


class FormatOption(argparse.Action):
    """``--format``; an old value (report's ``md``, the default) is taken as the default, with
    a note, for one release."""

    def __init__(self, *args: Any, old: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.old = tuple(old)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if values in self.old:
            note_old_spelling(f"--format {values}", "the default format (no --format)")
            values = None
        setattr(namespace, self.dest, values)


def add_output_options(
    parser: argparse.ArgumentParser,
    extra: dict[str, str] | None = None,
    old: Sequence[str] = (),
) -> None:
    """``--format`` (``extra``: a command's own formats beside the three, with what each
    shows; ``old``: values kept one release), ``--json`` (the same as ``--format json``),
    ``--quiet``, ``--verbose``."""
    extra = extra or {}
    group = parser.add_argument_group("output")
    shown = (*FORMATS, *extra)
    group.add_argument(
        "--format",
        action=FormatOption,
        choices=(*shown, *old),
        old=old,
        metavar="{" + ",".join(shown) + "}",
        default=None,
        help="table (a terminal's default), plain (one line per row, tab-separated; the "
        "default when stdout is not a terminal) or json"
        + "".join(f"; {name}: {shows}" for name, shows in extra.items()),
    )
    group.add_argument(
        "--json",
        dest="format",
        action="store_const",
        const="json",
        help="the same as --format json: the result as JSON (docs/schemas.md)",
    )
    group.add_argument(
        "-q", "--quiet", action="store_true", help="no progress and no notes on stderr"
    )
    group.add_argument(
        "-v", "--verbose", action="store_true", help="more detail on stderr (each step's start)"
    )


def output_for(args: argparse.Namespace) -> Output:
    """The output the parsed options ask for (``table`` in a terminal, else ``plain``)."""
    chosen = getattr(args, "format", None)
    if chosen not in FORMATS:
        chosen = "table" if sys.stdout.isatty() else "plain"
    verbosity = -1 if getattr(args, "quiet", False) else 1 if getattr(args, "verbose", False) else 0
    kinds: dict[str, type[Output]] = {
        "table": TableOutput,
        "plain": PlainOutput,
        "json": JsonOutput,
    }
    return kinds[chosen](verbosity)


CASE_COLUMNS = (
    Column("case", "id"),
    Column("outcome"),
    Column("verdict"),
    Column("triage"),
    Column("signature / reason", "text"),
    Column("smem"),
    Column("regs"),
    Column("s"),
)


def triage_label(result: CaseResult) -> str:
    """``compiler-bug``, ``user-error:<rule>``, ... for a failure (or a toolchain gap)."""
    from suite.engine import triage_of

    if result.triage:  # recorded when the case ran
        return result.triage
    found = triage_of(result)
    return found.label if found else ""


def case_listing(results: Sequence[CaseResult]) -> Listing:
    """One row per case: full id, outcome, verdict, triage, signature (or the reason)."""
    listing = Listing(CASE_COLUMNS)
    for r in sorted(results, key=lambda r: (r.repro, r.target, r.case_id)):
        reason = str(r.signature) if r.signature else r.message or (r.notes.not_launched or "")
        if r.expectation:
            reason += f"  ({r.expectation})"
        listing.add(
            r.case_id + (" (gpu)" if r.gpu else ""),
            r.shown.label,
            r.verdict,
            triage_label(r),
            reason,
            r.metrics.get("shared_bytes"),
            r.metrics.get("registers"),
            f"{r.duration_s:.1f}",
            style=VERDICT_STYLE.get(r.verdict, ""),
        )
    return listing


class CaseRecord(TypedDict):
    """A case in ``--json`` output (docs/schemas.md)."""

    case_id: str
    repro: str
    target: str
    config: Config
    outcome: str
    verdict: str
    signature: str | None
    triage: str | None
    message: str
    expectation: str
    gpu: bool
    duration_s: float
    subject: str | None


def case_record(result: CaseResult, run_folder: Path | None) -> CaseRecord:
    """A case in ``--json`` output: what the row shows, and the handle that ``repro report``
    and ``repro replay`` take (``RUN_DIR:CASE_ID``)."""
    return {
        "case_id": result.case_id,
        "repro": result.repro,
        "target": result.target,
        "config": result.config,
        "outcome": result.shown.label,
        "verdict": result.verdict,
        "signature": result.signature.text if result.signature else None,
        "triage": triage_label(result) or None,
        "message": result.message,
        "expectation": result.expectation,
        "gpu": result.gpu,
        "duration_s": result.duration_s,
        "subject": f"{run_folder}:{result.case_id}" if run_folder else None,
    }


def summary_counts(results: Sequence[CaseResult]) -> dict[str, dict[str, int]]:
    """The verdicts and the outcomes (as shown) of ``results``, each adding up to all of them
    (what summary.json counts too: ``RunStore.write_summary``)."""
    return {
        "verdicts": dict(sorted(Counter(r.verdict for r in results).items())),
        "outcomes": dict(sorted(Counter(r.shown.label for r in results).items())),
    }


def summary_line(results: Sequence[CaseResult], exit_status: int) -> str:
    """``N cases: 123 ok (110 compiled, 13 passed), 36 known (36 compiler-error), 3
    harness-error; exit 4``: each verdict's count, and in parentheses the outcomes of those
    cases (left out where the one outcome is the verdict's own word), so that every
    breakdown adds up to the number it follows."""
    by_verdict: dict[str, Counter[str]] = {}
    for r in results:
        by_verdict.setdefault(r.verdict, Counter())[r.shown.label] += 1
    parts = []
    for verdict, outcomes in sorted(by_verdict.items()):
        part = f"{outcomes.total()} {verdict}"
        if list(outcomes) != [verdict]:
            part += " (" + ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items())) + ")"
        parts.append(part)
    return f"{len(results)} cases: {', '.join(parts)}; exit {exit_status}"
