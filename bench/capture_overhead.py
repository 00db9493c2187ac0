"""On a GPU machine: what ``repro capture`` adds to a program that launches kernels.

Two workloads, each timed by the program itself in rounds:

- ``launches``: ``--launches`` launches a round of a small masked ``scaled_add`` Triton
  kernel (4096 fp32 elements, ``kernel[grid](...)``), one synchronize at the end of the
  round: microseconds per launch;
- ``mlp``: ``--steps`` steps a round of a ``torch.compile``d MLP training step (Linear,
  GELU, LayerNorm, Linear, MSE loss, backward, SGD) on Inductor's Triton kernels, a
  synchronize at the end of the round: milliseconds per step.

Each workload runs in two long-lived processes, one plain and one under ``repro capture``
(started side by side; one Triton and Inductor cache shared; each compiles and warms up
once). Then ``--pairs`` pairs of rounds, the two processes taking turns (the one GPU is
never shared within a round), which of the two goes first alternating from pair to pair.
A round is asked for and answered through two FIFOs, so the processes stay warm and many
short rounds fit where few whole runs did.

    python bench/capture_overhead.py

prints every round, then per workload the median of each kind with the range of its
rounds, and the paired difference (captured minus plain, per pair: what drifts over the
run, the GPU's clocks, the machine's load, cancels within a pair) with its median and a
distribution-free 95% interval for that median. Targets: at most 3 us added per launch, at
most 2% per training step; a verdict is ``met`` when the whole interval is within the
target, ``NOT met`` when all of it is beyond, else ``not resolved`` (more pairs, or a quieter
machine). Exit 0 when every target is met. ``--budget-s`` (default 80) bounds the pairs'
time: the run stops pairing there and reports the pairs it has.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
TARGET_US_PER_LAUNCH = 3.0
TARGET_STEP_RATIO = 1.02
#: A child's compile and warm-up, at most (a cold Inductor compile of the MLP under the hook).
START_S = 240.0

#: A round of a workload: how many launches or steps -> the time of one, in its unit.
Round = Callable[[int], float]


def launches_workload() -> tuple[Round, str]:
    """Microseconds per launch of ``scaled_add``."""
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
    for _ in range(200):
        scaled_add[grid](x, y, out, n, 0.5, BLOCK=1024)
    torch.cuda.synchronize()
    if not torch.allclose(out, x + 0.5 * y):
        raise SystemExit("scaled_add computed a wrong sum")

    def one_round(count: int) -> float:
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(count):
            scaled_add[grid](x, y, out, n, 0.5, BLOCK=1024)
        torch.cuda.synchronize()
        return (time.perf_counter() - start) / count * 1e6

    return one_round, "1 kernel[grid] launch a launch"


def mlp_workload() -> tuple[Round, str]:
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

    for _ in range(30):
        step()
    torch.cuda.synchronize()
    launches = _inductor_launches_in(step)

    def one_round(count: int) -> float:
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(count):
            step()
        torch.cuda.synchronize()
        return (time.perf_counter() - start) / count * 1e3

    return one_round, f"{launches} Inductor kernel launches a step"


def _inductor_launches_in(step: Callable[[], None]) -> int:
    """How many launches of Inductor's kernels one step makes (counted once, in the warm-up:
    ``CachingAutotuner.run`` wrapped for that step alone, the hook's wrapper under it)."""
    from torch._inductor.runtime import triton_heuristics

    tuner = triton_heuristics.CachingAutotuner
    run, counted = tuner.run, [0]

    def counting(self: object, *args: object, **kwargs: object) -> object:
        counted[0] += 1
        return run(self, *args, **kwargs)

    tuner.run = counting
    try:
        step()
    finally:
        tuner.run = run
    return counted[0]


WORKLOADS = {
    "launches": (launches_workload, "us/launch"),
    "mlp": (mlp_workload, "ms/step"),
}


def serve(workload: str, requests: str, replies: str) -> int:
    """The child: set the workload up, say so, then run a round per request line (a count)
    and answer its time, until ``stop``."""
    one_round, facts = WORKLOADS[workload][0]()
    with open(requests) as asked, open(replies, "w") as answers:
        answers.write(json.dumps({"ready": facts}) + "\n")
        answers.flush()
        for line in asked:
            if line.strip() == "stop":
                break
            answers.write(json.dumps({"value": one_round(int(line))}) + "\n")
            answers.flush()
    return 0


@dataclass
class Child:
    """One long-lived workload process (plain or captured) and its FIFOs."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    ask: IO[str] | None = None
    answer: IO[str] | None = None

    def connect(self, requests: Path, replies: Path) -> str:
        """Wait for the child's set-up (at most ``START_S``), then hold both FIFOs."""
        deadline = time.monotonic() + START_S
        while True:  # the child opens ``requests`` once set up: a writer opens then
            try:
                descriptor = os.open(requests, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:  # no reader yet (ENXIO)
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.process.kill()
                    self.process.wait()
                    tail = self.log.read_text(errors="replace")[-3000:]
                    sys.exit(
                        f"{self.name} did not get ready (exit {self.process.returncode}):\n{tail}"
                    )
                time.sleep(0.2)
        os.set_blocking(descriptor, True)
        self.ask = os.fdopen(descriptor, "w")
        self.answer = open(replies)  # noqa: SIM115 (closed by stop; the child opens it next)
        return str(self._read()["ready"])

    def run(self, count: int) -> float:
        assert self.ask is not None
        self.ask.write(f"{count}\n")
        self.ask.flush()
        return float(str(self._read()["value"]))

    def _read(self) -> dict[str, object]:
        assert self.answer is not None
        line = self.answer.readline()
        if not line:
            self.process.wait(timeout=60)
            tail = self.log.read_text(errors="replace")[-3000:]
            sys.exit(f"{self.name} ended (exit {self.process.returncode}):\n{tail}")
        answer: dict[str, object] = json.loads(line)
        return answer

    def stop(self) -> int:
        if self.ask is not None:
            self.ask.write("stop\n")
            self.ask.close()
        code = self.process.wait(timeout=120)
        if self.answer is not None:
            self.answer.close()
        return code


def start(
    workload: str, captured: bool, folder: Path, env: dict[str, str]
) -> tuple[Child, Path, Path]:
    kind = "captured" if captured else "plain"
    requests, replies = folder / f"{workload}-{kind}.ask", folder / f"{workload}-{kind}.answer"
    os.mkfifo(requests)
    os.mkfifo(replies)
    child = [sys.executable, str(Path(__file__).resolve()), "--serve", workload]
    child += [str(requests), str(replies)]
    if captured:
        reports = folder / f"reports-{workload}"
        command = [sys.executable, "-m", "suite.capture", "--output", str(reports), "-q"]
        command += ["--no-confirm", "--", *child]
    else:
        command = child
    log = folder / f"{workload}-{kind}.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(
            command, env=env, cwd=folder, stdin=subprocess.DEVNULL, stdout=output, stderr=output
        )
    return Child(f"{workload} ({kind})", process, log), requests, replies


def interval(values: list[float]) -> tuple[float, float]:
    """A distribution-free 95% interval for the median of ``values`` (order statistics of
    the binomial(n, 1/2)); the whole range when there are too few values for one."""
    ordered, n = sorted(values), len(values)
    below = 0
    # the largest k with P(Binomial(n, 1/2) < k) <= 2.5%: [x_(k), x_(n-k+1)] covers >= 95%
    for k in range(1, n // 2 + 1):
        if sum(math.comb(n, i) for i in range(k)) / 2**n <= 0.025:
            below = k
    if below == 0:
        return ordered[0], ordered[-1]
    return ordered[below - 1], ordered[n - below]


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


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=40, help="pairs of rounds a workload")
    parser.add_argument("--launches", type=int, default=5000, help="launches a round")
    parser.add_argument("--steps", type=int, default=100, help="MLP steps a round")
    parser.add_argument("--budget-s", type=float, default=80.0, help="the pairs' time, at most")
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=WORKLOADS)
    parser.add_argument("--serve", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(*args.serve)
    began = time.monotonic()
    print(_versions())
    counts = {"launches": args.launches, "mlp": args.steps}
    with tempfile.TemporaryDirectory(prefix="capture-overhead-") as scratch:
        folder = Path(scratch)
        env = {**os.environ, "TRITON_CACHE_DIR": str(folder / "triton-cache")}
        env["TORCHINDUCTOR_CACHE_DIR"] = str(folder / "inductor-cache")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        # Every process starts (compiles, warms up) side by side, before any round.
        started = {
            (w, captured): start(w, captured, folder, env)
            for w in args.workloads
            for captured in (False, True)
        }
        try:
            ready_s, seen, ends = _measure(started, args, counts, began)
        finally:  # a child left waiting on its FIFO would hold its GPU context forever
            for child, _, _ in started.values():
                if child.process.poll() is None:
                    child.process.kill()  # repro capture's keeper kills its program too
                    child.process.wait()
    print()
    print(f"processes ready in {ready_s:.1f} s; whole run {time.monotonic() - began:.1f} s")
    if any(ends.values()):
        print(f"a process did not exit 0: {ends}")
        return 1
    verdicts = [_summary(w, seen[w], counts[w]) for w in args.workloads]
    return 0 if all(verdicts) else 1


def _measure(
    started: dict[tuple[str, bool], tuple[Child, Path, Path]],
    args: argparse.Namespace,
    counts: dict[str, int],
    began: float,
) -> tuple[float, dict[str, list[tuple[float, float]]], dict[str, int]]:
    """Connect to every process, then the pairs of rounds: the seconds until all were
    ready, each workload's (plain, captured) pairs, and each process's exit status."""
    children: dict[tuple[str, bool], Child] = {}
    for key, (child, requests, replies) in started.items():
        facts = child.connect(requests, replies)
        children[key] = child
        print(f"{child.name}: ready after {time.monotonic() - began:.1f} s ({facts})")
    ready_s = time.monotonic() - began
    budget = args.budget_s / len(args.workloads)
    seen: dict[str, list[tuple[float, float]]] = {}
    print("workload\tpair\tfirst\tplain\tcaptured")
    for workload in args.workloads:
        pairs = seen.setdefault(workload, [])
        since = time.monotonic()
        for pair in range(args.pairs):
            if time.monotonic() - since > budget:
                print(f"{workload}: the budget ({budget:.0f} s) ends the pairs at {pair}")
                break
            order = (False, True) if pair % 2 == 0 else (True, False)
            value = {c: children[(workload, c)].run(counts[workload]) for c in order}
            pairs.append((value[False], value[True]))
            first = "captured" if order[0] else "plain"
            print(f"{workload}\t{pair}\t{first}\t{value[False]:.4f}\t{value[True]:.4f}")
            sys.stdout.flush()
    ends = {child.name: child.stop() for child in children.values()}
    return ready_s, seen, ends


def _summary(workload: str, pairs: list[tuple[float, float]], count: int) -> bool:
    unit = WORKLOADS[workload][1]
    plain, captured = [p for p, _ in pairs], [c for _, c in pairs]
    print(
        f"{workload}: {len(pairs)} pairs of rounds of {count}; median (range) plain "
        f"{_spread(plain)} {unit}, captured {_spread(captured)} {unit}"
    )
    if workload == "launches":
        paired, target, what = [c - p for p, c in pairs], TARGET_US_PER_LAUNCH, "us added a launch"
    else:
        paired, target, what = [c / p for p, c in pairs], TARGET_STEP_RATIO, "ratio a step"
    low, high = interval(paired)
    middle = statistics.median(paired)
    verdict = "met" if high <= target else "NOT met" if low > target else "not resolved"
    print(
        f"  paired ({what}): median {middle:.4f}, 95% interval {low:.4f} to {high:.4f}, "
        f"range {min(paired):.4f} to {max(paired):.4f} (target <= {target}): {verdict}"
    )
    return verdict == "met"


if __name__ == "__main__":
    sys.exit(main())
