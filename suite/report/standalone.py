"""The standalone ``repro.py``: the compile call a case makes, captured and rendered."""

from __future__ import annotations

import ast
import contextlib
import inspect
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import (
    Environment,
)

from suite.engine.outcome import CaseResult
from suite.engine.shim import child_env
from suite.errors import UsageError
from suite.report.subject import REPRO_TIMEOUT_S, Subject
from suite.toolchain.limits import limits_for


class _Captured(Exception):
    pass


@dataclass
class CompileCall:
    """What the reproducer passed to ``triton.compile`` for the case."""

    kernel_name: str
    kernels: list[str]
    globals_: list[tuple[str, str]]
    signature: dict[str, str]
    constexprs: dict[str, Any]
    arch: int
    options: dict[str, Any]
    arg_names: list[str] = field(default_factory=list)


def _literal(value: Any) -> str:
    """Python source for a constexpr value; ``ValueError`` when there is none."""
    import triton.language as tl

    if isinstance(value, tl.constexpr):
        value = value.value
    if isinstance(value, tl.dtype):
        return f"tl.{value.name}" if hasattr(tl, value.name) else repr(str(value))
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_literal(v) for v in value)
        return f"({inner},)" if isinstance(value, tuple) else f"[{inner}]"
    raise ValueError(f"no literal for {type(value).__name__}")


class _Source:
    """Python source of a literal (``repr`` prints it bare inside dicts)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def capture_compile(result: CaseResult, timeout_s: float = 300) -> CompileCall | None:
    """The ``triton.compile`` call the reproducer makes for ``result``'s case, or ``None``.

    The reproducer's compile function runs in a child interpreter (``python -m suite.report.report
    --capture``), as every case does: it may print, crash or hang. There ``triton.compile``
    is replaced by a recorder that raises as soon as it is called, so nothing is compiled.
    ``None`` when the reproducer cannot be found or makes no such call (the CUDA programs).
    """
    with tempfile.TemporaryDirectory(prefix="repro-capture-") as work:
        given, taken = Path(work) / "result.json", Path(work) / "call.json"
        given.write_text(json.dumps(result.to_json(), default=str))
        env = child_env({"TRITON_CACHE_DIR": str(Path(work) / "cache")})
        try:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "suite.report.standalone",
                    "--capture",
                    str(given),
                    str(taken),
                ],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return None
        if not taken.is_file():
            return None
        call = json.loads(taken.read_text())
    return CompileCall(
        call["kernel_name"],
        call["kernels"],
        [(name, source) for name, source in call["globals"]],
        call["signature"],
        {name: _Source(source) for name, source in call["constexprs"].items()},
        call["arch"],
        call["options"],
        call["arg_names"],
    )


def _capture_here(result: CaseResult) -> dict[str, Any] | None:
    """The child's side of :func:`capture_compile`: the call, as JSON-ready data."""
    import triton
    from triton.runtime.jit import JITFunction

    from suite.api import Case, Target

    found = _found_for(result)
    if found is None or found.repro.compile_fn is None:
        return None
    calls: list[tuple[Any, Any, dict[str, Any]]] = []

    def recorder(src: Any, target: Any = None, options: Any = None, **_: Any) -> Any:
        calls.append((src, target, dict(options or {})))
        raise _Captured

    triton.compile = recorder
    with contextlib.suppress(_Captured):
        found.repro.compile_fn(Case(found.repro.id, result.config, Target(result.target)))
    if not calls:
        return None
    src, target, options = calls[0]
    fn = getattr(src, "fn", None)
    if not isinstance(fn, JITFunction):
        return None
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
    json.dumps(options)  # options must be plain data to be written into a script
    return {
        "kernel_name": fn.__name__,
        "kernels": kernels,
        "globals": globals_,
        "signature": signature,
        "constexprs": constexprs,
        "arch": arch,
        "options": options,
        "arg_names": list(fn.arg_names),
    }


def _found_for(result: CaseResult) -> Any:
    from suite.engine.child import load_reproducers
    from suite.engine.discover import Found, select

    spec = result.artifacts.get("spec.json")
    if spec and Path(spec).is_file():
        try:
            source = json.loads(Path(spec).read_text())["source"]
            for repro in load_reproducers(source):
                if repro.id == result.repro:
                    return Found(repro, source)
        except Exception:
            pass
    try:
        return next((f for f in select([result.repro]) if f.repro.id == result.repro), None)
    except UsageError:
        return None


def _module_kernels(module: Any, fn: Any) -> tuple[list[str], list[tuple[str, str]]]:
    """Every module-level ``@triton.jit`` function's source, in file order, and the simple
    module-level constants they name."""
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
        if name.isupper() and value is not None and not callable(value):
            try:
                constants.append((name, _literal(value)))
            except ValueError:
                continue
    return [inspect.getsource(j.fn).rstrip() for j in ordered], constants


def repro_script(
    env: Environment, subject: Subject, call: CompileCall, expected: str, title: str
) -> str:
    options_text = ", ".join(f"{k}={v}" for k, v in call.options.items()) or "default options"
    return env.get_template("repro.py.j2").render(
        title=title,
        report_id=subject.report_id,
        target=subject.result.target,
        arch=call.arch,
        expected=expected,
        triton_version=subject.triton_version,
        options=call.options,
        options_text=options_text,
        signature=call.signature,
        constexprs=call.constexprs,
        globals_=call.globals_,
        kernels=call.kernels,
        kernel_name=call.kernel_name,
        timeout_s=REPRO_TIMEOUT_S,
    )


def minimal_snippet(call: CompileCall, triton_version: str) -> str:
    """The kernel and the bare compile call, for the issue body: what a maintainer pastes.

    Written for the affected release's ``ASTSource`` (``constexprs=`` by name from 3.3 on,
    ``constants=`` by position before); ``repro.py`` chooses at run time instead.
    """
    from packaging.version import InvalidVersion, Version

    try:
        by_name = Version(triton_version.split("+")[0]) >= Version("3.3")
    except InvalidVersion:
        by_name = True
    lines = [
        "import triton",
        "import triton.language as tl",
        "from triton.backends.compiler import GPUTarget",
        "from triton.compiler import ASTSource",
        "",
        *(f"{name} = {value}" for name, value in call.globals_),
        "",
        *(f"{source}\n\n" for source in call.kernels),
    ]
    if by_name:
        types = ", ".join(f"{n!r}: {call.signature.get(n, 'constexpr')!r}" for n in call.arg_names)
        values = ", ".join(f"{k!r}: {v!r}" for k, v in call.constexprs.items())
        lines.append(f"src = ASTSource({call.kernel_name}, {{{types}}}, constexprs={{{values}}})")
    else:
        position = {name: i for i, name in enumerate(call.arg_names)}
        types = ", ".join(f"{position[k]}: {v!r}" for k, v in call.signature.items())
        values = ", ".join(f"{position[k]}: {v!r}" for k, v in call.constexprs.items())
        lines.append(f"src = ASTSource({call.kernel_name}, {{{types}}}, constants={{{values}}})")
    target = f'GPUTarget("cuda", {call.arch}, 32)'
    lines.append(f"triton.compile(src, target={target}, options={call.options!r})")
    return "\n".join(lines).replace("\n\n\n\n", "\n\n\n") + "\n"


def foreign_imports(script: str) -> list[str]:
    """Top-level modules ``script`` imports beyond the standard library, triton and torch."""
    allowed = set(sys.stdlib_module_names) | {"triton", "torch"}
    found: set[str] = set()
    for node in ast.walk(ast.parse(script)):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return sorted(found - allowed)


def _capture_main(argv: list[str]) -> int:
    """``python -m suite.report.standalone --capture RESULT.json CALL.json``
    (run by capture_compile)."""
    result = CaseResult.from_json(json.loads(Path(argv[0]).read_text()))
    try:
        call = _capture_here(result)
    except Exception:
        return 1
    if call is None:
        return 1
    Path(argv[1]).write_text(json.dumps(call))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--capture":
        sys.exit(_capture_main(sys.argv[2:]))
    sys.exit("usage: python -m suite.report.standalone --capture RESULT.json CALL.json")
