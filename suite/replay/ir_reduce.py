"""IR reduction for ``repro replay``: shrink the IR before a failing pass, as mlir-reduce does.

The one question asked of every candidate is the replay's interestingness test: does
this IR still parse and verify, and does the same pass still fail on it with the same
diagnostic? Each try runs in its own child (:func:`suite.replay.passes.run_pass`).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from suite.files import write_atomic
from suite.replay.bindings import Mapped
from suite.replay.diagnostic import Diagnostic
from suite.replay.ir_text import (
    TERMINATORS,
    IRText,
    Op,
    Value,
    alias_pattern,
    arg_span,
    count_lines,
    text_size,
    token_pattern,
    visible_at,
)
from suite.replay.passes import ir_types, run_pass
from suite.replay.pipeline import PipelineError, split_top

#: A pass's candidates: what each changes, and the IR's lines after it.
Candidates = Iterator[tuple[str, list[str]]]


@dataclass(frozen=True)
class ReduceStep:
    """One accepted candidate: what it changed, the lines left, and at which try."""

    what: str
    lines: int
    at_try: int

    def to_json(self) -> dict[str, str | int]:
        return {"what": self.what, "lines": self.lines, "try": self.at_try}


@dataclass(frozen=True)
class Reduction:
    """What one reduction did (``replay.json``'s ``reduction``)."""

    lines_before: int
    lines_after: int
    ops_before: int | None
    ops_after: int | None
    tries: int
    accepted: int
    rejected: dict[str, int]  # why candidates were rejected -> how many
    seconds: float
    stopped_by: str | None
    interrupted: bool
    budget_tries: int
    budget_s: float
    steps: list[ReduceStep]

    def to_json(self) -> dict[str, object]:
        record: dict[str, object] = {
            k: v for k, v in asdict(self).items() if k not in ("budget_tries", "budget_s", "steps")
        }
        record["budget"] = {"tries": self.budget_tries, "seconds": self.budget_s}
        record["steps"] = [step.to_json() for step in self.steps]
        return record


class Reducer:
    """Text-level IR reduction with an interestingness predicate, as mlir-reduce does.

    Candidates: drop unused aliases; delete ops whose results are unused (bottom-up);
    delete else-branches; replace an op's results by earlier values of the same type and
    delete it; drop unused function arguments; delete chunks of sibling ops (ddmin). Every
    candidate is run in its own child, which rejects it unless it parses and verifies, and
    keeps it only if the pass still fails with the same diagnostic key. The best so far is
    written to disk after every improvement; SIGINT stops after the try in flight.
    """

    def __init__(
        self,
        python: str,
        step: Mapped,
        diagnostic: Diagnostic,
        best_path: Path,
        work: Path,
        budget_tries: int = 400,
        budget_s: float = 600.0,
        timeout_s: float = 60.0,
        say: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.python = python
        self.step = step
        self.key = diagnostic.key
        self.best_path = best_path
        self.work = work
        self.budget_tries = budget_tries
        self.budget_s = budget_s
        self.timeout_s = timeout_s
        self.say = say
        self.best = ""
        self.best_diagnostic = diagnostic
        self.tries = 0
        self.accepted = 0
        self.rejected = {"unparsable": 0, "passes": 0, "other-failure": 0, "timeout": 0}
        self.seen: set[str] = set()
        self.stop_reason: str | None = None
        self.interrupted = False
        self._deadline = 0.0
        self._types: dict[str, list[str]] = {}
        self.steps: list[ReduceStep] = []

    # -- budget and interruption ---------------------------------------------------------------

    def _exhausted(self) -> bool:
        if self.interrupted:
            self.stop_reason = "interrupted"
        elif self.tries >= self.budget_tries:
            self.stop_reason = "budget-tries"
        elif time.monotonic() > self._deadline:
            self.stop_reason = "budget-s"
        return self.stop_reason is not None

    @contextlib.contextmanager
    def _sigint(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def stop(signum: int, frame: Any) -> None:
            if self.interrupted:
                raise KeyboardInterrupt
            self.interrupted = True
            self.say("interrupt: stopping after the try in flight (again to abort)")

        previous = signal.signal(signal.SIGINT, stop)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    # -- the predicate ---------------------------------------------------------------------------

    def interesting(self, text: str) -> bool:
        digest = hashlib.sha1(text.encode()).hexdigest()
        if digest in self.seen:
            return False
        self.seen.add(digest)
        self.tries += 1
        candidate = self.work / "candidate.mlir"
        candidate.write_text(text)
        ran = run_pass(self.python, candidate, self.step, None, self.work, self.timeout_s)
        if ran.status == "unparsable":
            self.rejected["unparsable"] += 1
            return False
        if ran.status == "ok":
            self.rejected["passes"] += 1
            return False
        if ran.status == "timeout":
            self.rejected["timeout"] += 1
            return False
        if not ran.failed or ran.diagnostic.key != self.key:
            self.rejected["other-failure"] += 1
            return False
        self.best_diagnostic = ran.diagnostic
        return True

    def _accept(self, text: str, what: str) -> None:
        before = count_lines(self.best)
        self.best = text
        self.accepted += 1
        write_atomic(self.best_path, text)
        self.steps.append(ReduceStep(what, count_lines(text), self.tries))
        self.say(f"  reduce: {what}: {before} -> {count_lines(text)} lines (try {self.tries})")
        self._refresh_types()

    def _refresh_types(self) -> None:
        path = self.work / "types.mlir"
        path.write_text(self.best)
        found = ir_types(self.python, path)
        self._types = dict(found.results) if found else {}

    # -- the search ------------------------------------------------------------------------------

    def passes(self) -> tuple[tuple[str, Callable[[IRText], Candidates]], ...]:
        """The named passes, in the order each round tries them (cheap, sure wins first)."""
        return (
            ("aliases", self._unused_aliases),
            ("delete", self._delete_unused),
            ("else", self._else_branches),
            ("replace", self._replace_values),
            ("merge", self._merge_aliases),
            ("args", self._function_args),
            ("chunks", self._chunks),
        )

    def run(self, text: str) -> Reduction:
        started = time.monotonic()
        self._deadline = started + self.budget_s
        self.best = text
        write_atomic(self.best_path, text)
        path = self.work / "types.mlir"
        path.write_text(text)
        first = ir_types(self.python, path)
        self._types = dict(first.results) if first else {}
        with self._sigint():
            progress = True
            while progress and not self._exhausted():
                progress = any([self._run_pass(generate) for _, generate in self.passes()])
            if self.stop_reason is None:
                self.stop_reason = "fixpoint"
        path.write_text(self.best)
        last = ir_types(self.python, path)
        return Reduction(
            lines_before=count_lines(text),
            lines_after=count_lines(self.best),
            ops_before=first.ops if first else None,
            ops_after=last.ops if last else None,
            tries=self.tries,
            accepted=self.accepted,
            rejected=self.rejected,
            seconds=round(time.monotonic() - started, 1),
            stopped_by=self.stop_reason,
            interrupted=self.interrupted,
            budget_tries=self.budget_tries,
            budget_s=self.budget_s,
            steps=self.steps,
        )

    def _run_pass(self, generate: Callable[[IRText], Candidates]) -> bool:
        """Take the pass's first smaller interesting candidate, again and again, until it has
        none (or the budget is spent); whether it improved anything."""
        progress = False
        while not self._exhausted():
            improved = False
            for what, lines in generate(IRText(self.best)):
                if self._exhausted():
                    break
                candidate = "\n".join(lines) + "\n"
                if text_size(candidate) >= text_size(self.best):
                    continue
                if self.interesting(candidate):
                    self._accept(candidate, what)
                    improved = progress = True
                    break
            if not improved:
                break
        return progress

    # -- candidate generators --------------------------------------------------------------------

    def _unused_aliases(self, ir: IRText) -> Candidates:
        text = ir.text()
        unused = [
            (alias, index)
            for alias, index in ir.aliases.items()
            if len(alias_pattern(alias).findall(text)) == 1
        ]
        if not unused:
            return
        yield f"drop {len(unused)} unused aliases", ir.without([(i, i) for _, i in unused])
        if len(unused) > 1:
            for alias, index in unused:
                yield f"drop alias {alias}", ir.without([(index, index)])

    def _deletable(self, ir: IRText, op: Op) -> bool:
        if op.name in ("module", "builtin.module") or TERMINATORS.search(op.name):
            return False
        return not (op.name.endswith("func") and sum(o.name.endswith("func") for o in ir.ops) < 2)

    def _delete_unused(self, ir: IRText) -> Candidates:
        for op in reversed(ir.ops):
            if self._deletable(ir, op) and not ir.used(op):
                yield f"delete {op.name} (line {op.start + 1})", ir.without([(op.start, op.end)])

    def _else_branches(self, ir: IRText) -> Candidates:
        for op in ir.ops:
            for region in op.regions[1:]:
                if not ir.lines[region.start].strip().startswith("} else {"):
                    continue
                lines = list(ir.lines)
                indent = re.match(r"\s*", lines[region.start]).group(0)  # type: ignore[union-attr]
                lines[region.start] = f"{indent}}}"
                del lines[region.start + 1 : region.end + 1]
                yield f"delete the else-branch of {op.name} (line {op.start + 1})", lines

    def _replace_values(self, ir: IRText) -> Candidates:
        """Delete an op whose results are used, replacing each used result by an earlier
        value of the same type (a function argument first), or by a new argument of the
        enclosing function; what fed the op may then become unused."""
        values = ir.values(self._types)
        compress = ir.alias_compressor()
        for op in reversed(ir.ops):
            if not op.slots or not self._deletable(ir, op) or not ir.used(op):
                continue
            used = used_results(ir, op, values)
            if not used:
                continue
            func = ir.enclosing_func(op)
            for plan in replacement_plans(used, func is not None):
                candidate = replaced(ir, op, func, used, plan, compress)
                if candidate is not None:
                    yield candidate

    def _merge_aliases(self, ir: IRText) -> Candidates:
        """Use one attribute alias for another of the same kind (one layout fewer)."""
        kinds: dict[str, list[str]] = {}
        for alias, index in ir.aliases.items():
            value = ir.lines[index].split("=", 1)[1].strip()
            kinds.setdefault(alias[0] + value.split("<")[0], []).append(alias)
        for names in kinds.values():
            for drop in reversed(names):
                for keep in names:
                    if keep == drop:
                        continue
                    pattern = alias_pattern(drop)
                    index = ir.aliases[drop]
                    lines = [
                        pattern.sub(keep, line) for i, line in enumerate(ir.lines) if i != index
                    ]
                    yield f"use alias {keep} for {drop}", lines

    def _function_args(self, ir: IRText) -> Candidates:
        for op in ir.ops:
            if not op.name.endswith("func"):
                continue
            header = ir.lines[op.start]
            span = arg_span(header)
            if span is None:
                continue
            open_at, close_at = span
            try:
                args = split_top(header[open_at + 1 : close_at], ",")
            except PipelineError:
                continue
            unused = [
                arg
                for arg in args
                if arg.split(":")[0].strip().startswith("%")
                and ir.uses(arg.split(":")[0].strip()) == 1
            ]
            if not unused:
                continue
            subsets = [unused] + ([[a] for a in unused] if len(unused) > 1 else [])
            for drop in subsets:
                kept = [a for a in args if a not in drop]
                lines = list(ir.lines)
                lines[op.start] = header[: open_at + 1] + ", ".join(kept) + header[close_at:]
                names = ", ".join(a.split(":")[0].strip() for a in drop)
                yield f"drop unused arguments {names} of {op.name}", lines

    def _chunks(self, ir: IRText) -> Candidates:
        """ddmin over sibling ops: delete chunks whose results are used only inside them."""
        groups: dict[int, list[Op]] = {}
        for op in ir.ops:
            if op.region is not None and self._deletable(ir, op):
                groups.setdefault(op.region.start, []).append(op)
        text_lines = ir.lines
        for siblings in groups.values():
            n = len(siblings)
            size = max(1, n // 2)
            while size >= 1:
                for start in range(0, n, size):
                    chunk = siblings[start : start + size]
                    if len(chunk) < 2 and size > 1:
                        continue
                    spans = [(o.start, o.end) for o in chunk]
                    drop = {i for a, b in spans for i in range(a, b + 1)}
                    outside = "\n".join(line for i, line in enumerate(text_lines) if i not in drop)
                    if any(token_pattern(name).search(outside) for o in chunk for name in o.names):
                        continue
                    where = f"{chunk[0].start + 1}-{chunk[-1].end + 1}"
                    yield f"delete {len(chunk)} ops at lines {where}", ir.without(spans)
                if size == 1:
                    break
                size //= 2


# -- replacing an op's results (the "replace" pass) ---------------------------------------

#: Which earlier values stand in first: function arguments, then block arguments, then results.
STAND_IN_ORDER = {"func-arg": 0, "block-arg": 1, "result": 2}


@dataclass(frozen=True)
class UsedResult:
    """A used result of the op to delete, and up to two earlier values that could replace it."""

    slot: str
    type: str
    stand_ins: list[str]


def used_results(ir: IRText, op: Op, values: list[Value]) -> list[UsedResult]:
    """The op's used results with their stand-ins; [] when one has no known type."""
    by_slot = {v.token: v for v in values if v.kind == "result" and v.line == op.start}
    used: list[UsedResult] = []
    for slot in op.slots:
        if ir.uses(slot) - (0 if "#" in slot else 1) <= 0:
            continue
        mine = by_slot.get(slot)
        if mine is None or mine.type is None:
            return []
        same = [v for v in values if v.type == mine.type and v.token != slot and visible_at(v, op)]
        same.sort(key=lambda v: (STAND_IN_ORDER[v.kind], v.line))
        used.append(UsedResult(slot, mine.type, [v.token for v in same[:2]]))
    return used


def replacement_plans(used: list[UsedResult], in_func: bool) -> list[dict[str, str | None]]:
    """Slot -> stand-in: the first stand-ins, then the second ones (where any slot has two),
    then new function arguments (None) when the op is inside a function."""
    plans: list[dict[str, str | None]] = []
    for pick in range(2):
        if pick and all(len(u.stand_ins) < 2 for u in used):
            break
        if all(u.stand_ins for u in used):
            plans.append({u.slot: u.stand_ins[min(pick, len(u.stand_ins) - 1)] for u in used})
    if in_func:
        plans.append({u.slot: None for u in used})
    return plans


def replaced(
    ir: IRText,
    op: Op,
    func: Op | None,
    used: list[UsedResult],
    plan: dict[str, str | None],
    compress: Callable[[str], str],
) -> tuple[str, list[str]] | None:
    """The IR without ``op``, its results replaced as ``plan`` says (None: the function's
    header cannot take new arguments)."""
    lines = list(ir.lines)
    mapping: dict[str, str] = {}
    fresh: list[str] = []
    for result in used:
        replacement = plan[result.slot]
        if replacement is None:
            replacement = ir.fresh_name(len(fresh))
            fresh.append(f"{replacement}: {compress(result.type)}")
        mapping[result.slot] = replacement
    if fresh and func is not None:
        header = ir.with_arguments(func, fresh)
        if header is None:
            return None
        lines[func.start] = header
    lines = [line for i, line in enumerate(lines) if not op.start <= i <= op.end]
    for slot, replacement in mapping.items():
        pattern = token_pattern(slot)
        lines = [pattern.sub(replacement, line) for line in lines]
    shown = ", ".join(f"{k}->{v}" for k, v in mapping.items())
    what = "new arguments" if fresh else "earlier values"
    return f"replace {op.name} (line {op.start + 1}) by {what} {shown}", lines
