"""Which release introduced or fixed a finding: a binary search over Triton releases.

A release is asked about every config the finding has seen fail, not only the minimal
one: a shrunk config can pass on a release where the original trigger still fails, and
bisecting it alone names a "first good" release too early. The configs are the minimal
config, the reproducer's curated configs, and the configs seen failing, on their targets,
up to a bound (:data:`MAX_CONFIGS`). A release is

- bad when any of them fails as the finding does (:func:`suite.engine.same_bug.is_same_bug`:
  the same family, its message possibly changed; the signature seen is kept per release);
  the configs after the first that does are not compiled on that release;
- good only when none fails at all and at least one passes, or got past the stage where
  the bug fails (a compile that reached ptxas, which does not know the target, has
  completed the ``ptx`` stage of an LLVM instruction-selection crash:
  :func:`suite.engine.same_bug.completed_stage`);
- set aside otherwise: every config skipped (``unsupported`` or ``toolchain-gap``, the
  vocabulary of run and matrix), or a config failing some other way. A set-aside release
  is named, never counted as good or bad, and never the last bad.

A fix search in which no release passes but the bug's own failure ends in a release where
the configs fail another way (#8005's assertion became a diagnostic in 3.5.0) names that
release as ``replaced_in``, with what the configs show there (:func:`where_it_ends`), and
no first good release. When a later release passes, releases failing otherwise between
are named as undecided instead: the bug may have ended there, or only changed its message
(#4418's 3.2.0).

The direction follows the user's ``--good`` and ``--bad``: a good release newer than the
bad one asks for the first good release (the fix); an older one asks for the first bad
release (the regression). Releases are ordered oldest first by version; nightly builds
whose versions differ only in their git hash keep the order given
(:func:`suite.releases.nightlies.chronological`), and when both ends of the answer carry a
hash the answer names the commit range between them and upstream's compare link.
:func:`record` writes a conclusive answer into the finding
(``first_good``, ``first_bad``, the per-release signatures): what a baseline's
``fixed_in`` should be filled from.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from suite.api import Config
from suite.engine import (
    NEEDS_GPU,
    TOOLCHAIN_GAP,
    UNSUPPORTED,
    CaseSpec,
    Execution,
    Found,
    Outcome,
    Workers,
    completed_stage,
    could_show,
    gpu_arch,
    is_same_bug,
    needs_gpu,
    reproducer_for,
    runtime_failure,
)
from suite.errors import UsageError
from suite.failures.findings import Finding, SeenConfig
from suite.releases.nightlies import CommitRange, chronological, commit_range
from suite.search.evaluate import Evaluator
from suite.toolchain.limits import limits_for
from suite.toolchain.venvs import Release

BAD, GOOD, OTHER = "bad", "good", "other failure"
#: The states that set a release aside.
SET_ASIDE = (UNSUPPORTED, TOOLCHAIN_GAP, OTHER, NEEDS_GPU)
#: The configs a release is asked about, at most (each is one compile per release tried).
MAX_CONFIGS = 8
#: What a release's configs after its first bad one show: a release is bad as soon as one
#: config fails as the bug, so they are not compiled (a good release compiles every one).
NOT_COMPILED = "not compiled (the release is bad already)"


@dataclass
class Bisection:
    """What the search found, with every release it tried and what each said."""

    direction: str  # "fix": the bug ends at `good`; "regression": it begins at `bad`
    bad: str  # the bad release next to the boundary
    good: str | None  # the good release next to it (None: no supported good release)
    tried: dict[str, str] = field(default_factory=dict)
    set_aside: dict[str, str] = field(default_factory=dict)
    note: str = ""
    # release -> one line per config: "<target> <config>: bad|passed|skipped|<signature>"
    configs: dict[str, list[str]] = field(default_factory=dict)
    # release -> the signature the finding's bug showed there
    signatures: dict[str, str] = field(default_factory=dict)
    # A regression whose older releases cannot run the reproducer at all (unsupported):
    # the bad end is the first release where the bug can be reached.
    unsupported_before: bool = False
    # A fix search where no release passes, but the bug's failure ends: from this release on
    # the same configs fail some other way (a diagnostic that replaced a crash, or another
    # failure hiding the bug). Never a first good release.
    replaced_in: str | None = None
    # Both ends are nightly builds whose versions carry git hashes: the commits between.
    commits: CommitRange | None = None

    @property
    def conclusive(self) -> bool:
        return self.good is not None or self.unsupported_before

    @property
    def first_good(self) -> str | None:
        return self.good if self.direction == "fix" else None

    @property
    def first_bad(self) -> str | None:
        return self.bad if self.direction == "regression" else None

    def to_json(self) -> dict[str, object]:
        return {
            **asdict(self),
            "first_bad": self.first_bad,
            "first_good": self.first_good,
            "commits": self.commits.to_json() if self.commits else None,
        }


def record(finding: Finding, outcome: Bisection) -> Finding:
    """``finding`` with what ``outcome`` established: the first good (or bad) release, the
    signature seen on each release, and the bisection itself. Nothing is overwritten with
    an inconclusive answer (no good release found keeps what was stored)."""
    if outcome.first_good:
        finding.first_good = outcome.first_good
    if outcome.first_bad and outcome.conclusive:
        finding.first_bad = outcome.first_bad
    finding.signatures = {**finding.signatures, **outcome.signatures}
    finding.bisect = outcome.to_json()
    return finding


def configs_to_try(finding: Finding, found: Found, limit: int = 0) -> list[SeenConfig]:
    """The minimal config, the curated configs on the finding's targets, then the configs
    seen failing; at most ``limit`` (:data:`MAX_CONFIGS`)."""
    limit = limit or MAX_CONFIGS
    repro = found.repro
    entries = [SeenConfig(finding.target, dict(finding.minimal_config))]
    for configs in repro.configs.values():
        for config in configs:
            for target in finding.targets or [finding.target]:
                entry = SeenConfig(target, dict(config))
                if entry not in entries and target in repro.targets and not repro.problems(config):
                    entries.append(entry)
    for entry in finding.failing_configs:
        if entry not in entries:
            entries.append(entry)
    return entries[:limit]


def between(versions: Sequence[str], good: str, bad: str) -> list[str]:
    """The releases from ``bad`` to ``good`` inclusive, ordered from the bad end
    (``versions`` in any order; builds that differ only in their hash keep theirs)."""
    order = chronological(versions)
    for end in (good, bad):
        if end not in order:
            raise UsageError(f"release {end} is not in the list to search ({', '.join(versions)})")
    low, high = sorted((order.index(good), order.index(bad)))
    inside = order[low : high + 1]
    return inside[::-1] if order.index(bad) > order.index(good) else inside


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
    if first == NEEDS_GPU:
        raise UsageError(
            f"the --bad release {order[0]}: the finding is a runtime failure and "
            f"{needs_gpu('of its target')}: run `repro bisect` on a machine with one"
        )
    if first != BAD:
        raise UsageError(f"the --bad release {order[0]} does not reproduce the finding ({first})")

    def usable(index: int) -> str:
        state = state_of(order[index])
        if state in SET_ASIDE:
            set_aside[order.pop(index)] = state
        return state

    while len(order) > 1 and usable(len(order) - 1) in SET_ASIDE:
        pass
    if len(order) == 1 or state_of(order[-1]) == BAD:
        return len(order) - 1, len(order), order, set_aside
    low, high = 0, len(order) - 1
    while high - low > 1:
        middle = (low + high) // 2
        state = usable(middle)
        if state in SET_ASIDE:
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
    max_configs: int = MAX_CONFIGS,
    chronology: Sequence[str] = (),
) -> Bisection:
    """Bisect ``finding`` over ``candidates`` (bad end first); ``chronology`` orders them
    oldest first when their versions alone cannot (default: by version).

    ``release_of`` gives a release's interpreter; it is asked only for the releases
    the search visits, so only those venvs get built. The reproducer is loaded from the
    source the finding carries (``suite.engine.sources``), so a file given by path works.
    """
    found, _ = reproducer_for(finding.repro, finding.source)
    entries = configs_to_try(finding, found, max_configs)
    tried: dict[str, str] = {}
    lines: dict[str, list[str]] = {}
    seen: dict[str, str] = {}
    work = Path(tempfile.mkdtemp(prefix="repro-bisect-"))

    # A runtime failure is judged by launching, on a GPU of its target; without one a
    # release is set aside, never good.
    launch_arch = gpu_arch() if runtime_failure(finding.signature) else None

    def state_of(label: str) -> str:
        if label in tried:
            return tried[label]
        under = replace(execution, python=release_of(label).python)
        # The release's configs forked from one warm template (``--isolation warm``, the
        # default), as a run's cases are: a fresh interpreter each cost several times more.
        targets = sorted({entry.target for entry in entries})
        launches = launch_arch is not None and found.repro.launches
        specs = [
            CaseSpec(found, {}, t, launches and limits_for(t).arch == launch_arch) for t in targets
        ]
        with Workers(under, specs) as workers:
            warm = workers if under.warm else None
            evaluator = Evaluator(found, under, work / label, launch_arch=launch_arch, workers=warm)
            return judged(label, evaluator)

    def judged(label: str, evaluator: Evaluator) -> str:
        states, lines[label] = [], []
        for index, entry in enumerate(entries):
            if BAD in states:  # one bad config decides the release: the rest need no compile
                lines[label] += [
                    f"{e.target} {_config_text(e.config)}: {NOT_COMPILED}" for e in entries[index:]
                ]
                break
            result = evaluator(entry.config, entry.target)
            signature = result.signature.text if result.signature else ""
            if result.outcome.is_failure and is_same_bug(finding.signature, signature):
                state, shown = (
                    BAD,
                    "bad" + ("" if signature == finding.signature else f" ({signature})"),
                )
                seen.setdefault(label, signature)
            elif result.skip_kind == TOOLCHAIN_GAP and completed_stage(
                finding.signature, result.site.stage
            ):
                # Stopped by the toolchain after the stage where the bug fails: past it.
                state, shown = GOOD, f"past the bug's stage ({result.message})"
            elif result.outcome is Outcome.SKIPPED:
                state, shown = result.skip_kind, result.message
            elif result.outcome.is_failure or result.outcome is Outcome.HARNESS_ERROR:
                state, shown = OTHER, signature or result.outcome.label
            elif not could_show(finding.signature, result):
                state, shown = NEEDS_GPU, f"{Outcome.COMPILED.label}; {needs_gpu(entry.target)}"
            else:
                state, shown = GOOD, result.outcome.label
            states.append(state)
            lines[label].append(f"{entry.target} {_config_text(entry.config)}: {shown}")
        if BAD in states:
            tried[label] = BAD
        elif OTHER in states:
            tried[label] = OTHER
        elif GOOD in states:
            tried[label] = GOOD
        elif NEEDS_GPU in states:
            tried[label] = NEEDS_GPU
        else:
            tried[label] = TOOLCHAIN_GAP if set(states) == {TOOLCHAIN_GAP} else UNSUPPORTED
        on_try(label, tried[label])
        return tried[label]

    last_bad, first_good, order, set_aside = bisect(candidates, state_of)
    oldest_first = list(chronology) or chronological(candidates)
    rank = {label: index for index, label in enumerate(oldest_first)}
    fix = rank[candidates[-1]] > rank[candidates[0]]
    bad = order[last_bad]
    good = order[first_good] if first_good < len(order) else None
    notes = []
    replaced_in = None
    # No release passes: where the bug's own failure ends, if it ends in another failure.
    # (With a passing release, releases failing otherwise in between are named as undecided
    # below: the bug may have ended there, or only changed its message.)
    ends = where_it_ends(candidates, state_of) if fix and good is None else None
    if ends:
        bad, replaced_in = ends
        set_aside = {v: why for v, why in set_aside.items() if v != replaced_in}
        others = sorted(
            {ln.split(": ", 1)[1] for ln in lines[replaced_in] if not ln.endswith("passed")}
        )
        notes.append(
            f"no release in the range passes, but the bug ends in {replaced_in}: from "
            f"there the configs that failed with it fail otherwise ({'; '.join(others)}); "
            "the bug was fixed into that failure or is hidden behind it, so no first good "
            "release is named"
        )
    older = [v for v in set_aside if rank[v] < rank[bad]]
    unsupported_before = (
        not fix
        and good is None
        and candidates[-1] in older
        and all(set_aside[v] == UNSUPPORTED for v in older)
    )
    if unsupported_before:
        notes.append(
            f"the releases before {bad} cannot run the reproducer (unsupported): {bad} is "
            "the first release where the bug can be reached"
        )
    elif good is None and replaced_in is None:
        notes.append("no release in the range comes out good: every one tried still fails")
    between_ends = [
        v
        for v in set_aside
        if good is not None and min(rank[bad], rank[good]) < rank[v] < max(rank[bad], rank[good])
    ]
    if between_ends:
        notes.append(
            f"{', '.join(between_ends)} "
            + ("lies" if len(between_ends) == 1 else "lie")
            + f" between {bad} and {good}, set aside: the change may have come there"
        )
    if set_aside:
        named = ", ".join(f"{v} ({why})" for v, why in set_aside.items())
        notes.append(f"set aside, neither good nor bad: {named}")
    return Bisection(
        "fix" if fix else "regression",
        bad,
        good,
        tried,
        set_aside,
        "; ".join(notes),
        lines,
        seen,
        unsupported_before,
        replaced_in,
        commit_range(bad, good, oldest_first) if good is not None else None,
    )


def where_it_ends(
    candidates: Sequence[str], state_of: Callable[[str], str]
) -> tuple[str, str] | None:
    """For a fix search (``candidates`` bad end first): ``(last bad, first release failing
    otherwise)`` when the bug's own failure ends in a release where the same configs fail
    some other way, else ``None``. It is :func:`bisect` with "other failure" read as "not
    this bug"."""
    last, after, kept, _ = bisect(
        candidates, lambda label: GOOD if state_of(label) == OTHER else state_of(label)
    )
    if after < len(kept) and state_of(kept[after]) == OTHER:
        return kept[last], kept[after]
    return None


def _config_text(config: Config) -> str:
    return ", ".join(f"{k}={v}" for k, v in config.items())
