"""The child side of ``repro report``'s capture: ``python -m suite.children report-capture IN OUT``.

It runs the reproducer's compile function under the interpreter of the release that
failed, with ``triton.compile`` replaced by a recorder that raises as soon as it is
called, and writes the call as JSON (or ``{"reason": why none was captured}``).
Standard library, triton and the suite's toolkit only: a release's venv holds nothing else.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from suite.api import Reproducer
from suite.capture.site.repro_capture_records import TEMPLATE_IMPORTS
from suite.engine import CaseResult
from suite.judgement import attrs_by_name, source_form
from suite.toolchain.limits import limits_for


class _Captured(Exception):
    pass


def _capture_here(result: CaseResult, source: dict[str, str] | None) -> dict[str, Any]:
    """The child's side of :func:`capture_compile`: the call, as JSON-ready data."""
    import triton
    import triton.language as tl
    from triton.runtime.jit import JITFunction

    from suite.api import Case, Target

    repro = _reproducer(result, source)
    if repro is None:
        return _no_call(f"the reproducer {result.repro!r} could not be loaded again")
    if repro.compile_fn is None:
        return _no_call(f"{result.repro} has no compile function")
    calls: list[tuple[Any, Any, dict[str, Any]]] = []

    def recorder(src: Any, target: Any = None, options: Any = None, **_: Any) -> Any:
        calls.append((src, target, dict(options or {})))
        raise _Captured

    triton.compile = recorder
    with contextlib.suppress(_Captured):
        repro.compile_fn(Case(repro.id, result.config, Target(result.target)))
    if not calls:
        return _no_call(f"{result.repro}'s compile function never called triton.compile")
    src, target, options = calls[0]
    fn = getattr(src, "fn", None)
    if not isinstance(fn, JITFunction):
        return _no_call(
            f"triton.compile was given a {type(src).__name__}, not an ASTSource of a "
            "@triton.jit kernel (an IR file or a Gluon kernel is not written into repro.py)"
        )
    constants = getattr(src, "constants", None) or getattr(src, "constexprs", None) or {}
    signature = {
        (fn.arg_names[k] if isinstance(k, int) else str(k)): str(v)
        for k, v in dict(src.signature).items()
        if str(v) != "constexpr"
    }
    carrying = _carrying()
    carried = carrying.kernel_source(fn)
    defined = {f.name for f in carried.functions}
    if carried.unresolved:
        return _no_call(
            f"{fn.__name__} reads what a standalone program cannot carry: "
            + ", ".join(carried.unresolved)
        )
    arch = int(getattr(target, "arch", None) or limits_for(result.target).arch)
    problems: list[str] = []
    literal = carrying.literal
    constexprs: dict[str, str] = {}
    for key, value in constants.items():
        index = key[0] if isinstance(key, tuple) and len(key) == 1 else key
        name = fn.arg_names[index] if isinstance(index, int) else str(index)
        plain = value.value if isinstance(value, tl.constexpr) else value
        constexprs[name] = literal(plain, problems, name)
    options_literal = {str(k): literal(v, problems, f"option {k}") for k, v in options.items()}
    if problems:
        return _no_call(f"a constexpr or compile option has no Python literal: {problems[0]}")
    return {
        "attrs": attrs_by_name(getattr(src, "attrs", None), list(fn.arg_names)),
        "form": source_form(),
        "kernel_name": fn.__name__,
        "kernels": [_function_text(f) for f in carried.functions],
        "globals": [(v.name, v.python) for v in carried.values if v.python not in defined],
        "aliases": [(v.name, v.python) for v in carried.values if v.python in defined],
        "imports": [
            _import_line(line)
            for line in carried.imports
            if (line.name, line.module) not in TEMPLATE_IMPORTS
        ],
        "signature": signature,
        "constexprs": constexprs,
        "arch": arch,
        "options": options_literal,
        "arg_names": list(fn.arg_names),
    }


def _launch_here(
    result: CaseResult, source: dict[str, str] | None, request: dict[str, list[str]]
) -> dict[str, Any]:
    """What a launch script carries: the closure of the reproducer's global ``names`` (its
    inputs and launch functions, what its oracles name), the launch script's ``provided``
    helpers left to it, the ``dropped`` decorators (``REPRO.launch``) left off."""
    repro = _reproducer(result, source)
    if repro is None or repro.launch_fn is None:
        return _no_call(f"the reproducer {result.repro!r} has no launch function here")
    module = sys.modules.get(repro.launch_fn.__module__)
    if module is None:
        return _no_call(f"the module of {result.repro}'s launch function is not loaded")
    carrying = _carrying()
    carried, provided = carrying.closure_of(
        request["names"], vars(module), request["provided"], request["dropped"]
    )
    if carried.unresolved:
        return _no_call(
            f"{result.repro}'s launch reads what a standalone program cannot carry: "
            + ", ".join(carried.unresolved)
        )
    return {"body": _carried_text(carried), "provided": sorted(provided)}


def _carried_text(carried: Any) -> str:
    """Imports, values, functions and the names bound to functions, in an order that runs."""
    defined = {f.name for f in carried.functions}
    imports = [
        _import_line(line)
        for line in carried.imports
        if (line.name, line.module) not in TEMPLATE_IMPORTS
    ]
    values = [f"{v.name} = {v.python}" for v in carried.values if v.python not in defined]
    aliases = [f"{v.name} = {v.python}" for v in carried.values if v.python in defined]
    parts = ["\n".join(imports), "\n".join(values)]
    parts += [_function_text(f) for f in carried.functions]
    parts.append("\n".join(aliases))
    return "\n\n\n".join(part for part in parts if part)


def _no_call(reason: str) -> dict[str, Any]:
    return {"reason": reason}


def _reproducer(result: CaseResult, source: dict[str, str] | None) -> Reproducer | None:
    """The reproducer from the child ``source`` the parent resolved (the carried copy)."""
    from suite.engine import load_reproducers

    if not source:
        return None
    return next((r for r in load_reproducers(source) if r.id == result.repro), None)


def _carrying() -> Any:
    """The capture hook's ``repro_capture_kernel``: what a kernel reads, transitively
    (``kernel_source``), and a value as a Python literal (``literal``), as the hook carries
    them into a captured reproducer. One analysis for every standalone program."""
    site = str(Path(__file__).resolve().parents[1] / "capture" / "site")
    if site not in sys.path:
        sys.path.append(site)
    import repro_capture_kernel

    return repro_capture_kernel


def _function_text(function: Any) -> str:
    """A carried function's text under its decorator (one whose text holds its own
    decorators has none)."""
    head = f"@{function.decorator}\n" if function.decorator else ""
    return head + function.text.rstrip()


def _import_line(line: Any) -> str:
    """``import module [as name]`` or ``from module import attribute [as name]``."""
    if line.attribute:
        alias = f" as {line.name}" if line.attribute != line.name else ""
        return f"from {line.module} import {line.attribute}{alias}"
    alias = f" as {line.name}" if line.module != line.name else ""
    return f"import {line.module}{alias}"


def main(argv: list[str]) -> int:
    """The ``report-capture`` child: ``IN.json CALL.json`` (run by ``capture_compile``)."""
    given = json.loads(Path(argv[0]).read_text())
    result = CaseResult.from_json(given["result"])
    launch = given.get("launch")
    try:
        if launch:
            call = _launch_here(result, given.get("source"), launch)
        else:
            call = _capture_here(result, given.get("source"))
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0]
        what = "module" if launch else "compile function"
        call = _no_call(f"the reproducer's {what} raised {type(exc).__name__}: {first}")
    Path(argv[1]).write_text(json.dumps(call))
    return 0
