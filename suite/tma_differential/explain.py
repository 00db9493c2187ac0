"""Explaining a differential run's disagreements, no GPU: each hypothesis about why the driver
refused what the documented rules allow, counted for and against over a run's records.
"""

from __future__ import annotations

import collections
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict

from suite.cuda.driver import args_from_dict, args_to_dict
from suite.cuda.footprint import box_bytes
from suite.cuda.model import (
    MAX_GLOBAL_DIM,
    MAX_RANK,
    PACKED_TYPES,
    Interleave,
    L2Promotion,
    OobFill,
    TensorMapArgs,
    element_size_bits,
    shared_memory_limit,
)
from suite.cuda.rules import ATOM_SWIZZLES, check
from suite.tma_differential.descriptors import (
    BASE_ADDRESS,
    rebase,
)
from suite.tma_differential.generator import (
    generate,
)
from suite.tma_differential.records import (
    AGREE_OK,
    MODEL_OK_DRIVER_REJECTS,
    MODEL_REJECTS_DRIVER_OK,
    SUCCESS,
    DescriptorRecord,
    make_record,
    outcome,
)


def _bits(a: TensorMapArgs) -> int:
    return element_size_bits(a.dtype)


def _row_bytes_of(a: TensorMapArgs) -> int:
    return math.ceil(a.global_dim[0] * _bits(a) / 8) if a.global_dim else 0


def _overlapping(a: TensorMapArgs) -> bool:
    if a.rank < 2:
        return False
    s, d = a.global_strides, a.global_dim
    return s[0] < _row_bytes_of(a) or any(s[i] < s[i - 1] * d[i] for i in range(1, a.rank - 1))


def _span_past_next_stride(a: TensorMapArgs) -> bool:
    if a.rank < 2:
        return False
    s, b = a.global_strides, a.box_dim
    return b[0] * _bits(a) > 8 * s[0] or any(b[i] * s[i - 1] > s[i] for i in range(1, a.rank - 1))


def _footprint(a: TensorMapArgs, how: str) -> int:
    """Candidate ways of sizing the box, in bytes (the driver's is ``floor``)."""
    n = 1
    for i, (b, e) in enumerate(zip(a.box_dim, a.element_strides, strict=True)):
        if how == "product":
            n *= b
        elif how == "ceil":
            n *= -(-b // e)
        elif how == "floor-skip-dim0" and i == 0 and a.interleave is Interleave.NONE:
            n *= b
        else:
            n *= b // e
    return n * _bits(a) // 8


def _documented_box_bytes(a: TensorMapArgs) -> int:
    try:
        return box_bytes(a)
    except ValueError:
        return 0


_LIMIT = shared_memory_limit(None)

#: (id, what, predicate): "the driver refuses a descriptor when ...". Each is judged over the
#: descriptors the documented rules accept: how many refusals it explains, how many accepted
#: descriptors it wrongly predicts refused (contradictions). Only zero contradictions confirm.
HYPOTHESES: tuple[tuple[str, str, Any], ...] = (
    ("box-larger-than-dim", "boxDim[i] > globalDim[i] for some i",
     lambda a: any(b > d for b, d in zip(a.box_dim, a.global_dim, strict=True))),
    ("inner-box-beyond-row", "boxDim[0] > globalDim[0] (inner box bytes beyond the row)",
     lambda a: a.box_dim[0] > a.global_dim[0]),
    ("box-span-past-next-stride",
     "boxDim[0] * elementSize > globalStrides[0], or boxDim[i] * globalStrides[i-1] > "
     "globalStrides[i]", _span_past_next_stride),
    ("overlapping-strides", "globalStrides[0] < row bytes or globalStrides[i] < "
     "globalStrides[i-1] * globalDim[i]", _overlapping),
    ("zero-stride", "a globalStrides entry of 0", lambda a: 0 in a.global_strides),
    ("dim-2^32", "globalDim[i] == 2^32", lambda a: MAX_GLOBAL_DIM in a.global_dim),
    ("stride-near-2^40", "a globalStrides entry >= 2^40 - 32",
     lambda a: any(s >= 2**40 - 32 for s in a.global_strides)),
    ("null-address", "globalAddress == 0", lambda a: a.global_address == 0),
    ("element-stride0-not-1", "elementStrides[0] != 1 with interleave NONE",
     lambda a: a.interleave is Interleave.NONE and a.element_strides[0] != 1),
    ("box-not-multiple-of-element-stride", "boxDim[i] % elementStrides[i] != 0 (i > 0, or "
     "interleaved)", lambda a: any(
         b % e for i, (b, e) in enumerate(zip(a.box_dim, a.element_strides, strict=True))
         if i or a.interleave is not Interleave.NONE)),
    ("nan-oob-fill", "oobFill NAN_REQUEST_ZERO_FMA", lambda a: a.oob_fill is not OobFill.NONE),
    ("l2-promotion", "l2Promotion != NONE", lambda a: a.l2_promotion is not L2Promotion.NONE),
    ("l2-256-small-inner", "l2Promotion 256B with boxDim[0] * elementSize < 256 bytes",
     lambda a: a.l2_promotion is L2Promotion.L2_256B and a.box_dim[0] * _bits(a) < 2048),
    ("interleaved", "interleave != NONE", lambda a: a.interleave is not Interleave.NONE),
    ("rank1-ragged-size", "rank 1, globalDim[0] * elementSize not a multiple of 16",
     lambda a: a.rank == 1 and a.global_dim[0] * _bits(a) % 128 != 0),
    ("packed-type", "a packed type (16U4_ALIGN8B, 16U4_ALIGN16B, 16U6_ALIGN16B)",
     lambda a: a.dtype in PACKED_TYPES),
    ("atom-swizzle", "a 128B_ATOM_* swizzle", lambda a: a.swizzle in ATOM_SWIZZLES),
    ("interleaved-inner-16", "interleaved, boxDim[0] * elementSize not a multiple of 16 bytes",
     lambda a: a.interleave is not Interleave.NONE and a.box_dim[0] * _bits(a) % 128 != 0),
    ("interleaved-inner-32", "interleaved, boxDim[0] * elementSize not a multiple of 32 bytes",
     lambda a: a.interleave is not Interleave.NONE and a.box_dim[0] * _bits(a) % 256 != 0),
    ("footprint-documented", f"box_bytes (ceil, elementStrides[0] ignored) > {_LIMIT}",
     lambda a: _documented_box_bytes(a) > _LIMIT),
    ("footprint-ceil", f"product of ceil(boxDim / elementStrides) * elementSize > {_LIMIT}",
     lambda a: _footprint(a, "ceil") > _LIMIT),
    ("footprint-product", f"product of boxDim * elementSize > {_LIMIT}",
     lambda a: _footprint(a, "product") > _LIMIT),
    ("footprint-floor-skip-dim0", f"floor footprint, elementStrides[0] ignored > {_LIMIT}",
     lambda a: _footprint(a, "floor-skip-dim0") > _LIMIT),
    ("footprint-floor", f"product of floor(boxDim / elementStrides) * elementSize > {_LIMIT}",
     lambda a: _footprint(a, "floor") > _LIMIT),
)  # fmt: skip

#: The confirmed hypotheses of the 2026-11-22 run, and the model rule each became.
CONFIRMED = {
    "packed-type": "packed-type-needs-sm100",
    "atom-swizzle": "swizzle-atom-needs-sm100",
    "interleaved-inner-16": "interleaved-inner-box-bytes-multiple-of-16",
    "footprint-floor": "box-shared-memory-footprint",
}


class HypothesisCount(TypedDict):
    """One hypothesis over a run: the refusals it explains, the acceptances against it."""

    id: str
    hypothesis: str
    explains: int
    contradictions: int
    confirmed: bool


class FootprintBracket(TypedDict):
    largest_accepted: int | None
    smallest_refused_otherwise_valid: int | None


class Explanation(TypedDict):
    """:func:`explain`'s answer (summary.json's ``explanation``)."""

    refused: int
    accepted: int
    hypotheses: list[HypothesisCount]
    confirmed_rules: dict[str, str]
    refusals_by_confirmed: dict[str, int]
    example_index: dict[str, int]
    footprint_bracket: FootprintBracket
    model_rejects_driver_ok: dict[str, int]


def _read_jsonl(path: Path) -> list[DescriptorRecord]:
    import gzip

    if path.exists():
        text = path.read_text()
    elif path.with_suffix(path.suffix + ".gz").exists():
        with gzip.open(path.with_suffix(path.suffix + ".gz"), "rt") as fh:
            text = fh.read()
    else:
        raise FileNotFoundError(f"neither {path} nor {path}.gz exists")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def load_run(folder: Path) -> list[DescriptorRecord]:
    """Every record of a run: its records.jsonl, or rebuilt from its seed and disagreements.

    A run that kept only ``disagreements.jsonl(.gz)`` and ``summary.json`` is rebuilt: the
    generator gives the same descriptors for the same count and seed, the disagreements are
    taken as recorded (their arguments must match), and every other descriptor's driver
    answer is the one the documented model gave (those agreed). The rebuilt counts must equal
    the summary's, or this raises ``ValueError``.
    """
    try:
        return _read_jsonl(folder / "records.jsonl")
    except FileNotFoundError:
        pass
    summary = json.loads((folder / "summary.json").read_text())
    recorded = {r["index"]: r for r in _read_jsonl(folder / "disagreements.jsonl")}
    base = summary.get("environment", {}).get("base_address", BASE_ADDRESS)
    records = []
    for index, item in enumerate(generate(summary["count_requested"], summary["seed"])):
        args = rebase(item.args, base) if base != BASE_ADDRESS else item.args
        if index in recorded:
            record = recorded[index]
            if record["args"] != args_to_dict(args):
                raise ValueError(f"descriptor {index} differs from the run's: not the same list")
            records.append(record)
            continue
        verdict = check(args)
        if args.rank > MAX_RANK:  # cuda-bindings refuses arrays longer than 5
            result = "ERROR:not encoded (rank > 5)"
        else:
            result = SUCCESS if verdict.documented_ok else "CUDA_ERROR_INVALID_VALUE"
        records.append(make_record(index, args, verdict, {}, result, item.mutations))
    counts = collections.Counter(r.get("outcome_documented", r["outcome"]) for r in records)
    want = {k: v for k, v in summary["counts"].items() if v}
    if {k: v for k, v in counts.items() if v} != want:
        raise ValueError(f"rebuilt counts {dict(counts)} differ from the summary's {want}")
    return records


def explain(records: Sequence[DescriptorRecord]) -> Explanation:
    """Each hypothesis counted over the run; the refusals split by the confirmed ones.

    Refused: descriptors the documented rules accept and the driver refused. Accepted: every
    descriptor the driver accepted (whatever the model said). A hypothesis explains a refusal
    it predicts and is contradicted by an accepted descriptor it predicts refused.
    """
    parsed = [(r, args_from_dict(r["args"])) for r in records]
    refused = [
        (r, a)
        for r, a in parsed
        if r.get("model_documented_ok", r["model_ok"]) and _answered(r) and r["driver"] != SUCCESS
    ]
    accepted = [(r, a) for r, a in parsed if r["driver"] == SUCCESS]
    table: list[HypothesisCount] = []
    for hid, what, predicate in HYPOTHESES:
        explains = sum(1 for _, a in refused if _holds(predicate, a))
        against = sum(1 for _, a in accepted if _holds(predicate, a))
        table.append(
            {
                "id": hid,
                "hypothesis": what,
                "explains": explains,
                "contradictions": against,
                "confirmed": explains > 0 and against == 0,
            }
        )
    confirmed = {h[0]: h[2] for h in HYPOTHESES if h[0] in CONFIRMED}
    combos: collections.Counter[str] = collections.Counter()
    examples: dict[str, int] = {}
    for r, a in refused:
        hit = [hid for hid, predicate in confirmed.items() if _holds(predicate, a)]
        key = "+".join(hit) or "unexplained"
        combos[key] += 1
        examples.setdefault(key, r["index"])
    footprints_ok = [f for _, a in accepted if (f := _safe_footprint(a)) is not None]
    footprints_refused = [
        f
        for _, a in refused
        if not any(_holds(confirmed[h], a) for h in confirmed if h != "footprint-floor")
        and (f := _safe_footprint(a)) is not None
    ]
    rejects_ok = collections.Counter(
        ",".join(r["model_rules"]) for r, _ in parsed if r["outcome"] == MODEL_REJECTS_DRIVER_OK
    )
    return {
        "refused": len(refused),
        "accepted": len(accepted),
        "hypotheses": table,
        "confirmed_rules": dict(CONFIRMED),
        "refusals_by_confirmed": dict(combos.most_common()),
        "example_index": examples,
        "footprint_bracket": {
            "largest_accepted": max(footprints_ok, default=None),
            "smallest_refused_otherwise_valid": min(footprints_refused, default=None),
        },
        "model_rejects_driver_ok": dict(rejects_ok.most_common()),
    }


def _holds(predicate: Any, args: TensorMapArgs) -> bool:
    """``predicate(args)``, False where the arrays do not describe a tensor (rank 0, ...)."""
    try:
        return bool(predicate(args))
    except (IndexError, ValueError, ZeroDivisionError):
        return False


def _safe_footprint(args: TensorMapArgs) -> int | None:
    try:
        return _footprint(args, "floor")
    except (ValueError, ZeroDivisionError):
        return None


def _answered(record: DescriptorRecord) -> bool:
    return outcome(True, record["driver"]) in (AGREE_OK, MODEL_OK_DRIVER_REJECTS)


def print_explanation(report: Explanation, log: Any = print) -> None:
    log(f"refused by the driver, documented rules fine: {report['refused']}; "
        f"accepted by the driver: {report['accepted']}")  # fmt: skip
    log(f"  {'hypothesis':<36} {'explains':>8} {'against':>8}")
    for h in report["hypotheses"]:
        mark = "  confirmed" if h["confirmed"] else ""
        log(f"  {h['id']:<36} {h['explains']:>8} {h['contradictions']:>8}{mark}")
    log("refusals by the confirmed hypotheses:")
    for key, count in report["refusals_by_confirmed"].items():
        log(f"  {count:>6}  {key}  (e.g. index {report['example_index'][key]})")
    log(f"footprint bracket: {report['footprint_bracket']}")
    log(f"model-rejects/driver-ok by rules: {report['model_rejects_driver_ok']}")
