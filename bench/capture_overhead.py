"""On a GPU machine: what ``repro capture`` adds to a program that launches kernels, and
which part of it costs.

Two workloads, each timed by the program itself in rounds:

- ``launches``: ``--launches`` launches a round of a small masked ``scaled_add`` Triton
  kernel (4096 fp32 elements, ``kernel[grid](...)``), one synchronize at the end of the
  round: microseconds per launch;
- ``mlp``: ``--steps`` steps a round of a ``torch.compile``d MLP training step (Linear,
  GELU, LayerNorm, Linear, MSE loss, backward, SGD) on Inductor's Triton kernels, a
  synchronize at the end of the round: milliseconds per step.

Each workload runs in long-lived processes, its *arms*, which take turns round by round
(the one GPU is never shared within a round), the order rotating from cycle to cycle:

- ``plain``: the program alone, the reference every other arm is paired with (its round
  of the same cycle);
- ``plain-b``: a second plain process: the bench's own floor (two processes of the same
  program differ by placement, memory layout, clocks; what ``captured`` shows within this
  is not capture's);
- ``captured``: the program under ``repro capture`` (the target: at most 3 us a launch,
  at most 2% a step; its verdict line);
- ``hooked``: the program with the environment ``repro capture`` gives it (the hook armed
  in the process), without ``repro capture`` around it: ``captured`` against ``hooked``
  is what the processes around the program cost (the supervisor's polls, the keeper, the
  stderr log), ``hooked`` against ``plain`` what the hook inside it costs;
- for ``mlp``, the same ``hooked`` process again with parts of the hook switched off
  between rounds (``hooked:unkept``: Inductor's launches not kept in the ring;
  ``hooked:unhooked``: Inductor's ``run`` as Torch made it) or as it was
  (``hooked:args-kept``: the ring keeps each launch's arguments, tensors included, which
  the hook did before it kept Inductor's launches by their scalars), so that the cost of
  the launch wrapper and of what the ring keeps are measured within one process, free of
  the process-to-process floor.

The plain process of each workload starts first and alone, so that the others load its
compiled kernels and Inductor's autotuning choices from the shared caches (two processes
autotuning side by side on one GPU may choose different configs: a difference no round
can pair away); each process says, once ready, a digest of Inductor's config and of the
configs its kernels run with. Each round also returns what does not need a clock: CUDA
allocations a step (a gradient the autograd engine cannot steal is copied: one more),
device ``cudaMalloc`` calls and the garbage collector's collections and milliseconds.

    python bench/capture_overhead.py

prints every round, then per workload and arm the median with the range of its rounds and
its counters, and per arm the paired comparison with ``plain`` (the arm minus plain a
launch, the arm over plain a step) with its median and a distribution-free 95% interval
for that median; for a step also the ratio of the two arms' lower quartiles of their
rounds with a bootstrap 95% interval (interference only slows a round: the faster rounds
carry less of it). ``captured`` gets the verdict (on the paired median): ``met`` when the
whole interval is within the target, ``NOT met`` when all of it is beyond, else ``not
resolved``. Exit 0 when every target is met. ``--cycles`` (default 60) cycles a workload,
and ``--budget-s`` (default 80) bounds the rounds' time (shared by the workloads): the run
stops cycling there and reports the cycles it has.
"""

from __future__ import annotations

import argparse
import collections
import gc
import hashlib
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from suite.capture.program import environment

ROOT = Path(__file__).resolve().parent.parent
TARGET_US_PER_LAUNCH = 3.0
TARGET_STEP_RATIO = 1.02
#: A child's compile and warm-up, at most (a cold Inductor compile of the MLP under the hook).
START_S = 240.0
#: Resamples of the cycles for the lower quartiles' interval.
BOOTSTRAP = 2000
#: The reference arm, and the one the targets are about.
PLAIN, CAPTURED = "plain", "captured"
#: The processes of a workload: name -> (run under ``repro capture``, the hook's environment).
PROCESSES = {
    PLAIN: (False, False),
    "plain-b": (False, False),
    "hooked": (False, True),
    CAPTURED: (True, False),
}
#: What the ``hooked`` process switches off for a round, by workload (``full``: nothing).
HOOK_MODES = {"launches": ("full",), "mlp": ("full", "unkept", "unhooked", "args-kept")}

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
    launches, configs = _inductor_launches_in(step)

    def one_round(count: int) -> float:
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(count):
            step()
        torch.cuda.synchronize()
        return (time.perf_counter() - start) / count * 1e3

    return one_round, f"{launches} Inductor kernel launches a step, {configs}"


#: The Inductor kernels (``CachingAutotuner``) a step launches, seen by its count.
TUNERS: list[object] = []


def _inductor_launches_in(step: Callable[[], None]) -> tuple[int, str]:
    """How many launches of Inductor's kernels one step makes, and a digest of Inductor's
    config and of the config each kernel launched with (counted once, in the warm-up:
    ``CachingAutotuner.run`` wrapped for that step alone, the hook's wrapper under it)."""
    from torch._inductor import config
    from torch._inductor.runtime import triton_heuristics

    tuner = triton_heuristics.CachingAutotuner
    run, launched = tuner.run, []

    def counting(self: object, *args: object, **kwargs: object) -> object:
        TUNERS.append(self)
        launchers = getattr(self, "launchers", None) or [None]
        name = getattr(getattr(self, "fn", None), "__name__", "?")
        launched.append(f"{name}: {getattr(launchers[0], 'config', None)}")
        return run(self, *args, **kwargs)

    tuner.run = counting
    try:
        step()
    finally:
        tuner.run = run
    settings = repr(sorted(config.get_config_copy().items(), key=lambda item: item[0]))
    return len(launched), f"Inductor config {_digest(settings)}, kernel configs " + _digest(
        "\n".join(sorted(launched))
    )


def _digest(text: str) -> str:
    """A short digest of ``text``, object addresses left out (a function's differs from
    process to process)."""
    return hashlib.sha256(re.sub(r" at 0x[0-9a-f]+", "", text).encode()).hexdigest()[:10]


WORKLOADS = {
    "launches": (launches_workload, "us/launch"),
    "mlp": (mlp_workload, "ms/step"),
}


class _Counters:
    """What a round did besides taking time: CUDA allocations and device mallocs (the
    caching allocator's own counts), and the garbage collector's collections and time."""

    def __init__(self) -> None:
        self.gc_s = 0.0
        self._gc_began = 0.0
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_began = time.perf_counter()
        else:
            self.gc_s += time.perf_counter() - self._gc_began

    def now(self) -> dict[str, float]:
        import torch

        stats = torch.cuda.memory_stats()
        return {
            "allocs": float(stats.get("allocation.all.allocated", 0)),
            "mallocs": float(stats.get("segment.all.allocated", 0)),  # cudaMalloc calls
            "gc2": float(gc.get_stats()[2]["collections"]),
            "gc_ms": self.gc_s * 1e3,
        }


def _hook_modes(workload: str) -> dict[str, Callable[[], None]]:
    """In the ``hooked`` process: how to switch parts of the hook off (or back to what it
    was) for a round, through its own modules, importable there. ``unkept``: Inductor's
    launches go to an empty ring; ``unhooked``: ``CachingAutotuner.run`` as Torch made it;
    ``args-kept``: the ring keeps each launch's arguments, tensors included, as the hook
    did before it kept Inductor's launches by their scalars."""
    if HOOK_MODES[workload] == ("full",):
        return {"full": lambda: None}
    import repro_capture_inductor as hook
    from torch._inductor.runtime import triton_heuristics

    tuner = triton_heuristics.CachingAutotuner
    wrapped = tuner.run
    original = wrapped.__wrapped__
    ring = hook.KEPT_RING
    dropped: collections.deque[object] = collections.deque(maxlen=0)
    kept_so = {id(t): t.__dict__.get("_repro_capture_keep") for t in TUNERS}

    def mode(run: object, kept: collections.deque[object], all_args: bool) -> Callable[[], None]:
        def switch() -> None:
            tuner.run = run
            hook.KEPT_RING = kept
            if kept is not ring:
                ring.clear()
            for each in TUNERS:
                keep = hook._KEEP_ALL if all_args else kept_so[id(each)]
                if keep is not None:
                    each._repro_capture_keep = keep  # type: ignore[attr-defined]

        return switch

    return {
        "full": mode(wrapped, ring, False),
        "unkept": mode(wrapped, dropped, False),
        "unhooked": mode(original, dropped, False),
        "args-kept": mode(wrapped, ring, True),
    }


def serve(workload: str, requests: str, replies: str) -> int:
    """The child: set the workload up, say so, then run a round per request line (a count
    and a mode) and answer its time and counters, until ``stop``."""
    one_round, facts = WORKLOADS[workload][0]()
    counters = _Counters()
    switch: dict[str, Callable[[], None]] = {}  # the hooked process's, once it is asked to
    with open(requests) as asked, open(replies, "w") as answers:
        answers.write(json.dumps({"ready": facts}) + "\n")
        answers.flush()
        for line in asked:
            if line.strip() == "stop":
                break
            count, mode = line.split()
            if mode != "full" or switch:
                switch = switch or _hook_modes(workload)
                switch[mode]()
            before = counters.now()
            value = one_round(int(count))
            after = counters.now()
            answer = {k: after[k] - before[k] for k in after}
            answer["allocs"] /= int(count)
            answers.write(json.dumps({"value": value, **answer}) + "\n")
            answers.flush()
    return 0


@dataclass
class Child:
    """One long-lived workload process and its FIFOs."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    requests: Path
    replies: Path
    ask: IO[str] | None = None
    answer: IO[str] | None = None

    def connect(self) -> str:
        """Wait for the child's set-up (at most ``START_S``), then hold both FIFOs."""
        deadline = time.monotonic() + START_S
        while True:  # the child opens ``requests`` once set up: a writer opens then
            try:
                descriptor = os.open(self.requests, os.O_WRONLY | os.O_NONBLOCK)
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
        self.answer = open(self.replies)  # noqa: SIM115 (closed by stop; the child opens it next)
        return str(self._read()["ready"])

    def run(self, count: int, mode: str) -> dict[str, float]:
        assert self.ask is not None
        self.ask.write(f"{count} {mode}\n")
        self.ask.flush()
        return {k: float(str(v)) for k, v in self._read().items()}

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


def start(workload: str, name: str, folder: Path, env: dict[str, str]) -> Child:
    captured, hooked = PROCESSES[name]
    requests, replies = folder / f"{workload}-{name}.ask", folder / f"{workload}-{name}.answer"
    os.mkfifo(requests)
    os.mkfifo(replies)
    child = [sys.executable, str(Path(__file__).resolve()), "--serve", workload]
    child += [str(requests), str(replies)]
    command = child
    if captured:
        reports = folder / f"reports-{workload}"
        command = [sys.executable, "-m", "suite.capture", "--output", str(reports), "-q"]
        command += ["--no-confirm", "--", *child]
    if hooked:
        hook_folder = folder / f"hooked-{workload}"
        hook_folder.mkdir()
        env = environment(hook_folder, keep_all=False, base=env)  # what capture gives it
    log = folder / f"{workload}-{name}.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(
            command, env=env, cwd=folder, stdin=subprocess.DEVNULL, stdout=output, stderr=output
        )
    return Child(f"{workload} ({name})", process, log, requests, replies)


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


def arms(workload: str) -> list[str]:
    """The arms of a workload, each a process and a mode: ``hooked:unkept``, ``plain``."""
    named = [PLAIN, "plain-b", CAPTURED]
    return named + [
        "hooked" if mode == "full" else f"hooked:{mode}" for mode in HOOK_MODES[workload]
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=60, help="cycles of rounds a workload")
    parser.add_argument("--launches", type=int, default=5000, help="launches a round")
    parser.add_argument("--steps", type=int, default=100, help="MLP steps a round")
    parser.add_argument("--budget-s", type=float, default=80.0, help="the rounds' time, at most")
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
        children: dict[tuple[str, str], Child] = {}
        try:
            # The plain processes first and alone: the others load what they compiled and
            # chose; then the others side by side.
            for names in ([PLAIN], [n for n in PROCESSES if n != PLAIN]):
                new = {(w, n): start(w, n, folder, env) for w in args.workloads for n in names}
                children.update(new)
                for child in new.values():
                    facts = child.connect()
                    print(f"{child.name}: ready after {time.monotonic() - began:.1f} s ({facts})")
            ready_s = time.monotonic() - began
            seen = _measure(children, args, counts)
            ends = {child.name: child.stop() for child in children.values()}
        finally:  # a child left waiting on its FIFO would hold its GPU context forever
            for child in children.values():
                if child.process.poll() is None:
                    child.process.kill()  # repro capture's keeper kills its program too
                    child.process.wait()
            for errors in sorted(folder.rglob("hook-errors.txt")):  # the hook's own failures
                print(f"{errors.relative_to(folder)}:\n{errors.read_text()[-2000:]}")
    print()
    print(f"processes ready in {ready_s:.1f} s; whole run {time.monotonic() - began:.1f} s")
    verdicts = [_summary(w, seen[w], counts[w]) for w in args.workloads if seen[w]]
    if any(ends.values()):
        print(f"a process did not exit 0: {ends}")
        return 1
    return 0 if verdicts and all(verdicts) else 1


#: A cycle of a workload: each arm's answer for its round (time and counters).
Cycle = dict[str, dict[str, float]]


def _measure(
    children: dict[tuple[str, str], Child], args: argparse.Namespace, counts: dict[str, int]
) -> dict[str, list[Cycle]]:
    """Each workload's cycles: every arm runs one round, the order rotating by one arm
    from cycle to cycle, until ``--cycles`` or the workload's share of ``--budget-s``."""
    budget = args.budget_s / len(args.workloads)
    seen: dict[str, list[Cycle]] = {}
    for workload in args.workloads:
        names = arms(workload)
        print("workload\tcycle\t" + "\t".join(names) + "\t(first)")
        cycles = seen.setdefault(workload, [])
        since = time.monotonic()
        for number in range(args.cycles):
            if time.monotonic() - since > budget:
                print(f"{workload}: the budget ({budget:.0f} s) ends the cycles at {number}")
                break
            turn = number % len(names)
            cycle: Cycle = {}
            for arm in names[turn:] + names[:turn]:
                process, _, mode = arm.partition(":")
                child = children[(workload, process)]
                cycle[arm] = child.run(counts[workload], mode or "full")
            cycles.append(cycle)
            values = "\t".join(f"{cycle[a]['value']:.4f}" for a in names)
            print(f"{workload}\t{number}\t{values}\t({names[turn]})")
            sys.stdout.flush()
    return seen


def _summary(workload: str, cycles: list[Cycle], count: int) -> bool:
    """Per arm its rounds and counters, then each arm paired with ``plain`` (and the
    hooked modes with the hooked process unhooked); the verdict on ``captured``."""
    unit = WORKLOADS[workload][1]
    names = arms(workload)
    print(f"{workload}: {len(cycles)} cycles of rounds of {count}; median (range) a round")
    for arm in names:
        rounds = [c[arm] for c in cycles]
        counters = ", ".join(
            f"{key} {statistics.median(r[key] for r in rounds):g}"
            for key in ("allocs", "mallocs", "gc2", "gc_ms")
        )
        value = _spread([r["value"] for r in rounds])
        print(f"  {arm}: {value} {unit}; counters a round (median): {counters}")
    met = True
    references = [(arm, PLAIN) for arm in names if arm != PLAIN]
    if "hooked:unhooked" in names:  # the same process: free of the process-to-process floor
        references += [("hooked", "hooked:unhooked"), ("hooked:unkept", "hooked:unhooked")]
        references += [("hooked", "hooked:unkept"), ("hooked:args-kept", "hooked")]
    for arm, reference in references:
        if workload == "launches":
            what, target = "us added a launch", TARGET_US_PER_LAUNCH
            paired = [c[arm]["value"] - c[reference]["value"] for c in cycles]
        else:
            what, target = "ratio a step", TARGET_STEP_RATIO
            paired = [c[arm]["value"] / c[reference]["value"] for c in cycles]
        low, high = interval(paired)
        line = (
            f"  paired ({what}) {arm} against {reference}: median "
            f"{statistics.median(paired):.4f}, 95% interval {low:.4f} to {high:.4f}, "
            f"range {min(paired):.4f} to {max(paired):.4f}"
        )
        if arm == CAPTURED and reference == PLAIN:
            verdict = "met" if high <= target else "NOT met" if low > target else "not resolved"
            line += f" (target <= {target}): {verdict}"
            met = verdict == "met"
        print(line)
        if workload != "launches":
            quartile, (low, high) = _lower_quartiles(cycles, arm, reference)
            print(
                f"    lower quartiles' ratio {quartile:.4f} (bootstrap 95% {low:.4f} to {high:.4f})"
            )
    return met


def _lower_quartiles(
    cycles: list[Cycle], arm: str, reference: str
) -> tuple[float, tuple[float, float]]:
    """The ratio of the two arms' lower quartiles of their rounds, and a bootstrap 95%
    interval over the cycles: interference only ever slows a round, so the faster rounds
    say what each arm costs with less of it."""

    def ratio(sample: list[Cycle]) -> float:
        low = [
            statistics.quantiles([c[a]["value"] for c in sample], n=4)[0] for a in (arm, reference)
        ]
        return low[0] / low[1]

    if len(cycles) < 4:
        return math.nan, (math.nan, math.nan)
    draw = random.Random(0)
    ratios = sorted(ratio(draw.choices(cycles, k=len(cycles))) for _ in range(BOOTSTRAP))
    return ratio(cycles), (ratios[int(0.025 * BOOTSTRAP)], ratios[int(0.975 * BOOTSTRAP) - 1])


if __name__ == "__main__":
    sys.exit(main())
