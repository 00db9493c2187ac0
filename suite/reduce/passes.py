"""The reducer's passes, as one named list: each proposes AST edits of a reproducer file's
kernels, and :func:`candidates` turns them into candidate texts to test.

A pass is a name and a function from a module to the edits it proposes (each applied to a
copy, in a stable order). The edits themselves live with their kind:

- :mod:`suite.reduce.blocks`: delete functions, blocks and statements, take a branch, replace
  a loop with its body or one trip;
- :mod:`suite.reduce.inlining`: inline helpers, drop unused parameters, inline constexprs,
  propagate single-use copies;
- :mod:`suite.reduce.expressions`: replace an expression with an operand, drop masks and
  keywords, shrink integer constants;
- :mod:`suite.reduce.naming`: short names, once, last.

:data:`PASSES` goes cheap and big first, as Hypothesis's ``shrink_passes`` and C-Vise's pass
list do. The driver (:mod:`suite.reduce.reducer`) runs them to a fixpoint and keeps an edit
only when the result is interesting and smaller (:func:`~suite.reduce.tree.size`), which
makes the reduction terminate; only edits that stay
:func:`~suite.reduce.tree.well_formed` are ever proposed.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from suite.reduce.blocks import (
    delete_blocks,
    delete_statements,
    drop_functions,
    drop_unused,
    if_to_branch,
    loop_single_trip,
    loop_to_body,
)
from suite.reduce.expressions import (
    drop_keywords,
    drop_masks,
    shrink_constants,
    simplify_expressions,
)
from suite.reduce.inlining import (
    drop_params,
    inline_constexprs,
    inline_helpers,
    propagate_copies,
)
from suite.reduce.naming import rename
from suite.reduce.tree import Edit, copied, kernel_measure, size, split, well_formed, write

__all__ = [
    "FINAL_PASSES",
    "PASSES",
    "TIDY",
    "Pass",
    "candidates",
    "kernel_measure",
    "size",
    "well_formed",
]


@dataclass(frozen=True)
class Pass:
    """One named pass: the edits it proposes for a module.

    ``together``: the pass's edits are independent (each names its target by a name, or by
    a position that the edits after it in the pass's order cannot move), so the first
    candidate applies all of them at once, last first: when they may all go (every unread
    parameter, every mask) that is one compile instead of one each.
    """

    name: str
    edits: Callable[[ast.Module], Iterator[Edit]]
    together: bool = False


PASSES: tuple[Pass, ...] = (
    Pass("drop-functions", drop_functions, together=True),
    Pass("delete-blocks", delete_blocks),
    Pass("delete-statements", delete_statements),
    Pass("if-to-branch", if_to_branch),
    Pass("loop-to-body", loop_to_body),
    Pass("loop-single-trip", loop_single_trip),
    Pass("inline-helpers", inline_helpers),
    Pass("drop-params", drop_params, together=True),
    Pass("inline-constexprs", inline_constexprs, together=True),
    Pass("propagate-copies", propagate_copies),
    Pass("drop-masks", drop_masks, together=True),
    Pass("simplify-expressions", simplify_expressions),
    Pass("drop-keywords", drop_keywords, together=True),
    Pass("shrink-constants", shrink_constants),
)
# Renaming changes no structure: it runs once, after the fixpoint.
FINAL_PASSES: tuple[Pass, ...] = (Pass("rename", rename),)
# After any pass that kept an edit: the helpers and constants it left unread, in one try
# (a reduction stopped by its budget would otherwise hand them over).
TIDY = Pass("drop-unused", drop_unused)


def _all_of(edits: list[Edit]) -> Edit:
    """One edit applying ``edits``, last first (those that do not apply are passed over)."""

    def edit(module: ast.Module) -> bool:
        applied = False
        for one in reversed(edits):
            try:
                applied |= one(module)
            except (IndexError, StopIteration, ValueError, AssertionError):
                continue
        return applied

    return edit


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
    if chosen.together and len(edits) > 1:
        edits.append(_all_of(list(edits)))
        order.insert(0, len(edits) - 1)
    for k in range(start, len(order)):
        module = copied(tree)
        try:
            applied = edits[order[k]](module)
        except (IndexError, StopIteration, ValueError, AssertionError):
            continue
        if applied and well_formed(module):
            yield k, write(module, head, first)
