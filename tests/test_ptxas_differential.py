"""The ptxas differential: the same PTX assembled by another ptxas build, or at -O0.

Here (no GPU) the builds are real: triton 3.9.0's bundled ``ptxas-blackwell`` (13.4, the
one it uses for sm_90) and the CUDA 13.0 toolkit's ptxas. PTX comes from real compiles. A
planted reproducer (``tests/data/planted_assembler_fault.py``) raises a CUDA fault's error
at launch unless another ptxas or -O0 was asked for, so the engine's relaunches run for
real; a launch that does not fault can only pass on a GPU (the fault check synchronizes
through torch), which the gpu-marked tests do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import ROOT, repro_cli, the_gpus

from suite.engine.discover import select
from suite.engine.expand import expand_cases
from suite.engine.outcome import CaseResult, FailureSite, Outcome, RunNotes, Signature
from suite.engine.ptxas import (
    AssemblerBlame,
    Evidence,
    Ptxas,
    Run,
    assemble,
    decide,
    disassembler,
    no_second_note,
    ptx_isa,
    same_ptx,
    sass,
    sass_differences,
    second_build,
    toolchain,
    variants,
)
from suite.engine.runner import Execution, run_case
from suite.engine.triage import TriageKind, triage_of
from tests.test_capture import venv_python

PLANTED = ROOT / "tests" / "data" / "planted_assembler_fault.py"
FAULT = "runtime-error:launch:RuntimeError: CUDA error: an illegal memory access was encountered"
TOOLKIT_PTXAS = Path("/usr/local/cuda/bin/ptxas")


def _builds() -> tuple[Ptxas, Ptxas]:
    found = toolchain(sys.executable, 90)
    if found.bundled is None or found.second is None:
        pytest.skip(f"needs a second ptxas: {found.note}")
    return found.bundled, found.second


def _ptx(tmp_path: Path) -> Path:
    """The PTX of a real compile for sm_90 with this machine's Triton."""
    script = (
        "import triton, triton.language as tl, sys\n"
        "from triton.backends.compiler import GPUTarget\n"
        "from triton.compiler import ASTSource\n"
        "@triton.jit\n"
        "def scale(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)\n"
        "src = ASTSource(scale, {'x_ptr': '*fp32', 'n': 'i32', 'BLOCK': 'constexpr'},"
        " {'BLOCK': 64})\n"
        "k = triton.compile(src, target=GPUTarget('cuda', 90, 32))\n"
        "open(sys.argv[1], 'w').write(k.asm['ptx'])\n"
    )
    ptx = tmp_path / "scale.ptx"
    program = tmp_path / "compile_scale.py"  # @triton.jit reads its source from a file
    program.write_text(script)
    done = subprocess.run(
        [sys.executable, str(program), str(ptx)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return ptx


def test_the_bundled_ptxas_and_a_second_build_are_found():
    """For sm_90, triton 3.9.0 uses its ptxas-blackwell; the toolkit's ptxas is another
    version; the release reads DISABLE_PTXAS_OPT; the plan relaunches all three."""
    bundled, second = _builds()
    assert "triton" in bundled.path and bundled.path.endswith(("ptxas", "ptxas-blackwell"))
    assert second.version != bundled.version and second.path != bundled.path
    plan = variants(toolchain(sys.executable, 90))
    assert [v.name for v in plan] == ["bundled", "second", "bundled-O0"]
    assert plan[1].env == {
        "TRITON_PTXAS_PATH": second.path,
        "TRITON_PTXAS_BLACKWELL_PATH": second.path,
    }
    assert plan[2].env == {"DISABLE_PTXAS_OPT": "1"} and plan[2].ptxas == bundled


def test_without_a_second_build_it_says_so(tmp_path):
    """Only builds of the bundled version are around (the toolkit's own ptxas as the
    bundled one, an empty PATH): no second build, and the note says where it looked."""
    if not TOOLKIT_PTXAS.is_file():
        pytest.skip("no CUDA toolkit ptxas here")
    bundled = Ptxas.at(TOOLKIT_PTXAS)
    assert bundled is not None
    environ = {"PATH": str(tmp_path)}
    assert second_build(bundled, environ) is None
    note = no_second_note(bundled, environ)
    said = f"no second ptxas: none of another version than the bundled {bundled.version}"
    assert note.startswith(said)
    assert "/usr/local/cuda/bin/ptxas" in note


@pytest.mark.venv
def test_a_second_ptxas_the_release_refuses_is_never_picked():
    """Triton reads its PTX ISA from the ptxas it runs (``ptx_get_version``) and releases
    before 3.5.0 know no CUDA 13: a relaunch with the toolkit's 13.0 failed at llir
    (``Triton only support CUDA 10.0 or higher``) and every verdict was undecided. Under
    3.3.1 and 3.4.0 no second build is picked and the note says why; 3.5.0 takes it."""
    toolkit = Ptxas.at(TOOLKIT_PTXAS) if TOOLKIT_PTXAS.is_file() else None
    if toolkit is None or int(toolkit.version.split(".")[0]) < 13:
        pytest.skip("needs the CUDA 13 toolkit's ptxas (3.4.0 takes a CUDA 12 one)")
    environ = {**os.environ, "PATH": os.defpath, "CUDA_HOME": "", "CUDA_PATH": ""}
    refusal = "RuntimeError: Triton only support CUDA 10.0 or higher, but got CUDA version"
    for release in ("3.3.1", "3.4.0"):  # 3.3's get_ptxas gives (path, version)
        old = toolchain(venv_python(release), 90, environ)
        assert old.bundled is not None and old.second is None, old
        assert f"this Triton refuses CUDA {toolkit.cuda}: {refusal}: {toolkit.cuda}" in old.note
    assert toolchain(venv_python("3.5.0"), 90, environ).second == toolkit


def test_one_ptx_file_assembles_with_both_builds_and_at_O0(tmp_path):
    bundled, second = _builds()
    ptx = _ptx(tmp_path)
    done = [
        assemble(ptx, bundled, "sm_90a", tmp_path / "out"),
        assemble(ptx, second, "sm_90a", tmp_path / "out"),
        assemble(ptx, bundled, "sm_90a", tmp_path / "out", opt_level="0"),
    ]
    assert all(d.ok for d in done), [d.log for d in done]
    assert len({d.cubin for d in done}) == 3
    # Each build was given the PTX with the .version line Triton writes for it.
    given = sorted((tmp_path / "out").glob("*.ptx"))
    lines = {ln for p in given for ln in p.read_text().splitlines()}
    assert {ln for ln in lines if ln.startswith(".version")} == {
        f".version {ptx_isa(bundled)}",
        f".version {ptx_isa(second)}",
    }
    assert all(same_ptx(ptx.read_text(), p.read_text()) for p in given)
    assert all(Path(d.cubin).stat().st_size > 0 for d in done)
    # The SASS of each, read back with cuobjdump: -O0 is another program; one build's
    # cubin is its own SASS.
    cuobjdump = disassembler(bundled)
    assert cuobjdump is not None
    listings = [sass(Path(d.cubin), cuobjdump) for d in done]
    assert all(listing for listing in listings)
    assert sass_differences(listings[0], listings[0]) == 0
    assert sass_differences(listings[0], listings[2]) > 0
    assert sass_differences(["A", "B", "C"], ["A", "X", "C", "D"]) == 2
    broken = tmp_path / "broken.ptx"
    broken.write_text(ptx.read_text().replace("ret;", "ret_nothing;"))
    refused = assemble(broken, second, "sm_90a", tmp_path / "out")
    assert not refused.ok and refused.cubin == "" and "error" in refused.log.lower()


def test_ptx_is_the_same_program_but_for_its_version_line(tmp_path):
    text = _ptx(tmp_path).read_text()
    assert ".version" in text
    other = text.replace(".version", ".version 9.0\n// was", 1)
    assert not same_ptx(text, other)
    lines = [ln for ln in text.splitlines() if not ln.strip().startswith(".version")]
    assert same_ptx(text, "\n".join([".version 9.0", *lines]))
    assert not same_ptx(text, text.replace("ret;", "exit;"))


def _run(variant: str, outcome: str, signature: str = "", same: bool | None = True) -> Run:
    return Run(
        variant=variant,
        ptxas=f"/{variant}/ptxas",
        version={"second": "13.0.88"}.get(variant, "12.8.93"),
        opt_level="0" if variant == "bundled-O0" else "default",
        outcome=outcome,
        signature=signature,
        same_failure=signature == FAULT,
        same_ptx=None if variant == "bundled" else same,
        sass_differs=None,
        ptx="",
        cubin="",
    )


BUNDLED_FAILS = _run("bundled", "runtime-error", FAULT)


@pytest.mark.parametrize(
    ("others", "verdict", "said"),
    [
        ([_run("second", "passed")], AssemblerBlame.ASSEMBLER, "ptxas 13.0.88 passes"),
        (
            [_run("second", "runtime-error", FAULT), _run("bundled-O0", "passed")],
            AssemblerBlame.ASSEMBLER,
            "at -O0 only: a race in the code Triton generated can also hide at -O0",
        ),
        (
            [_run("second", "runtime-error", FAULT), _run("bundled-O0", "runtime-error", FAULT)],
            AssemblerBlame.NOT_ASSEMBLER,
            "every build fails the same way: ptxas 12.8.93, ptxas 13.0.88, ptxas 12.8.93 at -O0",
        ),
        (
            [_run("second", "passed", same=False)],
            AssemblerBlame.UNDECIDED,
            "the PTX of second differs beyond its .version line",
        ),
        (
            [_run("second", "wrong-result", "wrong-result:launch:reference: nan")],
            AssemblerBlame.UNDECIDED,
            "the other builds fail otherwise",
        ),
        ([], AssemblerBlame.UNDECIDED, "no second ptxas build and no -O0 knob"),
    ],
)
def test_the_verdict_follows_the_outcomes(others, verdict, said):
    found, reason = decide([BUNDLED_FAILS, *others])
    assert found is verdict and said in reason, reason


def test_a_failure_that_does_not_show_again_decides_nothing():
    found, reason = decide([_run("bundled", "passed"), _run("second", "passed")])
    assert found is AssemblerBlame.UNDECIDED
    assert reason == (
        "relaunched with the bundled ptxas 12.8.93 it gave passed, not the case's failure"
    )


def _failing(verdict: AssemblerBlame) -> CaseResult:
    runs = (BUNDLED_FAILS, _run("second", "passed"))
    evidence = Evidence(True, "12.8.93", "13.0.88", runs, verdict, "why")
    return CaseResult(
        case_id="k[sm_90]",
        repro="k",
        target="sm_90",
        config={},
        outcome=Outcome.RUNTIME_ERROR,
        signature=Signature(FAULT),
        message="launch: RuntimeError: CUDA error: an illegal memory access was encountered",
        site=FailureSite(phase="launch"),
        notes=RunNotes(ptxas=evidence.to_json()),
        gpu=True,
    )


def test_triage_names_the_assembler_only_when_the_differential_did():
    found = triage_of(_failing(AssemblerBlame.ASSEMBLER), family="triton-pipeliner")
    assert found is not None and found.label == TriageKind.PTXAS_BUG and found.is_bug
    assert "only the assembler changes" in found.explanation and "why" in found.explanation
    for verdict in (AssemblerBlame.NOT_ASSEMBLER, AssemblerBlame.UNDECIDED):
        other = triage_of(_failing(verdict), family="triton-pipeliner")
        assert other is not None and other.label == TriageKind.COMPILER_BUG


def test_the_engine_relaunches_a_failing_launch_with_each_build(tmp_path):
    """Real relaunches of the planted case: with ``SHOWS="always"`` every build fails the
    same way (not the assembler's); with ``SHOWS="bundled"`` the second build and -O0 got
    the same PTX (but its .version line) and did not fail that way."""
    bundled, second = _builds()
    (found,) = select([str(PLANTED)])
    (always,) = [replace(s, gpu=True) for s in expand_cases([found], ["sm_90"], ["always"])]
    result = run_case(always, tmp_path / "always", Execution(warm=False, sanitize=False))
    assert result.signature is not None and result.signature.text == FAULT
    evidence = result.notes.ptxas
    assert evidence is not None, result.message
    assert evidence["verdict"] == AssemblerBlame.NOT_ASSEMBLER.value, evidence["reason"]
    assert (evidence["bundled"], evidence["second"]) == (bundled.version, second.version)
    runs = evidence["runs"]
    assert [r["variant"] for r in runs] == ["bundled", "second", "bundled-O0"]
    assert [r["same_ptx"] for r in runs] == [None, True, True]
    assert all(Path(r["ptx"]).is_file() and Path(r["cubin"]).is_file() for r in runs)
    # Each relaunch's SASS against the bundled one's: -O0 is another program.
    assert runs[0]["sass_differs"] is None and runs[2]["sass_differs"] > 0
    assert [r["version"] for r in runs] == [bundled.version, second.version, bundled.version]
    assert triage_of(result, family="planted").label == TriageKind.COMPILER_BUG

    (trigger,) = [replace(s, gpu=True) for s in expand_cases([found], ["sm_90"], ["trigger"])]
    result = run_case(trigger, tmp_path / "trigger", Execution(warm=False, sanitize=False))
    runs = result.notes.ptxas["runs"]
    assert runs[0]["same_failure"] and not runs[1]["same_failure"] and not runs[2]["same_failure"]
    assert [r["same_ptx"] for r in runs] == [None, True, True]


def test_without_the_differential_nothing_is_relaunched(tmp_path):
    (found,) = select([str(PLANTED)])
    (always,) = [replace(s, gpu=True) for s in expand_cases([found], ["sm_90"], ["always"])]
    execution = Execution(warm=False, sanitize=False, ptxas_differential=False)
    result = run_case(always, tmp_path / "case", execution)
    assert result.outcome is Outcome.RUNTIME_ERROR and result.notes.ptxas is None
    assert not list((tmp_path / "case").glob("ptxas-*"))


FINDING_6691 = "upstream-6691-pipelined-dot-and-sum-f4683ab7d156"
WRONG_6691 = "wrong-result:launch:differential:num_stages: mismatch"


def _reported(tmp_path: Path, evidence: Evidence, *options: str) -> Path:
    """The report folder of #6691's finding from the H100, given ``evidence`` as its
    differential record."""
    record = json.loads(
        (ROOT / "docs" / "results" / "2026-11-25-runtime-gpu" / f"{FINDING_6691}.json").read_text()
    )
    record["ptxas"] = evidence.to_json()
    (tmp_path / "findings").mkdir()
    (tmp_path / "findings" / f"{FINDING_6691}.json").write_text(json.dumps(record))
    done = repro_cli("report", FINDING_6691, "-o", str(tmp_path), "--no-rerun", *options)
    assert done.code == 0, done.stdout + done.stderr
    return tmp_path / FINDING_6691


def test_an_assembler_bug_goes_to_nvidia_with_the_ptx_and_both_builds(tmp_path):
    """#6691's finding, given a differential that found the assembler (its runs' PTX a real
    compile's): the report is an NVIDIA report with the PTX attached, each build's version
    and result, and the comment on the known issue says so too (both bodies of one report:
    a report each cost 12.4 CPU s)."""
    bundled, second = _builds()
    ptx = _ptx(tmp_path)
    runs = (
        replace(_run("bundled", "wrong-result", WRONG_6691), ptx=str(ptx), version=bundled.version),
        replace(_run("second", "passed"), version=second.version),
    )
    reason = f"the same PTX fails with ptxas {bundled.version}; ptxas {second.version} passes"
    evidence = Evidence(
        True, bundled.version, second.version, runs, AssemblerBlame.ASSEMBLER, reason
    )
    folder = _reported(tmp_path, evidence)
    report = json.loads((folder / "report.json").read_text())
    assert report["label"] == TriageKind.PTXAS_BUG and report["kind"] == "nvidia", report
    assert (folder / "kernel.ptx").read_text() == ptx.read_text()
    for body in ("nvidia.md", "comment.md"):
        assert reason in (folder / body).read_text(), body
    text = (folder / "nvidia.md").read_text()
    assert "## ptxas differential" in text and "`kernel.ptx`" in text
    assert f"| {bundled.version} (bundled) | default | `{WRONG_6691}` | reference | — |" in text
    assert f"| {second.version} (second) | default | `passed` | yes | — |" in text
    assert "TRITON_PTXAS_PATH=/path/to/ptxas" in text
    assert not (folder / "issue.md").exists()


def test_a_bug_every_build_shows_stays_triton_s_and_its_issue_says_so(tmp_path):
    """Every build failing the same way: a compiler bug, an issue for Triton (no baseline
    entry) that lists each build's result; no NVIDIA report."""
    runs = (
        _run("bundled", "wrong-result", WRONG_6691),
        replace(_run("second", "wrong-result", WRONG_6691), same_failure=True),
    )
    reason = "every build fails the same way: ptxas 12.8.93, ptxas 13.0.88"
    evidence = Evidence(True, "12.8.93", "13.0.88", runs, AssemblerBlame.NOT_ASSEMBLER, reason)
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    folder = _reported(tmp_path, evidence, "--baseline", str(empty))
    text = (folder / "issue.md").read_text()
    said = "**ptxas differential** (the launch repeated with the same PTX assembled otherwise)"
    assert f"{said}: {reason}." in text
    assert f"- ptxas 13.0.88: `{WRONG_6691}`" in text
    assert not (folder / "nvidia.md").exists() and not (folder / "kernel.ptx").exists()


@pytest.mark.gpu
@pytest.mark.long
def test_on_the_gpu_the_planted_assembler_fault_is_a_ptxas_bug(tmp_path):
    """With a GPU (and torch) a launch that does not fault passes: the planted case is the
    assembler's bug, and triage says so."""
    _builds()
    (found,) = select([str(PLANTED)])
    (trigger,) = [replace(s, gpu=True) for s in expand_cases([found], ["sm_90"], ["trigger"])]
    execution = Execution(warm=False, sanitize=False, gpus=the_gpus())
    result = run_case(trigger, tmp_path / "trigger", execution)
    evidence = result.notes.ptxas
    assert evidence["verdict"] == AssemblerBlame.ASSEMBLER.value, evidence
    assert [r["outcome"] for r in evidence["runs"]] == ["runtime-error", "passed", "passed"]
    assert triage_of(result, family="planted").label == TriageKind.PTXAS_BUG
