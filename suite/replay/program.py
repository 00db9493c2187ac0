#!/usr/bin/env python3
"""Replay one MLIR pass that fails (written by `repro replay`). Needs only triton.

    python replay.py [IR]          # default: the IR file next to this script (IR_NAME)

Exit status: 1 the pass fails (the bug reproduces); 0 the pass succeeds; 2 this cannot be
replayed here: the IR does not parse in the installed release (MLIR text is specific to a
release), or the release has no binding for the pass.
"""

import os
import subprocess
import sys

# Parameters: `repro replay` rewrites the values of these assignments (and nothing else)
# when it writes replay.py; see suite.replay.script.replay_script.
IR_NAME = "before.mlir"
BINDING = "passes.ttgpuir.add_assign_latencies"
ARGS = [("value", 2)]
PASS = "tritongpu-assign-latencies{num-stages=2}"
CAPTURED_UNDER = "3.5.0"
REPLAYED_UNDER = "3.5.0"
CASE_ID = "tma-gemm-prefetch[sm_100-64x64x32-w4-s2]"

HERE = os.path.dirname(os.path.abspath(__file__))
IR = os.path.join(HERE, IR_NAME)
PASSED, FAILED, UNPARSABLE, NO_BINDING = 0, 10, 11, 12


def _in_child(ir):
    """Parse IR and run the pass in this process; the parent maps the outcome."""
    try:
        import triton
        from triton._C import libtriton as lt
    except ImportError as exc:
        print(f"replay.py: cannot import triton: {exc}", file=sys.stderr)
        return NO_BINDING
    ctx = lt.ir.context()
    lt.ir.load_dialects(ctx)
    for backend in ("nvidia", "amd"):
        module = getattr(lt, backend, None)
        if module is not None and hasattr(module, "load_dialects"):
            module.load_dialects(ctx)
    try:
        mod = lt.ir.parse_mlir_module(ir, ctx)
        mod.context = ctx
    except Exception:
        return UNPARSABLE
    target = lt
    for part in BINDING.split("."):
        target = getattr(target, part, None)
        if target is None:
            print(f"replay.py: triton {triton.__version__} has no {BINDING}", file=sys.stderr)
            return NO_BINDING
    args = []
    for kind, value in ARGS:
        if kind == "object":
            cls = lt
            for part in str(value).split("."):
                cls = getattr(cls, part)
            args.append(cls())
        else:
            args.append(value)
    pm = lt.ir.pass_manager(ctx)
    target(pm, *args)
    doc = (pm.run.__doc__ or "").splitlines()[:1]
    try:
        if doc and ("arg1: str" in doc[0] or ", str" in doc[0]):
            pm.run(mod, "replay")
        else:
            pm.run(mod)
    except Exception:
        return FAILED
    return PASSED


def _diagnostics(text):
    """MLIR's error and note lines (the crash reproducer it may print is left out)."""
    keep = ("error:", "note:", "warning:", "replay.py:")
    return [line for line in text.splitlines() if any(k in line for k in keep)]


def main(argv):
    if len(argv) > 1 and argv[1] == "--in-process":
        return _in_child(argv[2])
    ir = os.path.abspath(argv[1]) if len(argv) > 1 else IR
    try:
        import triton

        version = triton.__version__
    except ImportError:
        version = "?"
    env = dict(os.environ)
    env.pop("TRITON_REPRODUCER_PATH", None)
    child = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--in-process", ir],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines = _diagnostics(child.stderr)
    if child.returncode == PASSED:
        print(f"replay.py: {PASS} succeeded under triton {version}: the bug does not reproduce")
        return 0
    if child.returncode == UNPARSABLE:
        first = lines[0].strip() if lines else "no diagnostic"
        print(
            f"replay.py: {os.path.basename(ir)} does not parse under triton {version} "
            f"(captured under triton {CAPTURED_UNDER}; MLIR text is specific to a release): "
            f"{first}"
        )
        return 2
    for line in lines:
        print(line, file=sys.stderr)
    if child.returncode == NO_BINDING:
        print(f"replay.py: cannot replay {PASS} under triton {version}")
        return 2
    if child.returncode == FAILED or child.returncode < 0:
        how = f"killed by signal {-child.returncode}" if child.returncode < 0 else "failed"
        print(f"replay.py: {PASS} {how} under triton {version}: the bug reproduces")
        return 1
    print(f"replay.py: unexpected exit {child.returncode} of the replay child")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
