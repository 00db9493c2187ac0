"""The same cases under several Triton releases: reproducer x case x release.

Each release is a full ``repro run`` of the selection (same isolation, same
classification, same baseline) under that release's interpreter, with its own
results folder; the matrix is the table across them. A case the release
cannot express (no ``tl.make_tensor_descriptor`` before 3.4) shows as
``unsupported``, one whose ptxas does not know the target as ``toolchain-gap``
(``CaseResult.skip_kind``), never as a pass or a failure. Over nightly builds whose
versions carry git hashes, a case that changes between two neighbouring columns names
the commits between them (:mod:`suite.releases.nightlies`).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from suite.engine import (
    Baseline,
    CaseResult,
    Execution,
    Outcome,
    Verdict,
    exit_status,
    needs_gpu,
    safe_name,
    unique_folder,
)
from suite.engine import session as engine
from suite.files import own_folder, write_replacing
from suite.releases.nightlies import CommitRange, commit_range
from suite.toolchain.venvs import Release


@dataclass(frozen=True)
class Change:
    """A case whose cell differs between two neighbouring builds that carry git hashes."""

    case: str
    before: str
    after: str
    commits: CommitRange

    def line(self) -> str:
        return f"{self.case}: {self.before} -> {self.after}: {self.commits.line()}"


@dataclass
class Matrix:
    folder: Path
    releases: list[str]
    runs: dict[str, engine.RunOutcome]

    def cell(self, result: CaseResult) -> str:
        if result.outcome is Outcome.SKIPPED:
            return result.skip_kind
        if result.signature:
            return str(result.signature)
        if result.verdict is Verdict.NEEDS_GPU or result.notes.not_launched:
            return f"{Outcome.COMPILED.label}; {needs_gpu(result.target)}"
        return result.shown.label

    @property
    def exit_status(self) -> int:
        """The run's exit contract over every release: 1 when any release has a regression,
        4 a harness error, 3 a known bug that stopped failing, else 0."""
        return exit_status(r for run in self.runs.values() for r in run.results)

    def verdicts(self) -> dict[str, dict[str, int]]:
        """Per release, how many cases came to each verdict that is not ``ok``."""
        counts: dict[str, dict[str, int]] = {}
        for label, run in self.runs.items():
            for result in run.results:
                if result.verdict not in (Verdict.NONE, Verdict.OK):
                    tally = counts.setdefault(label, {})
                    tally[result.verdict] = tally.get(result.verdict, 0) + 1
        return counts

    def rows(self) -> list[tuple[str, str, dict[str, str]]]:
        """(reproducer, case, {release: cell}) for every case seen under any release."""
        table: dict[tuple[str, str], dict[str, str]] = {}
        for label, run in self.runs.items():
            for result in run.results:
                key = (result.repro, result.case_id)
                table.setdefault(key, {})[label] = self.cell(result)
        return [(repro, case, cells) for (repro, case), cells in sorted(table.items())]

    def changes(self) -> list[Change]:
        """Each case whose cell changes between neighbouring columns (the order given) that
        are builds carrying git hashes, with the commits between them."""
        found = []
        for _repro, case, cells in self.rows():
            for older, newer in itertools.pairwise(self.releases):
                before, after = cells.get(older), cells.get(newer)
                span = commit_range(older, newer, self.releases)
                if before and after and before != after and span:
                    found.append(Change(case, before, after, span))
        return found

    def to_json(self) -> dict[str, object]:
        return {
            "releases": self.releases,
            "changes": [
                {"case": c.case, "before": c.before, "after": c.after, **c.commits.to_json()}
                for c in self.changes()
            ],
            "versions": {k: r.environment.triton for k, r in self.runs.items()},
            "runs": {k: str(r.store.folder) for k, r in self.runs.items()},
            "rows": [{"repro": r, "case": c, "cells": cells} for r, c, cells in self.rows()],
            "verdicts": self.verdicts(),
            "exit_status": self.exit_status,
        }

    def markdown(self) -> str:
        head = "| reproducer | case | " + " | ".join(self.releases) + " |"
        rule = "|---|---|" + "---|" * len(self.releases)
        lines = [head, rule]
        for repro, case, cells in self.rows():
            row = [cells.get(label, "") for label in self.releases]
            lines.append(f"| {repro} | `{case}` | " + " | ".join(row) + " |")
        changes = self.changes()
        if changes:
            lines += ["", "Changes between builds, with the commits between them:", ""]
            lines += [f"- {change.line()}" for change in changes]
        return "\n".join(lines) + "\n"


def run(
    selection: engine.Selection,
    releases: Sequence[Release],
    output: Path,
    execution: Execution,
    baseline: Baseline,
    on_release: Callable[[Release], None] = lambda release: None,
) -> Matrix:
    # Two matrices started in the same second get two folders.
    folder = unique_folder(own_folder(output.resolve(), "matrix"), time.strftime("%Y%m%d-%H%M%S"))
    runs: dict[str, engine.RunOutcome] = {}
    for release in releases:
        on_release(release)
        runs[release.label] = engine.run(
            replace(selection, python=release.python),
            folder / safe_name(release.label),
            replace(execution, python=release.python),
            baseline,
        )
    matrix = Matrix(folder, [r.label for r in releases], runs)
    write_replacing(folder / "matrix.json", json.dumps(matrix.to_json(), indent=2))
    write_replacing(folder / "matrix.md", matrix.markdown())
    return matrix
