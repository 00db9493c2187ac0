"""Launches of the kernels torch.compile (Inductor) generates, as the hook records them.

Inductor does not launch through ``JITFunction.run``: its ``CachingAutotuner.run(*args,
stream, benchmark_run=False, **kwargs)`` (``torch/_inductor/runtime/triton_heuristics.py``)
picks a config (autotuning on the first call when it has several) and calls a launcher it
generated from the compiled kernel. Once the module is imported the hook
(never importing torch itself) replaces that ``run`` with Torch's own, compiled again with
the hook's bookkeeping as its first statements (:func:`inlined_run`: no frame more on a
launch; where the source cannot be compiled back to exactly Torch's code, Torch's ``run``
behind a wrapper, :func:`inductor_run_wrapper`). Each launch goes into the ring, as
``kernel[grid](...)``'s do (:mod:`repro_capture_launch`), but by its scalar arguments only
(:class:`_Layouts`: the tensor layouts are the kernel's first launch's, which Inductor
fixed when it compiled it; a tensor the hook kept alive would change what the program
does), and once the kernel is steady (:data:`STEADY_AFTER`) by the kernel alone; the
first launch of each of Inductor's kernels with its config chosen is written ahead in
full. A launch is described so:

- the kernel is the autotuner's ``fn`` (a ``JITFunction``); when the program compiled it
  in a worker, ``fn.fn`` was dropped for pickling and the autotuner's own
  ``_reload_kernel`` gives it back (what Inductor calls before coordinate descent);
- the positional arguments are the kernel's arguments that are not ``tl.constexpr``, in
  order (Inductor's extra launcher arguments after them are dropped); the constexprs are
  the chosen config's keywords and Inductor's constants; ``num_warps`` and ``num_stages``
  the config's; the grid is the one Inductor computes for those arguments
  (``_interpret_args_grid``);
- before the first call of an autotuner with several configs none is chosen yet: the
  record says so; a launch that raises is described after it, with the config chosen then.

Everything is read defensively (attributes that move between torch releases): what
cannot be read is a note in ``hook-errors.txt``, never an error in the program.
Standard library only, like the rest of this folder.
"""

from __future__ import annotations
import __future__

import ast
import functools
import inspect
import operator
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any

from repro_capture_common import compile_failed_since, next_sequence, note_hook_error
from repro_capture_launch import (
    KEPT_RING,
    Kept,
    launch_record,
    number_latest,
    record_failed_quietly,
    tensor_arg,
    write_slot,
)
from repro_capture_records import LaunchRecord

#: The module that defines Inductor's ``CachingAutotuner``.
INDUCTOR_MODULE = "torch._inductor.runtime.triton_heuristics"


def install_inductor() -> None:
    """Give the imported Inductor module's ``CachingAutotuner`` the hook's ``run`` (once)."""
    tuner = getattr(sys.modules.get(INDUCTOR_MODULE), "CachingAutotuner", None)
    if tuner is not None:
        hook_tuner(tuner)


def hook_tuner(tuner: type, inline: bool = True) -> None:
    """``tuner.run`` becomes Torch's own with the ring's bookkeeping inlined
    (:func:`inlined_run`), else Torch's behind a wrapper (:func:`inductor_run_wrapper`);
    its kernels are not yet steady (:data:`STEADY_AFTER`)."""
    run = getattr(tuner, "run", None)
    if run is None or getattr(run, "_repro_capture", False):
        return
    hooked = None
    if inline:
        try:
            hooked = inlined_run(run)
        except Exception:
            note_hook_error("inlining the hook into CachingAutotuner.run")
    tuner._repro_capture_steady = False  # type: ignore[attr-defined]
    tuner.run = hooked or inductor_run_wrapper(run)  # type: ignore[attr-defined]


#: After this many launches of an Inductor kernel with its first launch's scalar arguments
#: (its config chosen), its launches are kept by the kernel alone: the ring gets the tuner,
#: nothing is allocated (:meth:`_Layouts.watch`). A training step launches each kernel with
#: the same sizes every step (Inductor fixes layouts when it compiles; only a size that
#: varies is a scalar); a kernel whose scalars differed once is kept with them for good.
#: The allocations a launch made (its sequence, its scalars, the ring's tuple) cost a
#: ``torch.compile``d MLP step about 1% on an H200 (2026-11-27, docs/capture.md).
STEADY_AFTER = 16


def inductor_run_wrapper(original: Any) -> Any:
    """Torch's ``run`` behind a frame of the hook's, which keeps each launch in the ring
    (:func:`_kept_launch`; a steady kernel's by reference alone)."""

    @functools.wraps(original)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self._repro_capture_steady:
            KEPT_RING.append(self)
            sequence = None
        else:
            sequence = _kept_launch(self, args, kwargs)
        try:
            return original(self, *args, **kwargs)
        except Exception as exc:
            _failed_quietly(self, args, kwargs, sequence, exc)
            raise

    run._repro_capture = True  # type: ignore[attr-defined]
    return run


#: What :func:`inlined_run` puts before Torch's ``run`` body (SELF, ARGS, KWARGS: its
#: parameters' names); the body then runs inside ``try``, and ``except`` records a launch
#: that raised (:func:`_failed_quietly`) and raises it again. The same steps as
#: :func:`inductor_run_wrapper`'s, in Torch's own frame: a steady kernel's launch costs an
#: attribute read and one C call.
_PROLOGUE = """
if SELF._repro_capture_steady:
    _repro_capture_append(SELF)
    _repro_sequence = None
else:
    _repro_sequence = _repro_capture_launch(SELF, ARGS, KWARGS)
"""
_HANDLER = """
try:
    pass
except Exception as _repro_exception:
    _repro_capture_failed(SELF, ARGS, KWARGS, _repro_sequence, _repro_exception)
    raise
"""


def inlined_run(original: Any, prologue: bool = True, handler: bool = True) -> Any:
    """Torch's ``run`` compiled again from its source with the ring's bookkeeping as its
    first statements, in its own module's globals; None where that would not be Torch's
    code exactly. Without the ``prologue`` or the ``handler`` (the body inside ``try``):
    what each costs, and what another function object does with neither
    (capture_overhead.py's ``:recompiled`` and ``:handled`` modes).

    Inside a training step a Python frame costs several times what it costs in a loop: on
    an H100 (2026-11-27) a frame around ``run`` that only called it cost about 1%, and the
    hook's wrapper about 2%, of a ``torch.compile``d MLP step, so the steady-state launch
    must not pass through a frame of the hook's (docs/capture.md). Exactness is checked,
    not assumed: the source compiled the same way *without* the statements must give the
    very code object Python made of it (same bytecode, constants, names, lines), and the
    function must have no decorator, no closure and a ``*args``."""
    code = original.__code__
    if code.co_freevars or hasattr(original, "__wrapped__"):
        return None
    parsed = _parsed(original)
    if parsed is None:
        return None
    tree, definition = parsed
    if _compiled(tree, original) != code or definition.args.vararg is None:
        return None
    names = {  # KWARGS before ARGS, which it contains
        "SELF": definition.args.args[0].arg,
        "KWARGS": definition.args.kwarg.arg if definition.args.kwarg else "None",
        "ARGS": definition.args.vararg.arg,
    }

    def statements(template: str) -> list[ast.stmt]:
        """The template's statements, on Torch's ``def`` line (what a traceback shows)."""
        for placeholder, name in names.items():
            template = template.replace(placeholder, name)
        parsed = ast.parse(template).body
        for node in (n for statement in parsed for n in ast.walk(statement)):
            if isinstance(node, ast.stmt | ast.expr | ast.excepthandler):
                node.lineno = node.end_lineno = definition.lineno
                node.col_offset = node.end_col_offset = 0
        return parsed

    body = definition.body
    docstring = body[:1] if ast.get_docstring(definition, clean=False) is not None else []
    body = body[len(docstring) :]
    if handler:
        [handled] = statements(_HANDLER)
        assert isinstance(handled, ast.Try)
        handled.body, body = body, [handled]
    definition.body = [*docstring, *(statements(_PROLOGUE) if prologue else []), *body]
    inlined = types.FunctionType(
        _compiled(tree, original),
        original.__globals__,
        original.__name__,
        original.__defaults__,
    )
    inlined.__kwdefaults__ = original.__kwdefaults__
    functools.update_wrapper(inlined, original)
    # What the added statements read: globals of Torch's module (the function runs in its
    # globals, so that every name of Torch's resolves as before), named so as to shadow none.
    original.__globals__.update(
        _repro_capture_launch=_kept_launch,
        _repro_capture_append=KEPT_RING.append,
        _repro_capture_failed=_failed_quietly,
    )
    inlined._repro_capture = True  # type: ignore[attr-defined]
    return inlined


def _parsed(original: Any) -> tuple[ast.Module, ast.FunctionDef] | None:
    """The source of the module that defines ``original``, and its definition in it (None:
    no source, or not a plain ``def``). The whole module: how Python compiles a function
    depends on it (3.11 loads a method of a module-level import's name as an attribute, not
    as a method)."""
    module = sys.modules.get(original.__module__ or "")
    try:
        source = inspect.getsource(module)  # type: ignore[arg-type]
    except (OSError, TypeError):  # no module, or no source beside it (compiled-only, zipped)
        return None
    tree = ast.parse(source)
    scope: Any = tree
    for name in original.__qualname__.split("."):
        found = [
            node
            for node in getattr(scope, "body", ())
            if isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name == name
        ]
        if len(found) != 1:  # defined in a branch or twice, or local to a function
            return None
        [scope] = found
    if not isinstance(scope, ast.FunctionDef) or scope.decorator_list:
        return None
    return tree, scope


def _compiled(tree: ast.Module, original: Any) -> types.CodeType:
    """The code of ``original``'s definition in ``tree`` (:func:`_parsed` found it once),
    compiled under its module's ``__future__`` flags."""
    futures = original.__code__.co_flags & _FUTURE_FLAGS
    code = compile(tree, original.__code__.co_filename, "exec", flags=futures, dont_inherit=True)
    for name in original.__qualname__.split("."):
        [code] = [c for c in code.co_consts if isinstance(c, types.CodeType) and c.co_name == name]
    return code


_FUTURE_FLAGS = functools.reduce(
    operator.or_, (getattr(__future__, name).compiler_flag for name in __future__.all_feature_names)
)


def _failed_quietly(
    tuner: Any,
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any] | None,
    sequence: int | None,
    exc: Exception,
) -> None:
    """A launch that raised: recorded, unless its own compile failed (that is the failure).
    A steady kernel's launch (``sequence`` None) compiled nothing: numbered now, and its
    ring entry (the kernel alone) becomes the launch with its scalars and that number (the
    failure explains that launch)."""
    if sequence is None:
        sequence = next_sequence()
        try:
            kept = tuner._repro_capture_kept
            number_latest(tuner, (sequence, kept.describe, tuner, kept.keep(args), kwargs, None))
        except Exception:  # the program's exception goes on as it was
            note_hook_error("numbering a steady kernel's failed launch")
    elif compile_failed_since(sequence):
        return
    record_failed_quietly((sequence, describe_inductor, tuner, args, kwargs or {}, None), exc)


def _kept_launch(tuner: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any] | None) -> int:
    """A launch of a kernel not yet steady, into the ring by its scalars (its first
    written ahead in full, :func:`_first_quietly`); its sequence."""
    sequence = next_sequence()
    try:
        try:
            kept = tuner._repro_capture_kept
        except AttributeError:  # the kernel's first launch (or second, see _first_quietly)
            kept = _first_quietly(tuner, args, sequence)
        values = kept.keep(args)
        KEPT_RING.append((sequence, kept.describe, tuner, values, kwargs, None))
        kept.watch(tuner, values)
    except Exception:  # arguments other than the first launch's (fewer of them, say)
        note_hook_error("keeping an Inductor launch")
    return sequence


def _first_quietly(tuner: Any, args: tuple[Any, ...], sequence: int) -> _Layouts | _AllArgs:
    """The first launch of an Inductor kernel, in full, in its slot (and the second, when
    the first came before Inductor chose a config); then how its launches are kept: its
    scalars only (:class:`_Layouts`)."""
    try:
        record = describe_inductor(tuner, args, {}, sequence, where=True)
        if record is None:
            tuner._repro_capture_kept = _ALL_ARGS
            return _ALL_ARGS
        write_slot(record)
        kept = _Layouts(args, record.id)
        # Written again at the next call only while no config was chosen (Inductor chooses
        # at the first call of a kernel with several): at most twice per kernel.
        if _chosen_config(tuner) is not None or getattr(tuner, "_repro_capture_unchosen", False):
            tuner._repro_capture_kept = kept
        else:
            tuner._repro_capture_unchosen = True
        return kept
    except Exception:
        note_hook_error("recording an Inductor launch")
        tuner._repro_capture_kept = _ALL_ARGS
        return _ALL_ARGS


class _Layouts:
    """How an Inductor kernel's launches are kept: its scalar arguments (sizes, by
    reference), not its tensors, until it is steady, then by the kernel alone. Inductor
    fixes a kernel's tensor layouts when it compiles it (a size that varies is a scalar
    argument), so the layouts of its first launch, described then, are those of every
    launch; a tensor kept alive by the hook would change what the program does (autograd
    copies a gradient something else still references, where it would take it over)."""

    def __init__(self, args: tuple[Any, ...], first: str) -> None:
        self.length = len(args)
        self.tensors = {i: t for i, t in enumerate(map(tensor_arg, args)) if t is not None}
        positions = [i for i in range(self.length) if i not in self.tensors]
        self.first_scalars = tuple(args[i] for i in positions)
        self.first = first
        self.positions = positions
        self.same = 0  # launches since the first with its scalars; -1: they differed once
        # One C call a launch, always a tuple (itemgetter of one index gives a bare value).
        self.keep: Callable[[tuple[Any, ...]], tuple[Any, ...]] = (
            operator.itemgetter(*positions)
            if len(positions) > 1
            else operator.itemgetter(
                slice(positions[0], positions[0] + 1) if positions else slice(0, 0)
            )
        )

    def watch(self, tuner: Any, scalars: tuple[Any, ...]) -> None:
        """Count a launch with the first launch's scalars; at :data:`STEADY_AFTER` the
        kernel is steady. One with others, and it never is."""
        if self.same < 0:
            return
        try:
            same = bool(scalars == self.first_scalars)
        except Exception:  # a scalar whose == does not say (an array, say): never steady
            same = False
        self.same = self.same + 1 if same else -1
        if self.same == STEADY_AFTER:  # once: a kernel made unsteady again stays so
            tuner._repro_capture_steady = True

    def again(self, tuner: Any) -> Kept:
        """A launch of the steady kernel, which the ring kept by the kernel alone: its
        first launch's scalars, numbered now (it is described now)."""
        return (next_sequence(), self.describe_steady, tuner, self.first_scalars, {}, None)

    def describe(
        self, tuner: Any, scalars: Any, kwargs: Mapping[str, Any], sequence: int
    ) -> LaunchRecord | None:
        """A kept launch: its scalars, the first launch's layouts, the config chosen now."""
        args: list[Any] = [None] * self.length
        for position, value in [*self.tensors.items(), *zip(self.positions, scalars, strict=True)]:
            args[position] = value
        record = describe_inductor(tuner, tuple(args), kwargs, sequence)
        if record is not None and self.tensors and tuple(scalars) != self.first_scalars:
            record.problems.append(
                f"tensor layouts as at this kernel's first launch ({self.first}), "
                "whose scalar arguments differed"
            )
        return record

    def describe_steady(
        self, tuner: Any, scalars: Any, kwargs: Mapping[str, Any], sequence: int
    ) -> LaunchRecord | None:
        record = self.describe(tuner, scalars, kwargs, sequence)
        if record is not None:
            record.problems.append(
                f"arguments as at this kernel's first launch ({self.first}): its first "
                f"{STEADY_AFTER + 1} launches had the same scalars, later ones are kept by "
                "the kernel alone"
            )
        return record


class _AllArgs:
    """How a launch is kept when its kernel's layouts could not be read: its arguments,
    every launch (never steady)."""

    @staticmethod
    def keep(args: tuple[Any, ...]) -> tuple[Any, ...]:
        return args

    @staticmethod
    def watch(tuner: Any, scalars: tuple[Any, ...]) -> None:
        return None

    @staticmethod
    def describe(
        tuner: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any], sequence: int
    ) -> LaunchRecord | None:
        return describe_inductor(tuner, args, kwargs, sequence)


_ALL_ARGS = _AllArgs()


def describe_inductor(
    tuner: Any,
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    sequence: int,
    where: bool = False,
) -> LaunchRecord | None:
    """The launch as ``kernel[grid](...)`` of the tuner's kernel, with the config chosen
    now (None: no kernel to describe)."""
    fn = _kernel_function(tuner)
    if fn is None:
        return None
    config = _chosen_config(tuner)
    constexprs = set(getattr(fn, "constexprs", ()))
    passed = [name for i, name in enumerate(fn.arg_names) if i not in constexprs]
    extra = (getattr(tuner, "inductor_meta", None) or {}).get("extra_launcher_args") or ()
    kernel_args = args[: len(args) - len(extra)] if extra else args
    named: dict[str, Any] = dict(zip(passed, kernel_args, strict=False))
    constants = (getattr(tuner, "triton_meta", None) or {}).get("constants") or {}
    named.update({k: v for k, v in dict(constants).items() if k in fn.arg_names})
    if config is not None:
        named.update(dict(getattr(config, "kwargs", {}) or {}))
        for option in ("num_warps", "num_stages"):
            value = getattr(config, option, None)
            if value is not None:
                named[option] = value
        named["grid"] = _grid(tuner, args, config)
    record = launch_record(fn, (), named, sequence, where)
    if config is None:
        configs = len(getattr(tuner, "configs", ()) or ())
        record.problems.append(
            f"Inductor had not chosen among its {configs} configs yet: no constexprs"
        )
    return record


def _kernel_function(tuner: Any) -> Any:
    """The autotuner's ``JITFunction`` with its Python function (reloaded once if the
    program compiled it in a worker)."""
    fn = getattr(tuner, "_repro_capture_fn", None) or getattr(tuner, "fn", None)
    if fn is not None and getattr(fn, "fn", None) is None:
        reload = getattr(tuner, "_reload_kernel", None)
        fn = getattr(reload(), "fn", None) if callable(reload) else None
    if fn is None or getattr(fn, "fn", None) is None or not hasattr(fn, "arg_names"):
        return None
    tuner._repro_capture_fn = fn
    return fn


def _chosen_config(tuner: Any) -> Any:
    launchers = getattr(tuner, "launchers", None) or []
    if len(launchers) == 1:
        return getattr(launchers[0], "config", None)
    configs = getattr(tuner, "configs", None) or []
    return configs[0] if len(configs) == 1 else None


def _grid(tuner: Any, args: tuple[Any, ...], config: Any) -> Any:
    """Inductor's grid for these arguments, or None (the record then says it could not be
    evaluated)."""
    compute = getattr(tuner, "_interpret_args_grid", None)
    if not callable(compute):
        return None
    try:
        return compute(args, config)[1]
    except Exception:
        return None
