"""Every path a user types may be relative to the folder they are in (issue 35): the
commands, run from a folder other than the clone with relative paths (the default output
root ``reports`` among them), give what they give with absolute ones.

Cheap on purpose: a planted reproducer file (given by its relative path) for explore and
report, compile-only cases of ``tma-copy`` on sm_90 for run, matrix and a reduce cut short by
its time budget, and a planted failure of one release line bisected between two releases.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, Completed, repro_cli, write_finding

PLANTED = """
from suite import Choice, Compiled, Reproducer

REPRO = Reproducer(
    id="planted-relative",
    title="A planted compile failure of the larger blocks",
    family="test",
    params=(Choice("BLOCK_K", (16, 32, 64, 128)), Choice("num_stages", (1, 2, 3, 4))),
    configs={"trigger": [{"BLOCK_K": 128, "num_stages": 4}]},
    targets=("sm_90",),
)


@REPRO.compile
def compile_case(case):
    if case["BLOCK_K"] >= 64 and case["num_stages"] >= 3:
        raise RuntimeError("planted bug")
    return Compiled(shared_bytes=0)
"""
#: A failure of the 3.5 releases alone: bisected between the last of them and 3.6.0.
PLANTED_RELEASE = """
import triton

from suite import Choice, Compiled, Reproducer

REPRO = Reproducer(
    id="planted-release",
    title="A planted failure of the 3.5 releases",
    family="test",
    params=(Choice("BLOCK_K", (64,)),),
    configs={"trigger": [{"BLOCK_K": 64}]},
    targets=("sm_90",),
)


@REPRO.compile
def compile_case(case):
    if triton.__version__.startswith("3.5."):
        raise RuntimeError("planted bug")
    return Compiled(shared_bytes=0)
"""
LAST_BAD, FIRST_GOOD = "3.5.1", "3.6.0"
CONFIGS = """\
- {BLOCK_M: 256, BLOCK_N: 256, num_stages: 2, num_warps: 4, dtype: fp16}
- {BLOCK_M: 64, BLOCK_N: 64, num_stages: 2, num_warps: 4, dtype: fp16}
"""


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working folder outside the clone, holding a reproducer, a config file and a
    baseline."""
    here = tmp_path_factory.mktemp("elsewhere")
    assert not here.is_relative_to(ROOT)
    (here / "planted_relative.py").write_text(PLANTED)
    (here / "configs.yaml").write_text(CONFIGS)
    (here / "baseline.toml").write_text((ROOT / "repros" / "baseline.toml").read_text())
    return here


def _json(done: Completed) -> dict:
    assert done.code in (0, 1), done.stderr[-2000:]
    record: dict = json.loads(done.stdout)
    return record


def _explore(elsewhere: Path, *output: str) -> dict:
    return _json(
        repro_cli(
            "explore", "planted_relative.py", "--max-examples", "1", "--seed", "1",
            "--json", "-q", *output, cwd=elsewhere,
        )
    )  # fmt: skip


def _findings(explored: dict) -> list[tuple[str, str, dict]]:
    return [(f["kind"], f["signature"], f["minimal_config"]) for f in explored["findings"]]


@pytest.fixture(scope="module")
def explored(elsewhere: Path) -> tuple[dict, dict]:
    """One explore with the default (relative) output root, one with an absolute one."""
    relative = _explore(elsewhere)
    absolute = _explore(elsewhere, "-o", str(elsewhere / "absolute"))
    return relative, absolute


def test_explore_under_the_default_relative_output_root(
    elsewhere: Path, explored: tuple[dict, dict]
) -> None:
    relative, absolute = explored
    # Its work folder was made under ``reports`` while each child ran in a folder of its
    # own: every evaluation failed at `start`, and that became a finding.
    assert not any("start" in signature for _, signature, _ in _findings(relative))
    assert _findings(relative) == _findings(absolute)
    assert [signature for _, signature, _ in _findings(relative)] == [
        "compiler-error: RuntimeError: planted bug"
    ]
    assert relative["evaluations"] == absolute["evaluations"]
    assert Path(relative["findings_dir"]) == elsewhere / "reports" / "findings"


def test_report_of_a_relative_finding_path(elsewhere: Path, explored: tuple[dict, dict]) -> None:
    relative, absolute = explored
    written = []
    for found, output in ((relative, "reports"), (absolute, str(elsewhere / "absolute"))):
        finding = Path(found["findings"][0]["file"])
        subject = os.path.relpath(finding, elsewhere)
        done = repro_cli("report", subject, "-o", output, "--json", cwd=elsewhere)
        record = _json(done)
        folder = Path(record["folder"])
        assert folder.is_relative_to(elsewhere)
        files = sorted(p.name for p in folder.iterdir())
        written.append((record["kind"], record["status"], record["signature"], files))
    assert written[0] == written[1]


def test_run_and_matrix_with_a_relative_config_file_baseline_and_python(elsewhere: Path) -> None:
    python = os.path.relpath(sys.executable, elsewhere)
    outcomes = []
    for output in ("out", str(elsewhere / "absolute-run")):
        case = ["tma-copy", "-t", "sm_90", "--config-file", "configs.yaml", "-o", output]
        run = _json(repro_cli("run", *case, "--baseline", "baseline.toml", "--json", cwd=elsewhere))
        matrix = _json(repro_cli("matrix", *case, "--python", python, "--json", cwd=elsewhere))
        # Sorted: cases that end at once (skipped) are listed in the order they ended.
        cases = sorted((c["case_id"], c["outcome"], c["signature"]) for c in run["cases"])
        # A release named by its interpreter is named by its absolute path.
        outcomes.append((cases, matrix["releases"], matrix["rows"], matrix["verdicts"]))
    assert outcomes[0] == outcomes[1]
    assert len(outcomes[0][0]) == 2
    assert outcomes[0][1] == [sys.executable]


# several_kernels.py's kernels load through tl.make_tensor_descriptor, first in 3.4.0.
@pytest.mark.triton(">=3.4")
def test_capture_with_a_relative_output_and_program(elsewhere: Path) -> None:
    program = elsewhere / "several_kernels.py"
    program.write_text((ROOT / "tests" / "data" / "capture" / "several_kernels.py").read_text())
    captured = []
    for output in ("captured", str(elsewhere / "absolute-capture")):
        command = [sys.executable, program.name, "--only-good"]
        done = repro_cli("capture", "--all", "-o", output, "--json", "--", *command, cwd=elsewhere)
        assert done.code == 0, done.stderr[-2000:]
        summary = json.loads(done.stdout)
        folder = Path(summary["folder"])
        assert folder.is_relative_to(elsewhere)
        kernels = sorted(
            json.loads(p.read_text())["kernel"]["name"] for p in folder.glob("compiles/*.json")
        )
        captured.append((summary["compile_records"], summary["failures"], kernels))
    assert captured[0] == captured[1]
    assert captured[0][0] == 2


@pytest.mark.venv
def test_bisect_of_a_relative_finding_with_a_relative_baseline(elsewhere: Path) -> None:
    program = elsewhere / "planted_release.py"
    program.write_text(PLANTED_RELEASE)
    answers = []
    for output in ("reports", str(elsewhere / "absolute-bisect")):
        stored = write_finding(
            program,
            "compiler-error: RuntimeError: planted bug",
            "compiler-error",
            elsewhere / output,
            {"BLOCK_K": 64},
            name="release",
        )
        finding = os.path.relpath(stored, elsewhere)
        ends = ["--bad", LAST_BAD, "--good", FIRST_GOOD, "--versions", f"{LAST_BAD},{FIRST_GOOD}"]
        done = repro_cli(
            "bisect", finding, *ends, "-o", output, "--baseline", "baseline.toml", "--json",
            cwd=elsewhere,
        )  # fmt: skip
        record = _json(done)
        answers.append((record["tried"], record["configs"], json.loads(stored.read_text())))
    assert answers[0][:2] == answers[1][:2]
    assert answers[0][0] == {LAST_BAD: "bad", FIRST_GOOD: "good"}
    # The finding found by its relative path is the one rewritten with the answer.
    assert answers[0][2]["first_good"] == answers[1][2]["first_good"] == FIRST_GOOD


# tma-copy loads through tl.make_tensor_descriptor (its `requires`), first in 3.4.0.
@pytest.mark.triton(">=3.4")
def test_reduce_of_a_relative_finding_with_a_relative_python(elsewhere: Path) -> None:
    """Cut short by its time budget: what it reduced depends on the machine's speed, but a
    child that could not find its files would make the finding not reproduce (exit 2)."""
    python = os.path.relpath(sys.executable, elsewhere)
    config = {"BLOCK_M": 256, "BLOCK_N": 256, "num_stages": 2, "num_warps": 4, "dtype": "fp16"}
    reductions = []
    for output in ("reports", str(elsewhere / "absolute-reduce")):
        stored = write_finding(
            ROOT / "repros" / "tma_copy.py",
            "resource-limit:shared-memory",
            "resource-limit",
            elsewhere / output,
            config,
            name="copy",
        )
        finding = os.path.relpath(stored, elsewhere)
        done = repro_cli(
            "reduce", finding, "-o", output, "--python", python, "-j", "1",
            "--time-budget", "3", "--json", cwd=elsewhere,
        )  # fmt: skip
        record = _json(done)
        folder = Path(record["path"]).parent
        assert folder == elsewhere / output / "reduce" / "copy"
        state = json.loads((folder / "state.json").read_text())
        assert state["tries"] >= 1
        original = (folder / "original.py").read_text()
        reductions.append((done.code, state["signature"], record["original_tokens"], original))
    assert reductions[0] == reductions[1]
    assert reductions[0][:2] == (0, "resource-limit:shared-memory")


#: Values that are an id or a path (a reproducer, a finding, a run, a release or a wheel):
#: the parent looks them up itself (``discover``, ``suite.subject``, the run store, the
#: venvs) and hands a child only what it found, as an absolute path.
IDS_OR_PATHS = {
    "repros",
    "repro",
    "kernel",
    "finding",
    "subject",
    "case",
    "id",
    "resume",
    "versions",
}
NAMES_A_PATH = re.compile(r"\b(?:file|folder|interpreter|output root|wheel)s?\b")


def _actions(parser: argparse.ArgumentParser, name: str):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, subparser in action.choices.items():
                yield from _actions(subparser, f"{name} {sub}".strip())
        elif action.nargs != 0 and not action.choices and action.type not in (int, float):
            yield name, action


def test_every_option_that_names_a_path_is_made_absolute_as_it_is_read() -> None:
    """A new option that names a file or a folder gets ``options.user_path`` too (or is an
    id-or-path the parent looks up itself)."""
    from suite.cli.main import build_parser
    from suite.cli.options import user_path

    relative = [
        f"repro {command} {action.dest}"
        for command, action in _actions(build_parser(), "")
        if (NAMES_A_PATH.search((action.help or "").lower()) or action.metavar in ("FILE", "DIR"))
        and action.type is not user_path
        and action.dest not in IDS_OR_PATHS
    ]
    assert relative == []
    output = build_parser().parse_args(["explore", "tma-copy"]).output
    assert output == os.path.join(os.getcwd(), "reports")  # the default, made absolute
