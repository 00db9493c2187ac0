"""The built-in reproducers compile for the five targets on the installed Triton."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import triton

from suite.api import ptxas_targets
from suite.engine.discover import catalogue
from suite.engine.expand import expand_cases
from suite.engine.runner import Execution, run_case

TARGETS = ("sm_90", "sm_100", "sm_103", "sm_120", "sm_121")
SMALL = {
    "tma-gemm-prefetch": {
        "BLOCK_M": 64,
        "BLOCK_N": 64,
        "BLOCK_K": 32,
        "num_stages": 1,
        "num_warps": 4,
    },
    "tma-gemm": {
        "BLOCK_M": 128,
        "BLOCK_N": 128,
        "BLOCK_K": 64,
        "num_stages": 3,
        "num_warps": 8,
        "dtype": "fp16",
    },
    "tma-copy": {"BLOCK_M": 64, "BLOCK_N": 128, "num_stages": 3, "num_warps": 4, "dtype": "fp16"},
}


def test_catalogue_holds_the_three_triton_builtins():
    ids = {found.repro.id for found in catalogue()}
    assert set(SMALL) <= ids


#: The first target of each of the two families ptxas tells apart by default; the README's
#: command (test_baseline.py) runs every built-in's cases on every target; the rest is `-m slow`.
COMPILED_BY_DEFAULT = ("sm_90", "sm_100")


@pytest.mark.triton(">=3.4")  # the three need tl.make_tensor_descriptor, new in 3.4
@pytest.mark.parametrize(
    "target",
    [t if t in COMPILED_BY_DEFAULT else pytest.param(t, marks=pytest.mark.slow) for t in TARGETS],
)
@pytest.mark.parametrize("repro_id", sorted(SMALL))
def test_builtin_compiles(repro_id, target, tmp_path):
    if f"{target}a" not in ptxas_targets():
        pytest.skip(f"this Triton's ptxas does not know {target}a (a toolchain gap)")
    (found,) = [f for f in catalogue() if f.repro.id == repro_id]
    (spec,) = expand_cases([found], [target], configs=[SMALL[repro_id]])
    result = run_case(spec, tmp_path / "case", Execution())
    assert result.outcome.label == "passed", (result.message, result.artifacts)
    assert result.metrics["triton_version"] == triton.__version__
    assert 0 < result.metrics["shared_bytes"] <= 232448
    assert result.metrics["registers"] > 0


def test_repro_list_shows_catalogue(tmp_path):
    from tests.conftest import repro_cli

    done = repro_cli("list")
    assert done.code == 0
    for repro_id in SMALL:
        assert repro_id in done.stdout


def test_default_run_writes_results_files(readme_run):
    """`repro run` (the README's, read here rather than a run of its own): table, JSONL,
    summary, JUnit."""
    done, run = readme_run.done, readme_run.run
    assert done.code == 0, done.stderr
    assert "tma-copy[sm_90-" in done.stdout
    lines = (run / "results.jsonl").read_text().splitlines()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["cases"] == len(lines) >= 5
    junit = (run / "junit.xml").read_text()
    assert junit.count("<testcase") == len(lines)
    environment = json.loads((run / "environment.json").read_text())
    assert environment["triton"] == triton.__version__
    assert Path(environment["python_executable"].replace("~", str(Path.home()))).exists()


def test_shards_split_the_run_without_overlap_or_gap(tmp_path):
    from tests.conftest import repro_cli

    seen = []
    for k in (1, 2, 3):
        done = repro_cli(
            "run", "tma-copy", "-t", "sm_90", "--shard", f"{k}/3", "-o", str(tmp_path / str(k))
        )
        assert done.code == 0, done.stderr
        (run,) = (tmp_path / str(k) / "runs").iterdir()
        lines = (run / "results.jsonl").read_text().splitlines()
        seen += [json.loads(line)["case_id"] for line in lines]
    assert len(seen) == len(set(seen)) == 7


@pytest.mark.triton(">=3.4")  # tma-copy needs tl.make_tensor_descriptor, new in 3.4
def test_pytest_door_runs_catalogue_with_xdist_and_junit(tmp_path):
    """`pytest --repro -n 2`: one item per case, known failures as strict xfails."""
    import subprocess
    import sys
    import xml.etree.ElementTree as ET

    junit = tmp_path / "junit.xml"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--repro",
            "-n",
            "2",
            "-p",
            "no:cacheprovider",
            "--repro-select",
            "tma-copy",
            "--repro-target",
            "sm_90,sm_120",
            f"--junitxml={junit}",
            "-q",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    cases = ET.parse(junit).getroot().findall(".//testcase")
    names = {c.get("name") for c in cases}
    assert len(cases) == 14
    assert "tma-copy[sm_90-256x256-w16-s5-fp16]" in names
    assert "10 passed, 4 xfailed" in proc.stdout
