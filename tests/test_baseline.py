"""The baseline's verdicts: known, regression, fixed, and what an expectation covers."""

from __future__ import annotations

from suite.engine.baseline import Baseline, Expectation, exit_status
from suite.engine.outcome import CaseResult, Outcome, Signature

KNOWN = Expectation(
    id="k",
    repro="r",
    signature="compiler-error:ttgir:*",
    kind="compiler-bug",
    targets=("sm_100",),
    triton=">=3.4.0",
    where={"num_stages": ">=2", "num_warps": [4, 8]},
)


def _result(outcome=Outcome.PASSED, signature=None, gpu=False, **config):
    config = {"num_stages": 2, "num_warps": 4, **config}
    sig = Signature(signature) if signature else None
    return CaseResult("r[x]", "r", "sm_100", config, outcome, sig, gpu=gpu)


def test_verdicts():
    baseline = Baseline([KNOWN])
    failing = _result(Outcome.COMPILER_ERROR, "compiler-error:ttgir:SomePass")
    assert baseline.judge(failing, "3.5.0").verdict == "known"
    other = _result(Outcome.CRASH, "crash:SIGSEGV:compile")
    assert baseline.judge(other, "3.5.0").verdict == "regression"
    assert baseline.judge(_result(), "3.9.0").verdict == "fixed"
    assert baseline.judge(_result(num_warps=16), "3.9.0").verdict == "ok"
    assert baseline.judge(_result(), "3.3.1").verdict == "ok"
    assert exit_status([failing, other]) == 1
    assert exit_status([failing, baseline.judge(_result(), "3.9.0")]) == 3


def test_gpu_only_expectation_ignores_compile_only_cases():
    gpu_only = Expectation(id="g", repro="r", signature="runtime-error:*", kind="x", gpu=True)
    baseline = Baseline([gpu_only])
    assert baseline.judge(_result(gpu=False), "3.9.0").verdict == "ok"
    assert baseline.judge(_result(gpu=True), "3.9.0").verdict == "fixed"
    launched = _result(Outcome.RUNTIME_ERROR, "runtime-error:launch:CudaRunError: x", gpu=True)
    assert baseline.judge(launched, "3.9.0").verdict == "known"
