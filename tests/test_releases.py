"""The catalogue across Triton releases: matrix and bisect, on real venvs and real compiles."""

from __future__ import annotations

import json

import pytest

from suite.errors import UsageError
from suite.releases.bisect import BAD, GOOD, UNSUPPORTED, between, bisect
from suite.releases.nightlies import chronological, commit_of, commit_range
from tests.conftest import repro_cli
from tests.test_capture import venv_python

TRIGGER = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_stages": 2, "num_warps": 4}


def test_between_orders_from_the_bad_end():
    versions = ["3.3.1", "3.4.0", "3.5.0", "3.5.1", "3.6.0", "3.9.0"]
    assert between(versions, good="3.9.0", bad="3.5.0") == ["3.5.0", "3.5.1", "3.6.0", "3.9.0"]
    assert between(versions, good="3.3.1", bad="3.5.0") == ["3.5.0", "3.4.0", "3.3.1"]
    with pytest.raises(UsageError):
        between(versions, good="3.7.0", bad="3.5.0")


def test_bisect_sets_unsupported_releases_aside():
    states = {"9": BAD, "8": BAD, "7": UNSUPPORTED, "6": BAD, "5": GOOD, "4": UNSUPPORTED}
    asked = []

    def state_of(label):
        asked.append(label)
        return states[label]

    last_bad, first_good, order, aside = bisect(list("987654"), state_of)
    assert (order[last_bad], order[first_good]) == ("6", "5")
    assert aside == {"4": UNSUPPORTED, "7": UNSUPPORTED}
    assert "4" in asked and "7" in asked


def test_bisect_refuses_a_bad_end_that_does_not_reproduce():
    with pytest.raises(UsageError):
        bisect(["2", "1"], lambda label: GOOD)


@pytest.fixture
def finding_file(tmp_path):
    """A finding as explore writes it: the 3.5.0 AssignLatencies bug's minimal config."""
    folder = tmp_path / "findings"
    folder.mkdir()
    record = {
        "repro": "tma-gemm-prefetch",
        "signature": "compiler-error:ttgir:TritonGPUAssignLatencies",
        "kind": "bug",
        "outcome": "compiler-error",
        "message": "",
        "target": "sm_100",
        "targets": ["sm_100"],
        "minimal_config": TRIGGER,
        "failing_configs": [],
        "passing_neighbours": [],
        "boundary": [],
        "environment": {},
        "seed": 0,
        "first_seen": "2026-11-22T00:00:00Z",
        "last_seen": "2026-11-22T00:00:00Z",
    }
    (folder / "assign-latencies.json").write_text(json.dumps(record))
    return folder / "assign-latencies.json"


@pytest.mark.venv
def test_bisect_names_the_first_bad_release_and_skips_unsupported(finding_file, tmp_path):
    done = repro_cli(
        "bisect",
        "assign-latencies",
        "--good",
        "3.3.1",
        "--bad",
        "3.5.0",
        "--versions",
        "3.3.1,3.4.0,3.5.0",
        "-o",
        str(tmp_path),
    )
    assert done.code == 0, done.stdout + done.stderr
    assert "first bad: 3.4.0" in done.stdout
    assert "3.3.1 (unsupported)" in done.stdout
    stored = json.loads(finding_file.read_text())
    assert stored["first_bad"] == "3.4.0"


@pytest.mark.slow
@pytest.mark.venv
def test_bisect_names_the_first_good_release(finding_file, tmp_path):
    done = repro_cli(
        "bisect",
        str(finding_file),
        "--bad",
        "3.5.0",
        "--good",
        "3.6.0",
        "--versions",
        "3.5.0,3.6.0",
        "-o",
        str(tmp_path),
    )
    assert done.code == 0, done.stdout + done.stderr
    assert "first good: 3.6.0" in done.stdout
    assert json.loads(finding_file.read_text())["first_good"] == "3.6.0"


@pytest.mark.venv
def test_matrix_shows_unsupported_failing_and_passing(tmp_path):
    done = repro_cli(
        "matrix",
        "tma-gemm-prefetch",
        "-t",
        "sm_100",
        "-c",
        "trigger",
        "--triton",
        "3.3.1,3.5.0",
        "--python",
        venv_python("3.9.0"),  # a release with the fix, whatever runs the tests
        "-o",
        str(tmp_path),
    )
    assert done.code == 0, done.stdout + done.stderr
    (folder,) = (tmp_path / "matrix").iterdir()
    matrix = json.loads((folder / "matrix.json").read_text())
    newest = matrix["releases"][-1]
    row = next(r for r in matrix["rows"] if r["case"].endswith("64x64x32-w4-s2]"))
    assert row["cells"]["3.3.1"] == "unsupported"
    assert "TritonGPUAssignLatencies" in row["cells"]["3.5.0"]
    # It compiles there; its launch check could not run without an sm_100 GPU.
    assert row["cells"][newest] == "compiled; needs a GPU (sm_100) to check"
    assert (folder / "matrix.md").read_text().count("| tma-gemm-prefetch |") == 3


def test_unknown_release_is_one_line(tmp_path):
    done = repro_cli("matrix", "tma-copy", "--triton", "not-a-version", "-o", str(tmp_path))
    assert done.code == 2
    assert len(done.stderr.strip().splitlines()) == 1


def test_commit_ranges_of_nightly_versions():
    assert commit_of("3.5.0+git1a2b3c4d") == "1a2b3c4d"
    assert commit_of("3.6.0.dev20251101+gitabcdef0") == "abcdef0"
    assert commit_of("3.6.0") is None and commit_of("3.6.0+cu130") is None
    # Builds that differ only in their hash keep the order given.
    same = ["3.5.0+gitffffff1", "3.5.0+git0000002", "3.4.0+git0000000"]
    assert chronological(same) == ["3.4.0+git0000000", "3.5.0+gitffffff1", "3.5.0+git0000002"]
    assert between(same, good="3.5.0+git0000002", bad="3.4.0+git0000000") == [
        "3.4.0+git0000000",
        "3.5.0+gitffffff1",
        "3.5.0+git0000002",
    ]
    span = commit_range("3.5.0+git0000002", "3.5.0+gitffffff1", chronological(same))
    assert span is not None and (span.older_commit, span.newer_commit) == ("ffffff1", "0000002")
    assert commit_range("3.5.0", "3.6.0", ["3.5.0", "3.6.0"]) is None
