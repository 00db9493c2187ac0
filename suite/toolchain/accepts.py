"""``requires=("accepts:<call>",)``: whether this Triton's frontend accepts one call.

An API's name and keywords do not say which arguments a release takes (``tl.dot_scaled``
exists from 3.2 but takes an fp16 operand only from 3.3). The requirement is the call
itself, a Python expression over ``tl`` (``tl.dot_scaled(tl.zeros((64, 64), tl.float16),
None, 'fp16', tl.zeros((32, 64), tl.uint8), None, 'e2m1')``): a zero-argument kernel made
of that call is compiled for the case's target in a fresh interpreter, and the call is
accepted when Triton's frontend turns it into TTIR, i.e. the compile reaches its first MLIR
pass (it is stopped there: what the passes do is the reproducer's business, not the
requirement's). Anything the frontend raises is a refusal. The answer is kept per Triton
installation, version, target and call under the cache folder, so each release is asked
once, like the ptxas target probe.

``python -m suite.toolchain.accepts CALL ARCH`` is the probe itself; it prints one JSON line.
Standard library and triton only: it runs under a release venv's interpreter.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from string import Template
from typing import Any

PREFIX = "accepts:"
PROBE_TEMPLATE = Path(__file__).resolve().parents[1] / "templates" / "accepts_probe.py.tmpl"
PROBE_TIMEOUT_S = 300


def check_call(call: str) -> None:
    """A requirement that is not one Python expression is the reproducer's mistake."""
    try:
        ast.parse(call, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"requirement {PREFIX}{call!r} is not one Python expression") from exc


def accepts(call: str, target: str) -> bool:
    """Whether this interpreter's Triton accepts ``call`` when compiling for ``target``."""
    check_call(call)
    import triton

    key = json.dumps(
        [os.path.dirname(triton.__file__), triton.__version__, target, call], sort_keys=True
    )
    from suite.files import cache_root, write_atomic

    cached = (
        cache_root() / "probes" / f"accepts-{hashlib.sha256(key.encode()).hexdigest()[:20]}.json"
    )
    try:
        return bool(json.loads(cached.read_text())["accepted"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    answer = _probe(call, target)
    cached.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(cached, json.dumps({"key": json.loads(key), **answer}))
    return bool(answer["accepted"])


def _probe(call: str, target: str) -> dict[str, Any]:
    """Ask a fresh interpreter: a native crash or a hang in the probe is not the case's."""
    argv = [sys.executable, "-m", "suite.toolchain.accepts", call, target]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"accepted": False, "why": f"the probe ran past {PROBE_TIMEOUT_S} s"}
    for line in reversed(done.stdout.splitlines()):
        try:
            answer = json.loads(line)
        except ValueError:
            continue
        if isinstance(answer, dict) and "error" in answer:
            raise RuntimeError(f"the {PREFIX} probe could not compile: {answer['error']}")
        if isinstance(answer, dict) and "accepted" in answer:
            return answer
    return {"accepted": False, "why": f"the probe exited with status {done.returncode}"}


def _frontend_done(frame: Any, event: str, arg: Any) -> None:
    """Called on every Python call of the compile: the first pass stage ends the probe."""
    from suite.engine.signature import PASS_STAGE_FUNCTIONS

    if event == "call" and frame.f_code.co_name in PASS_STAGE_FUNCTIONS:
        print(json.dumps({"accepted": True}), flush=True)
        os._exit(0)


def main(argv: list[str]) -> int:
    call, target = argv
    check_call(call)
    from suite.api import Case, Target
    from suite.engine.signature import Origin, describe_exception, python_message
    from suite.tritonc import compile_kernel

    with tempfile.TemporaryDirectory(prefix="repro-accepts-") as work:
        os.environ["TRITON_CACHE_DIR"] = os.path.join(work, "cache")
        source = Template(PROBE_TEMPLATE.read_text()).substitute(call=call)
        Path(work, "accepts_probe.py").write_text(source)
        sys.path.insert(0, work)
        try:
            import accepts_probe

            sys.setprofile(_frontend_done)
            compile_kernel(accepts_probe.accepts_probe, Case("accepts", {}, Target(target)), {}, {})
        except Exception as exc:
            sys.setprofile(None)
            error = describe_exception(exc, "compile")
            said = (python_message(error) or f"{error['type']}: {error['message']}")[:300]
            if error["origin"] == Origin.GLUE.value:  # the probe's own glue, not the answer
                print(json.dumps({"error": said}), flush=True)
                return 1
            refused = error["origin"] == Origin.FRONTEND.value
            print(json.dumps({"accepted": not refused, "why": said}), flush=True)
            return 0
        sys.setprofile(None)
    print(json.dumps({"accepted": True}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
