"""A user's reproducer file, given by path, through explore, bisect, replay and report --verify.

The file is a copy of a real upstream port (repros/upstream/sm120_mma_version.py, #6087)
under another id, written under tmp_path. Explore finds the bug under Triton 3.2.0 and the
file is then moved away: every later command must load the source the finding carries.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT, newest_installed, repro_cli

PORT = ROOT / "repros" / "upstream" / "sm120_mma_version.py"
REPRO_ID = "my-sm120-mma"
ASSERTION = 'Assertion `false && "computeCapability not supported"\' failed'

pytestmark = pytest.mark.venv


@pytest.fixture(scope="module")
def explored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(output root, finding file) of an explore of the copied port under 3.2.0."""
    from suite.toolchain.venvs import for_version

    for version in ("3.2.0", "3.3.1"):
        for_version(version)
    folder = tmp_path_factory.mktemp("user")
    source = folder / "my_repro.py"
    text = PORT.read_text()
    assert text.count('id="upstream-6087-sm120-mma-version"') == 1
    source.write_text(text.replace('id="upstream-6087-sm120-mma-version"', f'id="{REPRO_ID}"'))
    out = folder / "out"
    done = repro_cli(
        "explore",
        str(source),
        "-t",
        "sm_120",
        "--max-examples",
        "5",
        "--profile",
        "ci",
        "--python",
        str(for_version("3.2.0").python),
        "-o",
        str(out),
    )
    assert done.code in (0, 1), done.stdout + done.stderr
    source.rename(folder / "moved-away.py")
    assert not source.exists()
    findings = [
        path
        for path in (out / "findings").glob(f"{REPRO_ID}-*.json")
        if "computeCapability not supported" in json.loads(path.read_text())["signature"]
    ]
    assert len(findings) == 1, done.stdout + done.stderr
    carried = json.loads(findings[0].read_text())["source"]
    assert carried["origin"] == str(source) and REPRO_ID in carried["text"]
    return out, findings[0]


def test_bisect_names_the_release_the_fix_reached(explored):
    out, finding = explored
    done = repro_cli(
        "bisect",
        str(finding),
        "--good",
        "3.3.1",
        "--bad",
        "3.2.0",
        "--versions",
        "3.2.0,3.3.1",
        "-o",
        str(out),
        "--format",
        "plain",
    )
    assert done.code == 0, done.stdout + done.stderr
    assert "first good: 3.3.1" in done.stdout
    assert json.loads(finding.read_text())["first_good"] == "3.3.1"


def test_replay_finds_the_pass_under_the_failing_release(explored):
    out, finding = explored
    done = repro_cli("replay", str(finding), "--triton", "3.2.0", "-o", str(out))
    assert done.code == 0, done.stdout + done.stderr
    record = json.loads((out / finding.stem / "replay.json").read_text())
    assert record["triton"] == "3.2.0"
    assert record["first_failing"]["pass"] == "tritongpu-accelerate-matmul"
    assert record["first_failing"]["diagnostic"]["signal"] == "SIGABRT"


def test_report_verify_reproduces_it_under_the_failing_release(explored):
    out, finding = explored
    done = repro_cli("report", str(finding), "--verify", "-o", str(out), "--id", "rep")
    assert done.code == 0, done.stdout + done.stderr
    assert "Verified: reproduces on triton 3.2.0" in done.stdout
    record = json.loads((out / "rep" / "report.json").read_text())
    verification = record["verification"]
    assert verification["ok"] and verification["version"] == "3.2.0"
    # Read back from repro.py's output: a fresh process's abort loses faulthandler's frames,
    # but repro.py's child names each stage it enters, as the engine's child does.
    assert verification["signature"] == f"crash:SIGABRT:compile:ttgir: {ASSERTION}"
    # The installed Triton (3.9.0) no longer has the bug: a comment, never a new issue.
    newest_installed()  # the status is checked on the newest release only where it is installed
    assert record["status"].startswith("fixed upstream in")
