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
        taken = module_names(module) | set(dir(builtins)) | set(keyword.kwlist)
        kernels = jit_functions(module)
        entry = entry_name(module)
        helpers = {
            f.name: f"f{i}" if len(kernels) > 2 else "f"
            for i, f in enumerate(kernels)
            if f.name != entry
        }
        helpers[entry] = "kernel" if "kernel" not in taken or entry == "kernel" else entry
        # A launching form's launch code names the entry kernel and its parameters.
        fixed = is_launching(module)
        if fixed:
            helpers[entry] = entry
            taken |= {p for f in kernels if f.name == entry for p in param_names(f)}
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
        for fn in kernels:
            for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
                callee = next(
                    (
                        k
                        for k, v in helpers.items()
                        if isinstance(call.func, ast.Name) and call.func.id == v
                    ),
                    None,
                )
                for kw in call.keywords if callee else ():
                    kw.arg = per_function[callee].get(kw.arg or "", kw.arg)  # type: ignore[index]
        for fn in kernels:
            changed |= fn.name != helpers[fn.name]
        old_entry = entry
        for fn in kernels:
            fn.name = helpers[fn.name]
        compile_fn = compile_function(module)
        if compile_fn is not None:
            entry_names = per_function[old_entry]
            for node in ast.walk(compile_fn):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    node.value = entry_names.get(node.value, node.value)
                if isinstance(node, ast.Name) and node.id == old_entry:
                    node.id = helpers[old_entry]
        return changed

    yield edit


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
