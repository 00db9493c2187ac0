"""The engine survives real children that segfault, abort, hang, flood and hoard memory."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from suite.engine.isolate import Bounds, run_isolated
from tests.conftest import repro_cli

C_PROGRAMS = {
    "segv": "int main(void){ volatile int *p = 0; return *p; }",
    "spin": "int main(void){ for(;;){} }",
}


@pytest.fixture(scope="module")
def c_binaries(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("c")
    built = {}
    for name, source in C_PROGRAMS.items():
        (folder / f"{name}.c").write_text(source)
        subprocess.run(
            ["gcc", "-O0", "-o", str(folder / name), str(folder / f"{name}.c")], check=True
        )
        built[name] = folder / name
    return built


def test_c_segfault_is_reported_as_signal(c_binaries):
    exit = run_isolated([str(c_binaries["segv"])])
    assert exit.signal_name == "SIGSEGV"
    assert not exit.timed_out


def test_c_infinite_loop_is_killed_at_the_timeout(c_binaries):
    exit = run_isolated([str(c_binaries["spin"])], bounds=Bounds(timeout_s=1.0))
    assert exit.timed_out
    assert exit.signal_name == "SIGKILL"


def test_output_flood_is_bounded_but_counted():
    flood = "import sys\nfor _ in range(1024): sys.stdout.buffer.write(b'y' * (1 << 20))"
    exit = run_isolated(["python", "-c", flood], bounds=Bounds(output_bytes=1 << 16))
    assert exit.returncode == 0
    assert exit.stdout.total_bytes == 1 << 30
    assert exit.stdout.truncated
    assert len(exit.stdout.text) < (1 << 16) + 200


@pytest.mark.parametrize("cap", [None, 4 << 30])
def test_memory_is_measured_only_under_a_cap(cap):
    """Without a cap (``repro capture``'s program by default) the supervisor never walks
    the case's memory maps, which holds the case's mmap lock while it reads them."""
    hold = "import time; held = bytearray(64 << 20); time.sleep(1.5)"
    exit = run_isolated(["python", "-c", hold], bounds=Bounds(memory_bytes=cap))
    assert exit.returncode == 0
    assert (exit.peak_memory_bytes >= 64 << 20) == (cap is not None)
    assert (exit.peak_memory_bytes == 0) == (cap is None)


def test_grandchild_in_its_own_session_is_killed():
    script = (
        "import subprocess\n"
        "subprocess.Popen(['sleep', '999.75'], start_new_session=True,"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "subprocess.Popen(['sleep', '999.5'])\n"
    )
    fds = len(os.listdir("/proc/self/fd"))
    exit = run_isolated(["python", "-c", script], bounds=Bounds(timeout_s=30))
    assert exit.returncode == 0
    time.sleep(0.2)
    assert not _sleepers("999.75", "999.5")
    # Killed by the keeper the case ran under (a child subreaper), which says how many.
    assert exit.stragglers_killed == 2
    assert len(os.listdir("/proc/self/fd")) == fds


def test_exit_status_and_signal_come_through_the_keeper(c_binaries):
    assert run_isolated(["sh", "-c", "exit 7"]).returncode == 7
    assert run_isolated(["sh", "-c", "kill -ABRT $$"]).signal_name == "SIGABRT"
    with pytest.raises(FileNotFoundError):
        run_isolated(["/nonexistent/program"])
    with pytest.raises(PermissionError):
        run_isolated([str(c_binaries["segv"]) + ".c"])  # exists, not executable


def _sleepers(*tags: str) -> list[int]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if len(cmdline) == 2 and cmdline[0] == "sleep" and cmdline[1] in tags:
            found.append(proc.pid)
    return found


def test_run_survives_every_misbehaving_case(planted, tmp_path):
    """One run holding every kind of misbehaviour: each case gets its own verdict."""
    done = repro_cli(
        "run",
        str(planted),
        "--configs",
        "all",
        "--timeout",
        # The hangs wait this long; the 1 GiB flood must end well within it on a loaded
        # machine (at 6 s it timed out twice under a load of 10 on two cores).
        "15",
        "--memory-cap",
        "1",
        "-j",
        "2",
        "-o",
        str(tmp_path / "out"),
    )
    assert done.code == 1, done.stderr
    assert "Traceback" not in done.stderr
    results = _results(tmp_path / "out")
    outcome = {r["config"]["mode"]: r for r in results}
    assert set(outcome) == {
        "ok",
        "segv",
        "abort",
        "pyhang",
        "chang",
        "flood",
        "oom",
        "orphan",
        "exit",
        "raise",
    }
    assert outcome["ok"]["outcome"] == "passed"
    assert outcome["segv"]["outcome"] == "crash"
    assert outcome["segv"]["detail"]["signal"] == "SIGSEGV"
    assert outcome["abort"]["detail"]["signal"] == "SIGABRT"
    assert outcome["pyhang"]["outcome"] == "timeout"
    assert outcome["chang"]["outcome"] == "timeout"
    assert outcome["oom"]["outcome"] == "crash"
    assert outcome["oom"]["detail"]["memory_cap"] is True
    assert outcome["exit"]["outcome"] == "crash"
    assert outcome["exit"]["signature"] == "crash:exit-7:compile"
    assert outcome["raise"]["outcome"] == "compiler-error"
    flood = outcome["flood"]
    assert flood["outcome"] == "compiler-error"
    assert flood["detail"]["output_bytes"]["stdout"] >= 1 << 30
    assert Path(flood["artifacts"]["stdout.txt"]).stat().st_size < 2 << 20
    assert outcome["orphan"]["outcome"] == "passed"
    assert not _sleepers("1000.25", "1000.5")
    # The hang names where it hung: faulthandler's dump precedes the kill.
    stderr = Path(outcome["pyhang"]["artifacts"]["stderr.txt"]).read_text()
    assert "compile_case" in stderr


def test_signature_ignores_addresses_paths_and_numbers(planted, tmp_path):
    config = tmp_path / "configs.yaml"
    config.write_text("- {mode: raise, tag: 1}\n- {mode: raise, tag: 2}\n")
    done = repro_cli("run", str(planted), "--config-file", str(config), "-o", str(tmp_path))
    assert done.code == 1
    signatures = {r["signature"] for r in _results(tmp_path)}
    assert len(signatures) == 1
    (signature,) = signatures
    assert "0x7f3a12" not in signature and "/tmp" not in signature


def _results(root: Path) -> list[dict]:
    (run,) = (root / "runs").iterdir()
    lines = (run / "results.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]
