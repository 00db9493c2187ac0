"""``gate.json`` and ``gate.md``: what the gate saw, ready to paste into a PR."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from suite.engine.discover import Found
from suite.gate.decide import Decision
from suite.gate.gpu import CHECK_SHAPES, CUBLAS, GpuRun
from suite.gate.inputs import Configs, GateOptions, JitKernel, size_label
from suite.gate.static import StaticCheck
from suite.templating import template_environment
from suite.toolchain.limits import limits_for

TEMPLATE = "gate.md.j2"


def yaml_list(configs: Sequence[dict[str, Any]]) -> str:
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


def build_report(
    options: GateOptions,
    found: Found,
    kernel: JitKernel | None,
    targets: Sequence[str],
    configs: Configs,
    static: dict[tuple[str, str], StaticCheck],
    gpu: dict[str, GpuRun],
    decision: Decision,
    suggestion: dict[str, Any] | None,
    environment: dict[str, Any],
    folder: Path,
    started: float,
) -> dict[str, Any]:
    """Everything the Markdown and ``gate.json`` say, as plain data."""
    import triton

    shown = [c for c in configs.items if c.roles != ["candidate"]]
    static_tables = []
    for target in targets:
        rows = []
        for item in shown:
            check = static[(item.key, target)]
            verdict = {"ok": "ok", "warn": "ok (warning)", "reject": "reject"}.get(
                check.status, check.status
            )
            rows.append(
                {
                    "role": item.role,
                    "config": item.label,
                    "verdict": verdict,
                    "shared": kilobytes(check.shared_bytes),
                    "registers": "" if check.registers is None else str(check.registers),
                    "spills": "" if check.local_bytes is None else f"{check.local_bytes} B",
                    "reason": _cell(check.reason),
                    "dropped": check.dropped,
                }
            )
        limit = limits_for(target)
        static_tables.append(
            {
                "target": target,
                "shared_limit": limit.shared_bytes,
                "rows": rows,
            }
        )
    rejected = [
        (item, target, static[(item.key, target)])
        for item in shown
        for target in targets
        if static[(item.key, target)].status == "reject"
    ]
    dropped = [
        {"config": item.label, "target": target, "reason": _cell(check.summary)}
        for item, target, check in rejected
        if check.dropped
    ]
    raises = [
        {"config": item.label, "target": target, "reason": _cell(check.summary)}
        for item, target, check in rejected
        if not check.dropped
    ]
    gpu_sections = []
    for target, run in gpu.items():
        sizes = []
        for size in options.sizes:
            label = size_label(size)
            rows = [
                {
                    "role": r.role,
                    "config": r.label,
                    "best": r.best,
                    "correct": r.correct or ("n/a" if r.key == CUBLAS else "no"),
                    "tflops": f"{r.tflops:.0f}",
                    "cublas": "" if r.percent_of_cublas is None else f"{r.percent_of_cublas:.0f}%",
                    "range": f"{r.tflops_min:.0f}-{r.tflops_max:.0f}",
                    "spread": f"{r.spread:.1%}",
                    "ms": f"{statistics.median(r.medians_ms):.4g}",
                }
                for r in decision.speed[target][label]
            ]
            sizes.append(
                {
                    "size": label,
                    "rows": rows,
                    "comparison": decision.comparisons[target][label]["text"],
                }
            )
        failures = [
            {
                "config": configs.by_key(key).label if key != CUBLAS else "cuBLAS",
                "outcome": m.failure["outcome"],
                "message": _cell(str(m.failure.get("message") or "")),
            }
            for key, m in run.measured.items()
            if m.failure
        ]
        flush = run.device.get("flush") or {}
        gpu_sections.append(
            {
                "target": target,
                "device": run.device.get("device", "unknown GPU"),
                "torch": run.device.get("torch", ""),
                "triton": run.device.get("triton", ""),
                "flush": flush.get("how", "not reported"),
                "flush_verified": bool(flush.get("verified")),
                "sizes": sizes,
                "failures": failures,
                "notes": run.notes,
                "error": run.error,
                "children": run.children,
                "seconds": run.seconds,
                "seed": run.device.get("seed"),
            }
        )
    config_rows = [
        {
            "key": item.key,
            "label": item.label,
            "role": item.role,
            "config": item.config,
            **decision.config_verdicts[item.key],
            "static": {t: asdict(static[(item.key, t)]) for t in targets},
        }
        for item in shown
    ]
    return {
        "verdict": decision.verdict,
        "exit_status": None,
        "scope": "static + GPU"
        if gpu
        else "static only (no --gpu: correctness and speed unchecked)",
        "reasons": decision.reasons,
        "kernel": {
            "id": found.repro.id,
            "title": found.repro.title,
            "source": found.source,
            "jit": kernel.name if kernel is not None else None,
        },
        "files": {"current": options.current, "proposed": options.proposed},
        "targets": list(targets),
        "gpu_targets": list(gpu),
        "sizes": [size_label(s) for s in options.sizes],
        "input_sets": options.input_sets,
        "noise_floor": options.noise_floor,
        "triton": triton.__version__,
        "environment": {k: environment.get(k) for k in ("gpu", "driver", "python", "triton")},
        "counts": {
            "current": len(configs.with_role("current")),
            "proposed": len(configs.with_role("proposed")),
        },
        "configs": config_rows,
        "static_tables": static_tables,
        "dropped": dropped,
        "raises": raises,
        "gpu": gpu_sections,
        "suggest": suggestion,
        "check_shapes": [size_label(s) for s in CHECK_SHAPES],
        "created": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started)),
        "seconds": round(time.time() - started, 1),
        "folder": str(folder),
    }


def render_markdown(report: dict[str, Any]) -> str:
    """``suite/templates/gate.md.j2``, through the one template environment."""
    return template_environment().get_template(TEMPLATE).render(report=report)
