"""The isolated side of ``repro replay``: ``python -m suite.replay.child COMMAND ...``.

Standard library and triton only: it runs under whatever interpreter holds the Triton
release a reproducer came from. The engine (:mod:`suite.replay.replay`) imports the pure
functions below (reproducer and pipeline parsing, the pass-to-binding mapping) without
importing triton.

Commands:

``probe OUT.jsonl [SKIP ...]``
    Introspect ``triton._C.libtriton``: every ``add_*`` function under ``passes.*`` and
    ``<backend>.passes.*``. Each one is called on a fresh pass manager with marked
    arguments of the types its docstring names, and ``get_pipeline_str()`` says which
    pass it adds and which option each argument sets. One JSON line per binding, flushed
    before the next, so that a binding that aborts costs only itself (the engine runs
    the probe again with it in SKIP).
``run IR PASS.json [OUT_IR]``
    Parse ``IR`` (exit 3 when it does not parse or verify in this release), add the one
    pass described in ``PASS.json`` through its binding (exit 4 when this release has no
    such binding), run it (exit 1 when it fails; MLIR's diagnostics are on stderr) and
    write the IR after it to ``OUT_IR``. Exit 0 when the pass succeeds.
``types IR``
    Parse ``IR`` and print, as JSON, the result types of the operation on each line and
    the number of operations (the reducer's type table).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any

EXIT_OK = 0
EXIT_PASS_FAILED = 1
EXIT_USAGE = 2
EXIT_UNPARSABLE = 3
EXIT_NO_BINDING = 4

# Backends whose bindings carry passes (``triton._C.libtriton.<backend>.passes``).
BACKENDS = ("nvidia", "amd")

# Where a pass name cannot be derived from the binding's name and the binding cannot
# be probed (a release without ``get_pipeline_str``, or an argument type that cannot be
# built). The probe makes these unnecessary whenever it works.
ALIASES = {
    "canonicalize": "add_canonicalizer",
    "inline": "add_inliner",
    "loop-invariant-code-motion": "add_licm",
    "tritongpu-F32DotTC": "add_f32_dot_tc",
    "enable-line-info": "add_di_scope",
    "allocate-shared-memory": "add_allocate_shared_memory",
    "tritongpu-global-scratch-memory-allocation": "add_allocate_global_scratch_memory",
    "tritongpu-automatic-warp-specialization": "add_warp_specialize",
    "nvgpu-warp-specialization": "add_hopper_warpspec",
    "triton-nvidia-mma-lowering": "add_lower_mma",
    "convert-triton-gpu-to-llvm": "add_to_llvmir",
    "convert-triton-to-tritongpu": "add_convert_to_ttgpuir",
    "convert-index-to-llvm": "add_index_to_llvmir",
    "convert-arith-to-llvm": "add_arith_to_llvmir",
    "convert-nv-gpu-to-llvm": "add_nvgpu_to_llvm",
    "decompose-unsupported-nvidia-conversions": "add_decompose_unsupported_conversions",
    "triton-gpu-taskid-propagate": "add_taskid_propagate",
    "tritongpu-warp-spec-task-partition": "add_ws_task_partition",
    "tritongpu-warp-spec-data-partition": "add_ws_data_partition",
    "tritongpu-warp-spec-code-partition": "add_ws_code_partition",
    "tritongpu-warp-spec-lowering": "add_ws_lowering",
    "triton-tensor-memory-allocation": "add_allocate_tensor_memory",
}
# The pass options a multi-argument binding takes, in its argument order, for releases
# whose pass manager cannot print its pipeline (3.0-3.2: no ``get_pipeline_str``), where
# the probe cannot learn it. The order is the one those releases' own compiler.py uses.
POSITIONAL_OPTIONS = {
    "convert-triton-to-tritongpu": ("target", "num-warps", "threads-per-warp", "num-ctas"),
    "convert-triton-gpu-to-llvm": ("compute-capability", "ptx-version"),
    "tritongpu-warp-spec-code-partition": (
        "num-buffers",
        "num-consumer-groups",
        "producer-reg-dec",
        "consumer-reg-inc",
    ),
}
# Prefixes a pass name carries that its binding's name leaves out.
NAME_PREFIXES = (
    "tritonamdgpu",
    "tritonnvidiagpu",
    "tritonnvidia",
    "tritongpu",
    "tritoninstrument",
    "triton",
    "nvgpu",
    "nvws",
    "convert",
    "gluon",
)

#: The anchor of an op-agnostic pass manager in a textual pipeline.
OP_AGNOSTIC = "any"
REPRODUCER_BLOCK = re.compile(r"\{-#.*?#-\}", re.S)
PIPELINE_FIELD = re.compile(r'pipeline:\s*"((?:[^"\\]|\\.)*)"')


class PipelineError(ValueError):
    """A pipeline string this tool cannot read."""


# ---------------------------------------------------------------------------------------------
# Reproducer files and pipeline strings (pure; the engine imports these).
# ---------------------------------------------------------------------------------------------


def split_reproducer(text: str) -> tuple[str, str | None]:
    """The IR of an MLIR reproducer file without its ``{-# ... #-}`` block, and its pipeline."""
    pipeline = None
    for block in REPRODUCER_BLOCK.findall(text):
        if "mlir_reproducer" in block:
            found = PIPELINE_FIELD.search(block)
            if found:
                pipeline = found.group(1).replace('\\"', '"')
    ir = REPRODUCER_BLOCK.sub("", text).rstrip() + "\n"
    return ir, pipeline


def _split_top(text: str, separators: str) -> list[str]:
    """Split at separators that are not inside (), {}, [], <> or quotes."""
    parts: list[str] = []
    depth = 0
    quote = False
    current: list[str] = []
    for char in text:
        if char == '"':
            quote = not quote
        elif not quote and char in "({[<":
            depth += 1
        elif not quote and char in ")}]>":
            depth -= 1
        if not quote and depth == 0 and char in separators:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    if depth != 0 or quote:
        raise PipelineError(f"unbalanced brackets or quotes in {text!r}")
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


@dataclass
class PassSpec:
    """One element of a textual pass pipeline: ``name{opt=value ...}``, or a nested
    pipeline ``anchor(...)`` (``nested`` holds its elements)."""

    name: str
    options: dict[str, str] = field(default_factory=dict)
    text: str = ""
    nested: list[PassSpec] | None = None

    @property
    def key(self) -> str:
        if self.nested is None:
            return self.name
        return f"{self.name}({','.join(p.key for p in self.nested)})"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "options": self.options,
            "text": self.text,
            "nested": [p.to_json() for p in self.nested] if self.nested is not None else None,
        }

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> PassSpec:
        nested = record.get("nested")
        return cls(
            record["name"],
            dict(record.get("options") or {}),
            record.get("text", ""),
            [cls.from_json(p) for p in nested] if nested is not None else None,
        )


def parse_options(text: str) -> dict[str, str]:
    """``a=1 b={x y} c="q r"`` as a dict (a bare name is ``true``)."""
    options = {}
    for item in _split_top(text, " \t\n"):
        name, eq, value = item.partition("=")
        options[name.strip()] = value.strip() if eq else "true"
    return options


def parse_element(text: str) -> PassSpec:
    text = text.strip()
    match = re.fullmatch(r"([\w.$-]+)\s*(.*)", text, re.S)
    if not match:
        raise PipelineError(f"cannot read pipeline element {text!r}")
    name, rest = match.group(1), match.group(2).strip()
    if not rest:
        return PassSpec(name, {}, text)
    if rest.startswith("{") and rest.endswith("}"):
        return PassSpec(name, parse_options(rest[1:-1]), text)
    if rest.startswith("(") and rest.endswith(")"):
        inner = [parse_element(part) for part in _split_top(rest[1:-1], ",")]
        return PassSpec(name, {}, text, inner)
    raise PipelineError(f"cannot read pipeline element {text!r}")


def parse_pipeline(text: str) -> tuple[str, list[PassSpec]]:
    """``builtin.module(a{x=1},b)`` (or ``any(...)``) as its anchor and its passes.

    Triton 3.0-3.2 ran an op-agnostic pass manager on the module, which MLIR's crash
    reproducer records as ``builtin.module(any(a,b))``: the passes ran on the module
    itself, as each binding adds them, so that one ``any`` group is unwrapped.
    """
    outer = parse_element(text)
    if outer.nested is None:
        raise PipelineError(f"not a pass pipeline (no anchor(...)): {text!r}")
    passes = outer.nested
    if len(passes) == 1 and passes[0].name == OP_AGNOSTIC and passes[0].nested is not None:
        passes = passes[0].nested
    return outer.name, passes


def pass_flag(spec: PassSpec, options: dict[str, str] | None = None) -> str:
    """The ``triton-opt`` flag for one pass: ``-name`` or ``-name=a=1`` or ``-name="a=1 b=2"``."""
    options = spec.options if options is None else options
    if not options:
        return f"-{spec.name}"
    joined = " ".join(f"{k}={v}" for k, v in options.items())
    return f"-{spec.name}={joined}" if len(options) == 1 else f'-{spec.name}="{joined}"'


def normalize_name(name: str) -> str:
    """A pass name, or a binding's (``add_`` dropped), reduced to lower-case letters and
    digits without the prefixes pass names carry: ``tritongpu-assign-latencies`` and
    ``add_assign_latencies`` both give ``assignlatencies``."""
    name = name[4:] if name.startswith("add_") else name
    flat = re.sub(r"[^a-z0-9]", "", name.lower())
    for prefix in NAME_PREFIXES:
        if flat.startswith(prefix) and len(flat) > len(prefix):
            flat = flat[len(prefix) :]
            break
    return flat


# ---------------------------------------------------------------------------------------------
# Mapping recorded passes to bindings (pure; works on the probe's table).
# ---------------------------------------------------------------------------------------------

INT_TYPES = ("int", "typing.SupportsInt", "SupportsInt")
FLOAT_TYPES = ("float", "typing.SupportsFloat", "SupportsFloat")


def param_kind(type_text: str) -> str:
    t = type_text.strip()
    if t in INT_TYPES:
        return "int"
    if t in FLOAT_TYPES:
        return "float"
    if t == "bool":
        return "bool"
    if t == "str":
        return "str"
    return "object"


def doc_params(doc: str | None) -> list[str] | None:
    """The argument types after the pass manager, from a pybind11 or nanobind signature line."""
    line = (doc or "").strip().splitlines()[0] if (doc or "").strip() else ""
    match = re.match(r"\w+\((.*)\)\s*->", line)
    if not match:
        return None
    params = [p for p in _split_top(match.group(1), ",") if p not in ("/", "*")]
    types = []
    for param in params[1:]:
        _, colon, kind = param.partition(":")
        types.append(kind.split("=")[0].strip() if colon else "")
    return types


@dataclass
class Mapped:
    """A recorded pass and the binding call that adds it."""

    spec: PassSpec
    binding: str
    args: list[dict[str, Any]]
    notes: list[str]
    how: str

    @property
    def call(self) -> str:
        shown = []
        for arg in self.args:
            if arg["kind"] == "object":
                shown.append(f"{arg['class']}()")
            else:
                shown.append(repr(arg["value"]))
        return f"{self.binding}(pm{''.join(', ' + s for s in shown)})"

    def to_json(self) -> dict[str, Any]:
        return {
            "pass": self.spec.to_json(),
            "binding": self.binding,
            "args": self.args,
            "call": self.call,
            "notes": self.notes,
            "how": self.how,
        }


def _convert(kind: str, value: str) -> Any:
    value = value.strip().strip('"')
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "bool":
        if value.lower() in ("true", "1"):
            return True
        if value.lower() in ("false", "0"):
            return False
        raise ValueError(f"not a bool: {value!r}")
    return value


def _default_arg(kind: str) -> Any:
    return {"int": 0, "float": 0.0, "bool": False, "str": ""}[kind]


def _args_for(
    spec: PassSpec, entry: dict[str, Any]
) -> tuple[list[dict[str, Any]], list[str]] | str:
    """The arguments that make ``entry``'s binding add ``spec``; a reason string when none do."""
    args: list[dict[str, Any]] = []
    notes: list[str] = []
    set_by_args = set()
    for index, param in enumerate(entry["params"]):
        kind, option = param["kind"], param.get("option")
        if kind == "object":
            args.append({"kind": "object", "class": param["class"]})
            notes.append(
                f"argument {index + 1} is a default {param['class']}() (not a pass option; "
                "the pipeline does not record it)"
            )
            continue
        if option is None:
            value = _default_arg(kind)
            args.append({"kind": kind, "value": value})
            notes.append(f"argument {index + 1} ({kind}) sets no pass option; passed {value!r}")
            continue
        set_by_args.add(option)
        if option not in spec.options:
            return f"the pipeline gives no value for option {option!r} of {spec.name}"
        try:
            args.append({"kind": kind, "value": _convert(kind, spec.options[option])})
        except ValueError:
            return f"option {option}={spec.options[option]} of {spec.name} is not a {kind}"
    fixed = {k: v for k, v in entry["options"].items() if k not in set_by_args}
    for name, value in spec.options.items():
        if name in set_by_args:
            continue
        if name not in fixed:
            notes.append(f"option {name}={value} is not one this release's pass prints")
        elif _same_value(fixed[name], value) is False:
            notes.append(
                f"option {name}={value} was recorded; the binding always sets {name}={fixed[name]}"
            )
    return args, notes


def _same_value(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def expand_nested(passes: list[PassSpec]) -> list[PassSpec]:
    """``tt.func(a, b)`` as ``tt.func(a)``, ``tt.func(b)``: MLIR prints adjacent nested passes
    of one anchor as one group, while each binding adds one of them."""
    flat: list[PassSpec] = []
    for spec in passes:
        if spec.nested is not None and len(spec.nested) > 1:
            for inner in spec.nested:
                flat.append(PassSpec(spec.name, {}, f"{spec.name}({inner.text})", [inner]))
        else:
            flat.append(spec)
    return flat


def map_passes(
    passes: list[PassSpec], table: list[dict[str, Any]]
) -> tuple[list[Mapped], list[str]]:
    """Each recorded pass's binding call, from the probe's table; and the passes with none.

    First the binding whose probe printed the same pass (exact); then, for bindings the
    probe could not run, a name match after normalization or through :data:`ALIASES`.
    """
    by_pass: dict[str, list[dict[str, Any]]] = {}
    unprobed = []
    for entry in table:
        if entry.get("pass"):
            by_pass.setdefault(entry["pass"], []).append(entry)
        elif entry.get("params") is not None:
            unprobed.append(entry)
    mapped: list[Mapped] = []
    missing: list[str] = []
    for spec in expand_nested(passes):
        reasons = []
        done = False
        for entry in by_pass.get(spec.key, []):
            result = _args_for(spec, entry)
            if isinstance(result, str):
                reasons.append(f"{entry['path']}: {result}")
                continue
            args, notes = result
            mapped.append(Mapped(spec, entry["path"], args, notes, "probe"))
            done = True
            break
        if not done and spec.nested is None:
            fallback = _by_name(spec, unprobed)
            if isinstance(fallback, Mapped):
                mapped.append(fallback)
                done = True
            elif fallback:
                reasons.append(fallback)
        if not done:
            why = f" ({'; '.join(reasons)})" if reasons else ""
            missing.append(f"{spec.text or spec.key}{why}")
    return mapped, missing


def _by_name(spec: PassSpec, unprobed: list[dict[str, Any]]) -> Mapped | str | None:
    """A binding for ``spec`` by name, for bindings the probe could not run."""
    wanted = ALIASES.get(spec.name)
    target = normalize_name(spec.name)
    for entry in unprobed:
        function = entry["path"].rsplit(".", 1)[-1]
        if function != wanted and normalize_name(function) != target:
            continue
        kinds = [p["kind"] for p in entry["params"]]
        order = POSITIONAL_OPTIONS.get(spec.name)
        if order is None:
            # Without a known order, only one option can go to one argument.
            order = tuple(spec.options) if len(spec.options) == 1 else ()
        values = sum(kind != "object" for kind in kinds)
        if values > len(order) or not set(order[:values]) <= set(spec.options):
            return f"{entry['path']} matches by name but its arguments {kinds} cannot be matched"
        args: list[dict[str, Any]] = []
        notes = ["matched by name (not probed)"]
        options = iter(order)
        for param in entry["params"]:
            if param["kind"] == "object":
                args.append({"kind": "object", "class": param["class"]})
                notes.append(f"a default {param['class']}() (not a pass option)")
                continue
            value = spec.options[next(options)]
            try:
                args.append({"kind": param["kind"], "value": _convert(param["kind"], value)})
            except ValueError:
                return f"{entry['path']}: option {value!r} is not a {param['kind']}"
        unused = [name for name in spec.options if name not in order[:values]]
        notes += [
            f"option {name}={spec.options[name]} is not set by the binding" for name in unused
        ]
        return Mapped(spec, entry["path"], args, notes, "name")
    return None


# ---------------------------------------------------------------------------------------------
# The triton side.
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


def probe_binding(lt: Any, ctx: Any, path: str, function: Any) -> dict[str, Any]:
    """What one binding adds: its pass, that pass's printed options, and which option each
    argument sets."""
    entry: dict[str, Any] = {"path": path, "pass": None, "params": None, "options": {}}
    types = doc_params(function.__doc__)
    if types is None:
        entry["error"] = "no signature in the docstring"
        return entry
    params: list[dict[str, Any]] = []
    marks: list[Any] = []
    for index, type_text in enumerate(types):
        kind = param_kind(type_text)
        param: dict[str, Any] = {"kind": kind, "type": type_text, "option": None}
        if kind == "object":
            cls = _find_class(lt, type_text)
            if cls is None:
                entry["params"] = [*params, param]
                entry["error"] = (
                    f"argument {index + 1} has a type the probe cannot build: {type_text}"
                )
                return entry
            param["class"] = cls
            marks.append(_build_object(lt, cls))
        elif kind == "int":
            marks.append(1000 + index)
        elif kind == "float":
            marks.append(1000.25 + index)
        elif kind == "str":
            marks.append(f"probe{index}")
        else:
            marks.append(False)
        params.append(param)
    entry["params"] = params
    if not hasattr(lt.ir.pass_manager, "get_pipeline_str"):
        entry["error"] = "this release's pass manager has no get_pipeline_str"
        return entry
    try:
        added = _added(lt, ctx, function, marks)
    except Exception as exc:
        entry["error"] = f"{type(exc).__name__}: {exc}"
        return entry
    if len(added) != 1:
        entry["error"] = f"adds {len(added)} passes: {', '.join(p.key for p in added)}"
        return entry
    (spec,) = added
    entry["pass"] = spec.key
    entry["options"] = spec.options
    entry["text"] = spec.text
    for index, param in enumerate(params):
        if param["kind"] in ("int", "float", "str"):
            mark = str(marks[index])
            hits = [k for k, v in spec.options.items() if v.strip('"') == mark]
            param["option"] = hits[0] if len(hits) == 1 else None
        elif param["kind"] == "bool":
            flipped = list(marks)
            flipped[index] = True
            try:
                (other,) = _added(lt, ctx, function, flipped)
            except Exception:
                continue
            changed = [k for k in spec.options if other.options.get(k) != spec.options[k]]
            param["option"] = changed[0] if len(changed) == 1 else None
    return entry


def cmd_probe(out_path: str, skip: list[str]) -> int:
    lt = _libtriton()
    ctx = _context(lt)
    import triton

    with open(out_path, "a", encoding="utf-8") as out:
        out.write(json.dumps({"triton": triton.__version__}) + "\n")
        out.flush()
        for path, function in iter_bindings(lt):
            if path in skip:
                continue
            out.write(json.dumps({"probing": path}) + "\n")
            out.flush()
            out.write(json.dumps(probe_binding(lt, ctx, path, function)) + "\n")
            out.flush()
        out.write(json.dumps({"done": True}) + "\n")
    return EXIT_OK


def _parse(lt: Any, ctx: Any, path: str) -> Any:
    module = lt.ir.parse_mlir_module(path, ctx)
    module.context = ctx
    return module


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
        plan = json.load(handle)
    lt = _libtriton()
    ctx = _context(lt)
    try:
        module = _parse(lt, ctx, ir_path)
    except Exception as exc:
        print(f"replay_child: {ir_path} does not parse: {exc}", file=sys.stderr)
        return EXIT_UNPARSABLE
    function = resolve_binding(lt, plan["binding"])
    if function is None:
        print(f"replay_child: no binding {plan['binding']} in this release", file=sys.stderr)
        return EXIT_NO_BINDING
    args = []
    for arg in plan["args"]:
        if arg["kind"] == "object":
            try:
                args.append(_build_object(lt, arg["class"]))
            except Exception as exc:
                print(f"replay_child: cannot build {arg['class']}: {exc}", file=sys.stderr)
                return EXIT_NO_BINDING
        else:
            args.append(arg["value"])
    pm = lt.ir.pass_manager(ctx)
    try:
        function(pm, *args)
    except TypeError as exc:
        print(f"replay_child: {plan['binding']} rejects {args}: {exc}", file=sys.stderr)
        return EXIT_NO_BINDING
    if hasattr(pm, "get_pipeline_str"):
        print(json.dumps({"pipeline": pm.get_pipeline_str()}), flush=True)
    print(f"replay_child: running {plan.get('pass', plan['binding'])}", file=sys.stderr)
    sys.stderr.flush()
    try:
        _run_pm(pm, module)
    except Exception as exc:
        print(f"replay_child: pass failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_PASS_FAILED
    if out_path:
        with open(out_path, "w", encoding="utf-8") as out:
            out.write(_module_text(module))
    print(json.dumps({"ok": True}), flush=True)
    return EXIT_OK


def cmd_types(ir_path: str) -> int:
    lt = _libtriton()
    ctx = _context(lt)
    try:
        module = _parse(lt, ctx, ir_path)
    except Exception as exc:
        print(f"replay_child: {ir_path} does not parse: {exc}", file=sys.stderr)
        return EXIT_UNPARSABLE
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
    print(json.dumps({"ops": count[0], "results": {str(k): v for k, v in lines.items()}}))
    return EXIT_OK


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[1] == "probe":
        return cmd_probe(argv[2], argv[3:])
    if len(argv) in (4, 5) and argv[1] == "run":
        return cmd_run(argv[2], argv[3], argv[4] if len(argv) == 5 else None)
    if len(argv) == 3 and argv[1] == "types":
        return cmd_types(argv[2])
    print(__doc__, file=sys.stderr)
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main(sys.argv))
