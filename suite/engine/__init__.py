"""The engine: a reproducer file becomes cases, each case runs isolated, is classified and recorded.

discover -> expand -> runner (isolate / warm + template + child) -> classify + signature
-> triage -> baseline -> record. ``session.run`` drives the whole flow for every command.

The front door: every package outside the engine imports what it uses from
``suite.engine`` itself, never from a module inside it (``tests/test_architecture.py``
checks it). A name is looked up on first use, so that a child importing one module of the
engine (``python -m suite.engine.child`` under a venv holding only triton) loads nothing
else. No exported name is also the name of a module of the engine (the import system
would set the module in its place).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Exported name -> (the module of the engine that defines it, its name there).
_EXPORTS: dict[str, tuple[str, str]] = {
    "Baseline": ("baseline", "Baseline"),
    "DEFAULT_BASELINE": ("baseline", "DEFAULT_BASELINE"),
    "Expectation": ("baseline", "Expectation"),
    "entry_problem": ("baseline", "entry_problem"),
    "exit_status": ("baseline", "exit_status"),
    "failure_of": ("baseline", "failure_of"),
    "range_problem": ("baseline", "range_problem"),
    "record_range": ("baseline", "record_range"),
    "write_entry": ("baseline", "write_entry"),
    "load_reproducers": ("child", "load_reproducers"),
    "DEFAULTS": ("defaults", "DEFAULTS"),
    "Work": ("defaults", "Work"),
    "choose_defaults": ("defaults", "choose_defaults"),
    "Described": ("described", "Described"),
    "describe": ("described", "describe"),
    "Found": ("discover", "Found"),
    "catalogue": ("discover", "catalogue"),
    "from_source": ("discover", "from_source"),
    "select": ("discover", "select"),
    "Environment": ("environment", "Environment"),
    "capture_environment": ("environment", "capture"),
    "gpu_arch": ("environment", "gpu_arch"),
    "CaseSpec": ("expand", "CaseSpec"),
    "case_id": ("expand", "case_id"),
    "check_targets": ("expand", "check_targets"),
    "expand_cases": ("expand", "expand"),
    "load_config_file": ("expand", "load_config_file"),
    "shard": ("expand", "shard"),
    "NEEDS_GPU": ("gpu_evidence", "NEEDS_GPU"),
    "command_there": ("gpu_evidence", "command_there"),
    "could_show": ("gpu_evidence", "could_show"),
    "needs_gpu": ("gpu_evidence", "needs_gpu"),
    "runtime_failure": ("gpu_evidence", "runtime_failure"),
    "Bounds": ("defaults", "Bounds"),
    "case_boundary": ("boundary", "boundary"),
    "COMPILE_LAUNCHES": ("launch", "COMPILE_LAUNCHES"),
    "GpuStopped": ("gpu_check", "GpuStopped"),
    "alone_on": ("gpu_check", "alone_on"),
    "context_check": ("gpu_check", "context_check"),
    "Exit": ("isolate", "Exit"),
    "run_isolated": ("isolate", "run_isolated"),
    "CaseResult": ("outcome", "CaseResult"),
    "FailureFacts": ("outcome", "FailureFacts"),
    "Outcome": ("outcome", "Outcome"),
    "RunNotes": ("outcome", "RunNotes"),
    "Signature": ("outcome", "Signature"),
    "TOOLCHAIN_GAP": ("outcome", "TOOLCHAIN_GAP"),
    "UNSUPPORTED": ("outcome", "UNSUPPORTED"),
    "EVENTS": ("protocol", "EVENTS"),
    "Error": ("protocol", "Error"),
    "FailureSite": ("protocol", "FailureSite"),
    "Unreadable": ("protocol", "Unreadable"),
    "typed": ("protocol", "typed"),
    "errors_in": ("protocol", "errors_in"),
    "parse_lines": ("protocol", "parse_lines"),
    "read_lines": ("protocol", "read_lines"),
    "RESULTS": ("record", "RESULTS"),
    "RunStore": ("record", "RunStore"),
    "safe_name": ("record", "safe_name"),
    "case_folder_name": ("record", "case_folder_name"),
    "unique_folder": ("record", "unique_folder"),
    "CaseInterrupted": ("runner", "CaseInterrupted"),
    "Execution": ("runner", "Execution"),
    "Workers": ("runner", "Workers"),
    "completed_stage": ("same_bug", "completed_stage"),
    "is_same_bug": ("same_bug", "same_bug"),
    "named_pass": ("same_bug", "named_pass"),
    "capture_variables": ("scrub", "capture_variables"),
    "home_to_tilde": ("scrub", "home_to_tilde"),
    "safe_facts": ("scrub", "safe_facts"),
    "scrub_secrets": ("scrub", "scrub_secrets"),
    "scrub_text": ("scrub", "scrub"),
    "Selection": ("session", "Selection"),
    "plan": ("session", "plan"),
    "run_one": ("session", "run_one"),
    "recorded_cases": ("session", "recorded_cases"),
    "visible_gpus": ("session", "visible_gpus"),
    "child_env": ("shim", "child_env"),
    "PTXAS_ERROR_LINE": ("signature", "PTXAS_ERROR_LINE"),
    "GPU_UNAVAILABLE": ("signature", "GPU_UNAVAILABLE_SIGNATURE"),
    "diagnostic_verdict": ("signature", "diagnostic_verdict"),
    "family_of": ("signature", "family_of"),
    "judge": ("signature", "judge"),
    "message_of": ("signature", "message_of"),
    "normalize": ("signature", "normalize"),
    "capture_source": ("sources", "capture"),
    "reproducer_for": ("sources", "reproducer_for"),
    "keeper_argv": ("template", "keeper_argv"),
    "keeper_report": ("template", "keeper_report"),
    "COMPILER_BUG": ("triage", "COMPILER_BUG"),
    "DRIVER_BUG": ("triage", "DRIVER_BUG"),
    "PTXAS_BUG": ("triage", "PTXAS_BUG"),
    "Triage": ("triage", "Triage"),
    "failure_text": ("triage", "failure_text"),
    "triage_family": ("triage", "family_of"),
    "triage_of": ("triage", "triage"),
}

__all__ = [
    "COMPILER_BUG",
    "COMPILE_LAUNCHES",
    "DEFAULTS",
    "DEFAULT_BASELINE",
    "DRIVER_BUG",
    "EVENTS",
    "GPU_UNAVAILABLE",
    "NEEDS_GPU",
    "PTXAS_BUG",
    "PTXAS_ERROR_LINE",
    "RESULTS",
    "TOOLCHAIN_GAP",
    "UNSUPPORTED",
    "Baseline",
    "Bounds",
    "CaseInterrupted",
    "CaseResult",
    "CaseSpec",
    "Described",
    "Environment",
    "Error",
    "Execution",
    "Exit",
    "Expectation",
    "FailureFacts",
    "FailureSite",
    "Found",
    "GpuStopped",
    "Outcome",
    "RunNotes",
    "RunStore",
    "Selection",
    "Signature",
    "Triage",
    "Unreadable",
    "Work",
    "Workers",
    "alone_on",
    "capture_environment",
    "capture_source",
    "capture_variables",
    "case_boundary",
    "case_folder_name",
    "case_id",
    "catalogue",
    "check_targets",
    "child_env",
    "choose_defaults",
    "command_there",
    "completed_stage",
    "context_check",
    "could_show",
    "describe",
    "diagnostic_verdict",
    "entry_problem",
    "errors_in",
    "exit_status",
    "expand_cases",
    "failure_of",
    "failure_text",
    "family_of",
    "from_source",
    "gpu_arch",
    "home_to_tilde",
    "is_same_bug",
    "judge",
    "keeper_argv",
    "keeper_report",
    "load_config_file",
    "load_reproducers",
    "message_of",
    "named_pass",
    "needs_gpu",
    "normalize",
    "parse_lines",
    "plan",
    "range_problem",
    "read_lines",
    "record_range",
    "recorded_cases",
    "reproducer_for",
    "run_isolated",
    "run_one",
    "runtime_failure",
    "safe_facts",
    "safe_name",
    "scrub_secrets",
    "scrub_text",
    "select",
    "shard",
    "triage_family",
    "triage_of",
    "typed",
    "unique_folder",
    "visible_gpus",
    "write_entry",
]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'suite.engine' has no attribute {name!r}")
    module, attribute = _EXPORTS[name]
    return getattr(importlib.import_module(f"suite.engine.{module}"), attribute)


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
    from suite.engine.boundary import boundary as case_boundary
    from suite.engine.child import load_reproducers
    from suite.engine.defaults import DEFAULTS, Bounds, Work, choose_defaults
    from suite.engine.described import Described, describe
    from suite.engine.discover import Found, catalogue, from_source, select
    from suite.engine.environment import Environment, gpu_arch
    from suite.engine.environment import capture as capture_environment
    from suite.engine.expand import CaseSpec, case_id, check_targets, load_config_file, shard
    from suite.engine.expand import expand as expand_cases
    from suite.engine.gpu_check import GpuStopped, alone_on, context_check
    from suite.engine.gpu_evidence import (
        NEEDS_GPU,
        command_there,
        could_show,
        needs_gpu,
        runtime_failure,
    )
    from suite.engine.isolate import Exit, run_isolated
    from suite.engine.launch import COMPILE_LAUNCHES
    from suite.engine.outcome import (
        TOOLCHAIN_GAP,
        UNSUPPORTED,
        CaseResult,
        FailureFacts,
        Outcome,
        RunNotes,
        Signature,
    )
    from suite.engine.protocol import (
        EVENTS,
        Error,
        FailureSite,
        Unreadable,
        errors_in,
        parse_lines,
        read_lines,
        typed,
    )
    from suite.engine.record import RESULTS, RunStore, case_folder_name, safe_name, unique_folder
    from suite.engine.runner import CaseInterrupted, Execution, Workers
    from suite.engine.same_bug import completed_stage, named_pass
    from suite.engine.same_bug import same_bug as is_same_bug
    from suite.engine.scrub import capture_variables, home_to_tilde, safe_facts, scrub_secrets
    from suite.engine.scrub import scrub as scrub_text
    from suite.engine.session import (
        Selection,
        plan,
        recorded_cases,
        run_one,
        visible_gpus,
    )
    from suite.engine.shim import child_env
    from suite.engine.signature import GPU_UNAVAILABLE_SIGNATURE as GPU_UNAVAILABLE
    from suite.engine.signature import (
        PTXAS_ERROR_LINE,
        diagnostic_verdict,
        family_of,
        judge,
        message_of,
        normalize,
    )
    from suite.engine.sources import capture as capture_source
    from suite.engine.sources import reproducer_for
    from suite.engine.template import keeper_argv, keeper_report
    from suite.engine.triage import COMPILER_BUG, DRIVER_BUG, PTXAS_BUG, Triage, failure_text
    from suite.engine.triage import family_of as triage_family
    from suite.engine.triage import triage as triage_of
