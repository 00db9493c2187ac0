"""On a GPU machine: which way of faulting leaves the GPU refusing new CUDA contexts.

A reduction of a launch fault on an H100 left the GPU refusing every new context three
times (issue 37). Its candidates fault many at a time, some hang and are killed, and some
fault while other processes launch. This runs each of those on its own, least destructive
first, and after each one asks a fresh process for a CUDA context
(``suite.engine.gpu_check``), reads the kernel log's new ``Xid`` lines (``dmesg``, when
readable) and ``nvidia-smi``'s view of the GPU. It stops at the first scenario after which
the GPU gives no context: what comes after says nothing.

Scenarios (``--scenarios`` picks and orders them; run the later ones in a fresh device call
when an earlier one broke the GPU):

- ``serial-faults``: ``--faults`` processes one after another, each launching a kernel
  that stores 2**40 elements past its buffer (an illegal address) and synchronizing;
- ``fault-beside-launch``: one process runs a kernel for seconds while another faults;
- ``killed-hang``: a process launches a kernel that spins forever and is SIGKILLed while
  it runs (``--hangs`` times, one at a time);
- ``killed-hangs-at-once``: ``--hangs`` such processes at once, all SIGKILLed;
- ``concurrent-faults``: ``--faults`` faulting processes at once.

    python bench/gpu_after_faults.py
    python bench/gpu_after_faults.py --scenarios concurrent-faults --faults 14

prints a row per scenario: the processes' exit statuses, whether a fresh process made a
context after it, the new Xid lines and the GPU's state.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from suite.engine.gpu_check import context_check  # noqa: E402

PRELUDE = """
import sys, time
import torch
import triton
import triton.language as tl
"""

FAULT = (
    PRELUDE
    + """
@triton.jit
def far_store(out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets + (1 << 40), offsets.to(tl.float32), mask=offsets < n)

out = torch.zeros(1024, device="cuda")
far_store[(4,)](out, 1024, BLOCK=256)
torch.cuda.synchronize()
print("no fault", flush=True)
"""
)

SPIN = (
    PRELUDE
    + """
@triton.jit
def spin(flag_ptr, out_ptr):
    seen = tl.load(flag_ptr, volatile=True)
    while seen == 0:
        seen = tl.load(flag_ptr, volatile=True)
    tl.store(out_ptr, seen)

flag = torch.zeros(1, dtype=torch.int32, device="cuda")
out = torch.zeros(1, dtype=torch.int32, device="cuda")
spin[(1,)](flag, out)
print("launched", flush=True)
torch.cuda.synchronize()
"""
)

BUSY = (
    PRELUDE
    + """
@triton.jit
def busy(out_ptr, n):
    total = 0
    for _ in range(n):
        total += tl.load(out_ptr, volatile=True)
    tl.store(out_ptr + 1, total)

out = torch.zeros(2, dtype=torch.int32, device="cuda")
busy[(1,)](out, 2)  # compiled and loaded before the timed launch (1 would specialize)
torch.cuda.synchronize()
print("launched", flush=True)
start = time.monotonic()
busy[(1,)](out, int(sys.argv[1]))
torch.cuda.synchronize()
print(f"ran {time.monotonic() - start:.1f} s", flush=True)
"""
)


class Lab:
    """The scripts, a shared Triton cache (built once), and the processes' exit statuses."""

    def __init__(self, folder: Path, faults: int, hangs: int, busy_iterations: int) -> None:
        self.folder = folder
        self.faults = faults
        self.hangs = hangs
        self.busy_iterations = busy_iterations
        for name, text in (("fault", FAULT), ("spin", SPIN), ("busy", BUSY)):
            (folder / f"{name}.py").write_text(text)  # Triton reads a kernel's source file

    def start(self, name: str, *args: str) -> subprocess.Popen[str]:
        command = [sys.executable, str(self.folder / f"{name}.py"), *args]
        return subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )

    def wait_for_line(self, process: subprocess.Popen[str], timeout_s: float = 120.0) -> str:
        """The process's first line (its ``launched``), or '' if it ended or took too long."""
        assert process.stdout is not None
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if line.strip() in ("launched", "no fault") or not line:
                return line.strip()
        return ""


def _statuses(processes: list[subprocess.Popen[str]], timeout_s: float = 300.0) -> list[int]:
    codes = []
    for process in processes:
        try:
            codes.append(process.wait(timeout=timeout_s))
        except subprocess.TimeoutExpired:
            process.kill()
            codes.append(process.wait())
    return codes


def serial_faults(lab: Lab) -> list[int]:
    return [_statuses([lab.start("fault")])[0] for _ in range(lab.faults)]


def concurrent_faults(lab: Lab) -> list[int]:
    return _statuses([lab.start("fault") for _ in range(lab.faults)])


def fault_beside_launch(lab: Lab) -> list[int]:
    busy = lab.start("busy", str(lab.busy_iterations))
    lab.wait_for_line(busy)
    time.sleep(0.5)  # its long launch is running
    fault = lab.start("fault")
    codes = _statuses([fault, busy])
    assert busy.stdout is not None
    ran = [line.strip() for line in busy.stdout if line.startswith("ran ")]
    print(f"  the long launch: {ran[-1] if ran else 'did not finish'} (the fault came ~3 s in)")
    return codes


def _killed_hangs(lab: Lab, at_once: int) -> list[int]:
    spinning = [lab.start("spin") for _ in range(at_once)]
    for process in spinning:
        lab.wait_for_line(process)
    time.sleep(2.0)  # the kernels spin
    for process in spinning:
        process.send_signal(signal.SIGKILL)
    return _statuses(spinning)


def killed_hang(lab: Lab) -> list[int]:
    return [code for _ in range(lab.hangs) for code in _killed_hangs(lab, 1)]


def killed_hangs_at_once(lab: Lab) -> list[int]:
    return _killed_hangs(lab, lab.hangs)


SCENARIOS: dict[str, Callable[[Lab], list[int]]] = {
    "serial-faults": serial_faults,
    "fault-beside-launch": fault_beside_launch,
    "killed-hang": killed_hang,
    "killed-hangs-at-once": killed_hangs_at_once,
    "concurrent-faults": concurrent_faults,
}


def _kernel_log() -> list[str] | None:
    """The kernel log's Xid lines, or None when it cannot be read here."""
    try:
        ran = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if ran.returncode != 0:
        return None
    return [line for line in ran.stdout.splitlines() if "Xid" in line]


def _gpu_state() -> str:
    query = "--query-gpu=name,driver_version,utilization.gpu,pstate,memory.used"
    try:
        ran = subprocess.run(
            ["nvidia-smi", query, "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"nvidia-smi: {exc}"
    return (
        (ran.stdout.strip() or ran.stderr.strip()).splitlines()[0]
        if ran.stdout or ran.stderr
        else ""
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    parser.add_argument("--faults", type=int, default=8)
    parser.add_argument("--hangs", type=int, default=4)
    parser.add_argument("--busy-iterations", type=int, default=20_000_000)
    parser.add_argument("--gpu", default="0", help="the CUDA_VISIBLE_DEVICES id checked")
    args = parser.parse_args()
    print(f"GPU: {_gpu_state()}")
    before = context_check(args.gpu)
    print(f"before: {before or 'a fresh process made a CUDA context'}")
    if before:
        return 1
    xids = _kernel_log()
    if xids is None:
        print("dmesg: not readable here (no Xid lines)")
    rows = []
    with tempfile.TemporaryDirectory(prefix="gpu-after-faults-") as scratch:
        lab = Lab(Path(scratch), args.faults, args.hangs, args.busy_iterations)
        _statuses([lab.start("fault")])  # builds the kernel and Triton's launcher once
        for name in args.scenarios:
            start = time.monotonic()
            codes = SCENARIOS[name](lab)
            seconds = time.monotonic() - start
            after = context_check(args.gpu)
            now = _kernel_log()
            new = [] if now is None or xids is None else now[len(xids) :]
            xids = now
            shown = ",".join(f"{c}x{codes.count(c)}" for c in sorted(set(codes)))
            rows.append((name, shown, after or "ok", seconds, new, _gpu_state()))
            print(f"{name}: exits {shown}, context after: {after or 'ok'} ({seconds:.1f} s)")
            for line in new:
                print(f"  {line}")
            sys.stdout.flush()
            if after:
                break
    print("\nscenario\tprocess exits\tfresh context after\tseconds\tnew Xid lines\tGPU")
    for name, shown, after, seconds, new, state in rows:
        xid = "; ".join(line.split("Xid", 1)[1].strip()[:60] for line in new) or "-"
        print(f"{name}\t{shown}\t{after}\t{seconds:.1f}\t{xid}\t{state}")
    skipped = args.scenarios[len(rows) :]
    if skipped:
        print(f"not run (the GPU stopped giving contexts): {', '.join(skipped)}")
    return 1 if rows and rows[-1][2] != "ok" else 0


if __name__ == "__main__":
    sys.exit(main())
