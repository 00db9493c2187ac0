"""What a standalone program carries of the suite: the closure of the names it calls in
:mod:`suite.judgement`, verbatim (:func:`carried`). Every program the suite hands out (the
report's ``repro.py``, the reducer's ``reduced.py``, the reproducer ``repro capture`` writes)
carries one of these kits at its bottom, so it judges with the engine's own code and needs
nothing of the suite to run."""

from __future__ import annotations

import ast
import inspect
import io
import re
import tokenize
from types import ModuleType

from suite import judgement


def carried(module: ModuleType, *names: str) -> str:
    """What a standalone program carries of ``module``: the definitions of ``names`` and of
    every module-level name they read, transitively, in the module's order, after the
    module's imports they use. The closure, not the whole module, and its code, not its
    prose: each line of code verbatim, the docstrings and the comment lines left in the
    module (the block's head names it). A script carries only the code it runs."""
    text = inspect.getsource(module)
    lines = text.splitlines()
    body = ast.parse(text).body
    bound = {name: node for node in body for name in _bound_names(node)}
    wanted, chosen = list(names), set()
    while wanted:
        node = bound[wanted.pop()]
        if id(node) not in chosen:
            chosen.add(id(node))
            wanted += [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in bound]
    prose = _prose_lines(text)
    chosen_text, after_def = "", False
    for node in body:
        if id(node) in chosen and not isinstance(node, (ast.Import, ast.ImportFrom)):
            decorators = getattr(node, "decorator_list", [])
            first = min([node.lineno] + [d.lineno for d in decorators]) - 1
            code = [lines[i] for i in range(first, node.end_lineno or first + 1) if i not in prose]
            is_def = isinstance(node, (ast.FunctionDef, ast.ClassDef))
            gap = "\n\n\n" if chosen_text and (is_def or after_def) else "\n" if chosen_text else ""
            chosen_text += gap + "\n".join(code)
            after_def = is_def
    imports = [line for line in lines if line.startswith("import ")]
    used = [line for line in imports if re.search(rf"\b{line.split()[1]}\.", chosen_text)]
    return "\n".join(used) + ("\n\n\n" if used else "") + chosen_text + "\n"


def _prose_lines(text: str) -> set[int]:
    """The (0-based) lines of ``text`` that hold no code: the docstrings of its functions and
    classes (where a statement follows), and the lines that are only a comment."""
    prose: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if len(node.body) > 1 and ast.get_docstring(node, clean=False):
            head = node.body[0]
            prose.update(range(head.lineno - 1, head.end_lineno or head.lineno))
    lines = text.splitlines()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        row, column = token.start
        if token.type == tokenize.COMMENT and not lines[row - 1][:column].strip():
            prose.add(row - 1)
    return prose


def _bound_names(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


#: The head of the block every standalone program carries at its bottom: the code of
#: :mod:`suite.judgement`, verbatim, that the engine itself judges with.
KIT_HEAD = "# ---- carried verbatim from triton-repro-suite (suite/judgement.py)"
#: What a compile's ``repro.py`` carries: the compile call and the evidence check.
COMPILE_KIT = f"{KIT_HEAD}: the engine's own code ----\n\n" + carried(
    judgement, "ast_source", "compile_options", "stages_entered", "printed_signature", "same_bug"
)
#: What a launch's ``repro.py`` carries: the oracles' tolerances, the scratch allocator.
LAUNCH_KIT = f"{KIT_HEAD}: the engine's own code ----\n\n" + carried(
    judgement, "tolerance", "set_allocator"
)
#: What a captured reproducer of a launch failure carries when it runs by itself: the
#: compile's kit, the judgement of a printed launch, the scratch allocator.
CAPTURED_LAUNCH_KIT = f"{KIT_HEAD}: the engine's own code ----\n\n" + carried(
    judgement,
    "ast_source",
    "compile_options",
    "stages_entered",
    "printed_signature",
    "printed_launch_signature",
    "same_bug",
    "set_allocator",
)


def hang_after_s() -> int:
    """Seconds after which a standalone program calls its compile hung: 90% of the command's
    ``--timeout``, so it says so before ``repro report --verify``, which runs it under that
    timeout, has to kill it."""
    from suite.engine import DEFAULTS

    return round(DEFAULTS.bounds.timeout_s * 0.9)
