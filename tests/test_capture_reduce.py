"""A runtime failure captured from a program is reduced and reported like any runtime finding.

The captured reproducer's launch is fresh inputs of the recorded layouts (``@REPRO.inputs``)
and one ``kernel[grid](...)`` (``@REPRO.launch``), so ``repro reduce`` launches its
candidates and ``repro report`` gives a repro.py that launches. No GPU here: the program
records its launch through the hook's own ``write_ahead`` (the record's target set to an
sm_90 GPU's by hand, as a GPU machine writes it), and the candidates launch under Triton's
interpreter, where the captured kernel's load 2**40 elements past its input dies by SIGSEGV.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from suite.engine import discover
from suite.engine.runner import Execution
from suite.failures.findings import Finding
from suite.reduce.interesting import ReductionGoal, SignatureTest
from suite.reduce.passes import kernel_measure
from suite.report.launch_repro import launch_script
from suite.templating import template_environment
from tests.conftest import checkout_env, repro_cli, run_alone, write_finding

pytest.importorskip("torch")

PROGRAM = """
import triton
import triton.language as tl


@triton.jit
def _scaled(x, factor):
    return x * factor


@triton.jit
def gather_scale(x_ptr, y_ptr, n, shift, factor, BLOCK: tl.constexpr, BIAS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs + shift, mask=mask)
    y = _scaled(x, factor)
    if BIAS:
        y = y + 1.0
    tl.store(y_ptr + offs, y, mask=mask)


class Tensor:  # what the hook reads of a torch tensor (no torch, no GPU here)
    def __init__(self, shape, dtype="torch.float32"):
        self.shape, self.dtype, self.device = shape, dtype, "cuda:0"

    def stride(self):
        return (1,)

    def data_ptr(self):
        return 0


import repro_capture_launch

x, y = Tensor((1024,)), Tensor((1024,))
launch = {"BLOCK": 256, "BIAS": True, "grid": (4,)}
repro_capture_launch.write_ahead(gather_scale, (x, y, 1024, 1 << 40, 2.0), launch)
raise RuntimeError("CUDA error: an illegal memory access was encountered")
"""
SIGNATURE = "crash:SIGSEGV:launch"


def _captured(tmp_path: Path) -> Path:
    """The reproducer file capture writes for the program's failing launch, on an sm_90."""
    from suite.capture import generate
    from suite.capture.program import ProgramRun

    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent(PROGRAM))
    output = tmp_path / "capture"
    argv = [sys.executable, "-m", "suite.capture", "--output", str(output), "--no-confirm"]
    done = subprocess.run(
        [*argv, "--", sys.executable, str(program)],
        capture_output=True,
        text=True,
        env=checkout_env(),
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 1, done.stderr[-2000:]
    [summary_path] = output.glob("captures/*/capture.json")
    summary = json.loads(summary_path.read_text())
    [failure] = summary["failures"]
    record_path = Path(failure["record"])
    record = json.loads(record_path.read_text())
    record["target"] = {"backend": "cuda", "arch": 90, "warp_size": 32}
    record_path.write_text(json.dumps(record))
    ran = ProgramRun(summary["command"], summary["program"]["pid"], 1)
    [late] = generate.failures(summary_path.parent, ran)
    path = tmp_path / "captured.py"
    # As capture rewrites it once the isolated run confirmed it: judged by itself against the
    # engine's signature (a SIGSEGV under the interpreter), not the program's CUDA error.
    path.write_text(generate.render(late, expected=SIGNATURE))
    return path


def test_a_captured_launch_failure_is_reduced_and_its_repro_launches(tmp_path: Path) -> None:
    captured = _captured(tmp_path)
    text = captured.read_text()
    found = discover.from_source({"path": str(captured)}, str(captured))[0]
    assert found.repro.makes_inputs and found.repro.launches

    # The report's repro.py launches the captured launch (not a compile-only snippet).
    script = launch_script(
        template_environment(),
        text,
        found.repro.id,
        dict(found.repro.configs["captured"][0]),
        SIGNATURE,
        found.repro.title,
        "sm_90",
        "3.9.0",
    )
    assert script is not None
    assert "gather_scale[CAPTURED_GRID](**tensors" in script and "def _fresh(" in script
    assert script.count("def set_allocator(") == 1  # the captured file's copy is the kit's
    # By itself (triton and torch only), it launches and dies as the program's launch did.
    (tmp_path / "repro.py").write_text(script)
    ran = run_alone(tmp_path / "repro.py")
    assert ran.returncode == -signal.SIGSEGV, ran.stdout + ran.stderr[-2000:]
    # The captured file itself, by itself, launches in a child and judges what it printed
    # with the engine's same-bug rule, carried: the bug's evidence is exit 1, never a death.
    ran = run_alone(captured)
    assert ran.returncode == 1 and "REPRODUCED" in ran.stdout, ran.stdout + ran.stderr[-2000:]
    assert f"seen:     {SIGNATURE}" in ran.stdout

    config = found.repro.configs["captured"][0]
    finding = write_finding(
        captured, SIGNATURE, "crash", tmp_path / "work", config, name="captured"
    )
    env = {"TRITON_INTERPRET": "1", "PYTHONPATH": checkout_env()["PYTHONPATH"]}
    done = repro_cli(
        "reduce", str(finding), "-o", str(tmp_path / "work"), "-j", "2",
        "--time-budget", "120", env=env,
    )  # fmt: skip
    assert done.code == 0, done.stderr[-3000:]
    reduced = Path(done.stdout.strip().splitlines()[-1])
    assert kernel_measure(reduced.read_text())[1] < kernel_measure(text)[1] / 2
    # The launch is the captured one, through the seam that fits it to the reduced kernel.
    assert "launch_kernel(gather_scale, CAPTURED_GRID" in reduced.read_text()
    assert "x_ptr + shift" in reduced.read_text()  # what faults is kept

    # The reduced file, launched afresh by itself, still dies the same way.
    record = Finding.from_json(json.loads(finding.read_text()))
    expectation = ReductionGoal(
        repro=record.repro,
        signature=SIGNATURE,
        target="sm_90",
        config=dict(record.minimal_config),
        launch=True,
    )
    (tmp_path / "again").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRITON_INTERPRET", "1")
        verdict = SignatureTest(
            expectation, tmp_path / "again", None, Execution(warm=False, sanitize=False)
        )(reduced)
    assert verdict.interesting, verdict

    # The issue says what a maintainer needs: only a launch on an sm_90 shows it, and its
    # config is the program's own, not the end of a search.
    done = repro_cli("report", "captured", "-o", str(tmp_path / "work"), timeout=600)
    assert done.code == 0, done.stderr[-3000:]
    issue = (tmp_path / "work" / "captured" / "issue.md").read_text()
    assert "launched on an sm_90 GPU it fails" in issue and "Only a launch shows it" in issue
    assert "No GPU is needed" not in issue and "compiled with `triton.compile`" not in issue
    assert "captured by `repro capture`: no search" in issue


# What an H100 showed (docs/gpu-results.md, 2026-11-25 21:23 UTC): the program's kernel
# faulted, and the program's next CUDA call, cuBLAS's handle creation, reported it.
CUBLAS_AFTER_FAULT = (
    "runtime-error:launch:RuntimeError: CUDA error: CUBLAS_STATUS_INTERNAL_ERROR when calling "
    "`cublasCreate(handle)`"
)
ISOLATED_FAULT = "runtime-error:launch:AcceleratorError: CUDA error: misaligned address"


def test_a_fault_reported_by_the_programs_next_cuda_call_is_confirmed_by_the_isolated_launch():
    from suite.capture.generate import SAME, confirmation

    evidence = confirmation(CUBLAS_AFTER_FAULT, ISOLATED_FAULT, deferred=True)
    assert evidence.startswith("consistent:") and ISOLATED_FAULT in evidence
    assert confirmation(CUBLAS_AFTER_FAULT, "crash:SIGSEGV:launch", deferred=True)
    assert confirmation(ISOLATED_FAULT, ISOLATED_FAULT) == SAME
    # Raised by the launch itself, the error is the kernel's own: it must match.
    assert not confirmation(CUBLAS_AFTER_FAULT, ISOLATED_FAULT, deferred=False)
    # Not a CUDA error in the program, or no fault of the launch in isolation: not the same.
    python_error = "runtime-error:launch:ValueError: shapes do not match"
    assert not confirmation(python_error, ISOLATED_FAULT, deferred=True)
    assert not confirmation(CUBLAS_AFTER_FAULT, "wrong-result:launch:reference: nan", True)
    assert not confirmation(CUBLAS_AFTER_FAULT, "compiler-error:ttgir:PassManager", True)
