"""Whether an interpreter's Triton works: it imports and compiles a kernel to a cubin.

Run by file path (``python venv_check.py``) under a release's venv, so it needs only the
standard library and triton. A venv is kept only after this passes: a release can install
cleanly and still fail at ``import triton`` (3.0-3.2 import setuptools without declaring it).
The kernel takes no arguments, so the call is the same on every release's ``ASTSource``.
Prints ``ok <version>`` and exits 0, or prints the failure's last line and exits 1.
"""

from __future__ import annotations

import sys
import traceback


def _compile() -> str:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def probe():  # the whole pipeline runs for it, to the cubin
        pass

    kernel = triton.compile(ASTSource(probe, {}), target=GPUTarget("cuda", 80, 32))
    if not kernel.asm.get("cubin"):
        raise RuntimeError("the compile gave no cubin")
    return str(triton.__version__)


def main() -> int:
    try:
        version = _compile()
    except BaseException as exc:  # any failure is the answer, printed on one line
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        print(last.splitlines()[-1] if last else type(exc).__name__, flush=True)
        return 1
    print(f"ok {version}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
