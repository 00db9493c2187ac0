"""The variants in a runtime failure's report: the pass/fail table, launched on the GPU
here, and the first pass where the failure and a variant that avoids it part.

The variants (:mod:`suite.search.variants`) are launched only where a GPU of the failure's
target is visible (or, for the tests, Triton's interpreter stands in for it: the caller
names the compute capability it launches as). Elsewhere the report says the table needs a
GPU of that compute capability and the command to run there; never that a variant passed.
A variant at the very config a differential oracle compares against is judged by the
other oracles only (it has no other side), and its row says so.

The variant that avoids the failure (a passing row of the table that changes the stage
count or warp specialization, else the variant the differential oracle that caught a
wrong result compares against) is compiled beside the failing config, compile-only, with
per-pass dumps (:func:`suite.explain.explain.explain`, what ``repro explain`` does): no GPU
is needed for that part, and the report shows the first pass whose output differs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from suite.api import Config
from suite.engine import (
    Bounds,
    Execution,
    Outcome,
    Work,
    local_gpu_ids,
    needs_gpu,
    runtime_failure,
)
from suite.errors import UsageError
from suite.explain.explain import explain
from suite.failures.findings import BoundaryStep
from suite.files import scratch_folder
from suite.oracles import Differential
from suite.search.evaluate import Evaluator
from suite.search.variants import is_stages, is_warp_specialize, variant_table
from suite.subject import Subject, interpreter_for
from suite.toolchain.limits import limits_for

#: Attached beside the body: the rows and every variant's config.
VARIANTS_FILE = "variants.json"
#: What the two compiles of an explanation may take, each.
EXPLAIN_TIMEOUT_S = Work.COMPILE.value


@dataclass(frozen=True)
class VariantRow:
    """One launched variant as the report shows it."""

    param: str
    change: str
    outcome: str
    verdict: str
    config: Config


@dataclass(frozen=True)
class VariantTable:
    """The variants of one failure, or why there are none (``missing``)."""

    target: str
    judged_by: str  # the oracles that judged each launch
    rows: tuple[VariantRow, ...] = ()
    missing: str = ""  # "needs a GPU (sm_90) to check"
    command: str = ""  # what to run where there is one

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "judged_by": self.judged_by,
            "rows": [asdict(row) for row in self.rows],
            "missing": self.missing,
            "command": self.command,
        }


def variants_for(subject: Subject, launch_arch: int | None, report_id: str) -> VariantTable | None:
    """The table for a runtime failure of a reproducer that launches; None for anything
    else. ``launch_arch``: the compute capability launches run on here (None: no GPU)."""
    result = subject.result
    signature = result.signature.text if result.signature else None
    found = subject.found
    if not runtime_failure(signature) or found is None or not found.repro.launches:
        return None
    assert signature is not None
    differentials = list(found.repro.differentials)
    judged_by = ", ".join(_oracle_name(o, differentials) for o in found.repro.oracles) or "fault"
    if launch_arch != limits_for(result.target).arch:
        command = f"repro report {report_id}"
        return VariantTable(
            result.target, judged_by, missing=needs_gpu(result.target), command=command
        )
    python = interpreter_for(subject.environment, None) or Execution().python
    with scratch_folder("variants") as work:
        evaluate = Evaluator(
            found,
            # The GPU's machine-wide turns and the check after a launch that failed, as for
            # every launch the tool makes (a variant may fault).
            Execution(
                python=python, gpus=local_gpu_ids(), sanitize=False, ptxas_differential=False
            ),
            Path(work),
            launch_arch=launch_arch,
        )
        steps = variant_table(evaluate, signature, result.target, result.config)
    rows = tuple(_row(step, differentials) for step in steps)
    return VariantTable(result.target, judged_by, rows)


def _oracle_name(name: str, differentials: list[Differential]) -> str:
    differential = next((d for d in differentials if d.name == name), None)
    return f"differential against {differential.describe()}" if differential else name


def _row(step: BoundaryStep, differentials: list[Differential]) -> VariantRow:
    if step.outcome in (Outcome.HARNESS_ERROR.label, Outcome.SKIPPED.label):
        verdict = f"not judged: {step.outcome}"
    elif step.passed:
        verdict = "passes"
        if any(not d.applies_to(step.config) for d in differentials):
            verdict = "passes (the differential oracle's own side: judged without it)"
    elif step.same_signature:
        verdict = "same failure"
    else:
        verdict = f"other failure: {step.signature or step.outcome}"
    change = f"{step.value_from} → {step.value_to}"
    return VariantRow(step.param, change, step.outcome, verdict, dict(step.config))


def passing_variant(subject: Subject, table: VariantTable | None) -> Config | None:
    """The change that avoids the failure: a passing row of ``table`` that changes the stage
    count or warp specialization, else the variant of the differential oracle named by the
    signature (``wrong-result:launch:differential:num_stages``). None when neither."""
    for row in table.rows if table else ():
        if row.verdict.startswith("passes") and (
            is_stages(row.param) or is_warp_specialize(row.param)
        ):
            return {row.param: row.config[row.param]}
    result, found = subject.result, subject.found
    family = f"{result.signature.family}:" if result.signature else ""
    for oracle in found.repro.differentials if found else ():
        if f":{oracle.name}:" in family and oracle.applies_to(result.config):
            return dict(oracle.variant)
    return None


def explain_variant(subject: Subject, change: Config, folder: Path) -> None:
    """Compile the failing config and ``change`` with per-pass dumps into ``folder``
    (``explain.json``: what the report's IR section reads); a compile that cannot be
    made is a note of the report, not its end."""
    found = subject.found
    if found is None:
        return
    python = interpreter_for(subject.environment, None) or Execution().python
    execution = Execution(python=python, bounds=Bounds(timeout_s=EXPLAIN_TIMEOUT_S), warm=False)
    text = {name: str(value) for name, value in change.items()}
    try:
        explain(found, subject.result.target, subject.result.config, text, folder, execution)
    except UsageError as exc:
        shown = ", ".join(f"{k}={v}" for k, v in text.items())
        subject.notes.append(f"no comparison with the variant {shown}: {exc}")
