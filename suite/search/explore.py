"""Search a reproducer's parameter space for failures; shrink each; map its boundary.

How a search goes, and why:

- Hypothesis draws configs from the reproducer's declared space
  (:func:`case_strategy`): one ``sampled_from`` per parameter, drawn in the
  "smaller" order below, filtered by the reproducer's constraints. Reproducers
  never write strategies; a parameter's domain is all the search needs.
- Every example runs through the engine's isolation (:func:`suite.engine.session.run_one`),
  so a compiler that crashes, hangs or eats memory is a classified result, never
  the end of the search. Each ``(config, target)`` runs at most once per explore
  (:class:`Evaluator`), and the runs are counted: they are what a search costs.
- Each distinct signature is its own finding. The one question asked of a
  config, "does it still fail with exactly this signature?", is
  :func:`interesting`; the shrinker and the boundary table both ask it, and
  other tools can too (the contract of a C-Reduce/cvise interestingness test).
  A shrink step that turns one failure into another is therefore rejected: the
  other failure is recorded and gets a shrink of its own.
- :func:`shrink` is a greedy descent over the ordered domains, repeated until a
  whole pass changes nothing. That makes the result a local minimum by
  construction: every one-position step toward a smaller value was tried on the
  final config and either left the space or did not keep the signature.

"Smaller" (:func:`order_key`) is: smaller tiles (the ``BLOCK_*`` parameters,
first by the sum of their indices, then one by one), then fewer stages, then
fewer warps, then simpler dtypes (parameters whose name holds ``dtype``), then
the remaining parameters (problem sizes and other options), each in declaration
order. A value's size is its index in the parameter's ``values``.

Failures persist in a :class:`~suite.failures.findings.FindingsStore`; the minimal
failing configs are also kept in Hypothesis's example database and replayed as
explicit examples before a re-run searches anew.
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, example, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.database import ExampleDatabase

from suite.api import Config
from suite.engine import (
    CaseSpec,
    Described,
    Environment,
    Execution,
    Found,
    Outcome,
    Workers,
    capture_environment,
    capture_source,
)
from suite.errors import HarnessError
from suite.failures.findings import BoundaryStep, Finding, FindingsStore, SeenConfig, now_utc
from suite.search.evaluate import Evaluation, Evaluator, config_key, failure_signature, interesting
from suite.toolchain.limits import limits_for

_SEARCH_SETTINGS = settings(
    # A case is a child process that may compile for seconds: no deadline, and
    # Hypothesis's health checks about slow or filtered data do not apply.
    deadline=None,
    suppress_health_check=list(HealthCheck),
    # The failures are data, kept in the findings store; the search function
    # raises only to stop at the time budget, so Hypothesis has nothing to
    # shrink, report or save itself.
    database=None,
    phases=(Phase.explicit, Phase.generate),
    verbosity=Verbosity.quiet,
    print_blob=False,
)
settings.register_profile("explore", _SEARCH_SETTINGS)
# Derandomized: the same search on every run and machine, without a --seed.
settings.register_profile("ci", _SEARCH_SETTINGS, derandomize=True)
PROFILES = ("explore", "ci")
DEFAULT_MAX_EXAMPLES = 40

# Parameter categories in "smaller" order; a name matching none is a problem
# size or another option and comes last.
_CATEGORIES: tuple[Callable[[str], bool], ...] = (
    lambda name: name.upper().startswith("BLOCK"),
    lambda name: name == "num_stages",
    lambda name: name == "num_warps",
    lambda name: "dtype" in name.lower(),
)


def _category(name: str) -> int:
    return next((i for i, test in enumerate(_CATEGORIES) if test(name)), len(_CATEGORIES))


def shrink_order(repro: Described) -> list[str]:
    """Parameter names, most significant for "smaller" first."""
    declared = repro.param_names
    return sorted(declared, key=lambda name: (_category(name), declared.index(name)))


def order_key(repro: Described, config: Config) -> tuple[int, ...]:
    """The sort key of "smaller": lower compares smaller (see the module docstring)."""
    indices = [(name, repro.param(name).index(config[name])) for name in shrink_order(repro)]
    tiles = sum(index for name, index in indices if _category(name) == 0)
    return (tiles, *(index for _, index in indices))


def searched(repro: Described, launching: bool) -> list[str]:
    """The parameters a search varies, in shrink order: launch-side ones (problem sizes) only
    when cases launch, since a compile never sees them."""
    return [n for n in shrink_order(repro) if launching or not repro.param(n).launch]


def held_value(repro: Described, name: str) -> Any:
    """The value a parameter the search does not vary keeps: its value in the first curated
    config, else its largest (a size its author would run)."""
    for configs in repro.configs.values():
        for config in configs:
            if name in config:
                return config[name]
    return repro.param(name).values[-1]


def config_strategy(repro: Described, launching: bool = False) -> st.SearchStrategy[Config]:
    """Valid configs of ``repro``, drawn in "smaller" order so Hypothesis's own order agrees."""
    varied = searched(repro, launching)
    draws = {
        name: st.sampled_from(repro.param(name).values)
        if name in varied
        else st.just(held_value(repro, name))
        for name in shrink_order(repro)
    }
    return st.fixed_dictionaries(draws).filter(lambda config: not repro.problems(config))


def case_strategy(
    repro: Described, targets: Sequence[str], launching: bool = False
) -> st.SearchStrategy[tuple[Config, str]]:
    return st.tuples(config_strategy(repro, launching), st.sampled_from(list(targets)))


def shrink(
    repro: Described,
    config: Config,
    still_fails: Callable[[Config], bool],
    launching: bool = False,
) -> Config:
    """Greedy descent to a local minimum of "smaller" that keeps ``still_fails`` true.

    For each parameter in :func:`shrink_order`, the smaller values are tried
    from the smallest up and the first one that still fails is taken, so a
    parameter that does not matter drops to its smallest value in one run.
    Passes repeat until one changes nothing: then every one-step decrease was
    tried on the final config and rejected.
    """
    current = dict(config)
    changed = True
    while changed:
        changed = False
        for name in searched(repro, launching):
            values = repro.param(name).values
            for value in values[: values.index(current[name])]:
                trial = {**current, name: value}
                if still_fails(trial):
                    current, changed = trial, True
                    break
    return current


def boundary_table(
    evaluate: Evaluator, signature: str, target: str, config: Config
) -> list[BoundaryStep]:
    """Each parameter walked away from ``config``, one position at a time, down and up.

    A walk goes on while the neighbour still fails with ``signature`` and
    stops at the first one that does not (it passes, or fails differently) or
    at the end of the domain, so the last row of each walk is where the
    failure ends along that parameter. From a local minimum every downward
    walk stops after one step. Values that break a constraint are skipped:
    they are not configs of the reproducer.
    """
    repro = evaluate.repro
    steps = []
    for name in searched(repro, evaluate.launching):
        values = repro.param(name).values
        here = values.index(config[name])
        for direction, walk in (("down", values[:here][::-1]), ("up", values[here + 1 :])):
            for value in walk:
                neighbour = {**config, name: value}
                if repro.problems(neighbour):
                    continue
                result = evaluate(neighbour, target)
                same = interesting(evaluate, signature, target, neighbour)
                steps.append(
                    BoundaryStep(
                        param=name,
                        direction=direction,
                        value_from=config[name],
                        value_to=value,
                        config=neighbour,
                        outcome=result.outcome.label,
                        signature=failure_signature(result),
                        same_signature=same,
                    )
                )
                if not same:
                    break
    return steps


@dataclass(frozen=True)
class Budget:
    """How long the search for new examples goes on: a number of examples or seconds.

    The budget bounds the search; a failure found within it is always shrunk
    and mapped to the end.
    """

    max_examples: int | None = DEFAULT_MAX_EXAMPLES
    time_budget_s: float | None = None


@dataclass
class Exploration:
    """What one explore did: the findings it recorded and every run it made."""

    repro: str
    targets: list[str]
    seed: int | None
    profile: str
    findings: list[Finding]
    evaluations: list[Evaluation]


class _SearchEnds(Exception):
    """Stops Hypothesis's generation: the time budget is spent (it has no clock), or a
    harness error ended the explore."""


def _database_key(repro: str, target: str) -> bytes:
    return f"triton-repro-suite/explore/{repro}/{target}".encode()


class _Explorer:
    """The state of one explore: the runs, and the smallest failing config per signature."""

    def __init__(self, evaluate: Evaluator, targets: Sequence[str]) -> None:
        self.evaluate = evaluate
        self.repro = evaluate.repro
        self.targets = list(targets)
        self.minimal: dict[str, tuple[Config, str]] = {}
        self.boundaries: dict[str, tuple[str, list[BoundaryStep]]] = {}
        self.harness_error: HarnessError | None = None
        self._absorbed = 0

    def settle(self) -> None:
        """Shrink every signature the runs so far revealed, including those met while shrinking.

        A signature already shrunk is shrunk again from a strictly smaller
        failing config of the same target, should one turn up later.
        """
        log = self.evaluate.evaluations
        while self._absorbed < len(log):
            seen = log[self._absorbed]
            self._absorbed += 1
            signature = failure_signature(seen.result)
            if signature is None:
                continue
            best = self.minimal.get(signature)
            if best is not None and (
                best[1] != seen.target
                or order_key(self.repro, seen.config) >= order_key(self.repro, best[0])
            ):
                continue
            still_fails = partial(interesting, self.evaluate, signature, seen.target)
            with self.evaluate.during("shrink"):
                self.minimal[signature] = (
                    shrink(self.repro, seen.config, still_fails, self.evaluate.launching),
                    seen.target,
                )

    def search(
        self,
        replay: Sequence[tuple[Config, str]],
        budget: Budget,
        test_settings: settings,
        seed: int | None,
    ) -> None:
        """Replay stored failures, then let Hypothesis draw new cases until the budget ends."""
        deadline = (
            time.monotonic() + budget.time_budget_s if budget.time_budget_s is not None else None
        )
        replayed = 0

        def ended() -> bool:
            return self.harness_error is not None or (
                deadline is not None and time.monotonic() > deadline
            )

        @given(case=case_strategy(self.repro, self.targets, self.evaluate.launching))
        def one_case(case: tuple[Config, str]) -> None:
            nonlocal replayed
            if not ended():
                phase = "replay" if replayed < len(replay) else "search"
                replayed += 1
                try:
                    with self.evaluate.during(phase):
                        self.evaluate(*case)
                    self.settle()
                except HarnessError as error:
                    self.harness_error = error
            if ended():
                # One place: Hypothesis runs every explicit example even after one raised,
                # and counts each distinct place that raised as a failure of its own.
                raise _SearchEnds

        test = test_settings(one_case)
        # Hypothesis runs explicit examples in source order, which is the
        # reverse of the order in which the decorators are applied.
        for case in reversed(replay):
            test = example(case=case)(test)
        if seed is not None:
            test = hypothesis_seed(seed)(test)
        with suppress(_SearchEnds):
            test()
        if self.harness_error is not None:
            raise self.harness_error

    def keep_unshrunk(self) -> None:
        """After a stop: each signature met but not yet shrunk keeps its smallest run so far."""
        for seen in self.evaluate.evaluations:
            signature = failure_signature(seen.result)
            best = self.minimal.get(signature) if signature else None
            if signature and (
                best is None
                or (
                    best[1] == seen.target
                    and signature not in self.boundaries
                    and order_key(self.repro, seen.config) < order_key(self.repro, best[0])
                )
            ):
                self.minimal[signature] = (seen.config, seen.target)

    def map_boundaries(self) -> None:
        """Boundary tables for every final minimal config, and its other targets.

        A neighbour may fail in a new way; that failure is shrunk and mapped
        too, until no minimal config is left without its table.
        """
        while True:
            self.settle()
            todo = [
                (signature, config, target)
                for signature, (config, target) in self.minimal.items()
                if self.boundaries.get(signature, ("",))[0] != config_key(config)
            ]
            if not todo:
                return
            for signature, config, target in todo:
                with self.evaluate.during("boundary"):
                    table = boundary_table(self.evaluate, signature, target, config)
                with self.evaluate.during("targets"):
                    for other in self.targets:
                        self.evaluate(config, other)
                self.boundaries[signature] = (config_key(config), table)

    def findings(
        self,
        environment: Environment,
        seed: int | None,
        source: dict[str, str] | None,
        stopped: bool = False,
    ) -> list[Finding]:
        """One finding per minimal failure. ``stopped``: the search was cut short, so nothing
        more is run (no sanitizer rerun) and a failure not yet mapped has no boundary table."""
        now = now_utc()
        findings = []
        for signature, (config, target) in self.minimal.items():
            failing = [
                e for e in self.evaluate.evaluations if failure_signature(e.result) == signature
            ]
            result = self.evaluate(config, target)
            table = self.boundaries.get(signature, ("", []))[1]
            minimal = next(
                e.number
                for e in self.evaluate.evaluations
                if e.target == target and e.config == config
            )
            evidence = None if stopped else self.evaluate.launch_evidence(config, target)
            findings.append(
                Finding.of(
                    result,
                    signature,
                    environment,
                    failing=[SeenConfig(e.target, e.config) for e in failing],
                    boundary=table,
                    seed=seed,
                    source=source,
                    evaluations={"first_failure": failing[0].number, "minimal": minimal},
                    sanitizer=evidence.sanitizer if evidence else None,
                    ptxas=evidence.ptxas if evidence else None,
                    seen_at=now,
                )
            )
        return findings


def _refuse_harness_error(evaluation: Evaluation) -> None:
    """End the explore at its first harness error, storing nothing: the suite or the
    reproducer's glue failed before Triton compiled, so no run of the search says anything
    about the compiler (a spec a child could not read failed every evaluation alike)."""
    result = evaluation.result
    if result.outcome is Outcome.HARNESS_ERROR:
        raise HarnessError(
            f"evaluation {evaluation.number} ({result.case_id}): {result.message}; "
            "nothing was stored"
        )


def _replay_list(
    repro: Described, targets: Sequence[str], store: FindingsStore, database: ExampleDatabase
) -> list[tuple[Config, str]]:
    """The configs run before the search draws any: the reproducer's curated configs (its
    author's best guess at a trigger) on every target, then the stored minimal failing
    configs, from the store and then the example database.

    Entries that are no longer points of the space (the reproducer changed)
    are dropped rather than run.
    """
    cases: list[tuple[Config, str]] = []
    curated = [
        ({name: config[name] for name in repro.param_names if name in config}, target)
        for configs in repro.configs.values()
        for config in configs
        for target in targets
    ]
    stored = curated + [(f.minimal_config, f.target) for f in store.all() if f.repro == repro.id]
    for target in targets:
        stored += [
            (json.loads(raw), target) for raw in database.fetch(_database_key(repro.id, target))
        ]
    for config, target in stored:
        if target in targets and not repro.problems(config) and (config, target) not in cases:
            cases.append((config, target))
    return cases


def _remember(store: FindingsStore, database: ExampleDatabase, finding: Finding) -> Finding:
    """Record ``finding`` in the store and its minimal config in the example database."""
    previous = store.get(finding.repro, finding.signature)
    if previous is not None and (previous.minimal_config, previous.target) != (
        finding.minimal_config,
        finding.target,
    ):
        database.delete(
            _database_key(previous.repro, previous.target),
            config_key(previous.minimal_config).encode(),
        )
    database.save(
        _database_key(finding.repro, finding.target), config_key(finding.minimal_config).encode()
    )
    return store.record(finding)


def explore(
    found: Found,
    targets: Sequence[str],
    store: FindingsStore,
    execution: Execution,
    output: Path,
    budget: Budget = Budget(),
    seed: int | None = None,
    profile: str = "explore",
    on_evaluation: Callable[[Evaluation], None] = lambda evaluation: None,
    launch_arch: int | None = None,
) -> Exploration:
    """Search ``found`` on ``targets``, shrink and map every failure, and record the findings.

    With ``launch_arch`` (the visible GPU's compute capability), cases of that target are
    launched and judged by the reproducer's oracles, and its launch-side parameters searched.

    Without ``seed``, a random one is drawn and recorded (so ``--seed`` can
    repeat the search), unless the profile is derandomized. Case folders live
    in a temporary folder under ``output`` and are removed at the end.
    """
    test_settings = settings(
        settings.get_profile(profile),
        max_examples=budget.max_examples or 1_000_000,
    )
    if seed is None and not test_settings.derandomize:
        seed = random.SystemRandom().randrange(2**32)
    environment = capture_environment(execution.python)
    database = store.example_database()
    output.mkdir(parents=True, exist_ok=True)
    work_dir = Path(tempfile.mkdtemp(prefix=".explore-", dir=output))
    # One warm template for the whole search: it has imported Triton and the reproducer.
    launching = launch_arch is not None and found.repro.launches
    workers = Workers(
        execution,
        [CaseSpec(found, {}, t, launching and limits_for(t).arch == launch_arch) for t in targets],
    )

    def evaluated(evaluation: Evaluation) -> None:
        on_evaluation(evaluation)
        _refuse_harness_error(evaluation)

    try:
        evaluator = Evaluator(found, execution, work_dir, evaluated, workers, launch_arch)
        explorer = _Explorer(evaluator, targets)
        replay = _replay_list(found.repro, targets, store, database)
        carried = capture_source(found.source)
        source = carried.to_json(with_text=True) if carried else None
        try:
            explorer.search(replay, budget, test_settings, seed)
            explorer.map_boundaries()
        except KeyboardInterrupt:
            # Stopped (SIGINT, SIGTERM): keep the failures met so far, from runs already made.
            explorer.keep_unshrunk()
            for finding in explorer.findings(environment, seed, source, stopped=True):
                _remember(store, database, finding)
            raise
        findings = [
            _remember(store, database, finding)
            for finding in explorer.findings(environment, seed, source)
        ]
    finally:
        workers.close()
        shutil.rmtree(work_dir, ignore_errors=True)
    return Exploration(
        repro=found.repro.id,
        targets=list(targets),
        seed=seed,
        profile=profile,
        findings=findings,
        evaluations=explorer.evaluate.evaluations,
    )
