"""`repro reduce` of a runtime failure: every candidate launched and judged by the finding's
oracle, its launch kept well-formed, refused where nothing can launch it.

Real launches: Triton's interpreter (``TRITON_INTERPRET=1``) runs them on the CPU here
(tests/data/reduce_runtime/split_store_epilogue.py, a wrong result of the program's own that
the differential oracle catches); on an sm_90 GPU the GPU-marked test reduces the realistic
program bench/reduce_inputs/runtime/fused_add_rmsnorm_sm90.py (triton-lang/triton#10474).
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from suite.engine import COMPILE_LAUNCHES, Outcome, context_check, discover
from suite.engine.expand import CaseSpec
from suite.engine.runner import Execution, run_case
from suite.failures.findings import Finding
from suite.reduce.form import launching_form
from suite.reduce.interesting import ReductionGoal, SignatureTest
from suite.reduce.passes import PASSES, candidates, kernel_measure, well_formed
from suite.reduce.tree import split
from suite.report.launch_repro import launch_script
from suite.report.reduced import Reduced
from suite.templating import template_environment
from tests.conftest import (
    gpu_reduce_budget,
    gpu_visible,
    repro_cli,
    run_alone,
    the_gpus,
    write_finding,
)

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
SPLIT_STORE = ROOT / "tests" / "data" / "reduce_runtime" / "split_store_epilogue.py"
SPLIT_SIGNATURE = "wrong-result:launch:differential:split_store: nan"
SPIN = ROOT / "tests" / "data" / "reduce_runtime" / "spin_scale.py"
RMSNORM = ROOT / "bench" / "reduce_inputs" / "runtime" / "fused_add_rmsnorm_sm90.py"
# What a launch that no longer fits its kernel raises: Triton's binding of the arguments,
# which names the kernel (the interpreter) or its generated binder. Other functions' binding
# errors are a candidate's own (torch's argument parser in the interpreter's copy of the
# arguments, say, once a candidate's previous launch has used up the memory cap).
MALFORMED = re.compile(
    r"\b(fused_epilogue_kernel|dynamic_func)\(\) "
    r"(missing \S+ required|takes \S+ positional|got an unexpected keyword)"
)


def _finding(program: Path, signature: str, outcome: str, folder: Path) -> Path:
    found = discover.from_source({"path": str(program)}, str(program))[0]
    configs = found.repro.configs
    return write_finding(
        program, signature, outcome, folder, configs["trigger"][0], configs["nearest-pass"][0]
    )


#: How these tests run a case: fresh interpreters, and a failed launch never rerun under
#: compute-sanitizer or other ptxas builds (each rerun a process alone on the GPU; what they
#: find is tests/test_sanitizer.py's and tests/test_ptxas_differential.py's to check).
NO_RERUNS = Execution(warm=False, sanitize=False, ptxas_differential=False)


def _judged_fresh(reduced: Path, finding: Finding, work: Path, gpus: tuple[str, ...] = ()):
    expectation = ReductionGoal(
        repro=finding.repro,
        signature=finding.signature,
        target=finding.target,
        config=dict(finding.minimal_config),
        launch=True,
        passing_config=dict(finding.passing_neighbours[0].config),
    )
    work.mkdir(parents=True, exist_ok=True)
    execution = replace(NO_RERUNS, gpus=gpus)
    return SignatureTest(expectation, work, None, execution)(reduced)


@pytest.mark.skipif(gpu_visible(), reason="a GPU is visible: the reduction would launch")
def test_a_runtime_finding_without_a_gpu_is_refused_with_the_command_to_run_there(tmp_path):
    finding = _finding(SPLIT_STORE, SPLIT_SIGNATURE, "wrong-result", tmp_path)
    before = finding.read_text()
    env = {"TRITON_INTERPRET": "0"}  # launches on a GPU, not the interpreter
    done = repro_cli("reduce", str(finding), "-o", str(tmp_path), env=env)
    assert done.code == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "runtime failure" in lines[0] and "needs a GPU (sm_90)" in lines[0]
    assert f"repro reduce {finding}" in lines[0]
    assert "reduced" not in done.stdout
    assert not (tmp_path / "reduce").exists()  # nothing half-written
    assert finding.read_text() == before


def test_the_launching_form_keeps_its_launch_code_and_every_edit_stays_well_formed(tmp_path):
    path = _finding(SPLIT_STORE, SPLIT_SIGNATURE, "wrong-result", tmp_path)
    finding = Finding.from_json(json.loads(path.read_text()))
    found = discover.from_source({"path": str(SPLIT_STORE)}, str(SPLIT_STORE))[0]
    form = launching_form(finding, found, sys.executable, str(SPLIT_STORE), "runtime")
    head, _ = split(form)
    # The entry kernel is launched through the seam, with the original parameters' names.
    assert "launch_kernel(fused_epilogue_kernel, grid, ('acc_ptr', 'bias_ptr'" in head
    assert "def launch_case(case, acc, bias, residual):" in head
    assert 'Differential({"SPLIT_STORE": False}, label="split_store")' in head
    assert kernel_measure(form) == kernel_measure(SPLIT_STORE.read_text())
    proposed = 0
    for chosen in PASSES:
        for _, text in candidates(form, chosen):
            proposed += 1
            assert split(text)[0] == head, chosen.name  # the launch code is never edited
            assert well_formed(ast.parse(text)), chosen.name
    assert proposed > 100


def test_a_hangs_passing_twin_may_compute_a_wrong_value_but_not_hang(tmp_path, monkeypatch):
    # A hang (or a fault) is kept by its tie to the config, not by the program's arithmetic:
    # at the passing config a candidate may compute a wrong value, never fail another way.
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    found = discover.from_source({"path": str(SPIN)}, str(SPIN))[0]
    expectation = ReductionGoal(
        repro=found.repro.id,
        signature="timeout:launch:hang: kernel",
        target="sm_90",
        config=dict(found.repro.configs["trigger"][0]),
        launch=True,
        passing_config=dict(found.repro.configs["nearest-pass"][0]),
    )
    execution = Execution(warm=False, sanitize=False)
    test = SignatureTest(expectation, tmp_path / "work", None, execution)
    (tmp_path / "work").mkdir()
    wrong = tmp_path / "wrong.py"
    wrong.write_text(SPIN.read_text().replace("x * 2.0, mask=mask)", "x * 3.0, mask=mask)"))
    verdict = test(wrong)
    assert verdict.interesting, verdict
    always = tmp_path / "always.py"
    text = SPIN.read_text().replace(
        "    if WAIT:\n        _wait_for(flag_ptr)\n", "    _wait_for(flag_ptr)\n"
    )
    always.write_text(text)
    verdict = test(always)
    assert not verdict.interesting
    assert verdict.outcome.startswith("fails its passing config too: timeout:launch:hang"), verdict


def test_the_report_says_what_the_passing_config_checked(tmp_path):
    template = template_environment().get_template("reduced.md.j2")
    kept = dict(path=tmp_path / "reduced.py", original=tmp_path / "original.py")
    sizes = dict(lines=6, tokens=140, original_lines=102, original_tokens=1154, complete=True)
    fault = Reduced(**kept, **sizes, passing_change={"STAGES": 1}, values_checked=False)
    text = template.render(reduced=fault.context())
    assert "also launched with `STAGES=1`, where it did not fail (what it computes" in text
    wrong = Reduced(**kept, **sizes, passing_change={"N": 40}, values_checked=True)
    text = template.render(reduced=wrong.context())
    assert "also launched with `N=40`, where it did not fail." in text
    assert "not checked" not in text
    compiled = Reduced(**kept, **sizes)
    assert "also launched" not in template.render(reduced=compiled.context())


def test_a_wrong_result_is_reduced_under_the_interpreter_keeping_its_signature(tmp_path):
    path = _finding(SPLIT_STORE, SPLIT_SIGNATURE, "wrong-result", tmp_path)
    env = {"TRITON_INTERPRET": "1"}
    done = repro_cli(
        "reduce", str(path), "-o", str(tmp_path), "-j", "2", "--time-budget", "150", env=env
    )
    assert done.code == 0, done.stderr[-3000:]
    reduced = Path(done.stdout.strip().splitlines()[-1])
    state = json.loads((reduced.parent / "state.json").read_text())
    # Every candidate's launch still fit its kernel: none was turned away for its arguments.
    malformed = [seen for seen in state["rejected"] if MALFORMED.search(seen)]
    assert not malformed, malformed
    assert state["tries"] > 10 and state["improvements"] > 5
    original = kernel_measure(SPLIT_STORE.read_text())
    assert kernel_measure(reduced.read_text())[1] < original[1] * 0.8
    finding = Finding.from_json(json.loads(path.read_text()))
    assert finding.reduced is not None and finding.reduced["path"] == str(reduced.resolve())
    assert finding.reduced["passing_change"] == {"N": 40} and finding.reduced["values_checked"]
    # Judged again, fresh, under the interpreter: the same wrong result, and its nearest
    # passing config still passes (the kernel did not become one that is always wrong).
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        verdict = _judged_fresh(reduced, finding, tmp_path / "judge")
    finally:
        del os.environ["TRITON_INTERPRET"]
    assert verdict.interesting, verdict
    # The report's repro.py (triton and torch only) is built from the reduced file, and shows
    # the wrong result by itself.
    script = launch_script(
        template_environment(),
        reduced.read_text(),
        finding.repro,
        finding.minimal_config,
        SPLIT_SIGNATURE,
        "reduced",
        "sm_90",
        "3.9.0",
    )
    assert script is not None and "launch_kernel(fused_epilogue_kernel" in script
    (tmp_path / "repro.py").write_text(script)
    ran = run_alone(tmp_path / "repro.py")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert f"signature: {SPLIT_SIGNATURE}" in ran.stdout
    # reduce's own standalone reduced.py beside it: the same launch, the suite unimportable.
    alone = run_alone(reduced.parent / "reduced.py")
    assert alone.returncode == 1, alone.stdout + alone.stderr
    assert f"signature: {SPLIT_SIGNATURE}" in alone.stdout


@pytest.mark.gpu
@pytest.mark.long
def test_a_launch_fault_in_a_realistic_kernel_is_reduced_on_the_gpu(tmp_path):
    found = discover.from_source({"path": str(RMSNORM)}, str(RMSNORM))[0]
    trigger = dict(found.repro.configs["trigger"][0])
    seen = run_case(
        CaseSpec(found, trigger, "sm_90", gpu=True),
        tmp_path / "trigger",
        replace(NO_RERUNS, gpus=the_gpus()),
    )
    assert seen.signature is not None and ":launch" in seen.signature.text, seen.message
    path = _finding(RMSNORM, seen.signature.text, seen.outcome.label, tmp_path)
    # Four candidates at a time, as tests/test_closure.py's: each holds the GPU from its
    # launch to its exit, and the GPU tests beside it take turns there too.
    done = repro_cli(
        "reduce", str(path), "-o", str(tmp_path), "--time-budget", gpu_reduce_budget(), "-j", "4"
    )
    assert done.code == 0, done.stderr[-3000:]
    reduced = Path(done.stdout.strip().splitlines()[-1])
    assert kernel_measure(reduced.read_text())[1] < kernel_measure(RMSNORM.read_text())[1]
    finding = Finding.from_json(json.loads(path.read_text()))
    verdict = _judged_fresh(reduced, finding, tmp_path / "judge", the_gpus())
    assert verdict.interesting, verdict
    # The reduction of a fault leaves the GPU usable: a fresh process makes a context.
    assert context_check(os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]) == ""


def _built(cache: Path) -> set[str]:
    """The Triton cache's entries: one folder per kernel compiled or launcher built."""
    return {p.name for p in cache.iterdir()} if cache.is_dir() else set()


@pytest.mark.gpu
@pytest.mark.long
def test_a_candidates_launch_finds_its_kernels_built_by_its_compile_phase(tmp_path):
    # A candidate's run builds what it launches in its compile phase (no GPU turn held), then
    # launches in the same process; a compile-only run builds the same kernels. What the
    # candidate and its passing twin launch is built once, and the launch still fails as the
    # finding does.
    port = ROOT / "repros" / "upstream" / "descriptor_1d_pipelined_misaligned.py"
    found = discover.from_source({"path": str(port)}, str(port))[0]
    failing = dict(found.repro.configs["trigger"][0])
    passing = dict(found.repro.configs["nearest-pass"][0])
    cache = tmp_path / "cache"
    knobs = {"TRITON_CACHE_DIR": str(cache)}
    execution = replace(NO_RERUNS, gpus=the_gpus())
    ahead = {**knobs, COMPILE_LAUNCHES: json.dumps([failing, passing])}
    compiled = run_case(
        CaseSpec(found, failing, "sm_90", gpu=False), tmp_path / "c", execution, None, ahead
    )
    assert compiled.outcome is Outcome.PASSED, compiled.message
    built = _built(cache)
    for config, fails in ((failing, True), (passing, False)):
        own = {**knobs, COMPILE_LAUNCHES: json.dumps([config])}
        launched = run_case(
            CaseSpec(found, config, "sm_90", gpu=True), tmp_path / "l", execution, None, own
        )
        assert launched.outcome.is_failure is fails, launched.message
        assert _built(cache) == built, "the launch compiled what the compile-only run had not"
    # A kernel that does not compile fails the compile phase and launches nothing.
    broken = tmp_path / "broken.py"
    text = port.read_text().replace("tl.make_tensor_descriptor(", "tl.make_tensor_descriptr(")
    broken.write_text(text)
    found = discover.from_source({"path": str(broken)}, str(broken))[0]
    own = {**knobs, COMPILE_LAUNCHES: json.dumps([failing])}
    refused = run_case(
        CaseSpec(found, failing, "sm_90", gpu=True), tmp_path / "b", execution, None, own
    )
    assert refused.outcome is not Outcome.PASSED, refused.message
    assert "make_tensor_descriptr" in refused.message
    assert refused.site.phase == "compile" and refused.refused  # Triton's Python refused it
