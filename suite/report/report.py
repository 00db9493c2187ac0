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
- ``explanation.md`` instead of any of those when :func:`suite.engine.triage.triage` calls it a
  user error (a documented rule is broken: never an upstream issue);
- ``comment.md`` instead of ``issue.md`` when the baseline maps the signature to a known
  upstream issue;
- ``report.json`` with the ``status``: ``ready`` only when ``--verify`` ran ``repro.py`` in a
  clean venv holding the affected Triton release alone and saw the bug.

Everything rendered goes through :func:`scrub` (secret-looking variables and values dropped,
the home folder shown as ``~``); code fences are longer than any backtick run they hold;
long output keeps its head and tail and says how many lines were cut. Templates are Jinja2
files under ``suite/templates/`` (``StrictUndefined``; autoescape for HTML templates only), each
replaceable from a folder given with ``--templates``.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import (
    Environment,
)

from suite.engine.baseline import Baseline, Expectation
from suite.engine.outcome import CaseResult, Outcome
from suite.engine.scrub import capture_variables, home_to_tilde, safe_facts, safe_variables, scrub
from suite.engine.triage import COMPILER_BUG, DRIVER_BUG, Triage, failure_text, family_of, triage
from suite.errors import UsageError
from suite.report.standalone import capture_compile, minimal_snippet, repro_script
from suite.report.subject import Subject, interpreter_for
from suite.report.verify import Verification, check_current, verify
from suite.search.findings import Finding
from suite.templating import key_lines, template_environment
from suite.toolchain.limits import UnknownTarget, limits_for

#: GitHub refuses issue bodies over 65536 characters; stay well under it.
BODY_LIMIT = 60_000
#: An issue body a maintainer reads through: the rest goes into attached files.
BODY_LINES = 250
HEADLINE_CHARS = 90

# ---------------------------------------------------------------------------------------------
# Rendering.
# ---------------------------------------------------------------------------------------------

_ISSUE_URL = re.compile(r"https?://github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/\d+")


def known_upstream(result: CaseResult, version: str, baseline: Baseline) -> Expectation | None:
    """The baseline entry that maps this failure to an upstream issue (a link to one)."""
    for expectation in baseline.expectations:
        if (
            _ISSUE_URL.search(expectation.upstream)
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


def _read(path: str | None, limit: int = 64 << 20) -> str:
    if not path or not Path(path).is_file():
        return ""
    with open(path, errors="replace") as handle:
        return handle.read(limit)


def captured_output(result: CaseResult) -> str:
    """What the case printed (stderr, stdout) and its error event's traceback."""
    parts = []
    for name in ("stderr.txt", "stdout.txt"):
        text = _read(result.artifacts.get(name))
        if text.strip():
            parts.append(text.rstrip("\n"))
    events = _read(result.artifacts.get("events.jsonl"))
    for line in events.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if event.get("event") == "error":
            parts.append(str(event.get("traceback") or event.get("message") or "").rstrip("\n"))
    if not parts and result.message:
        parts.append(result.message)
    return "\n".join(parts)


def error_line(result: CaseResult) -> str:
    """``Type: first line`` of the exception the case raised, else the result's message."""
    events = _read(result.artifacts.get("events.jsonl"))
    for line in events.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if event.get("event") == "error":
            first = next((x.strip() for x in str(event.get("message", "")).splitlines() if x), "")
            return f"{event.get('type', 'Error')}: {first}" if first else str(event.get("type"))
    exception = result.detail.get("exception")
    if exception and result.outcome is Outcome.COMPILER_ERROR and result.detail.get("pass"):
        return f"{exception} (pass {result.detail['pass']} failed)"
    return result.message


def _where(result: CaseResult) -> str:
    detail = result.detail
    if result.outcome is Outcome.PTXAS_ERROR:
        code = detail.get("ptxas_code")
        return f"ptxas {code}" if code else "ptxas"
    if detail.get("pass"):
        return str(detail["pass"])
    if detail.get("stage"):
        return f"the {detail['stage']} stage"
    return str(detail.get("phase") or "the compile")


def issue_title(result: CaseResult, repro_title: str, triage_: Triage) -> str:
    """``<where> <what> on <target>: <real message>`` (the reproducer's title when the
    failure printed no message)."""
    where = _where(result)
    what = {
        Outcome.COMPILER_ERROR: "fails",
        Outcome.PTXAS_ERROR: "rejects Triton's PTX",
        Outcome.CRASH: f"crashes ({result.detail.get('signal') or 'no report'})",
        Outcome.TIMEOUT: "hangs",
        Outcome.WRONG_RESULT: "gives wrong results",
        Outcome.RUNTIME_ERROR: "fails at launch",
    }.get(result.outcome, result.outcome.label)
    if result.outcome in (Outcome.CRASH, Outcome.TIMEOUT) and where.startswith("the "):
        where = where[4:]
    subject = headline(result) or repro_title or result.repro
    if triage_.label == DRIVER_BUG:
        return f"TMA copy {what} on {result.target}: {subject}"
    return f"{where} {what} on {result.target}: {subject}"


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


def _facts(environment: Mapping[str, Any], result: CaseResult) -> list[tuple[str, str]]:
    env = safe_facts(dict(environment))
    facts: list[tuple[str, str]] = [("Triton", str(env.get("triton") or "unknown"))]
    if env.get("triton_commit"):
        facts.append(("Triton commit", str(env["triton_commit"])))
    if result.gpu or env.get("gpu"):
        gpu = env.get("gpu") or "unknown"
        facts.append(("GPU", f"{gpu} (compute capability {env.get('gpu_arch', '?')})"))
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


def program_record(text: str) -> str:
    """The last JSON object a CUDA reproducer program printed (its descriptor and errors)."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict) and len(value) > 1:
                return json.dumps(value, indent=2)
    return ""


def _ptxas_invocation(text: str) -> str:
    lines = [
        line.strip()
        for line in text.splitlines()
        if "Repro command:" in line or ("ptxas" in line and "--gpu-name" in line)
    ]
    return "\n".join(dict.fromkeys(lines))


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
    messages: list[str] = field(default_factory=list)


# Folders of the output root that are not reports: a report id may never name one.
RESERVED_IDS = frozenset(
    {"runs", "findings", "matrix", "dashboard", "examples", "nightly", "baselines", "cases"}
)
# A folder holding one of these was written by `repro report` or `repro replay`.
REPORT_MARKS = ("report.json", "replay.json")


def check_report_id(report_id: str) -> str:
    """``report_id`` if it can name a report folder: one plain path component, not reserved."""
    if (
        not report_id
        or report_id.startswith(".")
        or report_id != Path(report_id).name
        or "/" in report_id
        or "\\" in report_id
        or "\x00" in report_id
    ):
        raise UsageError(f"report id {report_id!r}: must be one plain folder name")
    if report_id.lower() in RESERVED_IDS:
        raise UsageError(f"report id {report_id!r}: reserved for the output root's own folders")
    return report_id


def check_report_folder(folder: Path) -> None:
    """A report may replace only a folder that a report or a replay wrote."""
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise UsageError(f"{folder} exists and is not a report folder: choose another --id")
    unmarked = not any((folder / mark).is_file() for mark in REPORT_MARKS)
    if folder.is_dir() and any(folder.iterdir()) and unmarked:
        raise UsageError(f"{folder} exists and is not a report folder: choose another --id")


def write_report(
    subject: Subject,
    folder: Path,
    *,
    templates: Path | None = None,
    baseline: Baseline | None = None,
    verify_release: bool = False,
) -> Written:
    """Write the report of ``subject`` into ``folder``, replacing what a previous report left.

    The report is written into a fresh folder beside ``folder`` and renamed into place, so
    a failure leaves the previous report whole; only a folder that a report or a replay
    wrote is ever replaced. What ``repro replay`` wrote there (``replay.json`` and the files
    it lists) is carried over: the issue gains its IR section from them.
    """
    check_report_id(folder.name)
    check_report_folder(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.new-", dir=folder.parent))
    try:
        for name in _replay_files(folder):
            source = folder / name
            if source.is_file() and not source.is_symlink() and Path(name).name == name:
                shutil.copyfile(source, staging / name)
        written = _write_into(subject, staging, templates, baseline, verify_release)
        _swap_into_place(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    written.folder = folder
    return written


def _swap_into_place(staging: Path, folder: Path) -> None:
    if not folder.exists():
        staging.rename(folder)
        return
    previous = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old-", dir=folder.parent))
    folder.rename(previous / folder.name)
    staging.rename(folder)
    shutil.rmtree(previous)  # the previous report: this command's own kind of folder


def _write_into(
    subject: Subject,
    folder: Path,
    templates: Path | None,
    baseline: Baseline | None,
    verify_release: bool,
) -> Written:
    result = subject.result
    if result.outcome is Outcome.HARNESS_ERROR:
        raise UsageError(
            f"{result.case_id} is a harness error, not a compiler failure: nothing to report "
            f"upstream ({result.message})"
        )
    family = subject.found.repro.family if subject.found else family_of(result)
    found_triage = triage(result, family=family)
    if found_triage is None:
        raise UsageError(
            f"{result.case_id} did not fail ({result.outcome.label}): nothing to report"
        )
    env = template_environment(templates)
    baseline = baseline or Baseline.load()
    files: list[str] = []
    expected = result.signature.text if result.signature else result.outcome.label
    repro_title = subject.found.repro.title if subject.found else result.repro
    output = scrub(captured_output(result))
    common = _common_context(subject, found_triage, expected, repro_title)

    def put(name: str, text: str, secret_safe: bool = True) -> None:
        (folder / name).write_text(scrub(text) if secret_safe else text)
        files.append(name)

    if output:
        put("output.txt", output + "\n")
    if subject.finding_record:
        put("finding.json", json.dumps(subject.finding_record, indent=2, default=str) + "\n")
    if not found_triage.is_bug:
        put("explanation.md", env.get_template("explanation.md.j2").render(**common))
        return _finish(
            subject, folder, "explanation", "user-error", found_triage, files, None, "", expected
        )

    for name in sorted(result.artifacts):
        if name.startswith("mlir-reproducer") and Path(result.artifacts[name]).is_file():
            shutil.copyfile(result.artifacts[name], folder / name)
            files.append(name)
    mlir = [(name, _read(str(folder / name))) for name in files if name.startswith("mlir-")]
    call, why_not = None, "the CUDA reproducers run on a GPU: follow the steps in nvidia.md"
    if family != "cuda-tma" and subject.found is None:
        why_not = "the reproducer could not be loaded again (" + "; ".join(subject.notes) + ")"
    elif family != "cuda-tma" and subject.found is not None:
        interpreter = interpreter_for(subject.environment, None)
        call, why_not = capture_compile(result, source=subject.found.source, python=interpreter)
    verification: Verification | None = None
    current: Verification | None = None
    if call is not None:
        put(
            "repro.py",
            repro_script(
                env, subject, call, expected, issue_title(result, repro_title, found_triage)
            ),
            secret_safe=False,
        )
        put("snippet.py", minimal_snippet(call, subject.triton_version), secret_safe=False)
        if verify_release:
            verification = verify(folder / "repro.py", subject.triton_version, expected)
        # Whether this machine's (newer) Triton still fails decides "fixed upstream".
        current = check_current(folder / "repro.py", subject.triton_version, expected)
    elif verify_release:
        verification = Verification(False, subject.triton_version, f"Not verified: {why_not}")
    if verification is not None and verification.output:
        observed_from = f"`{verification.command}` on triton {verification.version}"
        observed = scrub(verification.output)
    else:
        observed_from = "the suite's run of the case"
        observed = output
    status = "unverified"
    if verification is not None:
        status = "ready" if verification.ok else "not-verified"
    fixed_in = fixed_upstream_in(subject, current)
    if fixed_in:
        # A report on a bug a newer release no longer has is never ready to file.
        status = f"fixed upstream in {fixed_in}: do not file"
    repro_source = (folder / "repro.py").read_text() if call is not None else ""
    snippet = (folder / "snippet.py").read_text() if call is not None else ""
    upstream = known_upstream(result, subject.triton_version, baseline)
    note = baseline_note(result, subject.triton_version, baseline)
    context = {
        **common,
        "ir_replay": ir_replay(folder),
        "title": issue_title(result, repro_title, found_triage),
        "repro_py": repro_source,
        "snippet": snippet,
        "verification": verification,
        "current": current,
        "observed_from": observed_from,
        "observed_key": key_lines(observed) if observed else "",
        "observed_full": observed,
        "observed_lines": len(observed.splitlines()),
        "mlir": mlir,
        "baseline_entry": note,
        "upstream": upstream.upstream if upstream else "",
        "ptxas_invocation": scrub(_ptxas_invocation(failure_text(result))),
        "error_text": scrub(failure_text(result)),
        "program_record": scrub(program_record(failure_text(result))),
        "status": status,
        "family": family,
        "fixed_in": fixed_in,
        "why_no_repro": why_not if call is None else "",
        "message_changes": subject.finding.message_note() if subject.finding else "",
        "headline": headline(result),
    }
    kind = "issue"
    body_file = ""
    if fixed_in or upstream is not None:
        kind = "comment"
        put("comment.md", env.get_template("comment.md.j2").render(**context, head=60, tail=60))
        body_file = "comment.md"
    elif found_triage.label == COMPILER_BUG:
        put("issue.md", _fit(env, "issue.md.j2", context))
        body_file = "issue.md"
    if not fixed_in and (found_triage.label == DRIVER_BUG or result.outcome is Outcome.PTXAS_ERROR):
        put("nvidia.md", _fit(env, "nvidia.md.j2", context))
        if found_triage.label == DRIVER_BUG:
            kind = "nvidia"
            body_file = body_file or "nvidia.md"
    written = _finish(
        subject,
        folder,
        kind,
        status,
        found_triage,
        files,
        verification,
        upstream.upstream if upstream else "",
        expected,
        current,
    )
    written.body_file = body_file
    written.title = str(context["title"])
    return written


def _replay_files(folder: Path) -> set[str]:
    record = folder / "replay.json"
    if not record.is_file():
        return set()
    try:
        files = json.loads(record.read_text()).get("files", {})
        return {"replay.json", *(str(name) for name in files.values())}
    except (ValueError, AttributeError, OSError):
        return set()


def ir_replay(folder: Path) -> dict[str, Any] | None:
    """What ``repro replay`` left in the report folder, for the issue's IR section."""
    record = folder / "replay.json"
    if not record.is_file():
        return None
    replay = json.loads(record.read_text())
    failing = replay.get("first_failing")
    if not failing:
        return None
    files = replay.get("files", {})
    lit = files.get("lit_test")
    return {
        "pass_name": failing.get("pass_name") or failing.get("pass"),
        "flag": failing.get("flag", ""),
        "call": failing.get("call", ""),
        "triton": replay.get("triton", ""),
        "confirmed": replay.get("confirmed", False),
        "files": files,
        "reduction": replay.get("reduction"),
        "lit_text": (folder / lit).read_text() if lit and (folder / lit).is_file() else "",
    }


def _fit(env: Environment, name: str, context: dict[str, Any]) -> str:
    """Render with the largest head and tail of the full output that keep the body postable
    and readable: under GitHub's size limit and about :data:`BODY_LINES` lines (the full
    output and MLIR are attached files)."""
    text = ""
    for keep in (60, 40, 20, 10, 5):
        text = env.get_template(name).render(**context, head=keep, tail=keep)
        if len(text) <= BODY_LIMIT and len(text.splitlines()) <= BODY_LINES:
            return text
    return text


def headline(result: CaseResult) -> str:
    """The failure's real message for a title: the assertion, ``LLVM ERROR``, diagnostic or
    Python error, not ``PassManager::run failed`` (empty when there is none)."""
    text = str(result.detail.get("diagnostic") or "")
    if not text and result.signature is not None:
        text = result.signature.key
    return text if len(text) <= HEADLINE_CHARS else text[: HEADLINE_CHARS - 1] + "…"


def fixed_upstream_in(subject: Subject, current: Verification | None) -> str:
    """The release that no longer fails, when a newer release than the failing one is known
    not to: bisect's first good release, or this machine's Triton, where ``repro.py`` ran
    and did not reproduce. '' when the newest release tried still fails (or none was)."""
    finding = subject.finding
    if current is not None and current.exit is not None:
        if current.ok or current.exit != 0 or current.signature is not None:
            return ""  # it still fails there (maybe otherwise): not known to be fixed
        known = finding.first_good if finding is not None else None
        if known and _release_order(known) <= _release_order(current.version):
            return known
        return f"{current.version} or earlier (not bisected)"
    if finding is not None and finding.first_good:
        newest = max(finding.signatures or {"": ""}, key=_release_order)
        if not newest or _release_order(finding.first_good) > _release_order(newest):
            return finding.first_good
    return ""


def _release_order(release: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", release.split("+")[0])[:3])


def _common_context(
    subject: Subject, found_triage: Triage, expected: str, repro_title: str
) -> dict[str, Any]:
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
        "message": scrub(result.message),
        "error_line": scrub(error_line(result)),
        "detail": result.detail,
        "triage": found_triage,
        "triton_version": subject.triton_version,
        "facts": _facts(subject.environment, result),
        "variables_run": safe_variables(subject.environment.get("triton_env") or {}),
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


def _finish(
    subject: Subject,
    folder: Path,
    kind: str,
    status: str,
    found_triage: Triage,
    files: list[str],
    verification: Verification | None,
    upstream: str,
    expected: str,
    current: Verification | None = None,
) -> Written:
    result = subject.result
    record = {
        "id": subject.report_id,
        "status": status,
        "kind": kind,
        "label": found_triage.label,
        "rule": found_triage.rule,
        "explanation": scrub(found_triage.explanation),
        "source": found_triage.source,
        "repro": result.repro,
        "target": result.target,
        "config": result.config,
        "signature": expected,
        "triton": subject.triton_version,
        "upstream": upstream,
        "verification": verification.to_json() if verification else None,
        "current_release": current.to_json() if current else None,
        "origin": subject.origin,
        "notes": subject.notes,
        "files": sorted([*files, "report.json"]),
    }
    (folder / "report.json").write_text(scrub(json.dumps(record, indent=2, default=str)) + "\n")
    return Written(
        folder,
        kind,
        status,
        found_triage,
        sorted([*files, "report.json"]),
        verification=verification,
        upstream=upstream,
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


def default_folder(output: Path, report_id: str) -> Path:
    return output / check_report_id(report_id)


def describe(written: Written) -> Iterable[str]:
    """The lines ``repro report`` prints."""
    shown = home_to_tilde(str(written.folder))
    if written.kind == "explanation":
        yield (
            f"{written.triage.label}: a documented rule is broken, not an upstream bug: no issue "
            f"rendered; explanation: {shown}/explanation.md"
        )
        yield f"  {scrub(written.triage.explanation)}"
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
    yield f"  {scrub(written.triage.explanation)}"
    if written.verification is not None:
        yield written.verification.line
    yield f"status: {written.status} ({shown}/report.json)"
