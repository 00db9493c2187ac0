"""Which release introduced or fixed a finding: a binary search over Triton releases.

The question asked of each release is the one explore asks of each config
(``suite.search.explore.interesting``): does the finding's minimal config, on its
target, still fail with exactly its signature? A release where the case is
skipped (the API is missing, the bundled ptxas lacks the target) or fails
differently answers neither yes nor no: it is set aside and named, never
counted as good or bad.

The direction follows the user's ``--good`` and ``--bad``: a good release
newer than the bad one asks for the first good release (the fix); an older
one asks for the first bad release (the regression).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from packaging.version import Version

from suite.engine.discover import select
from suite.engine.outcome import Outcome
from suite.engine.runner import Execution
from suite.errors import UsageError
from suite.search.explore import Evaluator, interesting
from suite.search.findings import Finding
from suite.toolchain.venvs import Release

BAD, GOOD, UNSUPPORTED, OTHER = "bad", "good", "unsupported", "other failure"


@dataclass
class Bisection:
    """What the search found, with every release it tried and what each said."""

    direction: str  # "fix": the bug ends at `good`; "regression": it begins at `bad`
    bad: str  # the bad release next to the boundary
    good: str | None  # the good release next to it (None: no supported good release)
    tried: dict[str, str] = field(default_factory=dict)
    set_aside: dict[str, str] = field(default_factory=dict)
    note: str = ""

    @property
    def first_good(self) -> str | None:
        return self.good if self.direction == "fix" else None

    @property
    def first_bad(self) -> str | None:
        return self.bad if self.direction == "regression" else None

    def to_json(self) -> dict[str, object]:
        return {**asdict(self), "first_bad": self.first_bad, "first_good": self.first_good}


def between(versions: Sequence[str], good: str, bad: str) -> list[str]:
    """The releases from ``bad`` to ``good`` inclusive, ordered from the bad end."""
    low, high = sorted((Version(good), Version(bad)))
    inside = [v for v in versions if low <= Version(v) <= high]
    for end in (good, bad):
        if end not in inside:
            raise UsageError(f"release {end} is not in the list to search ({', '.join(versions)})")
    inside.sort(key=Version, reverse=Version(bad) > Version(good))
    return inside


def bisect(
    candidates: Sequence[str],
    state_of: Callable[[str], str],
) -> tuple[int, int, list[str], dict[str, str]]:
    """Binary search over ``candidates`` (bad end first) for the bad/good boundary.

    Returns the indices of the last bad and first good release in the pruned
    list (the good index is ``len`` when no supported good release exists), the
    pruned list, and the releases set aside with why.
    """
    order = list(candidates)
    set_aside: dict[str, str] = {}
    first = state_of(order[0])
    if first != BAD:
        raise UsageError(f"the --bad release {order[0]} does not reproduce the finding ({first})")

    def usable(index: int) -> str:
        state = state_of(order[index])
        if state in (UNSUPPORTED, OTHER):
            set_aside[order.pop(index)] = state
        return state

    while len(order) > 1 and usable(len(order) - 1) in (UNSUPPORTED, OTHER):
        pass
    if len(order) == 1 or state_of(order[-1]) == BAD:
        return len(order) - 1, len(order), order, set_aside
    low, high = 0, len(order) - 1
    while high - low > 1:
        middle = (low + high) // 2
        state = usable(middle)
        if state in (UNSUPPORTED, OTHER):
            high -= 1
        elif state == BAD:
            low = middle
        else:
            high = middle
    return low, high, order, set_aside


def run(
    finding: Finding,
    release_of: Callable[[str], Release],
    candidates: Sequence[str],
    execution: Execution,
    on_try: Callable[[str, str], None] = lambda release, state: None,
) -> Bisection:
    """Bisect ``finding`` over ``candidates`` (bad end first).

    ``release_of`` gives a release's interpreter; it is asked only for the releases
    the search visits, so only those venvs get built.
    """
    (found,) = select([finding.repro])
    tried: dict[str, str] = {}
    work = Path(tempfile.mkdtemp(prefix="repro-bisect-"))

    def state_of(label: str) -> str:
        if label not in tried:
            evaluator = Evaluator(
                found, replace(execution, python=release_of(label).python), work / label
            )
            result = evaluator(finding.minimal_config, finding.target)
            if result.outcome is Outcome.SKIPPED:
                tried[label] = UNSUPPORTED
            elif interesting(evaluator, finding.signature, finding.target, finding.minimal_config):
                tried[label] = BAD
            elif result.outcome.is_failure:
                tried[label] = OTHER
            else:
                tried[label] = GOOD
            on_try(label, tried[label])
        return tried[label]

    last_bad, first_good, order, set_aside = bisect(candidates, state_of)
    fix = Version(candidates[-1]) > Version(candidates[0])
    bad = order[last_bad]
    good = order[first_good] if first_good < len(order) else None
    note = ""
    if good is None:
        note = "no supported release in the range reproduces as good"
    if set_aside:
        named = ", ".join(f"{v} ({why})" for v, why in set_aside.items())
        note = (note + "; " if note else "") + f"set aside, neither good nor bad: {named}"
    return Bisection("fix" if fix else "regression", bad, good, tried, set_aside, note)
