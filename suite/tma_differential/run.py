"""The differential run: ``suite.tma_model``'s verdicts against the real
``cuTensorMapEncodeTiled`` (``bench/tma_differential.py`` is its command line; see its
docstring and ``docs/tma-disagreements.md``). Every descriptor is encoded in an
:class:`~suite.cuda.driver.IsolatedDriver` child, so a driver crash costs one result.
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path
from typing import Any, TypedDict

from suite.cuda import driver as tma_driver
from suite.cuda.driver import DriverCall, DriverInfo, driver_call
from suite.cuda.model import (
    DescriptorCheck,
    TensorMapArgs,
    shared_memory_limit,
)
from suite.cuda.rules import OBSERVED_RULES, check
from suite.tma_differential.descriptors import (
    BASE_ADDRESS,
    rebase,
    round_up,
)
from suite.tma_differential.explain import (
    Explanation,
    explain,
)
from suite.tma_differential.generator import (
    coverage,
    generate,
)
from suite.tma_differential.probes import (
    ControlRow,
    DeviceFacts,
    FootprintConclusions,
    FootprintRow,
    Rank1Row,
    controls,
    device_facts,
    footprint_conclusions,
    footprint_probe_cases,
    footprint_row,
    rank1_conclusions,
    rank1_probe_cases,
    rank1_row,
)
from suite.tma_differential.records import (
    DISAGREEMENTS,
    DescriptorRecord,
    Group,
    OutcomeClass,
    ScriptContext,
    classes,
    group_disagreements,
    make_record,
    mutation_table,
    reproducer_script,
    rule_confirmation,
    summarize,
)

#: Driver crashes after which the rest of a run is not sent (each restart costs a cuInit).
MAX_CRASHES = 200


class ModelTarget(TypedDict):
    """The target the model judged for."""

    compute_capability: int | None
    driver_cuda_version: int | None
    shared_memory_limit: int
    observed_rules: list[str]
    device: DeviceFacts


class Rank1Probe(TypedDict):
    conclusions: dict[str, str]
    rows: list[Rank1Row]


class FootprintProbe(TypedDict):
    conclusions: FootprintConclusions
    rows: list[FootprintRow]


class RunEnvironment(DriverInfo):
    """Where the run went: the driver's facts, then the run's own."""

    address_base: str
    base_address: int
    python: str
    hypothesis: str
    driver_child_crashes: int
    driver_child_restarts: int
    stopped: str


class Summary(TypedDict):
    """summary.json (docs/tma-disagreements.md)."""

    tool: str
    seed: int
    count_requested: int
    tried: int
    counts: dict[str, int]
    counts_documented: dict[str, int]
    disagreements: int
    driver_results: dict[str, int]
    classes: list[OutcomeClass]
    groups: list[Group]
    model: ModelTarget
    rule_confirmation: dict[str, dict[str, int]]
    explanation: Explanation
    rank1_probe: Rank1Probe
    footprint_probe: FootprintProbe
    controls: list[ControlRow]
    coverage: dict[str, dict[str, int]]
    mutations: dict[str, dict[str, int]]
    environment: RunEnvironment
    elapsed_s: dict[str, float]


def _run_controls(drv: tma_driver.IsolatedDriver, base: int) -> list[ControlRow]:
    rows: list[ControlRow] = []
    for c in controls(base):
        got = drv.encode(driver_call(c["args"]))
        rows.append(
            {"name": c["name"], "expect": c["expect"], "driver": got, "ok": got == c["expect"]}
        )
    return rows


#: ``--compute-capability``: ask the device (the default), or judge without a target.
AUTO = "auto"


def run(
    count: int,
    seed: int,
    out: Path,
    *,
    log: Any = print,
    compute_capability: int | str | None = AUTO,
) -> Summary:
    """Generate, compare, write everything under ``out``; return the summary.

    ``compute_capability``: the target the model judges for (``"auto"``: device 0's, with its
    driver version for the Blackwell note; ``None``: no target).
    """
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    items = generate(count, seed)
    t_generated = time.monotonic()
    log(f"generated {len(items)} descriptors in {t_generated - started:.1f} s (seed {seed})")
    facts = device_facts()
    cc = facts.get("compute_capability") if compute_capability == AUTO else compute_capability
    if cc is not None and not isinstance(cc, int):
        raise ValueError(f"compute_capability must be an int, None or {AUTO!r}, got {cc!r}")
    driver_version = facts.get("driver_version")
    model: ModelTarget = {
        "compute_capability": cc,
        "driver_cuda_version": driver_version,
        "shared_memory_limit": shared_memory_limit(cc),
        "observed_rules": sorted(OBSERVED_RULES),
        "device": facts,
    }
    log(f"model target: compute capability {cc}, driver {driver_version}; device {facts}")

    def judge(args: TensorMapArgs) -> DescriptorCheck:
        return check(args, compute_capability=cc, driver_cuda_version=driver_version)

    with tma_driver.IsolatedDriver() as drv:
        info = drv.info.copy()
        base, address_base = BASE_ADDRESS, "synthetic"
        control_rows = _run_controls(drv, base)
        if not control_rows[0]["ok"]:
            log(
                f"control refused with a synthetic address ({control_rows[0]['driver']}); "
                "retrying with a real allocation"
            )
            base = round_up(drv.alloc(1 << 24), 1 << 12)
            address_base = "cuMemAlloc"
            control_rows = _run_controls(drv, base)
        log("controls: " + ", ".join(f"{c['name']}={c['driver']}" for c in control_rows))

        probe_rows = []
        for p in rank1_probe_cases(base):
            probe_call = driver_call(p["args"], null_empty_arrays=p["null_empty_arrays"])
            strides = probe_call["global_strides"]
            stride0 = None if strides is None else strides[0]
            probe_rows.append(rank1_row(p, stride0, drv.encode(probe_call), judge(p["args"])))
        conclusions = rank1_conclusions(probe_rows)
        for text, answer in conclusions.items():
            log(f"rank-1 probe: {text}: {answer}")

        footprint_rows = []
        for f in footprint_probe_cases(base):
            driver_result = drv.encode(driver_call(f["args"]))
            footprint_rows.append(footprint_row(f, driver_result, judge(f["args"])))
        footprint = footprint_conclusions(footprint_rows)
        footprint["device_max_shared_memory_per_block_optin"] = facts.get(
            "max_shared_memory_per_block_optin"
        )
        footprint["model_limit"] = shared_memory_limit(cc)
        log(f"footprint probe: {footprint}")

        records: list[DescriptorRecord] = []
        stopped = ""  # why the remaining descriptors were not sent to the driver
        for index, item in enumerate(items):
            args = rebase(item.args, base) if base != BASE_ADDRESS else item.args
            verdict = judge(args)
            call: DriverCall | None
            try:
                call = driver_call(args, null_empty_arrays=args.global_strides_pointer == "null")
            except ValueError as exc:
                result, call = f"ERROR:{exc}", None
            else:
                if not stopped and drv.crashes >= MAX_CRASHES:
                    stopped = f"skipped after {drv.crashes} driver crashes"
                    log(f"stopping: {stopped}")
                if stopped:
                    result = f"ERROR:{stopped}"
                else:
                    try:
                        result = drv.encode(call)
                    except tma_driver.DriverUnavailable as exc:  # the child would not restart
                        stopped = f"driver child lost: {exc}"
                        log(f"stopping: {stopped}")
                        result = f"ERROR:{stopped}"
            records.append(make_record(index, args, verdict, call or {}, result, item.mutations))
        crashes, restarts = drv.crashes, drv.restarts
    encoded = time.monotonic()

    context: ScriptContext = {**info, "seed": seed}
    groups = group_disagreements(records)
    by_index = {r["index"]: r for r in records}
    for g in groups:
        script = reproducer_script(g, by_index[g["first"]], context)
        (out / g["script"]).write_text(script)
    with (out / "disagreements.jsonl").open("w") as fh:
        for r in records:
            if r["outcome"] in DISAGREEMENTS:
                fh.write(json.dumps(r) + "\n")
    with (out / "records.jsonl").open("w") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")

    summary: Summary = {
        "tool": "bench/tma_differential.py",
        "seed": seed,
        "count_requested": count,
        **summarize(records),
        "classes": classes(groups),
        "groups": groups,
        "model": model,
        "rule_confirmation": rule_confirmation(records),
        "explanation": explain(records),
        "rank1_probe": {"conclusions": conclusions, "rows": probe_rows},
        "footprint_probe": {"conclusions": footprint, "rows": footprint_rows},
        "controls": control_rows,
        "coverage": coverage(item.args for item in items),
        "mutations": mutation_table(records),
        "environment": {
            **info,
            "address_base": address_base,
            "base_address": base,
            "python": platform.python_version(),
            "hypothesis": _hypothesis_version(),
            "driver_child_crashes": crashes,
            "driver_child_restarts": restarts,
            "stopped": stopped,
        },
        "elapsed_s": {
            "generate": round(t_generated - started, 2),
            "encode": round(encoded - t_generated, 2),
            "total": round(time.monotonic() - started, 2),
        },
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def _hypothesis_version() -> str:
    import hypothesis

    return str(hypothesis.__version__)
