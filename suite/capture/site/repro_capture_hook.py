"""The hook ``repro capture`` puts in the user's program: standard library and triton only.

``sitecustomize`` calls :func:`arm`. Nothing happens until the program imports triton;
right after triton's own import finishes, :func:`install` wraps

- the compile entry point (``triton.compiler.compiler.compile``, and the names
  ``triton.compile`` / ``triton.compiler.compile`` bound to it; every release 3.0-3.9
  has the JIT import it from ``triton.compiler`` when it builds a kernel's binder, after
  this ran): a record is written and synced *before* the compile starts, marked done
  (or dropped, without ``--all``) when it returns, marked failed when it raises; a
  process killed inside the compile leaves it as started. Triton's compilation
  listener (3.4 on) fires only after a successful compile, so it cannot see a failure.
- ``JITFunction.run`` (``kernel[grid](...)``): a launch that raises after its compile
  succeeded writes a launch record (shapes, strides, dtypes and scalars, no data).
- ``Autotuner.run``: with ``--all``, the config list and the chosen configs; a failure
  the autotuner swallowed (a dropped config) is marked handled.

The hook only reads what the call already holds: it compiles nothing, changes no
argument (so no cache key), writes only under ``REPRO_CAPTURE_DIR`` and never lets its
own error reach the program (it goes to ``hook-errors.txt``).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.abc
import importlib.util
import itertools
import math
import os
import re
import stat
import sys
import textwrap
import threading
import traceback
import types
from pathlib import Path
from typing import Any

from repro_capture_records import (
    DONE,
    ENV_ALL,
    ENV_DIR,
    FAILED,
    STARTED,
    AutotuneRecord,
    CompileRecord,
    ErrorFacts,
    FunctionSource,
    GlobalValue,
    ImportLine,
    KernelSource,
    LaunchRecord,
    TensorArg,
    write_durably,
)

_SEQUENCE = itertools.count()
_LOCAL = threading.local()  # per thread: did a compile fail in this launch, autotune depth
_DEF = re.compile(r"^\s*def\s+\w+\s*\(", re.MULTILINE)
_LAUNCH_KEYWORDS = frozenset({"grid", "warmup"})
# What the autotuner's benchmark catches and turns into an infinitely slow config.
_AUTOTUNER_SWALLOWS = frozenset({"OutOfResources", "CompileTimeAssertionFailure", "PTXASError"})
_OPTION_NAMES = frozenset(
    {
        "num_warps",
        "num_stages",
        "num_ctas",
        "maxnreg",
        "enable_fp_fusion",
        "launch_cooperative_grid",
    }
)


def folder() -> Path | None:
    value = os.environ.get(ENV_DIR)
    return Path(value) if value else None


def keep_all() -> bool:
    return os.environ.get(ENV_ALL) == "1"


def arm() -> None:
    """Install the hook once triton has been imported (now, if it already is)."""
    if folder() is None:
        return
    if "triton" in sys.modules:
        _install_quietly()
        return
    sys.meta_path.insert(0, _TritonFinder())


class _TritonFinder(importlib.abc.MetaPathFinder):
    """Finds ``triton`` through the other finders, then installs after its import.

    It stays in place until triton is imported: ``importlib.util.find_spec("triton")``
    (torch asks that before it imports triton) finds without importing."""

    def __init__(self) -> None:
        self._finding = False

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "triton" or self._finding:
            return None
        self._finding = True
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self._finding = False
        if spec is not None and spec.loader is not None:
            spec.loader = _InstallAfter(spec.loader, self)
        return spec


class _InstallAfter(importlib.abc.Loader):
    """Runs triton's own loader, gives the module its real loader back, then installs."""

    def __init__(self, inner: Any, finder: _TritonFinder) -> None:
        self._inner = inner
        self._finder = finder

    def create_module(self, spec: Any) -> Any:
        return self._inner.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__loader__ = self._inner
        if module.__spec__ is not None:
            module.__spec__.loader = self._inner
        self._inner.exec_module(module)
        if self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)
        _install_quietly()


def _install_quietly() -> None:
    try:
        install()
    except Exception:
        _note_hook_error("install")


def install() -> None:
    import triton
    import triton.compiler as compiler_package
    from triton.compiler import compiler as compiler_module
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction

    original = compiler_module.compile
    if getattr(original, "_repro_capture", False):
        return
    wrapped = _compile_wrapper(original)
    for owner in (triton, compiler_package, compiler_module):
        if getattr(owner, "compile", None) is original:
            owner.compile = wrapped
    JITFunction.run = _run_wrapper(JITFunction.run)
    Autotuner.run = _autotune_wrapper(Autotuner.run)


def _note_hook_error(where: str) -> None:
    """The hook's own failure: kept for the capture's summary, never raised."""
    try:
        base = folder()
        if base is not None:
            with open(base / "hook-errors.txt", "a") as handle:
                handle.write(f"[pid {os.getpid()}] {where}\n{traceback.format_exc()}\n")
    except Exception:
        pass


# ---------------------------------------------------------------------------------------
# Compiles.
# ---------------------------------------------------------------------------------------


def _compile_wrapper(original: Any) -> Any:
    @functools.wraps(original)
    def compile(src: Any, *args: Any, **kwargs: Any) -> Any:
        begun = _begin_quietly(src, args, kwargs)
        try:
            result = original(src, *args, **kwargs)
        except Exception as exc:
            _LOCAL.compile_failed = True
            if begun is not None:
                _end_quietly(begun, exc)
            raise
        except BaseException:
            # An interrupt or exit inside a compile is not the compiler's failure.
            if begun is not None:
                _drop(begun[1])
            raise
        if begun is not None:
            _end_quietly(begun, None)
        return result

    compile._repro_capture = True  # type: ignore[attr-defined]
    return compile


def _begin_quietly(src: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        return _begin(src, args, kwargs)
    except Exception:
        _note_hook_error("recording a compile")
        return None


def _begin(src: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    base = folder()
    fn = getattr(src, "fn", None)
    if base is None or fn is None:  # an IR file (IRSource) carries no Python kernel
        return None
    target = args[0] if args else kwargs.get("target")
    options = args[1] if len(args) > 1 else kwargs.get("options")
    problems: list[str] = []
    kernel = kernel_source(fn)
    spec = _specialization(src, fn, problems)
    record = CompileRecord(
        id=f"{os.getpid()}-{next(_SEQUENCE):04d}-{fn.__name__}",
        state=STARTED,
        pid=os.getpid(),
        kernel=kernel,
        signature=spec["signature"],
        constexprs=spec["constexprs"],
        divisible=spec["divisible"],
        equal_to_1=spec["equal_to_1"],
        attrs=spec["attrs"],
        options=_json_options(options or {}, problems),
        target=_target(target),
        triton=_triton_version(),
        python=sys.executable,
        argv=list(sys.argv),
        called_from=_called_from(),
        problems=problems,
        stderr_start=_stderr_offset(),
    )
    path = base / "compiles" / f"{record.id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_durably(path, record)
    return record, path


def _end_quietly(begun: tuple[CompileRecord, Path], exc: BaseException | None) -> None:
    record, path = begun
    try:
        if exc is None:
            if keep_all():
                record.state = DONE
                record.stderr_end = _stderr_offset()
                write_durably(path, record)
            else:
                _drop(path)
            return
        record.state = FAILED
        record.error = error_facts(exc)
        record.stderr_end = _stderr_offset()
        write_durably(path, record)
        _autotune_records().append(path)
    except Exception:
        _note_hook_error("finishing a compile record")


def _drop(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def error_facts(exc: BaseException) -> ErrorFacts:
    cause = exc.__cause__ or exc.__context__
    return ErrorFacts(
        type=type(exc).__name__,
        qualname=f"{type(exc).__module__}.{type(exc).__qualname__}",
        message=str(exc),
        cause=f"{type(cause).__name__}: {cause}" if cause is not None else "",
        frames=[frame.name for frame in traceback.extract_tb(exc.__traceback__)],
        traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
    )


def _stderr_offset() -> int | None:
    """Where the program's stderr stands, when ``repro capture`` made it a log file."""
    try:
        sys.stderr.flush()
        status = os.fstat(2)
    except (OSError, ValueError, AttributeError):
        return None
    return status.st_size if stat.S_ISREG(status.st_mode) else None


def _triton_version() -> str:
    import triton

    return str(getattr(triton, "__version__", "?"))


def _target(target: Any) -> dict[str, Any]:
    if target is None:
        try:
            from triton.runtime import driver

            target = driver.active.get_current_target()
        except Exception:
            return {}
    return {
        "backend": getattr(target, "backend", ""),
        "arch": getattr(target, "arch", ""),
        "warp_size": getattr(target, "warp_size", 32),
    }


def _called_from() -> str:
    """The innermost frame of the program (not triton, not this hook) on the stack."""
    import triton

    triton_root = os.path.dirname(triton.__file__)
    here = os.path.dirname(__file__)
    for frame in reversed(traceback.extract_stack()):
        name = frame.filename
        if not name.startswith((triton_root, here)) and not name.startswith("<frozen"):
            return f"{name}:{frame.lineno}"
    return ""


def _json_options(options: Any, problems: list[str]) -> dict[str, Any]:
    if not isinstance(options, dict):
        options = dict(getattr(options, "__dict__", {}))
    kept: dict[str, Any] = {}
    for name, value in options.items():
        plain = _plain(value)
        if plain is _UNREPRESENTABLE:
            problems.append(f"option {name}={value!r} is not a plain value: left out")
        else:
            kept[str(name)] = plain
    return kept


_UNREPRESENTABLE = object()


def _plain(value: Any) -> Any:
    """``value`` as JSON data (tuples become lists), or ``_UNREPRESENTABLE``."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else _UNREPRESENTABLE
    if isinstance(value, (tuple, list)):
        items = [_plain(v) for v in value]
        return _UNREPRESENTABLE if any(i is _UNREPRESENTABLE for i in items) else items
    return _UNREPRESENTABLE


# ---------------------------------------------------------------------------------------
# Specialization, as each release's ASTSource holds it.
# ---------------------------------------------------------------------------------------


def _specialization(src: Any, fn: Any, problems: list[str]) -> dict[str, Any]:
    names = list(fn.arg_names)
    declared = {names[i] for i in getattr(fn, "constexprs", ())}
    signature: dict[str, str] = {}
    constants: dict[str, Any] = {}
    for key, kind in dict(src.signature).items():
        name = names[key] if isinstance(key, int) else str(key)
        if kind != "constexpr":
            signature[name] = str(kind)
    for key, value in dict(getattr(src, "constants", {}) or {}).items():
        if isinstance(key, tuple):  # 3.3 on: a path into the arguments
            if len(key) != 1:
                problems.append(f"constant at nested path {key} (a tuple argument) left out")
                continue
            key = key[0]
        name = names[key] if isinstance(key, int) else str(key)
        constants[name] = value
    divisible, equal_to_1, attrs = _attributes(src.attrs, names, problems)
    for name, value in constants.items():
        ones = name not in declared and value == 1 and not isinstance(value, bool)
        if ones and name not in equal_to_1:
            equal_to_1.append(name)
    constexprs = {}
    for name, value in constants.items():
        if name in equal_to_1 and name not in declared:
            continue
        constexprs[name] = _literal(value, problems, name)
    for name in equal_to_1:
        signature.pop(name, None)
    return {
        "signature": {n: t for n, t in signature.items() if n not in constants},
        "constexprs": constexprs,
        "divisible": divisible,
        "equal_to_1": equal_to_1,
        "attrs": attrs,
    }


def _attributes(
    attrs: Any, names: list[str], problems: list[str]
) -> tuple[list[str], list[str], dict[str, list[list[Any]]]]:
    divisible: list[str] = []
    equal_to_1: list[str] = []
    other: dict[str, list[list[Any]]] = {}
    if isinstance(attrs, dict):  # 3.3 on: {(index,): [[name, value], ...]}
        for path, pairs in attrs.items():
            if len(path) != 1:
                problems.append(f"attributes at nested path {path} left out")
                continue
            name = names[path[0]]
            for key, value in pairs:
                if key == "tt.divisibility" and value == 16:
                    divisible.append(name)
                else:
                    other.setdefault(name, []).append([str(key), _plain(value)])
    elif hasattr(attrs, "arg_properties"):  # 3.2: {property: [index, ...]}
        properties = attrs.arg_properties
        divisible = [names[i] for i in properties.get("tt.divisibility", ())]
        equal_to_1 = [names[i] for i in properties.get("tt.equal_to", ())]
    elif hasattr(attrs, "divisible_by_16"):  # 3.0, 3.1
        divisible = [names[i] for i in sorted(attrs.divisible_by_16)]
        equal_to_1 = [names[i] for i in sorted(attrs.equal_to_1)]
    elif attrs:
        problems.append(f"attributes of type {type(attrs).__name__} not understood")
    return divisible, equal_to_1, other


# ---------------------------------------------------------------------------------------
# The kernel's source and what it reads.
# ---------------------------------------------------------------------------------------


def kernel_source(fn: Any) -> KernelSource:
    collector = _Collector()
    collector.carry_function(fn)
    code = fn.fn.__code__
    return KernelSource(
        name=fn.__name__,
        module=str(getattr(fn.fn, "__module__", "")),
        file=code.co_filename,
        line=code.co_firstlineno,
        functions=list(collector.functions.values()),
        values=list(collector.values.values()),
        imports=list(collector.imports.values()),
        unresolved=collector.unresolved,
    )


def _def_text(fn: Any) -> str:
    text = textwrap.dedent(fn.src)
    found = _DEF.search(text)
    return textwrap.dedent(text[found.start() :] if found else text)


def _importable(module: types.ModuleType) -> bool:
    """Whether a fresh process can import ``module`` by name: triton, torch, the standard
    library, installed packages. The program's own modules are inlined instead."""
    name = module.__name__
    if name == "__main__":
        return False
    top = name.split(".")[0]
    if top in ("triton", "torch") or top in getattr(sys, "stdlib_module_names", ()):
        return True
    path = getattr(module, "__file__", None)
    if path is None:
        return True
    return "site-packages" in path or "dist-packages" in path


class _Collector:
    """Walks a kernel's text and the functions it calls, resolving each global name."""

    def __init__(self) -> None:
        self.functions: dict[str, FunctionSource] = {}
        self.values: dict[str, GlobalValue] = {}
        self.imports: dict[str, ImportLine] = {}
        self.unresolved: list[str] = []
        self._seen: dict[int, str] = {}

    def carry_function(self, fn: Any) -> str:
        """Define ``fn`` (and what it reads) in the reproducer; its name there."""
        if id(fn) in self._seen:
            return self._seen[id(fn)]
        name = fn.__name__
        self._seen[id(fn)] = name
        text = _def_text(fn)
        tree = ast.parse(text)
        scope = fn.fn.__globals__
        arguments = set(fn.arg_names)
        spans: list[tuple[int, int, int, str]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                base = scope.get(node.value.id)
                local = isinstance(base, types.ModuleType) and not _importable(base)
                if local and node.attr in base.__dict__:
                    carried = self._carry(node.attr, base.__dict__[node.attr])
                    spans.append((node.lineno, node.col_offset, node.end_col_offset or 0, carried))
            elif (
                isinstance(node, ast.Name)
                and isinstance(node.ctx, ast.Load)
                and node.id in scope
                and node.id not in arguments
            ):
                self._carry(node.id, scope[node.id])
        code = fn.fn.__code__
        self.functions[name] = FunctionSource(
            name, _rewritten(text, spans), code.co_filename, code.co_firstlineno, _decorator(fn)
        )
        return name

    def _carry(self, name: str, value: Any) -> str:
        from triton.runtime.jit import JITFunction

        if isinstance(value, JITFunction):
            home = sys.modules.get(getattr(value.fn, "__module__", ""))
            if home is not None and _importable(home):
                self._import(ImportLine(name, home.__name__, value.fn.__name__))
                return name
            defined = self.carry_function(value)
            if defined != name:
                self._value(GlobalValue(name, defined))
            return name
        if isinstance(value, types.ModuleType):
            if _importable(value):
                self._import(ImportLine(name, value.__name__))
            return name
        problems: list[str] = []
        literal = _literal(value, problems, name)
        if not problems:
            self._value(GlobalValue(name, literal))
            return name
        module_name = getattr(value, "__module__", None)
        qualname = getattr(value, "__qualname__", "")
        home = sys.modules.get(module_name or "")
        if home is not None and _importable(home) and getattr(home, qualname, None) is value:
            self._import(ImportLine(name, home.__name__, qualname))
            return name
        self.unresolved.append(f"{name} ({type(value).__name__})")
        return name

    def _import(self, line: ImportLine) -> None:
        if self.imports.setdefault(line.name, line) != line:
            self.unresolved.append(f"{line.name} (two different objects by one name)")

    def _value(self, value: GlobalValue) -> None:
        if self.values.setdefault(value.name, value) != value:
            self.unresolved.append(f"{value.name} (two different values by one name)")


def _decorator(fn: Any) -> str:
    """``triton.jit`` with the arguments the program gave it that the reproducer needs."""
    arguments = []
    if getattr(fn, "noinline", False):
        arguments.append("noinline=True")
    names = list(fn.arg_names)
    unspecialized = [
        names[i] if isinstance(i, int) else i for i in getattr(fn, "do_not_specialize", None) or ()
    ]
    if unspecialized:
        arguments.append(f"do_not_specialize={unspecialized!r}")
    return f"triton.jit({', '.join(arguments)})" if arguments else "triton.jit"


def _rewritten(text: str, spans: list[tuple[int, int, int, str]]) -> str:
    """``text`` with each ``module.attr`` span replaced by the carried name."""
    lines = text.splitlines(keepends=True)
    for line, start, end, name in sorted(spans, reverse=True):
        row = lines[line - 1]
        lines[line - 1] = row[:start] + name + row[end:]
    return "".join(lines)


def _literal(value: Any, problems: list[str], name: str) -> str:
    """Python source that rebuilds ``value`` in the reproducer (``tl`` is triton.language)."""
    import triton.language as tl

    if isinstance(value, tl.constexpr):
        return f"tl.constexpr({_literal(value.value, problems, name)})"
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    if isinstance(value, (tuple, list)):
        items = [_literal(v, problems, name) for v in value]
        return (
            ("(" + ", ".join(items) + ",)") if isinstance(value, tuple) else f"[{', '.join(items)}]"
        )
    if isinstance(value, tl.dtype):
        for attribute, candidate in vars(tl).items():
            if (
                isinstance(candidate, tl.dtype)
                and candidate == value
                and not attribute.startswith("_")
            ):
                return f"tl.{attribute}"
    from triton.runtime.jit import JITFunction

    if isinstance(value, JITFunction):
        return value.__name__
    problems.append(f"{name}: a {type(value).__name__} has no literal")
    return repr(value)


# ---------------------------------------------------------------------------------------
# Launches and autotuners.
# ---------------------------------------------------------------------------------------


def _autotune_records() -> list[Path]:
    """Failure records written during the current autotuner run of this thread."""
    if not hasattr(_LOCAL, "autotune_paths"):
        _LOCAL.autotune_paths = []
    return _LOCAL.autotune_paths


def _run_wrapper(original: Any) -> Any:
    @functools.wraps(original)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        _LOCAL.compile_failed = False
        try:
            return original(self, *args, **kwargs)
        except Exception as exc:
            if not kwargs.get("warmup") and not getattr(_LOCAL, "compile_failed", False):
                _record_launch_quietly(self, args, kwargs, exc)
            raise

    return run


def _record_launch_quietly(
    fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], exc: Exception
) -> None:
    try:
        base = folder()
        if base is None:
            return
        record = launch_record(fn, args, kwargs, exc)
        path = base / "launches" / f"{record.id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_durably(path, record)
        _autotune_records().append(path)
    except Exception:
        _note_hook_error("recording a launch")


def launch_record(
    fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], exc: Exception
) -> LaunchRecord:
    names = list(fn.arg_names)
    declared = {names[i] for i in getattr(fn, "constexprs", ())}
    bound = dict(zip(names, args, strict=False))
    options: dict[str, Any] = {}
    for key, value in kwargs.items():
        if key in names:
            bound[key] = value
        elif key not in _LAUNCH_KEYWORDS:
            options[key] = value
    problems: list[str] = []
    tensors: dict[str, TensorArg] = {}
    scalars: dict[str, Any] = {}
    constexprs: dict[str, str] = {}
    for name in names:
        if name not in bound:
            continue  # a default value: the reproducer's launch leaves it out too
        value = bound[name]
        if name in declared:
            constexprs[name] = _literal(value, problems, name)
        elif all(hasattr(value, a) for a in ("data_ptr", "shape", "stride", "dtype")):
            tensors[name] = TensorArg(
                str(value.dtype).replace("torch.", ""),
                [int(n) for n in value.shape],
                [int(n) for n in value.stride()],
                str(getattr(value, "device", "")),
            )
        else:
            plain = _plain(value)
            if plain is _UNREPRESENTABLE:
                problems.append(f"argument {name} ({type(value).__name__}) is not recorded")
            scalars[name] = None if plain is _UNREPRESENTABLE else plain
    return LaunchRecord(
        id=f"{os.getpid()}-{next(_SEQUENCE):04d}-{fn.__name__}",
        pid=os.getpid(),
        kernel=kernel_source(fn),
        grid=_grid(kwargs.get("grid"), {**bound, **options}, problems),
        arguments=names,
        tensors=tensors,
        scalars=scalars,
        constexprs=constexprs,
        options=_json_options(options, problems),
        target=_target(None),
        triton=_triton_version(),
        python=sys.executable,
        argv=list(sys.argv),
        called_from=_called_from(),
        problems=problems,
        error=error_facts(exc),
    )


def _grid(grid: Any, meta: dict[str, Any], problems: list[str]) -> list[int]:
    try:
        shape = grid(meta) if callable(grid) else grid
        dims = [int(d) for d in shape]
    except Exception:
        problems.append("the grid could not be evaluated")
        return [1, 1, 1]
    return [*dims, 1, 1, 1][:3]


def _autotune_wrapper(original: Any) -> Any:
    @functools.wraps(original)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        outer = _autotune_records()
        _LOCAL.autotune_paths = []
        try:
            result = original(self, *args, **kwargs)
        except BaseException:
            _LOCAL.autotune_paths = outer + _LOCAL.autotune_paths
            raise
        # The autotuner came back: the failures recorded meanwhile were configs it dropped.
        for path in _LOCAL.autotune_paths:
            _mark_handled_quietly(path)
        _LOCAL.autotune_paths = outer
        if keep_all():
            _record_autotuner_quietly(self)
        return result

    return run


def _mark_handled_quietly(path: Path) -> None:
    import json

    try:
        if path.exists():
            data = json.loads(path.read_text())
            if data.get("state") != DONE:
                data["handled_by"] = "autotuner"
                path.write_text(json.dumps(data, indent=1))
    except Exception:
        _note_hook_error("marking a dropped config")


def _record_autotuner_quietly(tuner: Any) -> None:
    try:
        base = folder()
        if base is None:
            return
        cache = getattr(tuner, "cache", {}) or {}
        seen = getattr(tuner, "_repro_capture_chosen", -1)
        if seen == len(cache):
            return
        tuner._repro_capture_chosen = len(cache)
        fn = tuner.fn
        while not hasattr(fn, "arg_names") or not hasattr(fn, "src"):
            fn = fn.fn
        record = AutotuneRecord(
            id=f"{os.getpid()}-{id(tuner):x}-{fn.__name__}",
            pid=os.getpid(),
            kernel=kernel_source(fn),
            key=[str(k) for k in getattr(tuner, "keys", getattr(tuner, "key", []))],
            configs=[_config(c) for c in tuner.configs],
            chosen=[{"key": repr(k), "config": _config(c)} for k, c in cache.items()],
        )
        path = base / "autotune" / f"{record.id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_durably(path, record)
    except Exception:
        _note_hook_error("recording an autotuner")


def _config(config: Any) -> dict[str, Any]:
    values = {str(k): _plain(v) for k, v in dict(config.kwargs).items()}
    for name in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
        value = getattr(config, name, None)
        if value is not None:
            values[name] = value
    return {k: v for k, v in values.items() if v is not _UNREPRESENTABLE}
