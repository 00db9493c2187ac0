"""How explore runs one point of a reproducer's space: each ``(config, target)`` run once
through the engine's isolation, logged as a numbered :class:`Evaluation`, and the one
interestingness test (does a config still fail with exactly this signature?). Explore,
the report's variant table and bisect all evaluate through it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from suite.api import Config
from suite.engine import (
    CaseResult,
    CaseSpec,
    Described,
    Execution,
    Found,
    RunNotes,
    Workers,
    run_one,
    safe_name,
)
from suite.toolchain.limits import limits_for


def failure_signature(result: CaseResult) -> str | None:
    """The signature text of a failing result; ``None`` for a pass or a skip."""
    if result.outcome.is_failure and result.signature is not None:
        return result.signature.text
    return None


def config_key(config: Config) -> str:
    return json.dumps(config, sort_keys=True, default=str)


@dataclass(frozen=True)
class Evaluation:
    """One distinct run of an explore: its 1-based number and what asked for it."""

    number: int
    phase: str
    config: Config
    target: str
    result: CaseResult


class Evaluator:
    """Runs cases through the engine's isolation, each ``(config, target)`` at most once.

    Every distinct run is logged in :attr:`evaluations`, so its length is the
    cost of the search so far.
    """

    def __init__(
        self,
        found: Found,
        execution: Execution,
        work_dir: Path,
        on_evaluation: Callable[[Evaluation], None] = lambda evaluation: None,
        workers: Workers | None = None,
        launch_arch: int | None = None,
    ) -> None:
        self.found = found
        self.launch_arch = launch_arch
        self.sanitize = execution.sanitize
        self.ptxas_differential = execution.ptxas_differential
        self.execution = replace(execution, sanitize=False, ptxas_differential=False)
        self.workers = workers
        self.work_dir = work_dir
        self.on_evaluation = on_evaluation
        self.evaluations: list[Evaluation] = []
        self.phase = "search"
        self._cache: dict[tuple[str, str], CaseResult] = {}

    @property
    def repro(self) -> Described:
        return self.found.repro

    @property
    def launching(self) -> bool:
        """Whether cases of some target launch (a GPU of that arch is visible)."""
        return self.launch_arch is not None and self.repro.launches

    def launches(self, target: str) -> bool:
        return self.launching and limits_for(target).arch == self.launch_arch

    @contextmanager
    def during(self, phase: str) -> Iterator[None]:
        """Label the runs made inside the block with ``phase``."""
        outer, self.phase = self.phase, phase
        try:
            yield
        finally:
            self.phase = outer

    def launch_evidence(self, config: Config, target: str) -> RunNotes | None:
        """compute-sanitizer's reading of one failing launch and its ptxas differential, for
        a finding: run once at the end, never for every evaluation of the search (a memcheck
        rerun costs many launches, the differential three more)."""
        result = self(config, target)
        wanted = self.sanitize or self.ptxas_differential
        if not (wanted and result.gpu and result.outcome.is_failure):
            return None
        spec = CaseSpec(self.found, config, target, True)
        case_dir = self.work_dir / f"sanitized-{safe_name(spec.case_id)}"
        execution = replace(
            self.execution, sanitize=self.sanitize, ptxas_differential=self.ptxas_differential
        )
        rerun = run_one(spec, case_dir, execution, self.workers)
        return rerun.notes if rerun else None

    def __call__(self, config: Config, target: str) -> CaseResult:
        problems = self.repro.problems(config)
        if problems:
            raise ValueError(f"{self.repro.id}: not in the space: {'; '.join(problems)}")
        config = {name: config[name] for name in self.repro.param_names}
        key = (config_key(config), target)
        if key not in self._cache:
            number = len(self.evaluations) + 1
            spec = CaseSpec(self.found, config, target, self.launches(target))
            case_dir = self.work_dir / f"{number:05d}-{safe_name(spec.case_id)}"
            result = run_one(spec, case_dir, self.execution, self.workers)
            if result is None:  # the search was stopped (SIGINT, SIGTERM) while it ran
                raise KeyboardInterrupt
            self._cache[key] = result
            evaluation = Evaluation(number, self.phase, config, target, result)
            self.evaluations.append(evaluation)
            self.on_evaluation(evaluation)
        return self._cache[key]


def interesting(evaluate: Evaluator, signature: str, target: str, config: Config) -> bool:
    """Does ``config`` on ``target`` still fail with exactly ``signature``?

    The one interestingness test of the module: a config outside the
    reproducer's space (a value not in a domain, a broken constraint) is not
    interesting, and neither is a pass, a skip or a different failure.
    """
    if evaluate.repro.problems(config):
        return False
    return failure_signature(evaluate(config, target)) == signature
