"""The renaming pass: short names for the kernels, their parameters and locals.

Renaming changes no structure, so it runs once, after the fixpoint: one edit renames
everything, the compile function's dicts kept in step.
"""

from __future__ import annotations

import ast
import builtins
import keyword
from collections.abc import Callable, Iterator

from suite.reduce.tree import (
    Edit,
    Renamer,
    compile_function,
    entry_name,
    is_launching,
    jit_functions,
    module_names,
    names_stored,
    param_names,
)

_SHORT = "abcdefghijklmnopqrstuvwxyz"


def rename(tree: ast.Module) -> Iterator[Edit]:
    """Short names for everything the kernels define: one edit renaming all of it."""

    def edit(module: ast.Module) -> bool:
        kernels = jit_functions(module)
        entry = entry_name(module)
        helpers, taken, fixed = _kernel_names(module, kernels, entry)
        per_function, changed = _rename_locals(kernels, helpers, taken, fixed, entry)
        _rename_keywords(kernels, helpers, per_function)
        changed |= any(fn.name != helpers[fn.name] for fn in kernels)
        for fn in kernels:
            fn.name = helpers[fn.name]
        _rename_in_compile_function(module, entry, helpers, per_function)
        return changed

    yield edit


def _kernel_names(
    module: ast.Module, kernels: list[ast.FunctionDef], entry: str
) -> tuple[dict[str, str], set[str], bool]:
    """Each kernel's new name (``kernel`` for the entry, ``f``/``f<i>`` for the helpers),
    the names taken, and whether the module is a launching form (whose launch code names
    the entry kernel and its parameters: they stay)."""
    taken = module_names(module) | set(dir(builtins)) | set(keyword.kwlist)
    helpers = {
        f.name: f"f{i}" if len(kernels) > 2 else "f"
        for i, f in enumerate(kernels)
        if f.name != entry
    }
    helpers[entry] = "kernel" if "kernel" not in taken or entry == "kernel" else entry
    fixed = is_launching(module)
    if fixed:
        helpers[entry] = entry
        taken |= {p for f in kernels if f.name == entry for p in param_names(f)}
    return helpers, taken, fixed


def _rename_locals(
    kernels: list[ast.FunctionDef],
    helpers: dict[str, str],
    taken: set[str],
    fixed: bool,
    entry: str,
) -> tuple[dict[str, dict[str, str]], bool]:
    """Short names for each kernel's parameters and locals, in order of first use; the
    kernels' calls of each other renamed with them. Each kernel's renaming, and whether
    any name changed."""
    changed = False
    per_function: dict[str, dict[str, str]] = {}
    for fn in kernels:
        own = [] if fixed and fn.name == entry else param_names(fn)
        locals_ = own + sorted(names_stored(fn) - set(param_names(fn)), key=_first_use(fn))
        short = iter(n for n in _names() if n not in taken and n not in helpers.values())
        names = {name: next(short) for name in locals_}
        per_function[fn.name] = names
        Renamer({**names, **helpers}).visit(fn)
        for arg in fn.args.args:
            arg.arg = names.get(arg.arg, arg.arg)
        changed |= any(k != v for k, v in names.items())
    return per_function, changed


def _rename_keywords(
    kernels: list[ast.FunctionDef],
    helpers: dict[str, str],
    per_function: dict[str, dict[str, str]],
) -> None:
    """A kernel's call of another by keyword names the callee's renamed parameters."""
    callee_of: dict[str, str] = {}
    for old, new in helpers.items():
        callee_of.setdefault(new, old)  # the first kernel of a name, as the calls resolve it
    for fn in kernels:
        for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
            callee = callee_of.get(call.func.id) if isinstance(call.func, ast.Name) else None
            for kw in call.keywords if callee else ():
                kw.arg = per_function[callee].get(kw.arg or "", kw.arg)  # type: ignore[index]


def _rename_in_compile_function(
    module: ast.Module,
    old_entry: str,
    helpers: dict[str, str],
    per_function: dict[str, dict[str, str]],
) -> None:
    """The compile function's dicts (keyed by the entry's parameter names) and its
    reference to the entry kernel, kept in step."""
    compile_fn = compile_function(module)
    if compile_fn is None:
        return
    entry_names, new_entry = per_function[old_entry], helpers[old_entry]
    for node in ast.walk(compile_fn):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = entry_names.get(node.value, node.value)
        if isinstance(node, ast.Name) and node.id == old_entry:
            node.id = new_entry


def _names() -> Iterator[str]:
    yield from _SHORT
    for first in _SHORT:
        for second in _SHORT:
            yield first + second


def _first_use(fn: ast.FunctionDef) -> Callable[[str], int]:
    order: dict[str, int] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id not in order:
            order[node.id] = getattr(node, "lineno", 0) * 1000 + getattr(node, "col_offset", 0)
    return lambda name: order.get(name, 0)
