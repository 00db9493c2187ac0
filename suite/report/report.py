"""Upstream-ready reports of one failure: a Triton issue, an NVIDIA report, or an explanation.

``repro report`` (:mod:`suite.cli.report`) takes a finding of ``repro explore`` or one
result of ``repro run`` and writes ``<output>/<id>/``:

- ``issue.md``: Triton's bug template ("Describe the bug" with the standalone reproducer
  inline, the observed error and the full output in a ``<details>`` block, the boundary
  table, the first bad and first good release; "Environment details");
- ``repro.py``: the kernel, the minimal config and the exact ``triton.compile`` call for the
  target; needs only triton; exits 1 exactly when the bug reproduces and prints the
  signature, computed as the suite computes it;
- the MLIR reproducers Triton wrote for the case (``mlir-reproducer*``) and ``output.txt``;
- ``nvidia.md`` for ptxas and driver problems (summary, environment, steps, expected and
  actual, the ptxas invocation or the descriptor);
- ``explanation.md`` instead of any of those when :func:`suite.engine.triage.triage_of` calls it a
  user error (a documented rule is broken: never an upstream issue);
- ``comment.md`` instead of ``issue.md`` when the baseline maps the signature to a known
  upstream issue;
- ``report.json`` with the ``status``: ``ready`` only when ``--verify`` ran ``repro.py`` in a
  clean venv holding the affected Triton release alone and saw the bug.

:func:`write_report` is a short list of named steps: check that there is something to
report, attach the evidence, write and verify ``repro.py``, decide what kind of report it
is, render its bodies, record ``report.json``. The folder (:mod:`suite.report.folder`) is
written whole or not at all; the context the templates read is :mod:`suite.report.context`,
the case's leftovers are read by :mod:`suite.report.evidence`, the subject comes from
:mod:`suite.subject`.

Everything rendered goes through :func:`scrub` (secret-looking variables and values dropped,
the home folder shown as ``~``); code fences are longer than any backtick run they hold;
long output keeps its head and tail and says how many lines were cut. Templates are Jinja2
files under ``suite/templates/`` (``StrictUndefined``; autoescape for HTML templates only), each
replaceable from a folder given with ``--templates``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment

from suite.engine import (
    Baseline,
    CaseResult,
    Outcome,
    Triage,
    TriageKind,
    capture_source,
    command_there,
    failure_text,
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
    common_context,
    fixed_upstream_in,
    headline,
    issue_title,
    known_upstream,
    unchecked_newer,
)
from suite.report.evidence import (
    MLIR_REPRODUCER,
    captured_output,
    explained,
    ir_replay,
    mlir_reproducers,
    program_record,
    ptxas_invocation,
)
from suite.report.folder import Draft, drafted
from suite.report.launch_repro import (
    PROVIDED,
    LaunchNotCarried,
    launch_script,
    launch_source,
    no_launch,
)
from suite.report.reduced import ORIGINAL_NAME, Reduced, reduced_of
from suite.report.standalone import (
    REPRO_LINES,
    CompileCall,
    capture_compile,
    capture_launch,
    minimal_snippet,
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
from suite.subject import Subject, interpreter_for
from suite.templating import key_lines, template_environment
from suite.toolchain.limits import limits_for

#: GitHub refuses issue bodies over 65536 characters; stay well under it.
BODY_LIMIT = 60_000
#: An issue body a maintainer reads through: the rest goes into attached files.
BODY_LINES = 250
#: The output of ``python repro.py`` under ``--verify``, attached in full.
VERIFIED_OUTPUT = "repro-output.txt"
#: The CUDA reproducers run on a GPU: there is no ``repro.py`` for them.
CUDA_FAMILY = "cuda-tma"


@dataclass
class Written:
    """What :func:`write_report` wrote, for the command line to print."""

    folder: Path
    kind: str
    status: str
    triage: Triage
    files: list[str]
    title: str = ""
    body_file: str = ""
    verification: Verification | None = None
    upstream: str = ""
    current: Verification | None = None


@dataclass
class Standalone:
    """``repro.py`` and ``snippet.py``, or why there are none; what running them said."""

    call: CompileCall | None
    why_not: str = ""
    verification: Verification | None = None  # --verify: in a clean venv of the release
    current: Verification | None = None  # under this machine's (newer) Triton
    reduced: Reduced | None = None  # ``repro reduce``'s kernel, the one captured


@dataclass
class ReportDecision:
    """What the report is: its kind, status, the body a user files, and why."""

    kind: str
    status: str
    body_file: str
    fixed_in: str
    upstream: str  # the upstream issue the baseline maps the failure to ('' for none)


def write_report(
    subject: Subject,
    folder: Path,
    *,
    templates: Path | None = None,
    baseline: Baseline | None = None,
    verify_release: bool = False,
    launch_as: int | None = None,
) -> Written:
    """Write the report of ``subject`` into ``folder``, replacing what a previous report left
    (:func:`suite.report.folder.drafted`: whole or not at all). What ``repro replay`` wrote
    there is carried over: the issue gains its IR section from it. A runtime failure's
    variants are launched on the visible GPU (``launch_as``: the compute capability
    Triton's interpreter launches as instead)."""
    launch_arch = launch_as if launch_as is not None else gpu_arch()
    with drafted(folder) as draft:
        written = _write_into(subject, draft, templates, baseline, verify_release, launch_arch)
    written.folder = folder
    return written


def _write_into(
    subject: Subject,
    draft: Draft,
    templates: Path | None,
    baseline: Baseline | None,
    verify_release: bool,
    launch_arch: int | None,
) -> Written:
    """The steps of a report, in order."""
    subject.load_reproducer()
    found_triage, family = reportable(subject)
    env = template_environment(templates)
    baseline = baseline or Baseline.load()
    result = subject.result
    expected = result.signature.text if result.signature else result.outcome.label
    repro_title = subject.found.repro.title if subject.found else result.repro
    common = common_context(subject, found_triage, expected, repro_title)
    attach_evidence(draft, subject, bug=found_triage.is_bug)
    if not found_triage.is_bug:
        draft.put("explanation.md", env.get_template("explanation.md.j2").render(**common))
        verdict = ReportDecision("explanation", "user-error", "", "", "")
        return record(draft, subject, found_triage, verdict, Standalone(None), expected)
    title = issue_title(result, repro_title, found_triage, subject.triton_version)
    standalone = write_standalone(draft, env, subject, family, expected, title, verify_release)
    verdict = decide(subject, found_triage, standalone, baseline)
    variants = launch_variants(draft, subject, launch_arch)
    context = {
        **common,
        **body_context(draft, subject, standalone, verdict, family, baseline),
        "title": title,
        "variants": variants,
    }
    render_bodies(draft, env, context, verdict, found_triage)
    written = record(draft, subject, found_triage, verdict, standalone, expected, variants)
    written.title = title
    return written


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


def attach_evidence(draft: Draft, subject: Subject, bug: bool) -> None:
    """Attach: the files beside the body that a maintainer opens (the case's output, the
    finding's record, and for a bug the MLIR reproducers Triton wrote). Further attachments
    go here."""
    output = scrub_text(captured_output(subject.result))
    if output:
        draft.put("output.txt", output + "\n")
    if subject.finding_record:
        draft.put("finding.json", json.dumps(subject.finding_record, indent=2, default=str) + "\n")
    if bug:
        for name, path in mlir_reproducers(subject.result).items():
            draft.attach(name, path)
    ptx = differential_ptx(subject.result)
    if ptx is not None:
        draft.attach(DIFFERENTIAL_PTX, ptx)


#: The PTX the ptxas differential gave every build, attached to an NVIDIA report.
DIFFERENTIAL_PTX = "kernel.ptx"


def differential_ptx(result: CaseResult) -> Path | None:
    """The PTX file of the differential's bundled relaunch, where it is still there."""
    runs = (result.notes.ptxas or {}).get("runs") or []
    first = runs[0] if isinstance(runs, list) and runs else {}
    path = Path(str(first.get("ptx", ""))) if isinstance(first, dict) else None
    return path if path is not None and path.name and path.is_file() else None


def write_standalone(
    draft: Draft,
    env: Environment,
    subject: Subject,
    family: str,
    expected: str,
    title: str,
    verify_release: bool,
) -> Standalone:
    """``repro.py`` and ``snippet.py`` from the captured compile call; run in a clean venv
    of the release with ``--verify``, and under this machine's Triton when it is another."""
    version = subject.triton_version
    if family == CUDA_FAMILY:
        standalone = Standalone(
            None, "the CUDA reproducers run on a GPU: follow the steps in nvidia.md"
        )
    elif subject.found is None:
        notes = "; ".join(subject.notes)
        standalone = Standalone(None, f"the reproducer could not be loaded again ({notes})")
    else:
        standalone = capture_standalone(subject, subject.found.source)
    launch = None
    if standalone.call is not None:
        try:
            launch = launch_form(env, subject, expected, title, standalone.reduced)
        except LaunchNotCarried as exc:
            standalone = Standalone(None, str(exc))
        else:
            if launch is None and runtime_failure(expected):
                # A compile-only script cannot show a fault that only a launch shows.
                standalone = Standalone(None, no_launch(subject.result.repro))
    if standalone.call is None:
        subject.notes.append(f"repro.py not written: {standalone.why_not}")
        if verify_release:
            why = f"Not verified: {standalone.why_not}"
            standalone.verification = Verification(False, version, why)
        return standalone
    if standalone.reduced is not None:
        original = standalone.reduced.original.read_text()
        draft.put(ORIGINAL_NAME, original, secret_safe=False)
    script = repro_script(env, subject, standalone.call, expected, title)
    form = "launch" if launch else "compile"
    script = launch or script
    draft.put("repro.py", script, secret_safe=False)
    lines, bound = len(script.splitlines()), REPRO_LINES[form]
    if lines > bound:
        subject.notes.append(
            f"repro.py is {lines} lines, over the {bound} read at a glance: "
            "`repro reduce` shrinks the kernel"
        )
    draft.put("snippet.py", minimal_snippet(standalone.call, version), secret_safe=False)
    if unseen_here(subject):
        # A compile cannot show a runtime failure: no verification, no "fixed upstream".
        return standalone
    if verify_release:
        standalone.verification = verify(draft.folder / "repro.py", version, expected)
        if standalone.verification.output:
            draft.put(VERIFIED_OUTPUT, standalone.verification.output + "\n")
    # Whether this machine's (newer) Triton still fails decides "fixed upstream".
    standalone.current = check_current(draft.folder / "repro.py", version, expected)
    return standalone


def launch_variants(draft: Draft, subject: Subject, launch_arch: int | None) -> VariantTable | None:
    """Launch: a runtime failure's variants on the GPU here, one knob changed at a time
    (``variants.json`` attached); without one the table says what it needs. Then compile
    the failing config and the variant that avoids it, with per-pass dumps, unless ``repro
    explain`` already left that comparison in the folder."""
    table = variants_for(subject, launch_arch, subject_name(subject.result))
    if table is not None and table.rows:
        draft.put(VARIANTS_FILE, json.dumps(table.to_json(), indent=2, default=str) + "\n")
    change = passing_variant(subject, table)
    if change and explained(draft.folder) is None:
        explain_variant(subject, change, draft.folder / "explain")
    return table


def subject_name(result: CaseResult) -> str:
    """How a command names the finding of ``result``: ``<repro>-<digest>``."""
    return f"{result.repro}-{result.signature.digest}" if result.signature else result.repro


def launch_form(
    env: Environment, subject: Subject, expected: str, title: str, reduced: Reduced | None = None
) -> str | None:
    """For a runtime failure whose reproducer launches with oracles: the repro.py that
    launches and judges (``suite.report.launch_repro``), from the reduced file when ``repro
    reduce`` made one; None otherwise."""
    result = subject.result
    carried = capture_source(subject.found.source) if subject.found else None
    if not runtime_failure(expected) or carried is None or subject.found is None:
        return None
    text = reduced.path.read_text() if reduced is not None else carried.text
    source = launch_source(text, result.repro)
    if source is None:
        return None
    closure, why = capture_launch(
        result,
        reduced.source if reduced is not None else subject.found.source,
        interpreter_for(subject.environment, None),
        source.roots(),
        list(PROVIDED),
        source.dropped(),
    )
    if closure is None:
        raise LaunchNotCarried(why)
    return launch_script(
        env,
        text,
        result.repro,
        result.config,
        expected,
        title,
        result.target,
        subject.triton_version,
        closure,
    )


def launches(result: CaseResult, draft: Draft) -> bool:
    """Whether the draft's repro.py is the launch form of a runtime failure."""
    signature = result.signature.text if result.signature else None
    return runtime_failure(signature) and "import torch" in draft.text("repro.py")


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
    elif found_triage.label == TriageKind.COMPILER_BUG:
        body_file = "issue.md"
    if not fixed_in and found_triage.label in (TriageKind.DRIVER_BUG, TriageKind.PTXAS_BUG):
        kind, body_file = "nvidia", body_file or "nvidia.md"
    return ReportDecision(kind, status, body_file, fixed_in, upstream)


def body_context(
    draft: Draft,
    subject: Subject,
    standalone: Standalone,
    verdict: ReportDecision,
    family: str,
    baseline: Baseline,
) -> dict[str, Any]:
    """What the bodies say beyond :func:`suite.report.context.common_context`."""
    result = subject.result
    verification = standalone.verification
    if verification is not None and verification.output:
        observed_from = f"`{verification.command}` on triton {verification.version}"
        observed, observed_file = scrub_text(verification.output), VERIFIED_OUTPUT
    else:
        observed_from = "the suite's run of the case"
        observed, observed_file = scrub_text(captured_output(result)), "output.txt"
    error_text = failure_text(result)
    mlir = [(name, draft.text(name)) for name in draft.files if name.startswith(MLIR_REPRODUCER)]
    return {
        "ir_replay": ir_replay(draft.folder),
        "explained": explained(draft.folder),
        "sanitizer": result.notes.sanitizer,
        "ptxas_differential": result.notes.ptxas,
        "differential_ptx": DIFFERENTIAL_PTX if DIFFERENTIAL_PTX in draft.files else "",
        "repro_py": draft.text("repro.py"),
        # A runtime failure's repro.py launches: the body shows it, not the compile snippet.
        "launch_repro": draft.text("repro.py") if launches(result, draft) else "",
        "snippet": draft.text("snippet.py"),
        "verification": verification,
        "current": standalone.current,
        "observed_from": observed_from,
        "observed_key": key_lines(observed) if observed else "",
        "observed_full": observed,
        "observed_lines": len(observed.splitlines()),
        "observed_file": observed_file if observed_file in draft.files else "",
        "mlir": mlir,
        "baseline_entry": baseline_note(result, subject.triton_version, baseline),
        "upstream": verdict.upstream,
        "ptxas_invocation": scrub_text(ptxas_invocation(error_text)),
        "error_text": scrub_text(error_text),
        "program_record": scrub_text(program_record(error_text)),
        "status": verdict.status,
        "family": family,
        "fixed_in": verdict.fixed_in,
        "why_no_repro": standalone.why_not if standalone.call is None else "",
        "message_changes": subject.finding.message_note() if subject.finding else "",
        "headline": headline(result),
        "reduced": standalone.reduced.context() if standalone.reduced else None,
    }


def render_bodies(
    draft: Draft,
    env: Environment,
    context: dict[str, Any],
    verdict: ReportDecision,
    found_triage: Triage,
) -> None:
    """Render: ``comment.md`` (a fixed or known bug) or ``issue.md``, and ``nvidia.md`` for
    ptxas and driver problems."""
    if verdict.fixed_in or verdict.upstream:
        draft.put(
            "comment.md", env.get_template("comment.md.j2").render(**context, head=60, tail=60)
        )
    elif found_triage.label == TriageKind.COMPILER_BUG:
        draft.put("issue.md", render_postable(env, "issue.md.j2", context))
    ptxas = context["outcome"] == Outcome.PTXAS_ERROR.label
    if not verdict.fixed_in and (
        found_triage.label in (TriageKind.DRIVER_BUG, TriageKind.PTXAS_BUG) or ptxas
    ):
        draft.put("nvidia.md", render_postable(env, "nvidia.md.j2", context))


def render_postable(env: Environment, name: str, context: dict[str, Any]) -> str:
    """Render with the largest head and tail of the output (20 lines each at most) that keep
    the body postable and readable: under GitHub's size limit and about :data:`BODY_LINES`
    lines (the full output and MLIR are attached files)."""
    text = ""
    for keep in (20, 10, 5):
        text = env.get_template(name).render(**context, head=keep, tail=keep)
        if len(text) <= BODY_LIMIT and len(text.splitlines()) <= BODY_LINES:
            return text
    return text


def record(
    draft: Draft,
    subject: Subject,
    found_triage: Triage,
    verdict: ReportDecision,
    standalone: Standalone,
    expected: str,
    variants: VariantTable | None = None,
) -> Written:
    """Record: ``report.json``, what the command line prints from."""
    result = subject.result
    files = sorted([*draft.files, "report.json"])
    verification, current = standalone.verification, standalone.current
    report = {
        "id": subject.report_id,
        "status": verdict.status,
        "kind": verdict.kind,
        "label": found_triage.label,
        "rule": found_triage.rule,
        "explanation": scrub_text(found_triage.explanation),
        "source": found_triage.source,
        "repro": result.repro,
        "target": result.target,
        "config": result.config,
        "signature": expected,
        "triton": subject.triton_version,
        "upstream": verdict.upstream,
        "verification": verification.to_json() if verification else None,
        "current_release": current.to_json() if current else None,
        "variants": variants.to_json() if variants else None,
        "origin": subject.origin,
        "notes": subject.notes,
        "files": files,
    }
    (draft.folder / "report.json").write_text(
        scrub_text(json.dumps(report, indent=2, default=str)) + "\n"
    )
    return Written(
        draft.folder,
        verdict.kind,
        verdict.status,
        found_triage,
        files,
        body_file=verdict.body_file,
        verification=verification,
        upstream=verdict.upstream,
        current=current,
    )


def github_text(written: Written) -> str:
    """A title line, then the body: ``gh issue create --title "$title" --body-file -``."""
    body = (written.folder / written.body_file).read_text()
    lines = body.splitlines()
    if lines and lines[0].startswith("# "):
        title, rest = lines[0][2:].strip(), "\n".join(lines[1:]).lstrip("\n")
    else:
        title, rest = written.title, body
    if written.kind == "comment":
        title = written.upstream or written.status  # fixed upstream: no issue to name
    return f"{title}\n{rest}"


def describe(written: Written) -> Iterable[str]:
    """The lines ``repro report`` prints."""
    shown = home_to_tilde(str(written.folder))
    if written.kind == "explanation":
        yield (
            f"{written.triage.label}: a documented rule is broken, not an upstream bug: no issue "
            f"rendered; explanation: {shown}/explanation.md"
        )
        yield f"  {scrub_text(written.triage.explanation)}"
        yield f"  source: {written.triage.source}"
        return
    if written.kind == "comment" and not written.upstream:
        yield (
            f"{written.status}: a comment for the existing issue and the advice to drop the "
            f"workaround in {shown}/comment.md (no new issue)"
        )
    elif written.kind == "comment":
        yield f"matches {written.upstream}: comment draft in {shown}/comment.md (no new issue)"
    else:
        yield f"{written.triage.label}: {shown}/{written.body_file or 'report.json'}"
    yield f"  {scrub_text(written.triage.explanation)}"
    if written.verification is not None:
        yield written.verification.line
    yield f"status: {written.status} ({shown}/report.json)"
