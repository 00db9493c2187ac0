"""The reproducer contract: what a file under ``repros/`` declares about itself.

A reproducer is one short Python file holding a :class:`Reproducer`. Like a lit
test, it carries everything the engine needs: its parameter space, curated
configs, the targets it applies to, what it requires, and the code that
compiles (and, on a GPU, launches and checks) one case. The engine knows
nothing about any particular reproducer.

This module runs inside the isolated child too, possibly under another Triton
release in a venv that holds nothing but triton, so it imports only the
standard library.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from suite.oracles import Oracle

__all__ = [
    "Case",
    "Choice",
    "Compiled",
    "Constraint",
    "Param",
    "Pow2",
    "Reproducer",
    "Size",
    "Unsupported",
    "WrongResult",
    "declared",
]

Config = dict[str, Any]

TARGET_PATTERN = re.compile(r"^sm_(\d+)[af]?$")


class Unsupported(Exception):
    """Raised by a reproducer when the installed toolchain cannot express the case.

    An unsupported case is skipped, never counted as a failure: Triton 3.3 has
    no ``tl.make_tensor_descriptor``, so the descriptor GEMMs cannot exist there.
    """


class WrongResult(AssertionError):
    """Raised by a reproducer's launch code when the output disagrees with the reference."""


@dataclass(frozen=True)
class Param:
    """One named parameter with an ordered domain.

    The order of ``values`` is the order of "smaller": explore shrinks toward
    the first value, and the boundary table steps one position each way.
    """

    name: str
    values: tuple[Any, ...]
    doc: str = ""
    # A launch-side parameter (a problem size): it changes what a launch does, never the
    # compile, so only a search that launches varies it.
    launch: bool = False

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError(f"parameter {self.name!r} has an empty domain")

    def index(self, value: Any) -> int:
        return self.values.index(value)


def Choice(name: str, values: Iterable[Any], doc: str = "") -> Param:
    """A parameter taking one of ``values``, listed from simplest to most complex."""
    return Param(name, tuple(values), doc)


def Pow2(name: str, low: int, high: int, doc: str = "") -> Param:
    """A power-of-two parameter from ``low`` to ``high`` inclusive."""
    if low <= 0 or low & (low - 1) or high & (high - 1) or high < low:
        raise ValueError(
            f"Pow2({name!r}, {low}, {high}): bounds must be powers of two, low <= high"
        )
    values = []
    value = low
    while value <= high:
        values.append(value)
        value *= 2
    return Param(name, tuple(values), doc)


def Size(name: str, values: Iterable[int], doc: str = "") -> Param:
    """A launch-side problem size, smallest first. List the boundaries a kernel gets wrong:
    tiny sizes (1, 2), sizes that are not a multiple of the block or of 16, one past a
    block, and a typical size."""
    ordered = tuple(values)
    if any(type(v) is not int or v < 0 for v in ordered) or list(ordered) != sorted(set(ordered)):
        raise ValueError(f"Size({name!r}): sizes must be distinct non-negative ints, ascending")
    return Param(name, ordered, doc, launch=True)


@dataclass(frozen=True)
class Constraint:
    """A relation between parameters that every valid config satisfies.

    The description is what a user sees when a config file breaks it.
    """

    description: str
    holds: Callable[[Mapping[str, Any]], bool]


@dataclass(frozen=True)
class Target:
    """An NVIDIA compilation target such as ``sm_100``; the engine checks the name."""

    name: str

    @property
    def arch(self) -> int:
        match = TARGET_PATTERN.match(self.name)
        if not match:
            raise ValueError(f"not an NVIDIA target name: {self.name!r}")
        return int(match.group(1))


@dataclass(frozen=True)
class Case:
    """One reproducer x config x target, as the child process sees it."""

    repro_id: str
    config: Mapping[str, Any]
    target: Target
    gpu: bool = False

    def __getitem__(self, name: str) -> Any:
        return self.config[name]

    @property
    def options(self) -> dict[str, int | None]:
        """Triton compile options carried by the config (num_warps, num_stages, ...)."""
        keys = ("num_warps", "num_stages", "num_ctas", "maxnreg")
        return {k: self.config[k] for k in keys if k in self.config}


@dataclass
class Compiled:
    """What a compile produced, in the engine's terms.

    ``shared_bytes`` and ``tmem_columns`` are checked against the target's
    limits even without a GPU: Triton raises ``OutOfResources`` only at load
    time, so a compile-only run must compare them itself.
    """

    shared_bytes: int | None = None
    tmem_columns: int | None = None
    cubin: bytes | None = None
    extra: dict[str, object] = field(default_factory=dict)  # JSON facts of the compile


CompileFn = Callable[[Case], Compiled]
# ``launch(case)`` checks itself; ``launch(case, **inputs)`` returns the outputs to judge.
LaunchFn = Callable[..., Any]
InputsFn = Callable[[Case], Mapping[str, Any]]


class ParamSpace:
    """The lookups over a declared parameter list, shared by a reproducer and its description
    (``suite.engine.Described``, what the main process knows of a user's file)."""

    params: Sequence[Param]

    @property
    def param_names(self) -> list[str]:
        return [p.name for p in self.params]

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)


@dataclass
class Reproducer(ParamSpace):
    """A self-describing reproducer.

    ``requires`` lists what the toolchain must offer, as lit's REQUIRES does; when
    one is missing the case is skipped with that reason. Each entry is one of:
    a dotted attribute path (``"triton.language.make_tensor_descriptor"``); a
    keyword argument of a callable (``"triton.language.range(warp_specialize)"``);
    a release range of a distribution (``"triton>=3.5"``, ``"triton>=3.4,<3.6"``);
    a target the bundled ptxas knows (``"ptxas:sm_103a"``); an executable
    (``"exe:nvcc"``); a call Triton's frontend accepts for the case's target
    (``"accepts:tl.dot_scaled(tl.zeros((64, 64), tl.float16), None, 'fp16', ...)"``,
    probed once per release: ``suite.toolchain.accepts``).
    ``label`` formats a config into the readable part of a case id.
    ``gpu`` is ``"optional"`` (compile anywhere, launch on a GPU when asked),
    ``"never"`` or ``"required"``.
    ``oracles`` say how a launch is judged (``suite.oracles``); they need ``@inputs``.
    """

    id: str
    title: str
    family: str
    params: Sequence[Param]
    configs: Mapping[str, Sequence[Config]]
    targets: Sequence[str]
    references: Sequence[str] = ()
    constraints: Sequence[Constraint] = ()
    requires: Sequence[str] = ()
    default_sets: Sequence[str] = ()
    label: str = ""
    gpu: str = "optional"
    description: str = ""
    oracles: Sequence[Oracle] = ()
    compile_fn: CompileFn | None = None
    launch_fn: LaunchFn | None = None
    inputs_fn: InputsFn | None = None

    def __post_init__(self) -> None:
        if self.gpu not in ("optional", "never", "required"):
            raise ValueError(f"{self.id}: gpu must be optional, never or required")
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id}: duplicate parameter names")
        unknown = [s for s in self.default_sets if s not in self.configs]
        if unknown:
            raise ValueError(f"{self.id}: default set(s) {unknown} not among configs")
        self.oracles = tuple(self.oracles)
        calls = [r[len(ACCEPTS) :] for r in self.requires if r.startswith(ACCEPTS)]
        if calls:
            from suite.toolchain.accepts import check_call

            for call in calls:
                check_call(call)

    def oracle_problems(self) -> list[str]:
        """Why the declared oracles cannot judge this reproducer's launches (empty if they can)."""
        from suite.oracles import Fault, Hang

        judging = [o for o in self.oracles if not isinstance(o, (Fault, Hang))]
        if judging and (self.inputs_fn is None or self.launch_fn is None):
            names = ", ".join(type(o).__name__ for o in judging)
            return [f"{self.id}: oracles {names} need @REPRO.inputs and @REPRO.launch"]
        return []

    def compile(self, fn: CompileFn) -> CompileFn:
        """Decorator: the function that compiles one case (runs without a GPU)."""
        self.compile_fn = fn
        return fn

    def launch(self, fn: LaunchFn) -> LaunchFn:
        """Decorator: the function that launches one case on a GPU: ``launch(case)``
        checks the result itself (raising :class:`WrongResult`); with :meth:`inputs`,
        ``launch(case, **inputs)`` fills freshly poisoned outputs and returns them for the
        oracles to judge."""
        self.launch_fn = fn
        return fn

    def inputs(self, fn: InputsFn) -> InputsFn:
        """Decorator: the function that makes fresh random inputs for one case, by name."""
        self.inputs_fn = fn
        return fn

    def problems(self, config: Mapping[str, Any]) -> list[str]:
        """Why ``config`` is not a point of this reproducer's space (empty if it is)."""
        found = space_problems(self.params, config)
        if not found:
            found += [f"breaks '{c.description}'" for c in self.constraints if not c.holds(config)]
        return found

    def case_label(self, config: Mapping[str, Any]) -> str:
        return case_label(self.label, self.params, config)

    def missing_requirements(self, target: str = "sm_90") -> list[str]:
        """The ``requires`` entries this interpreter lacks for ``target`` (checked in the
        child)."""
        return [r for r in self.requires if not _has(r, target)]


#: The module-level name of a reproducer declared as plain data (:func:`declared`).
DECLARATION = "REPRO"
#: What a plain-data declaration names besides :class:`Reproducer`'s data fields: its
#: functions, by the role each has.
_ROLE_FIELDS = {"compile": "compile_fn", "inputs": "inputs_fn", "launch": "launch_fn"}
_PLAIN_FIELDS = (
    "id",
    "title",
    "family",
    "configs",
    "targets",
    "references",
    "requires",
    "default_sets",
    "label",
    "gpu",
    "description",
)


def declared(namespace: Mapping[str, Any]) -> list[Reproducer]:
    """The reproducer a module declares as plain data, if it does: ``REPRO = dict(id=...,
    params={"BLOCK": (16, 32, 64)}, ..., compile=fn, inputs=fn, launch=fn)``, that is
    :class:`Reproducer`'s keywords with each parameter as its values, smallest first, and the
    functions by role. Such a file imports nothing of the suite, so it can also run by itself
    where the suite is not installed (what ``repro capture`` writes: docs/capture.md); the
    engine turns the declaration into a :class:`Reproducer` here, in the child that
    imported the file. Constraints and oracles are code of the suite: a file that needs them
    declares a :class:`Reproducer`."""
    declaration = namespace.get(DECLARATION)
    if not isinstance(declaration, Mapping):
        return []
    unknown = sorted(set(declaration) - {*_PLAIN_FIELDS, *_ROLE_FIELDS, "params"})
    if unknown:
        raise TypeError(
            f"{DECLARATION} declares unknown field(s) {', '.join(unknown)} (known: "
            f"{', '.join([*_PLAIN_FIELDS, 'params', *_ROLE_FIELDS])})"
        )
    params = declaration.get("params", {})
    if not isinstance(params, Mapping):
        raise TypeError(f"{DECLARATION}'s params map each name to its values, smallest first")
    fields = {k: v for k, v in declaration.items() if k in _PLAIN_FIELDS}
    roles = {_ROLE_FIELDS[k]: v for k, v in declaration.items() if k in _ROLE_FIELDS}
    space = [Param(str(name), tuple(values)) for name, values in params.items()]
    return [Reproducer(params=space, **fields, **roles)]


def space_problems(params: Sequence[Param], config: Mapping[str, Any]) -> list[str]:
    """Why ``config`` is not a point of the space ``params`` span (empty if it is): what a
    process that never imported the reproducer can judge (constraints aside)."""
    names = [p.name for p in params]
    found = []
    missing = [n for n in names if n not in config]
    if missing:
        found.append(f"missing parameter(s) {', '.join(missing)}")
    extra = [k for k in config if k not in names]
    if extra:
        found.append(f"unknown parameter(s) {', '.join(extra)}")
    for p in params:
        # 64.0 == 64 and True == 1 in Python, but neither is a block size: types must match.
        if p.name in config and not any(
            type(v) is type(config[p.name]) and v == config[p.name] for v in p.values
        ):
            found.append(f"{p.name}={config[p.name]!r} not in {list(p.values)}")
    return found


def case_label(label: str, params: Sequence[Param], config: Mapping[str, Any]) -> str:
    """A case's readable label: ``label`` filled from ``config``, else its values in order."""
    if label:
        return label.format(**config)
    return "-".join(str(config[p.name]) for p in params)


ACCEPTS = "accepts:"
_KEYWORD = re.compile(r"^([\w.]+)\((\w+)\)$")
_RELEASE = re.compile(r"^([A-Za-z][\w.-]*)\s*([<>=!].*)$")
_BOUND = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(\d+(?:\.\d+)*)\s*$")


def _has(requirement: str, target: str = "sm_90") -> bool:
    if requirement.startswith(ACCEPTS):
        from suite.toolchain.accepts import accepts

        return accepts(requirement[len(ACCEPTS) :], target)
    if requirement.startswith("exe:"):
        import shutil

        return shutil.which(requirement[4:]) is not None
    if requirement.startswith("ptxas:"):
        return requirement[6:] in ptxas_targets()
    keyword = _KEYWORD.match(requirement)
    if keyword:
        return _accepts_keyword(keyword.group(1), keyword.group(2))
    release = _RELEASE.match(requirement)
    if release:
        return _release_in(release.group(1), release.group(2))
    return _lookup(requirement) is not _MISSING


_MISSING = object()


def _lookup(path: str) -> Any:
    """The object at a dotted path (module, then attributes), or ``_MISSING``."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            obj: Any = importlib.import_module(module_name)
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return _MISSING
            obj = getattr(obj, attr)
        return obj
    return _MISSING


def _accepts_keyword(path: str, name: str) -> bool:
    """Whether the callable at ``path`` (a class: its constructor) takes ``name``."""
    import inspect

    obj = _lookup(path)
    if obj is _MISSING:
        return False
    try:
        parameters = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return False
    return name in parameters


def _release_in(distribution: str, bounds: str) -> bool:
    """Whether the installed ``distribution`` satisfies comma-separated ``bounds``.

    Release numbers compare as integer tuples (3.5 == 3.5.0); pre-release and
    local tags are ignored. A malformed bound is the reproducer's mistake.
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = _release_tuple(version(distribution))
    except PackageNotFoundError:
        return False
    for bound in bounds.split(","):
        match = _BOUND.match(bound)
        if not match:
            raise ValueError(f"bad release bound {bound.strip()!r} in requirement {distribution}")
        wanted = _release_tuple(match.group(2))
        width = max(len(installed), len(wanted))
        have = installed + (0,) * (width - len(installed))
        want = wanted + (0,) * (width - len(wanted))
        if not _COMPARE[match.group(1)](have, want):
            return False
    return True


def _release_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"^\d+(?:\.\d+)*", text)[0].split("."))


_COMPARE: dict[str, Callable[[tuple[int, ...], tuple[int, ...]], bool]] = {
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
}


def ptxas_targets() -> frozenset[str]:
    """The ``--gpu-name`` values the ptxas Triton compiles with accepts (``sm_103a``, ...).

    That is ``TRITON_PTXAS_PATH`` when set, else the ptxas bundled with triton;
    empty when there is none.
    """
    import os
    import subprocess

    tool = os.environ.get("TRITON_PTXAS_PATH") or ""
    if not tool:
        triton = _lookup("triton")
        if triton is _MISSING:
            return frozenset()
        tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
    try:
        shown = subprocess.run([tool, "--help"], capture_output=True, text=True, check=False)
    except OSError:
        return frozenset()
    return frozenset(re.findall(r"\b(?:sm|compute)_\d+[af]?\b", shown.stdout))
