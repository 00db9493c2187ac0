"""The differential's bookkeeping (no driver needed): one record per descriptor (the model's
verdict and the driver's answer), the outcome they make together, disagreements grouped by a
small key, per-rule confirmation, and the standalone script that replays one group.
"""

from __future__ import annotations

import collections
import inspect
import json
import pprint
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NotRequired, TypedDict

from suite.cuda import driver as tma_driver
from suite.cuda.driver import DescriptorArgs, DriverCall, DriverInfo, args_to_dict
from suite.cuda.model import (
    DescriptorCheck,
    TensorMapArgs,
)
from suite.templating import template_environment

SUCCESS = "CUDA_SUCCESS"

AGREE_OK = "agree-ok"

AGREE_REJECT = "agree-reject"

MODEL_OK_DRIVER_REJECTS = "model-ok/driver-rejects"

MODEL_REJECTS_DRIVER_OK = "model-rejects/driver-ok"

DRIVER_CRASHED = "driver-crashed"

NOT_ENCODED = "not-encoded"

OUTCOMES = (
    AGREE_OK,
    AGREE_REJECT,
    MODEL_OK_DRIVER_REJECTS,
    MODEL_REJECTS_DRIVER_OK,
    DRIVER_CRASHED,
    NOT_ENCODED,
)

DISAGREEMENTS = (MODEL_OK_DRIVER_REJECTS, MODEL_REJECTS_DRIVER_OK, DRIVER_CRASHED)


class GroupKey(TypedDict):
    """The small key disagreements are grouped by (:func:`group_key`)."""

    rules: str
    driver: str
    rank: int
    dtype: str
    interleave: str
    swizzle: str


class DescriptorRecord(TypedDict):
    """One descriptor's line in records.jsonl (:func:`make_record`); ``group`` once grouped.

    ``call`` is empty when cuda-bindings could not take the values (``not-encoded``).
    """

    index: int
    outcome: str
    outcome_documented: NotRequired[str]  # absent from runs before the documented split
    driver: str
    mutations: list[str]
    model_ok: bool
    model_documented_ok: NotRequired[bool]
    model_rules: list[str]
    model_notes: list[str]
    model_messages: list[str]
    key: GroupKey
    args: DescriptorArgs
    call: DriverCall | dict[str, object]
    group: NotRequired[int]


class Group(TypedDict):
    """Disagreements of one key (:func:`group_disagreements`)."""

    id: int
    kind: str
    key: GroupKey
    count: int
    first: int
    notes: dict[str, int]
    mutations: dict[str, int]
    script: str


class OutcomeClass(TypedDict):
    """Groups of one (kind, rules, driver result) (:func:`classes`)."""

    kind: str
    rules: str
    driver: str
    count: int
    groups: list[int]


class Counts(TypedDict):
    """A run's counts (:func:`summarize`)."""

    tried: int
    counts: dict[str, int]
    counts_documented: dict[str, int]
    disagreements: int
    driver_results: dict[str, int]


class ScriptContext(DriverInfo, total=False):
    """The run's facts a standalone script names: the driver's, and the seed."""

    seed: int


def outcome(model_ok: bool, driver_result: str) -> str:
    """Which of OUTCOMES a (model verdict, driver result) pair is."""
    if driver_result.startswith("ERROR:"):
        return NOT_ENCODED
    if driver_result.startswith("CRASH") or driver_result == "HANG":
        return DRIVER_CRASHED
    driver_ok = driver_result == SUCCESS
    if model_ok:
        return AGREE_OK if driver_ok else MODEL_OK_DRIVER_REJECTS
    return MODEL_REJECTS_DRIVER_OK if driver_ok else AGREE_REJECT


def group_key(args: TensorMapArgs, verdict: DescriptorCheck, driver_result: str) -> GroupKey:
    """The small key disagreements are grouped by."""
    return {
        "rules": ",".join(sorted(verdict.rules)) or "none",
        "driver": driver_result,
        "rank": args.rank,
        "dtype": args.dtype.name,
        "interleave": args.interleave.name,
        "swizzle": args.swizzle.name,
    }


def make_record(
    index: int,
    args: TensorMapArgs,
    verdict: DescriptorCheck,
    call: DriverCall | Mapping[str, object],
    driver_result: str,
    mutations: Sequence[str] = (),
) -> DescriptorRecord:
    """One descriptor's line in records.jsonl / disagreements.jsonl.

    ``model_ok`` / ``outcome`` are the whole model's (documented and observed rules);
    ``model_documented_ok`` / ``outcome_documented`` the documented rules' alone.
    """
    return {
        "index": index,
        "outcome": outcome(verdict.ok, driver_result),
        "outcome_documented": outcome(verdict.documented_ok, driver_result),
        "driver": driver_result,
        "mutations": list(mutations),
        "model_ok": verdict.ok,
        "model_documented_ok": verdict.documented_ok,
        "model_rules": verdict.rules,
        "model_notes": sorted({n.rule for n in verdict.notes}),
        "model_messages": [f"{v.rule}: {v.message}" for v in verdict.violations],
        "key": group_key(args, verdict, driver_result),
        "args": args_to_dict(args),
        "call": dict(call),
    }


def _key_tuple(key: GroupKey) -> tuple[str, str, int, str, str, str]:
    return (
        key["rules"],
        key["driver"],
        key["rank"],
        key["dtype"],
        key["interleave"],
        key["swizzle"],
    )


def group_disagreements(records: Sequence[DescriptorRecord]) -> list[Group]:
    """Disagreements grouped by key, largest group first; sets ``record["group"]``.

    Each group: ``id`` (1-based, the number in ``disagreement-<id>.py``), ``kind`` (the
    outcome), ``key``, ``count``, ``first`` (index of its first descriptor), ``notes`` (the
    model's notes over the group, counted), ``mutations`` (the generator's mutations over the
    group, counted; "none" for an unmutated valid descriptor).
    """
    by_key: dict[tuple[str, str, int, str, str, str], list[DescriptorRecord]] = {}
    for record in records:
        if record["outcome"] in DISAGREEMENTS:
            by_key.setdefault(_key_tuple(record["key"]), []).append(record)
    ordered = sorted(by_key.values(), key=lambda rs: (-len(rs), _key_tuple(rs[0]["key"])))
    groups: list[Group] = []
    for gid, members in enumerate(ordered, start=1):
        notes: collections.Counter[str] = collections.Counter()
        mutations: collections.Counter[str] = collections.Counter()
        for record in members:
            record["group"] = gid
            notes.update(record["model_notes"])
            mutations.update(record.get("mutations") or ["none"])
        groups.append(
            {
                "id": gid,
                "kind": members[0]["outcome"],
                "key": members[0]["key"].copy(),
                "count": len(members),
                "first": members[0]["index"],
                "notes": dict(sorted(notes.items())),
                "mutations": dict(mutations.most_common()),
                "script": f"disagreement-{gid}.py",
            }
        )
    return groups


def classes(groups: Sequence[Group]) -> list[OutcomeClass]:
    """Groups folded to (kind, rules, driver result): the short list to read first."""
    folded: dict[tuple[str, str, str], OutcomeClass] = {}
    for g in groups:
        k = (g["kind"], g["key"]["rules"], g["key"]["driver"])
        entry = folded.setdefault(
            k, {"kind": k[0], "rules": k[1], "driver": k[2], "count": 0, "groups": []}
        )
        entry["count"] += g["count"]
        entry["groups"].append(g["id"])
    return sorted(folded.values(), key=lambda e: -e["count"])


def rule_confirmation(records: Iterable[DescriptorRecord]) -> dict[str, dict[str, int]]:
    """Per rule, over descriptors where it is the model's ONLY violation: the driver's answers.

    ``"none"`` counts descriptors the model accepts. A rule whose sole-violation descriptors
    the driver always rejects is confirmed (for what was tried); one it accepts is not
    enforced by the driver as the documentation states it.
    """
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for r in records:
        if r["outcome"] == NOT_ENCODED:
            continue
        rules = r["model_rules"]
        if len(rules) > 1:
            continue
        name = rules[0] if rules else "none"
        driver_result = r["driver"]
        verdict = (
            "driver-accepts"
            if driver_result == SUCCESS
            else "driver-crashed"
            if outcome(False, driver_result) == DRIVER_CRASHED
            else "driver-rejects"
        )
        table[name][verdict] += 1
    return {rule: dict(sorted(c.items())) for rule, c in sorted(table.items())}


def mutation_table(records: Iterable[DescriptorRecord]) -> dict[str, dict[str, int]]:
    """Per single mutation (or "none"): the outcomes, for descriptors with at most one."""
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for r in records:
        mutations = r.get("mutations") or []
        if len(mutations) <= 1:
            table[mutations[0] if mutations else "none"][r["outcome"]] += 1
    return {name: dict(sorted(c.items())) for name, c in sorted(table.items())}


def summarize(records: Sequence[DescriptorRecord]) -> Counts:
    """The counts: tried, each outcome (whole model, and documented rules alone), results."""
    counts = collections.Counter(r["outcome"] for r in records)
    documented = collections.Counter(r.get("outcome_documented", r["outcome"]) for r in records)
    return {
        "tried": len(records),
        "counts": {name: counts.get(name, 0) for name in OUTCOMES},
        "counts_documented": {name: documented.get(name, 0) for name in OUTCOMES},
        "disagreements": sum(counts.get(name, 0) for name in DISAGREEMENTS),
        "driver_results": dict(collections.Counter(r["driver"] for r in records).most_common()),
    }


SCRIPT_TEMPLATE = "tma_disagreement.py.j2"
_SCRIPT_FUNCTIONS = (tma_driver._result_name, tma_driver._init_context, tma_driver._encode_raw)


def _literal(value: Any) -> str:
    return pprint.pformat(value, width=96, sort_dicts=False)


def reproducer_script(group: Group, record: DescriptorRecord, context: ScriptContext) -> str:
    """A script that needs only cuda-bindings: encodes ``record``'s descriptor, prints both sides
    (``suite/templates/tma_disagreement.py.j2``, with the driver helpers it calls embedded).

    ``context`` holds the run's facts (seed, driver version, device, bindings version).
    """
    model_says = (
        "finds no documented rule broken (expects CUDA_SUCCESS)"
        if record["model_ok"]
        else "expects a rejection: " + ", ".join(record["model_rules"])
    )
    return (
        template_environment()
        .get_template(SCRIPT_TEMPLATE)
        .render(
            group=group,
            record=record,
            context=context,
            model_says=model_says,
            key_json=json.dumps(group["key"]),
            descriptor=_literal(dict(record["args"])),
            call=_literal(dict(record["call"])),
            model_ok=repr(record["model_ok"]),
            model_rules=_literal(list(record["model_rules"])),
            model_messages=_literal(list(record["model_messages"])),
            model_notes=_literal(list(record["model_notes"])),
            driver_result=repr(record["driver"]),
            functions=[inspect.getsource(fn) for fn in _SCRIPT_FUNCTIONS],
        )
    )
