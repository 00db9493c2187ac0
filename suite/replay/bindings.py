"""Which binding of a release adds each recorded pass: the probe's table, read without triton.

The replay child probes every ``add_*`` binding of the release it runs under
(:func:`suite.replay.child.probe_binding`); :func:`map_passes` matches each recorded pass
to the binding whose probe printed the same pass, with the arguments that set its
options, or, for bindings the probe could not run, by name. Standard library only, like
:mod:`suite.replay.pipeline`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from suite.replay.pipeline import PassSpec, normalize_name, split_top

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

# ---------------------------------------------------------------------------------------------

INT_TYPES = ("int", "typing.SupportsInt", "SupportsInt")
FLOAT_TYPES = ("float", "typing.SupportsFloat", "SupportsFloat")
#: What a binding also takes beside an int or a float: 3.7.0-3.8.0 write an ``int``
#: argument as ``typing.SupportsInt | typing.SupportsIndex``.
INDEX_TYPES = ("typing.SupportsIndex", "SupportsIndex")


def param_kind(type_text: str) -> str:
    t = type_text.strip()
    union = {part.strip() for part in t.split("|")} - set(INDEX_TYPES)
    if union and union <= set(INT_TYPES):
        return "int"
    if union and union <= set(FLOAT_TYPES):
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
    params = [p for p in split_top(match.group(1), ",") if p not in ("/", "*")]
    types = []
    for param in params[1:]:
        _, colon, kind = param.partition(":")
        types.append(kind.split("=")[0].strip() if colon else "")
    return types


@dataclass(frozen=True)
class BindingParam:
    """One argument of a binding after the pass manager, as the probe saw it."""

    kind: str  # int | float | bool | str | object
    type: str = ""  # as the binding's docstring names it
    option: str | None = None  # the pass option it sets (None: none, or not known)
    cls: str | None = None  # the class the probe builds for an object argument

    def to_json(self) -> dict[str, object]:
        record: dict[str, object] = {"kind": self.kind, "type": self.type, "option": self.option}
        if self.cls is not None:
            record["class"] = self.cls
        return record

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> BindingParam:
        return cls(
            str(record["kind"]), str(record.get("type", "")), record.get("option"),
            record.get("class"),
        )  # fmt: skip


@dataclass(frozen=True)
class Binding:
    """What the probe learned of one ``add_*`` binding: the pass it adds (with the options it
    prints) and which option each argument sets; or why it could not tell."""

    path: str
    pass_key: str | None = None  # the pass it adds, as the pipeline prints it
    params: tuple[BindingParam, ...] | None = None  # None: its signature is unknown
    options: Mapping[str, str] = field(default_factory=dict)
    text: str | None = None
    error: str | None = None

    def to_json(self) -> dict[str, object]:
        record: dict[str, object] = {
            "path": self.path,
            "pass": self.pass_key,
            "params": None if self.params is None else [p.to_json() for p in self.params],
            "options": dict(self.options),
        }
        if self.text is not None:
            record["text"] = self.text
        if self.error is not None:
            record["error"] = self.error
        return record

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> Binding:
        params = record.get("params")
        return cls(
            path=str(record["path"]),
            pass_key=record.get("pass"),
            params=None if params is None else tuple(BindingParam.from_json(p) for p in params),
            options=dict(record.get("options") or {}),
            text=record.get("text"),
            error=record.get("error"),
        )


@dataclass(frozen=True)
class BindingArg:
    """One argument a binding is called with: a value, or a default-built object."""

    kind: str
    value: Any = None  # int, float, bool or str; None for an object
    cls: str | None = None  # the class to build for an object

    @property
    def shown(self) -> str:
        return f"{self.cls}()" if self.kind == "object" else repr(self.value)

    def to_json(self) -> dict[str, object]:
        if self.kind == "object":
            return {"kind": "object", "class": self.cls}
        return {"kind": self.kind, "value": self.value}

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> BindingArg:
        return cls(str(record["kind"]), record.get("value"), record.get("class"))


@dataclass
class Mapped:
    """A recorded pass and the binding call that adds it."""

    spec: PassSpec
    binding: str
    args: list[BindingArg]
    notes: list[str]
    how: str

    @property
    def call(self) -> str:
        return f"{self.binding}(pm{''.join(', ' + arg.shown for arg in self.args)})"

    def to_json(self) -> dict[str, object]:
        return {
            "pass": self.spec.to_json(),
            "binding": self.binding,
            "args": [arg.to_json() for arg in self.args],
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


def _args_for(spec: PassSpec, entry: Binding) -> tuple[list[BindingArg], list[str]] | str:
    """The arguments that make ``entry``'s binding add ``spec``; a reason string when none do."""
    args: list[BindingArg] = []
    notes: list[str] = []
    set_by_args = set()
    for index, param in enumerate(entry.params or ()):
        kind, option = param.kind, param.option
        if kind == "object":
            args.append(BindingArg("object", cls=param.cls))
            notes.append(
                f"argument {index + 1} is a default {param.cls}() (not a pass option; "
                "the pipeline does not record it)"
            )
            continue
        if option is None:
            value = _default_arg(kind)
            args.append(BindingArg(kind, value))
            notes.append(f"argument {index + 1} ({kind}) sets no pass option; passed {value!r}")
            continue
        set_by_args.add(option)
        if option not in spec.options:
            return f"the pipeline gives no value for option {option!r} of {spec.name}"
        try:
            args.append(BindingArg(kind, _convert(kind, spec.options[option])))
        except ValueError:
            return f"option {option}={spec.options[option]} of {spec.name} is not a {kind}"
    fixed = {k: v for k, v in entry.options.items() if k not in set_by_args}
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


def map_passes(passes: list[PassSpec], table: list[Binding]) -> tuple[list[Mapped], list[str]]:
    """Each recorded pass's binding call, from the probe's table; and the passes with none.

    First the binding whose probe printed the same pass (exact); then, for bindings the
    probe could not run, a name match after normalization or through :data:`ALIASES`.
    """
    by_pass: dict[str, list[Binding]] = {}
    unprobed = []
    for entry in table:
        if entry.pass_key:
            by_pass.setdefault(entry.pass_key, []).append(entry)
        elif entry.params is not None:
            unprobed.append(entry)
    mapped: list[Mapped] = []
    missing: list[str] = []
    for spec in expand_nested(passes):
        reasons = []
        done = False
        for entry in by_pass.get(spec.key, []):
            result = _args_for(spec, entry)
            if isinstance(result, str):
                reasons.append(f"{entry.path}: {result}")
                continue
            args, notes = result
            mapped.append(Mapped(spec, entry.path, args, notes, "probe"))
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


def _by_name(spec: PassSpec, unprobed: list[Binding]) -> Mapped | str | None:
    """A binding for ``spec`` by name, for bindings the probe could not run."""
    wanted = ALIASES.get(spec.name)
    target = normalize_name(spec.name)
    for entry in unprobed:
        function = entry.path.rsplit(".", 1)[-1]
        if function != wanted and normalize_name(function) != target:
            continue
        params = entry.params or ()
        kinds = [p.kind for p in params]
        order = POSITIONAL_OPTIONS.get(spec.name)
        if order is None:
            # Without a known order, only one option can go to one argument.
            order = tuple(spec.options) if len(spec.options) == 1 else ()
        values = sum(kind != "object" for kind in kinds)
        if values > len(order) or not set(order[:values]) <= set(spec.options):
            return f"{entry.path} matches by name but its arguments {kinds} cannot be matched"
        args: list[BindingArg] = []
        notes = ["matched by name (not probed)"]
        options = iter(order)
        for param in params:
            if param.kind == "object":
                args.append(BindingArg("object", cls=param.cls))
                notes.append(f"a default {param.cls}() (not a pass option)")
                continue
            value = spec.options[next(options)]
            try:
                args.append(BindingArg(param.kind, _convert(param.kind, value)))
            except ValueError:
                return f"{entry.path}: option {value!r} is not a {param.kind}"
        unused = [name for name in spec.options if name not in order[:values]]
        notes += [
            f"option {name}={spec.options[name]} is not set by the binding" for name in unused
        ]
        return Mapped(spec, entry.path, args, notes, "name")
    return None
