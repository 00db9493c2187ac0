"""The engine: a reproducer file becomes cases, each case runs isolated, is classified and recorded.

discover -> expand -> runner (isolate / warm + template + child) -> classify + signature
-> triage -> baseline -> record. ``session.run`` drives the whole flow for every command.

The front door: every package outside the engine imports what it uses from
``suite.engine`` itself, never from a module inside it (``tests/test_architecture.py``
checks it). A name is looked up on first use, so that a child importing one module of the
engine (``python -m suite.children case`` under a venv holding only triton) loads nothing
else. No exported name is also the name of a module of the engine (the import system
would set the module in its place), and each keeps the name it has where it is defined.

The imports under ``TYPE_CHECKING`` below are the one list of what the door exports: the type
checker reads them as they are written, and :func:`__getattr__` reads the same statements
from this file (as SPEC 1's ``lazy_loader.attach_stub`` reads a stub) to load a name's module
on first use.
"""

from __future__ import annotations

import ast
import importlib
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from suite.engine.baseline import (
        DEFAULT_BASELINE,
        Baseline,
        Expectation,
        entry_problem,
        exit_status,
        failure_of,
        range_problem,
        record_range,
        write_entry,
    )
    from suite.engine.boundary import case_boundary
    from suite.engine.child import load_reproducers
    from suite.engine.defaults import DEFAULTS, Bounds, Work, choose_defaults
    from suite.engine.described import Described, describe
    from suite.engine.discover import Found, catalogue, from_source, select
    from suite.engine.environment import Environment, capture_environment, gpu_arch, local_gpu_ids
    from suite.engine.expand import (
        CaseSpec,
        case_id,
        check_targets,
        expand_cases,
        load_config_file,
        shard,
    )
    from suite.engine.gpu_check import (
        GpuStopped,
        alone_on,
        check_after,
        context_check,
        first_visible_gpu,
        machine_lock,
    )
    from suite.engine.gpu_evidence import (
        NEEDS_GPU,
        command_there,
        could_show,
        needs_gpu,
        runtime_failure,
    )
    from suite.engine.isolate import Exit, run_isolated
    from suite.engine.launch import COMPILE_LAUNCHES, GPU_LOCK, hold_to_exit
    from suite.engine.outcome import (
        TOOLCHAIN_GAP,
        UNSUPPORTED,
        CaseResult,
        FailureFacts,
        Outcome,
        RunNotes,
        Signature,
        Verdict,
        site_and_facts,
    )
    from suite.engine.protocol import EVENTS, Error, FailureSite, errors_in
    from suite.engine.record import RESULTS, RunStore, case_folder_name, safe_name, unique_folder
    from suite.engine.runner import CaseInterrupted, Execution, Workers
    from suite.engine.same_bug import completed_stage, is_same_bug, named_pass
    from suite.engine.scrub import (
        capture_variables,
        home_to_tilde,
        safe_facts,
        scrub_secrets,
        scrub_text,
    )
    from suite.engine.session import Selection, plan, recorded_cases, run_one, visible_gpus
    from suite.engine.shim import child_env
    from suite.engine.signature import (
        GPU_UNAVAILABLE_SIGNATURE,
        PTXAS_ERROR_LINE,
        classify_diagnostic,
        classify_ending,
        family_of,
        message_of,
        normalize,
    )
    from suite.engine.sources import capture_source, reproducer_for
    from suite.engine.triage import (
        Triage,
        TriageKind,
        failure_text,
        reproducer_family,
        triage_of,
    )
    from suite.engine.wire import JsonRecord, Message, Unreadable, json_object, read_lines


@cache
def _exports() -> dict[str, str]:
    """Each exported name -> the module of the engine that defines it: the imports under
    ``TYPE_CHECKING`` above, read from this file."""
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    (listed,) = [
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    ]
    return {
        alias.name: node.module.rsplit(".", 1)[1]
        for node in listed.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


def __getattr__(name: str) -> Any:
    if name == "__all__":
        return sorted(_exports())
    if name not in _exports():
        raise AttributeError(f"module 'suite.engine' has no attribute {name!r}")
    return getattr(importlib.import_module(f"suite.engine.{_exports()[name]}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_exports()])
