"""``repro doctor`` on this machine: the installed Triton, a real ptxas compile per target,
the release venvs, the stores; exit 0 when the default run has what it needs."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import jsonschema
import pytest
from conftest import ROOT, gpu_visible, repro_cli

TARGETS = ["sm_90a", "sm_100a", "sm_103a", "sm_120a", "sm_121a"]


def schema() -> dict:
    text = (ROOT / "docs" / "schemas.md").read_text()
    (body,) = re.findall(r"<!-- schema: doctor -->\n```json\n(.*?)\n```", text, re.DOTALL)
    return json.loads(body)


def doctor(*args: str, env: dict[str, str] | None = None) -> dict:
    done = repro_cli("doctor", "--json", *args, env=env)
    document = json.loads(done.stdout)
    jsonschema.validate(document, schema())
    assert done.code == (0 if document["ready"] else 2), done.stderr
    return document


def no_venvs(tmp_path: Path) -> dict[str, str]:
    """An empty venv root, for the tests about something else: checking every cached venv
    (an import and a compile in each) costs a doctor run about 17 CPU s, and is
    test_doctor_on_this_machine's and tests/test_venvs_fresh.py's to check."""
    (tmp_path / "no-venvs").mkdir()
    return {"REPRO_VENV_ROOT": str(tmp_path / "no-venvs")}


def test_doctor_on_this_machine(tmp_path):
    import triton

    found = doctor("-o", str(tmp_path / "out"))
    assert found["ready"]
    assert found["triton"]["version"] == triton.__version__
    assert found["triton"]["path"] == str(Path(triton.__file__).parent)
    assert found["triton"]["python"] == sys.executable
    assert [t["target"] for t in found["targets"]] == TARGETS
    # Triton 3.9.0 bundles a ptxas (CUDA 13.x) that knows every target up to sm_121a
    if triton.__version__ == "3.9.0":
        assert all(t["compiles"] for t in found["targets"]), found["targets"]
    assert found["output"]["writable"] and not found["output"]["exists"]
    assert found["baseline"]["valid"] and found["baseline"]["entries"] > 0
    assert found["findings"] == {
        "path": str((tmp_path / "out").resolve() / "findings"),
        "valid": True,
        "entries": 0,
        "error": "",
    }
    assert (found["nvcc"] is None) == (shutil.which("nvcc") is None)
    if not gpu_visible():
        assert found["gpus"] == [] or shutil.which("nvidia-smi")


@pytest.mark.venv
def test_an_older_release_lacks_the_newest_targets(triton_350, tmp_path):
    found = doctor("--python", str(triton_350), "-o", str(tmp_path), env=no_venvs(tmp_path))
    assert found["triton"]["version"] == "3.5.0"
    support = {t["target"]: t for t in found["targets"]}
    assert support["sm_90a"]["compiles"] and support["sm_100a"]["compiles"]
    assert not support["sm_121a"]["compiles"]
    assert "sm_121a" in support["sm_121a"]["error"]  # ptxas's own refusal
    assert found["ready"]  # a gap skips those cases; it does not stop the run
    (gap,) = [p for p in found["problems"] if "sm_121a" in p["what"]]
    assert not gap["blocking"] and "pip install --upgrade triton" in gap["fix"]


@pytest.mark.venv
def test_a_release_whose_get_ptxas_gives_a_tuple_is_probed(tmp_path):
    """3.3's ``get_ptxas`` returns ``(path, version)``, not a tool with a ``path``: the probe
    failed on it and the doctor said "triton does not import" (the 3.3.1 lane)."""
    from suite.toolchain.venvs import for_version

    python = for_version("3.3.1").python
    found = doctor("--python", str(python), "-o", str(tmp_path), env=no_venvs(tmp_path))
    assert found["triton"]["version"] == "3.3.1" and found["ready"], found["problems"]
    support = {t["target"]: t for t in found["targets"]}
    assert support["sm_90a"]["compiles"] and support["sm_90a"]["ptxas"].endswith("bin/ptxas")
    assert support["sm_100a"]["ptxas"].endswith("bin/ptxas-blackwell")


def test_a_broken_baseline_and_finding_are_problems_with_fixes(tmp_path):
    baseline = tmp_path / "baseline.toml"
    baseline.write_text("[[known]]\nrepro = 3\n")
    (tmp_path / "out" / "findings").mkdir(parents=True)
    (tmp_path / "out" / "findings" / "x-123.json").write_text("{not json")
    args = ("doctor", "--baseline", str(baseline), "-o", str(tmp_path / "out"))
    done = repro_cli(*args, env=no_venvs(tmp_path))
    assert done.code == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("repro: doctor: not ready")
    assert "PROBLEM: malformed baseline" in done.stdout
    assert f"fix: fix {baseline}" in done.stdout
    broken = tmp_path / "out" / "findings" / "x-123.json"
    assert f"fix: mv {broken.resolve()} {broken.resolve()}.broken" in done.stdout
    assert done.stdout.rstrip().endswith("NOT ready: fix the PROBLEM lines above")


def test_a_missing_triton_is_a_problem(tmp_path):
    venv = tmp_path / "bare"
    import venv as venv_module

    venv_module.create(venv, with_pip=False)
    found = doctor(
        "--python", str(venv / "bin" / "python"), "-o", str(tmp_path), env=no_venvs(tmp_path)
    )
    assert not found["ready"] and found["triton"] is None
    (problem,) = [p for p in found["problems"] if p["blocking"]]
    assert "triton does not import" in problem["what"] and "pip install triton" in problem["fix"]


def test_doctor_says_which_case_boundary_is_in_force_and_why_not_a_better_one(tmp_path):
    """As this process finds it (a cgroup per case where the machine allows), and the
    fallback with its reason when cgroups are turned off."""
    from suite.engine.boundary import FALLBACK, FORCE_VARIABLE, case_boundary

    here, venvs = case_boundary(), no_venvs(tmp_path)
    found = doctor("-o", str(tmp_path / "out"), env=venvs)["case_boundary"]
    assert (found["kill"], found["memory"]) == (here.kill.value, here.memory.value)
    assert found["why_not"] == list(here.why_not)
    off = doctor("-o", str(tmp_path / "out"), env={**venvs, FORCE_VARIABLE: FALLBACK})
    assert (off["case_boundary"]["kill"], off["case_boundary"]["memory"]) == (FALLBACK, "pss")
    assert off["case_boundary"]["why_not"] == [f"{FORCE_VARIABLE}={FALLBACK} is set"]
    assert any("no cgroup per case" in p["what"] for p in off["problems"])
    assert not any(p["blocking"] for p in off["problems"] if "cgroup" in p["what"])
