"""A report's evidence, gathered by named steps before anything is rendered.

What ``repro report`` says comes partly from running things again: the finding's minimal
config (``rerun``), the reproducer up to its ``triton.compile`` call and its launch's closure
(``standalone``: ``repro.py`` and ``snippet.py``), ``repro.py`` in a clean venv of the release
(``verify``, with ``--verify``) and under this machine's Triton (``current``), the failing
launch's variants on the GPU here (``variants``), the failing config and the variant that
avoids it compiled with per-pass dumps (``explain``). :data:`STEPS` lists them in order, as
the reducer lists its passes; each answers what it ran again (nothing, when it read what
was there), kept in :attr:`Evidence.ran` and in ``report.json`` (``gathered``).

:func:`gather` fills one frozen :class:`Evidence` record (and the draft's attached files);
:mod:`suite.report.report` renders the bodies and ``report.json`` from it and the draft,
running nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from jinja2 import Environment

from suite.engine import (
    Baseline,
    CaseResult,
    Expectation,
    Outcome,
    Triage,
    TriageKind,
    command_there,
    gpu_arch,
    home_to_tilde,
    reproducer_family,
    runtime_failure,
    scrub_text,
    triage_of,
)
from suite.errors import UsageError
from suite.report.context import (
    baseline_note,
    fixed_upstream_in,
    issue_title,
    known_upstream,
    unchecked_newer,
)
from suite.report.evidence import captured_output, explained, mlir_reproducers
from suite.report.folder import Draft
from suite.report.launch_repro import LaunchNotCarried, launch_form, no_launch
from suite.report.reduced import ORIGINAL_NAME, Reduced, reduced_of
from suite.report.standalone import (
    CompileCall,
    capture_compile,
    minimal_snippet,
    over_glance,
    repro_script,
)
from suite.report.variants import (
    VARIANTS_FILE,
    VariantTable,
    explain_variant,
    passing_variant,
    variants_for,
)
from suite.report.verify import Verification, check_current, verify
from suite.subject import Subject, interpreter_for, recapture
from suite.toolchain.limits import limits_for

#: The output of ``python repro.py`` under ``--verify``, attached in full.
VERIFIED_OUTPUT = "repro-output.txt"
#: The CUDA reproducers run on a GPU: there is no ``repro.py`` for them.
CUDA_FAMILY = "cuda-tma"
#: The PTX the ptxas differential gave every build, attached to an NVIDIA report.
DIFFERENTIAL_PTX = "kernel.ptx"


@dataclass(frozen=True)
class Ran:
    """What one gathering step ran again to learn what the report says."""

    step: str
    ran: str = ""  # what it ran again; "" when it only read what was there
    said: str = ""  # what came of it, where the step says

    def to_json(self) -> dict[str, str | None]:
        return {"step": self.step, "ran": self.ran or None, "said": self.said or None}


@dataclass(frozen=True)
class Standalone:
    """``repro.py`` and ``snippet.py``, or why there are none; what running them said."""

    call: CompileCall | None
    why_not: str = ""
    verification: Verification | None = None  # --verify: in a clean venv of the release
    current: Verification | None = None  # under this machine's (newer) Triton
    reduced: Reduced | None = None  # ``repro reduce``'s kernel, the one captured


@dataclass(frozen=True)
class ReportDecision:
    """What the report is: its kind, status, the body a user files, and why."""

    kind: str
    status: str
    body_file: str
    fixed_in: str
    upstream: str  # the upstream issue the baseline maps the failure to ('' for none)


@dataclass(frozen=True)
class Evidence:
    """All a report says about its subject, gathered: what renders it reads, with nothing
    left to run."""

    triage: Triage
    family: str
    expected: str  # the signature, or the outcome's label
    title: str  # the issue's title ('' for a user error)
    standalone: Standalone
    decision: ReportDecision
    variants: VariantTable | None
    baseline_entry: Expectation | None  # the baseline's entry that knows the failure
    ran: tuple[Ran, ...]


@dataclass
class Gathering:
    """What the steps read and fill in, in order; :meth:`evidence` freezes it."""

    subject: Subject
    draft: Draft
    env: Environment
    baseline: Baseline
    verify_release: bool
    launch_arch: int | None
    triage: Triage
    family: str
    expected: str
    title: str = ""
    standalone: Standalone = Standalone(None)
    decision: ReportDecision = ReportDecision("explanation", "user-error", "", "", "")
    variants: VariantTable | None = None
    baseline_entry: Expectation | None = None
    ran: list[Ran] = field(default_factory=list)

    def evidence(self) -> Evidence:
        return Evidence(
            self.triage,
            self.family,
            self.expected,
            self.title,
            self.standalone,
            self.decision,
            self.variants,
            self.baseline_entry,
            tuple(self.ran),
        )


@dataclass(frozen=True)
class Step:
    """One named gathering step: it fills in the gathering and answers what it ran again."""

    name: str
    run: Callable[[Gathering], Ran]
    bugs_only: bool = True  # a user error's explanation needs the attachments alone


def gather(
    subject: Subject,
    draft: Draft,
    env: Environment,
    baseline: Baseline,
    verify_release: bool,
    launch_arch: int | None,
    reran: Ran | None = None,
) -> Evidence:
    """Check that there is something to report, then run :data:`STEPS` in order (the
    attachments alone for a user error); ``reran``: what the command's ``rerun`` did."""
    subject.load_reproducer()
    found_triage, family = reportable(subject)
    result = subject.result
    expected = result.signature.text if result.signature else result.outcome.label
    state = Gathering(
        subject, draft, env, baseline, verify_release, launch_arch, found_triage, family, expected
    )
    if reran is not None:
        state.ran.append(reran)
    if found_triage.is_bug:
        repro_title = subject.found.repro.title if subject.found else result.repro
        state.title = issue_title(result, repro_title, found_triage, subject.triton_version)
    for step in STEPS:
        if found_triage.is_bug or not step.bugs_only:
            state.ran.append(step.run(state))
    return state.evidence()


def rerun(subject: Subject, python: str | None, work: Path, skip: bool) -> Ran:
    """Rerun: the reproducer loaded as it ran, then a finding's minimal config again, to
    capture its output and MLIR reproducer (:func:`suite.subject.recapture`;
    :class:`suite.subject.NotReproduced` when it does not fail the same way)."""
    subject.load_reproducer()
    if skip:
        return Ran("rerun", said="--no-rerun: the finding's record as it was")
    if subject.finding is None or not subject.is_finding:
        return Ran("rerun", said="a run's result, as it was recorded")
    interpreter = interpreter_for(subject.environment, python)
    before = len(subject.notes)
    recapture(subject, python, work)
    ran = ""
    if interpreter is not None and subject.found is not None:
        ran = f"the minimal config, under {home_to_tilde(interpreter)}"
    return Ran("rerun", ran, "; ".join(subject.notes[before:]))


def reportable(subject: Subject) -> tuple[Triage, str]:
    """Check: a failure to report (never a harness error or a pass), its triage and family."""
    result = subject.result
    if result.outcome is Outcome.HARNESS_ERROR:
        raise UsageError(
            f"{result.case_id} is a harness error, not a compiler failure: nothing to report "
            f"upstream ({result.message})"
        )
    family = subject.found.repro.family if subject.found else reproducer_family(result)
    found_triage = triage_of(result, family=family)
    if found_triage is None:
        raise UsageError(
            f"{result.case_id} did not fail ({result.outcome.label}): nothing to report"
        )
    return found_triage, family


def attach(state: Gathering) -> Ran:
    """Attach: the files beside the body that a maintainer opens (the case's output, the
    finding's record, for a bug the MLIR reproducers Triton wrote, the ptxas differential's
    PTX). Further attachments go here."""
    draft, subject = state.draft, state.subject
    output = scrub_text(captured_output(subject.result))
    if output:
        draft.put("output.txt", output + "\n")
    if subject.finding_record:
        draft.put("finding.json", json.dumps(subject.finding_record, indent=2, default=str) + "\n")
    if state.triage.is_bug:
        for name, path in mlir_reproducers(subject.result).items():
            draft.attach(name, path)
    ptx = differential_ptx(subject.result)
    if ptx is not None:
        draft.attach(DIFFERENTIAL_PTX, ptx)
    return Ran("attach")


def differential_ptx(result: CaseResult) -> Path | None:
    """The PTX file of the differential's bundled relaunch, where it is still there."""
    runs = (result.notes.ptxas or {}).get("runs") or []
    first = runs[0] if isinstance(runs, list) and runs else {}
    path = Path(str(first.get("ptx", ""))) if isinstance(first, dict) else None
    return path if path is not None and path.name and path.is_file() else None


def standalone(state: Gathering) -> Ran:
    """Standalone: ``repro.py`` and ``snippet.py`` from the compile call (and for a runtime
    failure the launch) captured in a child, or why there are none."""
    subject = state.subject
    interpreter = home_to_tilde(interpreter_for(subject.environment, None) or "")
    if state.family == CUDA_FAMILY:
        found = Standalone(None, "the CUDA reproducers run on a GPU: follow the steps in nvidia.md")
        return _no_script(state, found, "")
    if subject.found is None:
        notes = "; ".join(subject.notes)
        found = Standalone(None, f"the reproducer could not be loaded again ({notes})")
        return _no_script(state, found, "")
    found = capture_standalone(subject, subject.found.source)
    ran = [f"the reproducer up to its compile call, in a child under {interpreter}"]
    launch = None
    if found.call is not None:
        reduced = found.reduced
        source = reduced.source if reduced is not None else subject.found.source
        python = interpreter_for(subject.environment, None)
        try:
            launch = launch_form(
                state.env, subject.result, source, state.expected, state.title, python,
                subject.triton_version,
            )  # fmt: skip
        except LaunchNotCarried as exc:
            found = Standalone(None, str(exc))
            ran.append("the launch's closure, in a child")
        else:
            if launch is not None:
                ran.append("the launch's closure, in a child")
            elif runtime_failure(state.expected):
                # A compile-only script cannot show a fault that only a launch shows.
                found = Standalone(None, no_launch(subject.result.repro))
    if found.call is None:
        return _no_script(state, found, "; ".join(ran))
    _write_scripts(state, found, launch)
    state.standalone = found
    return Ran("standalone", "; ".join(ran), "repro.py" + (" (launches)" if launch else ""))


def _no_script(state: Gathering, found: Standalone, ran: str) -> Ran:
    state.subject.notes.append(f"repro.py not written: {found.why_not}")
    state.standalone = found
    return Ran("standalone", ran, f"no repro.py: {found.why_not}")


def _write_scripts(state: Gathering, found: Standalone, launch: str | None) -> None:
    """``repro.py`` (the launch form when there is one), ``snippet.py``, and the kernel
    ``repro reduce`` started from."""
    draft, subject = state.draft, state.subject
    assert found.call is not None
    if found.reduced is not None:
        draft.put(ORIGINAL_NAME, found.reduced.original.read_text(), secret_safe=False)
    made_by = f"report {subject.report_id}"
    script = launch or repro_script(
        state.env, found.call, state.expected, state.title, made_by, subject.triton_version,
        subject.result.target,
    )  # fmt: skip
    draft.put("repro.py", script, secret_safe=False)
    if too_long := over_glance(script, "launch" if launch else "compile"):
        subject.notes.append(too_long)
    draft.put("snippet.py", minimal_snippet(found.call), secret_safe=False)


def verify_step(state: Gathering) -> Ran:
    """Verify (``--verify``): ``repro.py`` in a clean venv holding the release alone."""
    if not state.verify_release:
        return Ran("verify", said="not asked (--verify)")
    found, version = state.standalone, state.subject.triton_version
    if found.call is None:
        why = f"Not verified: {found.why_not}"
        state.standalone = replace(found, verification=Verification(False, version, why))
        return Ran("verify", said=why)
    if unseen_here(state.subject):
        # A compile cannot show a runtime failure: no verification, no "fixed upstream".
        return Ran("verify", said="not verified: only a launch on a GPU of its target shows it")
    verification = verify(state.draft.folder / "repro.py", version, state.expected)
    if verification.output:
        state.draft.put(VERIFIED_OUTPUT, verification.output + "\n")
    state.standalone = replace(found, verification=verification)
    return Ran("verify", f"repro.py in a clean venv of triton {version}", verification.line)


def current_step(state: Gathering) -> Ran:
    """Current: ``repro.py`` under this machine's Triton, when that is another release:
    whether it still fails decides "fixed upstream"."""
    found = state.standalone
    if found.call is None or unseen_here(state.subject):
        return Ran("current")
    current = check_current(
        state.draft.folder / "repro.py", state.subject.triton_version, state.expected
    )
    if current is None:
        return Ran("current", said="this machine's Triton is the release itself")
    state.standalone = replace(found, current=current)
    return Ran("current", f"repro.py under triton {current.version} (this machine's)", current.line)


def decide_step(state: Gathering) -> Ran:
    """Decide: what the report is (:func:`decide`), and the baseline's entry for it."""
    subject = state.subject
    state.decision = decide(subject, state.triage, state.standalone, state.baseline)
    state.baseline_entry = baseline_note(subject.result, subject.triton_version, state.baseline)
    return Ran("decide", said=f"{state.decision.kind}: {state.decision.status}")


def variants_step(state: Gathering) -> Ran:
    """Variants: a runtime failure's variants launched on the GPU here, one knob changed at
    a time (``variants.json`` attached); without one the table says what it needs."""
    subject = state.subject
    table = variants_for(subject, state.launch_arch, subject_name(subject.result))
    state.variants = table
    if table is None:
        return Ran("variants")
    if not table.rows:
        return Ran("variants", said=table.missing)
    state.draft.put(VARIANTS_FILE, json.dumps(table.to_json(), indent=2, default=str) + "\n")
    return Ran("variants", f"{len(table.rows)} variants of the failing launch, launched here")


def explain_step(state: Gathering) -> Ran:
    """Explain: the failing config and the variant that avoids it compiled with per-pass
    dumps, unless ``repro explain`` already left that comparison in the folder."""
    change = passing_variant(state.subject, state.variants)
    if not change:
        return Ran("explain")
    if explained(state.draft.folder) is not None:
        return Ran("explain", said="repro explain's comparison, as it was")
    explain_variant(state.subject, change, state.draft.folder / "explain")
    shown = ", ".join(f"{k}={v}" for k, v in change.items())
    return Ran("explain", f"the failing config and {shown}, compiled with per-pass dumps")


#: The gathering steps, in order: each reads what those before it found.
STEPS: tuple[Step, ...] = (
    Step("attach", attach, bugs_only=False),
    Step("standalone", standalone),
    Step("verify", verify_step),
    Step("current", current_step),
    Step("decide", decide_step),
    Step("variants", variants_step),
    Step("explain", explain_step),
)


def subject_name(result: CaseResult) -> str:
    """How a command names the finding of ``result``: ``<repro>-<digest>``."""
    return f"{result.repro}-{result.signature.digest}" if result.signature else result.repro


def unseen_here(subject: Subject) -> bool:
    """Whether the subject is a runtime failure that this machine (no GPU of its target)
    cannot show."""
    result = subject.result
    signature = result.signature.text if result.signature else None
    return runtime_failure(signature) and gpu_arch() != limits_for(result.target).arch


def capture_standalone(subject: Subject, written: dict[str, str]) -> Standalone:
    """The compile call of the kernel ``repro reduce`` left for the finding, when it did and
    that call can still be captured; else of the reproducer as it was ``written``."""
    interpreter = interpreter_for(subject.environment, None)
    finding_id = subject.home.stem if subject.home is not None and subject.is_finding else ""
    reduced = reduced_of(subject.finding_record, finding_id)
    if reduced is not None:
        call, _ = capture_compile(subject.result, source=reduced.source, python=interpreter)
        if call is not None:
            return Standalone(call, reduced=reduced)
        subject.notes.append(f"the reduced kernel {reduced.path} could not be captured")
    call, why_not = capture_compile(subject.result, source=written, python=interpreter)
    return Standalone(call, why_not)


def decide(
    subject: Subject, found_triage: Triage, standalone: Standalone, baseline: Baseline
) -> ReportDecision:
    """Decide: an issue, a comment on a known issue (or on a fixed bug), an NVIDIA report;
    ``ready`` only when verified; a bug fixed upstream is never ready to file."""
    result = subject.result
    status = "unverified"
    if standalone.verification is not None:
        status = "ready" if standalone.verification.ok else "not-verified"
    current = standalone.current
    fixed_in = fixed_upstream_in(subject, current, baseline)
    if fixed_in:
        status = f"fixed upstream in {fixed_in}: do not file"
    elif current is not None and not current.ok and current.exit_status not in (None, 0):
        subject.notes.append(
            f"triton {current.version} refuses the kernel for another reason: it cannot show "
            "the fix (`repro bisect` tries every release)"
        )
    newest = unchecked_newer(subject, current) if status == "ready" else ""
    if newest:
        status = (
            f"not checked on the newest release {newest}: run `repro bisect` where releases "
            "can be installed"
        )
    if unseen_here(subject):
        fixed_in = ""
        status = command_there(f"repro report {subject_name(result)} --verify", result.target)
    known = known_upstream(result, subject.triton_version, baseline)
    upstream = known.upstream if known else ""
    kind, body_file = "issue", ""
    if fixed_in or known is not None:
        kind, body_file = "comment", "comment.md"
    elif found_triage.kind is TriageKind.COMPILER_BUG:
        body_file = "issue.md"
    if not fixed_in and found_triage.kind in (TriageKind.DRIVER_BUG, TriageKind.PTXAS_BUG):
        kind, body_file = "nvidia", body_file or "nvidia.md"
    return ReportDecision(kind, status, body_file, fixed_in, upstream)
