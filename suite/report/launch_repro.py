"""``repro.py`` of a runtime failure: launch the kernel on fresh random inputs, judge it with
the reproducer's own oracle, exit 1 when the fault or the wrong result shows, 0 when not.

It is written from the reproducer's source: its kernels, helpers, ``@REPRO.inputs`` and
``@REPRO.launch`` functions are kept as written; what belongs to the suite (its imports, the
``Reproducer`` declaration, the compile function) is dropped, and a short preamble
(``templates/launch_repro.py.j2``) gives the few ``suite.checks`` helpers and oracles it uses,
in terms of triton and torch alone; the oracles' tolerances are :mod:`suite.judgement`'s,
carried verbatim at the bottom.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from jinja2 import Environment

from suite.api import Config
from suite.engine import CaseResult, capture_source, runtime_failure
from suite.report.standalone import capture_launch, compact_headers
from suite.standalone_kit import LAUNCH_KIT

#: The calls of a ``Reproducer`` that register a function.
_ROLES = ("inputs", "launch", "compile")
#: What a reproducer's declaration calls: the suite's class, or ``dict`` for one declared as
#: plain data (``suite.api.declared``: the functions are keywords of the call).
_DECLARING = ("Reproducer", "dict")
#: Top-level declarations of the suite's parameter space: dropped with the declaration.
_SPACE = ("Choice", "Pow2", "Size", "Param", "Constraint")


#: The oracles the preamble gives (as it gives ``suite.checks``' helpers the body uses).
_ORACLES = ("Fault", "Hang", "Reference", "Differential", "Determinism")
#: The suite's names the preamble defines in terms of triton and torch: what a launch reads
#: of the suite beyond these cannot be carried.
PROVIDED = ("device", "torch_dtype", "random_input", "poisoned", "ensure_allocator", *_ORACLES)


@dataclass(frozen=True)
class LaunchSource:
    """The parts of a reproducer file that a launch needs, and the names it uses."""

    body: str
    inputs: str
    launch: str
    oracles: str
    used: frozenset[str]
    holder: str = "REPRO"  # the name the file's Reproducer is bound to

    def roots(self) -> list[str]:
        """The global names a launch script starts from: the inputs and launch functions,
        and what the oracles name."""
        named = {n.id for n in ast.walk(ast.parse(self.oracles)) if isinstance(n, ast.Name)}
        return [self.inputs, self.launch, *sorted(named)]

    def dropped(self) -> list[str]:
        """The decorators that register a function with the reproducer."""
        return [f"{self.holder}.{role}" for role in _ROLES]


def _decorated_role(node: ast.AST, holder: str) -> str:
    for decorator in getattr(node, "decorator_list", []):
        if (
            isinstance(decorator, ast.Attribute)
            and isinstance(decorator.value, ast.Name)
            and decorator.value.id == holder
            and decorator.attr in _ROLES
        ):
            return decorator.attr
    return ""


def _registered(node: ast.stmt, holder: str) -> tuple[str, str]:
    """``REPRO.launch(fn)`` as a statement: (role, function name)."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return "", ""
    call = node.value
    if (
        isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == holder
        and call.func.attr in _ROLES
        and len(call.args) == 1
        and isinstance(call.args[0], ast.Name)
    ):
        return call.func.attr, call.args[0].id
    return "", ""


def _declaration(tree: ast.Module, repro_id: str) -> tuple[str, ast.Call] | None:
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id in _DECLARING
        ):
            ids = [k.value for k in node.value.keywords if k.arg == "id"]
            if ids and isinstance(ids[0], ast.Constant) and ids[0].value == repro_id:
                return node.targets[0].id, node.value
    return None


def _space(node: ast.stmt) -> bool:
    value = getattr(node, "value", None)
    return (
        isinstance(node, ast.Assign)
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in _SPACE
    )


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _defines(node: ast.stmt) -> set[str]:
    """The names a top-level statement binds: a def or class, any assignment (``A, B = 1, 2``,
    ``BLOCK: int = 64``)."""
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else []
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        targets = [node.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _segment(text: str, node: ast.stmt, drop_decorators: bool) -> str:
    """The statement's source as written; a function's own decorators kept unless dropped."""
    lines = text.splitlines()
    decorators = getattr(node, "decorator_list", [])
    first = node.lineno if drop_decorators or not decorators else decorators[0].lineno
    return "\n".join(lines[first - 1 : node.end_lineno])


def launch_source(text: str, repro_id: str) -> LaunchSource | None:
    """What a launch of ``repro_id`` needs from the reproducer file ``text``: the inputs and
    launch functions and every top-level definition they reach; None when it declares no
    ``@REPRO.inputs`` (a launch that checks itself has no oracle to carry)."""
    tree = ast.parse(text)
    found = _declaration(tree, repro_id)
    if found is None:
        return None
    holder, call = found
    oracles = next((k.value for k in call.keywords if k.arg == "oracles"), None)
    roles = {
        str(k.arg): k.value.id
        for k in call.keywords
        if k.arg in _ROLES and isinstance(k.value, ast.Name)
    }
    defined: dict[str, ast.stmt] = {}
    for node in tree.body:
        role = _decorated_role(node, holder)
        registered, name = _registered(node, holder)
        if role:
            roles[role] = node.name  # type: ignore[attr-defined]
        elif registered:
            roles[registered] = name
        declaration = isinstance(node, ast.Assign) and node.value is call
        if not registered and not _space(node) and not declaration:
            for defined_name in _defines(node):
                defined[defined_name] = node
    if "inputs" not in roles or "launch" not in roles:
        return None
    wanted = {roles["inputs"], roles["launch"]}
    if oracles is not None:
        wanted |= _names(oracles)
    reached: set[str] = set()
    while wanted - reached:
        name = (wanted - reached).pop()
        reached.add(name)
        if name in defined:
            wanted |= _names(defined[name])
    kept = [node for node in tree.body if _defines(node) & reached and node in defined.values()]
    body = "\n\n\n".join(
        _segment(text, node, drop_decorators=bool(_decorated_role(node, holder))) for node in kept
    )
    oracle_text = ast.get_source_segment(text, oracles) if oracles is not None else "()"
    return LaunchSource(
        body, roles["inputs"], roles["launch"], oracle_text or "()", frozenset(reached), holder
    )


def launch_script(
    env: Environment,
    text: str,
    repro_id: str,
    config: Config,
    expected: str,
    title: str,
    target: str,
    triton_version: str,
    carried: tuple[str, frozenset[str]] | None = None,
) -> str | None:
    """The launch form of ``repro.py``, or None when the reproducer has no oracle launch.

    ``carried``: the closure of the launch's names as the reproducer's loaded module gives
    it (``standalone.capture_launch``: helpers of other modules, constants however
    assigned) and the preamble's helpers it reads; without it, the file's own top-level
    definitions that the launch reaches."""
    source = launch_source(text, repro_id)
    if source is None:
        return None
    if carried is not None:
        body, provided = carried
        source = LaunchSource(
            body,
            source.inputs,
            source.launch,
            source.oracles,
            frozenset(provided | set(source.roots())),
            source.holder,
        )
    return env.get_template("launch_repro.py.j2").render(
        title=title,
        expected=expected,
        target=target,
        arch=int(target.removeprefix("sm_").rstrip("af")),
        triton_version=triton_version,
        config=repr(dict(config)),
        body=compact_headers(_without_the_kit(source.body)),
        inputs=source.inputs,
        launch=source.launch,
        oracles=source.oracles,
        used=source.used,
        oracle_classes=[name for name in _ORACLES if name in source.used],
        oracle_names=", ".join(n.lower() for n in _ORACLES if n in source.used) or "fault",
        kit=LAUNCH_KIT,
    )


def _without_the_kit(body: str) -> str:
    """``body`` without the top-level definitions the carried kit at the bottom holds word for
    word (a reproducer that runs by itself carries ``set_allocator`` too): defined once."""
    lines = body.splitlines()
    for node in reversed(ast.parse(body).body):
        text = ast.get_source_segment(body, node)
        if isinstance(node, ast.FunctionDef) and text and f"\n{text}\n" in LAUNCH_KIT:
            del lines[node.lineno - 1 : node.end_lineno]
    return re.sub(r"\n{4,}", "\n\n\n", "\n".join(lines))


def launch_form(
    env: Environment,
    result: CaseResult,
    source: dict[str, str],
    expected: str,
    title: str,
    python: str | None,
    triton_version: str,
) -> str | None:
    """For a runtime failure whose reproducer (``source``: its file, or a carried copy)
    launches with oracles: the repro.py that launches and judges; None otherwise. The
    closure of what the launch reads is found in a child under ``python`` (the release that
    failed); a name it cannot carry raises :class:`LaunchNotCarried`."""
    carried = capture_source(source)
    if not runtime_failure(expected) or carried is None:
        return None
    found = launch_source(carried.text, result.repro)
    if found is None:
        return None
    closure, why = capture_launch(
        result, source, python, found.roots(), list(PROVIDED), found.dropped()
    )
    if closure is None:
        raise LaunchNotCarried(why)
    return launch_script(
        env,
        carried.text,
        result.repro,
        result.config,
        expected,
        title,
        result.target,
        triton_version,
        closure,
    )


class LaunchNotCarried(Exception):
    """The launch reads what a standalone program cannot carry (the message names it)."""


def no_launch(repro: str) -> str:
    """Why a runtime failure gets no repro.py when its reproducer declares no launch."""
    return (
        f"the failure shows only at a launch, and {repro} declares none: declare its "
        "@REPRO.inputs and @REPRO.launch (docs/writing-reproducers.md), or capture the "
        "program again with `repro capture`, which records the launch"
    )
