"""The variants of a runtime failure, launched one by one: which knob isolates the trigger.

Upstream values a pass/fail table of variants next to a runtime bug. Starting from the
failing config, one knob is changed at a time (the others kept) and each variant is
launched as its own isolated case and judged by the reproducer's oracles, as the failure
was:

- the pipeliner's stage count from 1 up to the config's own (a parameter named
  ``num_stages`` or ending in ``STAGES``);
- warp specialization flipped (a boolean parameter whose name holds ``WARP_SPECIALIZE``
  or is ``WS``), where the reproducer has that knob;
- each tile size (a parameter whose name holds ``BLOCK``) halved and doubled, where the
  reproducer's space holds the value.

A variant that breaks a constraint of the reproducer is left out: it is not a config of
the reproducer. The rows are :class:`~suite.failures.findings.BoundaryStep` records, the
boundary table's: a variant is one parameter moved away from the failing config.
Without a GPU of the target nothing is launched and there is no table (the report says
it needs one); :func:`variant_table` refuses an evaluator that does not launch there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from suite.engine import Described
from suite.failures.findings import BoundaryStep
from suite.search.evaluate import Evaluator, failure_signature, interesting


def is_stages(name: str) -> bool:
    return name == "num_stages" or name.upper().endswith("STAGES")


def is_warp_specialize(name: str) -> bool:
    return "WARP_SPECIALIZE" in name.upper() or name.upper() == "WS"


def is_tile(name: str) -> bool:
    return "BLOCK" in name.upper()


def variant_changes(repro: Described, config: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """``(parameter, value)`` for each variant of ``config``, in the table's order: stages,
    warp specialization, tiles."""
    stages: list[tuple[str, Any]] = []
    specialize: list[tuple[str, Any]] = []
    tiles: list[tuple[str, Any]] = []
    for param in repro.params:
        name, here = param.name, config.get(param.name)
        if param.launch or here is None:
            continue
        if is_stages(name) and isinstance(here, int):
            stages += [(name, n) for n in range(1, here) if n in param.values]
        elif is_warp_specialize(name) and isinstance(here, bool):
            specialize += [(name, not here)] if (not here) in param.values else []
        elif is_tile(name) and isinstance(here, int):
            tiles += [(name, v) for v in (here // 2, here * 2) if v in param.values and v != here]
    return stages + specialize + tiles


def variant_table(
    evaluate: Evaluator, signature: str, target: str, config: Mapping[str, Any]
) -> list[BoundaryStep]:
    """Each variant of ``config`` launched on ``target`` and judged like the failure."""
    if not evaluate.launches(target):
        raise ValueError(f"variants of a runtime failure are launched: no {target} GPU here")
    repro = evaluate.repro
    config = {name: config[name] for name in repro.param_names}
    steps = []
    for name, value in variant_changes(repro, config):
        variant = {**config, name: value}
        if repro.problems(variant):
            continue
        result = evaluate(variant, target)
        values = repro.param(name).values
        steps.append(
            BoundaryStep(
                param=name,
                direction="down" if values.index(value) < values.index(config[name]) else "up",
                value_from=config[name],
                value_to=value,
                config=variant,
                outcome=result.outcome.label,
                signature=failure_signature(result),
                same_signature=interesting(evaluate, signature, target, variant),
            )
        )
    return steps
