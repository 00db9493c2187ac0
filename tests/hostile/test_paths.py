"""Hostile inputs, second round (issue 29): planted links, odd files, crafted records and
environment faults in and around an output root, through the real ``repro`` command.
Every one is exit 2 with one line, nothing outside the output root is touched, nothing
blocks, and two writers of one shared file lose nothing."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from suite.engine.sources import CarriedSource, reopen
from tests.conftest import repro_cli
from tests.hostile.test_hostile import one_line_exit_2

DATA = Path(__file__).resolve().parents[1] / "data"
FINDING = DATA / "findings" / "tma-gemm-prefetch-assign-latencies-3.5.0.json"
PROBE_TIMEOUT = 120  # a FIFO that blocked a command ran past 5 minutes


def finding(**fields: object) -> str:
    return json.dumps({**json.loads(FINDING.read_text()), **fields})


def outside(root: Path) -> Path:
    folder = root / "outside"
    folder.mkdir(exist_ok=True)
    (folder / "keep.txt").write_text("not the tool's\n")
    return folder


def plant_fifo_finding(root: Path) -> list[str]:
    (root / "out" / "findings").mkdir(parents=True)
    os.mkfifo(root / "out" / "findings" / "tma-gemm-prefetch-0123456789.json")
    return ["findings", "-o", str(root / "out")]


def plant_fifo_report(root: Path) -> list[str]:
    plant_fifo_finding(root)
    return ["report", "tma-gemm-prefetch-0123", "-o", str(root / "out")]


def plant_dev_zero(root: Path) -> list[str]:
    (root / "zero.json").symlink_to("/dev/zero")
    return ["report", str(root / "zero.json"), "-o", str(root / "out")]


def plant_folder_finding(root: Path) -> list[str]:
    (root / "out" / "findings" / "x-0123.json").mkdir(parents=True)
    return ["findings", "-o", str(root / "out")]


def plant_shape(text: str) -> Callable[[Path], list[str]]:
    def plant(root: Path) -> list[str]:
        (root / "out" / "findings").mkdir(parents=True)
        (root / "out" / "findings" / "x-0123.json").write_text(text)
        return ["findings", "-o", str(root / "out")]

    return plant


def plant_dotdot_stem(root: Path) -> list[str]:
    (root / "...json").write_text(finding())
    return ["reduce", str(root / "...json"), "-o", str(root / "out")]


def plant_reduce_link(root: Path) -> list[str]:
    (root / "f.json").write_text(finding())
    (root / "out" / "reduce").mkdir(parents=True)
    (root / "out" / "reduce" / "f").symlink_to(outside(root))
    return ["reduce", str(root / "f.json"), "-o", str(root / "out")]


def plant_reduce_file(root: Path) -> list[str]:
    (root / "f.json").write_text(finding())
    (root / "out").mkdir()
    (root / "out" / "reduce").write_text("a file where a folder goes")
    return ["reduce", str(root / "f.json"), "-o", str(root / "out")]


def plant_report_id(report_id: str) -> Callable[[Path], list[str]]:
    def plant(root: Path) -> list[str]:
        (root / "f.json").write_text(finding())
        return ["report", str(root / "f.json"), "--id", report_id, "-o", str(root / "out")]

    return plant


def plant_run_json(text: str) -> Callable[[Path], list[str]]:
    def plant(root: Path) -> list[str]:
        run = root / "out" / "runs" / "20260101-000000"
        run.mkdir(parents=True)
        (run / "run.json").write_text(text)
        return ["run", "--resume", "-o", str(root / "out")]

    return plant


def plant_runs_file(root: Path) -> list[str]:
    (root / "out").mkdir()
    (root / "out" / "runs").write_text("a file")
    return ["run", "tma-copy", "-t", "sm_90", "-c", "seed-003", "-o", str(root / "out")]


def plant_findings_file(root: Path) -> list[str]:
    (root / "out").mkdir()
    (root / "out" / "findings").write_text("a file")
    return ["findings", "-o", str(root / "out")]


def plant_results_types(root: Path) -> list[str]:
    run = root / "out" / "runs" / "r"
    run.mkdir(parents=True)
    (run / "run.json").write_text("{}")
    record = {"case_id": "c", "repro": "r", "target": "sm_90", "config": "not a mapping"}
    (run / "results.jsonl").write_text(json.dumps({**record, "outcome": "crash"}) + "\n")
    return ["report", f"{run}:c", "-o", str(root / "out")]


def plant_state_file(root: Path) -> list[str]:
    (root / "state").write_text("{}")
    run = root / "run"
    run.mkdir()
    return ["nightly", "plan", str(run), "--state", str(root / "state")]


def plant_corrupt_plan(root: Path) -> list[str]:
    tracked = {"finding": "f", "repro": "r", "signature": "s", "status": "failing"}
    tracked |= {"release": "3.9.0", "targets": "sm_90", "cases": [], "issue": ""}
    state = {"schema": 1, "release": "3.9.0", "findings": {"f": {**tracked, "first_release": ""}}}
    (root / "plan.json").write_text(json.dumps({"state": state}))
    return ["nightly", "advance", str(root / "plan.json"), "--state", str(root / "state")]


BAD_INPUTS: dict[str, Callable[[Path], list[str]]] = {
    "a FIFO named like a finding (findings)": plant_fifo_finding,
    "a FIFO named like a finding (report)": plant_fifo_report,
    "a finding linked to /dev/zero": plant_dev_zero,
    "a folder named like a finding": plant_folder_finding,
    "a finding that is a list": plant_shape("[]"),
    "a finding of the wrong types": plant_shape(finding(minimal_config=5)),
    "a finding whose stem is ..": plant_dotdot_stem,
    "OUTPUT/reduce/<id> a link": plant_reduce_link,
    "OUTPUT/reduce a file": plant_reduce_file,
    "report --id reduce": plant_report_id("reduce"),
    "report --id captures": plant_report_id("captures"),
    "an empty run.json": plant_run_json(""),
    "a run.json of {}": plant_run_json("{}"),
    "a run.json of the wrong types": plant_run_json('{"repros": 5}'),
    "runs a file": plant_runs_file,
    "findings a file": plant_findings_file,
    "results.jsonl of the wrong types": plant_results_types,
    "nightly --state a file": plant_state_file,
    "nightly advance of a corrupt state": plant_corrupt_plan,
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_a_planted_or_crafted_input_is_one_line_exit_2(tmp_path, name):
    argv = BAD_INPUTS[name](tmp_path)
    outside(tmp_path)
    before = {p: p.read_bytes() for p in (tmp_path / "outside").iterdir()}
    done = repro_cli(*argv, timeout=PROBE_TIMEOUT, env={"HOME": str(tmp_path / "home")})
    one_line_exit_2(done)
    assert {p: p.read_bytes() for p in (tmp_path / "outside").iterdir()} == before
    assert not (tmp_path / "state" / "state.json").exists()


def test_reserved_folder_names_come_from_one_list():
    from suite.files import RESERVED_FOLDERS

    assert {"runs", "findings", "reduce", "captures", "matrix", "nightly"} <= RESERVED_FOLDERS


def test_environment_faults_are_one_line_exit_2(tmp_path):
    (tmp_path / "afile").write_text("")
    done = repro_cli("list", env={"XDG_CACHE_HOME": str(tmp_path / "afile")})
    one_line_exit_2(done, "cache folder")
    gone = tmp_path / "gone"
    gone.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "suite.cli.main", "list"],
        cwd=gone,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: os.rmdir(gone),
    )
    _, err = proc.communicate(timeout=PROBE_TIMEOUT)
    assert proc.returncode == 2 and len(err.splitlines()) == 1, err
    for stdout in ("closed", "broken"):
        read, write = os.pipe()
        if stdout == "broken":
            os.close(read)  # every write meets EPIPE
        proc = subprocess.Popen(
            [sys.executable, "-m", "suite.cli.main", "list"],
            stdout=write if stdout == "broken" else None,
            stderr=subprocess.PIPE,
            preexec_fn=(lambda: os.close(1)) if stdout == "closed" else None,
        )
        os.close(write)
        _, err = proc.communicate(timeout=PROBE_TIMEOUT)
        if stdout == "closed":
            os.close(read)
        assert proc.returncode == 2 and len(err.splitlines()) == 1, (stdout, err)


def test_a_crafted_source_copy_outside_the_record_is_never_loaded(tmp_path):
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_text("x = 1\n")
    digest = hashlib.sha256(elsewhere.read_bytes()).hexdigest()[:40]
    base = tmp_path / "run"
    base.mkdir()
    for copy in (str(elsewhere), "../elsewhere.py", "sources/../../elsewhere.py"):
        carried = CarriedSource("/nonexistent/repro.py", "file", digest, copy=copy)
        with pytest.raises(LookupError):
            reopen(carried, base)


def test_two_baseline_accepts_at_once_lose_nothing(tmp_path):
    signatures = ("compiler-error:ttgir:PassOne: one", "compiler-error:ttgir:PassTwo: two")
    for round_ in range(3):
        baseline = tmp_path / f"baseline-{round_}.toml"
        procs = []
        for index, signature in enumerate(signatures):
            path = tmp_path / f"f{round_}-{index}.json"
            path.write_text(finding(signature=signature, message=signature))
            argv = ["baseline", "accept", str(path), "--baseline", str(baseline)]
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "suite.cli.main", *argv],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        for proc in procs:
            _, err = proc.communicate(timeout=PROBE_TIMEOUT)
            assert proc.returncode == 0, err
        text = baseline.read_text()
        assert "PassOne" in text and "PassTwo" in text, text
        assert sorted(p.name for p in tmp_path.glob(".baseline*")) == []


def test_nul_and_escape_bytes_from_a_finding_never_reach_an_issue_raw():
    from suite.templating import fence, inline_code, markdown_text

    for render in (markdown_text, fence, inline_code):
        shown = str(render("a\x00b\x1b[31mred\x7f"))
        assert not any(ch in shown for ch in "\x00\x1b\x7f"), (render, shown)
