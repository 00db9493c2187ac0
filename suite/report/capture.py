"""The child side of ``repro report``'s capture: ``python -m suite.report.capture IN OUT``.

It runs the reproducer's compile function under the interpreter of the release that
failed, with ``triton.compile`` replaced by a recorder that raises as soon as it is
called, and writes the call as JSON (or ``{"reason": why none was captured}``).
Standard library, triton and the suite's toolkit only: a release's venv holds nothing else.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import sys
from pathlib import Path
from typing import Any

from suite.api import Reproducer
from suite.engine import CaseResult
from suite.toolchain.limits import limits_for


class _Captured(Exception):
    pass


def _literal(value: Any) -> str:
    """Python source for a constexpr value; ``ValueError`` when there is none."""
    import triton.language as tl

    if isinstance(value, tl.constexpr):
        value = value.value
    if isinstance(value, tl.dtype):
        # The dtype's public name (tl.float8e4nv), not its short one (fp8e4nv).
        names = [
            n for n in dir(tl) if isinstance(getattr(tl, n), tl.dtype) and getattr(tl, n) == value
        ]
        return f"tl.{sorted(names, key=len)[-1]}" if names else repr(str(value))
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_literal(v) for v in value)
        return f"({inner},)" if isinstance(value, tuple) else f"[{inner}]"
    raise ValueError(f"no literal for {type(value).__name__}")


def _capture_here(result: CaseResult, source: dict[str, str] | None) -> dict[str, Any]:
    """The child's side of :func:`capture_compile`: the call, as JSON-ready data."""
    import triton
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
    constexprs: dict[str, str] = {}
    for key, value in constants.items():
        index = key[0] if isinstance(key, tuple) and len(key) == 1 else key
        name = fn.arg_names[index] if isinstance(index, int) else str(index)
        constexprs[name] = _literal(value)
    signature = {
        (fn.arg_names[k] if isinstance(k, int) else str(k)): str(v)
        for k, v in dict(src.signature).items()
        if str(v) != "constexpr"
    }
    kernels, globals_ = _module_kernels(sys.modules.get(fn.fn.__module__), fn)
    arch = int(getattr(target, "arch", None) or limits_for(result.target).arch)
    try:
        json.dumps(options)  # options must be plain data to be written into a script
    except TypeError as exc:
        return _no_call(f"the compile options are not plain data ({exc})")
    return {
        "attrs": _attrs_by_name(getattr(src, "attrs", None), list(fn.arg_names)),
        "kernel_name": fn.__name__,
        "kernels": kernels,
        "globals": globals_,
        "signature": signature,
        "constexprs": constexprs,
        "arch": arch,
        "options": options,
        "arg_names": list(fn.arg_names),
    }


def _no_call(reason: str) -> dict[str, Any]:
    return {"reason": reason}


def _attrs_by_name(attrs: Any, arg_names: list[str]) -> dict[str, list[list[Any]]]:
    """The specialization attrs of an ASTSource by argument name, from any release's form:
    a dict keyed by ``(index,)`` (3.3 on), or an AttrsDescriptor (``arg_properties`` in 3.2,
    ``divisible_by_16``/``equal_to_1`` in 3.0 and 3.1)."""
    found: dict[str, list[list[Any]]] = {}
    if isinstance(attrs, dict):
        for key, props in attrs.items():
            index = key[0] if isinstance(key, tuple) and len(key) == 1 else key
            if isinstance(index, int) and index < len(arg_names):
                found[arg_names[index]] = [list(p) for p in props]
        return found
    properties = dict(getattr(attrs, "arg_properties", None) or {})
    if not properties and attrs is not None:
        properties = {
            "tt.divisibility": sorted(getattr(attrs, "divisible_by_16", None) or ()),
            "tt.equal_to": sorted(getattr(attrs, "equal_to_1", None) or ()),
        }
    value = {"tt.divisibility": 16, "tt.equal_to": 1}
    for name, indices in properties.items():
        for index in indices:
            if isinstance(index, int) and index < len(arg_names) and name in value:
                found.setdefault(arg_names[index], []).append([name, value[name]])
    return found


def _reproducer(result: CaseResult, source: dict[str, str] | None) -> Reproducer | None:
    """The reproducer from the child ``source`` the parent resolved (the carried copy)."""
    from suite.engine import load_reproducers

    if not source:
        return None
    return next((r for r in load_reproducers(source) if r.id == result.repro), None)


def _module_kernels(module: Any, fn: Any) -> tuple[list[str], list[tuple[str, str]]]:
    """Every module-level ``@triton.jit`` function's source, in file order, and the simple
    module-level constants they name."""
    import triton.language as tl
    from triton.runtime.jit import JITFunction

    jitted = [fn]
    if module is not None:
        jitted += [v for v in vars(module).values() if isinstance(v, JITFunction) and v is not fn]
    unique = {id(j): j for j in jitted}.values()
    ordered = sorted(unique, key=lambda j: inspect.getsourcelines(j.fn)[1])
    names: set[str] = set()
    for j in ordered:
        names.update(j.fn.__code__.co_names)
    constants: list[tuple[str, str]] = []
    for name in sorted(names):
        value = getattr(module, name, None) if module is not None else None
        # A tl.constexpr is callable (constexpr functions) and must stay a tl.constexpr: newer
        # releases refuse a kernel that reads a plain global.
        wrapped = isinstance(value, tl.constexpr)
        if name.isupper() and value is not None and (wrapped or not callable(value)):
            try:
                shown = _literal(value)
            except ValueError:
                continue
            constants.append((name, f"tl.constexpr({shown})" if wrapped else shown))
    return [inspect.getsource(j.fn).rstrip() for j in ordered], constants


def main(argv: list[str]) -> int:
    """``python -m suite.report.capture IN.json CALL.json`` (run by ``capture_compile``)."""
    given = json.loads(Path(argv[0]).read_text())
    result = CaseResult.from_json(given["result"])
    try:
        call = _capture_here(result, given.get("source"))
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0]
        call = _no_call(f"the reproducer's compile function raised {type(exc).__name__}: {first}")
    Path(argv[1]).write_text(json.dumps(call))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m suite.report.capture IN.json CALL.json")
    sys.exit(main(sys.argv[1:]))
