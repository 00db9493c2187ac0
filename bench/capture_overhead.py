"""On a GPU machine: what ``repro capture`` adds to a program that launches kernels, and
which part of it costs.

Its workloads, each timed by the program itself in rounds:

- ``launches``: ``--launches`` launches a round of a small masked ``scaled_add`` Triton
  kernel (4096 fp32 elements, ``kernel[grid](...)``), one synchronize at the end of the
  round: microseconds per launch;
- ``mlp``: ``--steps`` steps a round of a ``torch.compile``d MLP training step (Linear,
  GELU, LayerNorm, Linear, MSE loss, backward, SGD) on Inductor's Triton kernels, a
  synchronize at the end of the round: milliseconds per step;
- ``inductor-launches``: the launches of Inductor's kernels that one such step makes,
  called again ``--replays`` times a round with the step's arguments, nothing else of the
  step between them: microseconds per launch (what ``run`` costs, apart from the step).

Each *arm* of a workload is ``--processes`` long-lived processes of the same kind:

- ``plain``: the program alone, the reference;
- ``captured``: the program under ``repro capture`` (the targets: at most 3 us a launch,
  at most 2% a step);
- ``hooked``: the program with the environment ``repro capture`` gives it (the hook armed
  in it), without ``repro capture`` around it;
- for ``mlp`` and ``inductor-launches`` also ``hooked:MODE`` and ``captured:MODE``: the
  same processes with parts of the hook switched off for a round (``unkept``: Inductor's
  launches go to an empty ring;
  ``wrapped``: Torch's ``run`` behind the hook's wrapper, not inlined; ``bare``:
  Inductor's ``run`` behind a function that only calls it; ``handled``: Torch's ``run``
  compiled again with its body in the hook's ``try``; ``recompiled``: compiled again,
  nothing added; ``unhooked``:
  Inductor's ``run`` as Torch made it) or as it was (``unsteady``: every launch kept with
  its scalars, no kernel by reference alone; ``args-kept``: the ring keeps each launch's
  arguments, tensors included).

Why several processes an arm: two processes of one program differ by a few percent on
this CPU-bound step (where the allocator and the loader put things, which cores the
main and autograd threads land on), and that difference stays for a process's life;
with one process an arm, no number of rounds could tell 2% of capture from it. So each
arm's figure is the mean over its processes, and its interval comes from how much the
processes differ (Welch's t), not from how many rounds were run.

A cycle runs one round of every process (and mode) in a random order (``--seed``), so
that no arm is always the first after another process's round. A round's *level* is its
time against the mean of its cycle's rounds (of logs for a step, of times for a launch),
which takes out what drifts from cycle to cycle; a process's level is the median of its
rounds'. ``captured`` against ``plain`` is then the mean level of one arm minus the
other's with Welch's 95% interval; a ``captured:MODE`` against ``captured`` is paired
within each process. The bench's own floor is the ``plain`` arm against itself, its processes
split in halves: an interval that holds 1 there is what makes the other intervals
believable. ``captured`` gets the verdict: ``met`` when the whole interval is within the
target, ``NOT met`` when all of it is beyond, else ``not resolved``. Exit 0 when every
target is met.

A plain process of no arm starts first, alone, compiles and autotunes, and ends; the
measured processes then load its kernels and Inductor's choices from the shared caches
(``--caches`` keeps them between runs): processes autotuning side by side may choose
different configs, and the one that compiled would carry the compile through its rounds.
Each says, once ready, a digest of Inductor's config and of the configs its kernels run
with; each round also returns what does not need a clock (CUDA allocations a step,
``cudaMalloc`` calls, the garbage collector's full collections and milliseconds).

    python bench/capture_overhead.py --workloads mlp --processes 8 --budget-s 240

``--cycles`` and ``--budget-s`` (the rounds' time, shared by the workloads) bound the
run; ``--pin own`` gives each process a CPU of its own (and its ``repro capture``
supervisor the same one); ``--raw FILE`` writes every round as a JSON line, and
``--from-raw FILE`` prints the summary of such rounds again, with no GPU.
"""

from __future__ import annotations

import argparse
import collections
import gc
import gzip
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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import IO

from suite.capture.program import environment

ROOT = Path(__file__).resolve().parent.parent
TARGET_US_PER_LAUNCH = 3.0
TARGET_STEP_RATIO = 1.02
#: A child's compile and warm-up, at most (a cold Inductor compile of the MLP under the hook).
START_S = 240.0
PLAIN, CAPTURED, HOOKED = "plain", "captured", "hooked"
#: The index of the plain process that fills the caches before the measured ones start.
WARM_UP = -1
#: The kinds of process: name -> (run under ``repro capture``, the hook's environment).
KINDS = {PLAIN: (False, False), CAPTURED: (True, False), HOOKED: (False, True)}
#: What a ``hooked`` process switches off for a round, by workload (``full``: nothing).
_INDUCTOR_MODES = (
    "full",
    "unkept",
    "unsteady",
    "wrapped",
    "bare",
    "handled",
    "recompiled",
    "unhooked",
    "args-kept",
)
HOOK_MODES = {
    "python": ("full",),
    "launches": ("full",),
    "mlp": _INDUCTOR_MODES,
    "inductor-launches": _INDUCTOR_MODES,
}

#: A round of a workload: how many launches or steps -> the time of one, in its unit, by
#: the wall clock and by the process's CPU time.
Timed = Callable[[int], tuple[float, float]]


def _clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _per(began: tuple[float, float], count: int, unit: float) -> tuple[float, float]:
    """Wall and CPU time since ``began``, a launch or step, in ``unit`` of a second."""
    wall, cpu = (now - then for now, then in zip(_clocks(), began, strict=True))
    return wall / count * unit, cpu / count * unit


def launches_workload() -> tuple[Timed, str]:
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

    def one_round(count: int) -> tuple[float, float]:
        torch.cuda.synchronize()
        began = _clocks()
        for _ in range(count):
            scaled_add[grid](x, y, out, n, 0.5, BLOCK=1024)
        torch.cuda.synchronize()
        return _per(began, count, 1e6)

    return one_round, "1 kernel[grid] launch a launch"


def _mlp(device: str = "cuda") -> tuple[Callable[[], None], str]:
    """A ``torch.compile``d MLP training step on ``device``, warm, and what it launches (its
    facts; on a CPU, Inductor's kernels are C++, none launched through ``run``)."""
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 1024),
        torch.nn.GELU(),
        torch.nn.LayerNorm(1024),
        torch.nn.Linear(1024, 512),
    ).to(device)
    compiled = torch.compile(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    inputs, targets = (torch.randn(256, 512, device=device) for _ in range(2))

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.mse_loss(compiled(inputs), targets).backward()
        optimizer.step()

    for _ in range(30):
        step()
    if device == "cuda":
        torch.cuda.synchronize()
    launches, configs = _inductor_launches_in(step)
    from torch._inductor.runtime import triton_heuristics

    run = triton_heuristics.CachingAutotuner.run
    if getattr(run, "_repro_capture", False):  # hooked: how
        inlined = run.__code__.co_filename == triton_heuristics.__file__
        kernels = _tuners()
        steady = sum(bool(t.__dict__.get("_repro_capture_steady")) for t in kernels)
        configs += ", Inductor's run " + ("inlined" if inlined else "wrapped") + " by the hook"
        configs += f", {steady} of its {len(kernels)} kernels kept by reference alone"
    return step, f"{launches} Inductor kernel launches a step, {configs}"


def mlp_workload() -> tuple[Timed, str]:
    """Milliseconds per step of a ``torch.compile``d MLP training step."""
    import torch

    step, facts = _mlp()

    def one_round(count: int) -> tuple[float, float]:
        torch.cuda.synchronize()
        began = _clocks()
        for _ in range(count):
            step()
        torch.cuda.synchronize()
        return _per(began, count, 1e3)

    return one_round, facts


def inductor_launches_workload() -> tuple[Timed, str]:
    """Microseconds per launch of the MLP step's Inductor kernels, called again as the step
    called them (``tuner.run(*args, **kwargs)``, the class's ``run`` of the round's mode),
    nothing else of the step around them: what a launch through each ``run`` costs, apart
    from what the step does between launches."""
    import torch

    _, facts = _mlp()

    def one_round(count: int) -> tuple[float, float]:
        torch.cuda.synchronize()
        began = _clocks()
        for _ in range(count):
            for tuner, args, kwargs in LAUNCHED:
                tuner.run(*args, **kwargs)  # type: ignore[attr-defined]
        torch.cuda.synchronize()
        return _per(began, count * len(LAUNCHED), 1e6)

    return one_round, facts


#: The launches of Inductor's kernels (``CachingAutotuner``) one step makes, seen by its
#: count: the tuner, its arguments and keywords (the step's tensors kept alive).
LAUNCHED: list[tuple[object, tuple[object, ...], dict[str, object]]] = []


def _tuners() -> list[object]:
    """The Inductor kernels the step launches, each once."""
    return list({id(tuner): tuner for tuner, _, _ in LAUNCHED}.values())


def _inductor_launches_in(step: Callable[[], None]) -> tuple[int, str]:
    """How many launches of Inductor's kernels one step makes, and a digest of Inductor's
    config and of the config each kernel launched with (counted once, in the warm-up:
    ``CachingAutotuner.run`` wrapped for that step alone, the hook's wrapper under it)."""
    from torch._inductor import config
    from torch._inductor.runtime import triton_heuristics

    tuner = triton_heuristics.CachingAutotuner
    run, launched = tuner.run, []

    def counting(self: object, *args: object, **kwargs: object) -> object:
        LAUNCHED.append((self, args, kwargs))
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


def python_workload() -> tuple[Timed, str]:
    """Microseconds per call of a small Python function: no GPU, no torch, nothing the hook
    touches. What the bench itself does (its processes, arms, batches, rounds, summary) is
    tested on it (tests/test_capture_overhead_stats.py), on any machine."""

    def twice(n: int) -> int:
        return 2 * n

    def one_round(count: int) -> tuple[float, float]:
        began = _clocks()
        for n in range(count):
            twice(n)
        return _per(began, count, 1e6)

    return one_round, "1 Python call a call"


WORKLOADS = {
    "python": (python_workload, "us/call"),
    "launches": (launches_workload, "us/launch"),
    "mlp": (mlp_workload, "ms/step"),
    "inductor-launches": (inductor_launches_workload, "us/launch"),
}
#: What a run on a GPU times unless told (``python`` checks the bench).
GPU_WORKLOADS = ["launches", "mlp"]


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
        torch = sys.modules.get("torch")  # a workload with no GPU has no allocator
        stats = torch.cuda.memory_stats() if torch and torch.cuda.is_initialized() else {}
        return {
            "allocs": float(stats.get("allocation.all.allocated", 0)),
            "mallocs": float(stats.get("segment.all.allocated", 0)),  # cudaMalloc calls
            "gc2": float(gc.get_stats()[2]["collections"]),
            "gc_ms": self.gc_s * 1e3,
        }


def _hook_modes(workload: str) -> dict[str, Callable[[], None]]:
    """In a hooked or captured process: how to switch parts of the hook off (or back to
    what it was) for a round, through its own modules, importable there. ``unkept``:
    Inductor's launches go to an empty ring; ``wrapped``: Torch's ``run`` behind the hook's
    wrapper (a frame more, what the hook falls back to where it cannot inline); ``bare``:
    behind a function that only calls it (what a frame costs, nothing kept);
    ``handled``: Torch's ``run`` compiled again with its body inside the hook's ``try``,
    no prologue; ``recompiled``: compiled again with nothing added (what a function object
    other than Torch's costs, the hook's statements aside); ``unhooked``:
    ``CachingAutotuner.run`` as Torch made it; ``unsteady``: every launch kept by its
    scalars, as the hook did before it kept a steady kernel's by reference alone;
    ``args-kept``: the ring keeps each launch's arguments, tensors included, as the hook
    did before it kept Inductor's launches by their scalars."""
    if HOOK_MODES[workload] == ("full",):
        return {"full": lambda: None}
    import repro_capture_inductor as hook
    from torch._inductor.runtime import triton_heuristics

    tuner = triton_heuristics.CachingAutotuner
    inlined = tuner.run
    original = inlined.__wrapped__
    ring = hook.KEPT_RING
    dropped: collections.deque[object] = collections.deque(maxlen=0)
    tuners = _tuners()
    kept_so = {id(t): t.__dict__.get("_repro_capture_kept") for t in tuners}
    steady_so = {id(t): t.__dict__.get("_repro_capture_steady", False) for t in tuners}

    def bare(self: object, *args: object, **kwargs: object) -> object:
        return original(self, *args, **kwargs)

    def mode(run: object, kept: collections.deque[object], keeping: str) -> Callable[[], None]:
        def switch() -> None:
            tuner.run = run
            hook.KEPT_RING = kept
            vars(sys.modules[tuner.__module__])["_repro_capture_append"] = kept.append
            if kept is not ring:
                ring.clear()
            for each in tuners:
                keeper = hook._ALL_ARGS if keeping == "args" else kept_so[id(each)]
                if keeper is not None:
                    each._repro_capture_kept = keeper  # type: ignore[attr-defined]
                steady = steady_so[id(each)] and keeping == "as-hooked"
                each._repro_capture_steady = steady  # type: ignore[attr-defined]

        return switch

    return {
        "full": mode(inlined, ring, "as-hooked"),
        "unkept": mode(inlined, dropped, "as-hooked"),
        "unsteady": mode(inlined, ring, "scalars"),
        "wrapped": mode(hook.inductor_run_wrapper(original), ring, "as-hooked"),
        "bare": mode(bare, dropped, "as-hooked"),
        "handled": mode(hook.inlined_run(original, prologue=False), dropped, "as-hooked"),
        "recompiled": mode(
            hook.inlined_run(original, prologue=False, handler=False), dropped, "as-hooked"
        ),
        "unhooked": mode(original, dropped, "as-hooked"),
        "args-kept": mode(inlined, ring, "args"),
    }


def serve(workload: str, requests: str, replies: str) -> int:
    """The child: set the workload up, say so, then run a round per request line (a count
    and a mode) and answer its time and counters, until ``stop``."""
    one_round, facts = WORKLOADS[workload][0]()
    counters = _Counters()
    switch: dict[str, Callable[[], None]] = {}  # the hooked process's, once it is asked to
    with open(requests) as asked, open(replies, "w") as answers:
        answers.write(json.dumps({"ready": facts, "pid": os.getpid()}) + "\n")
        answers.flush()
        for line in asked:
            if line.strip() == "stop":
                break
            count, mode = line.split()
            if mode != "full" or switch:
                switch = switch or _hook_modes(workload)
                switch[mode]()
            before = counters.now()
            value, cpu = one_round(int(count))
            after = counters.now()
            answer = {k: after[k] - before[k] for k in after}
            answer["allocs"] /= int(count)
            answers.write(json.dumps({"value": value, "cpu": cpu, **answer}) + "\n")
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
    program: int = 0  # the workload's own pid (below ``repro capture``'s processes)

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
        ready = self._read()
        self.program = int(str(ready["pid"]))
        return str(ready["ready"])

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

    def around(self) -> tuple[float, int]:
        """CPU seconds and context switches so far of the processes around the program
        (``repro capture`` and its keeper; none for a program run alone)."""
        import psutil

        top = psutil.Process(self.process.pid)
        # The program's own children (Inductor's compile workers) are the program's.
        own = {
            self.program,
            *(p.pid for p in psutil.Process(self.program).children(recursive=True)),
        }
        cpu, switches = 0.0, 0
        for each in [top, *top.children(recursive=True)]:
            if each.pid not in own:
                times, counts = each.cpu_times(), each.num_ctx_switches()
                cpu += times.user + times.system
                switches += counts.voluntary + counts.involuntary
        return cpu, switches

    def ask_to_stop(self) -> None:
        if self.ask is not None:
            self.ask.write("stop\n")
            self.ask.close()
            self.ask = None

    def stop(self) -> int:
        self.ask_to_stop()
        code = self.process.wait(timeout=120)
        if self.answer is not None:
            self.answer.close()
        return code


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


@dataclass(frozen=True)
class Process:
    """One of an arm's processes: its kind and its number among them."""

    kind: str
    index: int

    @property
    def name(self) -> str:
        return "warm-up" if self.index == WARM_UP else f"{self.kind}.{self.index}"


def start(
    workload: str, process: Process, folder: Path, env: dict[str, str], cpu: int | None
) -> Child:
    captured, hooked = KINDS[process.kind]
    stem = f"{workload}-{process.name}"
    requests, replies = folder / f"{stem}.ask", folder / f"{stem}.answer"
    os.mkfifo(requests)
    os.mkfifo(replies)
    child = [sys.executable, str(Path(__file__).resolve()), "--serve", workload]
    child += [str(requests), str(replies)]
    command = child
    if captured:
        reports = folder / f"reports-{workload}-{process.name}"
        command = [sys.executable, "-m", "suite.capture", "--output", str(reports), "-q"]
        command += ["--no-confirm", "--", *child]
    if hooked:
        hook_folder = folder / f"hooked-{workload}-{process.name}"
        hook_folder.mkdir()
        env = environment(hook_folder, keep_all=False, base=env)  # what capture gives it
    log = folder / f"{stem}.log"
    with open(log, "wb") as output:
        process_ = subprocess.Popen(
            command,
            env=env,
            cwd=folder,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            # Threads and children (the program under capture) inherit the CPU.
            preexec_fn=None if cpu is None else lambda: os.sched_setaffinity(0, {cpu}),
        )
    return Child(f"{workload} ({process.name})", process_, log, requests, replies)


@dataclass(frozen=True)
class Turn:
    """One round of one process in one mode: its time a launch or step, and its counters."""

    workload: str
    cycle: int
    arm: str
    index: int
    value: float
    counters: dict[str, float]
    cpu: float = math.nan  # the process's CPU time, in the same unit (rounds of before 05:25)


def split(arm: str) -> tuple[str, str]:
    """``hooked:unkept`` -> (``hooked``, ``unkept``); ``plain`` -> (``plain``, ``full``)."""
    kind, _, mode = arm.partition(":")
    return kind, mode or "full"


def t975(df: float) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom: the Cornish-Fisher
    expansion about the normal's (4.27 against 4.30 at 2, within 0.001 from 6 on)."""
    z = statistics.NormalDist().inv_cdf(0.975)
    terms = (
        (z**3 + z) / 4,
        (5 * z**5 + 16 * z**3 + 3 * z) / 96,
        (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384,
        (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160,
    )
    return z + sum(term / df ** (power + 1) for power, term in enumerate(terms))


@dataclass(frozen=True)
class Estimate:
    """A difference of levels and its 95% interval, from ``processes`` processes a side."""

    centre: float
    low: float
    high: float
    processes: tuple[int, int]


def welch(levels: Sequence[float], references: Sequence[float]) -> Estimate:
    """Mean of ``levels`` minus mean of ``references``, Welch's 95% interval."""
    n, m = len(levels), len(references)
    shares = statistics.variance(levels) / n, statistics.variance(references) / m
    error = math.sqrt(sum(shares))
    df = (
        sum(shares) ** 2 / (shares[0] ** 2 / (n - 1) + shares[1] ** 2 / (m - 1))
        if error
        else n + m - 2
    )
    centre = statistics.fmean(levels) - statistics.fmean(references)
    half = t975(max(df, 2.0)) * error
    return Estimate(centre, centre - half, centre + half, (n, m))


def paired(differences: Sequence[float]) -> Estimate:
    """The mean of each process's own difference between two modes, t's 95% interval."""
    n = len(differences)
    centre = statistics.fmean(differences)
    half = t975(max(n - 1, 2)) * statistics.stdev(differences) / math.sqrt(n)
    return Estimate(centre, centre - half, centre + half, (n, n))


#: A process's levels: (arm, process index) -> cycle -> its round's level in that cycle.
Levels = dict[tuple[str, int], dict[int, float]]


def levels_of(turns: Iterable[Turn], additive: bool, clock: Callable[[Turn], float]) -> Levels:
    """Each round's time by ``clock`` against the mean of its cycle's rounds (a difference,
    or of logs): the mean of each arm's levels then differs by what the arms' times do. Not
    a median: the round itself moves a median only when it lies near it, which drew the
    levels of a median of all the rounds toward 0 and, of a median of the others, apart
    (on 2026-11-27's H100 rounds: 2.4% and 4.0% for the 3.7% this gives; tested on rounds
    of a known cost)."""
    scale: Callable[[float], float] = (lambda value: value) if additive else math.log
    cycles: dict[int, list[Turn]] = collections.defaultdict(list)
    for turn in turns:
        cycles[turn.cycle].append(turn)
    levels: Levels = collections.defaultdict(dict)
    for number, rounds in cycles.items():
        middle = statistics.fmean(scale(clock(turn)) for turn in rounds)
        for turn in rounds:
            levels[(turn.arm, turn.index)][number] = scale(clock(turn)) - middle
    return levels


def compare(levels: Levels, arm: str, reference: str, processes: int) -> Estimate:
    """``arm`` against ``reference``: paired within each process when both are modes of
    one kind of process, else between the two arms' processes."""
    if split(arm)[0] == split(reference)[0]:
        own = [
            statistics.median(
                levels[(arm, i)][c] - levels[(reference, i)][c]
                for c in levels[(arm, i)].keys() & levels[(reference, i)].keys()
            )
            for i in range(processes)
        ]
        return paired(own)
    return welch(*(process_levels(levels, a, range(processes)) for a in (arm, reference)))


def process_levels(levels: Levels, arm: str, indices: Iterable[int]) -> list[float]:
    return [statistics.median(levels[(arm, i)].values()) for i in indices]


def _measure(
    workload: str,
    children: dict[Process, Child],
    arms: list[str],
    args: argparse.Namespace,
    count: int,
    budget: float,
    first: int,
) -> list[Turn]:
    """Cycles of rounds (numbered from ``first``), every process and mode once a cycle in a
    random order, until ``--cycles`` or ``budget`` seconds."""
    draw = random.Random(args.seed + first)
    indices = sorted({p.index for p in children if p.index != WARM_UP})
    slots = [(arm, i) for arm in arms for i in indices]
    turns: list[Turn] = []
    since = time.monotonic()
    print(f"{workload}: cycle, then each arm's median round in the cycle ({', '.join(arms)})")
    for number in range(first, first + args.cycles):
        if time.monotonic() - since > budget:
            print(f"{workload}: the budget ({budget:.0f} s) ends the cycles at {number - first}")
            break
        cycle: list[Turn] = []
        for arm, index in draw.sample(slots, len(slots)):
            kind, mode = split(arm)
            answer = children[Process(kind, index)].run(count, mode)
            value, cpu = answer.pop("value"), answer.pop("cpu")
            cycle.append(Turn(workload, number, arm, index, value, answer, cpu))
        turns += cycle
        if args.raw:  # as they come: a run stopped by its bound keeps its rounds
            with open(args.raw, "a") as raw:
                raw.writelines(json.dumps(asdict(turn)) + "\n" for turn in cycle)
        medians = [statistics.median(t.value for t in cycle if t.arm == arm) for arm in arms]
        print(f"{workload}\t{number}\t" + "\t".join(f"{m:.4f}" for m in medians), flush=True)
    return turns


#: The clocks a round is read by: the wall clock (the targets') and the program process's
#: CPU time (what the hook adds to the work of the process, free of what the machine's
#: other tenants take from it, and of waits).
CLOCKS: dict[str, Callable[[Turn], float]] = {
    "wall": lambda turn: turn.value,
    "CPU": lambda turn: turn.cpu,
}


def _summary(workload: str, turns: list[Turn], arms: list[str], processes: int) -> bool:
    """Per arm its rounds, counters and processes' levels, then the comparisons by each
    clock (the CPU clock where the rounds have it); the verdict on ``captured`` against
    ``plain`` by the wall clock."""
    unit = WORKLOADS[workload][1]
    additive = unit.startswith("us/")
    cycles = len({t.cycle for t in turns})
    print(f"{workload}: {cycles} cycles; {processes} processes an arm")
    for arm in arms:
        rounds = [t for t in turns if t.arm == arm]
        counters = ", ".join(
            f"{key} {statistics.median(t.counters[key] for t in rounds):g}"
            for key in ("allocs", "mallocs", "gc2", "gc_ms")
        )
        print(f"  {arm}: counters a round (median): {counters}")
    met = True
    for clock, read in CLOCKS.items():
        if any(math.isnan(read(t)) for t in turns):
            continue
        levels = levels_of(turns, additive, read)
        print(f"{workload}, by the {clock} clock:")
        for arm in arms:
            values = [read(t) for t in turns if t.arm == arm]
            each = process_levels(levels, arm, range(processes))
            shown = [f"{v:+.3f} us" if additive else f"{math.expm1(v):+.2%}" for v in each]
            print(
                f"  {arm}: median {statistics.median(values):.4f} ({min(values):.4f}-"
                f"{max(values):.4f}) {unit}; its processes' levels: {', '.join(shown)}"
            )
        verdict = _comparisons(levels, arms, processes, unit, additive)
        if clock == "wall":
            met = verdict == "met"
    return met


def _comparisons(levels: Levels, arms: list[str], processes: int, unit: str, additive: bool) -> str:
    """Print the bench's floor and each comparison; the verdict on ``captured``."""
    comparisons = [(arm, PLAIN) for arm in arms if split(arm)[0] != PLAIN]
    comparisons += [(arm, split(arm)[0]) for arm in arms if split(arm)[1] != "full"]
    if {CAPTURED, HOOKED} <= set(arms):  # what the processes around the program cost
        comparisons.append((CAPTURED, HOOKED))
    target = TARGET_US_PER_LAUNCH if additive else TARGET_STEP_RATIO

    def said(estimate: Estimate) -> str:
        if additive:
            what = f"{estimate.centre:+.3f} us a {unit.split('/')[1]}"
            return f"{what}, 95% {estimate.low:.4f} to {estimate.high:.4f}"
        low, high = math.exp(estimate.low), math.exp(estimate.high)
        return f"ratio {math.exp(estimate.centre):.4f}, 95% {low:.4f} to {high:.4f}"

    if processes >= 4 and PLAIN in arms:
        halves = [process_levels(levels, PLAIN, range(k, processes, 2)) for k in (0, 1)]
        print(f"  floor: plain's even processes against its odd: {said(welch(*halves))}")
    verdict = "not measured"
    for arm, reference in comparisons:
        if reference not in arms:
            continue
        estimate = compare(levels, arm, reference, processes)
        line = f"  {arm} against {reference}: {said(estimate)}"
        if (arm, reference) == (CAPTURED, PLAIN):
            low, high = (
                (estimate.low, estimate.high)
                if additive
                else (math.exp(estimate.low), math.exp(estimate.high))
            )
            verdict = "met" if high <= target else "NOT met" if low > target else "not resolved"
            line += f" (target <= {target}): {verdict}"
        print(line)
    return verdict


def cached_environment(caches: Path) -> dict[str, str]:
    """A workload process's environment: Triton's and Inductor's caches under ``caches``
    (shared by every process of a run, so each loads what the first compiled) and this
    repository importable."""
    env = {**os.environ, "TRITON_CACHE_DIR": str(caches / "triton-cache")}
    env["TORCHINDUCTOR_CACHE_DIR"] = str(caches / "inductor-cache")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=1000, help="cycles of rounds a workload")
    parser.add_argument("--launches", type=int, default=5000, help="launches a round")
    parser.add_argument("--steps", type=int, default=50, help="MLP steps a round")
    parser.add_argument(
        "--replays", type=int, default=1000, help="a step's Inductor launches again, a round"
    )
    parser.add_argument("--processes", type=int, default=6, help="processes an arm (>= 3)")
    parser.add_argument(
        "--batches",
        type=int,
        default=1,
        help="sets of --processes an arm, one after another, fresh processes each",
    )
    parser.add_argument(
        "--arms",
        nargs="+",
        default=[PLAIN, CAPTURED],
        help="plain captured hooked hooked:unkept ...",
    )
    parser.add_argument("--budget-s", type=float, default=240.0, help="the rounds' time, at most")
    parser.add_argument("--workloads", nargs="+", default=GPU_WORKLOADS, choices=WORKLOADS)
    parser.add_argument(
        "--pin", choices=("none", "own"), default="none", help="a CPU for each process"
    )
    parser.add_argument("--seed", type=int, default=0, help="of the rounds' order")
    parser.add_argument("--caches", type=Path, help="Triton's and Inductor's caches (kept)")
    parser.add_argument("--raw", type=Path, help="every round, a JSON line each")
    parser.add_argument(
        "--from-raw", type=Path, nargs="+", help="no run: the summary of --raw's rounds (pooled)"
    )
    parser.add_argument("--serve", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(*args.serve)
    if args.from_raw:
        return summarize_raw(args.from_raw)
    for workload in args.workloads:
        for arm in args.arms:
            kind, mode = split(arm)
            if (
                kind not in KINDS
                or (mode != "full" and kind == PLAIN)
                or mode not in HOOK_MODES[workload]
            ):
                parser.error(f"no arm {arm!r} for {workload}")
    if args.processes < 3:
        parser.error("--processes: at least 3 (the interval comes from how they differ)")
    began = time.monotonic()
    print(_versions())
    counts = {"mlp": args.steps, "inductor-launches": args.replays}
    counts |= {"python": args.launches, "launches": args.launches}
    met = True
    with tempfile.TemporaryDirectory(prefix="capture-overhead-") as scratch:
        folder = Path(scratch)
        env = cached_environment((args.caches or folder).resolve())
        cpus = sorted(os.sched_getaffinity(0))
        budget = args.budget_s / len(args.workloads) / args.batches
        for workload in args.workloads:
            arms = [a for a in args.arms if split(a)[1] in HOOK_MODES[workload]]
            kinds = dict.fromkeys(split(a)[0] for a in arms)
            turns: list[Turn] = []
            for batch in range(args.batches):  # fresh processes each, numbered on
                numbers = range(batch * args.processes, (batch + 1) * args.processes)
                processes = [Process(kind, i) for kind in kinds for i in numbers]
                first = max((t.cycle for t in turns), default=-1) + 1
                turns += _run(
                    workload,
                    processes,
                    arms,
                    args,
                    counts[workload],
                    budget,
                    first,
                    folder,
                    env,
                    cpus,
                )
            if turns:
                print(f"{workload}: rounds of {counts[workload]}")
                met = _summary(workload, turns, arms, args.processes * args.batches) and met
        for errors in sorted(folder.rglob("hook-errors.txt")):  # the hook's own failures
            print(f"{errors.relative_to(folder)}:\n{errors.read_text()[-2000:]}")
    print(f"whole run {time.monotonic() - began:.1f} s")
    return 0 if met else 1


def summarize_raw(paths: list[Path]) -> int:
    """The summary of rounds ``--raw`` wrote (each workload's arms in the order they first
    appear, ``plain`` first), as the run that wrote them would print it now. Several files
    are pooled: each run's processes and cycles its own (numbered after the last file's),
    and only the arms every file has. A file ending ``.gz`` is read gzipped."""
    turns: list[Turn] = []
    for path in paths:
        text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else None
        lines = (text if text is not None else path.read_text()).splitlines()
        mine = [Turn(**json.loads(line)) for line in lines if line]
        processes = max((t.index for t in turns), default=-1) + 1
        cycles = max((t.cycle for t in turns), default=-1) + 1
        if turns:
            shared = {t.arm for t in turns} & {t.arm for t in mine}
            turns, mine = (
                [t for t in turns if t.arm in shared],
                [t for t in mine if t.arm in shared],
            )
        turns += [replace(t, index=t.index + processes, cycle=t.cycle + cycles) for t in mine]
    met = True
    for workload in dict.fromkeys(t.workload for t in turns):
        mine = [t for t in turns if t.workload == workload]
        arms = sorted(dict.fromkeys(t.arm for t in mine), key=lambda arm: arm != PLAIN)
        met = _summary(workload, mine, arms, max(t.index for t in mine) + 1) and met
    return 0 if met else 1


def _run(
    workload: str,
    processes: list[Process],
    arms: list[str],
    args: argparse.Namespace,
    count: int,
    budget: float,
    first: int,
    folder: Path,
    env: dict[str, str],
    cpus: list[int],
) -> list[Turn]:
    """Warm the caches (the first batch), start the workload's processes, measure from
    cycle ``first``, stop them."""
    began = time.monotonic()
    children: dict[Process, Child] = {}
    pin = {p: cpus[k % len(cpus)] for k, p in enumerate(processes)} if args.pin == "own" else {}
    try:
        # A plain process of no arm compiles and autotunes first, alone, and ends: every
        # measured process then loads the same kernels and choices from the caches (two
        # processes autotuning side by side may choose differently), and none carries a
        # compile's leftovers (its heap, Inductor's worker pool) through its rounds.
        warm_up = Process(PLAIN, WARM_UP)
        if first == 0:
            children[warm_up] = start(workload, warm_up, folder, env, None)
        for group in ([warm_up] if first == 0 else [], processes):
            new = {p: children.get(p) or start(workload, p, folder, env, pin.get(p)) for p in group}
            children.update(new)
            for child in new.values():
                facts = child.connect()
                print(f"{child.name}: ready after {time.monotonic() - began:.1f} s ({facts})")
            if group == [warm_up] and children.pop(warm_up).stop():
                sys.exit(f"{workload}: the warm-up process did not exit 0")
        before = {p: c.around() for p, c in children.items() if p.kind == CAPTURED}
        since = time.monotonic()
        turns = _measure(workload, children, arms, args, count, budget, first)
        rounds_s = time.monotonic() - since
        for process, (cpu, switches) in before.items():
            now = children[process].around()
            print(
                f"{workload} ({process.name}): the processes around it used "
                f"{(now[0] - cpu) / rounds_s:.2%} of a CPU and switched "
                f"{(now[1] - switches) / rounds_s:.0f} times a second"
            )
        for child in children.values():  # all at once: each takes seconds to end
            child.ask_to_stop()
        ends = {child.name: child.stop() for child in children.values()}
    finally:  # a child left waiting on its FIFO would hold its GPU context forever
        for child in children.values():
            if child.process.poll() is None:
                child.process.kill()  # repro capture's keeper kills its program too
                child.process.wait()
    failed = {name: code for name, code in ends.items() if code}
    if failed:
        sys.exit(f"{workload}: a process did not exit 0: {failed}")
    return turns


if __name__ == "__main__":
    sys.exit(main())
