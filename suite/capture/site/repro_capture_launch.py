"""Launches and autotuners, as the hook records them.

A launch costs the program next to nothing: the hot path keeps references, not
descriptions. Every ``kernel[grid](...)``, every other ``JITFunction.run`` that is not a
warm-up (an autotuner's, say) and every launch of an Inductor kernel
(:mod:`repro_capture_inductor`) appends one tuple to a ring of the process's latest ``KEPT``
launches: its sequence, how to describe it, and references to the kernel, its arguments and
its grid (an Inductor kernel's scalar arguments only: its tensor layouts are fixed; a steady
Inductor kernel's launch appends the kernel alone, numbered when described). No
file, no JSON, no stack walk, no lock, no per-thread state; ``kernel[grid]`` returns the
hook's own launcher in place of Triton's (``JITFunction.__getitem__``), which calls
Triton's ``run`` directly: no frame more than the program's own launch has. They are
described (shapes, strides, dtypes, scalars, constexprs, the grid, the config) only when
it matters:

- The first launch of each specialization is recorded in full and written ahead: the
  compile the JIT makes for it (:mod:`repro_capture_hook`) finds the launch it was made
  for on its stack (the launcher's frame) and writes it, after the compile and before the
  launch, into one of two slots,
  ``last-launch/<pid>.a.json`` and ``.b.json``, in turn (Inductor's launcher: the first
  launch of each of its kernels, once a config is chosen). The slot with the higher
  sequence that parses is the process's latest launch written: a process that dies while
  writing one leaves the other. Written in place through descriptors kept open (no
  rename, no fsync: a process that dies loses nothing it wrote).
- A launch that raises after its compile succeeded is described and kept under
  ``launches/`` (``failed``).
- An exception that reaches the top of a process that launched kernels: its latest launch
  is described into its slot, then the exception is recorded in ``uncaught/<pid>.json``
  (``sys.excepthook``, which is then called as before): a failure reported after its
  launch (an illegal address raised at the next synchronize) is tied to the launch before
  it from these two records.
- When the process ends (``atexit``): its latest launch into its slot, the ring into
  ``kept-launches/<pid>.json`` (oldest first).

A process killed by a signal after its launch has no chance to describe it: its slot holds
the first launch of the latest specialization it compiled (the same compiled kernel, maybe
other arguments). The ring holds the arguments of the last ``KEPT`` launches alive until
later launches replace them. ``Autotuner.run``: failures recorded while it ran and it came
back from were configs it dropped (``handled_by: autotuner``); with ``--all``, its config
list and choices.

Records hold shapes, strides, dtypes and scalars, never tensor data. Standard library and
triton only, like the rest of this folder.
"""

from __future__ import annotations

import atexit
import collections
import functools
import json
import os
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from repro_capture_common import (
    LOCAL,
    UNREPRESENTABLE,
    called_from,
    compile_failed_since,
    error_facts,
    folder,
    json_options,
    keep_all,
    next_sequence,
    note_hook_error,
    plain,
    stderr_offset,
    target_of,
    triton_version,
)
from repro_capture_kernel import kernel_source, literal
from repro_capture_records import (
    DONE,
    FAILED,
    AutotuneRecord,
    KernelSource,
    LaunchRecord,
    TargetFacts,
    TensorArg,
    UncaughtRecord,
    write_durably,
)

LAST_LAUNCH = "last-launch"
KEPT_LAUNCHES = "kept-launches"
#: How many of a process's latest launches are kept, by reference, for a failure to describe.
KEPT = 8
_LAUNCH_KEYWORDS = frozenset({"grid", "warmup"})

#: How a kept launch is described: ``describe(owner, args, kwargs, sequence)``.
Describe = Callable[[Any, tuple[Any, ...], Mapping[str, Any], int], "LaunchRecord | None"]
#: A launch as the hot path keeps it: sequence, describe, owner (the kernel or Inductor's
#: tuner), positional arguments, keyword arguments, and the grid of ``kernel[grid]`` (None:
#: the grid is among the keyword arguments, or the owner computes it).
Kept = tuple[int, Describe, Any, tuple[Any, ...], Mapping[str, Any], Any]

#: The ring: a launch as :data:`Kept`, or an owner kept by reference alone (a steady
#: Inductor kernel, :mod:`repro_capture_inductor`: nothing allocated a launch), which
#: :func:`as_kept` makes a ``Kept`` when it is described.
KEPT_RING: collections.deque[Any] = collections.deque(maxlen=KEPT)
# A kernel's source (and its JSON) is collected once per JITFunction, not at each launch.
_KERNELS: dict[int, tuple[Any, KernelSource, str]] = {}
_WRITTEN: dict[int, int] = {}  # pid -> the sequence of the latest launch written to a slot
_SLOTS: dict[tuple[int, int], tuple[int, int]] = {}  # (pid, slot) -> (descriptor, inode)
_NEXT_SLOT: dict[int, int] = {}
_SLOT_LOCK = threading.Lock()
_TARGETS: dict[int, TargetFacts] = {}  # pid -> the target, asked of the driver once


def autotune_records() -> list[Path]:
    """Failure records written during the current autotuner run of this thread."""
    if not hasattr(LOCAL, "autotune_paths"):
        LOCAL.autotune_paths = []
    paths: list[Path] = LOCAL.autotune_paths
    return paths


def getitem_wrapper(run: Any, hooked: Any) -> Any:
    """``JITFunction.__getitem__``: ``kernel[grid]`` is a launcher that keeps the launch and
    calls ``run`` (Triton's own ``JITFunction.run``, not ``hooked``, the hook's wrapper of
    it: one record a launch), as Triton's own ``kernel[grid]`` calls ``self.run``. A kernel
    whose ``run`` is not ``hooked`` (its own, or its class's) gets Triton's lambda, as
    without the hook."""
    append = KEPT_RING.append

    def __getitem__(self: Any, grid: Any) -> Any:
        if type(self).run is not hooked or "run" in self.__dict__:
            return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)

        def launch(*args: Any, **kwargs: Any) -> Any:
            kept = (next_sequence(), launch_record, self, args, kwargs, grid)
            append(kept)
            try:
                return run(self, *args, grid=grid, warmup=False, **kwargs)
            except Exception as exc:
                if not compile_failed_since(kept[0]):
                    record_failed_quietly(kept, exc)
                raise

        return launch

    # The launcher's code, made once (a constant of ``__getitem__``'s own), not per launch.
    _LAUNCH_CODES.update(c for c in __getitem__.__code__.co_consts if hasattr(c, "co_name"))
    return __getitem__


def run_wrapper(original: Any) -> Any:
    """``JITFunction.run`` called other than through ``kernel[grid]`` (an autotuner's or a
    heuristic's launch of the kernel it wraps)."""

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("warmup"):
            return original(self, *args, **kwargs)
        kept = (next_sequence(), launch_record, self, args, kwargs, None)
        KEPT_RING.append(kept)
        try:
            return original(self, *args, **kwargs)
        except Exception as exc:
            if not compile_failed_since(kept[0]):
                record_failed_quietly(kept, exc)
            raise

    _LAUNCH_CODES.add(run.__code__)
    return functools.wraps(original)(run)


#: The code of the hook's launchers: a compile finds the launch it was made for by their
#: frames on its stack (a warm-up's frame keeps none).
_LAUNCH_CODES: set[Any] = set()


def _launch_on_stack() -> Kept | None:
    frame: Any = sys._getframe(1)
    while frame is not None:
        if frame.f_code in _LAUNCH_CODES:
            kept: Kept | None = frame.f_locals.get("kept")
            return kept
        frame = frame.f_back
    return None


def compiled_for_launch(src: Any) -> None:
    """After a compile succeeded: when a launch made it (the first launch of this
    specialization), that launch is recorded in full and written ahead."""
    kept = _launch_on_stack()
    if kept is None or getattr(src, "fn", None) is not kept[2]:
        return
    sequence, _, fn, args, kwargs, grid = kept
    if grid is not None:
        kwargs = {**kwargs, "grid": grid}
    record = launch_record(fn, args, kwargs, sequence, where=True)
    write_slot(record)


def write_ahead(
    fn: Any, args: tuple[Any, ...], kwargs: Mapping[str, object], notes: tuple[str, ...] = ()
) -> LaunchRecord | None:
    """Record the launch about to be made as this process's latest, in full, in its slot
    (``notes``: what the caller could not record)."""
    if folder() is None:
        return None
    record = launch_record(fn, args, kwargs, next_sequence(), where=True)
    record.problems.extend(notes)
    write_slot(record)
    return record


def write_slot(record: LaunchRecord) -> None:
    """Write ``record`` into the process's next slot."""
    base = folder()
    if base is None:
        return
    data = _launch_json(record, _kernel_json(record.kernel))
    with _SLOT_LOCK:
        slot = _NEXT_SLOT.get(record.pid, 0)
        _NEXT_SLOT[record.pid] = 1 - slot
        descriptor = _slot(base, record.pid, slot)
        os.pwrite(descriptor, data, 0)
        os.ftruncate(descriptor, len(data))
        _WRITTEN[record.pid] = max(_WRITTEN.get(record.pid, -1), record.sequence)


def describe(kept: Kept) -> LaunchRecord | None:
    sequence, how, owner, args, kwargs, grid = kept
    if grid is not None:
        kwargs = {**kwargs, "grid": grid}
    return how(owner, args, kwargs, sequence)


def as_kept(entry: Any) -> Kept:
    """A ring entry as a kept launch: an owner kept by reference alone is numbered now,
    with the arguments its keeper gives (``owner._repro_capture_kept.again``)."""
    if isinstance(entry, tuple):
        return entry
    kept: Kept = entry._repro_capture_kept.again(entry)
    return kept


def number_latest(owner: Any = None, known: Kept | None = None) -> Kept | None:
    """The ring's latest launch (only if it is ``owner``'s, when given), numbered now if it
    was kept by reference (as ``known``, when the caller knows it); the ring keeps that
    number, so that described again (at the process's end, after a failure record or an
    uncaught exception took a later number) it is not taken for a newer launch."""
    if not KEPT_RING:
        return None
    entry = KEPT_RING[-1]
    if owner is not None and entry is not owner:
        return None
    kept = as_kept(entry) if known is None else known
    if kept is not entry and KEPT_RING and KEPT_RING[-1] is entry:
        KEPT_RING[-1] = kept
    return kept


def _latest_into_slot() -> None:
    """The latest kept launch, described into its slot (unless it is there already)."""
    kept = number_latest()
    if kept is None or _WRITTEN.get(os.getpid(), -1) >= kept[0]:
        return
    record = describe(kept)
    if record is not None:
        write_slot(record)


def describe_kept() -> None:
    """At the process's end: the latest launch into its slot, the ring into
    ``kept-launches/<pid>.json``."""
    base = folder()
    if base is None or not KEPT_RING:
        return
    try:
        _latest_into_slot()
    except Exception:
        note_hook_error("describing the latest launch into its slot")
    records = [r for r in map(_described_quietly, list(KEPT_RING)) if r is not None]
    try:
        path = base / KEPT_LAUNCHES / f"{os.getpid()}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps([asdict(r) for r in records], default=repr, indent=1))
    except Exception:
        note_hook_error("writing the launches kept")


def _described_quietly(entry: Any) -> LaunchRecord | None:
    """A kept launch described, or None: one that cannot be (arguments other than its
    kernel's first launch's, say) costs the others nothing."""
    try:
        return describe(as_kept(entry))
    except Exception:
        note_hook_error("describing a kept launch")
        return None


def _forget_kept() -> None:
    """A forked child's launches are its own: the parent's are not described there."""
    KEPT_RING.clear()


atexit.register(describe_kept)
os.register_at_fork(after_in_child=_forget_kept)


def _slot(base: Path, pid: int, slot: int) -> int:
    """The open descriptor of a slot file, opened again if the program closed it (a
    descriptor number the program reuses for a file of its own is never written)."""
    known = _SLOTS.get((pid, slot))
    if known is not None:
        try:
            if os.fstat(known[0]).st_ino == known[1]:
                return known[0]
        except OSError:
            pass
    path = base / LAST_LAUNCH / f"{pid}.{'ab'[slot]}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    _SLOTS[(pid, slot)] = (descriptor, os.fstat(descriptor).st_ino)
    return descriptor


def _target() -> TargetFacts:
    """The active driver's target, asked once per process (asking a missing driver runs
    its probe, a subprocess, each time)."""
    pid = os.getpid()
    if pid not in _TARGETS:
        _TARGETS[pid] = target_of(None)
    return _TARGETS[pid]


def record_failed_quietly(kept: Kept, exc: Exception) -> None:
    """A launch that raised after its compile succeeded, described and kept (``launches/``)."""
    try:
        base = folder()
        if base is None:
            return
        record = describe(kept)
        if record is None:
            return
        record.state = FAILED
        record.error = error_facts(exc)
        path = base / "launches" / f"{record.id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_durably(path, record)
        autotune_records().append(path)
    except Exception:
        note_hook_error("recording a failed launch")


def _kernel(fn: Any) -> tuple[KernelSource, str]:
    known = _KERNELS.get(id(fn))
    if known is None or known[0] is not fn:
        kernel = kernel_source(fn)
        known = (fn, kernel, json.dumps(asdict(kernel), default=repr))
        _KERNELS[id(fn)] = known
    return known[1], known[2]


def _kernel_json(kernel: KernelSource) -> str:
    for _, source, text in _KERNELS.values():
        if source is kernel:
            return text
    return json.dumps(asdict(kernel), default=repr)


def _launch_json(record: LaunchRecord, kernel: str) -> bytes:
    """The record as JSON, with the kernel's JSON made once per kernel spliced in."""
    data = {name: getattr(record, name) for name in _LAUNCH_FIELDS}
    data["tensors"] = {
        name: {"dtype": t.dtype, "shape": t.shape, "strides": t.strides, "device": t.device}
        for name, t in record.tensors.items()
    }
    data["error"] = asdict(record.error) if record.error else None
    text = json.dumps(data, default=repr)
    return f'{text[:-1]}, "kernel": {kernel}}}'.encode()


_LAUNCH_FIELDS = tuple(f.name for f in fields(LaunchRecord) if f.name != "kernel")


def launch_record(
    fn: Any,
    args: tuple[Any, ...],
    kwargs: Mapping[str, object],
    sequence: int,
    where: bool = False,
) -> LaunchRecord:
    """The launch described; ``where``: called at the launch itself, so the program's frame
    and the stderr log's size are the launch's own (else they are left empty)."""
    names = list(fn.arg_names)
    declared = {names[i] for i in getattr(fn, "constexprs", ())}
    bound = dict(zip(names, args, strict=False))
    options: dict[str, object] = {}
    for key, value in kwargs.items():
        if key in names:
            bound[key] = value
        elif key not in _LAUNCH_KEYWORDS:
            options[key] = value
    problems: list[str] = []
    tensors: dict[str, TensorArg] = {}
    scalars: dict[str, object] = {}
    constexprs: dict[str, str] = {}
    for name in names:
        if name not in bound:
            continue  # a default value: the reproducer's launch leaves it out too
        value = bound[name]
        layout = None if name in declared else tensor_arg(value)
        if name in declared:
            constexprs[name] = literal(value, problems, name)
        elif layout is not None:
            tensors[name] = layout
        else:
            value_plain = plain(value)
            if value_plain is UNREPRESENTABLE:
                problems.append(f"argument {name} ({type(value).__name__}) is not recorded")
            scalars[name] = None if value_plain is UNREPRESENTABLE else value_plain
    return LaunchRecord(
        id=f"{os.getpid()}-{sequence:04d}-{fn.__name__}",
        pid=os.getpid(),
        kernel=_kernel(fn)[0],
        grid=_grid(kwargs.get("grid"), {**bound, **options}, problems),
        arguments=names,
        tensors=tensors,
        scalars=scalars,
        constexprs=constexprs,
        options=json_options(options, problems),
        target=_target(),
        triton=triton_version(),
        python=sys.executable,
        argv=list(sys.argv),
        called_from=called_from() if where else "",
        problems=problems,
        sequence=sequence,
        stderr_start=stderr_offset() if where else None,
    )


def tensor_arg(value: Any) -> TensorArg | None:
    """A tensor's layout (what the hook reads of a torch tensor; a layout described
    before is itself), None for anything else."""
    if isinstance(value, TensorArg):
        return value
    if not all(hasattr(value, a) for a in ("data_ptr", "shape", "stride", "dtype")):
        return None
    return TensorArg(
        str(value.dtype).replace("torch.", ""),
        [int(n) for n in value.shape],
        [int(n) for n in value.stride()],
        str(getattr(value, "device", "")),
    )


def _grid(grid: Any, meta: Mapping[str, object], problems: list[str]) -> list[int]:
    try:
        shape = grid(meta) if callable(grid) else grid
        dims = [int(d) for d in shape]
    except Exception:
        problems.append("the grid could not be evaluated")
        return [1, 1, 1]
    return [*dims, 1, 1, 1][:3]


def excepthook_wrapper(original: Any) -> Any:
    """``sys.excepthook`` that first records the exception of a process that launched."""

    @functools.wraps(original)
    def excepthook(kind: Any, value: Any, tb: Any) -> Any:
        if isinstance(value, Exception) and (KEPT_RING or os.getpid() in _WRITTEN):
            _record_uncaught_quietly(value)
        return original(kind, value, tb)

    return excepthook


def _record_uncaught_quietly(exc: Exception) -> None:
    try:
        base = folder()
        if base is None:
            return
        _latest_into_slot()  # before the exception's record: its sequence comes after
        record = UncaughtRecord(os.getpid(), next_sequence(), error_facts(exc), stderr_offset())
        path = base / "uncaught" / f"{record.pid}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_durably(path, record)
    except Exception:
        note_hook_error("recording an uncaught exception")


def autotune_wrapper(original: Any) -> Any:
    keep = keep_all()  # asked once: the environment capture started the program with

    @functools.wraps(original)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        outer = autotune_records()
        LOCAL.autotune_paths = []
        try:
            result = original(self, *args, **kwargs)
        except BaseException:
            LOCAL.autotune_paths = outer + LOCAL.autotune_paths
            raise
        # The autotuner came back: the failures recorded meanwhile were configs it dropped.
        for path in LOCAL.autotune_paths:
            _mark_handled_quietly(path)
        LOCAL.autotune_paths = outer
        if keep:
            _record_autotuner_quietly(self)
        return result

    return run


def _mark_handled_quietly(path: Path) -> None:
    try:
        if path.exists():
            data = json.loads(path.read_text())
            if data.get("state") != DONE:
                data["handled_by"] = "autotuner"
                path.write_text(json.dumps(data, indent=1))
    except Exception:
        note_hook_error("marking a dropped config")


def _record_autotuner_quietly(tuner: Any) -> None:
    try:
        base = folder()
        if base is None:
            return
        cache = getattr(tuner, "cache", {}) or {}
        seen = getattr(tuner, "_repro_capture_chosen", -1)
        if seen == len(cache):
            return
        tuner._repro_capture_chosen = len(cache)
        fn = tuner.fn
        while not hasattr(fn, "arg_names") or not hasattr(fn, "src"):
            fn = fn.fn
        record = AutotuneRecord(
            id=f"{os.getpid()}-{id(tuner):x}-{fn.__name__}",
            pid=os.getpid(),
            kernel=kernel_source(fn),
            key=[str(k) for k in getattr(tuner, "keys", getattr(tuner, "key", []))],
            configs=[_config(c) for c in tuner.configs],
            chosen=[{"key": repr(k), "config": _config(c)} for k, c in cache.items()],
        )
        path = base / "autotune" / f"{record.id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_durably(path, record)
    except Exception:
        note_hook_error("recording an autotuner")


def _config(config: Any) -> dict[str, object]:
    values = {str(k): plain(v) for k, v in dict(config.kwargs).items()}
    for name in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
        value = getattr(config, name, None)
        if value is not None:
            values[name] = value
    return {k: v for k, v in values.items() if v is not UNREPRESENTABLE}
