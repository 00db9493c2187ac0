"""The gate's inputs: the kernel, its configs (lists, YAML, autotune files) and sizes."""

from __future__ import annotations

import ast
import itertools
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suite.api import Config
from suite.engine import Found, Work, discover, load_config_file
from suite.errors import UsageError

# What a triton.Config means when num_warps / num_stages are left out.
TRITON_CONFIG_DEFAULTS = {"num_warps": 4, "num_stages": 3}
CONFIG_POSITIONAL = ("num_warps", "num_stages", "num_ctas", "maxnreg")
OPTION_KEYS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


@dataclass
class GateConfig:
    """One distinct config and the roles it plays (current, proposed, candidate)."""

    key: str
    label: str
    config: Config
    roles: list[str] = field(default_factory=list)

    @property
    def role(self) -> str:
        return "+".join(self.roles)


def parse_sizes(text: str) -> list[tuple[int, int, int]]:
    """``4096,8192`` (cubes) or ``4096x4096x1024``, comma-separated."""
    sizes = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            dims = [int(d) for d in part.lower().split("x")]
        except ValueError:
            raise UsageError(f"--sizes: {part!r} is not N or MxNxK") from None
        if len(dims) == 1:
            dims *= 3
        if len(dims) != 3 or min(dims) < 1:
            raise UsageError(f"--sizes: {part!r} is not N or MxNxK with positive sizes")
        sizes.append((dims[0], dims[1], dims[2]))
    if not sizes:
        raise UsageError("--sizes names no size")
    return sizes


def size_label(size: Sequence[int]) -> str:
    return "x".join(str(d) for d in size)


def resolve_kernel(name: str) -> Found:
    """``--kernel``: a reproducer id or a reproducer file defining exactly one."""
    found = discover.select([name])
    if len(found) != 1:
        ids = ", ".join(f.repro.id for f in found)
        raise UsageError(f"{name} defines {len(found)} reproducers ({ids}); name one by id")
    return found[0]


@dataclass(frozen=True)
class JitKernel:
    """The reproducer's ``@triton.jit`` kernel that the GPU side launches and times."""

    name: str
    arg_names: tuple[str, ...]
    out_dtypes: dict[str, str]


def jit_kernel(found: Found, name: str | None = None) -> JitKernel:
    """The one ``@triton.jit`` kernel defined in the reproducer's module (or ``name``), as
    the child that imported it described it."""
    jits = {k.name: k for k in found.repro.kernels}
    if name is not None:
        if name not in jits:
            raise UsageError(
                f"{found.repro.id}: no @triton.jit kernel {name!r} (has: {', '.join(jits)})"
            )
    elif len(jits) == 1:
        (name,) = jits
    else:
        raise UsageError(
            f"{found.repro.id} defines {len(jits)} @triton.jit kernels "
            f"({', '.join(jits) or 'none'}); name one with --jit"
        )
    return JitKernel(name, jits[name].arg_names, dict(found.repro.out_dtypes))


def tunable_params(found: Found, kernel: JitKernel) -> list[str]:
    """Parameters that are the kernel's constexprs or Triton launch options."""
    return [
        p.name for p in found.repro.params if p.name in kernel.arg_names or p.name in OPTION_KEYS
    ]


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _literal(node: ast.AST, path: Path, what: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        raise UsageError(
            f"{path}:{getattr(node, 'lineno', '?')}: {what} is not a literal; "
            "the gate reads autotune configs without running the file"
        ) from None


def read_autotune_configs(path: Path, kernel: str | None = None) -> list[Config]:
    """The configs of a ``triton.autotune``-decorated kernel, read with ``ast``: no import,
    no GPU.

    Finds ``@triton.autotune(configs=[triton.Config({...}, num_warps=.., num_stages=..), ...])``
    (or ``configs=NAME`` bound at module level to such a list) and evaluates the
    literal dicts and keyword values. ``pre_hook`` and ``ir_override`` are ignored;
    ``num_ctas=1`` and ``maxnreg=None`` (Triton's defaults) are dropped.
    """
    tree = _parse_python(path)
    decorated = _autotuned(tree)
    if not decorated:
        raise UsageError(f"{path}: no triton.autotune-decorated kernel found")
    kernel = _pick_kernel(path, decorated, kernel)
    listed = _config_list(path, decorated[kernel], _module_bindings(tree), kernel)
    return [_read_config(path, element) for element in listed.elts]


def _parse_python(path: Path) -> ast.Module:
    if not path.is_file():
        raise UsageError(f"no such config file: {path}")
    try:
        return ast.parse(path.read_text(), filename=str(path))
    except SyntaxError as exc:
        raise UsageError(f"malformed config file {path}: line {exc.lineno}: {exc.msg}") from None


def _module_bindings(tree: ast.Module) -> dict[str, ast.AST]:
    """``NAME = value`` (annotated or not) at the top of the module: what ``configs=NAME``
    may refer to."""
    bound: dict[str, ast.AST] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    bound[target.id] = statement.value
        elif (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and statement.value is not None
        ):
            bound[statement.target.id] = statement.value
    return bound


def _autotuned(tree: ast.Module) -> dict[str, ast.Call]:
    """Each function decorated with ``@...autotune(...)``, and that decorator call."""
    decorated: dict[str, ast.Call] = {}
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for decorator in function.decorator_list:
            if isinstance(decorator, ast.Call) and _dotted(decorator.func).split(".")[-1] == (
                "autotune"
            ):
                decorated[function.name] = decorator
    return decorated


def _pick_kernel(path: Path, decorated: dict[str, ast.Call], kernel: str | None) -> str:
    """``FILE.py::KERNEL``'s kernel, or the file's only autotuned one."""
    if kernel is None:
        if len(decorated) > 1:
            raise UsageError(
                f"{path} has {len(decorated)} autotuned kernels ({', '.join(decorated)}); "
                f"name one as {path}::KERNEL"
            )
        (kernel,) = decorated
    if kernel not in decorated:
        raise UsageError(f"{path}: no autotuned kernel {kernel!r} (has: {', '.join(decorated)})")
    return kernel


def _config_list(
    path: Path, call: ast.Call, bound: dict[str, ast.AST], kernel: str
) -> ast.List | ast.Tuple:
    """The literal list given as ``configs=`` (or first positionally), through one name."""
    node: ast.AST | None = next((k.value for k in call.keywords if k.arg == "configs"), None)
    if node is None and call.args:
        node = call.args[0]
    if isinstance(node, ast.Name) and node.id in bound:
        node = bound[node.id]
    if not isinstance(node, ast.List | ast.Tuple):
        line = getattr(node, "lineno", call.lineno)
        raise UsageError(
            f"{path}:{line}: the configs of {kernel} are not a literal list of triton.Config"
        )
    return node


def _read_config(path: Path, element: ast.expr) -> Config:
    """One ``triton.Config({...}, num_warps=.., ...)`` as a flat config."""
    if not (isinstance(element, ast.Call) and _dotted(element.func).split(".")[-1] == "Config"):
        raise UsageError(f"{path}:{element.lineno}: not a triton.Config(...) call")
    if not element.args:
        raise UsageError(f"{path}:{element.lineno}: triton.Config without its kwargs dict")
    meta = _literal(element.args[0], path, "the Config's kwargs")
    if not isinstance(meta, dict):
        raise UsageError(f"{path}:{element.lineno}: the Config's first argument is no dict")
    config = dict(meta)
    for name, value in zip(CONFIG_POSITIONAL, element.args[1:], strict=False):
        config[name] = _literal(value, path, name)
    for keyword in element.keywords:
        if keyword.arg in (None, "pre_hook", "ir_override"):
            continue
        config[keyword.arg] = _literal(keyword.value, path, keyword.arg)
    if config.get("num_ctas") == 1:
        del config["num_ctas"]
    if "maxnreg" in config and config["maxnreg"] is None:
        del config["maxnreg"]
    return config


def complete_config(found: Found, entry: Config, where: str) -> Config:
    """A config file entry made a point of the reproducer's space.

    Missing ``num_warps`` / ``num_stages`` take ``triton.Config``'s defaults (4, 3);
    any other missing parameter (e.g. ``dtype``) takes the first value of its domain.
    """
    repro = found.repro
    config = dict(entry)
    for name, default in TRITON_CONFIG_DEFAULTS.items():
        if name in repro.param_names:
            config.setdefault(name, default)
    for param in repro.params:
        config.setdefault(param.name, param.values[0])
    problems = repro.problems(config)
    if problems:
        raise UsageError(f"{where}: bad config {entry}: {'; '.join(problems)}")
    return {name: config[name] for name in repro.param_names}


def load_configs(text: str, found: Found) -> list[Config]:
    """``--current`` / ``--proposed``: a YAML/TOML/JSON list, or ``file.py[::kernel]``."""
    path_text, _, kernel = text.partition("::")
    path = Path(path_text)
    if path.suffix == ".py":
        entries = read_autotune_configs(path, kernel or None)
    else:
        if kernel:
            raise UsageError(f"{text}: '::KERNEL' only applies to a Python file")
        entries = load_config_file(path_text)
    if not entries:
        raise UsageError(f"{text}: no configs")
    return [complete_config(found, e, f"{path}: config {i + 1}") for i, e in enumerate(entries)]


def declared_space(found: Found, tunable: Sequence[str], fixed: Config) -> list[Config]:
    """Every point of the reproducer's space over ``tunable``, the rest held at ``fixed``."""
    repro = found.repro
    axes = [p.values if p.name in tunable else (fixed[p.name],) for p in repro.params]
    points = []
    for values in itertools.product(*axes):
        config = dict(zip(repro.param_names, values, strict=True))
        if not repro.problems(config):
            points.append(config)
    return points


def priority(found: Found, tunable: Sequence[str]) -> Callable[[Config], tuple]:
    """Screening order under a budget: big tiles first (fewer, larger CTAs), then deeper
    pipelines; what the budget cuts is the small-tile tail."""
    sizes = [n for n in tunable if n not in OPTION_KEYS]

    def key(config: Config) -> tuple:
        area = math.prod(int(config[n]) for n in sizes if isinstance(config[n], int))
        return (-area, -int(config.get("num_stages", 0)), int(config.get("num_warps", 0)))

    return key


class Configs:
    """The distinct configs of a gate, in first-seen order, each with its roles."""

    def __init__(self, found: Found) -> None:
        self.found = found
        self.items: list[GateConfig] = []
        self._by_config: dict[str, GateConfig] = {}

    def add(self, config: Config, role: str) -> GateConfig:
        canonical = json.dumps(config, sort_keys=True, default=str)
        item = self._by_config.get(canonical)
        if item is None:
            label = self.found.repro.case_label(config)
            key = label if all(i.key != label for i in self.items) else f"{label}#{len(self.items)}"
            item = GateConfig(key, label, dict(config))
            self._by_config[canonical] = item
            self.items.append(item)
        if role not in item.roles:
            item.roles.append(role)
        return item

    def with_role(self, role: str) -> list[GateConfig]:
        return [i for i in self.items if role in i.roles]

    def by_key(self, key: str) -> GateConfig:
        return next(i for i in self.items if i.key == key)


@dataclass
class GateOptions:
    kernel: str
    current: str
    proposed: str | None = None
    targets: list[str] = field(default_factory=list)
    sizes: list[tuple[int, int, int]] = field(default_factory=lambda: [(4096,) * 3, (8192,) * 3])
    gpu: bool = False
    suggest: bool = False
    suggest_count: int = 4
    budget_s: float = 480.0
    input_sets: int = 3
    noise_floor: float = 0.01
    jit: str | None = None
    output: Path = Path("reports")
    workers: int = os.cpu_count() or 1
    timeout_s: float = Work.COMPILE.value
    memory_bytes: int | None = 8 << 30
    python: str = sys.executable
    seed: int | None = None
