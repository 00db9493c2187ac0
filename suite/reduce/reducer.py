"""``repro reduce``: the smallest kernel that still fails with the finding's signature.

How a reduction goes:

1. **Check.** The finding's reproducer (the source the finding carries) runs once as the
   finding's case; if it does not fail with the finding's signature there is nothing to
   reduce (``UsageError``: exit 2).
2. **Reducer form.** The reproducer's compile call is captured in an isolated child
   (:func:`suite.report.standalone.capture_compile`) and written as a self-contained
   reproducer file (``reduced_repro.py.j2``): the ``@triton.jit`` kernel and helpers, and
   a compile function with literal ``signature`` and ``constexprs`` dicts, pinned to the
   finding's config and target. It must fail the same way too.
3. **Passes to a fixpoint** (:mod:`suite.reduce.passes`): each pass proposes
   well-formed edits in a stable order; they are judged ``jobs`` at a time in the warm
   isolated workers by the one interestingness test (:mod:`suite.reduce.interesting`),
   and the first interesting edit of a batch that makes the file smaller is kept. A cache
   of tried texts means no text is compiled twice. Renaming runs once, last.
4. **Best so far.** ``reduced_case.py`` (the reducer's form) and ``state.json`` are
   rewritten after every improvement, so an interrupted reduction resumes from there. The
   finding is updated to point at the result.
5. **Standalone.** ``reduced.py`` is the result as a standalone program, written as ``repro
   report`` writes ``repro.py`` (:func:`suite.reduce.form.standalone_form`): it imports only
   the standard library, triton and (for a launch) torch, and exits 1 when the bug shows.

The order of edits is fixed (or shuffled by ``seed``), and of a batch the first
interesting edit in that order wins, so a reduction is deterministic for a seed.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from suite.engine import DEFAULTS, CaseSpec, Execution, Found
from suite.errors import HarnessError, UsageError
from suite.failures.findings import Finding
from suite.files import read_regular, write_replacing
from suite.reduce.form import launching_form, reducer_form, standalone_form
from suite.reduce.interesting import ReductionGoal, SignatureTest, values_checked
from suite.reduce.judge import ForkingWorkers, Judge
from suite.reduce.launching import interpreted, passing_config
from suite.reduce.passes import (
    FINAL_PASSES,
    PASSES,
    TIDY,
    Pass,
    candidates,
    kernel_measure,
    size,
)

STATE = "state.json"
#: The reduced kernel as a standalone program (the suite's judgement carried, no import of it).
REDUCED = "reduced.py"
#: The reduced kernel in the reducer's form: a reproducer file the engine runs (the report,
#: a resumed reduction).
REDUCED_CASE = "reduced_case.py"
DEFAULT_TIME_BUDGET_S = 900.0


@dataclass
class Progress:
    """What ``state.json`` holds: enough to resume, and the figures a user is shown."""

    finding: str
    signature: str
    original_sha256: str
    seed: int
    original_lines: int = 0
    original_tokens: int = 0
    lines: int = 0
    tokens: int = 0
    tries: int = 0  # candidates judged (each one compile: the cache answers the rest)
    cached: int = 0
    improvements: int = 0
    seconds: float = 0.0
    current_pass: str = ""
    done: bool = False
    passes: dict[str, int] = field(default_factory=dict)  # improvements per pass
    by_pass: dict[str, list[float]] = field(default_factory=dict)  # [compiles, seconds]
    # The candidates turned away, by what they showed instead (signature, or outcome).
    rejected: dict[str, int] = field(default_factory=dict)
    rounds: int = 0  # rounds of PASSES run
    # The reduced file judged in a fresh interpreter at the end (the candidates were forked):
    # its outcome and signature, "" until then.
    fresh_check: str = ""

    @classmethod
    def read(cls, path: Path) -> Progress | None:
        """The state kept at ``path`` (None when there is none); a corrupt one is bad input."""
        if not os.path.lexists(path):
            return None
        try:
            record = json.loads(read_regular(path, "reduce state", follow=False))
            defaults = asdict(cls("", "", "", 0))
            values = {k: v for k, v in record.items() if k in defaults}
            for name, value in values.items():
                kind = type(defaults[name])
                if not isinstance(value, (int, float) if kind is float else kind):
                    raise TypeError(f"{name} is {type(value).__name__}, not {kind.__name__}")
            return cls(**values)
        except (ValueError, TypeError, AttributeError) as exc:
            raise UsageError(f"corrupt reduce state {path} ({exc}): remove it") from None


@dataclass(frozen=True)
class Reduction:
    """The result: the reduced file and the progress record."""

    path: Path  # the reducer's form (REDUCED_CASE)
    progress: Progress
    resumed: bool
    stopped_by_budget: bool
    standalone: Path | None = None  # REDUCED, or None when it could not be written


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _atomic_write(path: Path, text: str) -> None:
    write_replacing(path, text)


@dataclass
class Reducer:
    """One reduction's state: the current best text and how it got there."""

    judge: Judge
    progress: Progress
    best_path: Path
    state_path: Path
    seed: int
    deadline: float
    say: Callable[[str], None]
    text: str = ""
    started: float = field(default_factory=time.monotonic)
    before: float = 0.0  # seconds spent by earlier, interrupted attempts

    def _save(self) -> None:
        self.progress.lines, self.progress.tokens = kernel_measure(self.text)
        self.progress.seconds = round(self.before + time.monotonic() - self.started, 1)
        _atomic_write(self.best_path, self.text)
        with self.judge.lock:  # compiles still running count themselves in from their threads
            record = asdict(self.progress)
        _atomic_write(self.state_path, json.dumps(record, indent=2) + "\n")

    def _line(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-6)
        p = self.progress
        return (
            f"reduce: {p.current_pass:<20} lines {p.original_lines} -> {p.lines}, "
            f"tokens {p.original_tokens} -> {p.tokens} | {p.tries} tries, "
            f"{p.tries / elapsed:.2f} tries/s"
        )

    def out_of_time(self) -> bool:
        return time.monotonic() > self.deadline

    def run_pass(self, chosen: Pass) -> bool:
        """Apply ``chosen`` until none of its edits is kept; whether any was."""
        self.progress.current_pass = chosen.name
        self.say(self._line())
        kept_any = False
        start = 0
        self.judge.label = chosen.name
        while not self.out_of_time():
            stream: Iterator[tuple[int, str]] = candidates(self.text, chosen, start, self.seed)
            accepted = self.judge.first(stream, _smaller_than(self.text), self.out_of_time)
            if accepted is None:
                return kept_any
            start, self.text = accepted
            kept_any = True
            self.progress.improvements += 1
            self.progress.passes[chosen.name] = self.progress.passes.get(chosen.name, 0) + 1
            self._save()
            self.say(self._line())
        return kept_any

    def run(self) -> bool:
        """Every pass to a fixpoint, then the final ones; False when the budget ended it."""
        changed = True
        while changed and not self.out_of_time():
            changed = False
            self.progress.rounds += 1
            for chosen in PASSES:
                kept = self.run_pass(chosen)
                if kept and not self.out_of_time():
                    self.run_pass(TIDY)
                changed |= kept
                if self.out_of_time():
                    break
        if not self.out_of_time():
            for chosen in FINAL_PASSES:
                self.run_pass(chosen)
        finished = not self.out_of_time()
        self.progress.done = finished
        self.progress.current_pass = "done" if finished else "stopped (time budget)"
        self._save()
        return finished


def _check_fresh(reducer: Reducer, test: SignatureTest, signature: str) -> None:
    """Judge the reduced file once more in a fresh interpreter: the candidates were forked
    from a warm template, and what is handed to a maintainer must fail on its own."""
    fresh = replace(test.execution, warm=False)
    verdict = replace(test, workers=None, fixed_workers=None, execution=fresh)(
        reducer.best_path, "fresh"
    )
    reducer.progress.fresh_check = f"{verdict.outcome} {verdict.signature or ''}".strip()
    if not verdict.interesting:
        reducer.progress.done = False
        reducer.progress.current_pass = "fresh check failed"
        reducer.say(
            f"reduce: {reducer.best_path} does not fail with {signature} in a fresh "
            f"interpreter (saw {reducer.progress.fresh_check}); it is kept, marked incomplete"
        )
    reducer._save()


def _tree(text: str) -> ast.Module:
    return ast.parse(text)


def _smaller_than(text: str) -> Callable[[str], bool]:
    bound = size(_tree(text))
    return lambda candidate: size(_tree(candidate)) < bound


def reduce(
    finding: Finding,
    finding_id: str,
    found: Found,
    origin: str,
    python: str,
    folder: Path,
    jobs: int,
    time_budget_s: float = DEFAULT_TIME_BUDGET_S,
    seed: int = 0,
    say: Callable[[str], None] = print,
    fixed_python: str = "",
    gpus: tuple[str, ...] | None = None,
) -> Reduction:
    """Reduce ``found`` (the finding's reproducer) into ``folder/reduced.py``; with
    ``fixed_python`` (a release where the bug is fixed) every kept kernel passes there.
    ``gpus`` (a runtime failure's: ``suite.reduce.launching.launch_gpus``) launches every
    candidate (launches take turns per GPU); None compiles them. The steps: the goal, the
    candidates' workers, the start (resumed, or the original and its reducer's form checked),
    the passes, the standalone program."""
    goal = ReductionGoal(
        repro=finding.repro,
        signature=finding.signature,
        target=finding.target,
        config=dict(finding.minimal_config),
        python=python,
        label=found.repro.label,
        fixed_python=fixed_python,
        launch=gpus is not None,
        passing_config=passing_config(finding) if gpus is not None else None,
    )
    folder.mkdir(parents=True, exist_ok=True)
    best_path, state_path, work = folder / REDUCED_CASE, folder / STATE, folder / ".work"
    _fresh_work(work)
    execution = _candidates_execution(finding, python, jobs, gpus)
    spec = CaseSpec(found, dict(finding.minimal_config), finding.target, gpus is not None)
    workers = ForkingWorkers(execution, [spec])
    fixed_workers = None
    if fixed_python:
        fixed_workers = ForkingWorkers(replace(execution, python=fixed_python), [spec])
        fixed_workers.share_gpus(workers)  # launches of either release take turns per GPU
    test = SignatureTest(goal, work, workers, execution, fixed_workers)
    started = _Start(finding, finding_id, found, origin, goal, test, folder, seed, say)
    try:
        progress, text, resumed = started.resumed() or started.fresh()
        judge = Judge(test, jobs, progress)
        reducer = Reducer(
            judge,
            progress,
            best_path,
            state_path,
            seed,
            time.monotonic() + time_budget_s,
            say,
            text=text,
            before=progress.seconds if resumed else 0.0,
        )
        reducer._save()
        try:
            finished = reducer.run()
        finally:
            judge.close()
        if finished:
            _check_fresh(reducer, test, finding.signature)
        written = _write_standalone(finding, found, best_path, python, finding_id, folder, say)
    except (UsageError, HarnessError):
        shutil.rmtree(work, ignore_errors=True)
        if not any(folder.iterdir()):
            folder.rmdir()  # nothing half-written; a best kernel so far stays, to resume from
        raise
    finally:
        workers.close()
        if fixed_workers is not None:
            fixed_workers.close()
        shutil.rmtree(work, ignore_errors=True)
    return Reduction(best_path, progress, resumed, not finished, written)


def _fresh_work(work: Path) -> None:
    """The candidates' scratch folder, empty (whatever was at its name is gone)."""
    if work.is_symlink() or work.is_file():
        work.unlink()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()


def _candidates_execution(
    finding: Finding, python: str, jobs: int, gpus: tuple[str, ...] | None
) -> Execution:
    # No sanitizer reruns nor ptxas relaunches of a candidate: the reduction asks only
    # whether it fails the same way.
    return Execution(
        python=python,
        bounds=DEFAULTS.bounds,
        workers=jobs,  # as many cases at once on a GPU (their launches take turns)
        warm=DEFAULTS.warm,
        gpus=gpus or (),
        sanitize=False,
        ptxas_differential=False,
        # A fault's candidates: one launched process per GPU at a time, the GPU checked after
        # each (a reduction of faults left an H100 refusing contexts three times).
        faults=gpus is not None and not values_checked(finding.signature),
    )


@dataclass(frozen=True)
class _Start:
    """Where a reduction starts: the kept best kernel of an earlier run of the same
    finding, or the original, checked to fail the same way as it is and in the reducer's
    form."""

    finding: Finding
    finding_id: str
    found: Found
    origin: str
    goal: ReductionGoal
    test: SignatureTest
    folder: Path
    seed: int
    say: Callable[[str], None]

    @property
    def original(self) -> Path:
        return Path(self.found.source["path"])

    def resumed(self) -> tuple[Progress, str, bool] | None:
        best_path = self.folder / REDUCED_CASE
        previous = Progress.read(self.folder / STATE)
        original = self.original.read_text()
        if not (
            previous
            and previous.signature == self.finding.signature
            and previous.original_sha256 == _sha(original)
            and previous.seed == self.seed
            and best_path.is_file()
        ):
            return None
        previous.done = False
        self.say(
            f"reduce: resuming from {best_path} ({previous.lines} lines, {previous.tries} tries)"
        )
        verdict = self.test(best_path, "resume")
        if not verdict.interesting:
            raise UsageError(
                f"{best_path} no longer fails with {self.finding.signature} "
                f"(saw {verdict.signature or verdict.outcome}); remove {self.folder} to start over"
            )
        return previous, best_path.read_text(), True

    def fresh(self) -> tuple[Progress, str, bool]:
        finding, goal, origin = self.finding, self.goal, self.origin
        original_text = self.original.read_text()
        verdict = self.test(self.original, "original")
        if not verdict.interesting:
            if verdict.fixed_outcome:
                raise UsageError(
                    f"{origin} does not compile on the fixed release ({goal.fixed_python}: "
                    f"{verdict.fixed_outcome}); reduce without it"
                )
            where = " under Triton's interpreter" if interpreted() and goal.launch else ""
            raise UsageError(
                f"{origin} does not reproduce the finding{where}: expected "
                f"{finding.signature}, saw {verdict.signature or verdict.outcome} "
                f"(triton at {goal.python})"
            )
        form = launching_form if goal.launch else reducer_form
        text = form(finding, self.found, goal.python, origin, self.finding_id)
        work = self.folder / ".work"
        _atomic_write(work / "form.py", text)
        verdict = self.test(work / "form.py", "form")
        if not verdict.interesting:
            raise UsageError(
                f"{origin} in the reducer's form does not fail the same way "
                f"(saw {verdict.signature or verdict.outcome})"
            )
        lines, tokens = kernel_measure(original_text)
        progress = Progress(
            finding=self.finding_id,
            signature=finding.signature,
            original_sha256=_sha(original_text),
            seed=self.seed,
            original_lines=lines,
            original_tokens=tokens,
            tries=2,
        )
        _atomic_write(self.folder / "original.py", original_text)
        return progress, text, False


def _write_standalone(
    finding: Finding,
    found: Found,
    best_path: Path,
    python: str,
    finding_id: str,
    folder: Path,
    say: Callable[[str], None],
) -> Path | None:
    """``reduced.py``: the best kernel as a standalone program, or None and why, said."""
    title = found.repro.title or found.repro.id
    standalone, why = standalone_form(finding, best_path, title, python, finding_id)
    if standalone is None:
        say(f"reduce: {folder / REDUCED} not written: {why}")
        return None
    _atomic_write(folder / REDUCED, standalone)
    return folder / REDUCED
