"""The pass/fail table of variants in a runtime failure's report, launched on the GPU here.

The variants (:mod:`suite.search.variants`) are launched only where a GPU of the failure's
target is visible (or, for the tests, Triton's interpreter stands in for it: the caller
names the compute capability it launches as). Elsewhere the report says the table needs a
GPU of that compute capability and the command to run there; never that a variant passed.
A variant at the very config a differential oracle compares against is judged by the
other oracles only (it has no other side), and its row says so.
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from suite.engine.gpu_evidence import needs_gpu, runtime_failure
from suite.engine.outcome import Outcome
from suite.engine.runner import Execution
from suite.oracles import Differential
from suite.search.explore import Evaluator
from suite.search.findings import BoundaryStep
from suite.search.subject import Subject, interpreter_for
from suite.search.variants import variant_table
from suite.toolchain.limits import limits_for

#: Attached beside the body: the rows and every variant's config.
VARIANTS_FILE = "variants.json"


@dataclass(frozen=True)
class VariantRow:
    """One launched variant as the report shows it."""

    param: str
    change: str
    outcome: str
    verdict: str
    config: dict[str, Any]


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
    if not runtime_failure(signature) or found is None or found.repro.launch_fn is None:
        return None
    assert signature is not None
    oracles = found.repro.oracles
    judged_by = ", ".join(_oracle_name(o) for o in oracles) or "fault"
    if launch_arch != limits_for(result.target).arch:
        command = f"repro report {report_id}"
        return VariantTable(
            result.target, judged_by, missing=needs_gpu(result.target), command=command
        )
    python = interpreter_for(subject.environment, None) or Execution().python
    with tempfile.TemporaryDirectory(prefix="repro-variants-") as work:
        evaluate = Evaluator(
            found,
            replace(Execution(python=python), sanitize=False),
            Path(work),
            launch_arch=launch_arch,
        )
        steps = variant_table(evaluate, signature, result.target, result.config)
    differentials = [o for o in oracles if isinstance(o, Differential)]
    rows = tuple(_row(step, differentials) for step in steps)
    return VariantTable(result.target, judged_by, rows)


def _oracle_name(oracle: Any) -> str:
    if isinstance(oracle, Differential):
        return f"differential against {oracle.describe()}"
    return str(oracle.name)


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
