"""Upstream-ready reports of one failure: a Triton issue, an NVIDIA report, or an explanation.

``repro report`` (:mod:`suite.report_cli`) takes a finding of ``repro explore`` or one
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
- ``explanation.md`` instead of any of those when :func:`suite.triage.triage` calls it a
  user error (a documented rule is broken: never an upstream issue);
- ``comment.md`` instead of ``issue.md`` when the baseline maps the signature to a known
  upstream issue;
- ``report.json`` with the ``status``: ``ready`` only when ``--verify`` ran ``repro.py`` in a
  clean venv holding the affected Triton release alone and saw the bug.

Everything rendered goes through :func:`scrub` (secret-looking variables and values dropped,
the home folder shown as ``~``); code fences are longer than any backtick run they hold;
long output keeps its head and tail and says how many lines were cut. Templates are Jinja2
files under ``templates/`` (``StrictUndefined``; autoescape for HTML templates only), each
replaceable from a folder given with ``--templates``.
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import (
    ChoiceLoader,
    Environment,
    FileSystemLoader,
    StrictUndefined,
    select_autoescape,
)

from suite.baseline import Baseline, Expectation
from suite.errors import UsageError
from suite.findings import DirectoryFindingsStore, Finding, locate
from suite.limits import UnknownTarget, limits_for
from suite.outcome import CaseResult, Outcome, Signature
from suite.record import RESULTS, RunStore, safe_name
from suite.shim import cache_root, child_env
from suite.triage import COMPILER_BUG, DRIVER_BUG, Triage, failure_text, family_of, triage

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"
TEMPLATE_NAMES = (
    "issue.md.j2",
    "repro.py.j2",
    "explanation.md.j2",
    "nvidia.md.j2",
    "comment.md.j2",
)
#: GitHub refuses issue bodies over 65536 characters; stay well under it.
BODY_LIMIT = 60_000
VERIFY_TIMEOUT_S = 900
REPRO_TIMEOUT_S = 600

# ---------------------------------------------------------------------------------------------
# Safety: secrets, the home folder, fences, long output.
# ---------------------------------------------------------------------------------------------

_SECRET_WORDS = (
    "TOKEN",
    "KEY",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
)
SECRET_NAME = re.compile("|".join(_SECRET_WORDS), re.IGNORECASE)
_CREDENTIAL_PATTERNS = (
    r"gh[pousr]_[A-Za-z0-9]{30,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"glpat-[A-Za-z0-9_-]{20,}",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"xox[abprs]-[A-Za-z0-9-]{10,}",
    r"\bsk-[A-Za-z0-9_-]{20,}",
    r"\bhf_[A-Za-z0-9]{30,}",
    r"\bAIza[0-9A-Za-z_-]{35}",
    r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
    # Long hex (not a 40-digit commit hash) and long base64-ish runs that mix cases and digits.
    r"(?<![0-9A-Za-z])[0-9a-fA-F]{48,}(?![0-9A-Za-z])",
    r"(?<![A-Za-z0-9+_=-])(?=[A-Za-z0-9+_-]*[a-z])(?=[A-Za-z0-9+_-]*[A-Z])"
    r"(?=[A-Za-z0-9+_-]*[0-9])[A-Za-z0-9+_-]{40,}={0,2}(?![A-Za-z0-9+_=-])",
)
CREDENTIAL_VALUE = re.compile("|".join(f"(?:{p})" for p in _CREDENTIAL_PATTERNS))
_SECRET_ASSIGNMENT = re.compile(
    r"\b([A-Z0-9_]*(?:" + "|".join(_SECRET_WORDS) + r")[A-Z0-9_]*)(\s*=\s*)(\S+)"
)
REDACTED = "[redacted]"
#: Variables worth showing in a report: what changes what Triton, MLIR, LLVM or CUDA do.
RELEVANT_PREFIXES = ("TRITON_", "MLIR_", "LLVM_", "CUDA_", "NVIDIA_", "PTXAS", "NVCC")


def home_to_tilde(text: str) -> str:
    home = str(Path.home())
    return text.replace(home, "~") if home not in ("", "/") else text


def scrub(text: str) -> str:
    """``text`` without credential-looking values and with the home folder as ``~``."""
    text = _SECRET_ASSIGNMENT.sub(lambda m: m.group(1) + m.group(2) + REDACTED, text)
    text = CREDENTIAL_VALUE.sub(REDACTED, text)
    return home_to_tilde(text)


def looks_secret(name: str, value: str) -> bool:
    return bool(SECRET_NAME.search(name) or CREDENTIAL_VALUE.search(value))


def safe_variables(variables: Mapping[str, Any]) -> dict[str, str]:
    """The variables that are safe to show: secret-like names and values dropped, ``~`` home."""
    return {
        name: home_to_tilde(str(value))
        for name, value in sorted(variables.items())
        if not looks_secret(name, str(value))
    }


def capture_variables(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's variables that bear on a compile (``RELEVANT_PREFIXES``), made safe."""
    environ = os.environ if environ is None else environ
    relevant = {k: v for k, v in environ.items() if k.startswith(RELEVANT_PREFIXES)}
    return safe_variables(relevant)


def safe_facts(value: Any) -> Any:
    """The environment facts of a run, with every secret-like key or value dropped."""
    if isinstance(value, Mapping):
        return {
            str(k): safe_facts(v)
            for k, v in value.items()
            if not (isinstance(v, str) and looks_secret(str(k), v)) and not SECRET_NAME.search(k)
        }
    if isinstance(value, list):
        return [safe_facts(v) for v in value]
    if isinstance(value, str):
        return scrub(value)
    return value


def fence(text: str, info: str = "") -> str:
    """A fenced code block that no backtick run inside ``text`` can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text.rstrip(chr(10))}\n{ticks}"


def inline_code(text: str) -> str:
    """Inline code that holds any backticks ``text`` has."""
    text = " ".join(str(text).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def trim_lines(text: str, head: int = 40, tail: int = 40, width: int = 2000) -> str:
    """The first ``head`` and last ``tail`` lines, the cut counted; each line at most ``width``."""
    lines = [
        line if len(line) <= width else line[:width] + f" ... [{len(line) - width} chars cut]"
        for line in text.rstrip("\n").splitlines()
    ]
    if len(lines) <= head + tail:
        return "\n".join(lines)
    cut = len(lines) - head - tail
    return "\n".join([*lines[:head], f"... [{cut} lines cut] ...", *lines[len(lines) - tail :]])


def table_cell(value: Any) -> str:
    return " ".join(str(value).split()).replace("|", "\\|")


_KEY_LINE = re.compile(
    r"\berror\b|\bfatal\b|Error:|Exception:|LLVM ERROR|Assertion|Pipeline failed|"
    r"Insufficient|not supported|Segmentation|Aborted|Fatal Python error|signature:|REPRODUCED",
    re.IGNORECASE,
)


def key_lines(text: str, limit: int = 25) -> str:
    """The lines of ``text`` that say what went wrong (else its tail), at most ``limit``."""
    lines = [line for line in text.splitlines() if _KEY_LINE.search(line)]
    if not lines:
        lines = text.rstrip("\n").splitlines()[-limit:]
    seen: list[str] = []
    for line in lines:
        if line not in seen:
            seen.append(line)
    return trim_lines("\n".join(seen), head=limit, tail=0) if len(seen) > limit else "\n".join(seen)


# ---------------------------------------------------------------------------------------------
# Templates.
# ---------------------------------------------------------------------------------------------


def template_environment(override: Path | None = None) -> Environment:
    """Jinja2 with the shipped templates, each replaceable by a file of ``override``."""
    loaders = [FileSystemLoader(str(TEMPLATES_DIR))]
    if override is not None:
        if not override.is_dir():
            raise UsageError(f"--templates: not a folder: {override}")
        loaders.insert(0, FileSystemLoader(str(override)))
    env = Environment(
        loader=ChoiceLoader(loaders),
        undefined=StrictUndefined,
        autoescape=select_autoescape(["html"]),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        fence=fence,
        code=inline_code,
        trim_lines=trim_lines,
        cell=table_cell,
        pyrepr=repr,
        scrub=scrub,
    )
    return env


# ---------------------------------------------------------------------------------------------
# What a report is about: a finding or a result.
# ---------------------------------------------------------------------------------------------


@dataclass
class Subject:
    """One failure to report, with everything known about it."""

    result: CaseResult
    environment: dict[str, Any]
    report_id: str
    origin: dict[str, str]
    finding: Finding | None = None
    finding_record: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def triton_version(self) -> str:
        return str(self.environment.get("triton") or "unknown")


def load_finding(ref: str, output: Path) -> tuple[Finding, dict[str, Any], Path]:
    """A finding by file, by id (``<repro>-<digest>``, the file's stem) or by a unique prefix."""
    path = locate(ref, output)
    try:
        record = json.loads(path.read_text())
        finding = Finding.from_json(record)
    except (OSError, json.JSONDecodeError, TypeError, KeyError) as exc:
        raise UsageError(f"not a finding record: {path}: {type(exc).__name__}: {exc}") from None
    return finding, record, path


def _run_folder(text: str, output: Path) -> Path | None:
    path = Path(text)
    if path.name == RESULTS and path.is_file():
        return path.parent
    if path.is_dir() and (path / RESULTS).is_file():
        return path
    named = output / "runs" / text
    if text and named.is_dir() and (named / RESULTS).is_file():
        return named
    return None


def split_result_ref(ref: str, case: str | None, output: Path) -> tuple[Path, str | None] | None:
    """``RUN_DIR:CASE_ID``, ``results.jsonl`` (or a run folder) with ``--case``; else None."""
    folder = _run_folder(ref, output)
    if folder is not None:
        return folder, case
    for index, char in enumerate(ref):
        if char == ":":
            folder = _run_folder(ref[:index], output)
            if folder is not None:
                return folder, ref[index + 1 :] or case
    return None


def load_result(folder: Path, case: str | None) -> tuple[CaseResult, dict[str, Any]]:
    results = RunStore(folder).results()
    if case is None:
        failing = [r for r in results if r.outcome.is_failure]
        if len(failing) != 1:
            ids = ", ".join(r.case_id for r in failing[:6])
            raise UsageError(
                f"{folder} has {len(failing)} failing cases; name one with --case or "
                f"RUN_DIR:CASE_ID ({ids})"
            )
        return failing[0], _environment_of(folder)
    for result in results:
        if result.case_id == case or safe_name(result.case_id) == case:
            return result, _environment_of(folder)
    raise UsageError(f"no case {case!r} in {folder / RESULTS}")


def _environment_of(folder: Path) -> dict[str, Any]:
    path = folder / "environment.json"
    if path.is_file():
        try:
            return dict(json.loads(path.read_text()))
        except json.JSONDecodeError:
            pass
    return {}


def result_from_finding(finding: Finding) -> CaseResult:
    """The finding's minimal case as a result, its detail read back from the signature."""
    outcome = Outcome.from_label(finding.outcome)
    parts = finding.signature.split(":")
    detail: dict[str, Any] = {"phase": "compile"}
    if outcome is Outcome.COMPILER_ERROR and len(parts) >= 2:
        detail["stage"] = parts[1]
        if len(parts) >= 3 and re.fullmatch(r"[A-Za-z][\w.-]*", parts[2]):
            detail["pass"] = parts[2]
    elif outcome is Outcome.PTXAS_ERROR and len(parts) >= 2:
        detail["ptxas_code"] = parts[1] if re.fullmatch(r"C\d{4,5}", parts[1]) else None
    elif outcome is Outcome.RESOURCE_LIMIT and len(parts) >= 2:
        detail["resource"] = parts[1]
        numbers = re.findall(r"(\d+) needed, the \S+ limit is (\d+)", finding.message)
        if numbers:
            detail["used"], detail["limit"] = (int(n) for n in numbers[0])
    elif outcome is Outcome.USER_ERROR and len(parts) >= 2:
        detail["rule"] = parts[1]
    return CaseResult(
        case_id=f"{finding.repro}[{finding.target}]",
        repro=finding.repro,
        target=finding.target,
        config=dict(finding.minimal_config),
        outcome=outcome,
        signature=Signature(finding.signature),
        message=finding.message,
        detail=detail,
    )


def interpreter_for(environment: Mapping[str, Any], python: str | None) -> str | None:
    """The interpreter a case ran under: ``--python``, the recorded one, or the cached venv."""
    if python:
        return python
    recorded = environment.get("python_executable")
    if recorded and Path(str(recorded)).expanduser().exists():
        return str(Path(str(recorded)).expanduser())
    version = environment.get("triton")
    if version:
        cached = venv_folder(str(version)) / "bin" / "python"
        if cached.exists():
            return str(cached)
    return None


def rerun(
    finding: Finding, python: str, work: Path, timeout_s: float = REPRO_TIMEOUT_S
) -> CaseResult:
    """The finding's minimal config run again through the engine, to capture its output."""
    from suite.discover import select
    from suite.expand import CaseSpec
    from suite.isolate import Bounds
    from suite.runner import Execution, run_case

    (found,) = [f for f in select([finding.repro]) if f.repro.id == finding.repro][:1]
    spec = CaseSpec(found, dict(finding.minimal_config), finding.target)
    execution = Execution(python=python, bounds=Bounds(timeout_s=timeout_s))
    return run_case(spec, work / safe_name(spec.case_id), execution)


def resolve(
    ref: str,
    output: Path,
    case: str | None = None,
    python: str | None = None,
    work: Path | None = None,
    rerun_finding: bool = True,
) -> Subject:
    """The :class:`Subject` named on the command line."""
    split = split_result_ref(ref, case, output)
    if split is not None:
        folder, case_id = split
        result, environment = load_result(folder, case_id)
        subject = Subject(
            result,
            environment,
            safe_name(result.case_id),
            {"run": home_to_tilde(str(folder)), "case": result.case_id},
        )
        stored = DirectoryFindingsStore(output / "findings")
        if result.signature is not None:
            finding = stored.get(result.repro, result.signature.text)
            if finding is not None:
                subject.finding = finding
                subject.finding_record = finding.to_json()
        return subject
    if case:
        raise UsageError(f"--case goes with a run's results, and {ref!r} is not a run")
    finding, record, path = load_finding(ref, output)
    environment = dict(finding.environment)
    subject = Subject(
        result_from_finding(finding),
        environment,
        path.stem,
        {"finding": home_to_tilde(str(path))},
        finding,
        record,
    )
    interpreter = interpreter_for(environment, python) if rerun_finding else None
    if interpreter and work is not None:
        try:
            again = rerun(finding, interpreter, work)
        except (UsageError, ValueError) as exc:
            subject.notes.append(f"the minimal config could not be run again: {exc}")
        else:
            seen = again.signature.text if again.signature else again.outcome.label
            if seen == finding.signature:
                subject.result = again
                subject.notes.append(
                    f"re-ran the minimal config under {home_to_tilde(interpreter)}: same signature"
                )
            else:
                subject.notes.append(
                    f"re-running the minimal config under {home_to_tilde(interpreter)} gave "
                    f"{seen}, not {finding.signature}; the report uses the finding's record"
                )
    elif rerun_finding:
        subject.notes.append(
            f"no interpreter with triton {subject.triton_version} to re-run the minimal config; "
            "no captured output or MLIR reproducer"
        )
    return subject


# ---------------------------------------------------------------------------------------------
# The standalone reproducer: the compile call the case makes, captured.
# ---------------------------------------------------------------------------------------------


class _Captured(Exception):
    pass


@dataclass
class CompileCall:
    """What the reproducer passed to ``triton.compile`` for the case."""

    kernel_name: str
    kernels: list[str]
    globals_: list[tuple[str, str]]
    signature: dict[str, str]
    constexprs: dict[str, Any]
    arch: int
    options: dict[str, Any]
    arg_names: list[str] = field(default_factory=list)


def _literal(value: Any) -> str:
    """Python source for a constexpr value; ``ValueError`` when there is none."""
    import triton.language as tl

    if isinstance(value, tl.constexpr):
        value = value.value
    if isinstance(value, tl.dtype):
        return f"tl.{value.name}" if hasattr(tl, value.name) else repr(str(value))
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_literal(v) for v in value)
        return f"({inner},)" if isinstance(value, tuple) else f"[{inner}]"
    raise ValueError(f"no literal for {type(value).__name__}")


class _Source:
    """Python source of a literal (``repr`` prints it bare inside dicts)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def capture_compile(result: CaseResult, timeout_s: float = 300) -> CompileCall | None:
    """The ``triton.compile`` call the reproducer makes for ``result``'s case, or ``None``.

    The reproducer's compile function runs in a child interpreter (``python -m suite.report
    --capture``), as every case does: it may print, crash or hang. There ``triton.compile``
    is replaced by a recorder that raises as soon as it is called, so nothing is compiled.
    ``None`` when the reproducer cannot be found or makes no such call (the CUDA programs).
    """
    with tempfile.TemporaryDirectory(prefix="repro-capture-") as work:
        given, taken = Path(work) / "result.json", Path(work) / "call.json"
        given.write_text(json.dumps(result.to_json(), default=str))
        env = child_env({"TRITON_CACHE_DIR": str(Path(work) / "cache")})
        try:
            subprocess.run(
                [sys.executable, "-m", "suite.report", "--capture", str(given), str(taken)],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return None
        if not taken.is_file():
            return None
        call = json.loads(taken.read_text())
    return CompileCall(
        call["kernel_name"],
        call["kernels"],
        [(name, source) for name, source in call["globals"]],
        call["signature"],
        {name: _Source(source) for name, source in call["constexprs"].items()},
        call["arch"],
        call["options"],
        call["arg_names"],
    )


def _capture_here(result: CaseResult) -> dict[str, Any] | None:
    """The child's side of :func:`capture_compile`: the call, as JSON-ready data."""
    import triton
    from triton.runtime.jit import JITFunction

    from suite.api import Case, Target

    found = _found_for(result)
    if found is None or found.repro.compile_fn is None:
        return None
    calls: list[tuple[Any, Any, dict[str, Any]]] = []

    def recorder(src: Any, target: Any = None, options: Any = None, **_: Any) -> Any:
        calls.append((src, target, dict(options or {})))
        raise _Captured

    triton.compile = recorder
    with contextlib.suppress(_Captured):
        found.repro.compile_fn(Case(found.repro.id, result.config, Target(result.target)))
    if not calls:
        return None
    src, target, options = calls[0]
    fn = getattr(src, "fn", None)
    if not isinstance(fn, JITFunction):
        return None
    constants = getattr(src, "constants", None) or getattr(src, "constexprs", None) or {}
    constexprs: dict[str, str] = {}
    for key, value in constants.items():
        index = key[0] if isinstance(key, tuple) and len(key) == 1 else key
        name = fn.arg_names[index] if isinstance(index, int) else str(index)
        constexprs[name] = _literal(value)
    signature = {
        (fn.arg_names[k] if isinstance(k, int) else str(k)): str(v)
        for k, v in dict(src.signature).items()
        if str(v) != "constexpr"
    }
    kernels, globals_ = _module_kernels(sys.modules.get(fn.fn.__module__), fn)
    arch = int(getattr(target, "arch", None) or limits_for(result.target).arch)
    json.dumps(options)  # options must be plain data to be written into a script
    return {
        "kernel_name": fn.__name__,
        "kernels": kernels,
        "globals": globals_,
        "signature": signature,
        "constexprs": constexprs,
        "arch": arch,
        "options": options,
        "arg_names": list(fn.arg_names),
    }


def _found_for(result: CaseResult) -> Any:
    from suite.child import load_reproducers
    from suite.discover import Found, select

    spec = result.artifacts.get("spec.json")
    if spec and Path(spec).is_file():
        try:
            source = json.loads(Path(spec).read_text())["source"]
            for repro in load_reproducers(source):
                if repro.id == result.repro:
                    return Found(repro, source)
        except Exception:
            pass
    try:
        return next((f for f in select([result.repro]) if f.repro.id == result.repro), None)
    except UsageError:
        return None


def _module_kernels(module: Any, fn: Any) -> tuple[list[str], list[tuple[str, str]]]:
    """Every module-level ``@triton.jit`` function's source, in file order, and the simple
    module-level constants they name."""
    from triton.runtime.jit import JITFunction

    jitted = [fn]
    if module is not None:
        jitted += [v for v in vars(module).values() if isinstance(v, JITFunction) and v is not fn]
    unique = {id(j): j for j in jitted}.values()
    ordered = sorted(unique, key=lambda j: inspect.getsourcelines(j.fn)[1])
    names: set[str] = set()
    for j in ordered:
        names.update(j.fn.__code__.co_names)
    constants: list[tuple[str, str]] = []
    for name in sorted(names):
        value = getattr(module, name, None) if module is not None else None
        if name.isupper() and value is not None and not callable(value):
            try:
                constants.append((name, _literal(value)))
            except ValueError:
                continue
    return [inspect.getsource(j.fn).rstrip() for j in ordered], constants


def repro_script(
    env: Environment, subject: Subject, call: CompileCall, expected: str, title: str
) -> str:
    options_text = ", ".join(f"{k}={v}" for k, v in call.options.items()) or "default options"
    return env.get_template("repro.py.j2").render(
        title=title,
        report_id=subject.report_id,
        target=subject.result.target,
        arch=call.arch,
        expected=expected,
        triton_version=subject.triton_version,
        options=call.options,
        options_text=options_text,
        signature=call.signature,
        constexprs=call.constexprs,
        globals_=call.globals_,
        kernels=call.kernels,
        kernel_name=call.kernel_name,
        timeout_s=REPRO_TIMEOUT_S,
    )


def minimal_snippet(call: CompileCall, triton_version: str) -> str:
    """The kernel and the bare compile call, for the issue body: what a maintainer pastes.

    Written for the affected release's ``ASTSource`` (``constexprs=`` by name from 3.3 on,
    ``constants=`` by position before); ``repro.py`` chooses at run time instead.
    """
    from packaging.version import InvalidVersion, Version

    try:
        by_name = Version(triton_version.split("+")[0]) >= Version("3.3")
    except InvalidVersion:
        by_name = True
    lines = [
        "import triton",
        "import triton.language as tl",
        "from triton.backends.compiler import GPUTarget",
        "from triton.compiler import ASTSource",
        "",
        *(f"{name} = {value}" for name, value in call.globals_),
        "",
        *(f"{source}\n\n" for source in call.kernels),
    ]
    if by_name:
        types = ", ".join(f"{n!r}: {call.signature.get(n, 'constexpr')!r}" for n in call.arg_names)
        values = ", ".join(f"{k!r}: {v!r}" for k, v in call.constexprs.items())
        lines.append(f"src = ASTSource({call.kernel_name}, {{{types}}}, constexprs={{{values}}})")
    else:
        position = {name: i for i, name in enumerate(call.arg_names)}
        types = ", ".join(f"{position[k]}: {v!r}" for k, v in call.signature.items())
        values = ", ".join(f"{position[k]}: {v!r}" for k, v in call.constexprs.items())
        lines.append(f"src = ASTSource({call.kernel_name}, {{{types}}}, constants={{{values}}})")
    target = f'GPUTarget("cuda", {call.arch}, 32)'
    lines.append(f"triton.compile(src, target={target}, options={call.options!r})")
    return "\n".join(lines).replace("\n\n\n\n", "\n\n\n") + "\n"


def foreign_imports(script: str) -> list[str]:
    """Top-level modules ``script`` imports beyond the standard library, triton and torch."""
    allowed = set(sys.stdlib_module_names) | {"triton", "torch"}
    found: set[str] = set()
    for node in ast.walk(ast.parse(script)):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return sorted(found - allowed)


# ---------------------------------------------------------------------------------------------
# Proof: repro.py in a clean venv holding the affected release alone.
# ---------------------------------------------------------------------------------------------


@dataclass
class Verification:
    """One run of ``repro.py`` under one Triton release."""

    ok: bool
    version: str
    line: str
    exit: int | None = None
    signature: str | None = None
    python: str = ""
    output: str = ""
    command: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "version": self.version,
            "line": self.line,
            "exit": self.exit,
            "signature": self.signature,
            "python": home_to_tilde(self.python),
            "command": self.command,
        }


def venv_folder(version: str) -> Path:
    return cache_root() / "venvs" / f"triton-{version}"


def _triton_version(python: Path) -> str | None:
    try:
        proc = subprocess.run(
            [str(python), "-c", "import triton; print(triton.__version__)"],
            capture_output=True,
            text=True,
            timeout=120,
            env=clean_env(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def venv_for(version: str) -> Path:
    """The cached venv of ``triton==version`` (reused, else built); raises UsageError."""
    python = venv_folder(version) / "bin" / "python"
    if python.exists() and _triton_version(python) == version:
        return python
    try:
        from suite.venvs import for_version  # the project's shared venv builder, when present
    except ImportError:
        return _build_venv(version)
    return Path(for_version(version).python)


def _build_venv(version: str) -> Path:
    folder = venv_folder(version)
    folder.parent.mkdir(parents=True, exist_ok=True)
    python = folder / "bin" / "python"
    with open(folder.parent / f".triton-{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.exists() and _triton_version(python) == version:
            return python
        shutil.rmtree(folder, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        installed = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"triton=={version}"],
            capture_output=True,
            text=True,
        )
        if installed.returncode != 0:
            shutil.rmtree(folder, ignore_errors=True)
            last = (installed.stderr.strip().splitlines() or ["no output"])[-1]
            raise UsageError(f"cannot install triton=={version}: {last}")
    return python


def clean_env() -> dict[str, str]:
    """A minimal environment: no PYTHONPATH, no TRITON_* knobs, nothing of this project."""
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.setdefault("LANG", "C.UTF-8")
    return env


_SIGNATURE_LINE = re.compile(r"^signature: (.+)$", re.MULTILINE)


def run_script(python: str, script: Path, timeout_s: float = VERIFY_TIMEOUT_S) -> Verification:
    """``python repro.py`` in the script's folder with a clean environment."""
    command = f"python {script.name}"
    try:
        proc = subprocess.run(
            [python, script.name],
            cwd=script.parent.resolve(),
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        return Verification(False, "", f"Not verified: {command} ran past {timeout_s:g} s")
    output = (proc.stderr + proc.stdout).replace(str(script.parent.resolve()) + os.sep, "")
    found = _SIGNATURE_LINE.search(proc.stdout)
    signature = found.group(1).strip() if found else None
    if signature == "none":
        signature = None
    return Verification(False, "", "", proc.returncode, signature, python, output.rstrip(), command)


def verify(script: Path, version: str, expected: str) -> Verification:
    """Run ``script`` in the clean venv of ``version``: a ``Verified:``/``Not verified:`` line."""
    foreign = foreign_imports(script.read_text())
    if foreign:
        return Verification(False, version, f"Not verified: repro.py imports {', '.join(foreign)}")
    try:
        python = venv_for(version)
    except (UsageError, subprocess.CalledProcessError, OSError) as exc:
        return Verification(False, version, f"Not verified: no venv with triton {version}: {exc}")
    run = run_script(str(python), script)
    run.version = version
    if run.exit is None:
        run.line = run.line or f"Not verified: repro.py did not finish on triton {version}"
        return run
    if run.exit != 0 and run.signature == expected:
        run.ok = True
        run.line = (
            f"Verified: reproduces on triton {version} (exit {run.exit}, signature {expected})"
        )
    else:
        run.line = (
            f"Not verified: repro.py exited {run.exit} on triton {version} with signature "
            f"{run.signature or 'none'} (expected {expected})"
        )
    return run


def check_current(script: Path, version: str, expected: str) -> Verification | None:
    """``script`` under this interpreter's Triton, when that is another release."""
    try:
        import triton
    except ImportError:
        return None
    current = str(triton.__version__)
    if current == version:
        return None
    run = run_script(sys.executable, script)
    run.version = current
    reproduces = run.exit not in (None, 0) and run.signature == expected
    state = "still reproduces" if reproduces else "does not reproduce"
    run.ok = reproduces
    run.line = (
        f"On triton {current} (this machine's): {state} "
        f"(exit {run.exit}, signature {run.signature or 'none'})"
    )
    return run


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
    subject = repro_title or result.repro
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


def write_report(
    subject: Subject,
    folder: Path,
    *,
    templates: Path | None = None,
    baseline: Baseline | None = None,
    verify_release: bool = False,
) -> Written:
    """Write the report of ``subject`` into ``folder``, replacing what a previous report left.

    What ``repro replay`` wrote there (``replay.json`` and the files it lists) is kept:
    the issue gains its IR section from them.
    """
    result = subject.result
    found_triage = triage(result)
    if found_triage is None:
        raise UsageError(
            f"{result.case_id} did not fail ({result.outcome.label}): nothing to report"
        )
    env = template_environment(templates)
    baseline = baseline or Baseline.load()
    kept = _replay_files(folder)
    for path in folder.iterdir() if folder.is_dir() else ():
        if path.name not in kept:
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    files: list[str] = []
    expected = result.signature.text if result.signature else result.outcome.label
    repro_title = _repro_title(result)
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
    family = family_of(result)
    call = capture_compile(result) if family != "cuda-tma" else None
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
            current = check_current(folder / "repro.py", subject.triton_version, expected)
    elif verify_release:
        why = (
            "the CUDA reproducers run on a GPU: follow the steps in nvidia.md"
            if family == "cuda-tma"
            else "no standalone repro.py could be made (the reproducer does not call "
            "triton.compile with a module-level @triton.jit kernel)"
        )
        verification = Verification(False, subject.triton_version, f"Not verified: {why}")
    if verification is not None and verification.output:
        observed_from = f"`{verification.command}` on triton {verification.version}"
        observed = scrub(verification.output)
    else:
        observed_from = "the suite's run of the case"
        observed = output
    status = "unverified"
    if verification is not None:
        status = "ready" if verification.ok else "not-verified"
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
    }
    kind = "issue"
    body_file = ""
    if upstream is not None:
        kind = "comment"
        put("comment.md", env.get_template("comment.md.j2").render(**context, head=60, tail=60))
        body_file = "comment.md"
    elif found_triage.label == COMPILER_BUG:
        put("issue.md", _fit(env, "issue.md.j2", context))
        body_file = "issue.md"
    if found_triage.label == DRIVER_BUG or result.outcome is Outcome.PTXAS_ERROR:
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
    return {"replay.json", *json.loads(record.read_text()).get("files", {}).values()}


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
    """Render with the largest head and tail of the full output that keep the body postable."""
    text = ""
    for keep in (400, 200, 100, 50, 20):
        text = env.get_template(name).render(**context, head=keep, tail=keep)
        if len(text) <= BODY_LIMIT:
            return text
    return text


def _repro_title(result: CaseResult) -> str:
    found = _found_for(result)
    return found.repro.title if found is not None else result.repro


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
        title = written.upstream
    return f"{title}\n{rest}"


def default_folder(output: Path, report_id: str) -> Path:
    return output / report_id


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
    if written.kind == "comment":
        yield f"matches {written.upstream}: comment draft in {shown}/comment.md (no new issue)"
    else:
        yield f"{written.triage.label}: {shown}/{written.body_file or 'report.json'}"
    yield f"  {scrub(written.triage.explanation)}"
    if written.verification is not None:
        yield written.verification.line
    yield f"status: {written.status} ({shown}/report.json)"


def _capture_main(argv: list[str]) -> int:
    """``python -m suite.report --capture RESULT.json CALL.json`` (run by capture_compile)."""
    result = CaseResult.from_json(json.loads(Path(argv[0]).read_text()))
    try:
        call = _capture_here(result)
    except Exception:
        return 1
    if call is None:
        return 1
    Path(argv[1]).write_text(json.dumps(call))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--capture":
        sys.exit(_capture_main(sys.argv[2:]))
    sys.exit("usage: python -m suite.report --capture RESULT.json CALL.json")
