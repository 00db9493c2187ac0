"""What one ``repro gate`` knows as its steps run: :class:`GateState`, and what it ends with."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suite.api import Config
from suite.engine import Environment, Execution, Found
from suite.gate.decide import Decision
from suite.gate.events import Budget
from suite.gate.gpu import GpuRun
from suite.gate.inputs import Configs, GateOptions, JitKernel
from suite.gate.static import StaticCheck

#: ``gate.json`` as written (and what ``gate.md.j2`` renders): plain JSON data.
Report = dict[str, Any]


@dataclass(frozen=True)
class Ranked:
    """One screened candidate of ``--suggest`` (its screening TFLOPS, or why it failed)."""

    key: str
    label: str
    tflops: float | None
    failure: str | None


@dataclass(frozen=True)
class Suggestion:
    """The best measured candidates of ``--suggest``, fastest first, and how they were found."""

    keys: list[str]
    configs: list[Config]
    labels: list[str]
    tflops: list[float]
    space: int  # points of the declared space
    eligible: int  # statically clean on the GPU's target
    screened: int
    budget: Budget | None  # where screening stopped, when the budget ran out
    budget_s: float
    ranking: list[Ranked]  # the first 15 screened
    file: str | None = None  # suggested.yaml, once written


@dataclass
class GateResult:
    report: Report
    markdown: str
    folder: Path
    exit_status: int


@dataclass
class GateState:
    """What the steps of one gate know so far; each step reads it and adds to it."""

    options: GateOptions
    log: Callable[[str], None]
    started: float = field(default_factory=time.time)
    found: Found | None = None
    targets: list[str] = field(default_factory=list)
    current: list[Config] = field(default_factory=list)
    proposed: list[Config] = field(default_factory=list)
    kernel: JitKernel | None = None
    tunable: list[str] = field(default_factory=list)
    environment: Environment | None = None  # captured for --gpu/--suggest
    gpu_targets: list[str] = field(default_factory=list)
    configs: Configs | None = None
    folder: Path = Path()
    execution: Execution | None = None
    static: dict[tuple[str, str], StaticCheck] = field(default_factory=dict)
    gpu: dict[str, GpuRun] = field(default_factory=dict)
    suggestion: Suggestion | None = None
    decision: Decision | None = None
    result: GateResult | None = None

    @property
    def decided(self) -> Decision:
        assert self.decision is not None
        return self.decision

    @property
    def repro(self) -> Any:
        assert self.found is not None
        return self.found.repro
