"""The pass/fail table of variants in a runtime failure's report: one knob changed at a
time (stages 1..N, warp specialization flipped, tiles halved and doubled), each variant
launched in isolation and judged by the reproducer's oracle.

Triton's interpreter (``TRITON_INTERPRET=1``) launches ``tests/data/variant_kernels.py`` on
the CPU, the report told to launch as sm_90; without that (no GPU here) the report says the
table needs a GPU, and no variant is called passed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from suite.engine import discover
from suite.engine.environment import capture_environment, gpu_arch
from suite.engine.isolate import Bounds
from suite.engine.runner import Execution
from suite.engine.sources import capture_source
from suite.failures.findings import DirectoryFindingsStore, Finding, kind_of
from suite.report.report import write_report
from suite.search.evaluate import Evaluator
from suite.search.variants import variant_changes
from suite.subject import subject_of

pytest.importorskip("torch")

KERNELS = Path(__file__).parent / "data" / "variant_kernels.py"
WRONG = {"BLOCK": 16, "STAGES": 3, "WARP_SPECIALIZE": True}


@pytest.fixture(scope="module")
def found():
    (item,) = discover.from_source({"path": str(KERNELS)}, str(KERNELS))
    return item


@pytest.fixture(scope="module")
def finding_home(found, tmp_path_factory):
    """A finding made from a real interpreted launch of the wrong config."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRITON_INTERPRET", "1")
        out = tmp_path_factory.mktemp("out")
        evaluate = Evaluator(found, Execution(bounds=Bounds(timeout_s=300.0)), out, launch_arch=90)
        result = evaluate(WRONG, "sm_90")
    assert result.signature is not None, result.message
    assert result.signature.text == "wrong-result:launch:differential:STAGES: mismatch"
    carried = capture_source(found.source)
    finding = Finding(
        repro=found.repro.id,
        signature=result.signature.text,
        kind=kind_of(result),
        outcome=result.outcome.label,
        message=result.message,
        target="sm_90",
        targets=["sm_90"],
        minimal_config=dict(WRONG),
        failing_configs=[{"target": "sm_90", "config": dict(WRONG)}],
        passing_neighbours=[],
        boundary=[],
        environment=capture_environment(sys.executable),
        seed=None,
        first_seen="2026-11-25T00:00:00Z",
        last_seen="2026-11-25T00:00:00Z",
        source=carried.to_json(with_text=True) if carried else None,
    )
    store = DirectoryFindingsStore(out / "findings")
    store.put(finding)
    return out, store.path_of(finding).stem


def test_the_variants_are_the_stages_below_the_flag_flipped_and_the_tiles_around(found):
    changes = variant_changes(found.repro, WRONG)
    assert changes == [
        ("STAGES", 1),
        ("STAGES", 2),
        ("WARP_SPECIALIZE", False),
        ("BLOCK", 8),
        ("BLOCK", 32),
    ]
    # The tile at an end of its domain has one neighbour; one stage has none below it.
    smallest = {"BLOCK": 8, "STAGES": 1, "WARP_SPECIALIZE": False}
    assert variant_changes(found.repro, smallest) == [("WARP_SPECIALIZE", True), ("BLOCK", 16)]


def test_the_report_launches_each_variant_and_isolates_the_stage_count(finding_home, monkeypatch):
    out, finding_id = finding_home
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    subject = subject_of(finding_id, out)
    written = write_report(subject, out / "launched", launch_as=90)
    table = json.loads((written.folder / "variants.json").read_text())
    verdicts = {(r["param"], r["change"]): r["verdict"] for r in table["rows"]}
    assert verdicts == {
        ("STAGES", "3 → 1"): "passes (the differential oracle's own side: judged without it)",
        ("STAGES", "3 → 2"): "passes",
        ("WARP_SPECIALIZE", "True → False"): "passes",
        ("BLOCK", "16 → 8"): "same failure",
        ("BLOCK", "16 → 32"): "same failure",
    }
    assert table["judged_by"] == "differential against STAGES=1"
    body = (written.folder / "issue.md").read_text()
    assert "**Variants** (one knob changed from the config above" in body
    assert "| STAGES | 3 → 2 | passed | passes |" in body
    assert "| BLOCK | 16 → 32 | wrong-result | same failure |" in body
    assert max(len(line) for line in body.splitlines()) <= 300
    report = json.loads((written.folder / "report.json").read_text())
    assert report["variants"]["rows"] == table["rows"]
    # What the report ran again for it: the five variants, then the comparison with the
    # variant that avoids the failure, compiled with per-pass dumps.
    ran = {step["step"]: step["ran"] for step in report["gathered"]}
    assert ran["variants"] == "5 variants of the failing launch, launched here"
    assert ran["explain"].endswith(", compiled with per-pass dumps")


@pytest.mark.skipif(gpu_arch() is not None, reason="a GPU here: the report makes the table")
def test_without_a_gpu_the_table_is_not_made_and_nothing_passes(finding_home):
    out, finding_id = finding_home
    written = write_report(subject_of(finding_id, out), out / "unlaunched")
    assert not (written.folder / "variants.json").exists()
    body = (written.folder / "issue.md").read_text()
    (line,) = [ln for ln in body.splitlines() if ln.startswith("**Variants**")]
    assert "not made: needs a GPU (sm_90) to check" in line
    assert f"on a machine with an sm_90 GPU, run `repro report {finding_id}`." in line
    assert "passes" not in line
    report = json.loads((written.folder / "report.json").read_text())
    assert (
        report["variants"]["rows"] == [] and "needs a GPU (sm_90)" in report["variants"]["missing"]
    )
    variants = next(step for step in report["gathered"] if step["step"] == "variants")
    assert variants["ran"] is None and "needs a GPU (sm_90)" in variants["said"]
