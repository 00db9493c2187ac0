"""The isolated side of a case: ``python -m suite.children case SPEC.json``.

The child loads one reproducer, compiles one case and, on a GPU, launches and
checks it. It reports raw facts only, as the events of ``suite.engine.protocol``
in the report file named by the spec, written as it goes so that a crash mid-compile
still leaves the phase it reached. Classification happens in the parent
(``suite.engine.classify``), which also sees the exit status and the captured stderr.

Standard library and triton only: this runs under whatever interpreter the
user points at, including a venv that holds nothing but one Triton release.
"""

from __future__ import annotations

import faulthandler
import hashlib
import importlib
import importlib.util
import json
import linecache
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from suite.api import Case, Compiled, Reproducer, Target, Unsupported, declared
from suite.engine.exception_facts import describe_exception, stages_entered
from suite.engine.launch import (
    COMPILE_LAUNCHES,
    GPU_LOCK,
    build_ahead,
    compile_launches,
    run_launch,
)
from suite.engine.protocol import (
    ChildSpec,
    CompiledEvent,
    Done,
    EventWriter,
    Phase,
    Skipped,
    Stage,
    Start,
)
from suite.engine.triton_key import recall
from suite.tritonc import compiled_facts


def load_reproducers(source: dict[str, str]) -> list[Reproducer]:
    """Import a reproducer file (by path) or module (by name) and return what it declares."""
    if "path" in source:
        path = Path(source["path"]).resolve()
        digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
        name = "repro_" + "".join(ch if ch.isalnum() else "_" for ch in path.stem) + "_" + digest
        if name in sys.modules:  # preloaded by the warm template: reuse, don't re-execute
            module = sys.modules[name]
        else:
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot import {path}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[name]
                raise
    else:
        module = importlib.import_module(source["module"])
    return [v for v in vars(module).values() if isinstance(v, Reproducer)] + declared(vars(module))


def keep_sources_read() -> None:
    """Keep the lines Python read from a file that is gone since (a code generator writes a
    kernel to a temporary file, imports it and deletes the file): a release before 3.5 reads
    a ``@triton.jit`` function's source again when it compiles it
    (``get_jit_fn_file_line``: ``inspect.getsourcelines``), and would fail with ``OSError:
    could not get source code`` where 3.5 on keep what they read at the decoration; the
    kernel's own code is then judged on every release, as the ``repro.py`` that carries its
    source is. An entry without a modification time is one ``linecache`` never checks
    against the disk (as for a module a loader gave)."""
    for name, entry in list(linecache.cache.items()):
        if len(entry) == 4 and entry[1] is not None and not os.path.exists(entry[3]):
            size, _, lines, fullname = entry
            linecache.cache[name] = (size, None, lines, fullname)


def run(spec: ChildSpec, emit: EventWriter) -> int:
    emit(Start(sys.version.split()[0], os.environ.get("CUDA_VISIBLE_DEVICES")))
    try:
        repro = next(r for r in load_reproducers(spec.source) if r.id == spec.repro_id)
        case = Case(spec.repro_id, spec.config, Target(spec.target), spec.gpu)
        problems = repro.oracle_problems()
        if problems:
            raise TypeError("; ".join(problems))
        missing = repro.missing_requirements(case.target.name)
        keep_sources_read()
    except BaseException as exc:
        emit(describe_exception(exc, "load"))
        return 1
    if "triton" in sys.modules:  # a compile ahead: Triton's hash of itself, if kept
        recall()
    if missing:
        gaps = [r.removeprefix("ptxas:") for r in missing if r.startswith("ptxas:")]
        if len(gaps) == len(missing):
            gap = ", ".join(gaps)
            emit(Skipped(f"toolchain-gap: this Triton's ptxas does not know {gap}", gap))
        else:
            emit(Skipped(f"unsupported: requires {', '.join(missing)}"))
        return 0
    # Triton's interpreter runs a launch as NumPy on the CPU and compiles nothing: a case it
    # launches has no compile phase (``triton.compile`` refuses an interpreted function).
    skip_compile = case.gpu and os.environ.get("TRITON_INTERPRET") == "1"
    compile_fn: Callable[[Case], Any] | None = repro.compile_fn
    ahead = os.environ.get(COMPILE_LAUNCHES)
    if ahead and repro.launch_fn is not None:
        # The launches' own compiles, built for this case's launch or a later one's.
        launching = Case(case.repro_id, case.config, case.target, True)
        configs = json.loads(ahead)

        def build_launches(_: Case) -> None:
            compile_launches(repro, launching, configs)

        compile_fn = build_launches

    for phase, fn in (("compile", compile_fn), ("launch", repro.launch_fn)):
        if fn is None or (phase == "launch" and not case.gpu):
            continue
        if phase == "compile" and skip_compile:
            continue
        emit(Phase(phase))
        try:
            if phase == "compile":
                with stages_entered(lambda stage: emit(Stage(stage))):
                    compiled = fn(case)
            else:
                compiled = None
                if os.environ.get(GPU_LOCK) and not ahead and not skip_compile:
                    build_ahead(repro, case)  # built outside the GPU turn
                run_launch(repro, case, emit)
        except Unsupported as exc:
            emit(Skipped(f"unsupported: {exc}"))
            return 0
        except BaseException as exc:
            emit(describe_exception(exc, phase))
            return 1
        if phase == "compile" and compiled is not None:
            facts = compiled if isinstance(compiled, Compiled) else compiled_facts(compiled)
            emit(CompiledEvent(facts.shared_bytes, facts.tmem_columns, facts.extra))
    emit(Done())
    return 0


def main(argv: list[str]) -> int:
    spec = ChildSpec.read(argv[0])
    faulthandler.enable()
    if spec.timeout:
        # Shortly before the parent kills a hang, say where it hangs.
        faulthandler.dump_traceback_later(max(spec.timeout * 0.9, spec.timeout - 5))
    with open(spec.report, "a", encoding="utf-8") as stream:
        return run(spec, EventWriter(stream))
