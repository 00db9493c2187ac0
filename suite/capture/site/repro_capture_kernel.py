"""What is being compiled, as the hook records it: the specialization as each release's
``ASTSource`` holds it, and the kernel's source with every ``@triton.jit`` function it
calls and every module-level value it reads (:func:`kernel_source`), each value as a
Python literal the reproducer can hold (:func:`literal`).

Standard library and triton only, like the rest of this folder.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import math
import re
import sys
import textwrap
import types
from collections.abc import Collection
from typing import Any, TypedDict

from repro_capture_common import plain
from repro_capture_records import FunctionSource, GlobalValue, ImportLine, KernelSource

BUILTINS = frozenset(vars(builtins))
_DEF = re.compile(r"^\s*def\s+\w+\s*\(", re.MULTILINE)


# ---------------------------------------------------------------------------------------
# Specialization, as each release's ASTSource holds it.
# ---------------------------------------------------------------------------------------


class Specialization(TypedDict):
    """How the compile specialized the kernel's arguments (CompileRecord's fields of it)."""

    signature: dict[str, str]
    constexprs: dict[str, str]
    divisible: list[str]
    equal_to_1: list[str]
    attrs: dict[str, list[list[Any]]]


def specialization(src: Any, fn: Any, problems: list[str]) -> Specialization:
    names = list(fn.arg_names)
    declared = {names[i] for i in getattr(fn, "constexprs", ())}
    signature: dict[str, str] = {}
    constants: dict[str, object] = {}
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
        constexprs[name] = literal(value, problems, name)
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
                    other.setdefault(name, []).append([str(key), plain(value)])
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


def closure_of(
    names: Collection[str],
    scope: dict[str, Any],
    provided: Collection[str] = (),
    dropped: Collection[str] = (),
) -> tuple[KernelSource, set[str]]:
    """What the global ``names`` of ``scope`` (a module's namespace: a reproducer's inputs
    and launch functions, its oracles) read, transitively, carried as for a kernel; and
    the ``provided`` names among what they read."""
    collector = _Collector(provided, dropped)
    for name in names:
        if name in scope:
            collector._carry(name, scope[name], scope)
    carried = KernelSource(
        name="",
        module="",
        file="",
        line=0,
        functions=list(collector.functions.values()),
        values=list(collector.values.values()),
        imports=list(collector.imports.values()),
        unresolved=collector.unresolved,
    )
    return carried, collector.provided_used


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


#: Distributions a target environment installs beside triton itself: their modules are
#: imported by name. Everything else a kernel reads (the program's own modules, and
#: packages installed with pip, where kernel libraries ship their kernels) is carried.
IMPORTED = frozenset({"triton", "torch", "numpy"})


def importable(module: types.ModuleType) -> bool:
    """Whether a standalone program imports ``module`` by name rather than carrying what it
    reads: the standard library, triton, torch and numpy. A package installed with pip is
    not: where the program runs, it is not installed."""
    name = module.__name__
    if name == "__main__":
        return False
    top = name.split(".")[0]
    return top in IMPORTED or top in getattr(sys, "stdlib_module_names", ())


class _Collector:
    """Walks a kernel's text and the functions it calls, resolving each global name."""

    def __init__(self, provided: Collection[str] = (), dropped: Collection[str] = ()) -> None:
        # Names the program that carries the closure defines itself (a launch script's
        # device(), poisoned(), oracles): the suite's objects of those names are not carried.
        self.provided = frozenset(provided)
        # Decorators left off the carried functions (a reproducer's REPRO.launch).
        self.dropped = frozenset(dropped)
        self.functions: dict[str, FunctionSource] = {}
        self.values: dict[str, GlobalValue] = {}
        self.imports: dict[str, ImportLine] = {}
        self.unresolved: list[str] = []
        self.provided_used: set[str] = set()
        self._seen: dict[int, str] = {}

    def carry_function(self, fn: Any) -> str:
        """Define ``fn`` (and what it reads) in the reproducer; its name there."""
        if id(fn) in self._seen:
            return self._seen[id(fn)]
        name = fn.fn.__name__
        self._seen[id(fn)] = name
        text = _def_text(fn)
        self._define(name, text, fn.fn, _decorator(fn))
        return name

    def carry_python(self, value: Any, whole: Any = None) -> str:
        """Define a plain function or class ``value`` (or, with ``whole``, the
        ``@triton.autotune``/``@triton.heuristics`` stack around the JIT function ``value``)
        by its own source, decorators kept but those in ``dropped``; its name there."""
        if id(whole or value) in self._seen:
            return self._seen[id(whole or value)]
        name = value.__name__
        self._seen[id(whole or value)] = name
        try:
            text = textwrap.dedent(inspect.getsource(value))
        except (OSError, TypeError):
            self.unresolved.append(f"{name} (its source cannot be read)")
            return name
        tree = ast.parse(text)
        node = tree.body[0]
        decorators = getattr(node, "decorator_list", [])
        kept = [d for d in decorators if _dotted(d) not in self.dropped]
        if len(kept) != len(decorators):
            lines = text.splitlines(keepends=True)
            first = node.lineno - 1  # the def or class line, decorators above it
            text = "".join([f"@{ast.get_source_segment(text, d)}\n" for d in kept] + lines[first:])
        scope_of = value if not isinstance(value, type) else None
        self._define(name, text, scope_of, "", module=sys.modules.get(value.__module__))
        return name

    def _define(self, name: str, text: str, fn: Any, decorator: str, module: Any = None) -> None:
        """Carry what ``text`` (the source of ``fn``, or of a class of ``module``) reads,
        and the text itself, its reads of the program's modules rewritten to the names
        carried."""
        tree = ast.parse(text)
        scope = fn.__globals__ if fn is not None else vars(module) if module else {}
        # Its arguments and what it assigns are its own: a global of one of those names is
        # not read.
        arguments = {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)} | {
            n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        spans: list[tuple[int, int, int, str]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                base = scope.get(node.value.id)
                local = isinstance(base, types.ModuleType) and not importable(base)
                if local and node.attr in base.__dict__:
                    carried = self._carry(node.attr, base.__dict__[node.attr], base.__dict__)
                    spans.append((node.lineno, node.col_offset, node.end_col_offset or 0, carried))
            elif (
                isinstance(node, ast.Name)
                and isinstance(node.ctx, ast.Load)
                and node.id in scope
                and node.id not in arguments
            ):
                self._carry(node.id, scope[node.id], scope)
        code = getattr(fn, "__code__", None)
        carried = FunctionSource(
            name,
            _rewritten(text, spans),
            code.co_filename if code else "",
            code.co_firstlineno if code else 0,
            decorator,
        )
        if self.functions.setdefault(name, carried) != carried:
            self.unresolved.append(f"{name} (two different functions by one name)")

    def _carry(self, name: str, value: Any, scope: dict[str, Any] | None = None) -> str:
        """Carry the global ``name`` (bound to ``value`` in ``scope``, the namespace that
        reads it); its name in the reproducer."""
        if _jit_callable(value):
            home = sys.modules.get(getattr(value.fn, "__module__", ""))
            if home is not None and importable(home):
                self._import(ImportLine(name, home.__name__, value.fn.__name__))
                return name
            defined = self.carry_function(value)
            if defined != name:
                self._value(GlobalValue(name, defined))
            return name
        if isinstance(value, types.ModuleType):
            if importable(value):
                self._import(ImportLine(name, value.__name__))
            return name
        module_name = getattr(value, "__module__", None) or ""
        home = sys.modules.get(module_name)
        if module_name.split(".")[0] == "suite":
            if name in self.provided:
                self.provided_used.add(name)
            else:
                self.unresolved.append(f"{name} ({module_name}: the suite's, not carried)")
            return name
        wrapped = _autotuned(value)
        # An Autotuner's own ``__module__`` is Triton's on some releases (3.6.0): the kernel
        # under it says where it lives.
        home = sys.modules.get(getattr(wrapped, "__module__", "")) if wrapped else home
        if wrapped is not None and not (home is not None and importable(home)):
            defined = self.carry_python(wrapped, whole=value)
            if defined != name:
                self._value(GlobalValue(name, defined))
            return name
        plain_code = isinstance(value, (types.FunctionType, type))
        if plain_code and home is not None and not importable(home):
            if getattr(value, "__name__", "") == "<lambda>":
                self.unresolved.append(f"{name} (a lambda: define it with def)")
                return name
            defined = self.carry_python(value)
            if defined != name:
                self._value(GlobalValue(name, defined))
            return name
        problems: list[str] = []
        python = literal(value, problems, name)
        if not problems:
            self._value(GlobalValue(name, python))
            if _reads_torch(value):
                self._import(ImportLine("torch", "torch"))
            return name
        if scope is not None and self._carry_assignment(name, scope):
            return name
        qualname = getattr(value, "__qualname__", "")
        if home is not None and importable(home) and getattr(home, qualname, None) is value:
            self._import(ImportLine(name, home.__name__, qualname))
            return name
        import triton.language as tl

        inner = value.value if isinstance(value, tl.constexpr) else value
        self.unresolved.append(f"{name} ({type(inner).__name__})")
        return name

    def _carry_assignment(self, name: str, scope: dict[str, Any]) -> bool:
        """Carry the expression the module binds ``name`` to, as the user wrote it, when it
        reads only modules a standalone program imports (a library binding whichever builtin
        the installed release has: ``getattr(tl, "make_tensor_descriptor", None) or
        getattr(tl, "_experimental_make_tensor_descriptor", None)``; importing the object
        found here by its path in this release would tie the program to this release)."""
        bound = _assignment(scope, name)
        if bound is None:
            return False
        expression, reads = bound
        modules = {read: scope.get(read) for read in reads}
        imports = [
            ImportLine(read, module.__name__)
            for read, module in modules.items()
            if isinstance(module, types.ModuleType) and importable(module)
        ]
        if len(imports) != len(reads):
            return False
        for line in imports:
            self._import(line)
        self._value(GlobalValue(name, expression))
        return True

    def _import(self, line: ImportLine) -> None:
        if self.imports.setdefault(line.name, line) != line:
            self.unresolved.append(f"{line.name} (two different objects by one name)")

    def _value(self, value: GlobalValue) -> None:
        if self.values.setdefault(value.name, value) != value:
            self.unresolved.append(f"{value.name} (two different values by one name)")


def _assignment(scope: dict[str, Any], name: str) -> tuple[str, list[str]] | None:
    """The expression that the module whose namespace is ``scope`` binds ``name`` to, when
    its source binds ``name`` once, by an assignment at its top level; with the global names
    the expression reads (builtins aside). None otherwise, or when its source is gone."""
    try:
        with open(scope["__file__"], encoding="utf-8") as file:
            tree = ast.parse(file.read())
    except (KeyError, TypeError, OSError, SyntaxError, ValueError):
        return None
    bindings = [
        node
        for node in ast.walk(tree)
        if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id == name)
        or (isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name)
        or (isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name)
    ]
    value = None
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target: ast.expr = statement.targets[0]
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target = statement.target
        else:
            continue
        if isinstance(target, ast.Name) and target.id == name:
            value = statement.value
    if value is None or len(bindings) != 1:
        return None
    reads = sorted(
        {
            n.id
            for n in ast.walk(value)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in BUILTINS
        }
    )
    return ast.unparse(value), reads


def _torch_dtype(value: Any) -> bool:
    return type(value).__module__ == "torch" and type(value).__name__ == "dtype"


def _reads_torch(value: Any) -> bool:
    """Whether ``value``'s literal names a torch dtype (so the program must import torch)."""
    if isinstance(value, dict):
        return any(_reads_torch(k) or _reads_torch(v) for k, v in value.items())
    if isinstance(value, (tuple, list)):
        return any(_reads_torch(v) for v in value)
    return _torch_dtype(value)


def _autotuned(value: Any) -> Any:
    """The JIT function under an ``Autotuner``/``Heuristics`` stack; None for anything else."""
    if type(value).__name__ not in ("Autotuner", "Heuristics"):
        return None
    inner = value
    while type(inner).__name__ in ("Autotuner", "Heuristics"):
        inner = getattr(inner, "fn", None)
    return getattr(inner, "fn", None) if _jit_callable(inner) else None


def _dotted(node: ast.expr) -> str:
    """``REPRO.launch`` for a decorator ``@REPRO.launch`` (a call's function for a call)."""
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def _jit_callable(value: Any) -> bool:
    """A ``@triton.jit`` function, or a ``@triton.constexpr_function`` (3.5 on)."""
    from triton.runtime import jit

    kinds = tuple(getattr(jit, kind) for kind in _JIT_KINDS if hasattr(jit, kind))
    return isinstance(value, kinds)


#: The classes of Triton's function decorators, and the decorator that makes each.
_JIT_KINDS = {"JITFunction": "triton.jit", "ConstexprFunction": "triton.constexpr_function"}


def _decorator(fn: Any) -> str:
    """``triton.jit`` with the arguments the program gave it that the reproducer needs;
    ``triton.constexpr_function`` for one."""
    if type(fn).__name__ == "ConstexprFunction":
        return _JIT_KINDS["ConstexprFunction"]
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


def literal(value: Any, problems: list[str], name: str) -> str:
    """Python source that rebuilds ``value`` in the reproducer (``tl`` is triton.language)."""
    import triton.language as tl

    if isinstance(value, tl.constexpr):
        return f"tl.constexpr({literal(value.value, problems, name)})"
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    if isinstance(value, (tuple, list)):
        items = [literal(v, problems, name) for v in value]
        if isinstance(value, list):
            return f"[{', '.join(items)}]"
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    if isinstance(value, dict):
        pairs = [
            f"{literal(k, problems, name)}: {literal(v, problems, name)}" for k, v in value.items()
        ]
        return "{" + ", ".join(pairs) + "}"
    if _torch_dtype(value):
        return repr(value)  # torch.float16: the carrier imports torch
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
