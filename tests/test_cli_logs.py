"""Logs as CI keeps them (stdout not a terminal, 80 columns): every command that names cases
puts a full case id and its signature on one line; exit 2 is one line on stderr with no
progress before it; progress is a bar with an ETA in a terminal and one line per step with
the elapsed time in a log; shell completion answers through argcomplete's protocol.

All through the real ``repro`` command line in fresh interpreters, on the planted reproducer
of ``test_cli_output.py``, the checked-in finding (AssignLatencies under Triton 3.5.0) and,
for the tests marked ``venv``, the cached release venvs.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import PLANTED as CRASHES
from conftest import ROOT, Completed, SharedRun, repro_cli
from test_cli_output import PLANTED, check_json, line_with

from suite.engine.baseline import Baseline
from suite.toolchain.venvs import for_version

NARROW = {"COLUMNS": "80"}
FINDING = ROOT / "tests" / "data" / "findings" / "tma-gemm-prefetch-assign-latencies-3.5.0.json"
CASE = "tma-gemm-prefetch[sm_100-64x64x32-w4-s2]"  # the finding's minimal config on sm_100
SIGNATURE = "compiler-error:ttgir:TritonGPUAssignLatencies"
PROGRESS = r"^\[\s*\d+\.\d+s\] "
"""A log's progress line: ``[ elapsed s] <what> <n>/<total>: <step>``."""


def venv_python(version: str) -> str:
    """The release's venv: built, or waited for while the session's prebuild builds it (on a
    fresh machine, skipping when it was not there yet skipped these tests)."""
    return str(for_version(version).python)


def progress_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if re.match(PROGRESS, line)]


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("repro") / "planted_logs.py"
    path.write_text(textwrap.dedent(PLANTED))
    return path


@pytest.fixture
def finding_root(tmp_path: Path) -> Path:
    """An output root whose findings store holds the checked-in finding (a copy)."""
    (tmp_path / "findings").mkdir()
    shutil.copy(FINDING, tmp_path / "findings" / FINDING.name)
    return tmp_path


# ------------------------------------------------------------------ a case id and its signature


def test_explore_log_has_each_evaluation_with_its_full_case_id_and_signature(planted, tmp_path):
    from suite.engine import discover
    from suite.engine.expand import case_id

    done = repro_cli(
        "explore", str(planted), "-t", "sm_90", "--max-examples", "6", "--seed", "1",
        "-o", str(tmp_path), env=NARROW,
    )  # fmt: skip
    assert done.code == 0, done.stderr
    (path,) = (tmp_path / "findings").glob("*.json")
    finding = json.loads(path.read_text())
    (found,) = discover.select([str(planted)])
    minimal = case_id(found.repro, finding["target"], finding["minimal_config"])
    line = line_with(done.stderr, minimal, finding["signature"])
    assert re.match(PROGRESS + rf"explore {found.repro.id} \d+: ", line), line
    line_with(done.stdout, path.stem, finding["signature"])


def test_matrix_log_has_each_case_with_its_signature(planted, tmp_path):
    done = repro_cli(
        "matrix", str(planted), "-t", "sm_90", "--python", sys.executable, "-o", str(tmp_path),
        env=NARROW,
    )  # fmt: skip
    # the planted failures are regressions: exit 1 where matrix exits as run does, else 0
    assert done.code in (0, 1), done.stderr
    (folder,) = (tmp_path / "matrix").iterdir()
    (run,) = json.loads((folder / "matrix.json").read_text())["runs"].values()
    results = [json.loads(x) for x in (Path(run) / "results.jsonl").read_text().splitlines()]
    assert any(r["signature"] for r in results)
    for record in results:
        cells = line_with(done.stdout, record["case_id"]).split("\t")
        assert cells[0] == record["case_id"]
        assert cells[1] == (record["signature"] or record["outcome"])


def test_gate_log_has_each_check_with_its_signature_and_json_matches(planted, tmp_path):
    current, proposed = tmp_path / "current.yaml", tmp_path / "proposed.yaml"
    current.write_text("- {BLOCK_SIZE_K: 64, num_stages: 3}\n")
    proposed.write_text("- {BLOCK_SIZE_K: 128, num_stages: 4}\n" + current.read_text())
    files = ("--kernel", str(planted), "--current", str(current), "--proposed", str(proposed))
    args = ("gate", *files, "-t", "sm_90", "-j", "2", "-o", str(tmp_path / "out"))
    done = repro_cli(*args, env=NARROW)
    assert done.code == 1, done.stdout + done.stderr  # the planted failure is rejected
    document = check_json("gate", repro_cli(*args, "--json", "-q").stdout)
    rejected = [c for c in document["checks"] if c["signature"]]
    assert rejected
    for check in rejected:
        cells = line_with(done.stdout, check["case_id"], check["signature"]).split("\t")
        assert cells[0] == check["case_id"] and cells[2] == "reject"
    assert progress_lines(done.stderr)


def test_findings_log_has_each_finding_with_its_signature(finding_root):
    done = repro_cli("findings", "-o", str(finding_root), env=NARROW)
    assert done.code == 0, done.stderr
    listed = repro_cli("findings", "-o", str(finding_root), "--json")
    document = check_json("findings", listed.stdout)
    (finding,) = document["findings"]
    cells = line_with(done.stdout, finding["id"], SIGNATURE).split("\t")
    assert cells[0] == finding["id"] and cells[2] == SIGNATURE


def test_findings_json_hands_over_a_file_that_exists(finding_root):
    listed = repro_cli("findings", "-o", str(finding_root), "--json")
    document = check_json("findings", listed.stdout)
    (finding,) = document["findings"]
    assert Path(finding["file"]).is_file()


def test_findings_log_says_when_a_message_changed_between_releases(finding_root):
    (path,) = (finding_root / "findings").glob("*.json")
    record = json.loads(path.read_text())
    family = "compiler-error:ttgir:TritonGPUAssignLatencies"
    record["signatures"] = {"3.4.0": f"{family}: one message", "3.5.0": f"{family}: another"}
    path.write_text(json.dumps(record))
    done = repro_cli("findings", "-o", str(finding_root), env=NARROW)
    assert done.code == 0, done.stderr
    line_with(done.stdout, path.stem, "message changed in 3.5.0: another")


def test_findings_log_has_the_minimal_case_id(finding_root):
    done = repro_cli("findings", "-o", str(finding_root), env=NARROW)
    line_with(done.stdout, CASE, SIGNATURE)


@dataclass(frozen=True)
class Bisected:
    """One plain ``repro bisect`` of the checked-in finding, 3.5.1 to 3.6.0, with a baseline
    whose entry does not know the fix yet: its output and the files it wrote."""

    done: Completed
    root: Path
    baseline: Path


BISECT = ("--bad", "3.5.1", "--good", "3.6.0", "--versions", "3.5.1,3.6.0")


@pytest.fixture(scope="module")
def bisected(tmp_path_factory: pytest.TempPathFactory) -> Bisected:
    """Shared by the log test and the baseline test: each bisect compiles the finding's eight
    configs under each release."""
    venv_python("3.5.1"), venv_python("3.6.0")
    root = tmp_path_factory.mktemp("bisected")
    (root / "findings").mkdir()
    shutil.copy(FINDING, root / "findings" / FINDING.name)
    baseline = root / "baseline.toml"
    shipped = (ROOT / "repros" / "baseline.toml").read_text()
    baseline.write_text(shipped.replace('fixed_in = "3.6.0"\n', ""))
    args = ("bisect", FINDING.stem, *BISECT, "--baseline", str(baseline), "-o", str(root))
    return Bisected(repro_cli(*args, env=NARROW), root, baseline)


@pytest.mark.venv
def test_bisect_log_has_the_case_and_its_signature_and_json_matches(bisected, finding_root):
    done = bisected.done
    assert done.code == 0, done.stdout + done.stderr
    line = line_with(done.stdout, CASE, SIGNATURE)
    assert "first good: 3.6.0" in line
    steps = [line for line in progress_lines(done.stderr) if "] bisect " in line]
    assert [re.sub(PROGRESS, "", s) for s in steps] == [
        "bisect 1/2: triton 3.5.1: bad",
        "bisect 2/2: triton 3.6.0: good",
    ]
    args = ("bisect", FINDING.stem, *BISECT, "-o", str(finding_root), "--json", "-q")
    document = check_json("bisect", repro_cli(*args).stdout)
    assert (document["case_id"], document["signature"]) == (CASE, SIGNATURE)
    assert document["first_good"] == "3.6.0"


@pytest.mark.venv
def test_bisect_fills_the_entry_that_knows_the_finding(bisected):
    """`repro bisect --baseline FILE` writes its conclusive answer (the first good release) into
    the entry as fixed_in; the finding keeps it too."""
    done = bisected.done
    assert done.code == 0, done.stdout + done.stderr
    assert "entry assign-latencies-prefetch updated" in done.stderr
    assert Baseline.load(bisected.baseline).entry("assign-latencies-prefetch").fixed_in == "3.6.0"
    finding = bisected.root / "findings" / FINDING.name
    assert json.loads(finding.read_text())["first_good"] == "3.6.0"


@pytest.fixture(scope="module")
def run_350(prefetch_run_350: SharedRun) -> Path:
    """A real run of the finding's case set under Triton 3.5.0 (the session's): its folder."""
    done = prefetch_run_350.done
    assert done.code == 0, done.stdout + done.stderr
    return prefetch_run_350.run


@pytest.mark.venv
def test_replay_json_matches_its_schema(run_350, tmp_path):
    done = repro_cli("replay", f"{run_350}:{CASE}", "-o", str(tmp_path), "--json", "-q")
    assert done.code == 0, done.stdout + done.stderr
    document = check_json("replay", done.stdout)
    assert document["confirmed"] and Path(document["record"]).is_file()


@pytest.mark.venv
def test_replay_log_has_the_case_and_its_signature(run_350, tmp_path):
    done = repro_cli("replay", f"{run_350}:{CASE}", "-o", str(tmp_path), env=NARROW)
    assert done.code == 0, done.stdout + done.stderr
    line_with(done.stdout + done.stderr, CASE, SIGNATURE)


@pytest.mark.venv
def test_reduce_json_matches_its_schema(finding_root):
    venv_python("3.5.0")
    done = repro_cli(
        "reduce", FINDING.stem, "-o", str(finding_root), "-j", "2", "--time-budget", "3",
        "--json", "-q",
    )  # fmt: skip
    assert done.code == 0, done.stdout + done.stderr
    document = check_json("reduce", done.stdout)
    assert Path(document["path"]).is_file() and document["lines"] <= document["original_lines"]
    assert json.loads(Path(document["finding"]).read_text())["reduced"]["path"] == document["path"]


@pytest.mark.venv
def test_reduce_log_has_the_case_and_its_signature(finding_root):
    venv_python("3.5.0")
    done = repro_cli(
        "reduce", FINDING.stem, "-o", str(finding_root), "-j", "2", "--time-budget", "3",
        env=NARROW,
    )  # fmt: skip
    assert done.code == 0, done.stdout + done.stderr
    line_with(done.stdout + done.stderr, CASE, SIGNATURE)


# ------------------------------------------------------------------------ exit 2: one line, first

BAD_INPUT = [
    ("run", "no-such-repro"),
    ("run", "tma-copy", "-t", "sm_999"),
    ("run", "tma-copy", "-c", "nope"),
    ("run", "tma-copy", "--timeout", "-1"),
    ("run", "--resume", "-o", "{tmp}/empty"),
    ("list", "no-such-repro"),
    ("explore", "no-such-repro"),
    ("explore", "tma-copy", "-t", "sm_80"),
    ("explore", "tma-copy", "--profile", "nope"),
    ("findings", "-o", "{tmp}/file"),
    ("findings", "--kind", "nope"),
    ("matrix", "tma-copy", "-o", "{tmp}/out"),
    ("matrix", "no-such-repro", "--triton", "3.5.0", "-o", "{tmp}/out"),
    ("matrix", "tma-copy", "-t", "sm_999", "--triton", "3.5.0", "-o", "{tmp}/out"),
    ("matrix", "tma-copy", "-c", "nope", "--triton", "3.5.0", "-o", "{tmp}/out"),
    ("matrix", "tma-copy", "-t", "sm_80", "--triton", "3.5.0", "-o", "{tmp}/out"),
    ("matrix", "tma-copy", "--triton", "3.5.0,bogus", "-o", "{tmp}/out"),
    ("matrix", "tma-copy", "--wheel", "{tmp}/none.whl", "-o", "{tmp}/out"),
    ("bisect", "{finding}", "--good", "abc", "--bad", "3.5.0"),
    ("bisect", "{finding}", "--good", "3.5.0", "--bad", "3.5.0"),
    ("bisect", "no-such-finding", "--good", "3.6.0", "--bad", "3.5.0", "-o", "{tmp}/out"),
    ("bisect", "{finding}", "--good", "3.6.0", "--bad", "3.5.0", "--versions", "3.5.0,3.7.0"),
    ("dashboard", "-o", "{tmp}/none"),
    ("gate", "--kernel", "no-such", "--current", "{tmp}/c.yaml", "--proposed", "{tmp}/c.yaml"),
    ("gate", "--kernel", "tma-gemm", "--current", "{tmp}/c.yaml", "--sizes", "abc"),
    ("report", "no-such-finding", "-o", "{tmp}/out"),
    ("report", "{finding}", "--id", "a b", "-o", "{tmp}/out"),
    ("replay", "no-such-finding", "-o", "{tmp}/out"),
    ("replay", "{tmp}/nothere:case", "-o", "{tmp}/out"),
    ("reduce", "{tmp}/file", "-o", "{tmp}/out"),
    ("explain", "no-such-finding", "--variant", "num_stages=1", "-o", "{tmp}/out"),
    ("explain", "{finding}", "--variant", "num_stages", "-o", "{tmp}/out"),
    ("matrix", "tma-copy", "--wheelhouse", "{tmp}/none", "-o", "{tmp}/out"),
    ("matrix", "tma-copy", "--wheelhouse", "{tmp}", "-o", "{tmp}/out"),
    ("bisect", "{finding}", "--good", "{tmp}/none.whl", "--bad", "3.5.0"),
    ("reduce", "{finding}", "--workers", "0", "-o", "{tmp}/out"),
    ("doctor", "--frobnicate"),
    ("baseline", "accept", "no-such-finding", "-o", "{tmp}/out"),
    ("baseline", "show", "--baseline", "{tmp}/none.toml"),
    ("baseline", "frob"),
    ("nightly", "plan", "{tmp}", "--state", "{tmp}/state"),
    ("nightly", "advance", "{tmp}/none.json", "--state", "{tmp}/state"),
    ("nightly", "show"),
    ("merge", "{tmp}/none", "-o", "{tmp}/out"),
]


def _argv(args: tuple[str, ...], tmp: Path) -> list[str]:
    (tmp / "file").write_text("not a finding\n")
    (tmp / "c.yaml").write_text("- {BLOCK_M: 64}\n")
    if not (tmp / "finding.json").exists():
        shutil.copy(FINDING, tmp / "finding.json")
    return [a.format(tmp=tmp, finding=tmp / "finding.json") for a in args]


#: Commands that print no progress: ``--verbose`` adds nothing to check.
NO_PROGRESS = ("list", "findings", "dashboard", "doctor", "baseline", "nightly")


def _bad_inputs() -> list:
    """Each bad input plain, and with ``--verbose`` (which starts each step on stderr) the
    first of each command by default, the others ``slow`` (0.4 CPU s each; the nightly's)."""
    params, verbose_seen = [], set()
    for args in BAD_INPUT:
        params.append(pytest.param(args, (), id=f"{' '.join(args)}-plain"))
        if args[0] in NO_PROGRESS:
            continue
        marks = (pytest.mark.slow,) if args[0] in verbose_seen else ()
        verbose_seen.add(args[0])
        params.append(pytest.param(args, ("-v",), id=f"{' '.join(args)}-verbose", marks=marks))
    return params


@pytest.mark.parametrize(("args", "verbose"), _bad_inputs())
def test_bad_input_is_one_line_on_stderr_before_any_progress(args, verbose, tmp_path):
    done = repro_cli(*_argv(args, tmp_path), *verbose, env=NARROW)
    assert done.code == 2, (done.code, done.stdout, done.stderr)
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("repro: error: ")


def test_bisect_with_an_unparsable_version_list_is_exit_2(tmp_path):
    argv = _argv(("bisect", "{finding}", "--good", "3.6.0", "--bad", "3.5.0"), tmp_path)
    done = repro_cli(*argv, "--versions", "3.5.0,bogus,3.6.0", env=NARROW)
    assert done.code == 2 and len(done.stderr.splitlines()) == 1, done.stderr


@pytest.mark.venv
def test_bisect_with_a_missing_baseline_refuses_before_any_progress(tmp_path):
    venv_python("3.5.1"), venv_python("3.6.0")
    argv = _argv(("bisect", "{finding}", "--good", "3.6.0", "--bad", "3.5.1"), tmp_path)
    done = repro_cli(
        *argv, "--versions", "3.5.1,3.6.0", "--baseline", str(tmp_path / "none.toml"), env=NARROW
    )
    assert done.code == 2 and len(done.stderr.splitlines()) == 1, done.stderr


# ------------------------------------------------------------------------ progress


def test_a_log_gets_one_line_per_step_with_the_elapsed_time(tmp_path):
    path = tmp_path / "crashes.py"
    path.write_text(textwrap.dedent(CRASHES))
    done = repro_cli("run", str(path), "-c", "slow", "-j", "2", "-o", str(tmp_path), env=NARROW)
    assert done.code == 0, done.stdout + done.stderr
    steps = progress_lines(done.stderr)
    assert len(steps) == 6 and steps == done.stderr.splitlines(), done.stderr
    for n, line in enumerate(steps, 1):
        assert re.match(PROGRESS + rf"cases {n}/6: planted-crashes\[sm_90-ok-\d\] passed ok$", line)
    elapsed = [float(re.findall(r"[\d.]+", line)[0]) for line in steps]
    assert elapsed == sorted(elapsed)


def _in_a_terminal(argv: list[str], env: dict[str, str], timeout: float = 300) -> str:
    """Run ``argv`` with stdin, stdout and stderr on a pseudo-terminal; all it drew."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True, cwd=ROOT
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed its side
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=30)
    os.close(master)
    return b"".join(chunks).decode(errors="replace")


def test_a_terminal_gets_a_progress_bar_with_an_eta(tmp_path):
    path = tmp_path / "crashes.py"
    path.write_text(textwrap.dedent(CRASHES))
    env = {**os.environ, "COLUMNS": "100", "LINES": "40", "TERM": "xterm-256color",
           "PLANTED_SLEEP": "0.6"}  # fmt: skip
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        env.pop(name, None)
    argv = [sys.executable, "-m", "suite.cli.main", "run", str(path), "-c", "slow", "-j", "1"]
    drawn = _in_a_terminal([*argv, "-o", str(tmp_path / "out")], env)
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn)
    assert re.search(r"cases .*\d+/6 .*eta\s+\d+:\d\d:\d\d", plain), plain[-3000:]
    assert not progress_lines(plain)  # no log lines in a terminal
    # the table, once the bar is gone: every case id whole
    for tag in range(6):
        assert f"planted-crashes[sm_90-ok-{tag}]" in plain


# ------------------------------------------------------------------------ shell completion


def complete(line: str, cwd: Path | None = None) -> list[str]:
    """What ``repro`` offers at the end of ``line``, through argcomplete's protocol."""
    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"repro-complete-{os.getpid()}-{time.time_ns()}"
    env = {
        **os.environ,
        "_ARGCOMPLETE": "1",
        "_ARGCOMPLETE_IFS": "\n",
        "_ARGCOMPLETE_STDOUT_FILENAME": str(out),
        "COMP_LINE": line,
        "COMP_POINT": str(len(line)),
        "COMP_TYPE": "9",
    }
    done = subprocess.run(
        [sys.executable, "-m", "suite.cli.main"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    try:
        return [c.strip() for c in out.read_text().split("\n") if c.strip()]
    finally:
        out.unlink(missing_ok=True)


def test_completion_of_commands_and_actions():
    offered = complete("repro ")
    assert {"run", "list", "bisect", "doctor", "baseline", "nightly", "merge"} <= set(offered)
    assert complete("repro ba") == ["baseline"]
    actions = [c for c in complete("repro baseline ") if not c.startswith("-")]
    assert set(actions) == {"accept", "check", "show"}
    assert "--json" in complete("repro baseline show --j")


def test_completion_of_reproducer_ids_targets_and_config_sets():
    assert complete("repro run tma-gemm-p") == ["tma-gemm-prefetch"]
    assert "tma-copy" in complete("repro matrix tma-")
    assert set(complete("repro run -t sm_12")) == {"sm_120", "sm_121"}
    assert "sm_90" in complete("repro gate --target sm_")
    assert set(complete("repro run tma-gemm-prefetch -c ")) >= {"trigger", "boundary"}


def test_completion_of_finding_ids(finding_root):
    stem = FINDING.stem
    assert complete(f"repro bisect -o {finding_root} tma") == [stem]
    offered = complete(f"repro report -o {finding_root} ")
    assert [c for c in offered if not c.startswith("-")] == [stem]
    # without -o: the findings under ./reports
    (finding_root / "reports").mkdir()
    shutil.copytree(finding_root / "findings", finding_root / "reports" / "findings")
    offered = complete("repro baseline accept ", cwd=finding_root)
    assert [c for c in offered if not c.startswith("-")] == [stem]
