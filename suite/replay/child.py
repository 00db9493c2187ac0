"""The isolated side of ``repro replay``: ``python -m suite.children replay COMMAND ...``.

Standard library and triton only: it runs under whatever interpreter holds the Triton
release a reproducer came from. Reading reproducers and pipelines
(:mod:`suite.replay.pipeline`) and mapping passes to bindings (:mod:`suite.replay.bindings`)
live beside it, without triton.

Commands (what they write: :mod:`suite.replay.protocol`):

``probe OUT.jsonl [SKIP ...]``
    Introspect ``triton._C.libtriton``: every ``add_*`` function under ``passes.*`` and
    ``<backend>.passes.*``. Each one is called on a fresh pass manager with marked
    arguments of the types its docstring names, and ``get_pipeline_str()`` says which
    pass it adds and which option each argument sets. One JSON line per binding, flushed
    before the next, so that a binding that aborts costs only itself (the engine runs
    the probe again with it in SKIP).
``run IR PASS.json [OUT_IR]``
    Read the pass plan (exit 2 when it is malformed), parse ``IR`` (exit 3 when it does not
    parse or verify in this release), add the one pass the plan describes through its
    binding (exit 4 when this release has no such binding), run it (exit 1 when it fails;
    MLIR's diagnostics are on stderr) and write the IR after it to ``OUT_IR``. Exit 0 when
    the pass succeeds.
``types IR``
    Parse ``IR`` and print, as JSON, the result types of the operation on each line and
    the number of operations (the reducer's type table).
"""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from typing import Any

from suite.engine import Unreadable
from suite.replay.bindings import Binding, BindingParam, doc_params, param_kind
from suite.replay.pipeline import PassSpec, parse_pipeline
from suite.replay.protocol import (
    PassOk,
    PassPlan,
    PipelineSaid,
    Probed,
    ProbeDone,
    Probing,
    ReplayMessage,
    TypesSaid,
    Version,
)

EXIT_OK = 0
EXIT_PASS_FAILED = 1
EXIT_USAGE = 2
EXIT_UNPARSABLE = 3
EXIT_NO_BINDING = 4

# Backends whose bindings carry passes (``triton._C.libtriton.<backend>.passes``).
BACKENDS = ("nvidia", "amd")


# ---------------------------------------------------------------------------------------------


def _libtriton() -> Any:
    from triton._C import libtriton

    return libtriton


def _context(lt: Any) -> Any:
    """A context with every dialect loaded, as the compiler loads them."""
    ctx = lt.ir.context()
    lt.ir.load_dialects(ctx)
    for backend in BACKENDS:
        module = getattr(lt, backend, None)
        if module is not None and hasattr(module, "load_dialects"):
            module.load_dialects(ctx)
    return ctx


def _binding_roots(lt: Any) -> list[tuple[str, Any]]:
    roots = [("passes", getattr(lt, "passes", None))]
    for backend in BACKENDS:
        module = getattr(lt, backend, None)
        roots.append((f"{backend}.passes", getattr(module, "passes", None)))
    return [(name, root) for name, root in roots if root is not None]


def iter_bindings(lt: Any) -> list[tuple[str, Any]]:
    found = []
    for prefix, root in _binding_roots(lt):
        for group in sorted(n for n in dir(root) if not n.startswith("_")):
            module = getattr(root, group)
            for name in sorted(n for n in dir(module) if n.startswith("add_")):
                function = getattr(module, name)
                if callable(function):
                    found.append((f"{prefix}.{group}.{name}", function))
    return found


def resolve_binding(lt: Any, path: str) -> Any:
    target = lt
    for part in path.split("."):
        target = getattr(target, part, None)
        if target is None:
            return None
    return target


def _find_class(lt: Any, type_text: str) -> str | None:
    """``mlir::triton::nvidia_gpu::ClusterInfo`` -> ``nvidia.ClusterInfo`` when that class
    exists in the bindings and builds with no arguments."""
    name = re.split(r"::|\.", type_text.strip())[-1]
    for prefix in ("", *BACKENDS, "ir"):
        holder = getattr(lt, prefix, None) if prefix else lt
        cls = getattr(holder, name, None) if holder is not None else None
        if isinstance(cls, type):
            try:
                cls()
            except Exception:
                return None
            return f"{prefix}.{name}" if prefix else name
    return None


def _build_object(lt: Any, path: str) -> Any:
    cls = resolve_binding(lt, path)
    if cls is None:
        raise LookupError(path)
    return cls()


def _added(lt: Any, ctx: Any, function: Any, args: list[Any]) -> list[PassSpec]:
    pm = lt.ir.pass_manager(ctx)
    function(pm, *args)
    _, passes = parse_pipeline(pm.get_pipeline_str())
    return passes


def probe_binding(lt: Any, ctx: Any, path: str, function: Any) -> Binding:
    """What one binding adds: its pass, that pass's printed options, and which option each
    argument sets."""
    types = doc_params(function.__doc__)
    if types is None:
        return Binding(path, error="no signature in the docstring")
    params: list[BindingParam] = []
    marks: list[Any] = []
    for index, type_text in enumerate(types):
        param = BindingParam(param_kind(type_text), type_text)
        if param.kind == "object":
            cls = _find_class(lt, type_text)
            if cls is None:
                error = f"argument {index + 1} has a type the probe cannot build: {type_text}"
                return Binding(path, params=(*params, param), error=error)
            param = replace(param, cls=cls)
        marks.append(_mark(lt, param, index))
        params.append(param)
    if not hasattr(lt.ir.pass_manager, "get_pipeline_str"):
        error = "this release's pass manager has no get_pipeline_str"
        return Binding(path, params=tuple(params), error=error)
    try:
        added = _added(lt, ctx, function, marks)
    except Exception as exc:
        return Binding(path, params=tuple(params), error=f"{type(exc).__name__}: {exc}")
    if len(added) != 1:
        error = f"adds {len(added)} passes: {', '.join(p.key for p in added)}"
        return Binding(path, params=tuple(params), error=error)
    (spec,) = added
    options = [_option_of(lt, ctx, function, marks, spec, i, p.kind) for i, p in enumerate(params)]
    return Binding(
        path,
        pass_key=spec.key,
        params=tuple(replace(p, option=o) for p, o in zip(params, options, strict=True)),
        options=spec.options,
        text=spec.text,
    )


def _mark(lt: Any, param: BindingParam, index: int) -> Any:
    """A value for argument ``index`` that the printed pipeline shows where it went."""
    if param.kind == "object":
        return _build_object(lt, str(param.cls))
    if param.kind == "int":
        return 1000 + index
    if param.kind == "float":
        return 1000.25 + index
    if param.kind == "str":
        return f"probe{index}"
    return False


def _option_of(
    lt: Any, ctx: Any, function: Any, marks: list[Any], spec: PassSpec, index: int, kind: str
) -> str | None:
    """The one option argument ``index`` sets: the option printed with its mark, or (a bool)
    the one option that changes when it flips; None when not exactly one (or an object)."""
    if kind in ("int", "float", "str"):
        mark = str(marks[index])
        hits = [k for k, v in spec.options.items() if v.strip('"') == mark]
        return hits[0] if len(hits) == 1 else None
    if kind == "bool":
        flipped = list(marks)
        flipped[index] = True
        try:
            (other,) = _added(lt, ctx, function, flipped)
        except Exception:
            return None
        changed = [k for k in spec.options if other.options.get(k) != spec.options[k]]
        return changed[0] if len(changed) == 1 else None
    return None


def cmd_probe(out_path: str, skip: list[str]) -> int:
    lt = _libtriton()
    ctx = _context(lt)
    import triton

    with open(out_path, "a", encoding="utf-8") as out:

        def say(message: ReplayMessage) -> None:
            out.write(message.line())
            out.flush()

        say(Version(triton.__version__))
        for path, function in iter_bindings(lt):
            if path in skip:
                continue
            say(Probing(path))
            say(Probed(probe_binding(lt, ctx, path, function).to_json()))
        say(ProbeDone())
    return EXIT_OK


def _parsed(path: str) -> tuple[Any, Any, Any] | None:
    """libtriton, a context and the module parsed from ``path``; None (said on stderr) when
    the IR does not parse or verify in this release."""
    lt = _libtriton()
    ctx = _context(lt)
    try:
        module = lt.ir.parse_mlir_module(path, ctx)
    except Exception as exc:
        print(f"replay_child: {path} does not parse: {exc}", file=sys.stderr)
        return None
    module.context = ctx
    return lt, ctx, module


def _run_pm(pm: Any, module: Any) -> None:
    """``pm.run(module)``; newer releases want a name for the run as well."""
    doc = (getattr(pm.run, "__doc__", "") or "").splitlines()[0:1]
    if doc and re.search(r"arg1: str|, str", doc[0]):
        pm.run(module, "replay")
    else:
        pm.run(module)


def _module_text(module: Any) -> str:
    if hasattr(module, "str_nodebug"):
        return str(module.str_nodebug())
    return str(module.str())


def cmd_run(ir_path: str, pass_json: str, out_path: str | None) -> int:
    with open(pass_json, encoding="utf-8") as handle:
        text = handle.read()
    try:
        plan = PassPlan.from_json(text)
    except Unreadable as exc:
        print(f"replay_child: refused {pass_json}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    parsed = _parsed(ir_path)
    if parsed is None:
        return EXIT_UNPARSABLE
    lt, ctx, module = parsed
    function = resolve_binding(lt, plan.binding)
    if function is None:
        print(f"replay_child: no binding {plan.binding} in this release", file=sys.stderr)
        return EXIT_NO_BINDING
    args = []
    for arg in plan.binding_args:
        if arg.kind == "object":
            try:
                args.append(_build_object(lt, str(arg.cls)))
            except Exception as exc:
                print(f"replay_child: cannot build {arg.cls}: {exc}", file=sys.stderr)
                return EXIT_NO_BINDING
        else:
            args.append(arg.value)
    pm = lt.ir.pass_manager(ctx)
    try:
        function(pm, *args)
    except TypeError as exc:
        print(f"replay_child: {plan.binding} rejects {args}: {exc}", file=sys.stderr)
        return EXIT_NO_BINDING
    if hasattr(pm, "get_pipeline_str"):
        print(PipelineSaid(pm.get_pipeline_str()).line(), end="", flush=True)
    print(f"replay_child: running {plan.pass_text or plan.binding}", file=sys.stderr)
    sys.stderr.flush()
    try:
        _run_pm(pm, module)
    except Exception as exc:
        print(f"replay_child: pass failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_PASS_FAILED
    if out_path:
        with open(out_path, "w", encoding="utf-8") as out:
            out.write(_module_text(module))
    print(PassOk().line(), end="", flush=True)
    return EXIT_OK


def cmd_types(ir_path: str) -> int:
    parsed = _parsed(ir_path)
    if parsed is None:
        return EXIT_UNPARSABLE
    _, _, module = parsed
    lines: dict[int, list[str]] = {}
    count = [0]

    def visit(op: Any) -> None:
        count[0] += 1
        results = op.get_num_results()
        if not results:
            return
        loc = str(op.get_result(0).get_loc()) if hasattr(op.get_result(0), "get_loc") else ""
        found = re.search(r":(\d+):\d+", loc)
        if found:
            types = [str(op.get_result(i).get_type()) for i in range(results)]
            lines[int(found.group(1))] = types

    module.walk(visit)
    print(TypesSaid(count[0], {str(k): v for k, v in lines.items()}).line(), end="")
    return EXIT_OK


def main(argv: list[str]) -> int:
    """The ``replay`` child: ``COMMAND ARGS...``."""
    if len(argv) >= 2 and argv[0] == "probe":
        return cmd_probe(argv[1], argv[2:])
    if len(argv) in (3, 4) and argv[0] == "run":
        return cmd_run(argv[1], argv[2], argv[3] if len(argv) == 4 else None)
    if len(argv) == 2 and argv[0] == "types":
        return cmd_types(argv[1])
    print(__doc__, file=sys.stderr)
    return EXIT_USAGE
