"""Compare a run with the checked-in expectations: known bugs and known limits.

An expectation names a reproducer, the targets and Triton releases it holds
for, the configs it covers (``where``), and the signature the failure must
have (an ``fnmatch`` pattern). Each case gets one verdict:

- ``ok``: passed or skipped, and nothing expected it to fail;
- ``known``: failed exactly as an expectation says;
- ``regression``: failed with no expectation, or with another signature than
  the expectation of its case (a different failure on a known-bug case), or failed
  again on a release at or after the entry's ``fixed_in`` (the fixed bug came back);
- ``fixed``: an expectation covers the case and it passed, and the entry knows no fix
  that explains it (upstream fixed it: time to bisect and record ``fixed_in``);
- ``harness-error``: the suite or the reproducer's glue failed before Triton compiled;
- ``refused``: Triton's own Python refused the case with a limit it names
  (``user-error:triton-rejects``) and no expectation lists it: the release refusing the
  program, never a regression.

An entry's releases: ``triton`` (a range), narrowed by ``first_bad`` (the release the bug
appeared in) and ``fixed_in`` (the first release without it), both filled by
``repro bisect``. From ``fixed_in`` on the case is expected to pass: a pass is ``ok``.

The run's exit status follows: 1 on any regression, else 4 on any harness error, else 3
on any fix, else 0.

The file is read with the standard TOML reader and written only through :func:`write_entry`
and :func:`record_range` (tomlkit, which keeps its comments): nobody edits it by hand.
"""

from __future__ import annotations

import fnmatch
import operator
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomlkit
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from suite.engine.gpu_evidence import could_show
from suite.engine.outcome import CaseResult, Outcome, Signature, Verdict
from suite.errors import EXIT_FIXED, EXIT_HARNESS, EXIT_OK, EXIT_REGRESSION, UsageError
from suite.files import load_structured, locked, write_atomic

DEFAULT_BASELINE = Path(__file__).resolve().parents[2] / "repros" / "baseline.toml"

#: A link to an upstream GitHub issue or pull request, in an entry's ``upstream``.
UPSTREAM_ISSUE = re.compile(r"https?://github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/\d+")

_COMPARISON = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(-?\d+)\s*$")
_OPERATORS = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}

# Where a release stands for an entry (:meth:`Expectation.state_on`).
BEFORE, KNOWN, FIXED, OUTSIDE = "before first_bad", "known", "fixed", "outside range"


@dataclass(frozen=True)
class Expectation:
    """One known failure of the shipped or user baseline."""

    id: str
    repro: str
    signature: str
    kind: str
    targets: tuple[str, ...] = ()
    triton: str = ""
    where: Mapping[str, Any] = field(default_factory=dict)
    upstream: str = ""
    note: str = ""
    gpu: bool | None = None
    # The release the bug appeared in and the first release without it (repro bisect).
    first_bad: str = ""
    fixed_in: str = ""

    def applies(self, result: CaseResult) -> bool:
        """Whether the case is one this entry is about, on any release: its reproducer,
        target and configs. ``gpu = true`` limits it to launched cases (a failure only the
        hardware shows), ``gpu = false`` to compile-only ones."""
        if result.repro != self.repro:
            return False
        if self.gpu is not None and result.gpu != self.gpu:
            return False
        if self.targets and result.target not in self.targets:
            return False
        return all(_matches(result.config.get(k), v) for k, v in self.where.items())

    @property
    def upstream_issue(self) -> str:
        """The upstream GitHub issue or pull request ``upstream`` links to ('' for a note
        without one): the bug's own thread, so no report or nightly opens another."""
        found = UPSTREAM_ISSUE.search(self.upstream)
        return found.group(0) if found else ""

    def state_on(self, triton_version: str) -> str:
        """:data:`KNOWN` where the failure is expected, :data:`FIXED` from ``fixed_in`` on,
        :data:`BEFORE` before ``first_bad``, :data:`OUTSIDE` outside ``triton``."""
        release = _release(triton_version)
        if release is None:
            return OUTSIDE
        if self.fixed_in and release >= Version(self.fixed_in):
            return FIXED
        if self.first_bad and release < Version(self.first_bad):
            return BEFORE
        if self.triton and release not in SpecifierSet(self.triton, prereleases=True):
            return OUTSIDE
        return KNOWN

    def covers(self, result: CaseResult, triton_version: str) -> bool:
        """Whether this entry expects the case to fail on this release (whatever its outcome)."""
        return self.applies(result) and self.state_on(triton_version) == KNOWN

    def expects_fix(self, result: CaseResult, triton_version: str) -> bool:
        """Whether this entry says the case's bug is fixed on this release."""
        return self.applies(result) and self.state_on(triton_version) == FIXED

    def matches(self, result: CaseResult) -> bool:
        """The pattern matches the signature, or its family (an entry that names no message
        holds whatever message the failure prints)."""
        if result.signature is None:
            return False
        return any(
            fnmatch.fnmatchcase(text, self.signature)
            for text in (result.signature.text, result.signature.family)
        )


def _release(version: str) -> Version | None:
    try:
        # Nightly builds (3.6.0+git1234) compare as their release.
        return Version(version.split("+")[0])
    except InvalidVersion:
        return None


def _matches(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, list):
        return value in wanted
    if isinstance(wanted, str):
        comparison = _COMPARISON.match(wanted)
        if comparison and isinstance(value, int):
            return _OPERATORS[comparison.group(1)](value, int(comparison.group(2)))
    return bool(value == wanted)


@dataclass
class Baseline:
    expectations: list[Expectation]
    source: str = ""

    @classmethod
    def load(cls, path: Path | None = None) -> Baseline:
        path = path or DEFAULT_BASELINE
        data = load_structured(path, "baseline")
        entries = data.get("known", []) if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise UsageError(f"malformed baseline {path}: expected [[known]] entries")
        expectations = []
        seen: set[str] = set()
        for number, entry in enumerate(entries, 1):
            expectation = _expectation(entry, path, number)
            if expectation.id in seen:
                raise UsageError(f"malformed baseline {path}: duplicate id {expectation.id!r}")
            seen.add(expectation.id)
            expectations.append(expectation)
        return cls(expectations, str(path))

    def entry(self, entry_id: str) -> Expectation | None:
        return next((e for e in self.expectations if e.id == entry_id), None)

    def judge(self, result: CaseResult, triton_version: str) -> CaseResult:
        """``result`` with its verdict (and the expectation it was judged by)."""
        verdict, expectation = self.verdict_of(result, triton_version)
        return replace(result, verdict=verdict, expectation=expectation)

    def verdict_of(self, result: CaseResult, triton_version: str) -> tuple[Verdict, str]:
        """The verdict of ``result`` and the id of the entry it was judged by ('' for none)."""
        covering = [e for e in self.expectations if e.covers(result, triton_version)]
        if result.outcome.is_failure:
            known = next((e for e in covering if e.matches(result)), None)
            back = [
                e
                for e in self.expectations
                if e.expects_fix(result, triton_version) and e.matches(result)
            ]
            if known:
                return Verdict.KNOWN, known.id
            if result.refused:
                # The release refusing the program is not the compiler failing: never 1.
                return Verdict.REFUSED, ""
            # A fixed bug back again names its entry: the nightly reopens its issue.
            named = back or covering
            return Verdict.REGRESSION, named[0].id if named else ""
        if result.outcome is Outcome.HARNESS_ERROR:
            return Verdict.HARNESS_ERROR, result.expectation
        if result.outcome is Outcome.PASSED and covering:
            # A runtime failure judged by a compile alone: not evidence of a fix.
            seen = [e for e in covering if could_show(e.signature, result)]
            return (Verdict.FIXED if seen else Verdict.NEEDS_GPU), (seen or covering)[0].id
        return Verdict.OK, result.expectation


def _expectation(entry: Any, path: Path, number: int) -> Expectation:
    problem = entry_problem(entry)
    if problem:
        named = f" ({entry['id']})" if isinstance(entry, dict) and "id" in entry else ""
        raise UsageError(f"malformed baseline {path}: entry {number}{named}: {problem}")
    entry = dict(entry)
    entry["targets"] = tuple(entry.get("targets", ()))
    return Expectation(**entry)


def entry_problem(entry: Any) -> str:
    """What is wrong with one entry on its own ('' when nothing): not a table, a missing or
    unknown key, a key of the wrong type, a bad range."""
    if not isinstance(entry, dict):
        return "not a table"
    missing = [k for k in ("id", "repro", "signature", "kind") if k not in entry]
    if missing:
        return f"lacks {', '.join(missing)}"
    unknown = set(entry) - set(Expectation.__dataclass_fields__)
    if unknown:
        return f"unknown key(s) {', '.join(sorted(unknown))}"
    texts = [k for k in ("id", "repro", "signature", "kind", "triton", "first_bad", "fixed_in")]
    wrong = [k for k in texts if k in entry and not isinstance(entry[k], str)]
    if wrong:
        return f"{', '.join(wrong)} must be text"
    if not isinstance(entry.get("where", {}), dict):
        return "where must be a table"
    if not isinstance(entry.get("targets", []), list):
        return "targets must be a list"
    return range_problem(entry)


def range_problem(entry: Mapping[str, Any]) -> str:
    """What is wrong with an entry's releases ('' when nothing): a ``triton`` range that does
    not parse, a ``first_bad``/``fixed_in`` that is not a version, a fix not after the first
    bad release, or a ``triton`` range that leaves out ``first_bad``."""
    spec = None
    if entry.get("triton"):
        try:
            spec = SpecifierSet(str(entry["triton"]))
        except InvalidSpecifier:
            return f"bad triton range {entry['triton']!r}"
    versions: dict[str, Version] = {}
    for key in ("first_bad", "fixed_in"):
        if entry.get(key):
            try:
                versions[key] = Version(str(entry[key]))
            except InvalidVersion:
                return f"bad {key} {entry[key]!r}: not a release version (e.g. 3.6.0)"
    first_bad, fixed_in = versions.get("first_bad"), versions.get("fixed_in")
    if first_bad and fixed_in and fixed_in <= first_bad:
        return f"fixed_in {fixed_in} is not after first_bad {first_bad}"
    if spec is not None and first_bad and not spec.contains(first_bad, prereleases=True):
        return f"triton range {spec} does not hold first_bad {first_bad}"
    return ""


def exit_status(results: Iterable[CaseResult]) -> int:
    verdicts = {r.verdict for r in results}
    if Verdict.REGRESSION in verdicts:
        return EXIT_REGRESSION
    if Verdict.HARNESS_ERROR in verdicts:
        return EXIT_HARNESS
    if Verdict.FIXED in verdicts:
        return EXIT_FIXED
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# Writing the file: through tomlkit, so that comments and layout stay as they were.
# ---------------------------------------------------------------------------------------------

#: The order of an entry's keys as written.
KEY_ORDER = tuple(Expectation.__dataclass_fields__)


def write_entry(path: Path, fields: Mapping[str, Any]) -> str:
    """Add the entry ``fields`` (a new id) or update the entry of the same id (only the keys
    given change; an empty value removes its key). Returns ``added`` or ``updated``. The
    result must load: an entry that would not is refused (exit 2) and nothing is written."""
    document = _document(path)
    entries = document.setdefault("known", tomlkit.aot())
    existing = next((e for e in entries if e.get("id") == fields["id"]), None)
    table = existing if existing is not None else tomlkit.table()
    for key in KEY_ORDER:
        if key not in fields:
            continue
        value = fields[key]
        if value in ("", None, (), [], {}):
            table.pop(key, None)
        else:
            _put(table, key, _inline(value) if key == "where" else value)
    if existing is None:
        entries.append(table)
    _save(path, document)
    return "added" if existing is None else "updated"


def record_range(
    path: Path,
    failure: CaseResult,
    first_bad: str | None = None,
    fixed_in: str | None = None,
) -> str | None:
    """Fill ``first_bad``/``fixed_in`` of the entry that knows ``failure`` (a failing case of
    the bug, on any release): what ``repro bisect --baseline FILE`` calls with its conclusive
    answer. Returns the entry's id, or None when no entry knows the failure (``repro baseline
    accept`` adds one)."""
    with locked(path.parent):  # read, change and replace: no other writer in between
        baseline = Baseline.load(path)
        known = next(
            (e for e in baseline.expectations if e.applies(failure) and e.matches(failure)), None
        )
        if known is None or not (first_bad or fixed_in):
            return None
        fields: dict[str, Any] = {"id": known.id}
        if first_bad:
            fields["first_bad"] = first_bad
        if fixed_in:
            fields["fixed_in"] = fixed_in
        write_entry(path, fields)
        return known.id


def failure_of(repro: str, target: str, config: Mapping[str, Any], signature: str) -> CaseResult:
    """A failing case of ``repro`` with ``signature``, as a finding describes it."""
    outcome = Outcome.from_label(signature.split(":", 1)[0])
    return CaseResult(
        f"{repro}[finding]", repro, target, dict(config), outcome, Signature(signature)
    )


def _document(path: Path) -> tomlkit.TOMLDocument:
    if not path.exists():
        return tomlkit.document()
    Baseline.load(path)  # a malformed file is exit 2 and stays untouched
    return tomlkit.parse(path.read_text(encoding="utf-8"))


def _put(table: Any, key: str, value: Any) -> None:
    """Set ``key``; a new key goes after the table's last key, before the comments and blank
    lines that end it (in this file they introduce the next entry)."""
    value = list(value) if isinstance(value, tuple) else value
    if key in table:
        table[key] = value
        return
    body = table.value.body
    trailing: list[Any] = []
    while body and body[-1][0] is None:
        trailing.insert(0, body.pop())
    table[key] = value
    body.extend(trailing)


def _inline(where: Mapping[str, Any]) -> Any:
    table = tomlkit.inline_table()
    table.update(dict(where))
    return table


def _save(path: Path, document: tomlkit.TOMLDocument) -> None:
    text = tomlkit.dumps(document)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, checked = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".check.toml", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        Baseline.load(Path(checked))
    finally:
        os.unlink(checked)
    write_atomic(path, text)
