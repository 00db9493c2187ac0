"""Without a GPU, a runtime failure is never called fixed, passed or "do not file": run,
report and bisect say it needs a GPU of its compute capability, and what to run there.

The findings are the ones ``repro explore --gpu on`` recorded on an H100
(``docs/results/2026-11-25-runtime-gpu/``); the commands run for real on this machine."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import gpu_visible, repro_cli

ROOT = Path(__file__).resolve().parents[1]
GPU_RESULTS = ROOT / "docs" / "results" / "2026-11-25-runtime-gpu"
KERNELS = Path(__file__).parent / "data" / "oracle_kernels.py"
WRONG_RESULT = "upstream-6691-pipelined-dot-and-sum-f4683ab7d156"
FAULT = "upstream-10474-descriptor-1d-pipelined-126948bb4a6c"

pytestmark = pytest.mark.skipif(gpu_visible(), reason="checks what a machine without a GPU says")


def _findings(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "out" / "findings"
    folder.mkdir(parents=True)
    for name in names:
        shutil.copy(GPU_RESULTS / f"{name}.json", folder)
    return tmp_path / "out"


def test_a_compiled_case_of_a_known_runtime_failure_needs_a_gpu_not_fixed(tmp_path):
    pytest.importorskip("torch")  # the oracle kernels' file imports it
    baseline = tmp_path / "baseline.toml"
    baseline.write_text(
        "[[known]]\n"
        'id = "unrolled-tail"\n'
        'repro = "oracle-differential"\n'
        'signature = "wrong-result:launch:differential:UNROLL*"\n'
        'kind = "compiler-bug"\n'
        "where = { UNROLL = 2 }\n"
    )
    done = repro_cli(
        "run", str(KERNELS), "-c", "wrong", "--baseline", str(baseline), "-o", str(tmp_path)
    )
    assert done.code == 0, done.stdout + done.stderr
    row = next(ln for ln in done.stdout.splitlines() if ln.startswith("oracle-differential["))
    assert "\tcompiled\tneeds-gpu\t" in row and "needs a GPU (sm_90) to check" in row
    assert "fixed" not in done.stdout and "passed" not in done.stdout
    (run,) = (tmp_path / "runs").iterdir()
    results = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    unrolled = next(r for r in results if r["repro"] == "oracle-differential")
    assert unrolled["verdict"] == "needs-gpu" and unrolled["gpu"] is False


@pytest.mark.parametrize("finding", [pytest.param(WRONG_RESULT, marks=pytest.mark.slow), FAULT])
def test_the_report_of_a_runtime_failure_says_where_to_check_it(tmp_path, finding):
    out = _findings(tmp_path, finding)
    done = repro_cli("report", finding, "--verify", "-o", str(out), timeout=600)
    assert done.code == 0, done.stdout + done.stderr
    text = done.stdout + done.stderr
    there = "needs a GPU (sm_90) to check: on a machine with an sm_90 GPU, run"
    assert f"{there} `repro report {finding} --verify`" in text
    assert "do not file" not in text and "fixed upstream" not in text
    body = (out / finding / "comment.md").read_text()
    assert "launches on an sm_90 GPU" in body and "no GPU" not in body
    assert "import torch" in (out / finding / "repro.py").read_text()
    report = json.loads((out / finding / "report.json").read_text())
    assert "needs a GPU (sm_90)" in json.dumps(report)
    assert "do not file" not in json.dumps(report)


@pytest.mark.slow
@pytest.mark.venv
def test_bisect_never_calls_a_compiled_release_good(tmp_path):
    out = _findings(tmp_path, WRONG_RESULT)
    done = repro_cli(
        "bisect", WRONG_RESULT, "--bad", "3.6.0", "--good", "3.9.0", "-o", str(out), timeout=900
    )
    assert done.code == 2, done.stdout + done.stderr
    assert "needs a GPU" in done.stderr and "first good" not in done.stdout


@pytest.mark.venv
def test_a_matrix_cell_of_a_runtime_port_is_never_passed(tmp_path):
    done = repro_cli(
        "matrix",
        "upstream-6691-pipelined-dot-and-sum",
        "-t",
        "sm_90",
        "-c",
        "trigger",
        "--triton",
        "3.6.0,3.9.0",
        "-o",
        str(tmp_path),
        timeout=1200,
    )
    assert done.code == 0, done.stdout + done.stderr
    rows = [ln for ln in done.stdout.splitlines() if ln.startswith("upstream-6691")]
    assert len(rows) == 2
    for row in rows:
        cells = row.split("\t")[1:]
        assert cells == ["compiled; needs a GPU (sm_90) to check"] * 2, row
    assert "triton 3.6.0: 2 needs-gpu" in done.stdout
