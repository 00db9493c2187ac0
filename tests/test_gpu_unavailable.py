"""A launch that cannot get a CUDA context is the machine's failure, never the compiler's.

On an H100, after hung launches were killed, new processes were refused a context ("No
CUDA GPUs are available") for the rest of the session, and a reduction went on judging
every candidate "not interesting" while `repro run` called the refusal a regression
(docs/gpu-results.md, 2026-11-25). Here a real child launches on a machine whose torch has
no CUDA: the same refusal, in torch's words for this machine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from suite.engine import GPU_UNAVAILABLE_SIGNATURE, Baseline, Outcome, discover, exit_status
from suite.engine.expand import CaseSpec
from suite.engine.runner import Execution, run_case
from suite.errors import EXIT_HARNESS, HarnessError
from suite.reduce.interesting import ReductionGoal, SignatureTest
from tests.conftest import gpu_visible

pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(gpu_visible(), reason="a GPU is visible: the launch would run")

ROOT = Path(__file__).resolve().parents[1]
PORT = ROOT / "repros" / "upstream" / "descriptor_1d_pipelined_misaligned.py"


def _trigger() -> tuple[discover.Found, dict]:
    found = discover.from_source({"path": str(PORT)}, str(PORT))[0]
    return found, dict(found.repro.configs["trigger"][0])


def test_a_launch_refused_a_context_is_a_harness_error_not_a_regression(tmp_path: Path) -> None:
    found, trigger = _trigger()
    spec = CaseSpec(found, trigger, "sm_90", gpu=True)
    result = run_case(spec, tmp_path / "case", Execution(warm=False, sanitize=False))
    assert result.outcome is Outcome.HARNESS_ERROR, result.message
    assert result.signature is not None and result.signature.text == GPU_UNAVAILABLE_SIGNATURE
    assert "not the compiler" in result.message
    judged = Baseline.load(None).judge(result, "3.9.0")
    assert judged.verdict == "harness-error"
    assert exit_status([judged]) == EXIT_HARNESS


def test_a_reduction_stops_when_its_launches_are_refused_a_context(tmp_path: Path) -> None:
    found, trigger = _trigger()
    expectation = ReductionGoal(
        repro=found.repro.id,
        signature="runtime-error:launch:AcceleratorError: CUDA error: misaligned address",
        target="sm_90",
        config=trigger,
        launch=True,
    )
    (tmp_path / "work").mkdir()
    test = SignatureTest(expectation, tmp_path / "work", None, Execution(warm=False))
    with pytest.raises(HarnessError, match="stopped giving new processes a CUDA context"):
        test(PORT)
