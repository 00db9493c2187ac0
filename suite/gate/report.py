"""``gate.json`` and ``gate.md``: what the gate saw, ready to paste into a PR."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict

from suite.api import Config
from suite.gate.decide import SpeedRow
from suite.gate.events import CUBLAS
from suite.gate.gpu import CHECK_SHAPES, GpuRun
from suite.gate.inputs import GateConfig, size_label
from suite.gate.state import GateState, Report
from suite.gate.static import StaticCheck, StaticStatus
from suite.templating import template_environment
from suite.toolchain.limits import limits_for

TEMPLATE = "gate.md.j2"


def yaml_list(configs: Sequence[Config]) -> str:
    """A YAML list of flat configs, one flow mapping per line (what ``load_config_file`` reads).

    Written by hand: values are numbers, booleans and short strings (JSON-quoted, which
    YAML reads as the same string), so no YAML library is needed on the device.
    """
    lines = []
    for config in configs:
        cells = ", ".join(f"{k}: {json.dumps(v)}" for k, v in config.items())
        lines.append(f"- {{{cells}}}")
    return "\n".join(lines) + "\n"


def kilobytes(value: int | None) -> str:
    return "" if value is None else f"{value / 1024:.0f} KiB"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def summary(state: GateState) -> Report:
    """The verdict, the exit status, what was checked, and why it fails."""
    decision = state.decided
    return {
        "verdict": decision.verdict,
        "exit_status": decision.verdict.exit_status,
        "scope": "static + GPU"
        if state.gpu
        else "static only (no --gpu: correctness and speed unchecked)",
        "reasons": decision.reasons,
    }


def inputs_section(state: GateState) -> Report:
    """The kernel, the config files, targets, sizes, and where it ran."""
    import triton

    options, found, configs = state.options, state.found, state.configs
    assert found is not None and configs is not None
    return {
        "kernel": {
            "id": found.repro.id,
            "title": found.repro.title,
            "source": found.source,
            "jit": state.kernel.name if state.kernel is not None else None,
        },
        "files": {"current": options.current, "proposed": options.proposed},
        "targets": list(state.targets),
        "gpu_targets": list(state.gpu),
        "sizes": [size_label(s) for s in options.sizes],
        "input_sets": options.input_sets,
        "noise_floor": options.noise_floor,
        "triton": triton.__version__,
        "environment": {
            k: getattr(state.environment, k, None) for k in ("gpu", "driver", "python", "triton")
        },
        "counts": {
            "current": len(configs.with_role("current")),
            "proposed": len(configs.with_role("proposed")),
        },
    }


def _shown(state: GateState) -> list[GateConfig]:
    """The named configs (the declared space's candidates are not listed one by one)."""
    assert state.configs is not None
    return [c for c in state.configs.items if c.roles != ["candidate"]]


def config_section(state: GateState) -> Report:
    """Per config: its verdict, reasons and warnings, and its static check per target."""
    decision = state.decided
    rows = [
        {
            "key": item.key,
            "label": item.label,
            "role": item.role,
            "config": item.config,
            **asdict(decision.config_verdicts[item.key]),
            "static": {t: asdict(state.static[(item.key, t)]) for t in state.targets},
        }
        for item in _shown(state)
    ]
    return {"configs": rows}


def static_section(state: GateState) -> Report:
    """One table per target: fit, registers, spills, and the reason of a rejection."""
    tables = []
    for target in state.targets:
        rows = [_static_row(item, state.static[(item.key, target)]) for item in _shown(state)]
        limit = limits_for(target)
        tables.append({"target": target, "shared_limit": limit.shared_bytes, "rows": rows})
    return {"static_tables": tables}


def _static_row(item: GateConfig, check: StaticCheck) -> Report:
    return {
        "role": item.role,
        "config": item.label,
        "verdict": check.status.shown,
        "shared": kilobytes(check.shared_bytes),
        "registers": "" if check.registers is None else str(check.registers),
        "spills": "" if check.local_bytes is None else f"{check.local_bytes} B",
        "reason": _cell(check.reason),
        "dropped": check.dropped,
    }


def autotune_section(state: GateState) -> Report:
    """The rejected configs that Triton's autotuner would drop without a word, and those
    that would make it raise."""
    rejected = [
        (item, target, state.static[(item.key, target)])
        for item in _shown(state)
        for target in state.targets
        if state.static[(item.key, target)].status is StaticStatus.REJECT
    ]
    lines = [
        (check.dropped, {"config": item.label, "target": target, "reason": _cell(check.summary)})
        for item, target, check in rejected
    ]
    return {
        "dropped": [line for dropped, line in lines if dropped],
        "raises": [line for dropped, line in lines if not dropped],
    }


def gpu_section(state: GateState) -> Report:
    """Per GPU target: the speed table per size, failures, notes, and how it measured."""
    return {"gpu": [_gpu_target(state, target, run) for target, run in state.gpu.items()]}


def _gpu_target(state: GateState, target: str, run: GpuRun) -> Report:
    decision, configs = state.decided, state.configs
    assert configs is not None
    sizes = [
        {
            "size": label,
            "rows": [_speed_row(r) for r in decision.speed[target][label]],
            "comparison": decision.comparisons[target][label].text,
        }
        for label in (size_label(s) for s in state.options.sizes)
    ]
    failures = [
        {
            "config": configs.by_key(key).label if key != CUBLAS else "cuBLAS",
            "outcome": m.failure.outcome,
            "message": _cell(str(m.failure.message or "")),
        }
        for key, m in run.measured.items()
        if m.failure
    ]
    device = run.device
    flush = device.flush if device is not None else {}
    return {
        "target": target,
        "device": device.device if device is not None else "unknown GPU",
        "torch": device.torch if device is not None else "",
        "triton": device.triton if device is not None else "",
        "flush": flush.get("how", "not reported"),
        "flush_verified": bool(flush.get("verified")),
        "sizes": sizes,
        "failures": failures,
        "notes": run.notes,
        "error": run.error,
        "children": run.children,
        "seconds": run.seconds,
        "seed": device.seed if device is not None else None,
    }


def _speed_row(row: SpeedRow) -> Report:
    return {
        "role": row.role,
        "config": row.label,
        "best": row.best,
        "correct": row.correct or ("n/a" if row.key == CUBLAS else "no"),
        "tflops": f"{row.tflops:.0f}",
        "cublas": "" if row.percent_of_cublas is None else f"{row.percent_of_cublas:.0f}%",
        "range": f"{row.tflops_min:.0f}-{row.tflops_max:.0f}",
        "spread": f"{row.spread:.1%}",
        "ms": f"{statistics.median(row.medians_ms):.4g}",
    }


def suggest_section(state: GateState) -> Report:
    suggestion = state.suggestion
    return {"suggest": asdict(suggestion) if suggestion is not None else None}


def method_section(state: GateState) -> Report:
    """The shapes checked, when, how long, and where the files are."""
    return {
        "check_shapes": [size_label(s) for s in CHECK_SHAPES],
        "created": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(state.started)),
        "seconds": round(time.time() - state.started, 1),
        "folder": str(state.folder),
    }


#: ``gate.json``, section by section, in the order its keys appear.
REPORT_SECTIONS: tuple[Callable[[GateState], Report], ...] = (
    summary,
    inputs_section,
    config_section,
    static_section,
    autotune_section,
    gpu_section,
    suggest_section,
    method_section,
)


def build_report(state: GateState) -> Report:
    """Everything the Markdown and ``gate.json`` say, as plain data: :data:`REPORT_SECTIONS`."""
    report: Report = {}
    for section in REPORT_SECTIONS:
        report.update(section(state))
    return report


def render_markdown(report: Report) -> str:
    """``suite/templates/gate.md.j2``, through the one template environment."""
    return template_environment().get_template(TEMPLATE).render(report=report)
