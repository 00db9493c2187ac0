"""Compare a run with the checked-in expectations: known bugs and known limits.

An expectation names a reproducer, the targets and Triton releases it holds
for, the configs it covers (``where``), and the signature the failure must
have (an ``fnmatch`` pattern). Each case gets one verdict:

- ``ok``: passed or skipped, and nothing expected it to fail;
- ``known``: failed exactly as an expectation says;
- ``regression``: failed with no expectation, or with another signature than
  the expectation of its case (a different failure on a known-bug case);
- ``fixed``: an expectation covers the case and it passed (upstream fixed it);
- ``harness-error``: the suite or the reproducer's glue failed before Triton compiled.

The run's exit status follows: 1 on any regression, else 4 on any harness error, else 3
on any fix, else 0.
"""

from __future__ import annotations

import fnmatch
import operator
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from suite.engine.outcome import CaseResult, Outcome
from suite.errors import UsageError
from suite.files import load_structured

DEFAULT_BASELINE = Path(__file__).resolve().parents[2] / "repros" / "baseline.toml"

EXIT_OK, EXIT_REGRESSION, EXIT_USAGE, EXIT_FIXED = 0, 1, 2, 3
# The suite or a reproducer's glue failed before Triton compiled (a harness error): the
# case was not judged. Never 1, which says the compiler regressed.
EXIT_HARNESS = 4

_COMPARISON = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(-?\d+)\s*$")
_OPERATORS = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}


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

    def covers(self, result: CaseResult, triton_version: str) -> bool:
        """Whether this expectation speaks about the case (whatever its outcome).

        ``gpu = true`` limits it to launched cases (a failure only the hardware
        shows), ``gpu = false`` to compile-only ones.
        """
        if result.repro != self.repro:
            return False
        if self.gpu is not None and result.gpu != self.gpu:
            return False
        if self.targets and result.target not in self.targets:
            return False
        if self.triton and not _version_in(triton_version, self.triton):
            return False
        return all(_matches(result.config.get(k), v) for k, v in self.where.items())

    def matches(self, result: CaseResult) -> bool:
        """The pattern matches the signature, or its family (an entry that names no message
        holds whatever message the failure prints)."""
        if result.signature is None:
            return False
        return any(
            fnmatch.fnmatchcase(text, self.signature)
            for text in (result.signature.text, result.signature.family)
        )


def _version_in(version: str, spec: str) -> bool:
    try:
        # Nightly builds (3.6.0+git1234) compare as their release.
        return Version(version.split("+")[0]) in SpecifierSet(spec, prereleases=True)
    except InvalidVersion:
        return False


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
        for number, entry in enumerate(entries, 1):
            expectations.append(_expectation(entry, path, number))
        return cls(expectations, str(path))

    def judge(self, result: CaseResult, triton_version: str) -> CaseResult:
        """Set the case's verdict (and the expectation it was judged by)."""
        covering = [e for e in self.expectations if e.covers(result, triton_version)]
        if result.outcome.is_failure:
            known = next((e for e in covering if e.matches(result)), None)
            if known:
                result.verdict, result.expectation = "known", known.id
            else:
                result.verdict = "regression"
                result.expectation = covering[0].id if covering else ""
        elif result.outcome is Outcome.HARNESS_ERROR:
            result.verdict = "harness-error"
        elif result.outcome is Outcome.PASSED and covering:
            result.verdict, result.expectation = "fixed", covering[0].id
        else:
            result.verdict = "ok"
        return result


def _expectation(entry: Any, path: Path, number: int) -> Expectation:
    where = f"malformed baseline {path}: entry {number}"
    if not isinstance(entry, dict):
        raise UsageError(f"{where} is not a table")
    missing = [k for k in ("id", "repro", "signature", "kind") if k not in entry]
    if missing:
        raise UsageError(f"{where} lacks {', '.join(missing)}")
    allowed = set(Expectation.__dataclass_fields__)
    unknown = set(entry) - allowed
    if unknown:
        raise UsageError(f"{where} has unknown key(s) {', '.join(sorted(unknown))}")
    if entry.get("triton"):
        try:
            SpecifierSet(entry["triton"])
        except InvalidSpecifier:
            raise UsageError(f"{where}: bad triton range {entry['triton']!r}") from None
    entry = dict(entry)
    entry["targets"] = tuple(entry.get("targets", ()))
    return Expectation(**entry)


def exit_status(results: Iterable[CaseResult]) -> int:
    verdicts = {r.verdict for r in results}
    if "regression" in verdicts:
        return EXIT_REGRESSION
    if "harness-error" in verdicts:
        return EXIT_HARNESS
    if "fixed" in verdicts:
        return EXIT_FIXED
    return EXIT_OK
