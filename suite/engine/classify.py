"""Turn how a child ended into an outcome and a signature.

The child reports facts (the phase it reached, the exception it saw, the
compile metadata); the parent adds what only it knows (the exit status, the
signal, a timeout, the memory cap) and the stderr it captured. The outcome and
the signature come from :mod:`suite.engine.signature` (which also reads what a
standalone ``repro.py`` printed); this module adds the suite's own checks (a
skip, the memory cap, the compile's metadata against the target's limits).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from suite.engine.isolate import Exit
from suite.engine.outcome import FailureFacts, Outcome, Signature, site_and_facts
from suite.engine.protocol import ChildReport, CompiledEvent, FailureSite
from suite.engine.signature import SignatureParts, classify_diagnostic, classify_ending, compose
from suite.toolchain.limits import TargetLimits


@dataclass(frozen=True)
class Classification:
    outcome: Outcome
    signature: Signature | None = None
    message: str = ""
    site: FailureSite = field(default_factory=FailureSite)
    facts: FailureFacts = field(default_factory=FailureFacts)
    metrics: dict[str, Any] = field(default_factory=dict)


def classify(log: ChildReport, exit: Exit, limits: TargetLimits) -> Classification:
    """The one outcome for a case, with its signature when it is a failure."""
    phase = log.phase
    compiled = log.compiled or CompiledEvent()
    metrics = _metrics(compiled)
    stderr = exit.stderr.text

    # Exit status and signal decide: the child's word (skipped, done) counts only from a
    # child that then exited 0. A "done" followed by a death is that death, never a pass.
    clean_exit = exit.returncode == 0 and not (exit.timed_out or exit.memory_exceeded)
    skipped = log.skipped if clean_exit else None
    if skipped is not None:
        gap = FailureFacts(toolchain_gap=skipped.toolchain_gap or None)
        return Classification(Outcome.SKIPPED, message=skipped.reason, facts=gap)
    if exit.memory_exceeded and not exit.timed_out:
        mib = exit.peak_memory_bytes >> 20
        return Classification(
            Outcome.CRASH,
            Signature(compose(["crash", "memory-cap", phase])),
            f"killed at the memory cap ({mib} MiB held) in {phase}",
            FailureSite(phase=phase, signal="SIGKILL"),
            FailureFacts(memory_cap=True),
            metrics,
        )
    hang = _hang(log, exit, phase)
    if hang is not None:
        return hang
    verdict = classify_ending(
        log.error,
        stderr=stderr,
        phase=phase,
        returncode=exit.returncode,
        signal_name=exit.signal_name,
        timed_out=exit.timed_out,
        done=log.done and clean_exit,
        entered_stage=log.stage,
    )
    if verdict is not None:
        classified = _classification(verdict, metrics)
        running = log.open_launch
        if phase == "launch" and running is not None:
            facts = replace(classified.facts, launch=running.launch)
            return replace(classified, facts=facts)
        return classified
    wrong = log.wrong
    if wrong is not None:
        return Classification(
            Outcome.WRONG_RESULT,
            Signature(compose(["wrong-result", "launch", wrong.oracle], wrong.difference)),
            f"{wrong.oracle}: {wrong.message}",
            FailureSite(phase="launch"),
            FailureFacts(oracle=wrong.oracle, difference=wrong.difference),
            metrics,
        )
    over = _over_limit(compiled, limits)
    if over:
        resource, used, limit = over
        return Classification(
            Outcome.RESOURCE_LIMIT,
            Signature(compose(["resource-limit", resource])),
            f"{resource}: {used} needed, the {limits.name} limit is {limit}",
            facts=FailureFacts(resource=resource, used=used, limit=limit, limit_target=limits.name),
            metrics=metrics,
        )
    diagnostic = classify_diagnostic(stderr)
    if diagnostic is not None:
        return _classification(diagnostic, metrics)
    return Classification(Outcome.PASSED, metrics=metrics)


def _hang(log: ChildReport, exit: Exit, phase: str) -> Classification | None:
    """A launch killed at its bound (the hang oracle's, or the case's timeout): a hang in
    that launch. The parent killed it, so the parent's own record says so."""
    running = log.open_launch
    if not exit.timed_out or phase != "launch" or running is None:
        return None
    bound = f"{running.bound_s:g} s" if running.bound_s else "the case's timeout"
    return Classification(
        Outcome.TIMEOUT,
        Signature(compose(["timeout", "launch", "hang"], running.role)),
        f"hang: launch '{running.launch}' did not finish within {bound} (killed)",
        FailureSite(phase="launch"),
        FailureFacts(oracle="hang", launch=running.launch, bound_s=running.bound_s),
    )


def _classification(verdict: SignatureParts, metrics: dict[str, Any]) -> Classification:
    signature = verdict.signature
    site, facts = site_and_facts(verdict.detail)
    return Classification(
        Outcome.from_label(verdict.outcome),
        Signature(signature) if signature else None,
        verdict.message,
        site,
        facts,
        metrics,
    )


def _metrics(compiled: CompiledEvent) -> dict[str, Any]:
    sizes = {"shared_bytes": compiled.shared_bytes, "tmem_columns": compiled.tmem_columns}
    metrics: dict[str, Any] = {k: v for k, v in sizes.items() if v is not None}
    metrics.update(compiled.extra)
    return metrics


def _over_limit(compiled: CompiledEvent, limits: TargetLimits) -> tuple[str, int, int] | None:
    shared = compiled.shared_bytes
    if shared is not None and shared > limits.shared_bytes:
        return ("shared-memory", shared, limits.shared_bytes)
    tmem = compiled.tmem_columns
    if tmem and limits.tmem_columns is not None and tmem > limits.tmem_columns:
        return ("tensor-memory", tmem, limits.tmem_columns)
    return None
