"""Where a runtime failure's candidates launch: a GPU of the finding's target, one launching
worker per visible GPU, or Triton's interpreter on the CPU (``TRITON_INTERPRET=1``).

A finding whose signature is a failure of the launch phase (a fault, a hang, a wrong result:
``suite.engine.gpu_evidence.runtime_failure``) is shown only by launching the kernel and
judging it with the reproducer's oracles (``suite.reduce.form.launching_form``); without a GPU
of its target the reduction is refused, with the command to run where there is one.
"""

from __future__ import annotations

import os

from suite.api import Config
from suite.engine import Environment, command_there
from suite.errors import UsageError
from suite.failures.findings import Finding


def interpreted() -> bool:
    """Whether launches run under Triton's interpreter (on the CPU, no GPU needed)."""
    return os.environ.get("TRITON_INTERPRET") == "1"


def launch_gpus(finding: Finding, finding_name: str, environment: Environment) -> tuple[str, ...]:
    """The GPU ids a reduction of ``finding`` launches on (launches take turns on each); ``()``
    under Triton's interpreter. A usage error when there is no GPU of the finding's target."""
    from suite.engine import visible_gpus
    from suite.toolchain.limits import limits_for

    if interpreted():
        return ()
    arch = environment.gpu_arch
    if arch is None or arch != limits_for(finding.target).arch:
        seen = f"this machine's GPU is sm_{arch}" if arch is not None else "there is no GPU here"
        there = command_there(f"repro reduce {finding_name}", finding.target)
        raise UsageError(
            f"{finding.signature} is a runtime failure and {seen}: reducing it {there}"
        )
    return visible_gpus(environment) or ("0",)


def passing_config(finding: Finding) -> Config | None:
    """The finding's nearest passing config on its target (explore's first passing
    neighbour), or None when it knows none."""
    for entry in finding.passing_neighbours:
        if entry.target == finding.target:
            return dict(entry.config)
    return None
