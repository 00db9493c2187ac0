"""Hostile inputs, third round (issue 36), each through the real ``repro`` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import Completed, repro_cli

HERE = Path(__file__).resolve().parent / "repros"


@pytest.mark.parametrize("act", ["exit", "classifier"])
def test_a_file_that_acts_only_in_the_main_process_changes_nothing(tmp_path, act):
    """The main process never imports a user's file: ``os._exit(0)`` there, or a classifier
    replaced there, never turns two failing cases into a green run."""
    out = tmp_path / "out"
    done = repro_cli(
        "run",
        str(HERE / "parent_only.py"),
        "--timeout",
        "120",
        "-o",
        str(out),
        env={"PARENT_ONLY": act},
    )
    assert done.code == 1, (done.code, done.stdout, done.stderr)
    (run,) = (out / "runs").iterdir()
    lines = (run / "results.jsonl").read_text().splitlines()
    assert [json.loads(line)["outcome"] for line in lines] == ["compiler-error"] * 2


def test_listing_a_file_that_exits_in_the_main_process(tmp_path):
    done = repro_cli("list", str(HERE / "parent_only.py"), env={"PARENT_ONLY": "exit"})
    assert done.code == 0, done.stderr
    assert "hostile-parent-only" in done.stdout


@pytest.mark.parametrize("isolation", ["warm", "fresh"])
def test_a_forged_result_line_is_not_believed_by_resume(tmp_path, isolation):
    """A case appends ``passed`` for a case that has not run and SIGTERMs ``repro``: the
    line carries no key of the run, so ``--resume`` runs that case, which fails."""
    out, env = tmp_path / "out", {"FORGER_MARK": str(tmp_path / "forged")}
    common = ("--isolation", isolation, "-j", "1", "--timeout", "120", "-o", str(out))
    first = repro_cli("run", str(HERE / "forger.py"), *common, env=env)
    assert first.code == 143, (first.code, first.stdout, first.stderr)
    assert (tmp_path / "forged").exists()
    done = repro_cli("run", "--resume", *common, env=env)
    assert done.code == 1, (done.code, done.stdout, done.stderr)
    (run,) = (out / "runs").iterdir()
    outcomes = {
        json.loads(line)["case_id"]: json.loads(line)["outcome"]
        for line in (run / "results.jsonl").read_text().splitlines()
    }
    assert outcomes == {
        "hostile-forger[sm_90-0]": "compiler-error",
        "hostile-forger[sm_90-1]": "compiler-error",
    }


@pytest.mark.parametrize("fmt", ["plain", "table"])
def test_text_from_a_case_is_shown_escaped_never_obeyed(tmp_path, fmt):
    """ESC, carriage returns, a line break in a config value, U+202E: shown as escapes."""
    done = repro_cli(
        "run",
        str(HERE / "terminal.py"),
        "--format",
        fmt,
        "--timeout",
        "120",
        "-o",
        str(tmp_path / "out"),
    )
    assert done.code == 1, (done.code, done.stdout, done.stderr)
    shown = done.stdout + done.stderr
    for raw in ("\x1b", "\r", "\u202e"):
        assert raw not in shown
    assert not any(line.startswith("hostile-terminal[sm_90-y]") for line in shown.splitlines())
    assert "\\x1b" in shown


def test_text_from_a_case_is_inert_in_the_issue_and_the_dashboard(tmp_path):
    out = tmp_path / "out"
    done = repro_cli("run", str(HERE / "live_text.py"), "--timeout", "120", "-o", str(out))
    assert done.code == 1, done.stderr
    (run,) = (out / "runs").iterdir()
    case = "hostile-live-text[sm_90-0]"
    done = repro_cli("report", f"{run}:{case}", "--no-rerun", "--id", "live", "-o", str(out))
    assert done.code == 0, done.stderr
    issue = (out / "live" / "issue.md").read_text()
    prose = issue.replace("`", "\0").split("\0")[::2]  # outside code spans and fences
    for live in ("@kernel_name", "@maintainer", "#1234", "GH-99", "![x](", "[click](", "<img"):
        assert not any(live in part for part in prose), (live, issue)
    done = repro_cli("dashboard", "-o", str(out))
    assert done.code == 0, done.stderr
    page = (out / "dashboard" / "index.html").read_text()
    assert "<img src=x" not in page and "&lt;img src=x" in page


def test_merge_and_dashboard_read_nothing_through_a_link_or_a_fifo(tmp_path):
    """A shard's case folder holds a link to a file outside (a password in it), a FIFO and a
    link to /dev/zero; a run's results.jsonl is a link to /dev/zero, another's a FIFO:
    merge copies none of them, dashboard reads none, neither blocks."""
    outside = tmp_path / "outside.txt"
    outside.write_text("password-outside-the-root")
    shards = []
    for k in (1, 2):
        out = tmp_path / f"s{k}"
        done = repro_cli("run", str(HERE / "live_text.py"), "--shard", f"{k}/2", "-o", str(out))
        assert done.code in (0, 1), done.stderr
        (run,) = (out / "runs").iterdir()
        shards.append(run)
    planted = shards[0] / "cases" / "planted"
    planted.mkdir(parents=True)
    (planted / "leak.txt").symlink_to(outside)
    (planted / "zero").symlink_to("/dev/zero")
    os.mkfifo(planted / "fifo")
    merged = repro_cli("merge", *map(str, shards), "-o", str(tmp_path / "merged"), timeout=300)
    assert merged.code in (0, 1), merged.stderr
    copied = [p for p in (tmp_path / "merged").rglob("*") if p.is_file()]
    assert not any("password-outside" in p.read_text(errors="replace") for p in copied)
    assert not any(p.name in ("leak.txt", "zero", "fifo") for p in copied)

    runs = tmp_path / "s1" / "runs"
    (runs / "zero").mkdir()
    (runs / "zero" / "results.jsonl").symlink_to("/dev/zero")
    (runs / "fifo").mkdir()
    os.mkfifo(runs / "fifo" / "results.jsonl")
    (runs / "away").symlink_to(tmp_path / "s2" / "runs" / shards[1].name)
    done = repro_cli("dashboard", "-o", str(tmp_path / "s1"), timeout=300)
    assert done.code == 0, done.stderr


def one_line(done, status: int, *needles: str) -> None:
    assert done.code == status, (done.code, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in lines[0], done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_an_output_that_is_a_link_loop_is_one_line_exit_2(tmp_path):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    done = repro_cli("run", str(HERE / "live_text.py"), "-o", str(tmp_path / "loop" / "out"))
    one_line(done, 2, "ELOOP", str(tmp_path / "loop"))


def test_no_file_descriptors_left_is_one_line_exit_4(tmp_path):
    """Under ``ulimit -n 8`` the run cannot open what it needs: the machine's fault."""
    command = (
        f"ulimit -n 8; exec {sys.executable} -m suite.cli.main run {HERE / 'live_text.py'} "
        f"-o {tmp_path / 'out'}"
    )
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=300)
    done = Completed(proc.returncode, proc.stdout, proc.stderr)
    one_line(done, 4, "EMFILE")


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB tmpfs, almost full (skipped where this user may not mount one)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        (disk / "filler").write_bytes(b"\0" * 60000)
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def test_a_full_disk_is_one_line_exit_4_naming_the_file(small_disk):
    done = repro_cli("run", str(HERE / "live_text.py"), "-o", str(small_disk / "out"))
    one_line(done, 4, "ENOSPC", str(small_disk / "out"))


def test_a_case_that_lost_a_file_to_a_full_disk_says_which(tmp_path):
    """The disk fills mid-run: the case's record (which fits) names the stream that did
    not, and the run goes on to its own verdict."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        done = repro_cli("run", str(HERE / "fills_disk.py"), "-o", str(disk / "out"))
        assert done.code == 1, (done.code, done.stderr)
        (run,) = (disk / "out" / "runs").iterdir()
        (line,) = (run / "results.jsonl").read_text().splitlines()
        result = json.loads(line)
        assert result["outcome"] != "passed", result
        assert "stderr.txt (ENOSPC)" in result["detail"]["lost"], result["detail"]
        assert "stderr.txt" not in result["artifacts"]
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def test_two_case_ids_that_write_alike_keep_their_own_folders(tmp_path):
    out = tmp_path / "out"
    done = repro_cli("run", str(HERE / "alike.py"), "-j", "1", "-o", str(out))
    assert done.code == 1, done.stderr
    (run,) = (out / "runs").iterdir()
    results = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    folders = set()
    for result in results:
        name = result["config"]["name"]
        kept = [Path(p) for p in result["artifacts"].values()]
        assert kept, result
        folders |= {p.parent for p in kept}
        assert any(f"<{name}>" in p.read_text() for p in kept if p.is_file()), (name, kept)
    assert len(folders) == 2


def test_a_yaml_alias_bomb_is_refused_before_it_grows(tmp_path):
    """Six levels of ten aliases: a million nodes from a 300-byte file, under a parameter
    the reproducer does not know (the refusal once printed all of it: 5 MB on one line)."""
    lines, previous = ['l0: &l0 ["x","x","x","x","x","x","x","x","x","x"]'], "l0"
    for level in range(1, 6):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*{previous}"] * 10) + "]")
        previous = f"l{level}"
    lines.append(f"configs: [{{name: 'a b', junk: *{previous}}}]")
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    done = repro_cli(
        "run", str(HERE / "alike.py"), "--config-file", str(bomb), "-o", str(tmp_path / "out")
    )
    one_line(done, 2, "aliases")
    assert len(done.stderr) < 1000
    assert not (tmp_path / "out").exists()


def test_a_report_killed_mid_way_leaves_no_draft_behind_the_next(tmp_path):
    """Nor a scratch folder in TMPDIR: the next report removes what the killed one made
    (and nothing else of TMPDIR)."""
    out, tmp = tmp_path / "out", tmp_path / "tmp"
    tmp.mkdir()
    with open("/proc/self/stat", "rb") as stat:
        started = int(stat.read().rsplit(b")", 1)[1].split()[19])
    live = f"p{os.getpid()}t{started}"  # this process: it lives on
    others = [tmp / f"repro-report-{live}-x", tmp / "repro-report-p1t1-link", tmp / "keep"]
    others[0].mkdir()
    others[1].symlink_to(tmp_path)
    others[2].mkdir()
    env = {"TMPDIR": str(tmp)}
    done = repro_cli("run", str(HERE / "live_text.py"), "-o", str(out), env=env)
    assert done.code == 1, done.stderr
    (run,) = (out / "runs").iterdir()
    command = ["report", f"{run}:hostile-live-text[sm_90-0]", "--no-rerun", "--id", "live"]
    killed = subprocess.Popen(
        [sys.executable, "-m", "suite.cli.main", *command, "-o", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env},
    )
    deadline = time.monotonic() + 120
    while not list(out.glob(".live.new-*")) and killed.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    killed.kill()
    killed.wait()
    if not list(out.glob(".live.new-*")):
        pytest.skip("the report finished before it could be killed mid-way")
    assert len(list(tmp.glob("repro-report-*"))) > 2, "no scratch to be left"
    done = repro_cli(*command, "-o", str(out), env=env)
    assert done.code == 0, done.stderr
    assert not list(out.glob(".live.*")), list(out.glob(".live.*"))
    assert sorted(tmp.iterdir()) == sorted(others)


def test_a_case_that_stops_its_warm_template_ends_the_run_anyway(tmp_path):
    out = tmp_path / "out"
    done = repro_cli(
        "run",
        str(HERE / "stops_template.py"),
        "--isolation",
        "warm",
        "-j",
        "1",
        "--timeout",
        "30",
        "-o",
        str(out),
        timeout=240,
    )
    assert done.code == 1, done.stderr
    (run,) = (out / "runs").iterdir()
    lines = (run / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["config"]["n"] for line in lines) == [0, 1]
