"""Tests for the differential harness: suite/cuda (descriptors, generator, records, probes,
explain, differential, driver) and its door, bench/tma_differential.py.

On the CPU: the generator (valid TensorMapArgs, the edges it must hit, determinism for a
seed), the bookkeeping (outcomes, groups, per-rule confirmation, the rank-1 conclusions), the
exact arguments handed to the driver, and the standalone scripts. The driver itself is never
stood in for: what needs it runs on a GPU (``@pytest.mark.gpu``: 200 descriptors against the
real ``cuTensorMapEncodeTiled``).
"""

from __future__ import annotations

import collections
import importlib.util
import itertools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from suite.cuda import driver as tma_driver
from suite.cuda.driver import (
    DriverUnavailable,
    IsolatedDriver,
    args_from_dict,
    args_to_dict,
    driver_call,
    encode_with_driver,
)
from suite.cuda.rules import (
    OBSERVED_RULES,
)
from suite.tma_differential.descriptors import (
    BASE_ADDRESS,
)
from suite.tma_differential.explain import (
    CONFIRMED,
    explain,
    load_run,
)
from suite.tma_differential.generator import (
    MUTATION_NAMES,
    MUTATIONS,
    coverage,
    generate,
)
from suite.tma_differential.probes import (
    FOOTPRINT_ACCEPTED,
    FOOTPRINT_REFUSED,
    controls,
    device_facts,
    footprint_box,
    footprint_conclusions,
    footprint_probe_cases,
    rank1_conclusions,
    rank1_probe_cases,
)
from suite.tma_differential.records import (
    AGREE_OK,
    AGREE_REJECT,
    DRIVER_CRASHED,
    MODEL_OK_DRIVER_REJECTS,
    MODEL_REJECTS_DRIVER_OK,
    NOT_ENCODED,
    classes,
    group_disagreements,
    make_record,
    mutation_table,
    outcome,
    reproducer_script,
    rule_confirmation,
    summarize,
)
from suite.tma_model import (
    MAX_GLOBAL_DIM,
    Interleave,
    Swizzle,
    TensorMapArgs,
    TensorMapDataType,
    check,
    driver_box_footprint,
)

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "tma_differential.py"
F32 = TensorMapDataType.FLOAT32


def _load_bench():
    spec = importlib.util.spec_from_file_location("tma_differential", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("tma_differential", module)
    spec.loader.exec_module(module)
    return module


door = _load_bench()

#: Mutations that must break exactly the documented rule named (applied alone to a valid base).
RULE_OF_MUTATION = {
    "rank-0": "rank-range",
    "rank-6": "rank-range",
    "interleave-low-rank": "interleave-requires-rank-3",
    "address-misaligned": "global-address-alignment",
    "dim-zero": "global-dim-range",
    "dim-over-2^32": "global-dim-range",
    "packed-dim-not-multiple": "packed-global-dim-multiple",
    "stride-misaligned": "global-stride-alignment",
    "stride-2^40-or-more": "global-stride-range",
    "box-zero": "box-dim-range",
    "box-over-256": "box-dim-range",
    "inner-bytes-off-16": "inner-box-bytes-multiple-of-16",
    "packed-box-not-128": "packed-box-dim-inner",
    "element-stride-0-or-9": "element-stride-range",
    "swizzle-too-narrow": "swizzle-span",
    "interleave32-other-swizzle": "interleave-32b-requires-swizzle-32b",
    "packed-16u6-interleaved": "packed-16u6-requires-no-interleave",
    "packed-swizzle-unlisted": "packed-swizzle-mode",
    "nan-fill-non-float": "oob-fill-requires-float",
}
#: Mutations that stay within the documented rules (the model must still accept).
WITHIN_RULES = set(MUTATION_NAMES) - set(RULE_OF_MUTATION)


@pytest.fixture(scope="module")
def sample():
    """1000 generated descriptors (seed 0), shared by the generator tests."""
    return generate(1000, 0)


def _has_cuda_bindings() -> bool:
    try:
        return importlib.util.find_spec("cuda.bindings") is not None
    except ModuleNotFoundError:
        return False


# ------------------------------------------------------------------ the generator


def test_every_mutation_is_classified():
    assert set(RULE_OF_MUTATION) <= set(MUTATION_NAMES)
    assert {
        "stride-overlap",
        "element-stride0-not-1",
        "box-not-multiple-of-element-stride",
        "box-larger-than-dim",
        "null-address",
        "dim-2^32",
        "stride-2^40-minus-align",
        "box-255-or-256",
        "rank1-ragged-size",
    } == WITHIN_RULES


def test_generator_produces_valid_tensor_map_args(sample):
    assert 950 <= len(sample) <= 1000  # distinct ones of 1500 drawn
    assert len(set(sample)) == len(sample)
    for item in sample:
        args = item.args
        assert isinstance(args, TensorMapArgs)
        assert len(args.global_dim) == len(args.box_dim) == len(args.element_strides) == args.rank
        assert len(args.global_strides) == max(args.rank - 1, 0)
        assert "array-length" not in check(args).rules  # the driver reads rank entries
        call = driver_call(args)  # every value fits the driver's types
        assert call["rank"] == args.rank and call["dtype"] == int(args.dtype)
        assert all(name in MUTATIONS for name in item.mutations)
        assert args_from_dict(json.loads(json.dumps(args_to_dict(args)))) == args


def test_unmutated_descriptors_break_no_documented_rule(sample):
    """The generator aims at the documented rules; observed ones may break (the point)."""
    base = [item.args for item in sample if not item.mutations]
    assert len(base) > 250
    bad = [(a, check(a).rules) for a in base if not check(a).documented_ok]
    assert bad == []


def test_each_mutation_breaks_its_rule_or_none(sample):
    seen: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for item in sample:
        if len(item.mutations) != 1:
            continue
        (name,) = item.mutations
        rules = check(item.args).documented_rules
        if name in RULE_OF_MUTATION:
            assert RULE_OF_MUTATION[name] in rules, (name, rules, item.args)
        else:
            assert rules == [], (name, rules, item.args)
        seen[name][",".join(rules)] += 1
    assert len(seen) >= len(MUTATION_NAMES) - 6, sorted(seen)  # rare packed ones may miss


def test_generator_hits_the_boundaries(sample):
    cov = coverage(item.args for item in sample)
    assert set(cov["dtype"]) == {t.name for t in TensorMapDataType}
    assert {"0", "1", "2", "255", "256", "257"} <= set(cov["box edge"])
    assert {"0", "1", "2", str(MAX_GLOBAL_DIM), str(MAX_GLOBAL_DIM + 1)} <= set(
        cov["global dim edge"]
    )
    assert {"0", "16"} <= set(cov["address mod 32"])  # aligned to 32 and to 16 only
    assert {"1", "2", "4", "8"} & set(cov["address mod 32"])  # misaligned
    assert {"0", "9", "1", "8"} <= set(cov["element stride"])
    assert {str(2**40 - 16), str(2**40 - 32)} <= set(cov["stride edge"])
    assert str(2**40) in cov["stride edge"] or str(2**40 + 16) in cov["stride edge"]
    assert "0" in cov["stride mod 16"] and len(cov["stride mod 16"]) >= 3  # +-1, +-8
    assert "0" in cov["inner box bits mod 128"] and len(cov["inner box bits mod 128"]) > 1
    assert set(cov["rank-1 size"]) == {"x16", "ragged"}
    ranks = cov["interleave/rank"]
    for interleave in ("B16", "B32"):
        assert any(ranks.get(f"{interleave}/{r}") for r in (3, 4, 5)), ranks
    assert any(ranks.get(f"B16/{r}") for r in (1, 2)), ranks  # interleave below rank 3
    assert {"0", "6"} <= set(cov["rank"])
    spans = cov["swizzle span"]
    for swizzle in ("B32", "B64", "B128"):
        for where in ("at", "below", "above"):
            assert spans.get(f"{swizzle}:{where}"), (swizzle, where, spans)


def test_generator_is_deterministic_for_a_seed():
    first = generate(120, 7)
    again = generate(120, 7)
    other = generate(120, 8)
    assert first == again
    assert first != other


# ------------------------------------------------------------------ what reaches the driver


def test_driver_call_passes_a_padded_stride_for_rank_1_unless_null():
    args = TensorMapArgs(F32, 1, BASE_ADDRESS, (1_000_003,), (), (256,), (1,))
    call = driver_call(args)
    assert call["global_strides"] == [4_000_016]  # 4,000,012 bytes rounded up to 16
    assert call["global_dim"] == [1_000_003] and call["box_dim"] == [256]
    assert (call["dtype"], call["interleave"], call["swizzle"]) == (7, 0, 0)
    assert driver_call(args, null_empty_arrays=True)["global_strides"] is None
    explicit = TensorMapArgs(F32, 1, BASE_ADDRESS, (100,), (400,), (4,), (1,))
    assert driver_call(explicit)["global_strides"] == [400]  # passed as given


def test_driver_call_never_passes_null_at_rank_0_by_default():
    args = TensorMapArgs(F32, 0, BASE_ADDRESS, (), (), (), ())
    call = driver_call(args)
    assert all(call[k] for k in ("global_dim", "global_strides", "box_dim", "element_strides"))
    nulls = driver_call(args, null_empty_arrays=True)
    assert nulls["global_dim"] is None and nulls["box_dim"] is None


@pytest.mark.parametrize(
    "field, value",
    [("global_dim", (2**64,)), ("box_dim", (2**32,)), ("global_address", -16)],
)
def test_driver_call_refuses_values_the_bindings_cannot_pass(field, value):
    args = TensorMapArgs(F32, 1, BASE_ADDRESS, (64,), (), (4,), (1,))
    import dataclasses

    with pytest.raises(ValueError, match=field):
        driver_call(dataclasses.replace(args, **{field: value}))


# ------------------------------------------------------------------ bookkeeping


def test_outcome_table():
    assert outcome(True, "CUDA_SUCCESS") == AGREE_OK
    assert outcome(False, "CUDA_ERROR_INVALID_VALUE") == AGREE_REJECT
    assert outcome(True, "CUDA_ERROR_INVALID_VALUE") == MODEL_OK_DRIVER_REJECTS
    assert outcome(False, "CUDA_SUCCESS") == MODEL_REJECTS_DRIVER_OK
    assert outcome(True, "CRASH:SIGSEGV") == DRIVER_CRASHED
    assert outcome(False, "HANG") == DRIVER_CRASHED
    assert outcome(True, "ERROR:ValueError: x") == NOT_ENCODED


def _records():
    """Records for a few real descriptors, with driver answers written in by hand."""
    ok2d = TensorMapArgs.contiguous(F32, (1024, 1024), (32, 32), global_address=BASE_ADDRESS)
    rank1 = TensorMapArgs(F32, 1, BASE_ADDRESS, (1_000_003,), (), (256,), (1,))
    box257 = TensorMapArgs.contiguous(F32, (1024, 1024), (32, 257), global_address=BASE_ADDRESS)
    es9 = TensorMapArgs.contiguous(
        F32, (1024, 1024), (32, 32), global_address=BASE_ADDRESS, element_strides=(1, 9)
    )
    answers = [
        (ok2d, "CUDA_SUCCESS"),
        (rank1, "CUDA_ERROR_INVALID_VALUE"),
        (rank1, "CUDA_ERROR_INVALID_VALUE"),
        (box257, "CUDA_ERROR_INVALID_VALUE"),
        (es9, "CUDA_SUCCESS"),
        (ok2d, "CRASH:SIGSEGV"),
    ]
    return [
        make_record(i, a, check(a), driver_call(a), result, ("m",) if i == 4 else ())
        for i, (a, result) in enumerate(answers)
    ]


def test_summarize_and_group():
    records = _records()
    summary = summarize(records)
    assert summary["tried"] == 6
    assert summary["counts"] == {
        AGREE_OK: 1,
        AGREE_REJECT: 1,
        MODEL_OK_DRIVER_REJECTS: 2,
        MODEL_REJECTS_DRIVER_OK: 1,
        DRIVER_CRASHED: 1,
        NOT_ENCODED: 0,
    }
    assert summary["disagreements"] == 4
    groups = group_disagreements(records)
    assert [g["count"] for g in groups] == [2, 1, 1]
    first = groups[0]
    assert first["id"] == 1 and first["script"] == "disagreement-1.py"
    assert first["kind"] == MODEL_OK_DRIVER_REJECTS and first["first"] == 1
    assert first["key"] == {
        "rules": "none",
        "driver": "CUDA_ERROR_INVALID_VALUE",
        "rank": 1,
        "dtype": "FLOAT32",
        "interleave": "NONE",
        "swizzle": "NONE",
    }
    assert records[1]["group"] == records[2]["group"] == 1
    assert "group" not in records[0] and "group" not in records[3]
    es_group = next(g for g in groups if g["kind"] == MODEL_REJECTS_DRIVER_OK)
    assert es_group["key"]["rules"] == "element-stride-range"
    assert es_group["mutations"] == {"m": 1}
    folded = classes(groups)
    assert folded[0] == {
        "kind": MODEL_OK_DRIVER_REJECTS,
        "rules": "none",
        "driver": "CUDA_ERROR_INVALID_VALUE",
        "count": 2,
        "groups": [1],
    }


def test_rule_confirmation_counts_sole_violations():
    table = rule_confirmation(_records())
    assert table["none"] == {"driver-accepts": 1, "driver-crashed": 1, "driver-rejects": 2}
    assert table["box-dim-range"] == {"driver-rejects": 1}
    assert table["element-stride-range"] == {"driver-accepts": 1}
    assert mutation_table(_records())["m"] == {MODEL_REJECTS_DRIVER_OK: 1}


def test_rank1_probe_cases_and_conclusions():
    cases = rank1_probe_cases()
    forms = {(c["dtype"], c["n"], c["strides"]) for c in cases}
    assert ("FLOAT32", 1_000_003, "null") in forms
    assert ("FLOAT32", 1_000_004, "padded") in forms
    assert ("FLOAT32", 1_000_003, "bytes") in forms
    for c in cases:
        assert c["null_empty_arrays"] == (c["strides"] == "null")
        assert check(c["args"]).ok == (c["strides"] == "padded")  # bytes: an extra entry
        if c["strides"] == "null":  # the observed rule, settled by the 2026-11-22 probe
            assert check(c["args"]).rules == ["rank1-null-strides"]
            assert c["args"].global_strides_pointer == "null"
            assert driver_call(c["args"], null_empty_arrays=True)["global_strides"] is None
    rows = [
        {"strides": "null", "bytes_mod_16": 0, "driver": "CUDA_ERROR_INVALID_VALUE"},
        {"strides": "padded", "bytes_mod_16": 0, "driver": "CUDA_SUCCESS"},
        {"strides": "padded", "bytes_mod_16": 12, "driver": "CUDA_ERROR_INVALID_VALUE"},
        {"strides": "padded", "bytes_mod_16": 8, "driver": "CUDA_SUCCESS"},
    ]
    said = rank1_conclusions(rows)
    assert said["null globalStrides, size a multiple of 16"] == "rejected"
    assert said["padded globalStrides, size a multiple of 16"] == "accepted"
    assert said["padded globalStrides, size not a multiple of 16"] == "mixed"
    assert said["byte-size globalStrides, size a multiple of 16"] == "not tried"


def test_controls_are_what_the_model_says():
    for c in controls():
        assert check(c["args"]).ok == (c["expect"] == "CUDA_SUCCESS"), c["name"]


def test_records_carry_both_verdicts():
    atom = TensorMapArgs.contiguous(
        F32, (1024, 1024), (32, 32), global_address=BASE_ADDRESS, swizzle=Swizzle.B128_ATOM_32B
    )
    verdict = check(atom, compute_capability=90)
    record = make_record(0, atom, verdict, driver_call(atom), "CUDA_ERROR_INVALID_VALUE")
    assert record["outcome"] == AGREE_REJECT  # the whole model (observed rule) agrees
    assert record["outcome_documented"] == MODEL_OK_DRIVER_REJECTS  # as on 2026-11-22
    assert (record["model_ok"], record["model_documented_ok"]) == (False, True)
    summary = summarize([record])
    assert summary["counts"][AGREE_REJECT] == 1
    assert summary["counts_documented"][MODEL_OK_DRIVER_REJECTS] == 1


# ------------------------------------------------------------------ the footprint probe


@pytest.mark.parametrize("nbytes", [228_480, 232_448, 232_464, 233_472, 236_640, 16, 4096])
def test_footprint_box_is_exact(nbytes):
    box = footprint_box(nbytes)
    assert box is not None and len(box) <= 5
    assert box[0] % 16 == 0 and all(1 <= b <= 256 for b in box)
    args = TensorMapArgs.contiguous(TensorMapDataType.UINT8, box, box)
    assert driver_box_footprint(args) == nbytes
    assert check(args).documented_ok


def test_footprint_box_refuses_what_no_box_makes():
    assert footprint_box(24) is None  # not a multiple of 16
    assert footprint_box(16 * 257 * 263) is None  # a prime factor over 256


def test_footprint_probe_cases_and_conclusions():
    cases = footprint_probe_cases()
    scan = [c for c in cases if c["kind"] == "scan"]
    assert scan[0]["bytes"] == FOOTPRINT_ACCEPTED and scan[-1]["bytes"] == FOOTPRINT_REFUSED
    assert len(scan) > 200  # sizes with a prime factor over 256 have no box
    sizes = {c["bytes"] for c in scan}
    assert {232_432, 232_448, 232_464, 233_472} <= sizes  # 227 KiB, 228 KiB and neighbours
    ordered = sorted(sizes)
    assert max(b - a for a, b in itertools.pairwise(ordered)) <= 160
    for c in scan:
        assert driver_box_footprint(c["args"]) == c["bytes"]
        assert check(c["args"]).documented_ok
        over = check(c["args"], compute_capability=90).rules == ["box-shared-memory-footprint"]
        assert over == (c["bytes"] > 232_448)
    quirks = {c["kind"]: c for c in cases if c["kind"] != "scan"}
    assert quirks["box-below-element-stride"]["bytes"] == 0
    assert quirks["box-below-element-stride"]["loaded_bytes"] == 256**3
    assert quirks["box-at-element-stride"]["bytes"] == 256**3
    rows = [
        {"kind": "scan", "bytes": 232_432, "driver": "CUDA_SUCCESS"},
        {"kind": "scan", "bytes": 232_448, "driver": "CUDA_SUCCESS"},
        {"kind": "scan", "bytes": 232_464, "driver": "CUDA_ERROR_INVALID_VALUE"},
        {"kind": "box-below-element-stride", "bytes": 0, "driver": "CUDA_SUCCESS"},
    ]
    said = footprint_conclusions(rows)
    assert (said["largest_accepted_bytes"], said["smallest_refused_bytes"]) == (232_448, 232_464)
    assert said["monotonic"] and said["quirks"] == {"box-below-element-stride": "CUDA_SUCCESS"}
    rows.append({"kind": "scan", "bytes": 233_000, "driver": "CUDA_SUCCESS"})
    assert not footprint_conclusions(rows)["monotonic"]


def test_device_facts_without_a_gpu_is_empty_not_an_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    assert device_facts() == {}


# ------------------------------------------------------------------ explaining a run


def _hand_run():
    """A tiny run: two packed refusals, one footprint refusal, accepted controls."""
    packed = TensorMapArgs(TensorMapDataType.PACKED_16U4_ALIGN8B, 1, BASE_ADDRESS, (2,), (),
                           (32,), (1,))  # fmt: skip
    big = TensorMapArgs.contiguous(TensorMapDataType.UINT8, (256, 4, 228), (256, 4, 228))
    ok = TensorMapArgs.contiguous(F32, (1024, 1024), (32, 32), global_address=BASE_ADDRESS)
    answers = [(packed, "CUDA_ERROR_INVALID_VALUE"), (big, "CUDA_ERROR_INVALID_VALUE"),
               (ok, "CUDA_SUCCESS"), (big, "CUDA_SUCCESS")]  # fmt: skip
    return [
        make_record(i, a, check(a), driver_call(a), result) for i, (a, result) in enumerate(answers)
    ]


def test_explain_counts_for_and_against():
    report = explain(_hand_run())
    assert (report["refused"], report["accepted"]) == (2, 2)
    table = {h["id"]: h for h in report["hypotheses"]}
    assert table["packed-type"]["explains"] == 1 and table["packed-type"]["confirmed"]
    # the last record (a footprint over the limit, accepted) contradicts the footprint rule
    assert table["footprint-floor"] == {
        "id": "footprint-floor",
        "hypothesis": table["footprint-floor"]["hypothesis"],
        "explains": 1,
        "contradictions": 1,
        "confirmed": False,
    }
    assert report["refusals_by_confirmed"] == {"packed-type": 1, "footprint-floor": 1}
    assert set(CONFIRMED.values()) <= set(OBSERVED_RULES)


def test_load_run_prefers_records_and_rebuilds_otherwise(tmp_path):
    records = _hand_run()
    (tmp_path / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert load_run(tmp_path) == json.loads(json.dumps(records))
    other = tmp_path / "rebuilt"
    other.mkdir()
    items = generate(40, 3)
    verdicts = [check(i.args) for i in items]
    # pretend the driver refused the first documented-ok descriptor: one disagreement
    first = next(n for n, v in enumerate(verdicts) if v.documented_ok)
    dis = make_record(first, items[first].args, verdicts[first], {}, "CUDA_ERROR_INVALID_VALUE")
    (other / "disagreements.jsonl").write_text(json.dumps(dis) + "\n")
    counts = collections.Counter(
        "not-encoded" if i.args.rank > 5 else ("agree-ok" if v.documented_ok else "agree-reject")
        for i, v in zip(items, verdicts, strict=True)
    )
    counts["agree-ok"] -= 1
    counts["model-ok/driver-rejects"] += 1
    summary = {"count_requested": 40, "seed": 3, "counts": dict(counts)}
    (other / "summary.json").write_text(json.dumps(summary))
    rebuilt = load_run(other)
    assert len(rebuilt) == len(items) and rebuilt[first]["driver"] == "CUDA_ERROR_INVALID_VALUE"
    summary["counts"]["agree-ok"] += 5
    (other / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(ValueError, match="differ"):
        load_run(other)


def test_explain_main_needs_no_gpu(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    records = _hand_run()
    (tmp_path / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert door.main(["--explain", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "packed-type" in out and "confirmed" in out


RESULTS_2026_11_22 = ROOT / "docs" / "results" / "tma-differential-2026-11-22"


@pytest.mark.skipif(
    not os.environ.get("TMA_EXPLAIN_FULL"), reason="about 90 s: set TMA_EXPLAIN_FULL=1"
)
def test_explain_reproduces_the_2026_11_22_analysis():
    """docs/tma-disagreements.md's numbers, rebuilt from the seed (about 90 s)."""
    report = explain(load_run(RESULTS_2026_11_22))
    assert (report["refused"], report["accepted"]) == (3793, 2251)
    table = {h["id"]: h for h in report["hypotheses"]}
    for hid, explains in {
        "packed-type": 1010,
        "atom-swizzle": 1167,
        "interleaved-inner-16": 1883,
        "footprint-floor": 945,
    }.items():
        assert (table[hid]["explains"], table[hid]["contradictions"]) == (explains, 0), hid
    assert table["box-larger-than-dim"]["contradictions"] == 1110
    assert "unexplained" not in report["refusals_by_confirmed"]
    assert report["footprint_bracket"] == {
        "largest_accepted": 228_480,
        "smallest_refused_otherwise_valid": 236_640,
    }
    assert report["model_rejects_driver_ok"] == {"interleave-32b-requires-swizzle-32b": 10}


# ------------------------------------------------------------------ standalone scripts


def test_reproducer_script_is_standalone(tmp_path):
    records = _records()
    groups = group_disagreements(records)
    context = {"seed": 0, "driver_version": 13000, "device": "X", "bindings_version": "13.0"}
    text = reproducer_script(groups[0], records[groups[0]["first"]], context)
    compile(text, "disagreement-1.py", "exec")
    assert "from suite" not in text and "import suite" not in text
    for name in ("def _encode_raw", "def _init_context", "def _result_name", "MODEL_OK = True"):
        assert name in text
    path = tmp_path / "disagreement-1.py"
    path.write_text(text)
    # -S: no site-packages, so no cuda-bindings, whatever this machine has: one line, exit 2.
    proc = subprocess.run(
        [sys.executable, "-S", str(path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout.count("\n") == 1 and "cuda-bindings" in proc.stdout
    namespace: dict = {}
    exec(compile(text, str(path), "exec"), namespace)  # its literals are the record's
    assert namespace["CALL"] == records[1]["call"]
    assert namespace["DESCRIPTOR"] == records[1]["args"]
    assert namespace["MODEL_RULES"] == [] and namespace["DRIVER_RESULT_WHEN_FOUND"] == (
        "CUDA_ERROR_INVALID_VALUE"
    )


def test_main_without_cuda_bindings_prints_one_line_and_exits_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)  # makes the import fail
    assert door.main(["--count", "5", "--out", str(tmp_path / "out")]) == 2
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "cuda-bindings" in out
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="a GPU may be visible")
def test_isolated_driver_reports_no_driver_without_a_gpu():
    with pytest.raises(DriverUnavailable), IsolatedDriver(start_timeout_s=120):
        pass


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="a GPU may be visible")
def test_encode_with_driver_without_a_gpu_raises():
    tma_driver._ready.cache_clear()
    args = TensorMapArgs.contiguous(F32, (64, 64), (32, 32), global_address=BASE_ADDRESS)
    with pytest.raises(DriverUnavailable):
        encode_with_driver(args)


# ------------------------------------------------------------------ on a GPU


@pytest.mark.gpu
def test_gpu_encode_with_driver_agrees_on_the_controls():
    if not _has_cuda_bindings():
        pytest.skip("cuda-bindings is not installed")
    for c in controls():
        assert encode_with_driver(c["args"]) == c["expect"], c["name"]
    swizzled = TensorMapArgs.contiguous(
        F32, (1024, 1024), (32, 64), global_address=BASE_ADDRESS, swizzle=Swizzle.B128
    )
    assert encode_with_driver(swizzled) == "CUDA_SUCCESS"
    interleaved = TensorMapArgs.contiguous(
        TensorMapDataType.FLOAT16,
        (64, 32, 32),
        (8, 8, 8),
        global_address=BASE_ADDRESS,
        interleave=Interleave.B16,
    )
    print("fp16 3D interleave 16B box 8x8x8:", encode_with_driver(interleaved))


@pytest.mark.gpu
def test_gpu_differential_smoke_run(tmp_path):
    """200 descriptors against the real driver: completes and writes its files."""
    if not _has_cuda_bindings():
        pytest.skip("cuda-bindings is not installed")
    out = tmp_path / "diff"
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--count", "200", "--seed", "0", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    print(proc.stdout[-4000:], proc.stderr[-2000:])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert 0 < summary["tried"] <= 200
    assert sum(summary["counts"].values()) == summary["tried"]
    print("controls:", summary["controls"])
    assert (out / "disagreements.jsonl").exists() and (out / "records.jsonl").exists()
    lines = (out / "disagreements.jsonl").read_text().splitlines()
    assert len(lines) == summary["disagreements"]
    for group in summary["groups"]:
        assert (out / group["script"]).exists()
    assert summary["rank1_probe"]["rows"] and summary["environment"]["device"]
