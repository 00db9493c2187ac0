"""Release venvs from a folder of wheels, with no package index; nightly builds whose
versions carry git hashes, bisected and tabled down to a commit range.

The wheels are real: downloaded first (``pip download triton==X --no-deps``), then every
command runs with the registry unreachable (``PIP_NO_INDEX``, an unroutable index URL, no
pip configuration file) into a fresh venv root. The nightlies are released wheels
re-tagged locally (``tests/retag.py``): 3.6.0, where #10901's kernel fails on sm_100, and
3.8.0, where it compiles.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from retag import retag
from test_cli_output import check_json

pytestmark = pytest.mark.venv

OLDER, NEWER = "3.7.0.dev20251101+git1a2b3c4", "3.7.0.dev20251102+git5d6e7f8"
COMPARE = "https://github.com/triton-lang/triton/compare/1a2b3c4...5d6e7f8"
WS_BUG = "upstream-10901-ws-reduction-convert-layout"


@pytest.fixture(scope="module")
def house(tmp_path_factory) -> Path:
    """Triton 3.6.0 and 3.8.0 wheels, downloaded while the registry is reachable."""
    folder = tmp_path_factory.mktemp("wheelhouse")
    for version in ("3.6.0", "3.8.0"):
        pin = f"triton=={version}"
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", pin, "--no-deps", "-d", str(folder)],
            check=True,
            capture_output=True,
        )
    return folder


@pytest.fixture(scope="module")
def offline(tmp_path_factory) -> dict[str, str]:
    """The environment of a machine with no registry, and a fresh venv root."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "REPRO_WHEELHOUSE"))}
    return {
        **env,
        "PIP_NO_INDEX": "1",
        "PIP_INDEX_URL": "http://10.255.255.1/simple/",
        "PIP_CONFIG_FILE": os.devnull,
        "REPRO_VENV_ROOT": str(tmp_path_factory.mktemp("venvs")),
        "PYTHONPATH": str(ROOT),
        "COLUMNS": "200",
    }


@pytest.fixture(scope="module")
def nightly(house, tmp_path_factory) -> Path:
    """Two nightly builds: 3.6.0 and 3.8.0 re-tagged with dev dates and git hashes."""
    folder = tmp_path_factory.mktemp("nightly")
    for released, version in (("3.6.0", OLDER), ("3.8.0", NEWER)):
        (wheel,) = house.glob(f"triton-{released}-*.whl")
        retag(wheel, version, folder)
    return folder


def repro(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "suite.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
    )


def test_matrix_builds_its_venv_from_the_wheelhouse_with_no_registry(house, offline, tmp_path):
    args = ("matrix", "tma-gemm-prefetch", "-t", "sm_100", "-c", "trigger", "--triton", "3.6.0")
    refused = repro(offline, *args, "-o", str(tmp_path / "a"))
    # Without the wheelhouse nothing can be installed: the registry is really out of reach.
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "cannot install triton==3.6.0" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1

    done = repro(offline, *args, "--wheelhouse", str(house), "-o", str(tmp_path / "b"), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    venv = Path(offline["REPRO_VENV_ROOT"]) / "triton-3.6.0"
    assert (venv / ".repro-checked").is_file()
    table = check_json("matrix", done.stdout)
    assert table["versions"] == {"3.6.0": "3.6.0"}
    cells = [cell for row in table["rows"] for cell in row["cells"].values()]
    # The AssignLatencies bug is fixed in 3.6.0: every cell compiles. The case launches, and
    # this machine cannot run sm_100, so the cell says so instead of "passed".
    assert cells and set(cells) == {"compiled; needs a GPU (sm_100) to check"}


@pytest.mark.slow
def test_a_bisect_over_nightly_wheels_names_the_commit_range(nightly, offline, tmp_path):
    findings = tmp_path / "findings"
    findings.mkdir()
    trigger = {"BLOCK_H": 1024, "num_warps": 4, "num_stages": 3, "WARP_SPECIALIZE": True}
    record = {
        "repro": WS_BUG,
        "signature": "compiler-error:ttgir:NVWSInsertAref",
        "kind": "bug",
        "outcome": "compiler-error",
        "message": "",
        "target": "sm_100",
        "targets": ["sm_100"],
        "minimal_config": trigger,
        "failing_configs": [],
        "passing_neighbours": [],
        "boundary": [],
        "environment": {},
        "seed": 0,
        "first_seen": "2026-11-25T00:00:00Z",
        "last_seen": "2026-11-25T00:00:00Z",
    }
    finding = findings / "ws-reduction.json"
    finding.write_text(json.dumps(record))
    (older,) = nightly.glob("*git1a2b3c4*.whl")
    (newer,) = nightly.glob("*git5d6e7f8*.whl")
    done = repro(
        offline, "bisect", str(finding), "--bad", str(older), "--good", str(newer),
        "-o", str(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"first good: {NEWER} (last bad: {OLDER})" in done.stdout
    assert f"commits 1a2b3c4..5d6e7f8 (after {OLDER}, up to {NEWER}): {COMPARE}" in done.stdout
    stored = json.loads(finding.read_text())
    assert stored["first_good"] == NEWER
    assert stored["bisect"]["commits"]["compare"] == COMPARE
    again = repro(
        offline, "bisect", str(finding), "--bad", str(older), "--good", str(newer),
        "-o", str(tmp_path), "--json",
    )  # fmt: skip
    assert check_json("bisect", again.stdout)["commits"]["newer_commit"] == "5d6e7f8"

    # The same two builds as a matrix over the wheelhouse: the case changes between them.
    args = ("matrix", WS_BUG, "-t", "sm_100", "-c", "trigger", "--wheelhouse", str(nightly))
    table = repro(offline, *args, "-o", str(tmp_path / "m"))
    assert table.returncode in (0, 1), table.stdout + table.stderr
    lines = [ln for ln in table.stdout.splitlines() if COMPARE in ln]
    assert len(lines) == 1, table.stdout
    assert "compiler-error:ttgir:NVWSInsertAref" in lines[0] and "-> passed" in lines[0]
    (change,) = check_json(
        "matrix", repro(offline, *args, "-o", str(tmp_path / "j"), "--json").stdout
    )["changes"]
    assert (change["older"], change["newer"], change["compare"]) == (OLDER, NEWER, COMPARE)


def test_the_wheels_declare_their_versions(nightly):
    from suite.toolchain.venvs import wheels_in

    assert [w.version for w in wheels_in(nightly)] == [OLDER, NEWER]
