"""The one interestingness test: does this reproducer still fail with exactly this signature?

Everything that shrinks or checks a failure asks the same question of a candidate (the
C-Reduce / C-Vise contract): a reproducer source, compiled in isolation under the
finding's release (its interpreter) for the finding's target and config, must fail with
exactly the finding's signature. A pass, a skip, a harness error or another failure is not
interesting, so a reduction never slips from one bug to another.

- :class:`ReductionGoal` is what a finding expects (signature, target, config, interpreter);
- :func:`answer_for` answers for a result already in hand;
- :class:`SignatureTest` runs a source file through the engine's isolation
  (:func:`suite.engine.session.run_one`, warm workers when given) and judges it;
- ``python -m suite.reduce.interesting EXPECTATION.json FILE`` is the same test as a
  program, exit 0 when interesting and 1 when not: what C-Vise's test script runs.

A runtime failure's expectation (``launch``) launches the candidate and judges it with the
reproducer's oracles instead: its compile phase first turns away what cannot launch (no GPU
held, so compiles run in parallel while launches wait for their GPU), and at the finding's
passing config (``passing_config``), when known, it must still pass; for a fault, a crash or
a hang, a wrong value there is allowed (the reduced kernel need not compute the program's
result, only keep its fault tied to the config).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from suite.api import Config, Reproducer
from suite.engine import (
    COMPILE_LAUNCHES,
    GPU_UNAVAILABLE_SIGNATURE,
    CaseInterrupted,
    CaseResult,
    CaseSpec,
    Execution,
    Found,
    GpuStopped,
    Outcome,
    Workers,
    describe,
    run_one,
)
from suite.errors import HarnessError


@dataclass(frozen=True)
class ReductionGoal:
    """What "still fails the same way" means for one finding."""

    repro: str
    signature: str
    target: str
    config: Config
    python: str = sys.executable
    label: str = ""  # the reproducer's case label format, for readable case ids
    # A release where the bug is fixed: when given, a candidate must also pass there
    # (so a reduction cannot wander into a kernel that another bug breaks).
    fixed_python: str = ""
    # A runtime failure: every candidate is launched (on a GPU, or Triton's interpreter)
    # and judged by the reproducer's oracles; a compile says nothing about it.
    launch: bool = False
    # A config of the same case that passes (the finding's nearest passing neighbour): when
    # given, a launched candidate must also pass there, so that it keeps what triggers the
    # failure (a kernel that writes nothing fails every oracle, under every config). For a
    # finding that is not a wrong result, a wrong result there passes: only another failure
    # (a fault, a crash, the finding's own) turns the candidate away.
    passing_config: Config | None = None

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_json(cls, record: object) -> ReductionGoal:
        """The reduction goal a judge child is given (TypeError when it is not one)."""
        if not isinstance(record, dict) or not isinstance(record.get("config"), dict):
            raise TypeError("an expectation is a JSON object with a config object")
        texts = {k: v for k, v in record.items() if k in _TEXT_FIELDS}
        if not all(isinstance(v, str) for v in texts.values()):
            raise TypeError("an expectation's fields other than its config are strings")
        return cls(config=record["config"], **texts)


def values_checked(signature: str) -> bool:
    """Whether a candidate's values at the passing config are judged too: a wrong result is
    kept by its values; a fault, a crash or a hang by its tie to the config."""
    return signature.startswith(Outcome.WRONG_RESULT.label)


_TEXT_FIELDS = ("repro", "signature", "target", "python", "label", "fixed_python")


@dataclass(frozen=True)
class CandidateAnswer:
    """The answer for one candidate, with what was seen (for progress and reports)."""

    interesting: bool
    outcome: str
    signature: str | None
    duration_s: float = 0.0
    fixed_outcome: str = ""  # the outcome on the fixed release, when it was asked


def answer_for(result: CaseResult, signature: str) -> CandidateAnswer:
    """Interesting exactly when ``result`` is a failure whose full signature is ``signature``;
    a case Triton's own Python refuses never is: that is the release, not a bug to shrink."""
    seen = result.signature.text if result.outcome.is_failure and result.signature else None
    label = result.outcome.label + (" (Triton refuses it)" if result.refused else "")
    return CandidateAnswer(seen == signature and not result.refused, label, seen, result.duration_s)


def _stand_in(expectation: ReductionGoal) -> Reproducer:
    """A declaration carrying the reproducer's id and label only: the parent never imports a
    candidate (the child does, isolated), it only needs to name the case."""
    names = list(expectation.config)
    return Reproducer(
        id=expectation.repro,
        title="",
        family="",
        params=(),
        configs={},
        targets=(expectation.target,),
        label=expectation.label or "-".join("{" + n + "}" for n in names),
    )


@dataclass
class SignatureTest:
    """Runs candidate sources as the finding's case, in isolation, and judges them.

    ``workers`` (a warm template of the finding's interpreter) makes each run a fork; none
    starts a fresh interpreter per candidate. Case folders live under ``work`` and are
    removed once judged.
    """

    expectation: ReductionGoal
    work: Path
    workers: Workers | None = None
    execution: Execution = field(default_factory=Execution)
    fixed_workers: Workers | None = None

    def __post_init__(self) -> None:
        self._repro = describe(_stand_in(self.expectation))

    def spec(self, source: Path, config: Config | None = None) -> CaseSpec:
        found = Found(self._repro, {"path": str(source.resolve())})
        chosen = dict(self.expectation.config if config is None else config)
        return CaseSpec(found, chosen, self.expectation.target, self.expectation.launch)

    def _run(
        self,
        source: Path,
        case_dir: Path,
        execution: Execution,
        workers: Workers | None,
        config: Config | None = None,
    ) -> CaseResult:
        spec = self.spec(source, config)
        try:
            result = run_one(spec, case_dir, execution, workers, self._knobs(spec))
        except CaseInterrupted:
            raise KeyboardInterrupt from None
        except GpuStopped as exc:  # the check after a faulting candidate
            raise _gpu_stopped(str(exc)) from None
        finally:
            shutil.rmtree(case_dir, ignore_errors=True)
        if result.signature is not None and result.signature.text == GPU_UNAVAILABLE_SIGNATURE:
            # Says nothing of the candidate, and no run after it will either.
            raise _gpu_stopped(result.message)
        return result

    def _knobs(self, spec: CaseSpec) -> dict[str, str]:
        if not spec.gpu:
            return {}
        # One Triton cache for the candidates of a runtime failure (under ``work``, removed
        # with it): Triton's launcher and driver modules are built once, not once per
        # candidate. A candidate's kernels are keyed by their source: none sees another's.
        knobs = {"TRITON_CACHE_DIR": str(self.work / "triton-cache")}
        if os.environ.get("TRITON_INTERPRET") != "1":
            # The case's compile phase builds what its launch will launch, holding no GPU:
            # compiles run side by side, launches take turns on a GPU, and a candidate that
            # does not compile is turned away before it launches. One process per run: one
            # CUDA context, one set of inputs.
            knobs[COMPILE_LAUNCHES] = json.dumps([spec.config])
        return knobs

    def _twin_fails(self, source: Path, name: str) -> str:
        """What the candidate shows under the passing config ('' when that is allowed)."""
        passing = self.expectation.passing_config
        if passing is None:
            return ""
        twin = self._run(source, self.work / name, self.execution, self.workers, passing)
        if twin.outcome is Outcome.PASSED:
            return ""
        if twin.outcome is Outcome.WRONG_RESULT and not values_checked(self.expectation.signature):
            return ""  # the fault is what is kept, not the program's arithmetic
        return twin.signature.text if twin.signature else twin.outcome.label

    def __call__(self, source: Path, name: str = "case") -> CandidateAnswer:
        result = self._run(source, self.work / name, self.execution, self.workers)
        verdict = answer_for(result, self.expectation.signature)
        if (
            verdict.interesting
            and self.expectation.launch
            and (other := self._twin_fails(source, f"{name}-pass"))
        ):
            return replace(
                verdict,
                interesting=False,
                outcome=f"fails its passing config too: {other}",
                signature=None,
            )
        if not verdict.interesting or not self.expectation.fixed_python:
            return verdict
        fixed = replace(self.execution, python=self.expectation.fixed_python)
        seen = self._run(source, self.work / f"{name}-fixed", fixed, self.fixed_workers)
        passed = seen.outcome is Outcome.PASSED
        return replace(verdict, interesting=passed, fixed_outcome=seen.outcome.label)


def _gpu_stopped(why: str) -> HarnessError:
    return HarnessError(
        f"the GPU stopped giving new processes a CUDA context ({why}); "
        "the best kernel so far is kept: run the same command on a working GPU to go on"
    )


def main(argv: list[str]) -> int:
    """``python -m suite.reduce.interesting EXPECTATION.json FILE``: exit 0 when ``FILE`` is
    interesting, 1 when it is not, 2 on bad input (C-Vise reads only 0 or not 0)."""
    if len(argv) != 2:
        print("usage: python -m suite.reduce.interesting EXPECTATION.json FILE", file=sys.stderr)
        return 2
    try:
        expectation = ReductionGoal.from_json(json.loads(Path(argv[0]).read_text()))
    except (OSError, ValueError, TypeError) as exc:
        print(f"interesting: cannot read {argv[0]}: {exc}", file=sys.stderr)
        return 2
    source = Path(argv[1])
    if not source.is_file():
        print(f"interesting: no such file: {source}", file=sys.stderr)
        return 2
    # A candidate that launches on a real GPU runs as a reduction's does: on the machine's
    # lock file of its GPU (the visible one, as the candidate's own CUDA sees it), and for
    # a fault the GPU checked after it.
    launching = expectation.launch and os.environ.get("TRITON_INTERPRET") != "1"
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip() or "0"
    execution = Execution(
        python=expectation.python,
        warm=False,
        gpus=(visible,) if launching else (),
        faults=launching and not values_checked(expectation.signature),
    )
    with tempfile.TemporaryDirectory(prefix="repro-interesting-") as work:
        verdict = SignatureTest(expectation, Path(work), None, execution)(source)
    fixed = f" (fixed release: {verdict.fixed_outcome})" if verdict.fixed_outcome else ""
    print(f"{verdict.outcome} {verdict.signature or ''}{fixed}".rstrip())
    return 0 if verdict.interesting else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
