"""NVGPUWarpSpecialization fails on sm_90: LLVM ERROR: unsupported load type for producer commit (triton 3.9.0)

Seen with triton 3.9.0, sm_90, num_warps=4, num_stages=3. Run `python repro.py`:
exit 1 when the bug shows (each line of SAME_BUG is seen), 0 when the kernel compiles,
2 when it fails another way. Written by triton-repro-suite (report ws-pointer-dot-sm90).
"""

import os
import signal
import subprocess
import sys
import tempfile

# Anything raised outside the kernel's compile is this script's own failure: one line, exit 2.
hook = lambda kind, exc, tb: os._exit(print(f"this script failed, not the kernel: {kind.__name__}: {exc}", file=sys.stderr, flush=True) or 2)  # noqa: E731
sys.excepthook = hook if sys.argv[1:] != ["--child"] else sys.excepthook
import triton
import triton.language as tl


@triton.jit
def pointer_dot(
    a_ptr, b_ptr, c_ptr, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr,
):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, warp_specialize=WARP_SPECIALIZE):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BLOCK_N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * BLOCK_N + rn[None, :], acc.to(tl.float16))


# ---- the compile call: triton.compile for sm_90, no GPU needed ----
from triton.backends.compiler import GPUTarget
PHASE, TARGET, ARCH = "compile", 'sm_90', 90
OPTIONS = {'num_warps': 4, 'num_stages': 3}
SIGNATURE = {'a_ptr': '*fp16', 'b_ptr': '*fp16', 'c_ptr': '*fp16', 'K': 'i32'}
CONSTEXPRS = {'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 64, 'WARP_SPECIALIZE': True}
# What the JIT knows of the arguments (16-byte-aligned pointers, ints divisible by 16).
ATTRS = dict.fromkeys(['a_ptr', 'b_ptr', 'c_ptr', 'K'], [['tt.divisibility', 16]])


def ast_source(fn, signature, constexprs, attrs):
    """ASTSource in the installed release's form: constexprs= (3.3 on), AttrsDescriptor (3.2)."""
    from triton.backends import compiler
    from triton.compiler import ASTSource

    at = {name: i for i, name in enumerate(fn.arg_names)}
    hints = {at[n]: value for n, props in attrs.items() for _, value in props}
    if "constexprs" in ASTSource.__init__.__code__.co_varnames:
        types = {n: "constexpr" if n in constexprs else signature.get(n, "constexpr") for n in at}
        by_path = {(at[n],): props for n, props in attrs.items() if n not in constexprs}
        return ASTSource(fn, types, constexprs=constexprs, attrs=by_path)
    if hasattr(compiler, "AttrsDescriptor"):
        return ASTSource(fn, signature, constexprs, compiler.AttrsDescriptor.from_hints(hints))
    from triton.compiler.compiler import AttrsDescriptor

    ones, divisible = ([i for i, v in hints.items() if v == h] for h in (1, 16))
    positional = {at[n]: t for n, t in signature.items()}
    constants = {at[n]: v for n, v in constexprs.items()}
    return ASTSource(fn, positional, constants, AttrsDescriptor(tuple(divisible), tuple(ones)))


def run():
    src = ast_source(pointer_dot, SIGNATURE, CONSTEXPRS, ATTRS)
    triton.compile(src, target=GPUTarget("cuda", ARCH, 32), options=OPTIONS)


# ---- the check: the bug's key evidence in what the compile printed ----
EVIDENCE = ['NVGPUWarpSpecialization', 'LLVM ERROR: unsupported load type for producer commit']
SAME_BUG = ['NVGPUWarpSpecialization']  # the suite's same-bug rule: a failing pass named is enough
TIMEOUT_S = 540


def check():
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(os.environ, TRITON_CACHE_DIR=scratch, PYTHONFAULTHANDLER="1")
        env["TRITON_REPRODUCER_PATH"] = os.path.join(scratch, "reproducer.mlir")
        argv = [sys.executable, os.path.abspath(__file__), "--child"]
        try:
            child = subprocess.run(argv, env=env, capture_output=True, timeout=TIMEOUT_S)
            code, output = child.returncode, child.stderr + child.stdout
        except subprocess.TimeoutExpired as killed:
            code, output = None, (killed.stderr or b"") + (killed.stdout or b"")
    output = output.decode(errors="replace")
    sys.stderr.write(output)
    if code is None:
        ended = f"hung (killed after {TIMEOUT_S} s)"
    elif code < 0:
        ended = f"crashed ({signal.Signals(-code).name})"
    else:
        ended = f"failed (exit status {code})" if code else "succeeded"
    print(f"triton {triton.__version__}, {TARGET}: {PHASE} {ended}")
    for evidence in EVIDENCE:
        print(f"{'seen' if evidence in output + ended else 'NOT seen'}: {evidence}")
    if all(evidence in output + ended for evidence in SAME_BUG):
        print("REPRODUCED")
        return 1
    print(f"not reproduced: the {PHASE} " + ("succeeded" if code == 0 else "failed otherwise"))
    return 0 if code == 0 else 2


if __name__ == "__main__":
    sys.exit(run() if sys.argv[1:] == ["--child"] else check())
