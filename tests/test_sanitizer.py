"""Sanitizer evidence of a failing launch.

The parser reads compute-sanitizer's real output, saved on an H100 (2026-11-25, driver
580.159.04, compute-sanitizer 2025.3.1, triton 3.6.0, torch 2.11; ``bench/sanitizer_gpu.sh``):
memcheck on the 1-D descriptor copy made inside a 3-stage ``tl.range`` (the launch faults
with ``misaligned address``), memcheck on a store one block past the end of its output,
racecheck on the same copy with one stage (clean). Without compute-sanitizer (this machine)
a (planted) faulting launch is rerun under nothing but Triton's own instrumentation, and
says so. On a GPU the engine reruns the faulting case itself.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import ROOT, per_release, repro_cli

from suite.engine.discover import select
from suite.engine.expand import expand_cases
from suite.engine.outcome import CaseResult
from suite.engine.runner import Execution, run_case
from suite.engine.sanitizer import Evidence, executable, instrumentation_modes, parse
from suite.toolchain.venvs import for_version

SAVED = ROOT / "tests" / "data" / "sanitizer"
DESCRIPTOR = ROOT / "tests" / "data" / "descriptor_1d_pipelined.py"
PLANTED_FAULT = ROOT / "tests" / "data" / "planted_launch_fault.py"


def test_a_misaligned_shared_access_is_told_from_an_out_of_bounds_write():
    misaligned = parse((SAVED / "memcheck-descriptor.txt").read_text(), "memcheck")
    assert misaligned is not None
    assert misaligned.category == "misaligned"
    assert misaligned.kind == "Misaligned shared or local address"
    assert misaligned.address_space == "shared or local" and not misaligned.access
    assert (misaligned.kernel, misaligned.pc) == ("copy_1d", "0xcd0")
    assert misaligned.source == "sanitizer_kernels.py:21"  # the descriptor store's line
    assert (misaligned.thread, misaligned.block) == ("(0,0,0)", "(0,0,0)")
    assert misaligned.errors == 34

    beyond = parse((SAVED / "memcheck-oob.txt").read_text(), "memcheck")
    assert beyond is not None and beyond.category == "out-of-bounds"
    assert (beyond.access, beyond.size, beyond.address_space) == ("write", 2, "global")
    assert beyond.kernel == "store_past_end" and beyond.address == "0x7f3c6e804000"
    assert "after the nearest allocation" in beyond.detail and "8,192 bytes" in beyond.detail
    assert beyond.summary().startswith(
        "memcheck: Invalid __global__ write of size 2 bytes at store_past_end+0xf0"
    )


def test_a_clean_tool_reports_nothing():
    assert parse((SAVED / "racecheck-descriptor1.txt").read_text(), "racecheck") is None


INSTRUMENTATION = {"3.5.0": (), "3.6.0": ("consan",), "3.7.1": ("consan",)}
INSTRUMENTATION |= {"3.8.0": ("consan", "gsan"), "3.9.0": ("consan", "gsan")}


@pytest.mark.venv
@pytest.mark.parametrize("version", per_release(list(INSTRUMENTATION)))
def test_which_releases_have_their_own_instrumentation(version):
    """Read in each release's sources: ConSan from 3.6.0, GSan from 3.8.0 (3.5.0 has only an
    experimental ConSan switch of another name). 3.8.0's row is the nightly's: by default
    3.7.1 without GSan and 3.9.0 with it bound where it begins."""
    python = for_version(version).python  # built, or waited for while it is prebuilt
    assert instrumentation_modes(str(python)) == INSTRUMENTATION[version]


# ConSan and GSan both exist from 3.8.0 (test_which_releases_have_their_own_instrumentation).
@pytest.mark.triton(">=3.8")
def test_without_compute_sanitizer_a_failing_launch_says_so(tmp_path):
    """A launch that fails as a fault does (planted: this machine has no GPU) gets the
    engine's evidence step, with no compute-sanitizer here."""
    if executable():
        pytest.skip("compute-sanitizer is installed here")
    (found,) = select([str(PLANTED_FAULT)])
    (spec,) = expand_cases([found], ["sm_90"], ["trigger"])
    spec = replace(spec, gpu=True)
    result = run_case(spec, tmp_path / "case", Execution(warm=False))
    assert result.outcome.label == "runtime-error", result.message
    evidence = result.notes.sanitizer
    assert evidence["available"] is False and evidence["tools"] == []
    assert evidence["note"] == "compute-sanitizer is not installed: no sanitizer evidence"
    # Triton 3.9.0 has ConSan and GSan: the case ran under each, and failed the same way.
    assert sorted(evidence["instrumentation"]) == ["consan", "gsan"]
    assert all(said.startswith("exit ") for said in evidence["instrumentation"].values())


@pytest.mark.gpu
@pytest.mark.long
def test_the_misaligned_fault_is_rerun_under_memcheck_on_the_gpu(tmp_path):
    # One run of the trigger and its nearest pass, as a user runs them; no relaunches with
    # other ptxas builds (tests/test_ptxas_differential.py's): each is a process alone on
    # the GPU, and this test reads the sanitizer's evidence alone.
    done = repro_cli(
        "run", str(DESCRIPTOR), "-c", "trigger", "-c", "nearest-pass", "--gpu", "on",
        "--no-ptxas-differential", "-o", str(tmp_path),
    )  # fmt: skip
    (run,) = (tmp_path / "runs").iterdir()
    lines = (run / "results.jsonl").read_text().splitlines()
    results = {r.case_id: r for r in (CaseResult.from_json(json.loads(line)) for line in lines)}
    case = "descriptor-1d-pipelined[sm_90-x8-s3-fp16]"
    result = results.pop(case)
    assert result.outcome.label == "runtime-error", result.message
    assert "misaligned address" in result.message
    evidence = result.notes.sanitizer
    assert evidence["available"] and evidence["tools"] == ["memcheck"]
    first = evidence["first"]
    assert first["category"] == "misaligned" and first["kernel"] == "copy_1d"
    assert first["source"].endswith("descriptor_1d_pipelined.py:43")
    print(json.dumps(evidence, indent=2))
    (passed,) = results.values()  # the nearest pass
    assert passed.outcome.label == "passed" and passed.notes.sanitizer is None

    # The run's report carries the first error.
    reported = repro_cli("report", f"{run}:{case}", "-o", str(tmp_path), "--no-rerun")
    assert reported.code == 0, done.stdout + reported.stdout + reported.stderr
    (folder,) = [p for p in tmp_path.iterdir() if (p / "report.json").is_file()]
    issue = (folder / "issue.md").read_text()
    assert "**compute-sanitizer**" in issue and "Misaligned shared or local address" in issue


def _reported(tmp_path: Path, finding: str, evidence: Evidence, body: str) -> str:
    """``body`` of the report of a finding recorded on the H100, given ``evidence`` as its
    sanitizer record (a comment on the known issue, or a new issue without a baseline)."""
    record = json.loads(
        (ROOT / "docs" / "results" / "2026-11-25-runtime-gpu" / f"{finding}.json").read_text()
    )
    record["sanitizer"] = evidence.to_json()
    (tmp_path / "findings").mkdir()
    (tmp_path / "findings" / f"{finding}.json").write_text(json.dumps(record))
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    baseline = ["--baseline", str(empty)] if body == "issue.md" else []
    done = repro_cli("report", finding, "-o", str(tmp_path), "--no-rerun", *baseline)
    assert done.code == 0, done.stdout + done.stderr
    return (tmp_path / finding / body).read_text()


@pytest.mark.parametrize("body", ["comment.md", "issue.md"])
def test_a_fault_report_carries_the_first_error_of_the_findings_sanitizer_run(tmp_path, body):
    """#10474's finding from the H100, with the evidence memcheck printed there for the same
    misaligned descriptor store (``memcheck-descriptor.txt``) as its ``sanitizer`` record:
    the report quotes the first error, as a comment on the known issue or as a new issue."""
    first = parse((SAVED / "memcheck-descriptor.txt").read_text(), "memcheck")
    evidence = Evidence(True, ("memcheck",), first, {}, {"consan": "exit 1: no error reported"})
    text = _reported(
        tmp_path, "upstream-10474-descriptor-1d-pipelined-126948bb4a6c", evidence, body
    )
    said = "memcheck: Misaligned shared or local address at copy_1d+0xcd0 (sanitizer_kernels.py:21)"
    assert said in text, text
    category = {
        "comment.md": "- compute-sanitizer (misaligned): `",
        "issue.md": "**compute-sanitizer** (the launch run again under memcheck): misaligned,",
    }[body]
    assert category in text
    assert "`consan`" in text and "`exit 1: no error reported`" in text
    assert max(len(line) for line in text.splitlines()) <= 300


@pytest.mark.parametrize("body", [pytest.param("comment.md", marks=pytest.mark.slow), "issue.md"])
def test_a_wrong_result_that_the_sanitizers_ran_clean_on_says_so(tmp_path, body):
    """#6691's wrong result from the H100: racecheck and synccheck found nothing, which tells a
    wrong value apart from a race or an out-of-bounds access."""
    evidence = Evidence(True, ("racecheck", "synccheck"), None, {}, {})
    text = _reported(tmp_path, "upstream-6691-pipelined-dot-and-sum-f4683ab7d156", evidence, body)
    assert "compute-sanitizer** (racecheck, synccheck): no memory error" in text or (
        "- compute-sanitizer (racecheck, synccheck): no memory error" in text
    ), text
    assert max(len(line) for line in text.splitlines()) <= 300
