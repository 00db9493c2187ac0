"""Two threads compile at once (sm_90, the installed Triton) while the main thread writes
to stdout and stderr: one kernel compiles, the other fails in NVGPUWarpSpecialization
(triton-lang/triton#9728: pointer loads in a warp-specialized loop, 4 warps). Used by
tests/test_capture.py to check that the hook's redirection of fds 1 and 2 loses nothing
and that the failing compile's record holds its diagnostic.

Usage: python threads_and_output.py
"""

import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus"))

import triton
import triton.language as tl
from aot import Buffer, compile_like_launch


@triton.jit
def ws_dot(a, b, c, K, WARP_SPECIALIZE: tl.constexpr):
    r = tl.arange(0, 64)
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for k in tl.range(0, K, 64, warp_specialize=WARP_SPECIALIZE):
        x = tl.load(a + r[:, None] * K + k + r[None, :])
        acc = tl.dot(x, tl.load(b + (k + r)[:, None] * 64 + r[None, :]), acc)
    tl.store(c + r[:, None] * 64 + r[None, :], acc)


def build(specialize: bool, results: dict) -> None:
    buffers = [Buffer("float16", (64, 4096)), Buffer("float16", (4096, 64))]
    try:
        compile_like_launch(
            ws_dot, 90, *buffers, Buffer("float32", (64, 64)), 4096,
            WARP_SPECIALIZE=specialize, num_warps=4,
        )  # fmt: skip
        results[specialize] = "compiled"
    except Exception as exc:
        results[specialize] = type(exc).__name__


def main() -> int:
    results: dict = {}
    threads = [threading.Thread(target=build, args=(s, results)) for s in (False, True)]
    for thread in threads:
        thread.start()
    for i in range(50):
        print(f"stdout line {i}", flush=True)
        print(f"stderr line {i}", file=sys.stderr, flush=True)
    for thread in threads:
        thread.join()
    print(f"plain: {results[False]}, warp-specialized: {results[True]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
