"""On a GPU machine: what serializes processes that each make a CUDA context and launch once.

A runtime reduction's candidate is a fresh process that makes a CUDA context, launches its
kernel once (most of them fault) and exits. On an H100 such a run took about 0.9 s alone and
about 6 s with 13 others beside it (docs/gpu-results.md, 2026-11-25 18:58). This times
``--total`` such processes, ``--jobs`` at a time, in three kinds:

- ``context``: import torch, make the CUDA context, allocate, synchronize;
- ``launch``: also launch a Triton copy kernel that passes (built once beforehand);
- ``fault``: launch the hand-minimal #10474 kernel (1-D descriptor in a pipelined loop),
  which faults with ``misaligned address``.

    python bench/gpu_contention.py --jobs 1 4 14 --total 28

prints, per kind and jobs, the wall time of the batch and processes a second.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

MINIMAL = Path(__file__).parent / "reduce_inputs" / "runtime" / "minimal_descriptor_1d_pipelined.py"

CONTEXT = """
import torch
x = torch.rand(2048, device="cuda")
torch.cuda.synchronize()
"""

LAUNCH = """
import torch, triton, triton.language as tl

@triton.jit
def copy(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)

x = torch.rand(2048, device="cuda")
y = torch.full_like(x, float("nan"))
copy[(2,)](x, y, x.numel(), BLOCK=1024)
torch.cuda.synchronize()
assert torch.equal(x, y)
"""


def _command(kind: str, folder: Path) -> list[str]:
    if kind == "fault":
        return [sys.executable, str(MINIMAL)]
    script = folder / f"{kind}.py"  # Triton reads a kernel's source from its file
    script.write_text(CONTEXT if kind == "context" else LAUNCH)
    return [sys.executable, str(script)]


def _batch(command: list[str], jobs: int, total: int) -> tuple[float, list[int]]:
    def one(_: int) -> int:
        return subprocess.run(command, capture_output=True, check=False).returncode

    start = time.monotonic()
    with ThreadPoolExecutor(jobs) as pool:
        codes = list(pool.map(one, range(total)))
    return time.monotonic() - start, codes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 4, 14])
    parser.add_argument("--total", type=int, default=28)
    parser.add_argument("--kinds", nargs="+", default=["context", "launch", "fault"])
    parser.add_argument("--folder", type=Path, default=Path("/tmp/gpu-contention"))
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    print("kind\tjobs\tprocesses\twall_s\tper_s\texit codes")
    for kind in args.kinds:
        command = _command(kind, args.folder)
        subprocess.run(command, capture_output=True, check=False)  # builds the kernel once
        for jobs in args.jobs:
            wall, codes = _batch(command, jobs, args.total)
            seen = ",".join(f"{c}x{codes.count(c)}" for c in sorted(set(codes)))
            print(f"{kind}\t{jobs}\t{args.total}\t{wall:.1f}\t{args.total / wall:.2f}\t{seen}")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
