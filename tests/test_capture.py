"""``repro capture``: real programs, real compiles, real child processes, no GPU.

- under Triton 3.5.0 a program of several kernels dies in TritonGPUAssignLatencies; the
  capture (through a shell, so the hook follows the program into a child) gives a
  reproducer file that fails the same way in isolation, and ``repro report --verify``
  turns its finding into a repro.py that reproduces in a clean venv;
- under 3.2.0 a program is killed by LLVM's abort inside a compile (upstream #4418): its
  write-ahead record survives and reproduces;
- the hook records one specialization the same way on 3.0.0, 3.2.0 and 3.9.0;
- a program that does not fail behaves the same with the hook: output, exit status,
  and the set of kernels compiled (Triton's cache keys).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "tests" / "data" / "capture"


def capture(
    output: Path, command: list[str], *options: str, cache: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if cache is not None:
        env["TRITON_CACHE_DIR"] = str(cache)
    done = subprocess.run(
        [sys.executable, "-m", "suite.capture", "--output", str(output), *options, "--", *command],
        capture_output=True,
        text=True,
        env=env,
        cwd=output.parent,
        check=False,
    )
    summaries = list(output.glob("captures/*/capture.json"))
    assert len(summaries) == 1, done.stderr[-3000:]
    return done, json.loads(summaries[0].read_text())


def venv_python(version: str) -> str:
    from suite.toolchain.venvs import for_version

    return str(for_version(version).python)


@pytest.mark.venv
def test_assign_latencies_in_a_child_process_reproduces_and_reports(tmp_path: Path) -> None:
    program = f"{venv_python('3.5.0')} {PROGRAMS / 'several_kernels.py'}"
    output = tmp_path / "reports"
    done, summary = capture(output, ["/bin/sh", "-c", program])
    assert done.returncode == 1  # the program's own exit status, through the shell
    assert "add_scaled: 0 bytes of shared memory" in done.stdout
    assert "RuntimeError: PassManager::run failed" in done.stderr
    [failure] = summary["failures"]
    assert failure["kernel"] == "gemm_prefetch" and failure["target"] == "sm_100"
    assert failure["observed"] == "compiler-error:ttgir:TritonGPUAssignLatencies"
    assert failure["isolated"] == failure["observed"] and failure["reproduced"]
    # The successful compiles before it left no record (no --all).
    assert summary["compile_records"] == 1
    record = json.loads(Path(failure["record"]).read_text())
    assert record["state"] == "failed" and record["triton"] == "3.5.0"
    assert record["options"] == {"num_warps": 4, "num_stages": 2}
    source = Path(failure["file"]).read_text()
    assert "Pow2('BLOCK_K', 16, 64)" in source and "Choice('num_stages', (1, 2, 3))" in source
    assert "'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 32, 'num_warps': 4, 'num_stages': 2" in source
    assert f"{PROGRAMS / 'several_kernels.py'}:37" in source  # where the kernel was defined

    report = subprocess.run(
        [
            sys.executable,
            "-m",
            "suite.cli.main",
            "report",
            failure["finding"],
            "--verify",
            "--output",
            str(output),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert "Verified: reproduces on triton 3.5.0" in report.stdout, report.stdout + report.stderr
    assert (output / failure["finding"] / "repro.py").is_file()


@pytest.mark.venv
def test_an_abort_inside_a_compile_leaves_its_record(tmp_path: Path) -> None:
    done, summary = capture(
        tmp_path / "reports", [venv_python("3.2.0"), str(PROGRAMS / "chained_dot_abort.py")]
    )
    assert done.returncode == 134  # 128 + SIGABRT, as a shell reports it
    assert done.stdout == "compiling scaled_dot for sm_90\n"
    [failure] = summary["failures"]
    record = json.loads(Path(failure["record"]).read_text())
    assert record["state"] == "started"  # written before the compile, never finished
    expected = "crash:SIGABRT:compile: LLVM ERROR: Failed to emit transfer from register to shared"
    assert failure["observed"] == expected
    assert failure["isolated"] == expected and failure["reproduced"]


@pytest.mark.venv
@pytest.mark.parametrize("version", ["3.0.0", "3.2.0", "3.9.0"])
def test_the_specialization_is_recorded_alike_on_each_release(tmp_path: Path, version: str) -> None:
    python = venv_python(version) if version != "3.9.0" else sys.executable
    done, summary = capture(
        tmp_path / "reports", [python, str(PROGRAMS / "specialized.py")], "--all", "--no-confirm"
    )
    assert done.returncode == 0 and done.stdout == "compiled copy_rows\n"
    assert summary["failures"] == []
    [path] = (Path(summary["folder"]) / "compiles").glob("*.json")
    record = json.loads(path.read_text())
    assert record["state"] == "done" and record["triton"] == version
    assert record["signature"] == {
        "src_ptr": "*fp32",
        "dst_ptr": "*fp32",
        "n": "i32",
        "offset": "i32",
    }
    assert record["constexprs"] == {"BLOCK": "64"}
    assert record["divisible"] == ["src_ptr", "dst_ptr", "n"]
    assert record["equal_to_1"] == ["stride"]
    assert record["kernel"]["values"] == [{"name": "ROWS", "python": "tl.constexpr(4)"}]
    assert record["options"]["num_warps"] == 2 and record["problems"] == []


def test_a_program_that_does_not_fail_is_unchanged(tmp_path: Path) -> None:
    command = [sys.executable, str(PROGRAMS / "several_kernels.py"), "--only-good"]
    plain_cache = tmp_path / "plain-cache"
    plain = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=dict(os.environ, TRITON_CACHE_DIR=str(plain_cache)),
        check=False,
    )
    hooked_cache = tmp_path / "hooked-cache"
    done, summary = capture(tmp_path / "reports", command, "--all", cache=hooked_cache)
    assert plain.returncode == 0 and done.returncode == 0
    assert done.stdout == plain.stdout
    assert plain.stderr in done.stderr  # the program's stderr, then the capture's lines
    # The same kernels compiled under the same cache keys: no extra compile, no changed key.
    assert sorted(p.name for p in hooked_cache.iterdir()) == sorted(
        p.name for p in plain_cache.iterdir()
    )
    assert summary["compile_records"] == 2 and summary["failures"] == []
    records = [json.loads(p.read_text()) for p in Path(summary["folder"]).glob("compiles/*.json")]
    add = next(r for r in records if r["kernel"]["name"] == "add_scaled")
    # The helper it calls and the global it reads travel with it.
    assert [f["name"] for f in add["kernel"]["functions"]] == ["scaled", "add_scaled"]
    assert add["kernel"]["values"] == [{"name": "SCALE", "python": "tl.constexpr(3)"}]


def test_no_program_is_bad_usage(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "suite.capture", "--output", str(tmp_path), "--"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "no program given" in done.stderr
