"""Hypothesis fuzzing of what a user hands the suite: config files, baselines, findings and
command lines. The property: the exit status is 0-3 or the internal-error code (never a
traceback), bad input is exit 2 with exactly one line, and nothing is written outside the
output root. Examples are bounded so the suite stays cheap on 2 cores."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from suite.cli.main import main
from suite.engine.baseline import Baseline
from suite.engine.expand import load_config_file
from suite.errors import EXIT_INTERNAL, UsageError

HOSTILE = Path(__file__).resolve().parent / "repros"
SUFFIXES = (".yaml", ".toml", ".json")
FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)

# Text that looks a little like each format, and bytes that are not text at all.
structured = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200),
    st.lists(
        st.sampled_from(
            [
                "[[known]]",
                "id = 'x'",
                "- {BLOCK_M: 64.0}",
                "configs:",
                "- true",
                "{",
                "}",
                '"a": [1, 2',
                "triton = '>>1'",
                "\xff",
                "num_stages: 3",
                "[",
                "]",
            ]
        ),
        max_size=8,
    ).map("\n".join),
)


def _write(folder: Path, suffix: str, content: str | bytes) -> Path:
    path = folder / f"input{suffix}"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", errors="surrogatepass")
    return path


@FUZZ
@given(content=structured, suffix=st.sampled_from(SUFFIXES))
def test_config_loader_returns_a_list_or_one_line(content, suffix):
    with tempfile.TemporaryDirectory() as folder:
        try:
            path = _write(Path(folder), suffix, content)
        except UnicodeEncodeError:
            return
        try:
            configs = load_config_file(str(path))
        except UsageError as exc:
            assert "\n" not in str(exc).strip()
        else:
            assert isinstance(configs, list) and all(isinstance(c, dict) for c in configs)


@FUZZ
@given(content=structured)
def test_baseline_loader_returns_a_baseline_or_one_line(content):
    with tempfile.TemporaryDirectory() as folder:
        try:
            path = _write(Path(folder), ".toml", content)
        except UnicodeEncodeError:
            return
        try:
            Baseline.load(path)
        except UsageError as exc:
            assert "\n" not in str(exc).strip()


TOKENS = [
    "--timeout",
    "--memory-cap",
    "-j",
    "--workers",
    "-t",
    "--target",
    "-c",
    "--configs",
    "--config-file",
    "--baseline",
    "--shard",
    "--resume",
    "--python",
    "--isolation",
    "--id",
    "--good",
    "--bad",
    "--case",
    "--gpu",
    "--format",
    "nan",
    "inf",
    "-inf",
    "-1",
    "0",
    "1e309",
    "64.0",
    "true",
    "",
    "abc",
    "3.5.0",
    "0/0",
    "3/2",
    "sm_42",
    "sm_90",
    "sm_100a",
    "runs",
    "../x",
    "/nonexistent",
    "warm",
    "cold",
    "no-such-repro",
    "FILE",
    "BADFILE",
    "DIRFILE",
    "HOSTILE",
]
COMMANDS = [
    "run",
    "list",
    "explore",
    "findings",
    "matrix",
    "bisect",
    "dashboard",
    "report",
    "replay",
]
NEEDS_SUBJECT = {
    "explore": "no-such-repro",
    "bisect": "BADFILE",
    "report": "BADFILE",
    "replay": "BADFILE",
    "run": "no-such-repro",
}


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(command=st.sampled_from(COMMANDS), tokens=st.lists(st.sampled_from(TOKENS), max_size=6))
def test_command_lines_exit_0_to_3_or_internal_and_bad_input_is_one_line(command, tokens):
    work = Path(tempfile.mkdtemp(prefix="repro-fuzz-"))
    try:
        bad = work / "bad.yaml"
        bad.write_bytes(b"\xff\xfe- {x: [\n")
        (work / "file").write_text("not a folder")
        files = {
            "FILE": str(work / "file"),
            "BADFILE": str(bad),
            "DIRFILE": str(work / "file" / "below"),
            "HOSTILE": str(HOSTILE / "exit_at_import.py"),
        }
        argv = [command, *(files.get(t, t) for t in tokens)]
        subject = NEEDS_SUBJECT.get(command)
        if subject:
            argv.append(files.get(subject, subject))
        argv += ["-o", str(work / "out")] if command != "list" else []
        stderr = io.StringIO()
        before = set(os.listdir(work))
        cwd = os.getcwd()
        os.chdir(work)
        try:
            with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
                try:
                    code = main(argv)
                except SystemExit as exit:  # argparse's --help
                    code = exit.code
        finally:
            os.chdir(cwd)
        text = stderr.getvalue()
        assert code in (0, 1, 2, 3), (argv, code, text)
        assert code != EXIT_INTERNAL, (argv, text)
        assert "Traceback" not in text, (argv, text)
        if code == 2:
            assert len(text.strip().splitlines()) == 1, (argv, text)
        written = set(os.listdir(work)) - before
        assert written <= {"out"}, (argv, written)
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.mark.parametrize("finding", ["[]", "{}", '{"repro": 1}', "\xff", "null", '"x"'])
def test_a_garbage_finding_is_one_line_exit_2(tmp_path, finding, capsys):
    path = tmp_path / "f.json"
    path.write_text(finding, encoding="utf-8", errors="surrogateescape")
    for argv in (
        ["bisect", str(path), "--good", "3.9.0", "--bad", "3.5.0"],
        ["report", str(path), "--no-rerun"],
        ["replay", str(path)],
    ):
        code = main([*argv, "-o", str(tmp_path / "out")])
        err = capsys.readouterr().err
        assert code == 2, (argv, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, (argv, err)
