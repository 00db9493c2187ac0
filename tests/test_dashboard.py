"""`repro dashboard` renders a page Chromium shows, heatmap included."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from PIL import Image

from suite.releases.dashboard import signature_colour
from tests.conftest import repro_cli
from tests.test_capture import venv_python

SIGNATURE = "compiler-error:ttgir:TritonGPUAssignLatencies"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium(tmp_path, *args):
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.fail("Debian's chromium is needed (apt-get install chromium); .ci/run installs it")
    return subprocess.run(
        [binary, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.venv
def test_dashboard_heatmap_renders_in_chromium(tmp_path, triton_350):
    out = tmp_path / "reports"
    for python in (str(triton_350), venv_python("3.9.0")):  # 3.9.0 whatever runs the tests
        args = [
            "run",
            "tma-gemm-prefetch",
            "-t",
            "sm_100",
            "-c",
            "trigger,boundary",
            "-o",
            str(out),
        ]
        done = repro_cli(*args, "--python", python)
        assert done.code in (0, 3), done.stderr
    done = repro_cli("dashboard", "-o", str(out), "--x", "num_stages", "--y", "num_warps")
    assert done.code == 0, done.stderr
    page = out / "dashboard" / "index.html"

    dom = _chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    assert "tma-gemm-prefetch</strong> on <strong>sm_100</strong>, triton 3.5.0" in dom
    assert SIGNATURE in dom
    assert dom.count('class="cell"') == 10  # five configs under each of two releases

    shot = tmp_path / "dashboard.png"
    _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1400,900", page.as_uri())
    image = Image.open(shot).convert("RGB")
    wanted = tuple(int(signature_colour(SIGNATURE)[i : i + 2], 16) for i in (1, 3, 5))
    coloured = {colour: n for n, colour in image.getcolors(1400 * 900)}.get(wanted, 0)
    assert coloured > 2000, "the failing heatmap cells are not visible in the screenshot"


def test_dashboard_without_runs_is_one_line(tmp_path):
    done = repro_cli("dashboard", "-o", str(tmp_path / "nothing"))
    assert done.code == 2
    assert len(done.stderr.strip().splitlines()) == 1


WS_POINTER_DOT = "upstream-9728-ws-pointer-dot-hopper"
PRODUCER_COMMIT = "LLVM ERROR: unsupported load type for producer commit"


@pytest.mark.slow
@pytest.mark.venv
def test_a_message_change_across_releases_shows_in_explore_and_the_dashboard(tmp_path):
    """#9728's port on sm_90: NVGPUWarpSpecialization fails with `Assertion `false' failed`
    on 3.6.0 and with an LLVM ERROR from 3.7.0 (docs/releases.md): one bug, its message
    changed. The dashboard says so beside the case (from a matrix's runs) and beside the
    finding (from two explores into one store), as `repro explore` and the report do."""
    from suite.toolchain.venvs import for_version

    out = tmp_path / "reports"
    done = repro_cli(
        "matrix", WS_POINTER_DOT, "-c", "trigger", "--triton", "3.6.0,3.7.0", "-o", str(out)
    )
    assert done.code == 0, done.stderr
    for version in ("3.6.0", "3.7.0"):
        explored = repro_cli(
            "explore",
            WS_POINTER_DOT,
            "--python",
            for_version(version).python,
            "--max-examples",
            "1",
            "--seed",
            "0",
            "--profile",
            "ci",
            "-o",
            str(out),
        )
        assert explored.code == 0, explored.stderr
    note = f"message changed in 3.7.0: {PRODUCER_COMMIT}"
    assert note in explored.stdout
    # The report of that finding says it too (#9728 is open upstream: a comment draft).
    (finding,) = (out / "findings").glob("*.json")
    reported = repro_cli("report", finding.stem, "-o", str(out), "--id", "r")
    assert reported.code == 0, reported.stderr
    drafts = [p.read_text() for p in (out / "r").glob("*.md")]
    assert any(f"- {note}" in text for text in drafts), drafts
    done = repro_cli("dashboard", "-o", str(out))
    assert done.code == 0, done.stderr
    page = (out / "dashboard" / "index.html").read_text()
    # Once beside the case in the history, once beside the finding.
    assert page.count(note) == 2, page
    assert "compiler-error:ttgir:NVGPUWarpSpecialization: Assertion `false" in page
