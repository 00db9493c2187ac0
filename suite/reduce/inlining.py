"""Helper and parameter passes: inline ``@triton.jit`` helper calls, drop parameters a
kernel never reads (with their arguments and their entries in the compile dicts), write a
constexpr's value into the kernel, and propagate single-use copies.

Each edit keeps the kernels, their call sites and the compile function's ``signature`` and
``constexprs`` dicts consistent, so the candidate stays :func:`~suite.reduce.tree.well_formed`.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator

from suite.reduce.tree import (
    Edit,
    Renamer,
    compile_function,
    entry_name,
    filled,
    jit_functions,
    names_read,
    names_stored,
    param_names,
    put,
    slots,
)


def _inline(
    module: ast.Module, helper: ast.FunctionDef, call: ast.Call, tag: str
) -> tuple[list[ast.stmt], ast.expr | None] | None:
    """The helper's body with the call's arguments bound, and the value it returns."""
    body = helper.body
    returns = [n for n in ast.walk(helper) if isinstance(n, ast.Return)]
    if returns and (len(returns) > 1 or body[-1] is not returns[0]):
        return None
    params = param_names(helper)
    bound: dict[str, ast.expr] = dict(zip(params, call.args, strict=False))
    bound.update({k.arg: k.value for k in call.keywords if k.arg})
    optional = params[len(params) - len(helper.args.defaults) :]
    defaults = dict(zip(optional, helper.args.defaults, strict=True))
    names: dict[str, ast.expr | str] = {}
    prologue: list[ast.stmt] = []
    for name in params:
        value = bound.get(name, defaults.get(name))
        if value is None:
            return None
        if isinstance(value, (ast.Name, ast.Constant)) and name not in names_stored(helper):
            names[name] = value
        else:
            names[name] = f"{name}_{tag}"
            prologue.append(ast.Assign([ast.Name(f"{name}_{tag}", ast.Store())], value, lineno=0))
    for local in names_stored(helper) - set(params):
        names[local] = f"{local}_{tag}"
    renamer = Renamer(names)
    statements = [renamer.visit(copy.deepcopy(s)) for s in body]
    result = None
    if returns:
        last = statements.pop()
        assert isinstance(last, ast.Return)
        result = last.value
    return prologue + statements, result


def inline_helpers(tree: ast.Module) -> Iterator[Edit]:
    """Replace ``x = helper(...)``, ``helper(...)`` or ``return helper(...)`` with the body."""
    helpers = {fn.name for fn in jit_functions(tree)} - {entry_name(tree)}

    def call_of(node: ast.AST) -> ast.Call | None:
        value = getattr(node, "value", None)
        statement = isinstance(node, (ast.Assign, ast.Expr, ast.Return))
        if statement and isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            return value if value.func.id in helpers else None
        return None

    for position, slot in enumerate(slots(tree)):
        if slot.index < 0 or call_of(slot.node) is None:
            continue

        def edit(module: ast.Module, position: int = position) -> bool:
            slot = slots(module)[position]
            call = call_of(slot.node)
            assert call is not None and isinstance(call.func, ast.Name)
            helper = next(f for f in jit_functions(module) if f.name == call.func.id)
            inlined = _inline(module, helper, call, f"i{position}")
            if inlined is None:
                return False
            statements, result = inlined
            node = slot.node
            if isinstance(node, ast.Assign):
                if result is None:
                    return False
                statements.append(ast.Assign(node.targets, result, lineno=0))
            elif isinstance(node, ast.Return):
                statements.append(ast.Return(result))
            put(slot, filled(statements))
            return True

        yield edit


def _drop_name_from_compile(module: ast.Module, name: str) -> None:
    fn = compile_function(module)
    if fn is None:
        return
    for node in ast.walk(fn):
        if isinstance(node, ast.Dict):
            keep = [
                (k, v)
                for k, v in zip(node.keys, node.values, strict=False)
                if not (isinstance(k, ast.Constant) and k.value == name)
            ]
            node.keys = [k for k, _ in keep]
            node.values = [v for _, v in keep]
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            node.elts = [
                e for e in node.elts if not (isinstance(e, ast.Constant) and e.value == name)
            ]


def _drop_param(module: ast.Module, fn_name: str, name: str) -> None:
    kernels = jit_functions(module)
    fn = next(f for f in kernels if f.name == fn_name)
    params = param_names(fn)
    index = params.index(name)
    first_default = len(params) - len(fn.args.defaults)
    if index >= first_default:
        del fn.args.defaults[index - first_default]
    del fn.args.args[index]
    for other in kernels:
        for call in (n for n in ast.walk(other) if isinstance(n, ast.Call)):
            if isinstance(call.func, ast.Name) and call.func.id == fn_name:
                if index < len(call.args):
                    del call.args[index]
                call.keywords = [k for k in call.keywords if k.arg != name]
    if fn_name == entry_name(module):
        _drop_name_from_compile(module, name)


def drop_params(tree: ast.Module) -> Iterator[Edit]:
    """Drop a parameter its kernel never reads (and its arguments, and its dict entries)."""
    for fn in jit_functions(tree):
        for name in param_names(fn):
            if name in names_read(fn):
                continue

            def edit(module: ast.Module, fn_name: str = fn.name, name: str = name) -> bool:
                _drop_param(module, fn_name, name)
                return True

            yield edit


def _constexpr_values(module: ast.Module) -> dict[str, ast.expr]:
    """The entry kernel's constexpr arguments with a literal value in the compile function."""
    fn = compile_function(module)
    values: dict[str, ast.expr] = {}
    if fn is None:
        return values
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "constexprs" for t in node.targets)
            and isinstance(node.value, ast.Dict)
        ):
            for k, v in zip(node.value.keys, node.value.values, strict=False):
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    values[k.value] = v
    return values


def inline_constexprs(tree: ast.Module) -> Iterator[Edit]:
    """Write a constexpr argument's value into the kernel and drop the argument."""
    entry = next((f for f in jit_functions(tree) if f.name == entry_name(tree)), None)
    if entry is None:
        return
    values = _constexpr_values(tree)
    for name in param_names(entry):
        if name not in values:
            continue

        def edit(module: ast.Module, name: str = name) -> bool:
            kernel = next(f for f in jit_functions(module) if f.name == entry_name(module))
            value = _constexpr_values(module)[name]
            if name in names_stored(kernel):
                return False
            Renamer({name: value}).visit(kernel)
            _drop_param(module, kernel.name, name)
            return True

        yield edit


def _definitions(fn: ast.FunctionDef) -> dict[str, int]:
    """How many times each name is bound in ``fn``: parameters and every store."""
    counts = dict.fromkeys(param_names(fn), 1)
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def _copy(fn: ast.FunctionDef, node: ast.AST) -> str:
    """The name ``node`` binds when it is an assignment whose value may replace the name's
    reads: the name is bound once, the value's names are bound at most once (so no read
    moves past a rebinding), and the value is a name or a constant, or the name is read
    once. '' when it is not."""
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
    ):
        return ""
    name = node.targets[0].id
    definitions = _definitions(fn)
    if definitions.get(name) != 1 or any(definitions.get(n, 0) > 1 for n in names_read(node)):
        return ""
    reads = (
        sum(1 for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name and n is not node)
        - 1
    )  # the target itself
    simple = isinstance(node.value, (ast.Name, ast.Constant))
    return name if reads >= 1 and (simple or reads == 1) else ""


def _propagate(module: ast.Module, position: int, index: int) -> bool:
    slot = slots(module)[position]
    fn = jit_functions(module)[index]
    name = _copy(fn, slot.node)
    if not name:
        return False
    assert isinstance(slot.node, ast.Assign)
    value = slot.node.value
    items = getattr(slot.parent, slot.name)
    del items[slot.index]
    if slot.name == "body" and not items:
        items.append(ast.Pass())
    Renamer({name: value}).visit(fn)
    return True


def _copies(tree: ast.Module) -> list[tuple[int, int]]:
    """``(slot position, kernel index)`` of every assignment :func:`_copy` accepts."""
    functions = jit_functions(tree)
    owner = {id(n): i for i, fn in enumerate(functions) for n in ast.walk(fn)}
    return [
        (position, owner[id(slot.node)])
        for position, slot in enumerate(slots(tree))
        if slot.index >= 0
        and id(slot.node) in owner
        and _copy(functions[owner[id(slot.node)]], slot.node)
    ]


def propagate_copies(tree: ast.Module) -> Iterator[Edit]:
    """Replace the reads of a name bound once to a copy (``k = j``, ``x = 16``), or read once
    (``t = a + b; y = f(t)``), with its value, and drop the assignment: what inlining leaves.
    Every copy at once first (one compile when all of them may go), then one at a time."""
    found = _copies(tree)
    if len(found) > 1:

        def every(module: ast.Module) -> bool:
            changed = False
            while (copies := _copies(module)) and _propagate(module, *copies[0]):
                changed = True
            return changed

        yield every
    for position, index in found:

        def edit(module: ast.Module, position: int = position, index: int = index) -> bool:
            return _propagate(module, position, index)

        yield edit
