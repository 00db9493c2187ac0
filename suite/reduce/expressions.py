"""Expression passes: replace an expression with one of its operands (or scalar index
arithmetic with ``0``), drop masks and other keywords, make integer constants smaller.

These edits are many and small: they run after the statement passes have cut the kernel down.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from suite.reduce.tree import Edit, dotted, is_launching, put, slots

_MASKS = ("mask", "other")


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
        if isinstance(node.func, ast.Attribute) and not dotted(node.func).startswith(
            ("tl.", "triton.")
        ):
            found.append(node.func.value)  # x.to(...), x.reshape(...) -> x
        return found + [a for a in node.args if not isinstance(a, ast.Starred)]
    return []


def _scalar(node: ast.expr) -> bool:
    """Integer arithmetic of names, numbers and program ids: may become 0."""
    if isinstance(node, ast.Call):
        return dotted(node.func) in ("tl.program_id", "tl.num_programs")
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
                put(slot, new)
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
    """Make an integer constant (a shape, a trip count, a constexpr's value) smaller; in a
    launching form not the compile function's constexprs: the launch passes them as it did."""
    dicts = not is_launching(tree)
    for position, slot in enumerate(slots(tree, with_compile=dicts)):
        node = slot.node
        if isinstance(node, ast.Constant) and type(node.value) is int:
            for value in _smaller(node.value):

                def edit(module: ast.Module, position: int = position, value: int = value) -> bool:
                    put(slots(module, with_compile=dicts)[position], ast.Constant(value))
                    return True

                yield edit
