"""The reducer's forms: a finding's reproducer written as one self-contained file the passes
can edit (``suite.reduce.tree`` reads it).

- :func:`reducer_form` (``templates/reduced_repro.py.j2``), for a compile failure: the
  captured compile call, with literal ``signature`` and ``constexprs`` dicts;
- :func:`launching_form` (``templates/reduced_launch_repro.py.j2``), for a runtime failure: the
  same, with the reproducer's own launch code kept beside it, verbatim, in the file's fixed
  head: its ``@REPRO.inputs`` and ``@REPRO.launch`` functions, every definition they reach,
  and its oracles. The passes never edit the launch code; they keep it well-formed through
  one seam: each launch of the entry kernel goes through ``launch_kernel``, which binds the
  launch's arguments to the original kernel's parameters and passes the kernel only those it
  still has. A parameter the reducer dropped, or a constexpr it wrote into the kernel (with
  the value the launch passes: both come from the finding's config), drops out of the launch;
  the inputs, their shapes and strides, the grid and every config value stay the launch's own.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import TYPE_CHECKING

from suite.engine import CaseResult, Found, Outcome, scrub_secrets
from suite.errors import UsageError
from suite.failures.findings import Finding
from suite.reduce.tree import is_jit
from suite.templating import template_environment

if TYPE_CHECKING:
    from suite.report.standalone import CompileCall


def _probe(finding: Finding) -> CaseResult:
    """The finding's minimal config as a case result, for the capture child to run."""
    return CaseResult(
        case_id=f"{finding.repro}[{finding.target}]",
        repro=finding.repro,
        target=finding.target,
        config=dict(finding.minimal_config),
        outcome=Outcome.from_label(finding.outcome),
    )


def _captured_compile(finding: Finding, found: Found, python: str, origin: str) -> CompileCall:
    """The compile call of the finding's minimal config, as the report's standalone form
    captures it; a usage error when it cannot be captured."""
    from suite.report.standalone import capture_compile

    call, why = capture_compile(_probe(finding), found.source, python)
    if call is None:
        raise UsageError(f"cannot put {origin} in the reducer's form: {why}")
    return call


def reducer_form(finding: Finding, found: Found, python: str, origin: str, finding_id: str) -> str:
    """The finding's reproducer as a self-contained file the passes can edit."""
    call = _captured_compile(finding, found, python, origin)
    repro = found.repro
    # Scrubbed once, here: a credential in the source never reaches a candidate or reduced.py.
    return scrub_secrets(
        template_environment()
        .get_template("reduced_repro.py.j2")
        .render(
            title=repro.title or repro.id,
            origin=origin,
            finding_id=finding_id,
            triton_version=finding.environment.triton or "unknown",
            target=finding.target,
            signature=finding.signature,
            repro_id=repro.id,
            family=repro.family,
            config=dict(finding.minimal_config),
            requires=tuple(repro.requires),
            label=repro.label,
            imports=call.imports,
            globals_=form_constants(call.globals_),
            kernels=call.kernels,
            aliases=call.aliases,
            signature_dict=call.signature,
            constexprs={name: repr(value) for name, value in call.constexprs.items()},
            kernel_name=call.kernel_name,
            specialization=form_specialization(call.signature, call.attrs),
        )
    )


def form_constants(captured: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The module constants the kernels read (the capture's closure of them), each a
    ``tl.constexpr``: a release that lets a kernel read a plain global (3.x before the
    constexpr rule) wrote it plain, and the release that judges a reduction may refuse it."""
    plain = ("tl.constexpr(", "triton.language.constexpr(")
    return [(n, v if v.startswith(plain) else f"tl.constexpr({v})") for n, v in captured]


def form_specialization(signature: dict[str, str], attrs: dict[str, list[list[object]]]) -> str:
    """The ``compile_kernel`` keywords that state the captured specialization ('' when it
    is the default: every pointer and integer argument divisible by 16)."""
    from suite.tritonc import specialization

    default = {n for n, pairs in specialization(signature).attrs.items() if pairs}
    divisible = sorted(n for n, pairs in attrs.items() if ["tt.divisibility", 16] in pairs)
    ones = sorted(n for n, pairs in attrs.items() if ["tt.equal_to", 1] in pairs)
    other = {
        n: [tuple(p) for p in pairs if p not in (["tt.divisibility", 16], ["tt.equal_to", 1])]
        for n, pairs in attrs.items()
    }
    other = {n: pairs for n, pairs in other.items() if pairs}
    words = ""
    if set(divisible) != default:
        words += f", divisible={divisible!r}"
    if ones:
        words += f", equal_to_1={ones!r}"
    if other:
        words += f", attrs={other!r}"
    return words


#: The function of the form through which the launch code launches the entry kernel.
LAUNCH_KERNEL = "launch_kernel"


def _through_launch_kernel(tree: ast.Module, entry: str, params: list[str]) -> int:
    """Every ``entry[grid](...)`` in ``tree`` becomes ``launch_kernel(entry, grid, params,
    ...)``; how many there were."""
    count = 0
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)):
            continue
        launched = node.func.value
        if not (isinstance(launched, ast.Name) and launched.id == entry):
            continue
        names = ast.Tuple([ast.Constant(p) for p in params], ast.Load())
        node.args = [ast.Name(entry, ast.Load()), node.func.slice, names, *node.args]
        node.func = ast.Name(LAUNCH_KERNEL, ast.Load())
        count += 1
    return count


def _bound(node: ast.stmt) -> set[str]:
    """The names a top-level statement binds (a def, an assignment)."""
    if isinstance(node, ast.FunctionDef):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else []
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _imports(text: str, carried: list[str]) -> str:
    """The original file's top-level imports, those of what the kernels read, and what the
    form itself needs."""
    statements = [*ast.parse(text).body, *(n for line in carried for n in ast.parse(line).body)]
    imports: list[ast.stmt] = []
    for node in statements:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and ast.unparse(node) not in map(
            ast.unparse, imports
        ):
            imports.append(node)
    named = {(a.asname or a.name) for n in imports for a in getattr(n, "names", ())}
    kept = [ast.unparse(n) for n in imports]
    needed = (("suite", ("Choice", "Reproducer")), ("suite.tritonc", ("compile_kernel",)))
    for module, names in needed:
        missing = [n for n in names if n not in named]
        if missing:
            kept.append(f"from {module} import {', '.join(missing)}")
    return "\n".join(kept)


def launching_form(
    finding: Finding, found: Found, python: str, origin: str, finding_id: str
) -> str:
    """The finding's reproducer as a self-contained launching file the passes can edit."""
    from suite.report.launch_repro import launch_source

    text = Path(found.source["path"]).read_text()
    repro = found.repro
    source = launch_source(text, repro.id)
    if source is None:
        raise UsageError(
            f"cannot reduce {origin}: its launch declares no @REPRO.inputs (the reducer "
            "launches a kernel on fresh inputs and judges it with the reproducer's oracles)"
        )
    call = _captured_compile(finding, found, python, origin)
    support = ast.parse(source.body)
    # The kernels come from the capture (the passes edit them there); the launch keeps the rest.
    support.body = [n for n in support.body if not (isinstance(n, ast.FunctionDef) and is_jit(n))]
    # What the capture carries with the kernels (a helper made by assignment, its function)
    # is written there, once.
    carried = {name for name, _ in call.aliases} | {
        node.name
        for kernel in call.kernels
        for node in ast.parse(kernel).body
        if isinstance(node, ast.FunctionDef)
    }
    support.body = [n for n in support.body if not (_bound(n) and _bound(n) <= carried)]
    if not _through_launch_kernel(support, call.kernel_name, list(call.arg_names)):
        raise UsageError(
            f"cannot reduce {origin}: its launch code never launches {call.kernel_name}[grid](...)"
        )
    defined = {
        t.id
        for n in support.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    constants = form_constants(call.globals_)
    return scrub_secrets(
        template_environment()
        .get_template("reduced_launch_repro.py.j2")
        .render(
            title=repro.title or repro.id,
            origin=origin,
            finding_id=finding_id,
            triton_version=finding.environment.triton or "unknown",
            target=finding.target,
            signature=finding.signature,
            imports=_imports(text, call.imports),
            support=ast.unparse(support),
            repro_id=repro.id,
            family=repro.family,
            config=dict(finding.minimal_config),
            requires=tuple(repro.requires),
            label=repro.label,
            oracles=source.oracles,
            globals_=[(name, value) for name, value in constants if name not in defined],
            kernels=call.kernels,
            aliases=call.aliases,
            signature_dict=call.signature,
            constexprs={name: repr(value) for name, value in call.constexprs.items()},
            kernel_name=call.kernel_name,
            specialization=form_specialization(call.signature, call.attrs),
            inputs=source.inputs,
            launch=source.launch,
        )
    )


def standalone_form(
    finding: Finding, case: Path, title: str, python: str, finding_id: str
) -> tuple[str | None, str]:
    """``reduced.py``: the reduced kernel of ``case`` (the reducer's form, which the engine
    runs) as a standalone program, as ``repro report`` writes ``repro.py``: only the standard
    library, triton and (for a launch) torch, the suite's judgement carried verbatim; exit 1
    when the bug shows. ``(text, "")``, or ``(None, why not)``."""
    from suite.engine import runtime_failure
    from suite.report.launch_repro import LaunchNotCarried, launch_form
    from suite.report.standalone import capture_compile, repro_script

    probe = _probe(finding)
    source = {"path": str(case)}
    release = finding.environment.triton or "unknown"
    env = template_environment()
    if runtime_failure(finding.signature):
        try:
            text = launch_form(env, probe, source, finding.signature, title, python, release)
        except LaunchNotCarried as exc:
            return None, str(exc)
        if text is None:
            return None, "its launch declares no @REPRO.inputs"
        return scrub_secrets(text), ""
    call, why = capture_compile(probe, source, python)
    if call is None:
        return None, why
    made_by = f"`repro reduce` of finding {finding_id}"
    text = repro_script(env, call, finding.signature, title, made_by, release, finding.target)
    return scrub_secrets(text), ""
