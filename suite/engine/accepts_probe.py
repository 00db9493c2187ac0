"""The ``accepts:`` probe: ``python -m suite.children accepts-probe CALL ARCH``.

Writes a zero-argument kernel made of ``CALL`` (``suite/templates/accepts_probe.py.tmpl``),
compiles it for ``ARCH`` and stops at the first MLIR pass: the frontend accepted the call.
An exception before that is a refusal when Triton's frontend raised it (its origin, as
:mod:`suite.engine.signature` reads it); the probe's own glue failing is an error, never an
answer. Prints one JSON line. Asked, and its answer kept, by :mod:`suite.toolchain.accepts`.
Standard library and triton only: it runs under a release venv's interpreter.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from string import Template
from typing import Any

from suite.api import Case, Target
from suite.engine.exception_facts import PASS_STAGE_FUNCTIONS, Origin, describe_exception
from suite.engine.signature import python_message
from suite.toolchain.accepts import check_call
from suite.tritonc import compile_kernel

PROBE_TEMPLATE = Path(__file__).resolve().parents[1] / "templates" / "accepts_probe.py.tmpl"


def _frontend_done(frame: Any, event: str, arg: Any) -> None:
    """Called on every Python call of the compile: the first pass stage ends the probe."""
    if event == "call" and frame.f_code.co_name in PASS_STAGE_FUNCTIONS:
        print(json.dumps({"accepted": True}), flush=True)
        os._exit(0)


def main(argv: list[str]) -> int:
    call, target = argv
    check_call(call)
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
            said = (python_message(error) or f"{error.type}: {error.message}")[:300]
            if error.origin == Origin.GLUE.value:  # the probe's own glue, not the answer
                print(json.dumps({"error": said}), flush=True)
                return 1
            refused = error.origin == Origin.FRONTEND.value
            print(json.dumps({"accepted": not refused, "why": said}), flush=True)
            return 0
        sys.setprofile(None)
    print(json.dumps({"accepted": True}), flush=True)
    return 0
