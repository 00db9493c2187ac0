"""``repro explain``: a failure and the variant that avoids it, compiled with per-pass dumps
under the installed Triton (3.9.0 here, no GPU), and the first pass where they part.

- the 1-D descriptor copy of ``tests/data/descriptor_1d_pipelined.py`` (it faults at launch
  with 3 stages on an H100 under 3.6.0): 3 stages against 1 on sm_90. The loop carries its
  stage count from the start; the pipeliner is the first pass that acts on it, turning the
  descriptor store into an asynchronous TMA store through shared memory;
- a descriptor GEMM (``tma-gemm``) whose stage count is a compile option: the IR is the same
  until ``TritonGPUAssignLatencies`` gives the loads a latency;
- #9728's warp-specialized kernel, which fails to compile on sm_90: explained against
  warp specialization off, and the report of that failure shows the pass.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, repro_cli
from test_cli_output import check_json

from suite.engine.discover import select
from suite.engine.runner import Execution
from suite.explain.dumps import normalize, split_dump
from suite.explain.explain import Explanation, explain

DESCRIPTOR = ROOT / "tests" / "data" / "descriptor_1d_pipelined.py"


def _run(tmp_path: Path, *args: str) -> Path:
    done = repro_cli("run", *args, "-o", str(tmp_path), "-j", "2")
    assert done.code in (0, 1), done.stdout + done.stderr
    (run,) = (tmp_path / "runs").iterdir()
    return run


@pytest.fixture(scope="module")
def descriptor_run(tmp_path_factory) -> Path:
    """The descriptor copy's trigger run, made once: the tests explain its case (each into
    its own output root) and only read the run."""
    return _run(tmp_path_factory.mktemp("descriptor"), str(DESCRIPTOR), "-c", "trigger")


# Checked on 3.9.0; on 3.5.0 the IR differs from the start and AssignLatencies (pass 28) is
# the first pass that acts on the difference.
@pytest.mark.triton(">=3.9")
def test_the_pipeliner_is_where_three_stages_and_one_part(descriptor_run, tmp_path):
    run = descriptor_run
    case = "descriptor-1d-pipelined[sm_90-x8-s3-fp16]"
    args = ("explain", f"{run}:{case}", "--variant", "STAGES=1", "-o", str(tmp_path))
    done = repro_cli(*args)
    assert done.code == 0, done.stdout + done.stderr
    assert "first pass that acts on the difference" in done.stdout
    assert "TritonGPUPipeline" in done.stdout
    folder = tmp_path / "descriptor-1d-pipelined_sm_90-x8-s3-fp16" / "explain"
    record = json.loads((folder / "explain.json").read_text())
    assert check_json("explain", repro_cli(*args, "--json").stdout) == record
    first = record["first_difference"]
    assert first["pass"] == "TritonGPUPipeline" and first["input_differs"] is True
    assert record["change"] == {"STAGES": 1}
    # Only 3 stages store through shared memory with an asynchronous TMA copy.
    diff = (folder / "first-difference.diff").read_text()
    assert "-      ttng.async_tma_copy_local_to_global" in diff
    assert "+      tt.descriptor_store" in diff
    assert "%arg" not in diff and "loc(" not in diff  # SSA names and locations normalized
    for variant in ("failing", "passing"):
        for name in ("passes.mlir", "kernel.ttgir", "kernel.ptx"):
            assert (folder / variant / name).stat().st_size > 0, (variant, name)
    assert record["ptx_differs"] is True


@pytest.fixture(scope="module")
def stage_count(tmp_path_factory) -> Explanation:
    """num_stages 3 against 1 on the plain descriptor GEMM, explained once for the module."""
    (found,) = select(["tma-gemm"])
    config = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_stages": 3}
    config |= {"num_warps": 8, "dtype": "fp16"}
    folder = tmp_path_factory.mktemp("stage-count")
    return explain(found, "sm_90", config, {"num_stages": "1"}, folder, Execution())


# Checked on 3.9.0; 3.5.0's dumps name each pass without its options, the first one "Inliner".
@pytest.mark.triton(">=3.9")
def test_the_dump_names_the_pass_with_its_options(stage_count):
    assert stage_count.first.failing
    assert stage_count.first.failing.options.endswith("num-stages=3}")
    steps = split_dump(Path(stage_count.failing.files["passes"]).read_text())
    assert steps[0].name == "InlinerPass"


@pytest.mark.triton(">=3.4")  # tma-gemm's descriptors, and AssignLatencies, first in 3.4
def test_a_stage_count_given_as_an_option_parts_at_assign_latencies(stage_count):
    done = stage_count
    assert done.first.pass_name == "TritonGPUAssignLatencies"
    assert not done.first.input_differs
    assert done.first.failing
    assert "{tt.latency = 2 : i32}" in done.first.diff
    # Every pass ran in both compiles; the steps were read from a real dump.
    assert not done.first.only_failing and not done.first.only_passing
    steps = split_dump(Path(done.failing.files["passes"]).read_text())
    assert steps and done.failing.passes == done.passing.passes
    assert all("loc(" not in s.text and "%arg" not in s.text for s in steps)


def test_a_variant_the_space_does_not_hold_is_one_line(descriptor_run, tmp_path):
    run = descriptor_run
    case = f"{run}:descriptor-1d-pipelined[sm_90-x8-s3-fp16]"
    for variant, said in (
        ("STAGES=2", "not one of 1, 3"),
        ("stages=1", "has no such parameter"),
        ("STAGES", "say PARAM=VALUE"),
        ("STAGES=3", "changes nothing"),
    ):
        done = repro_cli("explain", case, "--variant", variant, "-o", str(tmp_path))
        assert done.code == 2 and said in done.stderr, (variant, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.triton(">=3.4")  # upstream-9728 needs tl.range(warp_specialize), new in 3.4
def test_the_report_of_a_compile_failure_shows_where_the_variant_parts(tmp_path):
    run = _run(tmp_path, "upstream-9728-ws-pointer-dot-hopper", "-c", "trigger")
    (line,) = (run / "results.jsonl").read_text().splitlines()
    case = json.loads(line)["case_id"]
    done = repro_cli(
        "explain", f"{run}:{case}", "--variant", "WARP_SPECIALIZE=false", "-o", str(tmp_path)
    )
    assert done.code == 0, done.stdout + done.stderr
    assert "compiler-error:ttgir:NVGPUWarpSpecialization" in done.stdout
    (folder,) = [p for p in tmp_path.iterdir() if (p / "explain").is_dir()]
    # Known upstream (the shipped baseline): a comment for #9728; new (an empty one): an issue.
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    for baseline, body, said in (
        ([], "comment.md", "- Against the variant that passes (`WARP_SPECIALIZE=False`"),
        (["--baseline", str(empty)], "issue.md", "**Against the variant that passes**"),
    ):
        reported = repro_cli(
            "report", f"{run}:{case}", "-o", str(tmp_path), "--no-rerun", *baseline
        )
        assert reported.code == 0, reported.stdout + reported.stderr
        text = (folder / body).read_text()
        assert said in text and "NVGPUWarpSpecialization" in text.split(said)[1], text
        assert (folder / "explain" / "explain.json").is_file()  # kept by the report


@pytest.mark.venv
def test_a_finding_is_explained_under_its_own_release(tmp_path):
    """The AssignLatencies finding of 3.5.0 (sm_100, 2 stages), compiled under that release's
    venv: the compile ends in the pass that fails, given the same IR as the 1-stage variant."""
    finding = tmp_path / "assign-latencies.json"
    source = ROOT / "tests" / "data" / "findings" / "tma-gemm-prefetch-assign-latencies-3.5.0.json"
    shutil.copy(source, finding)
    done = repro_cli("explain", str(finding), "--variant", "num_stages=1", "-o", str(tmp_path))
    assert done.code == 0, done.stdout + done.stderr
    assert "compiler-error:ttgir:TritonGPUAssignLatencies" in done.stdout
    said = (
        "the failing variant ends in TritonGPUAssignLatencies (pass 30), where the passing "
        "variant goes on (given the same IR)"
    )
    assert said in done.stdout


def test_normalize_keeps_what_is_not_a_name_or_a_location():
    text = (
        "  %a_desc_0 = tt.make_tensor_descriptor %a_ptr, [%M] : <f16> loc(#loc19)\n"
        '#loc19 = loc("kernel.py":12:3)\n'
        '  tt.func @k(%x: i32 loc("x"(#loc))) {\n'
    )
    assert normalize(text.splitlines()) == (
        "  %_ = tt.make_tensor_descriptor %_, [%_] : <f16>\n  tt.func @k(%_: i32) {"
    )


def test_the_report_of_a_wrong_result_shows_where_the_differential_variant_parts(tmp_path):
    """#6691's finding from the H100 (a wrong result the differential oracle caught against
    num_stages=1, triton 3.6.0): its report compiles both configs for sm_90 here, no GPU
    needed, and names the first pass whose output differs."""
    finding = "upstream-6691-pipelined-dot-and-sum-f4683ab7d156"
    findings = tmp_path / "findings"
    findings.mkdir()
    shutil.copy(ROOT / "docs" / "results" / "2026-11-25-runtime-gpu" / f"{finding}.json", findings)
    done = repro_cli("report", finding, "-o", str(tmp_path), "--no-rerun", timeout=900)
    assert done.code == 0, done.stdout + done.stderr
    folder = tmp_path / finding
    record = json.loads((folder / "explain" / "explain.json").read_text())
    assert record["change"] == {"num_stages": 1}
    assert record["variants"]["failing"]["config"]["num_stages"] == 2
    first = record["first_difference"]["pass"]
    assert first  # the pipeliner's passes are where 2 stages and 1 part
    body = (folder / "comment.md").read_text()
    said = "- Against the variant that passes (`num_stages=1`, `repro explain`): "
    assert said in body and first in body.split(said)[1].splitlines()[0], body
