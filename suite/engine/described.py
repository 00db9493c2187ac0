"""What the main process knows of a reproducer: its declared facts as data, never its code.

A user's file or a plugin is imported only in an isolated child (``python -m
suite.children discover``), which answers with these facts as JSON; the main process checks
every field's type and builds a :class:`Described` from them. A constraint is code (a
``holds`` function), so a config is judged against it in a child too (:class:`ChildJudge`),
the curated configs once, in the child that described the file. A built-in reproducer
ships with the suite and is described from the object itself (:func:`describe`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from suite.api import Config, Param, ParamSpace, Reproducer, case_label, space_problems
from suite.oracles import Differential

#: The judge of a reproducer's constraints: for each config, the descriptions it breaks.
Judge = Callable[[Sequence[Config]], list[list[str]]]


class Malformed(ValueError):
    """A child's description of a reproducer that is not of the declared shape."""


@dataclass(frozen=True)
class Kernel:
    """A ``@triton.jit`` kernel defined at the top of a reproducer's module."""

    name: str
    arg_names: tuple[str, ...]


def _no_constraints(configs: Sequence[Config]) -> list[list[str]]:
    return [[] for _ in configs]


@dataclass(frozen=True)
class Described(ParamSpace):
    """A reproducer's declaration (:class:`suite.api.Reproducer`) as data: what the main
    process expands, lists, explores and reports from."""

    id: str
    title: str
    family: str
    params: tuple[Param, ...]
    configs: Mapping[str, tuple[Config, ...]]
    targets: tuple[str, ...]
    references: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    default_sets: tuple[str, ...] = ()
    label: str = ""
    gpu: str = "optional"
    description: str = ""
    constraints: tuple[str, ...] = ()
    compiles: bool = False
    launches: bool = False
    makes_inputs: bool = False
    oracles: tuple[str, ...] = ()
    differentials: tuple[Differential, ...] = ()
    kernels: tuple[Kernel, ...] = ()
    out_dtypes: Mapping[str, str] = field(default_factory=dict)
    judge: Judge = field(default=_no_constraints, compare=False, repr=False)

    def case_label(self, config: Mapping[str, Any]) -> str:
        return case_label(self.label, self.params, config)

    def problems_of(self, configs: Sequence[Config]) -> list[list[str]]:
        """Why each of ``configs`` is not a point of the space: its parameters and values
        here, the constraints (code) by the judge, for those that pass the first."""
        found = [space_problems(self.params, config) for config in configs]
        judged = [i for i, problems in enumerate(found) if not problems]
        if self.constraints and judged:
            verdicts = self.judge([configs[i] for i in judged])
            for i, broken in zip(judged, verdicts, strict=True):
                found[i] = [f"breaks '{description}'" for description in broken]
        return found

    def problems(self, config: Mapping[str, Any]) -> list[str]:
        """Why ``config`` is not a point of this reproducer's space (empty if it is)."""
        return self.problems_of([dict(config)])[0]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "family": self.family,
            "params": [
                {"name": p.name, "values": list(p.values), "doc": p.doc, "launch": p.launch}
                for p in self.params
            ],
            "configs": {name: [dict(c) for c in cs] for name, cs in self.configs.items()},
            "targets": list(self.targets),
            "references": list(self.references),
            "requires": list(self.requires),
            "default_sets": list(self.default_sets),
            "label": self.label,
            "gpu": self.gpu,
            "description": self.description,
            "constraints": list(self.constraints),
            "compiles": self.compiles,
            "launches": self.launches,
            "makes_inputs": self.makes_inputs,
            "oracles": list(self.oracles),
            "differentials": [
                {"variant": dict(d.variant), "label": d.label} for d in self.differentials
            ],
            "kernels": [{"name": k.name, "arg_names": list(k.arg_names)} for k in self.kernels],
            "out_dtypes": dict(self.out_dtypes),
        }

    @classmethod
    def from_json(cls, data: Any, judge: Judge = _no_constraints) -> Described:
        """The description a child wrote; :class:`Malformed` for any field of another type."""
        data = _mapping(data, "a reproducer")
        params = tuple(_param(p) for p in _list(data.get("params"), "params"))
        configs = {
            _text(name, "a config set's name"): tuple(
                _mapping(c, "a config") for c in _list(cs, "a config set")
            )
            for name, cs in _mapping(data.get("configs"), "configs").items()
        }
        return cls(
            id=_text(data.get("id"), "id"),
            title=_text(data.get("title"), "title"),
            family=_text(data.get("family"), "family"),
            params=params,
            configs=configs,
            targets=_texts(data.get("targets"), "targets"),
            references=_texts(data.get("references"), "references"),
            requires=_texts(data.get("requires"), "requires"),
            default_sets=_texts(data.get("default_sets"), "default_sets"),
            label=_text(data.get("label"), "label"),
            gpu=_text(data.get("gpu"), "gpu"),
            description=_text(data.get("description"), "description"),
            constraints=_texts(data.get("constraints"), "constraints"),
            compiles=_flag(data.get("compiles"), "compiles"),
            launches=_flag(data.get("launches"), "launches"),
            makes_inputs=_flag(data.get("makes_inputs"), "makes_inputs"),
            oracles=_texts(data.get("oracles"), "oracles"),
            differentials=tuple(
                Differential(
                    _mapping(d.get("variant"), "a differential's variant"),
                    _text(d.get("label"), "a differential's label"),
                )
                for d in (
                    _mapping(x, "a differential")
                    for x in _list(data.get("differentials"), "differentials")
                )
            ),
            kernels=tuple(
                Kernel(
                    _text(k.get("name"), "a kernel's name"), _texts(k.get("arg_names"), "arg_names")
                )
                for k in (_mapping(x, "a kernel") for x in _list(data.get("kernels"), "kernels"))
            ),
            out_dtypes={
                _text(k, "an output's name"): _text(v, "an output's dtype")
                for k, v in _mapping(data.get("out_dtypes"), "out_dtypes").items()
            },
            judge=judge,
        )


def describe(repro: Reproducer, module: Any = None) -> Described:
    """The facts of a reproducer object (in the child that imported it, or a built-in);
    ``module``: where its ``@triton.jit`` kernels and ``OUT_DTYPE`` are looked up."""
    kernels, out_dtypes = _module_facts(module)
    return Described(
        id=repro.id,
        title=repro.title,
        family=repro.family,
        params=tuple(repro.params),
        configs={name: tuple(dict(c) for c in cs) for name, cs in repro.configs.items()},
        targets=tuple(repro.targets),
        references=tuple(repro.references),
        requires=tuple(repro.requires),
        default_sets=tuple(repro.default_sets),
        label=repro.label,
        gpu=repro.gpu,
        description=repro.description,
        constraints=tuple(c.description for c in repro.constraints),
        compiles=repro.compile_fn is not None,
        launches=repro.launch_fn is not None,
        makes_inputs=repro.inputs_fn is not None,
        oracles=tuple(str(o.name) for o in repro.oracles),
        differentials=tuple(o for o in repro.oracles if isinstance(o, Differential)),
        kernels=kernels,
        out_dtypes=out_dtypes,
        judge=lambda configs: [
            [c.description for c in repro.constraints if not c.holds(config)] for config in configs
        ],
    )


def module_of(repro: Reproducer) -> Any:
    import sys

    fn = repro.compile_fn or repro.launch_fn
    return sys.modules.get(fn.__module__) if fn is not None else None


def _module_facts(module: Any) -> tuple[tuple[Kernel, ...], dict[str, str]]:
    """The module's own ``@triton.jit`` kernels (only when Triton is imported already: a
    reproducer that never imported it has none) and its ``OUT_DTYPE`` names."""
    import sys

    if module is None:
        return (), {}
    kernels: list[Kernel] = []
    if "triton" in sys.modules:
        from triton.runtime.jit import JITFunction

        kernels = [
            Kernel(name, tuple(str(a) for a in obj.arg_names))
            for name, obj in vars(module).items()
            if isinstance(obj, JITFunction)
            and getattr(getattr(obj, "fn", None), "__module__", None) == module.__name__
        ]
    out = getattr(module, "OUT_DTYPE", None)
    out_dtypes = {str(k): str(v) for k, v in out.items()} if isinstance(out, dict) else {}
    return tuple(kernels), out_dtypes


def canonical(config: Mapping[str, Any]) -> str:
    """One text per config, whatever its key order: a judge's cache key."""
    return json.dumps(config, sort_keys=True)


def _param(data: Any) -> Param:
    data = _mapping(data, "a parameter")
    values = tuple(_list(data.get("values"), "a parameter's values"))
    try:
        return Param(
            _text(data.get("name"), "a parameter's name"),
            values,
            _text(data.get("doc"), "a parameter's doc"),
            launch=_flag(data.get("launch"), "a parameter's launch"),
        )
    except ValueError as exc:
        raise Malformed(str(exc)) from None


def _mapping(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise Malformed(f"{what} is not a mapping")
    return value


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise Malformed(f"{what} is not a list")
    return value


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise Malformed(f"{what} is not text")
    return value


def _texts(value: Any, what: str) -> tuple[str, ...]:
    return tuple(_text(v, what) for v in _list(value, what))


def _flag(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise Malformed(f"{what} is not true or false")
    return value
