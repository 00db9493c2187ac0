"""What a report says about its subject: the title, the facts, the boundary, what upstream
knows. Everything here reads; nothing writes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from suite.engine import (
    Baseline,
    CaseResult,
    Environment,
    Expectation,
    Outcome,
    Triage,
    TriageKind,
    capture_variables,
    safe_facts,
    scrub_text,
)
from suite.failures.findings import Finding
from suite.report.evidence import error_line
from suite.report.verify import Verification
from suite.subject import Subject
from suite.toolchain.limits import UnknownTarget, limits_for

HEADLINE_CHARS = 90


def known_upstream(result: CaseResult, version: str, baseline: Baseline) -> Expectation | None:
    """The baseline entry that maps this failure to an upstream issue (a link to one)."""
    for expectation in baseline.expectations:
        if (
            expectation.upstream_issue
            and expectation.covers(result, version)
            and expectation.matches(result)
        ):
            return expectation
    return None


def baseline_note(result: CaseResult, version: str, baseline: Baseline) -> Expectation | None:
    """The baseline entry that knows this failure, link or not."""
    for expectation in baseline.expectations:
        if expectation.covers(result, version) and expectation.matches(result):
            return expectation
    return None


def headline(result: CaseResult) -> str:
    """The failure's real message for a title: the assertion, ``LLVM ERROR``, diagnostic or
    Python error, not ``PassManager::run failed`` (empty when there is none)."""
    text = str(result.facts.diagnostic or "")
    if not text and result.signature is not None:
        text = result.signature.key
    return text if len(text) <= HEADLINE_CHARS else text[: HEADLINE_CHARS - 1] + "…"


def _where(result: CaseResult) -> str:
    site = result.site
    if result.outcome is Outcome.PTXAS_ERROR:
        return f"ptxas {site.ptxas_code}" if site.ptxas_code else "ptxas"
    if site.pass_name:
        return site.pass_name
    if site.stage:
        return f"the {site.stage} stage"
    if site.phase == "launch":
        return "the kernel"  # "the kernel fails at launch on sm_90", "gives wrong results"
    return site.phase or "the compile"


def issue_title(
    result: CaseResult, repro_title: str, found_triage: Triage, release: str = ""
) -> str:
    """``<where> <what> on <target>: <real message> (triton <release>)``: where is the failing
    pass or stage; for a launch, whose failing pass no compile names, the reproducer's own
    title (what the kernel does, which construct fails) rather than "the kernel". The
    reproducer's title is the message when the failure printed none."""
    where = _where(result)
    what = {
        Outcome.COMPILER_ERROR: "fails",
        Outcome.PTXAS_ERROR: "rejects Triton's PTX",
        Outcome.CRASH: f"crashes ({result.site.signal or 'no report'})",
        Outcome.TIMEOUT: "hangs",
        Outcome.WRONG_RESULT: "gives wrong results",
        Outcome.RUNTIME_ERROR: "fails at launch",
    }.get(result.outcome, result.outcome.label)
    if result.outcome in (Outcome.CRASH, Outcome.TIMEOUT) and where.startswith("the "):
        where = where[4:]
    message = headline(result) or repro_title or result.repro
    tail = f" (triton {release})" if release else ""
    if found_triage.kind is TriageKind.DRIVER_BUG:
        return f"TMA copy {what} on {result.target}: {message}{tail}"
    if where == "the kernel" and repro_title and repro_title != message:
        return f"{repro_title}: {what} on {result.target}: {message}{tail}"
    return f"{where} {what} on {result.target}: {message}{tail}"


def fixed_upstream_in(subject: Subject, current: Verification | None, baseline: Baseline) -> str:
    """The release that no longer fails, when a newer release than the failing one is known
    not to: bisect's first good release, the ``fixed_in`` of the baseline entry that knows
    the bug fixed on this machine's Triton, or that Triton itself, where ``repro.py`` ran
    and did not reproduce. '' when the newest release tried still fails (or none was)."""
    finding = subject.finding
    if current is not None and current.exit_status is not None:
        if current.ok:  # it still reproduces there: not fixed there, nor before
            first_good = finding.first_good if finding is not None else None
            if first_good and _release_order(first_good) > _release_order(current.version):
                return first_good  # this machine's Triton is older than bisect's fix
            return ""
        if current.exit_status == 0 and current.signature is None:
            known = finding.first_good if finding is not None else None
            if not known:
                known = _baseline_fix(subject.result, current.version, baseline)
            if known and _release_order(known) <= _release_order(current.version):
                return known
            return f"{current.version} or earlier (not bisected)"
        # Refused there for another reason: that release cannot show the fix; bisect can.
    if finding is not None and finding.first_good:
        newest = max(finding.signatures or {"": ""}, key=_release_order)
        if not newest or _release_order(finding.first_good) > _release_order(newest):
            return finding.first_good
    return ""


def _baseline_fix(result: CaseResult, version: str, baseline: Baseline) -> str:
    """The ``fixed_in`` of the baseline entry that says this failure is fixed on
    ``version`` ('' when none does)."""
    return next(
        (
            e.fixed_in
            for e in baseline.expectations
            if e.expects_fix(result, version) and e.matches(result)
        ),
        "",
    )


def unchecked_newer(subject: Subject, current: Verification | None) -> str:
    """The newest release known here (this interpreter's, a cached release venv's, one the
    finding ran on) when it is newer than the failing one and no newer release was tried
    (no bisect, no run on this machine's Triton); '' otherwise."""
    from suite.toolchain.venvs import cached_versions

    version = subject.triton_version
    finding = subject.finding
    tried = list(finding.signatures or {}) if finding is not None else []
    if finding is not None and finding.first_good:
        tried.append(finding.first_good)
    if current is not None and current.exit_status is not None:
        tried.append(current.version)
    if any(_release_order(r) > _release_order(version) for r in tried):
        return ""
    known = [version, *tried, *cached_versions()]
    try:
        import triton

        known.append(str(triton.__version__))
    except ImportError:
        pass
    newest = max(known, key=_release_order)
    return newest if _release_order(newest) > _release_order(version) else ""


def _release_order(release: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", release.split("+")[0])[:3])


def _boundary_rows(finding: Finding | None) -> list[dict[str, str]]:
    if finding is None:
        return []
    rows = []
    for step in finding.boundary:
        if step.passed:
            verdict = "passes"
        elif step.same_signature:
            verdict = "same failure"
        else:
            verdict = f"other failure: {step.signature or step.outcome}"
        rows.append(
            {
                "param": step.param,
                "change": f"{step.value_from} → {step.value_to}",
                "outcome": step.outcome,
                "verdict": verdict,
            }
        )
    return rows


def _passing_steps(finding: Finding | None) -> list[str]:
    if finding is None:
        return []
    return [f"{s.param}={s.value_to}" for s in finding.boundary if s.passed]


def _facts(environment: Environment, result: CaseResult) -> list[tuple[str, str]]:
    env = safe_facts(environment.to_json())
    facts: list[tuple[str, str]] = [("Triton", str(env.get("triton") or "unknown"))]
    if env.get("triton_commit"):
        facts.append(("Triton commit", str(env["triton_commit"])))
    if result.gpu or env.get("gpu"):
        gpu = env.get("gpu") or "unknown"
        facts.append(("GPU", f"{gpu} (compute capability {env.get('gpu_arch') or '?'})"))
    else:
        facts.append(("GPU", f"none needed: compile-only for {result.target}"))
    if env.get("driver"):
        facts.append(("Driver", str(env["driver"])))
    if env.get("cuda_driver_api"):
        facts.append(("CUDA (driver API)", str(env["cuda_driver_api"])))
    for name, tool in sorted((env.get("ptxas") or {}).items()):
        if isinstance(tool, Mapping):
            facts.append((f"{name} (bundled)", str(tool.get("version") or "?")))
    if result.metrics.get("nvcc_version"):
        facts.append(("nvcc", str(result.metrics["nvcc_version"])))
    facts.append(("Python", str(env.get("python") or "?")))
    facts.append(("OS", str(env.get("platform") or "?")))
    return facts


def common_context(
    subject: Subject, found_triage: Triage, expected: str, repro_title: str
) -> dict[str, Any]:
    """What every template of a report is given about its subject."""
    result = subject.result
    record = subject.finding_record
    finding = subject.finding
    try:
        arch_name = limits_for(result.target).ptxas_arch
    except UnknownTarget:
        arch_name = result.target
    return {
        "report_id": subject.report_id,
        "repro": result.repro,
        "repro_title": repro_title,
        "case_id": result.case_id,
        "target": result.target,
        "arch_name": arch_name,
        "config": result.config,
        "config_text": ", ".join(f"{k}={v}" for k, v in result.config.items()),
        "outcome": result.outcome.label,
        "signature": expected,
        "message": scrub_text(result.message),
        "error_line": scrub_text(error_line(result)),
        "detail": result.detail(),
        "triage": found_triage,
        "triton_version": subject.triton_version,
        "facts": _facts(subject.environment, result),
        "variables_run": capture_variables(subject.environment.triton_env),
        "variables_now": capture_variables(),
        "boundary": _boundary_rows(finding),
        "passing_steps": _passing_steps(finding),
        "finding": finding,
        "first_bad": record.get("first_bad") or "unknown",
        "first_good": record.get("first_good") or "unknown",
        "targets_seen": list(finding.targets) if finding else [result.target],
        "failing_count": len(finding.failing_configs) if finding else 1,
        "notes": subject.notes,
        "origin": subject.origin,
    }
