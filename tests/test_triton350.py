"""The seeds' one real bug, under the release that has it (a cached triton==3.5.0 venv)."""

from __future__ import annotations

import json

import pytest

from suite.engine.discover import select
from suite.engine.expand import expand_cases
from suite.engine.runner import Execution, run_case
from suite.engine.triage import triage_of

TRIGGER = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_stages": 2, "num_warps": 4}


def _run(python, target, tmp_path, name):
    (spec,) = expand_cases(select(["tma-gemm-prefetch"]), [target], configs=[TRIGGER])
    return run_case(spec, tmp_path / name, Execution(python=str(python)))


@pytest.mark.venv
def test_assign_latencies_fails_on_sm100_and_passes_on_sm90(triton_350, tmp_path):
    failing = _run(triton_350, "sm_100", tmp_path, "a")
    assert failing.outcome.label == "compiler-error"
    assert failing.site.stage == "ttgir"
    assert failing.site.pass_name == "TritonGPUAssignLatencies"
    assert "TritonGPUAssignLatencies" in failing.signature.text
    # The MLIR reproducer Triton wrote is kept with the case.
    assert any(name.startswith("mlir-reproducer") for name in failing.artifacts)
    passing = _run(triton_350, "sm_90", tmp_path, "b")
    assert passing.outcome.label == "passed"


@pytest.mark.venv
def test_second_run_still_fails_no_cache_hides_it(triton_350, tmp_path):
    first = _run(triton_350, "sm_100", tmp_path, "first")
    second = _run(triton_350, "sm_100", tmp_path, "second")
    assert first.signature == second.signature
    assert second.outcome.label == "compiler-error"


@pytest.mark.venv
def test_the_sm103_tcgen05_abort_is_a_compiler_bug_not_an_arch_suffix(triton_350, tmp_path):
    """#8473: Triton compiles for sm_103a itself, and its LLVM cannot select the
    tcgen05.wait.st it emitted: Triton's bug, not a target named without its 'a'."""
    config = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_stages": 1, "num_warps": 4}
    (spec,) = expand_cases(select(["tma-gemm"]), ["sm_103"], configs=[{**config, "dtype": "fp16"}])
    result = run_case(spec, tmp_path / "case", Execution(python=str(triton_350)))
    assert result.outcome.label == "crash"
    assert "Cannot select: intrinsic llvm.nvvm.tcgen05.wait.st" in result.signature.text
    found = triage_of(result)
    assert found is not None and found.label == "compiler-bug", found


@pytest.mark.venv
def test_known_bug_is_exit_0_under_350(prefetch_run_350):
    done = prefetch_run_350.done
    assert done.code == 0, done.stdout + done.stderr
    lines = (prefetch_run_350.run / "results.jsonl").read_text().splitlines()
    verdicts = [json.loads(line)["verdict"] for line in lines]
    assert verdicts.count("known") == 3
    assert "triton 3.5.0" in done.stdout


def test_newest_triton_passes_where_the_baseline_knows_the_fix(request):
    """On a release at or past the entry's fixed_in (3.6.0), the cases pass as expected: exit 0
    (exit 3 is for a known bug with no known fix that stops failing). Its sm_100 cases are read
    from the README's `repro run`, which runs them with the rest of the catalogue."""
    import triton
    from packaging.version import Version

    if Version(triton.__version__.split("+")[0]) < Version("3.6.0"):
        pytest.skip(f"installed triton {triton.__version__} still has the bug")
    done = request.getfixturevalue("readme_run").done  # not made only to skip
    assert done.code == 0, done.stdout + done.stderr
    table = [line.split("\t") for line in done.stdout.splitlines()]
    verdicts = [row[2] for row in table if row[0].startswith("tma-gemm-prefetch[sm_100-")]
    assert verdicts and "fixed" not in verdicts, done.stdout
