"""A plain wheel install (not editable) carries its templates and renders reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# A PYTHONPATH naming a checkout would put its ``suite`` before the wheel's.
WITHOUT_PYTHONPATH = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
H200_RESULT = ROOT / "docs" / "results" / "2026-11-22-h200-cuda-tma-1d.jsonl"


@pytest.fixture(scope="module")
def wheel_python(tmp_path_factory) -> Path:
    """A venv holding the project's wheel. It sees the running interpreter's own
    site-packages for the dependencies (triton, jinja2, ...), whether the tests run in a
    venv or not, but ``suite`` must come from the wheel."""
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = work.glob("triton_repro_suite-*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    # A plain path line: the running environment's .pth files (an editable install of
    # this checkout among them) are not processed, so ``suite`` cannot come from there.
    own = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    parent = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    (Path(own) / "running_environment.pth").write_text("\n".join(sorted(parent)) + "\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
        check=True,
        capture_output=True,
        env=WITHOUT_PYTHONPATH,
    )
    return python


@pytest.mark.venv
def test_wheel_install_renders_a_report(wheel_python, tmp_path):
    where = subprocess.run(
        [str(wheel_python), "-c", "import suite; print(suite.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env=WITHOUT_PYTHONPATH,
    ).stdout
    assert str(wheel_python.parent.parent) in where, where

    results = tmp_path / "results.jsonl"
    first = H200_RESULT.read_text().splitlines()[0]
    results.write_text(first + "\n")
    case = json.loads(first)["case_id"]
    done = subprocess.run(
        [str(wheel_python), "-m", "suite.cli", "report", str(results), "--output", "out"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=WITHOUT_PYTHONPATH,
    )
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "out").iterdir()
    explanation = (folder / "explanation.md").read_text()
    assert "box-dim-range" in explanation
    assert case.split("[")[0] in explanation
