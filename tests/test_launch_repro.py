"""The repro.py of a runtime failure: it launches and judges with the reproducer's oracle,
imports only triton and torch, stays short, and exits 1 where the bug shows and 0 at the
nearest passing config. Run here under Triton's interpreter on the CPU, by itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from suite.report.launch_repro import launch_script
from suite.report.standalone import (
    REPRO_LINES,
    foreign_imports,
    glance_lines,
)
from suite.standalone_kit import KIT_HEAD, LAUNCH_KIT
from suite.templating import template_environment
from tests.conftest import run_alone

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
KERNELS = Path(__file__).parent / "data" / "oracle_kernels.py"


def _script(tmp_path: Path, source: Path, repro_id: str, config: dict, name: str) -> Path:
    text = launch_script(
        template_environment(), source.read_text(), repro_id, config, "?", "t", "sm_90", "3.6.0"
    )
    assert text is not None
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("repro_id", "wrong", "right", "signature"),
    [
        (
            "oracle-differential",
            {"BLOCK": 16, "UNROLL": 2, "N": 1000},
            {"BLOCK": 16, "UNROLL": 1, "N": 1000},
            "wrong-result:launch:differential:UNROLL: nan",
        ),
        (
            "oracle-fault",
            {"START": 1},
            {"START": 0},
            "runtime-error:launch:InterpreterError: AssertionError('block offset start must be "
            "16-byte aligned')",
        ),
        (
            "oracle-reference-softmax",
            {"HALF_SUM": True, "SCALE": 4},
            {"HALF_SUM": False, "SCALE": 4},
            "wrong-result:launch:reference: mismatch",
        ),
    ],
)
def test_repro_py_exits_1_on_the_bug_and_0_at_the_nearest_pass(
    tmp_path, repro_id, wrong, right, signature
):
    failing = _script(tmp_path, KERNELS, repro_id, wrong, "repro.py")
    text = failing.read_text()
    assert foreign_imports(text) == []
    assert "suite" not in text.split('"""', 2)[2].partition(KIT_HEAD)[0]
    assert LAUNCH_KIT in text  # the engine's tolerances, verbatim
    assert glance_lines(text) <= REPRO_LINES["launch"]
    done = run_alone(failing)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"signature: {signature}" in done.stdout
    passing = run_alone(_script(tmp_path, KERNELS, repro_id, right, "nearest.py"))
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "the bug does not show" in passing.stdout


@pytest.mark.parametrize(
    "port",
    ["descriptor_1d_pipelined_misaligned.py", "pipelined_dot_and_sum.py"],
)
def test_the_runtime_ports_repro_py_is_short_and_imports_triton_and_torch_only(tmp_path, port):
    source = ROOT / "repros" / "upstream" / port
    config = {"D": 128, "BLOCK_N": 64, "num_stages": 2, "num_warps": 4, "dtype": "fp16"}
    config |= {"ORDER": "sum-first", "N": 17, "XBLOCK": 8, "STAGES": 3, "OP": "copy"}
    repro_id = next(
        line.split('"')[1] for line in source.read_text().splitlines() if 'id="upstream-' in line
    )
    text = _script(tmp_path, source, repro_id, config, "repro.py").read_text()
    assert foreign_imports(text) == []
    assert glance_lines(text) <= REPRO_LINES["launch"]
    compile(text, "repro.py", "exec")
