"""``repro merge``: the run folders of a sharded run (``repro run --shard K/N`` on N runners)
made into one run folder, as if one runner had run every case.

The shards must have run the same selection (but for ``shard``) under the same Triton, and
no case may appear in two of them. Each case's captured files and the reproducers' carried
sources are copied, and every path a result names inside its shard folder is moved to the
merged folder, so that ``repro report RUN:CASE`` works on the merged run. The verdicts are
judged again against the baseline, the summary and the JUnit file written as ``repro run``
writes them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suite.engine import RESULTS, Baseline, CaseResult, Environment, RunStore, exit_status
from suite.errors import UsageError
from suite.files import copy_regular_tree, read_regular, write_replacing

#: What a run folder holds besides its results, written afresh for the merged run.
REWRITTEN = {RESULTS, "run.json", "run.lock", "summary.json", "junit.xml", "environment.json"}


@dataclass
class Merged:
    store: RunStore
    results: list[CaseResult]
    environment: Environment  # of the runs merged
    exit_status: int


def _read_json(folder: Path, name: str) -> Any:
    try:
        return json.loads(read_regular(folder / name, name, follow=False))
    except ValueError as exc:
        raise UsageError(f"unreadable {name} in {folder}: {exc}") from None


def _environment(folder: Path) -> Environment:
    try:
        return Environment.from_json(_read_json(folder, "environment.json"))
    except ValueError as exc:
        raise UsageError(f"unreadable environment.json in {folder}: {exc}") from None


def _moved(value: Any, old: str, new: str) -> Any:
    """``value`` with every string that names a path under ``old`` moved under ``new``."""
    if isinstance(value, str):
        return new + value[len(old) :] if value == old or value.startswith(old + "/") else value
    if isinstance(value, dict):
        return {k: _moved(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_moved(v, old, new) for v in value]
    return value


def merge(shards: list[Path], output: Path, baseline: Baseline) -> Merged:
    """Merge the shard run folders into a new run folder under ``output/runs``."""
    if not shards:
        raise UsageError("name the shards' run folders to merge")
    folders = [s.resolve() for s in shards]
    for folder in folders:
        if not (folder / "run.json").is_file() or not (folder / "environment.json").is_file():
            raise UsageError(f"not a finished run folder: {folder} (no run.json/environment.json)")
    if len(set(folders)) != len(folders):
        raise UsageError("a run folder is named twice")
    selections = [_read_json(f, "run.json") for f in folders]
    environments = [_environment(f) for f in folders]
    unsharded = [{k: v for k, v in s.items() if k != "shard"} for s in selections]
    for folder, selection, environment in zip(folders, unsharded, environments, strict=True):
        if selection != unsharded[0]:
            raise UsageError(f"{folder} ran another selection than {folders[0]}")
        if environment.triton != environments[0].triton:
            raise UsageError(
                f"{folder} ran triton {environment.triton}, "
                f"{folders[0]} triton {environments[0].triton}"
            )
    seen: dict[str, Path] = {}
    shard_results: list[tuple[Path, list[CaseResult]]] = []
    for folder in folders:
        results = RunStore(folder).results()
        for result in results:
            if result.case_id in seen:
                raise UsageError(
                    f"case {result.case_id} is in both {seen[result.case_id]} and {folder}"
                )
            seen[result.case_id] = folder
        shard_results.append((folder, results))

    store = RunStore.create(output, {**unsharded[0], "shard": ""})
    try:
        store.write_json("environment.json", environments[0].to_json())
        for folder, results in shard_results:
            _copy_files(folder, store.folder)
            for result in results:
                record = _moved(result.to_json(), str(folder), str(store.folder))
                store.append(CaseResult.from_json(record))
        triton = str(environments[0].triton)
        merged = sorted(store.results(), key=lambda r: r.case_id)
        judged = [baseline.judge(r, triton) for r in merged]
        status = exit_status(judged)
        store.write_summary(
            judged,
            {
                "exit_status": status,
                "triton": triton,
                "baseline": baseline.source,
                "merged_from": [str(f) for f in folders],
            },
        )
        store.write_junit(judged)
    finally:
        store.release()
    return Merged(store, judged, environments[0], status)


def _copy_files(shard: Path, merged: Path) -> None:
    """The shard's captured case files and carried sources (same-named sources hold the same
    text: their names carry its hash), regular files only: a link a case planted in its
    folder is not followed out of the shard (``files.copy_regular_tree``)."""
    for entry in sorted(shard.iterdir()):
        if entry.name in REWRITTEN or entry.name.startswith("."):
            continue
        if entry.is_dir() and not entry.is_symlink():
            copy_regular_tree(entry, merged / entry.name)
        elif entry.is_file() and not entry.is_symlink() and not (merged / entry.name).exists():
            write_replacing(merged / entry.name, read_regular(entry, "file", follow=False))
