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

:func:`write_report` gathers, then renders: the named steps of :mod:`suite.report.gather`
(check that there is something to report, attach, write ``repro.py``, verify it, run it
under this machine's Triton, decide what kind of report it is, launch the variants, compile
the comparison) fill one :class:`~suite.report.gather.Evidence` record, each saying what it
ran again; :func:`render` writes the bodies and ``report.json`` from that record and the
draft, running nothing. The folder (:mod:`suite.report.folder`) is written whole or not at
all; the context the templates read is :mod:`suite.report.context`, the case's leftovers
are read by :mod:`suite.report.evidence`, the subject comes from :mod:`suite.subject`.

Everything rendered goes through :func:`scrub_text` (secret-looking variables and values dropped,
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
    failure_text,
    gpu_arch,
    home_to_tilde,
    runtime_failure,
    scrub_text,
)
from suite.report.context import common_context, headline
from suite.report.evidence import (
    MLIR_REPRODUCER,
    captured_output,
    explained,
    ir_replay,
    program_record,
    ptxas_invocation,
)
from suite.report.folder import Draft, drafted
from suite.report.gather import (
    DIFFERENTIAL_PTX,
    VERIFIED_OUTPUT,
    Evidence,
    Ran,
    gather,
)
from suite.report.verify import Verification
from suite.subject import Subject
from suite.templating import key_lines, template_environment

#: GitHub refuses issue bodies over 65536 characters; stay well under it.
BODY_LIMIT = 60_000
#: An issue body a maintainer reads through: the rest goes into attached files.
BODY_LINES = 250


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


def write_report(
    subject: Subject,
    folder: Path,
    *,
    templates: Path | None = None,
    baseline: Baseline | None = None,
    verify_release: bool = False,
    launch_as: int | None = None,
    reran: Ran | None = None,
) -> Written:
    """Write the report of ``subject`` into ``folder``, replacing what a previous report left
    (:func:`suite.report.folder.drafted`: whole or not at all). What ``repro replay`` wrote
    there is carried over: the issue gains its IR section from it. A runtime failure's
    variants are launched on the visible GPU (``launch_as``: the compute capability
    Triton's interpreter launches as instead). ``reran``: what the command ran again
    before (:func:`suite.report.gather.rerun`)."""
    launch_arch = launch_as if launch_as is not None else gpu_arch()
    env = template_environment(templates)
    with drafted(folder) as draft:
        evidence = gather(
            subject, draft, env, baseline or Baseline.load(), verify_release, launch_arch, reran
        )
        written = render(draft, env, subject, evidence)
    written.folder = folder
    return written


def render(draft: Draft, env: Environment, subject: Subject, evidence: Evidence) -> Written:
    """The bodies (an explanation for a user error) and ``report.json``, from the gathered
    evidence and the draft's files."""
    result = subject.result
    repro_title = subject.found.repro.title if subject.found else result.repro
    common = common_context(subject, evidence.triage, evidence.expected, repro_title)
    if not evidence.triage.is_bug:
        draft.put("explanation.md", env.get_template("explanation.md.j2").render(**common))
        return record(draft, subject, evidence)
    context = {
        **common,
        **body_context(draft, subject, evidence),
        "title": evidence.title,
        "variants": evidence.variants,
    }
    render_bodies(draft, env, context, evidence)
    written = record(draft, subject, evidence)
    written.title = evidence.title
    return written


def launches(result: CaseResult, draft: Draft) -> bool:
    """Whether the draft's repro.py is the launch form of a runtime failure."""
    signature = result.signature.text if result.signature else None
    return runtime_failure(signature) and "import torch" in draft.text("repro.py")


def body_context(draft: Draft, subject: Subject, evidence: Evidence) -> dict[str, Any]:
    """What the bodies say beyond :func:`suite.report.context.common_context`."""
    result = subject.result
    standalone, decision = evidence.standalone, evidence.decision
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
        "baseline_entry": evidence.baseline_entry,
        "upstream": decision.upstream,
        "ptxas_invocation": scrub_text(ptxas_invocation(error_text)),
        "error_text": scrub_text(error_text),
        "program_record": scrub_text(program_record(error_text)),
        "status": decision.status,
        "family": evidence.family,
        "fixed_in": decision.fixed_in,
        "why_no_repro": standalone.why_not if standalone.call is None else "",
        "message_changes": subject.finding.message_note() if subject.finding else "",
        "headline": headline(result),
        "reduced": standalone.reduced.context() if standalone.reduced else None,
    }


def render_bodies(
    draft: Draft, env: Environment, context: dict[str, Any], evidence: Evidence
) -> None:
    """Render: ``comment.md`` (a fixed or known bug) or ``issue.md``, and ``nvidia.md`` for
    ptxas and driver problems."""
    decision, found_triage = evidence.decision, evidence.triage
    if decision.fixed_in or decision.upstream:
        draft.put(
            "comment.md", env.get_template("comment.md.j2").render(**context, head=60, tail=60)
        )
    elif found_triage.kind is TriageKind.COMPILER_BUG:
        draft.put("issue.md", render_postable(env, "issue.md.j2", context))
    ptxas = context["outcome"] == Outcome.PTXAS_ERROR.label
    if not decision.fixed_in and (
        found_triage.kind in (TriageKind.DRIVER_BUG, TriageKind.PTXAS_BUG) or ptxas
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


def record(draft: Draft, subject: Subject, evidence: Evidence) -> Written:
    """Record: ``report.json``, what the command line prints from, with what each gathering
    step ran again (``gathered``)."""
    result = subject.result
    found_triage, decision, standalone = evidence.triage, evidence.decision, evidence.standalone
    variants = evidence.variants
    files = sorted([*draft.files, "report.json"])
    verification, current = standalone.verification, standalone.current
    report = {
        "id": subject.report_id,
        "status": decision.status,
        "kind": decision.kind,
        "label": found_triage.label,
        "rule": found_triage.rule,
        "explanation": scrub_text(found_triage.explanation),
        "source": found_triage.source,
        "repro": result.repro,
        "target": result.target,
        "config": result.config,
        "signature": evidence.expected,
        "triton": subject.triton_version,
        "upstream": decision.upstream,
        "verification": verification.to_json() if verification else None,
        "current_release": current.to_json() if current else None,
        "variants": variants.to_json() if variants else None,
        "origin": subject.origin,
        "notes": subject.notes,
        "gathered": [ran.to_json() for ran in evidence.ran],
        "files": files,
    }
    (draft.folder / "report.json").write_text(
        scrub_text(json.dumps(report, indent=2, default=str)) + "\n"
    )
    return Written(
        draft.folder,
        decision.kind,
        decision.status,
        found_triage,
        files,
        body_file=decision.body_file,
        verification=verification,
        upstream=decision.upstream,
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
