"""``repro dashboard``: one static HTML page from the results history.

Reads every run under the output root (``runs/*`` and the per-release runs of
``matrix/*``), newest last, and renders with Jinja (autoescape on):

- per reproducer, target and Triton release, a heatmap over two parameters,
  each cell the newest outcome of the configs that share those two values (the
  worst one when they differ), coloured by outcome and, for failures, by
  signature;
- a history table: each case's outcome in each run (Triton release, date), and beside the
  case what changed in its failure across releases ("message changed in 3.7.0: ...", the
  same bug by :func:`suite.engine.same_bug.is_same_bug`);
- the findings under ``<output>/findings`` with their first bad and first good releases
  and the same note from the signature each release showed;
- links to the run folders and to rendered reports under ``<output>/<id>/``.
"""

from __future__ import annotations

import colorsys
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from suite.engine import CaseResult, Outcome, RunStore, catalogue, is_same_bug
from suite.errors import UsageError
from suite.failures.findings import DirectoryFindingsStore, change_note
from suite.files import lies_under, own_folder, read_regular, write_replacing
from suite.templating import template_environment

# Worst first: the colour a heatmap cell takes when its configs disagree.
SEVERITY = [o.label for o in Outcome if o.is_failure] + ["skipped", "passed"]
FIXED_COLOURS = {"passed": "#3a9d5d", "skipped": "#b9b9b9"}


@dataclass
class Run:
    """One run folder: when, under which Triton, and its results."""

    folder: Path
    name: str
    triton: str
    results: list[CaseResult]


@dataclass(frozen=True)
class Cell:
    """The results of one (x, y) point of a heatmap, shown by the worst of them."""

    results: list[CaseResult] = field(default_factory=list)

    @property
    def worst(self) -> CaseResult:
        return min(self.results, key=lambda r: SEVERITY.index(r.outcome.label))

    @property
    def outcome(self) -> str:
        return self.worst.outcome.label

    @property
    def signature(self) -> str:
        return str(self.worst.signature or "")

    @property
    def colour(self) -> str:
        return colour(self.worst)

    @property
    def count(self) -> int:
        return len(self.results)

    @property
    def failing(self) -> int:
        return sum(r.outcome.is_failure for r in self.results)


@dataclass
class Heatmap:
    repro: str
    target: str
    triton: str
    x: str
    y: str
    xs: list[Any]
    ys: list[Any]
    cells: dict[tuple[Any, Any], Cell] = field(default_factory=dict)  # (x value, y value)


def signature_colour(signature: str) -> str:
    """A stable, distinct warm colour per failure signature."""
    spread = int(hashlib.sha256(signature.encode()).hexdigest()[:4], 16) / 0xFFFF
    hue = (0.75 + 0.37 * spread) % 1.0  # purples to oranges: never the green of a pass
    red, green, blue = colorsys.hls_to_rgb(hue, 0.5, 0.75)
    return f"#{int(red * 255):02x}{int(green * 255):02x}{int(blue * 255):02x}"


def colour(result: CaseResult) -> str:
    if result.signature:
        return signature_colour(result.signature.text)
    return FIXED_COLOURS.get(result.outcome.label, "#777777")


def load_runs(root: Path) -> list[Run]:
    """Every run with results under ``root``, oldest first."""
    runs = []
    for results in sorted(root.glob("**/runs/*/results.jsonl")):
        folder = results.parent
        # Nothing out of the root (a run folder or results.jsonl a case replaced with a link
        # to /dev/zero or another tree), and no FIFO or device (RunStore reads regular files).
        if not lies_under(results, root):
            continue
        triton = _triton_of(folder / "environment.json")
        parsed = RunStore(folder).results()
        if parsed:
            runs.append(Run(folder, folder.name, triton, parsed))
    return sorted(runs, key=lambda r: (r.name, r.triton))


def _triton_of(environment: Path) -> str:
    try:
        facts = json.loads(read_regular(environment, "environment.json", follow=False))
    except (UsageError, ValueError):
        return "?"
    return str(facts.get("triton", "?")) if isinstance(facts, dict) else "?"


def heatmaps(runs: list[Run], x: str | None, y: str | None) -> list[Heatmap]:
    """Per reproducer, target and Triton release: the newest outcome per (x, y) cell."""
    params = {f.repro.id: f.repro for f in catalogue()}
    newest: dict[tuple[str, str, str, str], CaseResult] = {}
    for run in runs:
        for result in run.results:
            newest[(result.repro, result.target, run.triton, result.case_id)] = result
    maps: dict[tuple[str, str, str], Heatmap] = {}
    for (repro_id, target, triton, _), result in sorted(newest.items()):
        repro = params.get(repro_id)
        names = repro.param_names if repro else sorted(result.config)
        axis_x = x if x in names else names[-2] if len(names) > 1 else names[0]
        axis_y = y if y in names else names[-1]
        key = (repro_id, target, triton)
        if key not in maps:
            xs = list(repro.param(axis_x).values) if repro else []
            ys = list(repro.param(axis_y).values) if repro else []
            maps[key] = Heatmap(repro_id, target, triton, axis_x, axis_y, xs, ys)
        heatmap = maps[key]
        cell_key = (result.config.get(axis_x), result.config.get(axis_y))
        for value, axis in ((cell_key[0], heatmap.xs), (cell_key[1], heatmap.ys)):
            if value not in axis:
                axis.append(value)
        heatmap.cells.setdefault(cell_key, Cell()).results.append(result)
    return list(maps.values())


def case_changes(runs: list[Run]) -> dict[str, str]:
    """Per case id: what changed in its failure across Triton releases (:func:`change_note`),
    from the newest run of each release. Only a failure that stays the same bug counts; a
    pass in between, or another bug, starts the chain again."""
    newest: dict[str, dict[str, CaseResult]] = {}
    for run in runs:
        for result in run.results:
            newest.setdefault(result.case_id, {})[run.triton] = result
    notes = {}
    for case, by_release in newest.items():
        chain: list[tuple[str, str]] = []
        pieces = []
        for release in sorted(by_release, key=_release_key):
            result = by_release[release]
            seen = result.signature.text if result.outcome.is_failure and result.signature else ""
            if chain and not (seen and is_same_bug(chain[-1][1], seen)):
                pieces.append(change_note(chain))
                chain = []
            if seen:
                chain.append((release, seen))
        pieces.append(change_note(chain))
        note = "; ".join(p for p in pieces if p)
        if note:
            notes[case] = note
    return notes


def _release_key(release: str) -> tuple[int, ...]:
    try:
        return Version(release).release
    except InvalidVersion:
        return ()


def findings_rows(root: Path) -> list[dict[str, str]]:
    """The findings under ``<root>/findings``: id, signature, first bad and first good
    release, and what changed in the signature across the releases it was seen on."""
    store = DirectoryFindingsStore(root / "findings")
    rows = []
    for finding in store.all():
        rows.append(
            {
                "id": store.path_of(finding).stem,
                "repro": finding.repro,
                "signature": finding.signature,
                "first_bad": finding.first_bad or "",
                "first_good": finding.first_good or "",
                "note": finding.message_note(),
            }
        )
    return rows


def render(root: Path, x: str | None = None, y: str | None = None) -> Path:
    """Write ``<root>/dashboard/index.html`` and return its path."""
    runs = load_runs(root)
    reports = sorted(p.parent for p in root.glob("*/issue.md")) + sorted(
        p.parent for p in root.glob("*/explanation.md")
    )
    signatures = sorted({r.signature.text for run in runs for r in run.results if r.signature})
    cases = sorted({(r.repro, r.case_id) for run in runs for r in run.results})
    history = {(run.name, run.triton): {r.case_id: r for r in run.results} for run in runs}
    html = (
        template_environment()
        .get_template("dashboard.html.j2")
        .render(
            runs=runs,
            heatmaps=heatmaps(runs, x, y),
            signatures=[(s, signature_colour(s)) for s in signatures],
            fixed=FIXED_COLOURS,
            cases=cases,
            history=history,
            colour=colour,
            reports=[(p.name, p.relative_to(root)) for p in reports],
            changes=case_changes(runs),
            findings=findings_rows(root),
            root=root,
        )
    )
    out = own_folder(root, "dashboard") / "index.html"
    write_replacing(out, html)
    return out
