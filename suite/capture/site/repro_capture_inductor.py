"""Launches of the kernels torch.compile (Inductor) generates, as the hook records them.

Inductor does not launch through ``JITFunction.run``: its ``CachingAutotuner.run(*args,
stream, benchmark_run=False, **kwargs)`` (``torch/_inductor/runtime/triton_heuristics.py``)
picks a config (autotuning on the first call when it has several) and calls a launcher it
generated from the compiled kernel. The hook wraps that ``run`` once the module is imported
(never importing torch itself); a kernel's first launch (its first two, while Inductor has
not chosen a config) goes through that wrapper, which writes it ahead in full and gives the
kernel a ``run`` of its own (an instance attribute, :func:`kept_launcher`) that keeps every
later launch in the ring, as ``kernel[grid](...)`` is (:mod:`repro_capture_launch`), but by
its scalar arguments only (:class:`_Layouts`: the
tensor layouts are the kernel's first launch's, which Inductor fixed when it compiled it;
a tensor the hook kept alive would change what the program does); the first launch of
each of Inductor's kernels with its config chosen is written ahead in full. A launch is
described so:

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

import collections
import functools
import operator
import sys
from collections.abc import Callable, Mapping
from typing import Any

from repro_capture_common import compile_failed_since, next_sequence, note_hook_error
from repro_capture_launch import (
    KEPT_RING,
    launch_record,
    record_failed_quietly,
    tensor_arg,
    write_slot,
)
from repro_capture_records import LaunchRecord

#: How a kernel's launches are kept: what of their arguments, and how that is described.
Keep = tuple[Callable[[tuple[Any, ...]], tuple[Any, ...]], Any]

#: The module that defines Inductor's ``CachingAutotuner``.
INDUCTOR_MODULE = "torch._inductor.runtime.triton_heuristics"


def install_inductor() -> None:
    """Wrap ``CachingAutotuner.run`` of the imported Inductor module (once)."""
    module = sys.modules.get(INDUCTOR_MODULE)
    tuner = getattr(module, "CachingAutotuner", None)
    run = getattr(tuner, "run", None)
    if tuner is None or run is None or getattr(run, "_repro_capture", False):
        return
    tuner.run = inductor_run_wrapper(run)


def inductor_run_wrapper(original: Any) -> Any:
    """Inductor's ``run`` as every kernel's first launches meet it: each is written ahead
    in full (:func:`_first_quietly`); once its config is chosen, the kernel gets a launch
    entry of its own (:func:`kept_launcher`) and its launches no longer come here."""

    @functools.wraps(original)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        sequence = next_sequence()
        try:
            keep, how = self._repro_capture_keep
        except AttributeError:  # the kernel's first launch (or second, see _first_quietly)
            keep, how = _first_quietly(self, original, args, sequence)
        KEPT_RING.append((sequence, how, self, keep(args), kwargs, None))
        try:
            return original(self, *args, **kwargs)
        except Exception as exc:
            if not compile_failed_since(sequence):
                record_failed_quietly((sequence, describe_inductor, self, args, kwargs, None), exc)
            raise

    run._repro_capture = True  # type: ignore[attr-defined]
    return run


def kept_launcher(
    tuner: Any, original: Any, keep: Keep, ring: collections.deque[Any] = KEPT_RING
) -> Callable[..., Any]:
    """The tuner's own ``run`` (an instance attribute, found before the class's) once its
    first launch is written: each launch appended to ``ring`` by its scalars, then
    Inductor's ``run`` bound to the tuner. Inside a training step every Python frame and
    lookup costs several times what it costs in a loop (an H100, 2026-11-27: the class
    wrapper with its per-launch checks cost about 2% of a step, docs/capture.md), so the
    steady path is this closure and nothing more."""
    scalars_of, how = keep
    append = ring.append
    count = next_sequence
    run = original.__get__(tuner, type(tuner))

    def launch(*args: Any, **kwargs: Any) -> Any:
        sequence = count()
        append((sequence, how, tuner, scalars_of(args), kwargs, None))
        try:
            return run(*args, **kwargs)
        except Exception as exc:
            if not compile_failed_since(sequence):
                record_failed_quietly((sequence, describe_inductor, tuner, args, kwargs, None), exc)
            raise

    launch._repro_capture = True  # type: ignore[attr-defined]
    return launch


def _first_quietly(tuner: Any, original: Any, args: tuple[Any, ...], sequence: int) -> Keep:
    """The first launch of an Inductor kernel, in full, in its slot (and the second, when
    the first came before Inductor chose a config); then how its launches are kept: its
    scalars only (:class:`_Layouts`), through its own :func:`kept_launcher`."""
    try:
        record = describe_inductor(tuner, args, {}, sequence, where=True)
        if record is None:
            _keep_so(tuner, original, _KEEP_ALL)
            return _KEEP_ALL
        write_slot(record)
        layouts = _Layouts(args, record.id)
        kept = (layouts.scalars_of, layouts.describe)
        # Written again at the next call only while no config was chosen (Inductor chooses
        # at the first call of a kernel with several): at most twice per kernel.
        if _chosen_config(tuner) is not None or getattr(tuner, "_repro_capture_unchosen", False):
            _keep_so(tuner, original, kept)
        else:
            tuner._repro_capture_unchosen = True
        return kept
    except Exception:
        note_hook_error("recording an Inductor launch")
        _keep_so(tuner, original, _KEEP_ALL)
        return _KEEP_ALL


def _keep_so(tuner: Any, original: Any, keep: Keep) -> None:
    """From now on the tuner's launches are kept so: through its own ``run``, unless its
    class overrides Inductor's (a subclass whose ``run`` calls ``super().run``: its own
    code must still run), then through the class's wrapper."""
    try:
        tuner._repro_capture_keep = keep
        if getattr(type(tuner).run, "_repro_capture", False):
            tuner.run = kept_launcher(tuner, original, keep)
    except Exception:
        note_hook_error("keeping an Inductor kernel's launches")


class _Layouts:
    """How an Inductor kernel's launches are kept: its scalar arguments (sizes, by
    reference), not its tensors. Inductor fixes a kernel's tensor layouts when it compiles
    it (a size that varies is a scalar argument), so the layouts of its first launch,
    described then, are those of every launch; a tensor kept alive by the hook would
    change what the program does (autograd copies a gradient something else still
    references, where it would take it over)."""

    def __init__(self, args: tuple[Any, ...], first: str) -> None:
        self.length = len(args)
        self.tensors = {i: t for i, t in enumerate(map(tensor_arg, args)) if t is not None}
        positions = [i for i in range(self.length) if i not in self.tensors]
        self.first_scalars = tuple(args[i] for i in positions)
        self.first = first
        self.positions = positions
        # One C call a launch, always a tuple (itemgetter of one index gives a bare value).
        self.scalars_of: Callable[[tuple[Any, ...]], tuple[Any, ...]] = (
            operator.itemgetter(*positions)
            if len(positions) > 1
            else operator.itemgetter(
                slice(positions[0], positions[0] + 1) if positions else slice(0, 0)
            )
        )

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


def _all(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return args


#: How a launch is kept when its kernel's layouts could not be read: its arguments.
_KEEP_ALL: Keep = (_all, describe_inductor)
