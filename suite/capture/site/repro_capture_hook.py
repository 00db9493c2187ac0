"""The hook ``repro capture`` puts in the user's program: standard library and triton only.

``sitecustomize`` calls :func:`arm`. Nothing happens until the program imports triton;
right after triton's own import finishes, :func:`install` wraps

- the compile entry point (``triton.compiler.compiler.compile``, and the names
  ``triton.compile`` / ``triton.compiler.compile`` bound to it; every release 3.0-3.9
  has the JIT import it from ``triton.compiler`` when it builds a kernel's binder, after
  this ran): a record is written and synced *before* the compile starts, marked done
  (or dropped, without ``--all``) when it returns, marked failed when it raises; a
  process killed inside the compile leaves it as started. Around the compile, fds 1
  and 2 are teed (:mod:`repro_capture_output`): the compiler's own diagnostics reach
  the record whatever the program does with its output. Triton's compilation
  listener (3.4 on) fires only after a successful compile, so it cannot see a failure.
- ``JITFunction.__getitem__`` (``kernel[grid](...)``), ``JITFunction.run`` (an autotuner's
  launch), ``Autotuner.run`` and ``sys.excepthook``: :mod:`repro_capture_launch` (each
  launch kept by reference, the first of each specialization written ahead once its
  compile returns, failed launches, uncaught exceptions after a launch, autotuners).

Right after Inductor's ``torch._inductor.runtime.triton_heuristics`` is imported (watched
the same way, the hook imports no torch), its ``CachingAutotuner.run`` is wrapped:
:mod:`repro_capture_inductor` (the launches of the kernels torch.compile generates).

The other modules of this folder: :mod:`repro_capture_kernel` (the specialization, the
kernel's source and what it reads), :mod:`repro_capture_output` (the tee),
:mod:`repro_capture_common` (what they share),
:mod:`repro_capture_records` (the record types, also read by the suite). They are
top-level modules, found because ``repro capture`` puts this folder on ``PYTHONPATH``;
``sitecustomize`` imports this one.

The hook only reads what the call already holds: it compiles nothing, changes no
argument (so no cache key), writes only under ``REPRO_CAPTURE_DIR`` and never lets its
own error reach the program (it goes to ``hook-errors.txt``).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import importlib.util
import os
import sys
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import repro_capture_output
from repro_capture_common import (
    LOCAL,
    called_from,
    error_facts,
    folder,
    json_options,
    keep_all,
    next_sequence,
    note_hook_error,
    target_of,
    triton_version,
)
from repro_capture_inductor import INDUCTOR_MODULE, install_inductor
from repro_capture_kernel import kernel_source, specialization
from repro_capture_launch import (
    autotune_records,
    autotune_wrapper,
    compiled_for_launch,
    excepthook_wrapper,
    getitem_wrapper,
    run_wrapper,
)
from repro_capture_records import (
    DONE,
    FAILED,
    STARTED,
    CompileOutput,
    CompileRecord,
    write_durably,
)


def arm() -> None:
    """Install the hook once triton has been imported (now, if it already is), and the
    Inductor hook once Inductor's runtime module has been."""
    if folder() is None:
        return
    for name, then in (("triton", _install_quietly), (INDUCTOR_MODULE, _install_inductor_quietly)):
        if name in sys.modules:
            then()
        else:
            sys.meta_path.insert(0, _AfterImport(name, then))


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds one module through the other finders, then runs ``then`` after its import.

    It stays in place until the module is imported: ``importlib.util.find_spec("triton")``
    (torch asks that before it imports triton) finds without importing."""

    def __init__(self, name: str, then: Any) -> None:
        self._name = name
        self._then = then
        self._finding = False

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != self._name or self._finding:
            return None
        self._finding = True
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self._finding = False
        if spec is not None and spec.loader is not None:
            spec.loader = _InstallAfter(spec.loader, self)
        return spec


class _InstallAfter(importlib.abc.Loader):
    """Runs the module's own loader, gives the module its real loader back, then installs."""

    def __init__(self, inner: Any, finder: _AfterImport) -> None:
        self._inner = inner
        self._finder = finder

    def create_module(self, spec: Any) -> Any:
        return self._inner.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__loader__ = self._inner
        if module.__spec__ is not None:
            module.__spec__.loader = self._inner
        self._inner.exec_module(module)
        if self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)
        self._finder._then()


def _install_quietly() -> None:
    try:
        install()
    except Exception:
        note_hook_error("install")


def _install_inductor_quietly() -> None:
    try:
        install_inductor()
    except Exception:
        note_hook_error("install the Inductor hook")


def install() -> None:
    import triton
    import triton.compiler as compiler_package
    from triton.compiler import compiler as compiler_module
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction

    original = compiler_module.compile
    if getattr(original, "_repro_capture", False):
        return
    wrapped = _compile_wrapper(original)
    for owner in (triton, compiler_package, compiler_module):
        if getattr(owner, "compile", None) is original:
            owner.compile = wrapped
    run = JITFunction.run
    JITFunction.run = run_wrapper(run)
    JITFunction.__getitem__ = getitem_wrapper(run, JITFunction.run)  # calls Triton's own run
    Autotuner.run = autotune_wrapper(Autotuner.run)
    sys.excepthook = excepthook_wrapper(sys.excepthook)


def _compile_wrapper(original: Any) -> Any:
    @functools.wraps(original)
    def compile(src: Any, *args: Any, **kwargs: Any) -> Any:
        teed = _quietly("teeing a compile's output", repro_capture_output.begin)
        begun = _begin_quietly(src, args, kwargs, teed)
        try:
            result = original(src, *args, **kwargs)
        except Exception as exc:
            LOCAL.compile_failed_at = next_sequence()
            _untee(teed)
            if begun is not None:
                _end_quietly(begun, exc)
            raise
        except BaseException:
            # An interrupt or exit inside a compile is not the compiler's failure.
            _untee(teed)
            if begun is not None:
                _drop(begun[1])
            raise
        _untee(teed)
        if begun is not None:
            _end_quietly(begun, None)
        _quietly("recording a launch", compiled_for_launch, src)
        return result

    compile._repro_capture = True  # type: ignore[attr-defined]
    return compile


def _quietly(what: str, action: Any, *args: Any) -> Any:
    try:
        return action(*args)
    except Exception:
        note_hook_error(what)
        return None


def _untee(teed: CompileOutput | None) -> None:
    if teed is not None:
        _quietly("restoring the program's descriptors", repro_capture_output.end, teed)


def _begin_quietly(
    src: Any, args: tuple[Any, ...], kwargs: Mapping[str, object], teed: CompileOutput | None
) -> Any:
    try:
        return _begin(src, args, kwargs, teed)
    except Exception:
        note_hook_error("recording a compile")
        return None


def _begin(
    src: Any, args: tuple[Any, ...], kwargs: Mapping[str, object], teed: CompileOutput | None
) -> Any:
    base = folder()
    fn = getattr(src, "fn", None)
    if base is None or fn is None:  # an IR file (IRSource) carries no Python kernel
        return None
    target = args[0] if args else kwargs.get("target")
    options = args[1] if len(args) > 1 else kwargs.get("options")
    problems: list[str] = []
    kernel = kernel_source(fn)
    spec = specialization(src, fn, problems)
    sequence = next_sequence()
    record = CompileRecord(
        id=f"{os.getpid()}-{sequence:04d}-{fn.__name__}",
        state=STARTED,
        pid=os.getpid(),
        kernel=kernel,
        signature=spec["signature"],
        constexprs=spec["constexprs"],
        divisible=spec["divisible"],
        equal_to_1=spec["equal_to_1"],
        attrs=spec["attrs"],
        options=json_options(options or {}, problems),
        target=target_of(target),
        triton=triton_version(),
        python=sys.executable,
        argv=list(sys.argv),
        called_from=called_from(),
        problems=problems,
        output=teed,
        sequence=sequence,
    )
    path = base / "compiles" / f"{record.id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_durably(path, record)
    return record, path


def _end_quietly(begun: tuple[CompileRecord, Path], exc: BaseException | None) -> None:
    record, path = begun
    try:
        if record.output is not None:
            record.output.complete = True
        if exc is None:
            if keep_all():
                record.state = DONE
                write_durably(path, record)
            else:
                _drop(path)
            return
        record.state = FAILED
        record.error = error_facts(exc)
        write_durably(path, record)
        autotune_records().append(path)
    except Exception:
        note_hook_error("finishing a compile record")


def _drop(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
