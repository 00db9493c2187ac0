"""On a GPU (sm_90): the runtime bugs ported from Triton's tracker fail as their oracles say,
and their nearest passing configs pass. With ``REPRO_GPU_OUT`` set, the run folder is
written there so the device tool brings it back."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import repro_cli

pytestmark = [pytest.mark.gpu, pytest.mark.long]


def test_the_runtime_ports_fail_on_the_gpu_and_their_nearest_configs_pass(tmp_path):
    out = Path(os.environ.get("REPRO_GPU_OUT") or tmp_path)
    done = repro_cli(
        "run",
        "upstream-10474-descriptor-1d-pipelined",
        "upstream-6691-pipelined-dot-and-sum",
        "--target",
        "sm_90",
        "--gpu",
        "on",
        # Their signatures and messages are the launches' own: no sanitizer or ptxas reruns
        # (each a process alone on the GPU; tests/test_sanitizer.py and
        # tests/test_ptxas_differential.py check those).
        "--no-sanitizer",
        "--no-ptxas-differential",
        "-o",
        str(out),
        timeout=1200,
    )
    (run,) = sorted((out / "runs").iterdir())[-1:]
    results = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    by_set = {r["case_id"]: r for r in results}
    assert all(r["gpu"] for r in results), done.stdout[-3000:]
    fault = [r for r in results if "descriptor-1d" in r["case_id"] and "-s3-" in r["case_id"]]
    faulted = [r for r in fault if "-x64-" not in r["case_id"]]
    assert faulted and all(
        r["signature"].startswith("runtime-error:launch:") and "misaligned address" in r["message"]
        for r in faulted
    ), by_set
    wrong = [r for r in results if "6691" in r["case_id"] and r["outcome"] == "wrong-result"]
    assert wrong and all(
        r["signature"].startswith("wrong-result:launch:differential:num_stages") for r in wrong
    ), by_set
    passing = [r for r in results if "-s1-" in r["case_id"] or "-x64-" in r["case_id"]]
    assert passing and all(r["outcome"] == "passed" for r in passing), by_set
    assert done.code in (0, 1), done.stderr
