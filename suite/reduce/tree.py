"""The reducer's form as an AST: what the passes read, and what makes a candidate acceptable.

A reproducer file in the reducer's form (``suite/templates/reduced_repro.py.j2``) holds the
``@triton.jit`` kernel and its helpers, and one compile function whose ``signature`` and
``constexprs`` dict literals name the entry kernel's arguments. This module finds those
parts (:func:`jit_functions`, :func:`compile_function`, :func:`entry_name`), names every
node by its position in a stable walk (:func:`slots`: the same walk of a copy gives the same
list, so an edit made on a copy can say which node it means), says whether a candidate is
well-formed (:func:`well_formed`) and how big it is (:func:`size`, :func:`kernel_measure`),
and writes a module back with the file's fixed head kept verbatim (:func:`split`,
:func:`write`).
"""

from __future__ import annotations

import ast
import builtins
import copy
import io
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

_Node = TypeVar("_Node", bound=ast.AST)
_SHARED = frozenset(
    kind
    for base in (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
    for kind in base.__subclasses__()
)


def dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return dotted(node.func)
    return ""


def is_jit(fn: ast.FunctionDef) -> bool:
    return any(dotted(d) in ("triton.jit", "jit") for d in fn.decorator_list)


def jit_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    return [n for n in tree.body if isinstance(n, ast.FunctionDef) and is_jit(n)]


def compile_function(tree: ast.Module) -> ast.FunctionDef | None:
    """The function decorated ``@<REPRO>.compile``."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(
            dotted(d).endswith(".compile") for d in node.decorator_list
        ):
            return node
    return None


def entry_name(tree: ast.Module) -> str:
    """The kernel the compile function hands to ``compile_kernel`` (its first argument)."""
    fn = compile_function(tree)
    if fn is not None:
        for node in ast.walk(fn):
            called = isinstance(node, ast.Call) and dotted(node.func).endswith("compile_kernel")
            if called and node.args and isinstance(node.args[0], ast.Name):  # type: ignore[attr-defined]
                return node.args[0].id  # type: ignore[attr-defined]
    kernels = jit_functions(tree)
    return kernels[-1].name if kernels else ""


def is_launching(tree: ast.Module) -> bool:
    """Whether the form launches its kernel (``REPRO.launch(...)``: a runtime failure's form,
    ``suite.reduce.launching``): its launch code is fixed, and reads the entry kernel's name,
    its parameters' names and the compile function's constexpr values as they were."""
    return any(
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and dotted(node.value.func).endswith(".launch")
        for node in tree.body
    )


def head_end(tree: ast.Module) -> int:
    """The index of the ``REPRO`` declaration in the module (-1 without one): it and every
    statement before it are the file's fixed head, which no pass edits."""
    for index, node in enumerate(tree.body):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "REPRO" for t in node.targets
        ):
            return index
    return -1


def scope(tree: ast.Module, with_compile: bool = False) -> list[ast.AST]:
    roots: list[ast.AST] = list(jit_functions(tree))
    fn = compile_function(tree)
    if with_compile and fn is not None:
        roots.append(fn)
    return roots


@dataclass(frozen=True)
class Slot:
    """Where a node sits: its parent, the field, the position in a list field (or -1)."""

    parent: ast.AST
    name: str
    index: int
    node: ast.AST


def copied(node: _Node) -> _Node:
    """The copy ``copy.deepcopy`` makes of ``node`` (what is reached twice is copied once),
    made field by field, in 45% of its time: every candidate edit starts from a copy of the
    whole module, and ``deepcopy``'s generic protocol was the reducer's largest own cost.
    What is immutable is kept: names, constants, and the operator and context nodes
    (``ast.Add()``, ``ast.Load()``: no fields, no positions, shared by the parser)."""
    memo: dict[int, Any] = {}

    def one(value: Any) -> Any:
        kind = value.__class__
        if kind is list:
            done = memo.get(id(value))
            if done is None:
                done = memo[id(value)] = []
                done.extend([one(item) for item in value])
            return done
        if kind in _SHARED or not isinstance(value, ast.AST):
            return value
        done = memo.get(id(value))
        if done is None:
            done = memo[id(value)] = kind.__new__(kind)
            fields = done.__dict__
            for name, field in value.__dict__.items():
                simple = field is None or field.__class__ in (str, int)
                fields[name] = field if simple else one(field)
        return done

    result: _Node = one(node)
    return result


def slots(tree: ast.Module, with_compile: bool = False) -> list[Slot]:
    """Every node under the kernels (and the compile function), parents first, in a stable
    order: the same walk of a copy gives the same list, so positions name nodes."""
    found: list[Slot] = []
    for root in scope(tree, with_compile):
        stack: list[ast.AST] = [root]
        while stack:
            parent = stack.pop(0)
            for name, value in ast.iter_fields(parent):
                if isinstance(value, list):
                    for index, item in enumerate(value):
                        if isinstance(item, ast.AST):
                            found.append(Slot(parent, name, index, item))
                            stack.append(item)
                elif isinstance(value, ast.AST):
                    found.append(Slot(parent, name, -1, value))
                    stack.append(value)
    return found


def put(slot: Slot, new: ast.AST | list[ast.stmt]) -> None:
    if slot.index < 0:
        setattr(slot.parent, slot.name, new)
        return
    items = getattr(slot.parent, slot.name)
    if isinstance(new, list):
        items[slot.index : slot.index + 1] = new
    else:
        items[slot.index] = new


def names_read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def names_stored(node: ast.AST) -> set[str]:
    return {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def param_names(fn: ast.FunctionDef) -> list[str]:
    return [a.arg for a in fn.args.args]


def module_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            names |= names_stored(node)
    return names


def _string_keys(fn: ast.FunctionDef) -> set[str]:
    """The string keys of the compile function's ``signature`` and ``constexprs`` dicts."""
    keys: set[str] = set()
    for node in ast.walk(fn):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Dict):
            continue
        if any(
            isinstance(t, ast.Name) and t.id in ("signature", "constexprs") for t in node.targets
        ):
            keys.update(
                k.value
                for k in node.value.keys
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            )
    return keys


def well_formed(tree: ast.Module) -> bool:
    """Parses back, names defined, helper calls filled, compile dicts match the entry kernel."""
    try:
        ast.parse(ast.unparse(tree))
    except (SyntaxError, ValueError, RecursionError):
        return False
    known = module_names(tree) | set(dir(builtins))
    kernels = {fn.name: fn for fn in jit_functions(tree)}
    entry = entry_name(tree)
    if entry not in kernels:
        return False
    for fn in kernels.values():
        defined = known | set(param_names(fn)) | names_stored(fn)
        if names_read(fn) - defined:
            return False
        for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
            callee = kernels.get(dotted(call.func)) if isinstance(call.func, ast.Name) else None
            if callee is None:
                continue
            params = param_names(callee)
            required = params[: len(params) - len(callee.args.defaults)]
            given = params[: len(call.args)] + [k.arg for k in call.keywords if k.arg]
            if len(call.args) > len(params) or set(required) - set(given):
                return False
            if {k.arg for k in call.keywords if k.arg} - set(params):
                return False
    compile_fn = compile_function(tree)
    return compile_fn is None or _string_keys(compile_fn) == set(param_names(kernels[entry]))


def size(tree: ast.Module) -> tuple[int, int, int, int]:
    """What a reduction makes smaller, compared in order: helper call sites (so inlining a
    helper counts as progress), tokens, characters, the sum of integer constants."""
    kernels = {fn.name for fn in jit_functions(tree)}
    text = scope_text(tree)
    calls = sum(
        1
        for fn in jit_functions(tree)
        for n in ast.walk(fn)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in kernels
    )
    numbers = sum(
        n.value
        for root in scope(tree, True)
        for n in ast.walk(root)
        if isinstance(n, ast.Constant) and type(n.value) is int
    )
    return calls, count_tokens(text), len(text), numbers


def scope_text(tree: ast.Module, kernels_only: bool = False) -> str:
    """The kernels (and the compile function) as ``ast.unparse`` writes them."""
    return "\n".join(ast.unparse(root) for root in scope(tree, not kernels_only))


def count_tokens(text: str) -> int:
    skip = {
        tokenize.NEWLINE,
        tokenize.NL,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENDMARKER,
        tokenize.COMMENT,
    }
    try:
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        return sum(1 for t in tokens if t.type not in skip)
    except (tokenize.TokenError, SyntaxError):
        return len(text.split())


def kernel_measure(source: str) -> tuple[int, int]:
    """Lines and tokens of a file's ``@triton.jit`` functions, normalized by ``ast.unparse``
    (comments and layout do not count: the same measure for every reducer)."""
    text = scope_text(ast.parse(source), kernels_only=True)
    return len([line for line in text.splitlines() if line.strip()]), count_tokens(text)


def split(source: str) -> tuple[str, int]:
    """The file's fixed head (docstring, imports, the ``REPRO`` declaration), kept verbatim,
    and the index of the first module statement after it (what the passes edit)."""
    tree = ast.parse(source)
    index = head_end(tree)
    if index < 0:
        return "", 0
    lines = source.splitlines()[: tree.body[index].end_lineno]
    return "\n".join(lines) + "\n", index + 1


def write(tree: ast.Module, head: str, first: int) -> str:
    """The module's text: ``head`` verbatim, then the statements from ``first`` on."""
    tree = ast.fix_missing_locations(tree)
    parts = [ast.unparse(node) for node in tree.body[first:]]
    return head + "\n\n" + "\n\n\n".join(parts) + "\n"


Edit = Callable[[ast.Module], bool]  # applied to a copy; False when it does not apply


def filled(body: list[ast.stmt]) -> list[ast.stmt]:
    return body or [ast.Pass()]


class Renamer(ast.NodeTransformer):
    def __init__(self, names: dict[str, ast.expr | str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.AST:
        new = self.names.get(node.id)
        if new is None:
            return node
        if isinstance(new, str):
            return ast.copy_location(ast.Name(new, node.ctx), node)
        return copy.deepcopy(new)
