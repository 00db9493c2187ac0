"""Signatures: real aborts and messages of real releases, one signature module, the same
failure read back from a ``repro.py``'s output, the harness-error and compiler-diagnostic
outcomes.

The release cases compile ``tests/data/dot_mma.py`` (a reproducer file given by path)
under the cached venvs of old releases; what each release does is in that file's docstring.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT
from conftest import repro_cli as repro

from suite.engine.same_bug import completed_stage, is_same_bug, named_pass
from suite.engine.signature import (
    classify_diagnostic,
    classify_ending,
    family_of,
    meaningful_message,
    normalize,
)

DOT_MMA = ROOT / "tests" / "data" / "dot_mma.py"


def _python(version: str) -> str:
    from suite.toolchain.venvs import for_version

    return for_version(version).python


def _results(output: Path) -> dict[str, dict]:
    found = {}
    for path in output.glob("runs/*/results.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            found[record["case_id"]] = record
    return found


# Real stderr lines of the releases (tests/data/dot_mma.py, seen on 3.0.0/3.1.0).
ABORT_ASSERT = (
    "python: /project/lib/Dialect/TritonGPU/Transforms/AccelerateMatmul.cpp:30: int "
    "mlir::triton::gpu::{anonymous}::getMMAVersionSafe(int, mlir::triton::DotOp): Assertion "
    '`false && "computeCapability not supported"\' failed.\n'
)
ABORT_UNREACHABLE = (
    "unsupported shared memory layout for MMAv3\nUNREACHABLE executed at /project/python/build/"
    "cmake.linux-x86_64-cpython-3.11/include/triton/Dialect/TritonGPU/IR/"
    "TritonGPUAttrDefs.cpp.inc:385!\n"
)


def test_the_message_key_keeps_what_names_the_bug_and_drops_what_varies():
    assert meaningful_message(ABORT_ASSERT) == (
        'Assertion `false && "computeCapability not supported"\' failed'
    )
    assert meaningful_message(ABORT_UNREACHABLE) == (
        "unsupported shared memory layout for MMAv3 (UNREACHABLE)"
    )
    isel = "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.tcgen05.wait.st"
    assert normalize(meaningful_message(isel) or "") == (
        "LLVM ERROR: Cannot select: intrinsic llvm.nvvm.tcgen05.wait.st"
    )
    line = "/x/k.py:12:5: error: %17 = tt.dot %a, %b : tensor<128x64xf16, #blocked1> at 0x7f3a"
    expected = "%V = tt.dot %V, %V : tensor<?xf16, #A> at <addr>"
    assert normalize(meaningful_message(line) or "") == expected
    generic = "k.py:3:0: error: Failures have been detected while processing an MLIR pass pipeline"
    assert meaningful_message(generic) is None


def test_two_aborts_of_one_stage_are_two_signatures():
    one = classify_ending(
        None,
        stderr=ABORT_ASSERT,
        phase="compile",
        returncode=-6,
        signal_name="SIGABRT",
        timed_out=False,
        done=False,
    )
    two = classify_ending(
        None,
        stderr=ABORT_UNREACHABLE,
        phase="compile",
        returncode=-6,
        signal_name="SIGABRT",
        timed_out=False,
        done=False,
    )
    assert one and two and one.signature != two.signature
    assert (
        family_of(one.signature or "") == family_of(two.signature or "") == "crash:SIGABRT:compile"
    )
    assert not is_same_bug(one.signature or "", two.signature or "")


def test_same_pass_other_message_is_the_same_bug_but_other_frontend_errors_are_not():
    assert is_same_bug(
        "compiler-error:ttgir:TritonGPUAssignLatencies: a",
        "compiler-error:ttgir:TritonGPUAssignLatencies: something else entirely",
    )
    assert is_same_bug(
        "compiler-error:ttir: Unsupported dtype fp64",
        "compiler-error:ttir: Unsupported lhs dtype fp64",
    )
    assert not is_same_bug(
        "compiler-error:ttir: Unsupported dtype fp64",
        "compiler-error:ttir: Input shapes should have M >= N, N >= N and K >= N",
    )


def test_passes_named_in_capitals_count_as_passes():
    """NVGPUWarpSpecialization failing with another message on another release (#9728:
    3.6.0 asserts, 3.7.0 reports an LLVM ERROR) is the same bug; a signal or an exit status
    is never taken for a pass."""
    assert is_same_bug(
        "compiler-error:ttgir:NVGPUWarpSpecialization: Assertion `false' failed",
        "compiler-error:ttgir:NVGPUWarpSpecialization: LLVM ERROR: unsupported load type for "
        "producer commit",
    )
    assert named_pass("compiler-error:ttgir:NVWSInsertAref: x") == "NVWSInsertAref"
    assert named_pass("crash:SIGABRT:compile: x") is None
    assert named_pass("crash:exit-1:compile: x") is None


def test_a_compile_that_reached_a_later_stage_completed_the_bugs_stage():
    ptx_crash = "crash:SIGABRT:compile:ptx: LLVM ERROR: Cannot select: intrinsic x"
    assert completed_stage(ptx_crash, "cubin")
    assert not completed_stage(ptx_crash, "ptx")
    assert not completed_stage("crash:SIGABRT:compile: no stage named", "cubin")
    assert completed_stage("compiler-error:ttgir:TritonGPUPipeline: x", "cubin")
    assert not completed_stage("ptxas-error:C7602", "cubin")


CAPABILITY = 'Assertion `false && "computeCapability not supported"\' failed'


def test_a_crash_and_a_compiler_error_are_one_bug_only_on_one_informative_message():
    abort = f"crash:SIGABRT:compile: {CAPABILITY}"
    recovered = f"compiler-error:ttgir:TritonGPUAccelerateMatmul: {CAPABILITY}"
    assert is_same_bug(abort, recovered) and is_same_bug(recovered, abort)
    # Another message, a message that names nothing, a contradicting stage or pass, a crash
    # outside the compile: different bugs.
    assert not is_same_bug(abort, "compiler-error:ttgir:TritonGPUAccelerateMatmul: other text")
    bare = "Assertion `false' failed"
    assert not is_same_bug(f"crash:SIGABRT:compile: {bare}", f"compiler-error:ttgir:P: {bare}")
    assert not is_same_bug(f"crash:SIGABRT:compile:llir: {CAPABILITY}", recovered)
    assert not is_same_bug(
        f"crash:SIGABRT:compile:ttgir:TritonGPUPipeline: {CAPABILITY}", recovered
    )
    assert not is_same_bug(f"crash:SIGABRT:launch: {CAPABILITY}", recovered)
    # Two compiler errors of different passes stay apart even with one message.
    assert not is_same_bug(recovered, f"compiler-error:ttgir:TritonGPUPipeline: {CAPABILITY}")


@pytest.mark.venv
def test_an_assertion_aborts_on_3_2_0_and_is_a_pass_error_on_3_3_0(tmp_path):
    """#6087's port on sm_120: 3.0-3.2 run passes without MLIR's crash recovery, so the
    assertion in AccelerateMatmul's getMMAVersionSafe aborts the process; 3.3.0 recovers
    and reports the same printed assertion as the pass's failure. One bug."""
    seen, stderr = {}, {}
    for version in ("3.2.0", "3.3.0"):
        out = tmp_path / version
        done = repro(
            "run",
            "upstream-6087-sm120-mma-version",
            "--python",
            _python(version),
            "-o",
            str(out),
        )
        assert done.code == 0, done.stderr  # the shipped baseline knows both
        ((_case, record),) = _results(out).items()
        seen[version] = record["signature"]
        run = next(out.glob("runs/*"))
        stderr[version] = next(run.glob("cases/*/stderr.txt")).read_text()
    assert seen == {
        "3.2.0": f"crash:SIGABRT:compile:ttgir: {CAPABILITY}",
        "3.3.0": f"compiler-error:ttgir:TritonGPUAccelerateMatmul: {CAPABILITY}",
    }
    for text in stderr.values():  # the same assertion in the same function, printed alike
        assert "AccelerateMatmul.cpp" in text and "getMMAVersionSafe" in text
    assert "Pipeline failed while executing `TritonGPUAccelerateMatmul`" in stderr["3.3.0"]
    assert is_same_bug(seen["3.2.0"], seen["3.3.0"])


def test_a_compile_that_succeeds_but_prints_an_mlir_error_is_a_diagnostic():
    text = "/x/k.py:20:8: error: operation scheduled before its operands\n"
    verdict = classify_diagnostic(text)
    assert verdict is not None
    assert verdict.signature == "compiler-diagnostic: operation scheduled before its operands"
    assert classify_diagnostic("warning: something\n") is None


@pytest.mark.slow
@pytest.mark.venv
def test_two_real_aborts_on_3_1_0_differ_and_each_repro_py_shows_its_own(tmp_path):
    """3.1.0 aborts twice on tl.dot, in two unrelated ways; each signature carries its own
    message, and the suite reads the same failure back from the repro.py of each (without
    the stage: a fresh process's abort loses Python's frames, ``reported_apart``)."""
    out = tmp_path / "out"
    proc = repro("run", str(DOT_MMA), "-c", "trigger", "--python", _python("3.1.0"), "-o", str(out))
    assert proc.code == 1, proc.stderr
    results = _results(out)
    aborts = {case: r["signature"] for case, r in results.items() if r["outcome"] == "crash"}
    assert aborts == {
        "dot-mma-select[sm_100-fp8e4nv-64x64x16]": "crash:SIGABRT:compile:ttgir: Assertion "
        '`false && "computeCapability not supported"\' failed',
        "dot-mma-select[sm_90-fp8e4nv-64x64x16]": "crash:SIGABRT:compile:ttgir: unsupported shared "
        "memory layout for MMAv3 (UNREACHABLE)",
    }
    failed = [r for r in results.values() if r["outcome"] != "skipped"]  # fp64: unsupported
    assert failed and all(r["triage"] == "compiler-bug" for r in failed)
    run = next(out.glob("runs/*"))
    for case, signature in aborts.items():
        written = repro(
            "report", f"{run}:{case}", "--verify", "--id", "r", "-o", str(tmp_path / case[-12:])
        )
        report = json.loads((tmp_path / case[-12:] / "r" / "report.json").read_text())
        seen = report["verification"]["signature"]
        assert seen == signature.replace(":ttgir:", ":", 1), written.stdout
        assert is_same_bug(seen, signature) and report["verification"]["ok"], report


@pytest.mark.venv
def test_triton_refusing_fp64_dot_is_unsupported_not_a_compiler_bug(tmp_path):
    """fp64 tl.dot: Triton's frontend says 'Unsupported dtype fp64' on 3.1.0 and
    'Unsupported lhs dtype fp64' on 3.3.1: the release cannot express the kernel, so the
    case is skipped as unsupported with Triton's words, never a compiler bug (exit 0)."""
    seen = {}
    for version in ("3.1.0", "3.3.1"):
        out = tmp_path / version
        done = repro(
            "run",
            str(DOT_MMA),
            "-c",
            "trigger",
            "-t",
            "sm_90",
            "--python",
            _python(version),
            "-o",
            str(out),
        )
        (record,) = [r for c, r in _results(out).items() if "fp64" in c]
        seen[version] = (record["outcome"], record["signature"], record["message"])
        assert record["triage"] != "compiler-bug", done.stdout
    assert seen == {
        "3.1.0": (
            "skipped",
            None,
            "unsupported: this Triton does not implement it: Unsupported dtype fp64",
        ),
        "3.3.1": (
            "skipped",
            None,
            "unsupported: this Triton does not implement it: Unsupported lhs dtype fp64",
        ),
    }


HARNESS = """
import triton
import triton.language as tl

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

REPRO = Reproducer(
    id="bad-glue",
    title="A reproducer whose glue passes no signature dict",
    family="test",
    params=(Choice("BLOCK", (16,)),),
    configs={"default": [{"BLOCK": 16}]},
    targets=("sm_90",),
)


@triton.jit
def copy(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


@REPRO.compile
def compile_case(case):
    return compile_kernel(copy, case, None, {"BLOCK": case["BLOCK"]})
"""


def test_a_harness_error_is_never_a_regression_nor_a_report(tmp_path):
    path = tmp_path / "bad_glue.py"
    path.write_text(textwrap.dedent(HARNESS))
    out = tmp_path / "out"
    proc = repro("run", str(path), "-o", str(out))
    assert proc.code == 4, proc.stdout + proc.stderr
    (record,) = _results(out).values()
    assert record["outcome"] == "harness-error" and record["verdict"] == "harness-error"
    # A TypeError or an AttributeError, raised before triton.compile.
    assert record["signature"].startswith("harness-error:compile: ")
    assert record["triage"] == ""
    assert "harness-error" in proc.stdout
    junit = next(out.glob("runs/*/junit.xml")).read_text()
    assert '<error type="harness-error"' in junit
    run = next(out.glob("runs/*"))
    refused = repro("report", f"{run}:{record['case_id']}", "-o", str(tmp_path / "rep"))
    assert refused.code == 2 and "harness error" in refused.stderr


SHFL = (
    "crash:SIGABRT:compile:ptx: LLVM ERROR: Cannot select: intrinsic llvm.nvvm.shfl.sync.bfly.i32"
)
CAPABILITY_ABORT = f"crash:SIGABRT:compile:ttgir: {CAPABILITY}"


@pytest.mark.venv
def test_a_boundary_row_says_same_failure_only_on_the_full_signature(tmp_path):
    """#6087's port on 3.0.0 (sm_120): the dot aborts on the MMA assertion, the loop without
    the dot aborts in LLVM instruction selection (3.0's LLVM has no sm_120 shuffle). Both
    are `crash:SIGABRT:compile`; the boundary row between them names the other signature,
    never "same failure", in the explore table and in the stored finding."""
    from suite.failures.findings import DirectoryFindingsStore

    out = tmp_path / "out"
    done = repro(
        "explore",
        "upstream-6087-sm120-mma-version",
        "--python",
        _python("3.0.0"),
        "--max-examples",
        "1",
        "--seed",
        "0",
        "--profile",
        "ci",
        "-o",
        str(out),
    )
    assert done.code == 0, done.stderr
    findings = {f.signature: f for f in DirectoryFindingsStore(out / "findings").all()}
    assert set(findings) == {CAPABILITY_ABORT, SHFL}
    assert not is_same_bug(*findings)
    mma = findings[CAPABILITY_ABORT]
    (step,) = [s for s in mma.boundary if s.param == "USE_DOT"]
    assert (step.outcome, step.signature, step.same_signature) == ("crash", SHFL, False)
    assert all(s.same_signature for s in mma.boundary if s.param != "USE_DOT")
    (row,) = [ln for ln in done.stdout.splitlines() if ln.startswith("USE_DOT\tTrue -> False")]
    assert row.endswith(SHFL) and "same failure" not in row
