"""On a GPU machine: what ``repro capture`` adds to a program that launches kernels.

Two workloads, each a program that times its own loop (after a warm-up that compiles):

- ``launches``: 3000 launches of a small masked ``scaled_add`` Triton kernel (4096 fp32
  elements), one synchronize at the end: microseconds per launch;
- ``mlp``: a ``torch.compile``d training step of an MLP (Linear, GELU, LayerNorm, Linear,
  MSE loss, backward, SGD) on Inductor's Triton kernels, 200 steps: milliseconds per step.

Each round runs every workload plain and under ``repro capture`` (the order alternating
from round to round, a discarded warm-up round first, one Triton and Inductor cache shared
by all runs), and the medians over the rounds are compared:

    python bench/capture_overhead.py --rounds 5

prints a row per workload and run, then the added microseconds per launch and the ratio per
training step against the targets (at most 3 us per launch, at most 2% per step).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAUNCHES = 3000
STEPS = 200
TARGET_US_PER_LAUNCH = 3.0
TARGET_STEP_RATIO = 1.02


def launches_workload() -> float:
    """Microseconds per launch of 3000 ``scaled_add`` launches."""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def scaled_add(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + alpha * y, mask=mask)

    n = 4096
    x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    for _ in range(50):
        scaled_add[grid](x, y, out, n, 0.5, BLOCK=1024)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(LAUNCHES):
        scaled_add[grid](x, y, out, n, 0.5, BLOCK=1024)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    assert torch.allclose(out, x + 0.5 * y)
    return elapsed / LAUNCHES * 1e6


def mlp_workload() -> float:
    """Milliseconds per step of a ``torch.compile``d MLP training step."""
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 1024),
        torch.nn.GELU(),
        torch.nn.LayerNorm(1024),
        torch.nn.Linear(1024, 512),
    ).cuda()
    compiled = torch.compile(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    inputs, targets = torch.randn(256, 512, device="cuda"), torch.randn(256, 512, device="cuda")

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.mse_loss(compiled(inputs), targets).backward()
        optimizer.step()

    for _ in range(20):
        step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(STEPS):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / STEPS * 1e3


WORKLOADS = {"launches": (launches_workload, "us/launch"), "mlp": (mlp_workload, "ms/step")}


def _run(workload: str, captured: bool, folder: Path, env: dict[str, str]) -> float:
    result = folder / f"result-{workload}-{captured}-{time.monotonic_ns()}.json"
    child = [sys.executable, str(Path(__file__).resolve()), "--child", workload, str(result)]
    if captured:
        reports = folder / "reports"
        command = [sys.executable, "-m", "suite.capture", "--output", str(reports), "-q"]
        command += ["--no-confirm", "--", *child]
    else:
        command = child
    ran = subprocess.run(command, env=env, cwd=folder, capture_output=True, text=True)
    if ran.returncode != 0 or not result.exists():
        sys.exit(
            f"{workload} ({'captured' if captured else 'plain'}) failed:\n{ran.stderr[-3000:]}"
        )
    value: float = json.loads(result.read_text())
    return value


def _versions() -> str:
    """The date, GPU, driver, torch and triton (what a figure is recorded with)."""
    ran = subprocess.run(
        [
            sys.executable,
            "-c",
            "import torch, triton; print(torch.__version__, triton.__version__)",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        smi = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        smi = "no nvidia-smi"
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return f"{stamp}; {smi}; torch, triton: {ran.stdout.strip() or ran.stderr.strip()[-200:]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=WORKLOADS)
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "RESULT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        workload, result = args.child
        Path(result).write_text(json.dumps(WORKLOADS[workload][0]()))
        return 0
    print(_versions())
    with tempfile.TemporaryDirectory(prefix="capture-overhead-") as scratch:
        folder = Path(scratch)
        env = {**os.environ, "TRITON_CACHE_DIR": str(folder / "triton-cache")}
        env["TORCHINDUCTOR_CACHE_DIR"] = str(folder / "inductor-cache")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        seen: dict[tuple[str, bool], list[float]] = {}
        print("round\tworkload\trun\tvalue")
        for round_ in range(args.rounds + 1):  # round 0 warms the caches: discarded
            order = (False, True) if round_ % 2 else (True, False)
            for workload in args.workloads:
                for captured in order:
                    value = _run(workload, captured, folder, env)
                    run = "captured" if captured else "plain"
                    print(f"{round_}\t{workload}\t{run}\t{value:.3f} {WORKLOADS[workload][1]}")
                    sys.stdout.flush()
                    if round_:
                        seen.setdefault((workload, captured), []).append(value)
    print()
    verdicts = []
    for workload in args.workloads:
        plain = statistics.median(seen[(workload, False)])
        captured = statistics.median(seen[(workload, True)])
        unit = WORKLOADS[workload][1]
        if workload == "launches":
            added = captured - plain
            ok = added <= TARGET_US_PER_LAUNCH
            line = f"added {added:.2f} us per launch (target <= {TARGET_US_PER_LAUNCH})"
        else:
            ratio = captured / plain
            ok = ratio <= TARGET_STEP_RATIO
            line = f"ratio {ratio:.3f} per step (target <= {TARGET_STEP_RATIO})"
        verdicts.append(ok)
        print(
            f"{workload}: plain {plain:.3f} {unit}, captured {captured:.3f} {unit} "
            f"(medians of {args.rounds}): {line}: {'met' if ok else 'NOT met'}"
        )
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
