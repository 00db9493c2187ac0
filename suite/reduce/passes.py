"""The reducer's passes: AST edits of a reproducer file's kernels, each a candidate to test.

A reproducer file in the reducer's form (``suite/templates/reduced_repro.py.j2``) holds the
``@triton.jit`` kernel and its helpers, and one compile function whose ``signature`` and
``constexprs`` dict literals name the entry kernel's arguments. A pass proposes edits of
the kernels (and, to keep them consistent, of those dicts); :func:`candidates` yields each
edit as a new module, in a stable order, and only those that stay well-formed
(:func:`well_formed`): they parse, every name a kernel reads is defined, every helper call
fills its parameters, and the dicts name exactly the entry kernel's arguments.

The passes (:data:`PASSES`) go cheap and big first, as in Hypothesis's shrinker and C-Vise:
drop functions, delete blocks, delete statements, take a branch of an ``if``, replace a loop
with its body or one trip, inline helpers, drop unused parameters, inline constexprs, drop
masks and keywords, replace expressions with an operand or a constant, shrink integer
constants, and rename to short names last. The driver (:mod:`suite.reduce.reducer`) runs them
to a fixpoint and keeps an edit only when the result is interesting and smaller
(:func:`size`), which makes the reduction terminate.
"""

from __future__ import annotations

import ast
import builtins
import copy
import io
import keyword
import random
import tokenize
from collections.abc import Callable, Iterator
from dataclasses import dataclass

_RANGES = {"range", "tl.range", "tl.static_range", "triton.language.range"}
_MASKS = ("mask", "other")
_SHORT = "abcdefghijklmnopqrstuvwxyz"


# --- reading a module -------------------------------------------------------------------


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return ""


def is_jit(fn: ast.FunctionDef) -> bool:
    return any(_dotted(d) in ("triton.jit", "jit") for d in fn.decorator_list)


def jit_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    return [n for n in tree.body if isinstance(n, ast.FunctionDef) and is_jit(n)]


def compile_function(tree: ast.Module) -> ast.FunctionDef | None:
    """The function decorated ``@<REPRO>.compile``."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(
            _dotted(d).endswith(".compile") for d in node.decorator_list
        ):
            return node
    return None


def entry_name(tree: ast.Module) -> str:
    """The kernel the compile function hands to ``compile_kernel`` (its first argument)."""
    fn = compile_function(tree)
    if fn is not None:
        for node in ast.walk(fn):
            called = isinstance(node, ast.Call) and _dotted(node.func).endswith("compile_kernel")
            if called and node.args and isinstance(node.args[0], ast.Name):  # type: ignore[attr-defined]
                return node.args[0].id  # type: ignore[attr-defined]
    kernels = jit_functions(tree)
    return kernels[-1].name if kernels else ""


def _scope(tree: ast.Module, with_compile: bool = False) -> list[ast.AST]:
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


def slots(tree: ast.Module, with_compile: bool = False) -> list[Slot]:
    """Every node under the kernels (and the compile function), parents first, in a stable
    order: the same walk of a copy gives the same list, so positions name nodes."""
    found: list[Slot] = []
    for root in _scope(tree, with_compile):
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


def _put(slot: Slot, new: ast.AST | list[ast.stmt]) -> None:
    if slot.index < 0:
        setattr(slot.parent, slot.name, new)
        return
    items = getattr(slot.parent, slot.name)
    if isinstance(new, list):
        items[slot.index : slot.index + 1] = new
    else:
        items[slot.index] = new


def _loads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stores(node: ast.AST) -> set[str]:
    return {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _params(fn: ast.FunctionDef) -> list[str]:
    return [a.arg for a in fn.args.args]


def _module_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            names |= _stores(node)
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
    known = _module_names(tree) | set(dir(builtins))
    kernels = {fn.name: fn for fn in jit_functions(tree)}
    entry = entry_name(tree)
    if entry not in kernels:
        return False
    for fn in kernels.values():
        defined = known | set(_params(fn)) | _stores(fn)
        if _loads(fn) - defined:
            return False
        for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
            callee = kernels.get(_dotted(call.func)) if isinstance(call.func, ast.Name) else None
            if callee is None:
                continue
            params = _params(callee)
            required = params[: len(params) - len(callee.args.defaults)]
            given = params[: len(call.args)] + [k.arg for k in call.keywords if k.arg]
            if len(call.args) > len(params) or set(required) - set(given):
                return False
            if {k.arg for k in call.keywords if k.arg} - set(params):
                return False
    compile_fn = compile_function(tree)
    return compile_fn is None or _string_keys(compile_fn) == set(_params(kernels[entry]))


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
        for root in _scope(tree, True)
        for n in ast.walk(root)
        if isinstance(n, ast.Constant) and type(n.value) is int
    )
    return calls, count_tokens(text), len(text), numbers


def scope_text(tree: ast.Module, kernels_only: bool = False) -> str:
    """The kernels (and the compile function) as ``ast.unparse`` writes them."""
    return "\n".join(ast.unparse(root) for root in _scope(tree, not kernels_only))


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


# --- the passes -------------------------------------------------------------------------

Edit = Callable[[ast.Module], bool]  # applied to a copy; False when it does not apply


def _statement_lists(tree: ast.Module) -> list[tuple[int, str]]:
    """``(slot position of the owner, field)`` of every statement list in the kernels; the
    kernel functions themselves are position -1 - their index."""
    lists: list[tuple[int, str]] = []
    lists.extend((-1 - i, "body") for i in range(len(jit_functions(tree))))
    for position, slot in enumerate(slots(tree)):
        for name in ("body", "orelse"):
            value = getattr(slot.node, name, None)
            if isinstance(slot.node, ast.stmt) and isinstance(value, list) and value:
                lists.append((position, name))
    return lists


def _owner(tree: ast.Module, position: int) -> ast.AST:
    if position < 0:
        return jit_functions(tree)[-1 - position]
    return slots(tree)[position].node


def _filled(body: list[ast.stmt]) -> list[ast.stmt]:
    return body or [ast.Pass()]


def drop_functions(tree: ast.Module) -> Iterator[Edit]:
    """Delete a helper kernel or a module-level upper-case constant."""
    entry = entry_name(tree)
    for index, node in enumerate(tree.body):
        helper = isinstance(node, ast.FunctionDef) and is_jit(node) and node.name != entry
        constant = isinstance(node, ast.Assign) and all(
            isinstance(t, ast.Name) and t.id.isupper() and t.id != "REPRO" for t in node.targets
        )
        if helper or constant:

            def edit(module: ast.Module, index: int = index) -> bool:
                del module.body[index]
                return True

            yield edit


def _delete_chunks(tree: ast.Module, compound_only: bool) -> Iterator[Edit]:
    for position, name in _statement_lists(tree):
        body = getattr(_owner(tree, position), name)
        n = len(body)
        chunk = n if not compound_only else 1
        while chunk >= 1:
            for start in range(0, n, chunk):
                picked = body[start : start + chunk]
                if compound_only and not isinstance(
                    picked[0], (ast.For, ast.While, ast.If, ast.With)
                ):
                    continue

                def edit(
                    module: ast.Module,
                    position: int = position,
                    name: str = name,
                    start: int = start,
                    chunk: int = chunk,
                ) -> bool:
                    owner = _owner(module, position)
                    items = getattr(owner, name)
                    del items[start : start + chunk]
                    if name == "body":
                        setattr(owner, name, _filled(items))
                    return True

                yield edit
            chunk //= 2


def delete_blocks(tree: ast.Module) -> Iterator[Edit]:
    """Delete a whole ``for``, ``while``, ``if`` or ``with``."""
    return _delete_chunks(tree, compound_only=True)


def delete_statements(tree: ast.Module) -> Iterator[Edit]:
    """Delete runs of statements: halves of each list first, then quarters, down to one."""
    return _delete_chunks(tree, compound_only=False)


def _statement_edits(
    tree: ast.Module, kinds: tuple[type, ...], replacements: Callable[[ast.stmt], int]
) -> Iterator[tuple[int, int]]:
    for position, slot in enumerate(slots(tree)):
        if isinstance(slot.node, kinds) and slot.index >= 0:
            for choice in range(replacements(slot.node)):  # type: ignore[arg-type]
                yield position, choice


def if_to_branch(tree: ast.Module) -> Iterator[Edit]:
    """Replace an ``if`` with its body, or with its ``else``."""
    for position, choice in _statement_edits(tree, (ast.If,), lambda n: 2):

        def edit(module: ast.Module, position: int = position, choice: int = choice) -> bool:
            slot = slots(module)[position]
            node = slot.node
            assert isinstance(node, ast.If)
            branch = node.body if choice == 0 else node.orelse
            if choice == 1 and not branch:
                return False
            _put(slot, list(branch))
            return True

        yield edit


def _range_args(loop: ast.For) -> list[ast.expr] | None:
    if isinstance(loop.iter, ast.Call) and _dotted(loop.iter.func) in _RANGES:
        return loop.iter.args
    return None


def loop_to_body(tree: ast.Module) -> Iterator[Edit]:
    """Replace a loop with its body, the loop variable bound to the first value."""
    for position, _ in _statement_edits(tree, (ast.For, ast.While), lambda n: 1):

        def edit(module: ast.Module, position: int = position) -> bool:
            slot = slots(module)[position]
            node = slot.node
            prologue: list[ast.stmt] = []
            if isinstance(node, ast.For):
                args = _range_args(node)
                if args is None or not isinstance(node.target, ast.Name):
                    return False
                first = args[0] if len(args) >= 2 else ast.Constant(0)
                prologue = [ast.Assign([node.target], first, lineno=0)]
            assert isinstance(node, (ast.For, ast.While))
            _put(slot, prologue + list(node.body))
            return True

        yield edit


def loop_single_trip(tree: ast.Module) -> Iterator[Edit]:
    """Make a ``range`` loop run once: ``range(start, start + 1)``, its keywords kept."""
    for position, _ in _statement_edits(tree, (ast.For,), lambda n: 1):

        def edit(module: ast.Module, position: int = position) -> bool:
            node = slots(module)[position].node
            assert isinstance(node, ast.For)
            args = _range_args(node)
            if args is None:
                return False
            first = args[0] if len(args) >= 2 else ast.Constant(0)
            if isinstance(first, ast.Constant) and type(first.value) is int:
                last: ast.expr = ast.Constant(first.value + 1)
            else:
                last = ast.BinOp(copy.deepcopy(first), ast.Add(), ast.Constant(1))
            if len(args) == 2 and ast.dump(args[1]) == ast.dump(last):
                return False
            assert isinstance(node.iter, ast.Call)
            node.iter.args = [first, last]
            return True

        yield edit


class _Renamer(ast.NodeTransformer):
    def __init__(self, names: dict[str, ast.expr | str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.AST:
        new = self.names.get(node.id)
        if new is None:
            return node
        if isinstance(new, str):
            return ast.copy_location(ast.Name(new, node.ctx), node)
        return copy.deepcopy(new)


def _inline(
    module: ast.Module, helper: ast.FunctionDef, call: ast.Call, tag: str
) -> tuple[list[ast.stmt], ast.expr | None] | None:
    """The helper's body with the call's arguments bound, and the value it returns."""
    body = helper.body
    returns = [n for n in ast.walk(helper) if isinstance(n, ast.Return)]
    if returns and (len(returns) > 1 or body[-1] is not returns[0]):
        return None
    params = _params(helper)
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
        if isinstance(value, (ast.Name, ast.Constant)) and name not in _stores(helper):
            names[name] = value
        else:
            names[name] = f"{name}_{tag}"
            prologue.append(ast.Assign([ast.Name(f"{name}_{tag}", ast.Store())], value, lineno=0))
    for local in _stores(helper) - set(params):
        names[local] = f"{local}_{tag}"
    renamer = _Renamer(names)
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
            _put(slot, _filled(statements))
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
    params = _params(fn)
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
        for name in _params(fn):
            if name in _loads(fn):
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
    for name in _params(entry):
        if name not in values:
            continue

        def edit(module: ast.Module, name: str = name) -> bool:
            kernel = next(f for f in jit_functions(module) if f.name == entry_name(module))
            value = _constexpr_values(module)[name]
            if name in _stores(kernel):
                return False
            _Renamer({name: value}).visit(kernel)
            _drop_param(module, kernel.name, name)
            return True

        yield edit


def _operands(node: ast.expr) -> list[ast.expr]:
    """What an expression may be replaced with: its operands, in order."""
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    if isinstance(node, ast.Subscript):
        return [node.value]
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return [node.value]
    if isinstance(node, ast.Call):
        found: list[ast.expr] = []
        if isinstance(node.func, ast.Attribute) and not _dotted(node.func).startswith(
            ("tl.", "triton.")
        ):
            found.append(node.func.value)  # x.to(...), x.reshape(...) -> x
        return found + [a for a in node.args if not isinstance(a, ast.Starred)]
    return []


def _scalar(node: ast.expr) -> bool:
    """Integer arithmetic of names, numbers and program ids: may become 0."""
    if isinstance(node, ast.Call):
        return _dotted(node.func) in ("tl.program_id", "tl.num_programs")
    if isinstance(node, ast.BinOp):
        return all(
            isinstance(n, (ast.Name, ast.Constant)) or _scalar(n) for n in (node.left, node.right)
        )
    return False


def simplify_expressions(tree: ast.Module) -> Iterator[Edit]:
    """Replace an expression with one of its operands, or scalar index arithmetic with 0."""
    for position, slot in enumerate(slots(tree)):
        node = slot.node
        if not isinstance(node, ast.expr) or isinstance(getattr(node, "ctx", None), ast.Store):
            continue
        if isinstance(slot.parent, ast.keyword) or slot.name in ("func", "decorator_list"):
            continue
        choices = len(_operands(node)) + (1 if _scalar(node) else 0)
        for choice in range(choices):

            def edit(module: ast.Module, position: int = position, choice: int = choice) -> bool:
                slot = slots(module)[position]
                assert isinstance(slot.node, ast.expr)
                operands = _operands(slot.node)
                new = operands[choice] if choice < len(operands) else ast.Constant(0)
                _put(slot, new)
                return True

            yield edit


def _keyword_edits(tree: ast.Module, masks: bool) -> Iterator[Edit]:
    for position, slot in enumerate(slots(tree)):
        node = slot.node
        if not isinstance(node, ast.Call):
            continue
        wanted = [k.arg for k in node.keywords if k.arg and (k.arg in _MASKS) == masks]
        if masks and len(wanted) > 1:
            wanted.insert(0, "")  # all the masks at once first
        for name in wanted:

            def edit(module: ast.Module, position: int = position, name: str = name) -> bool:
                call = slots(module)[position].node
                assert isinstance(call, ast.Call)
                drop = set(_MASKS) if not name else {name}
                call.keywords = [k for k in call.keywords if k.arg not in drop]
                return True

            yield edit


def drop_masks(tree: ast.Module) -> Iterator[Edit]:
    """Drop ``mask=`` and ``other=`` from loads and stores."""
    return _keyword_edits(tree, masks=True)


def drop_keywords(tree: ast.Module) -> Iterator[Edit]:
    """Drop any other keyword argument (eviction policies, cache modifiers, flags)."""
    return _keyword_edits(tree, masks=False)


def _smaller(value: int) -> list[int]:
    found = [1, 16, value // 2] if value > 1 else []
    return sorted({v for v in found if 0 < v < value})


def shrink_constants(tree: ast.Module) -> Iterator[Edit]:
    """Make an integer constant (a shape, a trip count, a constexpr's value) smaller."""
    for position, slot in enumerate(slots(tree, with_compile=True)):
        node = slot.node
        if isinstance(node, ast.Constant) and type(node.value) is int:
            for value in _smaller(node.value):

                def edit(module: ast.Module, position: int = position, value: int = value) -> bool:
                    _put(slots(module, with_compile=True)[position], ast.Constant(value))
                    return True

                yield edit


def rename(tree: ast.Module) -> Iterator[Edit]:
    """Short names for everything the kernels define: one edit renaming all of it."""

    def edit(module: ast.Module) -> bool:
        taken = _module_names(module) | set(dir(builtins)) | set(keyword.kwlist)
        kernels = jit_functions(module)
        entry = entry_name(module)
        helpers = {
            f.name: f"f{i}" if len(kernels) > 2 else "f"
            for i, f in enumerate(kernels)
            if f.name != entry
        }
        helpers[entry] = "kernel" if "kernel" not in taken or entry == "kernel" else entry
        changed = False
        per_function: dict[str, dict[str, str]] = {}
        for fn in kernels:
            locals_ = _params(fn) + sorted(_stores(fn) - set(_params(fn)), key=_first_use(fn))
            short = iter(n for n in _names() if n not in taken and n not in helpers.values())
            names = {name: next(short) for name in locals_}
            per_function[fn.name] = names
            _Renamer({**names, **helpers}).visit(fn)
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


@dataclass(frozen=True)
class Pass:
    """One named pass: the edits it proposes for a module."""

    name: str
    edits: Callable[[ast.Module], Iterator[Edit]]


PASSES: tuple[Pass, ...] = (
    Pass("drop-functions", drop_functions),
    Pass("delete-blocks", delete_blocks),
    Pass("delete-statements", delete_statements),
    Pass("if-to-branch", if_to_branch),
    Pass("loop-to-body", loop_to_body),
    Pass("loop-single-trip", loop_single_trip),
    Pass("inline-helpers", inline_helpers),
    Pass("drop-params", drop_params),
    Pass("inline-constexprs", inline_constexprs),
    Pass("drop-masks", drop_masks),
    Pass("simplify-expressions", simplify_expressions),
    Pass("drop-keywords", drop_keywords),
    Pass("shrink-constants", shrink_constants),
)
# Renaming changes no structure: it runs once, after the fixpoint.
FINAL_PASSES: tuple[Pass, ...] = (Pass("rename", rename),)


def split(source: str) -> tuple[str, int]:
    """The file's fixed head (docstring, imports, the ``REPRO`` declaration), kept verbatim,
    and the index of the first module statement after it (what the passes edit)."""
    tree = ast.parse(source)
    for index, node in enumerate(tree.body):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "REPRO" for t in node.targets
        ):
            lines = source.splitlines()[: node.end_lineno]
            return "\n".join(lines) + "\n", index + 1
    return "", 0


def write(tree: ast.Module, head: str, first: int) -> str:
    """The module's text: ``head`` verbatim, then the statements from ``first`` on."""
    tree = ast.fix_missing_locations(tree)
    parts = [ast.unparse(node) for node in tree.body[first:]]
    return head + "\n\n" + "\n\n\n".join(parts) + "\n"


def candidates(
    source: str, chosen: Pass, start: int = 0, seed: int = 0
) -> Iterator[tuple[int, str]]:
    """``(k, text)`` for the well-formed edits ``chosen`` proposes for ``source``, the
    ``k``-th onwards in the pass's order (``seed`` other than 0 shuffles it, reproducibly)."""
    head, first = split(source)
    tree = ast.parse(source)
    edits = list(chosen.edits(tree))
    order = list(range(len(edits)))
    if seed:
        random.Random(seed).shuffle(order)
    for k in range(start, len(order)):
        module = copy.deepcopy(tree)
        try:
            applied = edits[order[k]](module)
        except (IndexError, StopIteration, ValueError, AssertionError):
            continue
        if applied and well_formed(module):
            yield k, write(module, head, first)
