"""On a GPU: the launch path of every built-in Triton reproducer, checked for correctness.

Skipped without a GPU. With ``REPRO_GPU_OUT`` set, the run folder is written
there so the device tool brings it back.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import repro_cli

pytestmark = [pytest.mark.gpu, pytest.mark.long]


def test_builtins_launch_and_check_on_the_gpu(tmp_path):
    out = Path(os.environ.get("REPRO_GPU_OUT") or tmp_path)
    done = repro_cli(
        "run",
        "tma-gemm-prefetch",
        "tma-gemm",
        "tma-copy",
        "--target",
        "sm_90",
        "--gpu",
        "on",
        # The launch path and the verdicts only: reruns under compute-sanitizer and with other
        # ptxas builds run alone on the GPU and have GPU tests of their own
        # (tests/test_sanitizer.py, tests/test_ptxas_differential.py); the nightly GPU job
        # (.github/workflows/nightly.yml) runs the whole catalogue with both.
        "--no-sanitizer",
        "--no-ptxas-differential",
        "-j",
        "4",
        "-o",
        str(out),
        timeout=1800,
    )
    assert done.code in (0, 3), done.stdout[-4000:] + done.stderr
    (run,) = sorted((out / "runs").iterdir())[-1:]
    results = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    launched = [r for r in results if r["gpu"]]
    assert launched, "no case was launched"
    wrong = [r["case_id"] for r in launched if r["outcome"] == "wrong-result"]
    assert not wrong
    for result in launched:
        assert result["verdict"] in ("ok", "known"), result
    environment = json.loads((run / "environment.json").read_text())
    assert environment["gpu_arch"] == 90
