"""Bad input: one line naming the problem, exit status 2, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import repro_cli

DATA = Path(__file__).parent / "data"


def _bad(done, *needles):
    assert done.code == 2, (done.code, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    for needle in needles:
        assert needle in lines[0]


def test_unknown_reproducer():
    _bad(repro_cli("run", "no-such-repro"), "no-such-repro")


def test_unknown_target():
    _bad(repro_cli("run", "tma-copy", "--target", "sm_999"), "sm_999")


def test_unknown_option():
    _bad(repro_cli("run", "--frobnicate"), "--frobnicate")


def test_unknown_config_set():
    _bad(repro_cli("run", "tma-copy", "--configs", "nope"), "nope")


@pytest.mark.parametrize(
    "suffix, text, needle",
    [
        (".toml", "[[known]\nid=", "malformed baseline"),
        (".toml", "[[known]]\nid = 'x'\n", "lacks"),
        (
            ".toml",
            "[[known]]\nid='x'\nrepro='r'\nsignature='s'\nkind='k'\ntriton='>>1'\n",
            "bad triton range",
        ),
    ],
)
def test_malformed_baseline(tmp_path, suffix, text, needle):
    path = tmp_path / f"baseline{suffix}"
    path.write_text(text)
    _bad(repro_cli("run", "tma-copy", "--baseline", str(path)), needle)


def test_malformed_config_file(tmp_path):
    path = tmp_path / "configs.yaml"
    path.write_text("- {BLOCK_M: [unclosed\n")
    _bad(repro_cli("run", "tma-copy", "--config-file", str(path)), "malformed config file")


def test_config_outside_the_space(tmp_path):
    path = tmp_path / "configs.yaml"
    path.write_text("- {BLOCK_M: 48, BLOCK_N: 64, num_warps: 4, num_stages: 2, dtype: fp16}\n")
    _bad(repro_cli("run", "tma-copy", "--config-file", str(path)), "BLOCK_M=48")


def test_user_file_that_fails_to_import(tmp_path):
    path = tmp_path / "broken_repro.py"
    path.write_text("import not_a_module_anywhere\n")
    _bad(repro_cli("run", str(path)), "cannot import", "not_a_module_anywhere")


def test_a_plain_data_declaration_with_an_unknown_field_is_named(tmp_path):
    """``REPRO = dict(...)`` (docs/writing-reproducers.md) with a field the engine does not
    know: one line naming it, never a reproducer that silently drops it."""
    path = tmp_path / "plain_repro.py"
    path.write_text(
        "REPRO = dict(id='plain', title='t', family='f', params={'A': (1, 2)},\n"
        "             configs={'c': [{'A': 1}]}, targets=('sm_90',), oracles=())\n"
    )
    _bad(repro_cli("run", str(path)), "cannot import", "unknown field(s) oracles")


def test_missing_user_file(tmp_path):
    _bad(repro_cli("run", str(tmp_path / "missing.py")), "missing.py")


def test_resume_with_nothing_to_resume(tmp_path):
    _bad(repro_cli("run", "--resume", "-o", str(tmp_path)), "nothing to resume")


def test_python_without_triton(tmp_path):
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "v")], check=True)
    _bad(
        repro_cli("run", "tma-copy", "--python", str(tmp_path / "v" / "bin" / "python")),
        "cannot import triton",
    )


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--timeout", "inf"], "--timeout"),
        (["--timeout", "-1"], "--timeout"),
        (["--memory-cap", "nan"], "--memory-cap"),
        (["--python", "/nonexistent"], "/nonexistent"),
        (["-t", ""], "--target"),
        (["-c", ""], "--configs"),
        (["-t", "sm_80"], "nothing to run"),
        (["-t", "sm_42"], "sm_42"),
    ],
)
def test_bad_run_options(tmp_path, args, needle):
    _bad(repro_cli("run", "tma-copy", *args, "-o", str(tmp_path / "out")), needle)
    assert not (tmp_path / "out").exists()


def test_output_root_that_is_a_file(tmp_path):
    (tmp_path / "file").write_text("x")
    _bad(repro_cli("run", "tma-copy", "-o", str(tmp_path / "file")), "not a folder")
    assert (tmp_path / "file").read_text() == "x"


@pytest.mark.parametrize(
    "text, needle",
    [
        (b"\xff\xfe- {BLOCK_M: 64}\n", "unreadable config file"),
        (b"- {BLOCK_M: 64.0, BLOCK_N: 64, num_warps: 4, num_stages: 2, dtype: fp16}\n", "64.0"),
        (b"- {BLOCK_M: 64, BLOCK_N: 64, num_warps: 4, num_stages: true, dtype: fp16}\n", "True"),
    ],
)
def test_config_file_bytes_and_types(tmp_path, text, needle):
    path = tmp_path / "configs.yaml"
    path.write_bytes(text)
    _bad(repro_cli("run", "tma-copy", "--config-file", str(path)), needle)


@pytest.mark.parametrize(
    "good, bad, needle", [("abc", "3.5.0", "abc"), ("3.5.0", "3.5.0", "says nothing")]
)
def test_bisect_range_that_says_nothing(tmp_path, good, bad, needle):
    finding = tmp_path / "f.json"
    kept = (DATA / "findings" / "tma-gemm-prefetch-assign-latencies-3.5.0.json").read_text()
    finding.write_text(kept)
    _bad(repro_cli("bisect", str(finding), "--good", good, "--bad", bad), needle)
    assert finding.read_text() == kept
