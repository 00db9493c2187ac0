"""Statement and block passes: delete whole functions, blocks and runs of statements, take
one branch of an ``if``, replace a loop with its body or with a single trip.

These are the big, cheap edits (C-Vise's line and block deletions, Hypothesis's
``adaptive_example_deletion``): they go first, and most of a reduction's progress is theirs.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator

from suite.reduce.tree import (
    Edit,
    dotted,
    entry_name,
    filled,
    head_end,
    is_jit,
    jit_functions,
    names_read,
    put,
    slots,
)

_RANGES = {"range", "tl.range", "tl.static_range", "triton.language.range"}


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


def drop_functions(tree: ast.Module) -> Iterator[Edit]:
    """Delete a helper kernel or a module-level upper-case constant."""
    entry = entry_name(tree)
    for index, node in enumerate(tree.body):
        if index <= head_end(tree):
            continue  # the head is written back verbatim (a runtime form's launch code is there)
        if _droppable(node, entry):

            def edit(module: ast.Module, index: int = index) -> bool:
                del module.body[index]
                return True

            yield edit


def _droppable(node: ast.stmt, entry: str) -> str:
    """The name of a helper kernel or module-level upper-case constant ('' for anything else)."""
    if isinstance(node, ast.FunctionDef) and is_jit(node) and node.name != entry:
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Name) and target.id.isupper() and target.id != "REPRO":
            return target.id
    return ""


def drop_unused(tree: ast.Module) -> Iterator[Edit]:
    """Delete, in one edit, every helper and constant that nothing else reads any more (what
    inlining and deletions leave behind)."""

    def edit(module: ast.Module) -> bool:
        entry, first = entry_name(module), head_end(module) + 1
        dropped = False
        while True:
            reads = [names_read(node) for node in module.body]
            unused = [
                index
                for index, node in enumerate(module.body)
                if index >= first
                and (name := _droppable(node, entry))
                and not any(name in seen for i, seen in enumerate(reads) if i != index)
            ]
            if not unused:
                return dropped
            for index in reversed(unused):
                del module.body[index]
            dropped = True

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
                        setattr(owner, name, filled(items))
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
            put(slot, list(branch))
            return True

        yield edit


def _range_args(loop: ast.For) -> list[ast.expr] | None:
    if isinstance(loop.iter, ast.Call) and dotted(loop.iter.func) in _RANGES:
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
            put(slot, prologue + list(node.body))
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
