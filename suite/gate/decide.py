"""The verdict: failures, wrong results, and speed against the measured noise."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from suite.errors import EXIT_OK, EXIT_REGRESSION, EXIT_USAGE
from suite.gate.events import CUBLAS
from suite.gate.gpu import GpuRun, Measured, tflops
from suite.gate.inputs import Configs, GateConfig, size_label
from suite.gate.static import StaticCheck, StaticStatus


@dataclass
class SpeedRow:
    key: str
    role: str
    label: str
    medians_ms: list[float]
    tflops: float
    tflops_min: float
    tflops_max: float
    spread: float  # (max - min) / median of the per-input-set medians
    percent_of_cublas: float | None = None
    correct: str = ""
    best: bool = False


def speed_row(key: str, role: str, label: str, size: Sequence[int], ms: list[float]) -> SpeedRow:
    median = statistics.median(ms)
    return SpeedRow(
        key=key,
        role=role,
        label=label,
        medians_ms=[round(m, 4) for m in ms],
        tflops=tflops(size, median),
        tflops_min=tflops(size, max(ms)),
        tflops_max=tflops(size, min(ms)),
        spread=(max(ms) - min(ms)) / median if median else 0.0,
    )


class Acceptance(str, Enum):
    """Whether the gate takes one config. A ``str`` so that gate.json keeps the word."""

    ACCEPT = "accept"
    REJECT = "reject"
    # Nothing rejects it, but a named target did not check it (an unmet requirement, a
    # toolchain gap): the gate cannot say it may ship.
    UNCHECKED = "unchecked"

    def __str__(self) -> str:
        return self.value


class ProposalOutcome(str, Enum):
    """The gate's answer on the proposed configs; the exit status follows from it. A ``str``
    so that gate.json keeps the word."""

    PASS = "pass"
    FAIL = "fail"
    # Nothing fails, but a proposed config was not checked: the Triton that compiled the
    # cases (or its ptxas) cannot compile it as asked, so the input does not fit this release.
    UNCHECKED = "unchecked"

    def __str__(self) -> str:
        return self.value

    @property
    def exit_status(self) -> int:
        """0 pass; 1 a proposed config is bad (or slower); 2 the input does not fit the
        release that checked it (docs/gate.md, "The verdict")."""
        return _EXIT_STATUS[self]


_EXIT_STATUS = {
    ProposalOutcome.PASS: EXIT_OK,
    ProposalOutcome.FAIL: EXIT_REGRESSION,
    ProposalOutcome.UNCHECKED: EXIT_USAGE,
}


@dataclass(frozen=True)
class ConfigVerdict:
    """Accept, reject or not checked: one config, with every reason (rejections first, then
    the targets that did not check it) and what is only a warning."""

    verdict: Acceptance
    reasons: list[str]
    warnings: list[str]


@dataclass(frozen=True)
class Comparison:
    """The best proposed config against the best current one at one size."""

    slower: bool
    text: str
    change: float | None = None
    noise: float | None = None
    best_current: str | None = None
    best_proposed: str | None = None


@dataclass
class Decision:
    verdict: ProposalOutcome
    reasons: list[str]
    config_verdicts: dict[str, ConfigVerdict]
    speed: dict[str, dict[str, list[SpeedRow]]]  # target -> size -> rows
    comparisons: dict[str, dict[str, Comparison]]  # target -> size -> comparison


def decide(
    configs: Configs,
    static: dict[tuple[str, str], StaticCheck],
    gpu: dict[str, GpuRun],
    targets: Sequence[str],
    sizes: Sequence[tuple[int, int, int]],
    noise_floor: float,
) -> Decision:
    """Per config accept/reject/unchecked with reasons, the speed tables, and the overall
    verdict: fail on any failure; else not a pass while a proposed config is unchecked."""
    verdicts = {item.key: config_verdict(item, static, gpu, targets) for item in configs.items}
    overall = unfit_proposals(configs, verdicts, static, gpu, sizes)
    speed: dict[str, dict[str, list[SpeedRow]]] = {}
    comparisons: dict[str, dict[str, Comparison]] = {}
    for target, run in gpu.items():
        speed[target] = {}
        comparisons[target] = {}
        for size in sizes:
            label = size_label(size)
            rows = speed_rows(configs, run, size)
            speed[target][label] = rows
            comparison = _compare(rows, noise_floor)
            comparisons[target][label] = comparison
            if comparison.slower:
                overall.append(f"{target} at {label}: {comparison.text}")
    unchecked = unchecked_proposals(configs, verdicts)
    if overall:
        outcome = ProposalOutcome.FAIL
    elif unchecked:
        outcome = ProposalOutcome.UNCHECKED
    else:
        outcome = ProposalOutcome.PASS
    return Decision(outcome, overall + unchecked, verdicts, speed, comparisons)


def config_verdict(
    item: GateConfig,
    static: dict[tuple[str, str], StaticCheck],
    gpu: dict[str, GpuRun],
    targets: Sequence[str],
) -> ConfigVerdict:
    """Rejected by any static failure or any GPU failure; else unchecked when a named target
    did not check it; warned by spills."""
    reasons, unchecked, warnings = [], [], []
    for target in targets:
        check = static.get((item.key, target))
        if check is None:  # a --suggest candidate, checked on the GPU's target only
            unchecked.append(f"{target}: not checked")
        elif check.status is StaticStatus.REJECT:
            reasons.append(f"{target}: {check.reason}")
        elif check.status is StaticStatus.UNCHECKED:
            unchecked.append(f"{target}: {check.reason}")
        elif check.status is StaticStatus.WARN:
            warnings.append(f"{target}: {check.reason}")
    for target, run in gpu.items():
        measured = run.measured.get(item.key)
        if measured is not None and measured.failure:
            failure = measured.failure
            at = f" at {size_label(failure.size)}" if failure.size else ""
            reasons.append(f"{target} (GPU{at}): {failure.outcome}: {failure.message}")
    if reasons:
        acceptance = Acceptance.REJECT
    elif unchecked:
        acceptance = Acceptance.UNCHECKED
    else:
        acceptance = Acceptance.ACCEPT
    return ConfigVerdict(acceptance, reasons + unchecked, warnings)


def unfit_proposals(
    configs: Configs,
    verdicts: dict[str, ConfigVerdict],
    static: dict[tuple[str, str], StaticCheck],
    gpu: dict[str, GpuRun],
    sizes: Sequence[tuple[int, int, int]],
) -> list[str]:
    """Why the proposal fails before speed: rejected configs, an unfinished GPU run, or
    accepted configs it did not time at every size."""
    overall: list[str] = []
    proposed = configs.with_role("proposed")
    bad = [c for c in proposed if verdicts[c.key].verdict is Acceptance.REJECT]
    if bad:
        overall.append(
            f"{len(bad)} of {len(proposed)} proposed configs fail to compile, fit, launch "
            f"or compute correctly on a named target: {', '.join(c.label for c in bad)}"
        )
    for target, run in gpu.items():
        if run.error:
            overall.append(f"{target}: the GPU measurement did not finish: {run.error}")
        unmeasured = [
            c.label
            for c in proposed
            if verdicts[c.key].verdict is Acceptance.ACCEPT
            and static[(c.key, target)].status.usable
            and not all(
                (run.measured.get(c.key) or Measured(c.key)).times.get(size_label(s)) for s in sizes
            )
        ]
        if unmeasured:
            overall.append(f"{target}: proposed configs not measured: {', '.join(unmeasured)}")
    return overall


def unchecked_proposals(configs: Configs, verdicts: dict[str, ConfigVerdict]) -> list[str]:
    """Why the proposal cannot pass though nothing failed: proposed configs not checked."""
    proposed = configs.with_role("proposed")
    unchecked = [c for c in proposed if verdicts[c.key].verdict is Acceptance.UNCHECKED]
    if not unchecked:
        return []
    why = "; ".join(dict.fromkeys(r for c in unchecked for r in verdicts[c.key].reasons))
    return [
        f"{len(unchecked)} of {len(proposed)} proposed configs were not checked, so nothing "
        f"shows they may ship: {', '.join(c.label for c in unchecked)} ({why}); check them "
        "under a Triton that can compile them (--python), or leave out a target its ptxas "
        "does not know"
    ]


def speed_rows(configs: Configs, run: GpuRun, size: Sequence[int]) -> list[SpeedRow]:
    """cuBLAS first (when timed), then every config timed at ``size``."""
    label = size_label(size)
    rows = []
    cublas = run.measured.get(CUBLAS)
    base = None
    if cublas and cublas.times.get(label):
        base = speed_row(CUBLAS, "baseline", "cuBLAS (torch.matmul)", size, cublas.times[label])
        base.percent_of_cublas = 100.0
        rows.append(base)
    for item in configs.items:
        measured = run.measured.get(item.key)
        if measured is None or not measured.times.get(label):
            continue
        row = speed_row(item.key, item.role, item.label, size, measured.times[label])
        if base is not None:
            row.percent_of_cublas = 100.0 * row.tflops / base.tflops
        row.correct = "yes" if label in measured.size_checked else ""
        if measured.checked and row.correct:
            row.correct = "yes (+ragged)"
        rows.append(row)
    return rows


def _compare(rows: list[SpeedRow], noise_floor: float) -> Comparison:
    """Best proposed against best current, beyond the larger of the two spreads (and the floor)."""
    current = [r for r in rows if "current" in r.role.split("+")]
    proposed = [r for r in rows if "proposed" in r.role.split("+")]
    if not current or not proposed:
        missing = "current" if not current else "proposed"
        return Comparison(False, f"no {missing} config measured: no speed comparison")
    best_current = max(current, key=lambda r: r.tflops)
    best_proposed = max(proposed, key=lambda r: r.tflops)
    best_current.best = best_proposed.best = True
    change = best_proposed.tflops / best_current.tflops - 1.0
    noise = max(best_current.spread, best_proposed.spread, noise_floor)
    slower = change < -noise
    text = (
        f"best proposed {best_proposed.label} {best_proposed.tflops:.0f} TFLOPS vs best current "
        f"{best_current.label} {best_current.tflops:.0f} TFLOPS: {change:+.1%} "
        f"(noise {noise:.1%}); " + ("slower beyond the noise" if slower else "not slower")
    )
    return Comparison(slower, text, change, noise, best_current.key, best_proposed.key)
