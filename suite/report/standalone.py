"""The standalone ``repro.py``: the compile call a case makes, captured and rendered."""

from __future__ import annotations

import ast
import json
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment

from suite.children import Role, child_argv
from suite.engine import DEFAULTS, CaseResult, child_env, run_isolated
from suite.files import scratch_folder
from suite.standalone_kit import COMPILE_KIT, KIT_HEAD, hang_after_s
from suite.templating import py_assign


@dataclass
class CompileCall:
    """What the reproducer passed to ``triton.compile`` for the case."""

    kernel_name: str
    kernels: list[str]
    globals_: list[tuple[str, str]]
    signature: dict[str, str]
    constexprs: dict[str, object]
    arch: int
    options: dict[str, object]
    arg_names: list[str] = field(default_factory=list)
    # Imports of what the kernels read beyond triton and triton.language (``import math``).
    imports: list[str] = field(default_factory=list)
    # Names bound to a carried function after it is defined (``helper = _helper``).
    aliases: list[tuple[str, str]] = field(default_factory=list)
    # The specialization of the compile, by argument: [["tt.divisibility", 16], ...].
    attrs: dict[str, list[list[Any]]] = field(default_factory=dict)
    # The ``ASTSource`` form of the release that made the call (``judgement.source_form``).
    form: str = "constexprs"


class _Source:
    """Python source of a literal (``repr`` prints it bare inside dicts)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def capture_compile(
    result: CaseResult,
    source: dict[str, str] | None = None,
    python: str | None = None,
) -> tuple[CompileCall | None, str]:
    """The ``triton.compile`` call the reproducer makes for ``result``'s case, and ``""``;
    or ``None`` and why none was captured.

    The reproducer's compile function runs in a child interpreter (``python -m
    suite.children report-capture``, under ``python``: the release that failed), as
    every case does: it may print, crash or hang. There ``triton.compile`` is replaced by
    a recorder that raises as soon as it is called, so nothing is compiled.
    """
    call, why = _in_child(result, source, python)
    if call is None:
        return None, why
    return CompileCall(
        call["kernel_name"],
        call["kernels"],
        [(name, source) for name, source in call["globals"]],
        call["signature"],
        {name: _Source(source) for name, source in call["constexprs"].items()},
        call["arch"],
        {name: _Source(source) for name, source in call["options"].items()},
        call["arg_names"],
        call["imports"],
        [(name, source) for name, source in call["aliases"]],
        call.get("attrs", {}),
        call["form"],
    ), ""


def _in_child(
    result: CaseResult,
    source: dict[str, str] | None,
    python: str | None,
    launch: dict[str, list[str]] | None = None,
) -> tuple[dict[str, Any] | None, str]:
    """What the ``report-capture`` child answered for ``result``'s reproducer, or
    None and why it did not."""
    with scratch_folder("capture") as work:
        given, taken = Path(work) / "result.json", Path(work) / "call.json"
        request = {"result": result.to_json(), "source": source, "launch": launch}
        given.write_text(json.dumps(request, default=str))
        # The interpreter (TRITON_INTERPRET=1) compiles nothing: the call is captured without it.
        env = child_env({"TRITON_CACHE_DIR": str(Path(work) / "cache"), "TRITON_INTERPRET": "0"})
        argv = child_argv(python or sys.executable, Role.REPORT_CAPTURE)
        # The reproducer's code runs here: isolated like any case, in a scratch folder.
        bounds = DEFAULTS.bounds
        ended = run_isolated([*argv, str(given), str(taken)], env=env, cwd=work, bounds=bounds)
        if ended.timed_out:
            return None, f"capturing the compile call ran past {bounds.timeout_s:g} s"
        if not taken.is_file():
            tail = ended.stderr.text.strip().splitlines()[-1:] or [""]
            return None, f"capturing the compile call failed (exit {ended.returncode}): {tail[0]}"
        answer: dict[str, Any] = json.loads(taken.read_text())
    if "reason" in answer:
        return None, str(answer["reason"])
    return answer, ""


def capture_launch(
    result: CaseResult,
    source: dict[str, str] | None,
    python: str | None,
    names: list[str],
    provided: list[str],
    dropped: list[str],
) -> tuple[tuple[str, frozenset[str]] | None, str]:
    """What a launch script carries from the reproducer, found in a child as the compile
    call is: the text of the closure of its global ``names`` and the ``provided`` helpers
    it reads; or None and why (a name that cannot be carried, named)."""
    launch = {"names": names, "provided": provided, "dropped": dropped}
    answer, why = _in_child(result, source, python, launch)
    if answer is None:
        return None, why
    return (str(answer["body"]), frozenset(answer["provided"])), ""


#: The lines a maintainer reads at a glance (above the carried block): ``repro.py`` of a
#: compile, and of a launch.
REPRO_LINES = {"compile": 120, "launch": 150}


def glance_lines(script: str) -> int:
    """The lines of ``script`` a maintainer reads: those above the carried block."""
    return len(script.partition(KIT_HEAD)[0].rstrip().splitlines())


def repro_script(
    env: Environment,
    call: CompileCall,
    expected: str,
    title: str,
    made_by: str,
    triton_version: str,
    target: str,
) -> str:
    """``repro.py``: the imports, the kernel and its helpers, the call (the section
    ``call_template`` renders), the check, and the code of :mod:`suite.judgement` it runs
    (the engine's own) carried at the bottom. ``made_by``: what wrote it (``report r``)."""
    options_text = ", ".join(f"{k}={v}" for k, v in call.options.items()) or "default options"
    return env.get_template("repro.py.j2").render(
        title=title,
        made_by=made_by,
        target=target,
        arch=call.arch,
        triton_version=triton_version,
        options=call.options,
        options_text=options_text,
        signature={n: t for n, t in call.signature.items() if n not in call.constexprs},
        constexprs=call.constexprs,
        globals_=call.globals_,
        imports=call.imports,
        aliases=call.aliases,
        kernels=[compact_header(source) for source in call.kernels],
        kernel_name=call.kernel_name,
        attrs=_attrs_literal(call.attrs),
        call_template="repro_compile.py.j2",
        kit=COMPILE_KIT,
        launches=False,
        phase="compile",
        phase_ok="the kernel compiles",
        expected=expected,
        timeout_s=hang_after_s(),
    )


def over_glance(script: str, form: str) -> str:
    """Why ``script`` (a ``repro.py`` of ``form``) is too long to read at a glance ('' when
    it is not)."""
    lines, bound = glance_lines(script), REPRO_LINES[form]
    if lines <= bound:
        return ""
    return (
        f"repro.py is {lines} lines, over the {bound} read at a glance: "
        "`repro reduce` shrinks the kernel"
    )


def _attrs_literal(attrs: dict[str, list[list[Any]]]) -> Any:
    """``attrs`` as ``repro.py`` writes it: ``dict.fromkeys(names, props)`` when every
    argument has the same attributes (the usual ``tt.divisibility`` 16), else the dict."""
    values = list(attrs.values())
    if len(values) > 1 and all(value == values[0] for value in values):
        return _Source(f"dict.fromkeys({list(attrs)!r}, {values[0]!r})")
    return attrs


def compact_header(source: str, width: int = 100) -> str:
    """``source`` with its ``def`` line wrapped to ``width`` rather than one argument a line
    (as formatters write long ones); a header holding a comment is kept as written."""
    tree = ast.parse(textwrap.dedent(source))
    fn = tree.body[0] if tree.body else None
    if not isinstance(fn, ast.FunctionDef) or not fn.body:
        return source
    lines = source.splitlines()
    first, body = fn.lineno - 1, fn.body[0].lineno - 1
    while body > first + 1 and not lines[body - 1].strip().endswith(":"):
        body -= 1
    header, args = lines[first:body], fn.args
    if len(header) == 1 or any("#" in line for line in header):
        return source
    if args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg:
        return source
    defaults = [None] * (len(args.args) - len(args.defaults)) + list(args.defaults)
    items = [
        ast.unparse(arg) + (f"={ast.unparse(default)}" if default is not None else "")
        for arg, default in zip(args.args, defaults, strict=True)
    ]
    returns = f" -> {ast.unparse(fn.returns)}" if fn.returns else ""
    wrapped = [f"def {fn.name}({', '.join(items)}){returns}:"]
    if len(wrapped[0]) > width:
        rows: list[list[str]] = [[]]
        for item in items:
            if rows[-1] and len(", ".join([*rows[-1], item])) > width - 5:
                rows.append([])
            rows[-1].append(item)
        wrapped = [f"def {fn.name}(", *(f"    {', '.join(row)}," for row in rows), f"){returns}:"]
    return "\n".join([*lines[:first], *wrapped, *lines[body:]])


def compact_headers(text: str, width: int = 100) -> str:
    """``text`` (several definitions) with every top-level function's header wrapped by
    :func:`compact_header`."""
    lines = text.splitlines()
    nodes = [n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]
    for node in reversed(nodes):
        first = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
        end = node.end_lineno or node.lineno
        segment = "\n".join(lines[first:end])
        lines[first:end] = compact_header(segment, width).splitlines()
    return "\n".join(lines)


def minimal_snippet(call: CompileCall) -> str:
    """The kernel and the bare compile call, for the issue body: what a maintainer pastes.

    Written in the ``ASTSource`` form of the release that failed, as its API told the
    capture (``judgement.source_form``: ``constexprs=`` and attrs by ``(index,)`` from 3.3
    on, by name with an ``AttrsDescriptor`` in 3.2, by position before); ``repro.py``
    carries :func:`suite.judgement.ast_source` and chooses at run time instead.
    """
    index = {name: i for i, name in enumerate(call.arg_names)}
    signature = {n: t for n, t in call.signature.items() if n not in call.constexprs}
    hints = {index[n]: value for n, props in call.attrs.items() for _, value in props}
    kernel = call.kernel_name
    form = call.form
    imports = [
        "from triton.backends.compiler import GPUTarget",
        "from triton.compiler import ASTSource",
    ]
    if form == "constexprs":
        types = {n: signature.get(n, "constexpr") for n in call.arg_names}
        by_path = {(index[n],): props for n, props in call.attrs.items() if n in signature}
        call_lines = [
            py_assign(types, "signature"),
            py_assign(call.constexprs, "constexprs"),
            py_assign(by_path, "attrs"),
            f"src = ASTSource({kernel}, signature, constexprs=constexprs, attrs=attrs)",
        ]
    elif form == "attrs-descriptor":
        imports.append("from triton.backends.compiler import AttrsDescriptor")
        call_lines = [
            py_assign(signature, "signature"),
            py_assign(call.constexprs, "constants"),
            f"src = ASTSource({kernel}, signature, constants, AttrsDescriptor.from_hints({hints}))",
        ]
    else:
        imports.append("from triton.compiler.compiler import AttrsDescriptor")
        divisible = tuple(i for i, v in hints.items() if v == 16)
        ones = tuple(i for i, v in hints.items() if v == 1)
        call_lines = [
            py_assign({index[n]: t for n, t in signature.items()}, "signature"),
            py_assign({index[n]: v for n, v in call.constexprs.items()}, "constants"),
            f"attrs = AttrsDescriptor(divisible_by_16={divisible}, equal_to_1={ones})",
            f"src = ASTSource({kernel}, signature, constants, attrs)",
        ]
    target = f'GPUTarget("cuda", {call.arch}, 32)'
    lines = [
        "import triton",
        "import triton.language as tl",
        *imports,
        *call.imports,
        "",
        *(f"{name} = {value}" for name, value in call.globals_),
        "",
        *(f"{compact_header(source)}\n\n" for source in call.kernels),
        *(f"{name} = {value}" for name, value in call.aliases),
        *([""] if call.aliases else []),
        *call_lines,
        f"triton.compile(src, target={target}, options={call.options!r})",
    ]
    return "\n".join(lines).replace("\n\n\n\n", "\n\n\n") + "\n"


def foreign_imports(script: str) -> list[str]:
    """Top-level modules ``script`` imports beyond the standard library, triton and torch."""
    allowed = set(sys.stdlib_module_names) | {"triton", "torch"}
    found: set[str] = set()
    for node in ast.walk(ast.parse(script)):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return sorted(found - allowed)
