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

The probe itself is ``python -m suite.children accepts-probe CALL ARCH`` (it reads where an
exception was raised with the engine's signature module); this module only asks it and
keeps its answers. Standard library only: it runs in the child, under a release venv.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import subprocess
import sys
from typing import NotRequired, TypedDict, cast

from suite.children import Role, child_argv

PREFIX = "accepts:"
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


class ProbeAnswer(TypedDict):
    """The probe's last line: whether the frontend took the call, and why not."""

    accepted: bool
    why: NotRequired[str]


def _probe(call: str, target: str) -> ProbeAnswer:
    """Ask a fresh interpreter: a native crash or a hang in the probe is not the case's."""
    argv = child_argv(sys.executable, Role.ACCEPTS_PROBE, call, target)
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
            return cast(ProbeAnswer, answer)  # the probe's own line (suite.engine.accepts_probe)
    return {"accepted": False, "why": f"the probe exited with status {done.returncode}"}
