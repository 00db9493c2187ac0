"""The ported upstream Triton bugs (repros/upstream/) behave as docs/upstream-bugs.md says."""

from __future__ import annotations

import pytest

from tests.conftest import repro_cli

UPSTREAM = (
    "upstream-4418-hopper-chained-dot",
    "upstream-6087-sm120-mma-version",
    "upstream-8473-sm103-tcgen05-wait",
    "upstream-8005-ws-two-warps",
    "upstream-9728-ws-pointer-dot-hopper",
    "upstream-10284-ws-partition-attr",
)


def rows(stdout: str) -> dict[str, list[str]]:
    """case id -> the plain table's columns (outcome, verdict, triage, signature, ...)."""
    found = {}
    for line in stdout.splitlines():
        if line.startswith("upstream-"):
            case, *columns = line.split("\t")
            found[case] = columns
    return found


def test_upstream_reproducers_are_builtins():
    listed = repro_cli("list", "--format", "plain")
    assert listed.code == 0, listed.stderr
    for repro_id in UPSTREAM:
        assert repro_id in listed.stdout


def test_upstream_bugs_on_the_installed_release(tmp_path):
    ran = repro_cli(
        "run",
        *UPSTREAM,
        "-c",
        "trigger,nearest-pass",
        "-j",
        "2",
        "-o",
        str(tmp_path),
        "--format",
        "plain",
    )
    assert ran.code == 0, ran.stdout + ran.stderr
    table = rows(ran.stdout)
    assert len(table) == 2 * len(UPSTREAM)
    failing = {case for case, columns in table.items() if columns[0] != "passed"}
    assert failing == {
        "upstream-8005-ws-two-warps[sm_100-128x128x64-w2-s3]",
        "upstream-9728-ws-pointer-dot-hopper[sm_90-128x128x64-w4-s3-wsTrue]",
    }
    assert all(table[case][1] == "known" for case in failing)
    assert "unsupported load type for producer commit" in " ".join(
        table["upstream-9728-ws-pointer-dot-hopper[sm_90-128x128x64-w4-s3-wsTrue]"]
    )


@pytest.mark.venv
def test_old_release_cells(tmp_path):
    """3.2.0: #4418 and #6087 fail as known (baseline ranges); #4418's nearest pass passes."""
    from suite.toolchain.venvs import for_version

    python = str(for_version("3.2.0").python)
    ran = repro_cli(
        "run",
        "upstream-4418-hopper-chained-dot",
        "upstream-6087-sm120-mma-version",
        "-c",
        "trigger,nearest-pass",
        "-j",
        "2",
        "-o",
        str(tmp_path),
        "--python",
        python,
        "--format",
        "plain",
    )
    assert ran.code == 0, ran.stdout + ran.stderr
    table = rows(ran.stdout)
    trigger_4418 = table["upstream-4418-hopper-chained-dot[sm_90-64x64x64-w8-zerosTrue]"]
    assert trigger_4418[1] == "known"
    assert "Failed to emit transfer from register to shared" in " ".join(trigger_4418)
    assert table["upstream-4418-hopper-chained-dot[sm_90-64x64x64-w8-zerosFalse]"][0] == "passed"
    trigger_6087 = table["upstream-6087-sm120-mma-version[sm_120-64x32-w4-s2-dotTrue]"]
    assert trigger_6087[1] == "known"
    assert "computeCapability not supported" in " ".join(trigger_6087)


@pytest.mark.venv
def test_release_without_warp_specialization_reports_unsupported(tmp_path):
    from suite.toolchain.venvs import for_version

    ran = repro_cli(
        "run",
        "upstream-9728-ws-pointer-dot-hopper",
        "-o",
        str(tmp_path),
        "--python",
        str(for_version("3.2.0").python),
        "--format",
        "plain",
    )
    assert ran.code == 0, ran.stdout + ran.stderr
    (columns,) = rows(ran.stdout).values()
    assert columns[0] == "skipped"
    assert "triton.language.range(warp_specialize)" in " ".join(columns)
