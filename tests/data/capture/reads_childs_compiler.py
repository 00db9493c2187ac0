"""A test harness that compiles in a child process and reads the child's stderr for the
compiler's own diagnostic, as test suites and build scripts do: it prints the lines it
found and exits 1 when the compiler said something (a regression), 2 when the child
failed without a word from the compiler (inconclusive), 0 when the child compiled.

Modes of the child: ``abort``: the chained dot of triton-lang/triton#4418 for sm_90
(``repros/upstream/hopper_chained_dot_layout.py``), which LLVM aborts the process on in
3.0.0-3.2.0 (SIGABRT) and which compiles from 3.3.0; ``raise``: the warp-specialized loop of
triton-lang/triton#9728 (as in threads_and_output.py), which 3.9.0 fails with an exception
after the compiler wrote ``LLVM ERROR`` on fd 2. The child catches the exception: the only
diagnostic there is to read is the compiler's own text. Used by tests/test_capture_hook.py.

Usage: python reads_childs_compiler.py abort|raise
"""

import os
import subprocess
import sys

import triton
import triton.language as tl

HERE = os.path.dirname(os.path.abspath(__file__))
DIAGNOSTICS = ("LLVM ERROR", "Assertion", "UNREACHABLE")


@triton.jit
def chained_dot(out_ptr, stride_m, stride_h, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)[:, None] * stride_m
    cols = tl.arange(0, BLOCK)[None, :]
    y = tl.zeros([BLOCK, BLOCK], tl.float16)
    x = tl.zeros([BLOCK, BLOCK], tl.float16)
    p = tl.dot(y, x)
    p = tl.zeros([BLOCK], tl.float16)[:, None] * p + p
    tl.store(out_ptr + tl.program_id(0) * stride_h + rows + cols, p)


@triton.jit
def ws_dot(a, b, c, K, WARP_SPECIALIZE: tl.constexpr):
    r = tl.arange(0, 64)
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for k in tl.range(0, K, 64, warp_specialize=WARP_SPECIALIZE):
        x = tl.load(a + r[:, None] * K + k + r[None, :])
        acc = tl.dot(x, tl.load(b + (k + r)[:, None] * 64 + r[None, :]), acc)
    tl.store(c + r[:, None] * 64 + r[None, :], acc)


def child(mode: str) -> None:
    sys.path.insert(0, os.path.join(HERE, "corpus"))
    from aot import Buffer, compile_like_launch

    try:
        if mode == "abort":
            compile_like_launch(
                chained_dot, 90, Buffer("float16", (64, 64)), 64, 4096, BLOCK=64, num_warps=8
            )
        else:
            buffers = [Buffer("float16", (64, 4096)), Buffer("float16", (4096, 64))]
            compile_like_launch(
                ws_dot, 90, *buffers, Buffer("float32", (64, 64)), 4096,
                WARP_SPECIALIZE=True, num_warps=4,
            )  # fmt: skip
    except Exception as exc:
        print(f"child: the compile raised {type(exc).__name__}", flush=True)
        sys.exit(3)
    print("child: compiled", flush=True)


def harness(mode: str) -> int:
    ran = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "child", mode],
        capture_output=True,
        text=True,
        check=False,
    )
    print(f"child exit {ran.returncode}; its stdout: {ran.stdout.strip()!r}")
    said = [line for line in ran.stderr.splitlines() if any(d in line for d in DIAGNOSTICS)]
    for line in said:
        print(f"compiler said: {line.strip()}")
    if ran.returncode == 0:
        return 0
    return 1 if said else 2


if __name__ == "__main__":
    if sys.argv[1] == "child":
        child(sys.argv[2])
    else:
        sys.exit(harness(sys.argv[1]))
