"""``repro report --verify`` where no clean venv can be built (no package registry, as on many
GPU clusters): it verifies in this interpreter, in a fresh process with an empty Triton
cache, when that interpreter has the release, and says so."""

from __future__ import annotations

import json

import pytest

from tests.conftest import repro_cli


# upstream-9728-ws-pointer-dot-hopper takes tl.range(warp_specialize=...) (its `requires`),
# first in 3.4.0.
@pytest.mark.triton(">=3.4")
def test_verify_falls_back_to_this_interpreter_without_a_registry(tmp_path):
    run = repro_cli(
        "run", "upstream-9728-ws-pointer-dot-hopper", "-c", "trigger", "-o", str(tmp_path)
    )
    assert run.code == 0, run.stdout + run.stderr
    (folder,) = (tmp_path / "runs").iterdir()
    case = json.loads((folder / "results.jsonl").read_text().splitlines()[0])["case_id"]
    no_registry = {"REPRO_VENV_ROOT": str(tmp_path / "venvs"), "PIP_NO_INDEX": "1"}
    done = repro_cli("report", f"{folder}:{case}", "--verify", "-o", str(tmp_path), env=no_registry)
    assert done.code == 0, done.stdout + done.stderr
    assert "Verified in this interpreter (" in done.stdout
    assert "a fresh process, an empty Triton cache), since no clean venv could be built" in (
        done.stdout
    )
    assert "status: ready" in done.stdout
