"""How the secret scrubber's time grows with adversarial text (issue 36).

``python bench/scrub_time.py [--sizes 65536,262144,1048576] [--repeat 3]``: for each
form of text made to stall a backtracking pattern, the best of ``--repeat`` times of
``scrub_secrets`` at each size, and the growth from one size to the next (linear: about the
ratio of the sizes, 4 by default; quadratic: its square). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import itertools

from suite.engine.scrub import scrub_secrets

# Each form, repeated up to a size in characters.
FORMS: dict[str, str] = {
    "a.": "a.",
    "a-": "a-",
    "TOKEN": "TOKEN",
    "x://a:": "x://a:",
    "aA1 ": "aA1 ",
    "a_toke ": "a_toke ",
    'password="': 'password="',
    "-----BEGIN PRIVATE KEY-----": "-----BEGIN PRIVATE KEY-----",
    "--password ": "--password ",
    "hex run": "0123456789abcdef",
    "compiler dump": "%12 = tt.load %arg0, %mask : tensor<128x64x!tt.ptr<f16>> loc(#loc3)\n",
}


def best_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="65536,262144,1048576")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    header = " | ".join(f"{size // 1024} KiB (s)" for size in sizes)
    growth = " | ".join(f"x{b // a} size: time x" for a, b in itertools.pairwise(sizes))
    print(f"| text | {header} | {growth} |")
    print("|---" * (1 + 2 * len(sizes) - 1) + "|")
    for name, unit in FORMS.items():
        times = []
        for size in sizes:
            text = (unit * (size // len(unit) + 1))[:size]
            times.append(best_time(lambda text=text: scrub_secrets(text), args.repeat))
        ratios = [b / a if a else float("nan") for a, b in itertools.pairwise(times)]
        cells = " | ".join(f"{t:.3f}" for t in times)
        grown = " | ".join(f"{r:.1f}" for r in ratios)
        print(f"| `{name}` | {cells} | {grown} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
