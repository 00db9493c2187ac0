"""Explain a failure with the variant that avoids it: the first pass where they part.

A failure that ``num_stages=1`` (or warp specialization off) avoids is compiled twice,
compile-only, each time as an isolated case of the engine with Triton's dump knobs on
(``MLIR_ENABLE_DUMP`` + ``MLIR_DUMP_PATH``: the IR before every MLIR pass;
``TRITON_KERNEL_DUMP`` + ``TRITON_DUMP_DIR``: the final TTGIR and PTX) and an empty cache.
Both variants' files are kept, and :func:`suite.explain.dumps.first_difference` names the
first pass whose output differs between them. No GPU is needed: a runtime failure's
compiles are compared, the launch is not.

The steps, each a named function: ``compile_variant`` (twice), ``compare``, ``write``.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypedDict

from suite.api import Config
from suite.engine import Execution, Found, Outcome, expand_cases, run_one
from suite.errors import UsageError
from suite.explain.dumps import FirstDifference, first_difference, split_dump

#: Passes compared in the report, at most: the diff shown is cut there.
DIFF_LINES = 80


@dataclass(frozen=True)
class Variant:
    """One compile of the pair: its config, how it ended, the files it left."""

    name: str  # "failing" or "passing"
    case_id: str
    config: Config
    outcome: str
    signature: str
    passes: int
    folder: Path
    files: dict[str, str] = field(default_factory=dict)  # kind -> path (passes, ttgir, ptx)


class VariantJson(TypedDict):
    case_id: str
    config: Config
    outcome: str
    signature: str
    passes: int
    files: dict[str, str]


# "pass" is a keyword, hence the functional form.
FirstDifferenceJson = TypedDict(
    "FirstDifferenceJson",
    {
        "pass": str,
        "position": int | None,
        "stopped": bool,
        "failing_pass": str | None,
        "passing_pass": str | None,
        "input_differs": bool,
        "aligned": int,
        "only_failing": list[str],
        "only_passing": list[str],
        "line": str,
        "diff": str,
    },
)


class ExplanationJson(TypedDict):
    """``repro explain --json`` and ``explain.json`` (docs/explain.md)."""

    target: str
    change: Config
    variants: dict[str, VariantJson]
    first_difference: FirstDifferenceJson
    ptx_differs: bool | None
    folder: str


@dataclass(frozen=True)
class Explanation:
    """Both variants and where they part."""

    target: str
    change: Config  # the parameters the passing variant changes
    failing: Variant
    passing: Variant
    first: FirstDifference
    ptx_differs: bool | None  # None: a variant left no PTX
    folder: Path

    def lines(self) -> list[str]:
        change = ", ".join(f"{k}={v}" for k, v in self.change.items())
        said = [
            f"{self.failing.case_id}: {self.failing.signature or self.failing.outcome}",
            f"variant {change}: {self.passing.case_id}: "
            f"{self.passing.signature or self.passing.outcome}",
            self.first.line(),
        ]
        if self.first.only_failing or self.first.only_passing:
            said.append(
                "passes run by one variant only: "
                + "; ".join(
                    f"{name} ({', '.join(only)})"
                    for name, only in (
                        ("failing", self.first.only_failing),
                        ("passing", self.first.only_passing),
                    )
                    if only
                )
            )
        if self.ptx_differs is not None:
            said.append("the PTX differs" if self.ptx_differs else "the PTX is the same")
        said.append(f"explain: {self.folder}")
        return said

    def to_json(self) -> ExplanationJson:
        first = self.first
        return {
            "target": self.target,
            "change": self.change,
            "variants": {
                v.name: {
                    "case_id": v.case_id,
                    "config": v.config,
                    "outcome": v.outcome,
                    "signature": v.signature,
                    "passes": v.passes,
                    "files": v.files,
                }
                for v in (self.failing, self.passing)
            },
            "first_difference": {
                "pass": first.pass_name,
                "position": first.position or None,
                "stopped": first.stopped,
                "failing_pass": first.failing.label if first.failing else None,
                "passing_pass": first.passing.label if first.passing else None,
                "input_differs": first.input_differs,
                "aligned": first.aligned,
                "only_failing": list(first.only_failing),
                "only_passing": list(first.only_passing),
                "line": first.line(),
                "diff": "\n".join(first.diff.splitlines()[:DIFF_LINES]),
            },
            "ptx_differs": self.ptx_differs,
            "folder": str(self.folder),
        }


def variant_config(found: Found, config: Mapping[str, Any], change: Mapping[str, str]) -> Config:
    """``config`` with ``change`` applied, each value read as the parameter's own type (a
    value the reproducer's space does not hold is refused: exit 2)."""
    params = {p.name: p for p in found.repro.params}
    out = dict(config)
    for key, text in change.items():
        if key not in params and key not in config:
            known = ", ".join(sorted(params)) or "none"
            raise UsageError(f"--variant {key}: {found.repro.id} has no such parameter ({known})")
        values = list(params[key].values) if key in params else []
        chosen = [v for v in values if str(v).lower() == text.lower()]
        if values and not chosen:
            raise UsageError(f"--variant {key}={text}: not one of {', '.join(map(str, values))}")
        out[key] = chosen[0] if chosen else _literal(text)
    if out == dict(config):
        raise UsageError("--variant changes nothing: name a parameter and another value")
    return out


def _literal(text: str) -> Any:
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return {"true": True, "false": False}.get(text.lower(), text)


def compile_variant(
    name: str, found: Found, target: str, config: Config, folder: Path, execution: Execution
) -> Variant:
    """One compile with the dump knobs, as an isolated case; its files under ``folder``."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    specs = expand_cases([found], [target], configs=[config])
    if not specs:
        raise UsageError(f"{found.repro.id} has no case for {target} with {config}")
    spec = replace(specs[0], gpu=False)  # compile-only: the launch is not what is compared
    passes = folder / "passes.mlir"
    knobs = {
        "MLIR_ENABLE_DUMP": "1",
        "MLIR_DUMP_PATH": str(passes),
        "TRITON_KERNEL_DUMP": "1",
        "TRITON_DUMP_DIR": str(folder / "dump"),
        "TRITON_ALWAYS_COMPILE": "1",
    }
    result = run_one(spec, folder / "case", replace(execution, warm=False), knobs=knobs)
    if result.outcome in (Outcome.HARNESS_ERROR, Outcome.SKIPPED):
        raise UsageError(f"{spec.case_id} did not compile: {result.outcome.label} {result.message}")
    files = {"passes": str(passes)} if passes.is_file() else {}
    for kind in ("ttgir", "ptx"):
        found_files = sorted((folder / "dump").rglob(f"*.{kind}"))
        if found_files:
            kept = folder / f"kernel.{kind}"
            shutil.copyfile(found_files[-1], kept)
            files[kind] = str(kept)
    steps = split_dump(passes.read_text(errors="replace")) if passes.is_file() else []
    return Variant(
        name,
        spec.case_id,
        config,
        result.outcome.label,
        result.signature.text if result.signature else "",
        sum(not s.internal for s in steps),
        folder,
        files,
    )


def compare(failing: Variant, passing: Variant) -> tuple[FirstDifference, bool | None]:
    """The first pass where the two compiles part, and whether their PTX differs."""
    if "passes" not in failing.files or "passes" not in passing.files:
        raise UsageError(
            "no per-pass dump was written (MLIR_DUMP_PATH needs Triton 3.3.1 or later)"
        )
    first = first_difference(
        split_dump(Path(failing.files["passes"]).read_text(errors="replace")),
        split_dump(Path(passing.files["passes"]).read_text(errors="replace")),
    )
    ptx_differs = None
    if "ptx" in failing.files and "ptx" in passing.files:
        ptx_differs = _ptx(failing.files["ptx"]) != _ptx(passing.files["ptx"])
    return first, ptx_differs


def _ptx(path: str) -> list[str]:
    """PTX without comments and debug locations."""
    lines = Path(path).read_text(errors="replace").splitlines()
    return [ln for ln in lines if not ln.lstrip().startswith(("//", ".loc", ".file"))]


def write(explanation: Explanation) -> Path:
    """``explain.json`` and ``first-difference.diff`` in the explanation's folder."""
    folder = explanation.folder
    (folder / "first-difference.diff").write_text(explanation.first.diff + "\n")
    record = folder / "explain.json"
    record.write_text(json.dumps(explanation.to_json(), indent=2, default=str) + "\n")
    return record


def explain(
    found: Found,
    target: str,
    config: Mapping[str, Any],
    change: Mapping[str, str],
    folder: Path,
    execution: Execution,
) -> Explanation:
    """Compile ``config`` and its variant (``change`` applied), compare, write the files."""
    passing_config = variant_config(found, config, change)
    failing = compile_variant("failing", found, target, dict(config), folder / "failing", execution)
    passing = compile_variant(
        "passing", found, target, passing_config, folder / "passing", execution
    )
    first, ptx_differs = compare(failing, passing)
    changed = {k: passing_config[k] for k in passing_config if passing_config[k] != config.get(k)}
    explanation = Explanation(target, changed, failing, passing, first, ptx_differs, folder)
    write(explanation)
    return explanation
