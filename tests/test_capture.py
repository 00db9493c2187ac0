"""``repro capture``: real programs, real compiles, real child processes, no GPU.

- under Triton 3.5.0 a program of several kernels dies in TritonGPUAssignLatencies; the
  capture (through a shell, so the hook follows the program into a child) gives a
  reproducer file that fails the same way in isolation, and ``repro report --verify``
  turns its finding into a repro.py that reproduces in a clean venv;
- under 3.2.0 a program is killed by LLVM's abort inside a compile (upstream #4418): its
  write-ahead record survives and reproduces;
- the hook records one specialization the same way on 3.0.0, 3.2.0 and 3.9.0;
- a program that does not fail behaves the same with the hook: output, exit status,
  and the set of kernels compiled (Triton's cache keys);
- the program runs in the suite's isolation: nothing it started survives the capture
  (a double fork that never execs, a setsid'd exec with an empty environment), its
  --timeout kills it, its stdin and stdout are its own (stdout on stderr with --json);
- a launch is written ahead, so a failure reported after the launch (an exception at the
  next synchronize, a death by a signal) is tied to the process's last launch and given
  launch code; these are checked on the records the hook writes on this machine (no GPU:
  the launch itself fails here, and the record's target is set to a GPU's by hand).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import jsonschema
import psutil
import pytest

from suite.engine.same_bug import is_same_bug
from tests.conftest import SOURCE_SECRET, checkout_env, triton_release

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "tests" / "data" / "capture"


def capture(
    output: Path,
    command: list[str],
    *options: str,
    cache: Path | None = None,
    stdin: str | None = None,
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    env = checkout_env()
    if cache is not None:
        env["TRITON_CACHE_DIR"] = str(cache)
    done = subprocess.run(
        [sys.executable, "-m", "suite.capture", "--output", str(output), *options, "--", *command],
        capture_output=True,
        text=True,
        env=env,
        cwd=output.parent,
        check=False,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )
    summaries = list(output.glob("captures/*/capture.json"))
    assert len(summaries) == 1, done.stderr[-3000:]
    summary = json.loads(summaries[0].read_text())
    jsonschema.validate(summary, capture_schema())  # docs/schemas.md, as --json prints it
    return done, summary


def capture_schema() -> dict[str, Any]:
    text = (ROOT / "docs" / "schemas.md").read_text()
    found = re.search(r"<!-- schema: capture -->\n```json\n(.*?)\n```", text, re.DOTALL)
    assert found, "no capture schema in docs/schemas.md"
    schema: dict[str, Any] = json.loads(found.group(1))
    return schema


def venv_python(version: str) -> str:
    """The running interpreter when its Triton is ``version``, else the release's venv."""
    if version == triton_release():
        return sys.executable
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
    # The log (no TTY) has the isolated case's full id and its signature on one line.
    case_id = failure["result"].rsplit(":", 1)[-1]
    assert case_id.startswith("captured-gemm-prefetch-")
    assert case_id.endswith("[sm_100-64-64-32-4-2]")
    assert any(f"{case_id} {failure['isolated']}" in line for line in done.stderr.splitlines())
    # The successful compiles before it left no record (no --all).
    assert summary["compile_records"] == 1
    record = json.loads(Path(failure["record"]).read_text())
    assert record["state"] == "failed" and record["triton"] == "3.5.0"
    assert record["options"] == {"num_warps": 4, "num_stages": 2}
    source = Path(failure["file"]).read_text()
    assert "'BLOCK_K': (16, 32, 64)," in source and "'num_stages': (1, 2, 3)," in source
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
def test_a_credential_in_the_programs_kernel_is_not_in_its_reproducer(tmp_path: Path) -> None:
    """The generated reproducer, the file a user hands on, is scrubbed; it still reproduces.
    (The compile records stay byte-exact: they are the evidence it was made from.)"""
    program = tmp_path / "leaky_program.py"
    anchor = "    a_desc = tl.make_tensor_descriptor("
    note = f'    """Deploy with GITHUB_TOKEN={SOURCE_SECRET}."""\n'
    text = (PROGRAMS / "several_kernels.py").read_text()
    program.write_text(text.replace(anchor, note + anchor, 1))
    done, summary = capture(tmp_path / "reports", [venv_python("3.5.0"), str(program)])
    assert done.returncode == 1, done.stderr[-3000:]
    [failure] = summary["failures"]
    assert failure["reproduced"], failure
    source = Path(failure["file"]).read_text()
    assert SOURCE_SECRET not in source and "GITHUB_TOKEN=[redacted]" in source
    assert SOURCE_SECRET not in done.stdout + done.stderr


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
    message = "LLVM ERROR: Failed to emit transfer from register to shared"
    assert failure["observed"] == f"crash:SIGABRT:compile: {message}"
    # The isolated child reports the stage it entered (the program's own abort shows none).
    assert failure["isolated"] == f"crash:SIGABRT:compile:llir: {message}"
    assert failure["reproduced"]


@pytest.mark.venv
@pytest.mark.parametrize("version", ["3.0.0", "3.2.0", "3.9.0"])
def test_the_specialization_is_recorded_alike_on_each_release(tmp_path: Path, version: str) -> None:
    python = venv_python(version)
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


@pytest.mark.triton(">=3.4")  # several_kernels.py makes tensor descriptors (3.4 on)
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


ESCAPING = """
import os, subprocess, sys, time

pids = sys.argv[1]
if os.fork() == 0:  # a double fork into its own session that never execs
    os.setsid()
    if os.fork() == 0:
        with open(pids, "a") as out:
            out.write(f"{os.getpid()}\\n")
        time.sleep(100000)
    os._exit(0)
# an exec'd sleeper in its own session with an empty environment: no token to find it by
sleeper = subprocess.Popen(["sleep", "100000"], env={}, start_new_session=True)
with open(pids, "a") as out:
    out.write(f"{sleeper.pid}\\n")
while len(open(pids).read().split()) < 2:
    time.sleep(0.05)
print("left two behind", flush=True)
"""


def test_nothing_the_program_started_survives(tmp_path: Path) -> None:
    program = tmp_path / "escaping.py"
    program.write_text(ESCAPING)
    pids_file = tmp_path / "pids"
    done, summary = capture(tmp_path / "reports", [sys.executable, str(program), str(pids_file)])
    assert done.returncode == 0 and done.stdout == "left two behind\n", done.stderr
    pids = [int(p) for p in pids_file.read_text().split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 5
    while any(psutil.pid_exists(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in pids if psutil.pid_exists(p)]
    assert summary["program"]["left_behind"] >= 2


def test_the_timeout_kills_the_program_and_stdin_and_stdout_are_its_own(tmp_path: Path) -> None:
    done, summary = capture(
        tmp_path / "hang",
        [sys.executable, "-c", "import time; print('up', flush=True); time.sleep(1000)"],
        "--timeout",
        "2",
    )
    assert done.returncode == 137 and done.stdout == "up\n"  # 128 + SIGKILL
    assert summary["program"]["timed_out"] and summary["program"]["timeout_s"] == 2
    assert "ran past --timeout" in done.stderr

    echo = [sys.executable, "-c", "import sys; print(sys.stdin.read().upper())"]
    done, summary = capture(tmp_path / "plain", echo, stdin="abc")
    assert done.returncode == 0 and done.stdout == "ABC\n"
    assert summary["program"]["timeout_s"] is None  # unbounded unless --timeout is given
    done, summary = capture(tmp_path / "json", echo, "--json", "-q", stdin="abc")
    assert json.loads(done.stdout) == summary and done.stderr == "ABC\n"


LATE = """
import os, signal, sys

import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)


class Tensor:  # what the hook reads of a torch tensor (no torch, no GPU here)
    def __init__(self, shape, dtype="torch.float16"):
        self.shape, self.dtype, self.device = shape, dtype, "cuda:0"

    def stride(self):
        return (1,)

    def data_ptr(self):
        return 0


x, y = Tensor((4096,)), Tensor((4096,))
if sys.argv[1] == "launch":
    try:  # the hook writes the launch ahead; without a GPU the launch itself then fails
        scale[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, y, 4096, 2.0, BLOCK=256)
    except Exception as exc:
        print(f"the launch failed: {type(exc).__name__}", flush=True)
    sys.exit(0)
# The launch returned (this is what the run wrapper records ahead of Triton's own run) and
# the failure surfaces later, at the next synchronize or as the process's death.
import repro_capture_launch

repro_capture_launch.write_ahead(scale, (x, y, 4096, 2.0), {"BLOCK": 256, "grid": (16,)})
if sys.argv[1] == "twice":
    repro_capture_launch.write_ahead(scale, (x, y, 64, 2.0), {"BLOCK": 64, "grid": (1,)})
if sys.argv[1] in ("later", "twice"):
    raise RuntimeError("CUDA error: an illegal memory access was encountered")
os.kill(os.getpid(), signal.SIGSEGV)
"""


def test_a_failure_after_the_launch_is_tied_to_the_last_launch(tmp_path: Path) -> None:
    from suite.capture import generate
    from suite.capture.program import ProgramRun

    program = tmp_path / "late.py"
    program.write_text(textwrap.dedent(LATE))

    # kernel[grid](...) writes the launch ahead; a launch that raises is kept as failed,
    # and that failure (not the launch record left ahead of it) is the program's failure.
    done, summary = capture(tmp_path / "launch", [sys.executable, str(program), "launch"])
    assert done.returncode == 0 and "the launch failed" in done.stdout, done.stderr
    folder = Path(summary["folder"])
    [ahead] = (folder / "last-launch").glob("*.json")  # one launch: the first of two slots
    assert ahead.name.endswith(".a.json")
    record = json.loads(ahead.read_text())
    assert record["state"] == "launching" and record["grid"] == [16, 1, 1]
    assert record["tensors"]["x_ptr"] == {
        "dtype": "float16",
        "shape": [4096],
        "strides": [1],
        "device": "cuda:0",
    }
    assert record["scalars"] == {"n": 4096, "factor": 2.0}
    assert record["constexprs"] == {"BLOCK": "256"}
    assert [f["name"] for f in record["kernel"]["functions"]] == ["scale"]
    [failed] = (folder / "launches").glob("*.json")
    assert json.loads(failed.read_text())["state"] == "failed"
    assert [f["surfaced_later"] for f in summary["failures"]] == [False]

    # An exception after the launch returned: the last launch is the failure's record.
    done, summary = capture(
        tmp_path / "later", [sys.executable, str(program), "later"], "--no-confirm"
    )
    assert done.returncode == 1
    [failure] = summary["failures"]
    assert failure["phase"] == "launch" and failure["surfaced_later"]
    assert failure["observed"] == (
        "runtime-error:launch:RuntimeError: CUDA error: an illegal memory access was encountered"
    )
    assert Path(failure["record"]).parent.name == "last-launch"
    assert failure["not_generated"] == "not a CUDA target"  # no GPU here: no target recorded

    # The same record as a GPU machine writes it (its target set by hand): launch code.
    folder = Path(summary["folder"])
    record = json.loads(Path(failure["record"]).read_text())
    record["target"] = {"backend": "cuda", "arch": 90, "warp_size": 32}
    Path(failure["record"]).write_text(json.dumps(record))
    ran = ProgramRun(summary["command"], summary["program"]["pid"], 1)
    [late] = generate.failures(folder, ran)
    source = generate.render(late)
    assert "reported after this launch returned" in source
    assert "CAPTURED_GRID = (16, 1, 1)" in source
    assert "'x_ptr': ('float16', (4096,), (1,))" in source
    assert "CAPTURED_SCALARS = {'n': 4096, 'factor': 2.0}" in source
    # Fresh inputs of those layouts, one launch: the engine synchronizes and judges it.
    assert "inputs=captured_inputs,\n    launch=launch_captured," in source
    assert "scale[CAPTURED_GRID](**tensors, **CAPTURED_SCALARS" in source
    compile(source, "captured.py", "exec")

    # Death by a signal after the launch: the program's own process, so the signal is known.
    done, summary = capture(
        tmp_path / "signal", [sys.executable, str(program), "signal"], "--no-confirm"
    )
    assert done.returncode == 128 + 11
    [failure] = summary["failures"]
    assert failure["surfaced_later"] and failure["observed"].startswith("crash:SIGSEGV:launch")


UPSTREAM = """
import importlib.util
import sys

import triton
from triton.backends.compiler import AttrsDescriptor, GPUTarget
from triton.compiler import ASTSource

# The upstream reproducer's own kernel (triton-lang/triton#4418), compiled the way a
# program on Triton 3.2 compiles a kernel directly.
spec = importlib.util.spec_from_file_location("upstream_4418", sys.argv[1])
upstream = importlib.util.module_from_spec(spec)
spec.loader.exec_module(upstream)
[config] = upstream.REPRO.configs["trigger"]
constants = {k: v for k, v in config.items() if k != "num_warps"}
source = ASTSource(
    upstream.scaled_dot,
    {"out_ptr": "*fp16", "stride_m": "i32", "stride_h": "i32"},
    constants,
    AttrsDescriptor.from_hints({0: 16, 1: 16, 2: 16}),
)
print("compiling the upstream kernel", flush=True)
triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": config["num_warps"]})
"""


@pytest.mark.venv
def test_an_upstream_bug_captured_from_a_program_reports_verified(tmp_path: Path) -> None:
    """triton-lang/triton#4418 (repros/upstream/hopper_chained_dot_layout.py), its kernel
    compiled by a program under 3.2.0: capture, then ``repro report --verify`` gives a
    repro.py that reproduces in the clean 3.2.0 venv."""
    program = tmp_path / "upstream_program.py"
    program.write_text(UPSTREAM)
    upstream = ROOT / "repros" / "upstream" / "hopper_chained_dot_layout.py"
    output = tmp_path / "reports"
    done, summary = capture(output, [venv_python("3.2.0"), str(program), str(upstream)])
    assert done.returncode == 134, done.stderr[-3000:]
    [failure] = summary["failures"]
    assert failure["kernel"] == "scaled_dot" and failure["reproduced"], failure
    source = Path(failure["file"]).read_text()
    assert "'ZERO_OPERANDS': True" in source and f"{upstream}:" in source

    arguments = ["report", failure["finding"], "--verify", "--output", str(output), "--json"]
    report = subprocess.run(
        [sys.executable, "-m", "suite.cli.main", *arguments, "-q"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env=checkout_env(),
    )
    assert report.returncode == 0, report.stderr[-3000:]
    verification = json.loads(report.stdout)["verification"]
    assert verification["ok"] and verification["version"] == "3.2.0", verification
    # Read back from repro.py's output: a fresh process's abort loses faulthandler's frames,
    # but repro.py's child names each stage it enters, as the engine's child does.
    assert verification["signature"] == failure["isolated"]
    assert is_same_bug(verification["signature"], failure["isolated"])
    repro = (output / failure["finding"] / "repro.py").read_text()
    assert "import suite" not in repro and "from suite" not in repro  # standalone


def _on_a_terminal(command: list[str], send: bytes, limit_s: float = 20) -> tuple[int, str]:
    """Run ``repro capture -- command`` on a pseudo-terminal; type ``send`` once it is ready."""
    import pty
    import select

    argv = [sys.executable, "-m", "suite.capture", "-o", "reports", "--", *command]
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child becomes the command
        os.environ["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])
        )
        os.execv(argv[0], argv)
    out, sent, started = b"", False, time.monotonic()
    while time.monotonic() - started < limit_s:
        if select.select([fd], [], [], 0.2)[0]:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        if not sent and b"ready" in out:
            os.write(fd, send)
            sent = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def test_the_terminal_stays_the_programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The program's group is the terminal's foreground job: it reads the terminal, and
    Ctrl-C interrupts it (a KeyboardInterrupt, exit 130), as without ``repro capture``."""
    monkeypatch.chdir(tmp_path)
    ask = "print('ready', flush=True); print('got', input())"
    code, shown = _on_a_terminal([sys.executable, "-c", ask], b"bob\n")
    assert code == 0 and "got bob" in shown, shown
    wait = "import time; print('ready', flush=True); time.sleep(60)"
    code, shown = _on_a_terminal([sys.executable, "-c", wait], b"\x03")
    assert code == 130 and "KeyboardInterrupt" in shown, shown


def test_the_latest_launch_survives_a_torn_slot(tmp_path: Path) -> None:
    """Two launches fill the two slots; a slot torn by a death mid-write (or holding an
    older record's tail after its end) leaves the launch before as the last one."""
    from suite.capture.site.repro_capture_records import load_last_launches

    program = tmp_path / "late.py"
    program.write_text(textwrap.dedent(LATE))
    done, summary = capture(tmp_path / "r", [sys.executable, str(program), "twice"], "--no-confirm")
    assert done.returncode == 1
    slots = Path(summary["folder"]) / "last-launch"
    [(path, latest)] = load_last_launches(slots).values()
    assert path.name.endswith(".b.json") and latest.grid == [1, 1, 1]
    [failure] = summary["failures"]
    assert failure["record"] == str(path)  # the failure is tied to the second launch
    first = slots / path.name.replace(".b.", ".a.")
    first.write_text(first.read_text() + "\n}]  tail of an older, longer record")
    path.write_text(path.read_text()[: len(path.read_text()) // 2])  # torn mid-write
    [(path, latest)] = load_last_launches(slots).values()
    assert path == first and latest.grid == [16, 1, 1]


@pytest.mark.venv
def test_the_hook_needs_only_its_own_folder(tmp_path: Path) -> None:
    """Under a venv that holds triton alone, with nothing but ``suite/capture/site`` on the
    program's PYTHONPATH (``suite`` is not importable there), sitecustomize finds the
    hook's modules and the compile is recorded."""
    from suite.capture.program import SITE
    from suite.toolchain.venvs import for_version

    # The release's own venv even where the tests run under 3.5.0: this interpreter has the
    # suite installed, and the point is a Python without it.
    python = str(for_version("3.5.0").python)
    program = [python, str(PROGRAMS / "several_kernels.py"), "--only-good"]
    done, summary = capture(
        tmp_path / "reports", ["env", f"PYTHONPATH={SITE}", *program], "--all", "--no-confirm"
    )
    assert done.returncode == 0, done.stderr
    assert summary["hook_errors"] == "" and summary["compile_records"] == 2
    probe = "import repro_capture_hook, importlib.util as u; print(u.find_spec('suite'))"
    found = subprocess.run(
        [python, "-c", probe],
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(SITE)},
        cwd=tmp_path,
        check=True,
    )
    assert found.stdout == "None\n"  # the hook's modules import without the suite


LINGERING = """
import os, signal, sys, time

def stop(signum, frame):
    print(f"stopped by {signal.Signals(signum).name}", flush=True)
    sys.exit(7)

signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)
if os.fork() == 0:  # a double fork into its own session that never execs
    os.setsid()
    if os.fork() == 0:
        print(os.getpid(), flush=True)
        time.sleep(100000)
    os._exit(0)
time.sleep(0.5)
print(os.getpid(), flush=True)
time.sleep(60)
"""


def _capturing(tmp_path: Path) -> tuple[subprocess.Popen[str], list[int]]:
    """``repro capture`` of LINGERING, once it printed its escaped grandchild's pid and its own."""
    output = str(tmp_path / "reports")
    command = [sys.executable, "-c", LINGERING]
    capturing = subprocess.Popen(
        [sys.executable, "-m", "suite.capture", "-o", output, "--", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
        env=checkout_env(),
    )
    assert capturing.stdout is not None
    return capturing, [int(capturing.stdout.readline()) for _ in range(2)]


def _gone(pids: list[int]) -> list[int]:
    deadline = time.monotonic() + 5
    while any(psutil.pid_exists(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [p for p in pids if psutil.pid_exists(p)]


def test_the_program_and_what_escaped_it_die_with_a_killed_capture(tmp_path: Path) -> None:
    """SIGKILL of ``repro capture`` (which can pass nothing on) still ends the program and a
    descendant that left its session and never exec'd: the keeper between them kills both."""
    capturing, pids = _capturing(tmp_path)
    capturing.kill()
    capturing.wait()
    assert _gone(pids) == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_capture_reaches_the_program_first(tmp_path: Path, signum: int) -> None:
    """SIGINT (to the program's group) and a first SIGTERM (to the program) are the
    program's to handle: it exits as it chooses, and capture exits with its status."""
    capturing, pids = _capturing(tmp_path)
    capturing.send_signal(signum)
    out, _ = capturing.communicate(timeout=60)
    assert out == f"stopped by {signal.Signals(signum).name}\n"
    assert capturing.returncode == 7
    assert _gone(pids) == []
