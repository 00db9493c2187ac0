"""The CUDA TMA reproducers: static checks, nvcc builds, and (on a GPU) what the hardware does.

Without a GPU: the seeds' two "driver bugs" are caught by the static check with the rule they
break (``box-dim-range`` for the 1D box of 1024, ``buffer-overflow`` with ``tx-bytes-mismatch``
for the 2D 128x64 box in 16 KB stages), the corrected configs pass it, and both programs
compile with nvcc for sm_90a, sm_100a and sm_120a through the engine's isolated child.
On a GPU: the seeds' configs with the check off fail the way the seeds saw (an encode error;
an illegal address or wrong data), and the corrected ones copy exactly. The rank-1 probes
(``rank1-probe`` set; ``test_gpu_1d_rank1_encode_matrix``) record what the driver does with a
byte size that is not a multiple of 16 and with a null ``globalStrides``: the H200 refuses
every null one (the model's observed rule ``rank1-null-strides``, which the static check now
raises) and copies every other one (docs/tma-disagreements.md). Set ``TMA_PROBE_OUT`` to a
file path to keep the matrix as JSON.
"""

from __future__ import annotations

import itertools
import json
import os
import pickle
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from suite.api import Case, Reproducer, Target, WrongResult
from suite.engine.baseline import Baseline, exit_status
from suite.engine.child import load_reproducers
from suite.engine.described import describe
from suite.engine.discover import Found
from suite.engine.expand import expand_cases
from suite.engine.outcome import CaseResult, Outcome, Signature
from suite.engine.runner import Execution, run_case
from suite.nvcc import CudaRunError, compile_cuda, executable, run_cuda
from suite.static_check import (
    BUFFER_OVERFLOW,
    TX_BYTES_MISMATCH,
    LimitViolation,
    check_tma_copy,
    enforce_tma_copy,
)
from suite.tma_model import Swizzle, TensorMapArgs, TensorMapDataType
from tests.conftest import gpu_alone, the_gpus

ROOT = Path(__file__).resolve().parent.parent
FILES = {
    "cuda-tma-1d": ROOT / "repros" / "tma_bulk_1d.py",
    "cuda-tma-2d-pipeline": ROOT / "repros" / "tma_pipeline_2d.py",
}
TARGETS = ("sm_90", "sm_100", "sm_120")
F32 = TensorMapDataType.FLOAT32

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on the PATH")


def reproducer(repro_id: str) -> Reproducer:
    """The reproducer object itself (its compile function is called here, in the test)."""
    (repro,) = load_reproducers({"path": str(FILES[repro_id])})
    return repro


def found(repro_id: str) -> Found:
    return Found(describe(reproducer(repro_id)), {"path": str(FILES[repro_id])})


def module_of(repro_id: str) -> dict:
    """The reproducer module's namespace (its helpers: static_findings, defines, ...)."""
    return reproducer(repro_id).compile_fn.__globals__


def config(repro_id: str, set_name: str, **match: object) -> dict:
    """The one config of ``set_name`` whose values include ``match``."""
    configs = [
        c
        for c in reproducer(repro_id).configs[set_name]
        if all(c[k] == v for k, v in match.items())
    ]
    assert len(configs) == 1, (set_name, match, configs)
    return dict(configs[0])


def case(repro_id: str, cfg: dict, target: str = "sm_90", gpu: bool = False) -> Case:
    return Case(repro_id, cfg, Target(target), gpu)


# ------------------------------------------------------------------ the static check


def test_seed_1d_box_1024_is_box_dim_range():
    repro = reproducer("cuda-tma-1d")
    seed = config("cuda-tma-1d", "seed", static_check=True)
    assert seed["box"] == 1024
    with pytest.raises(LimitViolation) as caught:
        repro.compile_fn(case(repro.id, seed))
    assert caught.value.rule == "box-dim-range"
    assert [f.rule for f in caught.value.findings] == ["box-dim-range"]
    assert str(caught.value).startswith("box-dim-range: boxDim[0]=1024 is outside 1..256")
    assert "cuTensorMapEncodeTiled" in caught.value.source


def test_seed_2d_box_128x64_overflows_its_16k_stage():
    repro = reproducer("cuda-tma-2d-pipeline")
    seed = config("cuda-tma-2d-pipeline", "seed", static_check=True)
    assert (seed["box_rows"], seed["box_cols"], seed["buffer_elems"] * 4) == (128, 64, 16384)
    with pytest.raises(LimitViolation) as caught:
        repro.compile_fn(case(repro.id, seed))
    assert caught.value.rule == BUFFER_OVERFLOW
    assert [f.rule for f in caught.value.findings] == [BUFFER_OVERFLOW, TX_BYTES_MISMATCH]
    first = str(caught.value).splitlines()[0]
    assert first.startswith("buffer-overflow: ") and "32768 bytes" in first and "16384" in first


@pytest.mark.parametrize("repro_id", sorted(FILES))
def test_corrected_and_swizzle_configs_pass_the_static_check(repro_id):
    sets = reproducer(repro_id).configs
    good = list(sets["corrected"]) + list(sets.get("swizzle", ()))
    static_findings = module_of(repro_id)["static_findings"]
    for cfg in good:
        assert static_findings(case(repro_id, dict(cfg))) == [], cfg


def test_1d_launch_lengths_are_16_byte_multiples_with_a_ragged_tail():
    """The default launch never copies a size the H200 may reject (byte size % 16 != 0)."""
    module = module_of("cuda-tma-1d")
    for name in ("seed", "corrected", "boundary"):
        for cfg in reproducer("cuda-tma-1d").configs[name]:
            assert (cfg["lengths"], cfg["strides"]) == ("x16", "padded"), cfg
    lengths = module["LENGTH_SETS"]["x16"]
    assert lengths == (1 << 20, 1_000_004)
    assert all(n * 4 % 16 == 0 for n in lengths)
    assert any(n % 256 for n in lengths)  # a ragged last box is still exercised
    assert module["RAGGED_LENGTH"] * 4 % 16 != 0
    assert module["RAGGED_LENGTH"] in module["LENGTH_SETS"]["ragged"]


def test_rank1_probe_set_breaks_only_the_observed_null_rule_and_is_not_default():
    """The probes break no documented rule; the null ones break the observed one."""
    repro = reproducer("cuda-tma-1d")
    probes = repro.configs["rank1-probe"]
    assert "rank1-probe" not in repro.default_sets
    assert {(c["lengths"], c["strides"]) for c in probes} == {
        ("ragged", "padded"),
        ("ragged", "bytes"),
        ("ragged", "null"),
        ("x16", "bytes"),
        ("x16", "null"),
    }
    static_findings = module_of("cuda-tma-1d")["static_findings"]
    for cfg in probes:
        assert cfg["box"] == 256 and repro.problems(cfg) == [], cfg
        findings = static_findings(case("cuda-tma-1d", dict(cfg)))
        expected = ["rank1-null-strides"] if cfg["strides"] == "null" else []
        assert [f.rule for f in findings] == expected, cfg
        assert all(not f.documented for f in findings)
    labels = [repro.case_label(c) for sets in repro.configs.values() for c in sets]
    assert len(labels) == len(set(labels))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("lengths", ["ragged", "x16"])
def test_1d_null_strides_is_a_user_error_with_the_observed_rule(lengths, target):
    repro = reproducer("cuda-tma-1d")
    cfg = config("cuda-tma-1d", "rank1-probe", lengths=lengths, strides="null")
    with pytest.raises(LimitViolation) as caught:
        repro.compile_fn(case(repro.id, cfg, target))
    assert caught.value.rule == "rank1-null-strides"
    assert [f.rule for f in caught.value.findings] == ["rank1-null-strides"]
    assert caught.value.source.startswith("observed: H200 driver 580.159.04")
    assert str(caught.value).startswith("rank1-null-strides: globalStrides is NULL")


def test_static_check_takes_the_target_compute_capability():
    """The architecture-dependent rules are judged for the case's target, not guessed."""
    module = module_of("cuda-tma-2d-pipeline")
    cfg = config("cuda-tma-2d-pipeline", "corrected")
    assert module["compute_capability"](case("cuda-tma-2d-pipeline", cfg, "sm_120")) == 120
    assert module["compute_capability"](dict(cfg)) is None
    atom = TensorMapArgs.contiguous(
        F32, (1024, 1024), (32, 128), global_address=256, swizzle=Swizzle.B128_ATOM_32B
    )
    rules = [v.rule for v in check_tma_copy(atom, buffer_bytes=16384, tx_bytes=16384)]
    assert rules == []  # no target: not judged
    on_90 = check_tma_copy(atom, buffer_bytes=16384, tx_bytes=16384, compute_capability=90)
    assert [v.rule for v in on_90] == ["swizzle-atom-needs-sm100"]
    with pytest.raises(LimitViolation) as caught:
        enforce_tma_copy(atom, buffer_bytes=16384, tx_bytes=16384, compute_capability=90)
    assert caught.value.rule == "swizzle-atom-needs-sm100"
    on_100 = check_tma_copy(atom, buffer_bytes=16384, tx_bytes=16384, compute_capability=100)
    assert on_100 == []


# ------------------------------------------------------------------ the baseline


def recorded(name: str) -> list[CaseResult]:
    path = ROOT / "docs" / "results" / name
    return [CaseResult.from_json(json.loads(line)) for line in path.read_text().splitlines()]


def test_baseline_covers_every_recorded_gpu_failure_of_the_cuda_tma_reproducers():
    """Each failure of the 2026-11-22 H200 runs is "known" with the current baseline.

    The 1D run's null-strides probes failed at launch then; with the static check they are
    now user errors (rule ``rank1-null-strides``), which the baseline expects instead.
    """
    baseline = Baseline.load()
    results = [
        r for r in recorded("2026-11-22-h200-cuda-tma-1d.jsonl") if r.config["strides"] != "null"
    ]
    results += [
        r
        for r in recorded("2026-11-22-h200-cuda-tma-first-run.jsonl")
        if r.repro == "cuda-tma-2d-pipeline"
    ]
    now = [
        r for r in recorded("2026-11-22-h200-cuda-tma-1d.jsonl") if r.config["strides"] == "null"
    ]
    assert len(now) == 2
    module = module_of("cuda-tma-1d")
    for r in now:  # what the engine records for them now: the static check's user error
        (finding, *_) = module["static_findings"](case(r.repro, r.config, r.target))
        signature = Signature(f"user-error:{finding.rule}")
        results.append(replace(r, outcome=Outcome.USER_ERROR, signature=signature))
    results = [baseline.judge(r, "3.6.0") for r in results]
    verdicts = {r.case_id: r.verdict for r in results}
    assert set(verdicts.values()) <= {"ok", "known"}, verdicts
    assert exit_status(results) == 0
    by_id = {r.case_id: r.expectation for r in results if r.verdict == "known"}
    assert sorted(set(by_id.values())) == [
        "cuda-1d-box-1024",
        "cuda-1d-box-over-256-check-off",
        "cuda-1d-rank1-null-strides",
        "cuda-2d-box-128x64-into-16k",
        "cuda-2d-box-128x64-into-16k-check-off",
    ]


def test_baseline_kinds_name_the_rule():
    ours = {
        e.id: e
        for e in Baseline.load().expectations
        if e.repro in FILES and e.id.endswith(("check-off", "null-strides"))
    }
    assert {e.kind for e in ours.values()} == {
        "user-error:box-dim-range",
        "user-error:rank1-null-strides",
        "user-error:buffer-overflow",
    }


def test_corrected_1d_is_box_256():
    assert config("cuda-tma-1d", "corrected")["box"] == 256
    cfg = config("cuda-tma-2d-pipeline", "corrected")
    assert (cfg["box_rows"], cfg["box_cols"]) == (128, 32)


def args1d(box: int) -> TensorMapArgs:
    return TensorMapArgs(F32, 1, 256, (1 << 20,), (), (box,), (1,))


def test_box_dim_range_boundary():
    assert check_tma_copy(args1d(256), buffer_bytes=1024, tx_bytes=1024) == []
    rules = [v.rule for v in check_tma_copy(args1d(257), buffer_bytes=2048, tx_bytes=1028)]
    assert rules[0] == "box-dim-range"


def test_buffer_overflow_boundary():
    args = TensorMapArgs.contiguous(F32, (1024, 1024), (32, 128))  # 16384 bytes
    assert check_tma_copy(args, buffer_bytes=16384, tx_bytes=16384) == []
    (v,) = check_tma_copy(args, buffer_bytes=16383, tx_bytes=16384)
    assert v.rule == BUFFER_OVERFLOW and v.values["box_bytes"] == 16384


@pytest.mark.parametrize("tx", [16383, 16385, 8192, 32768])
def test_tx_bytes_must_equal_box_bytes(tx):
    args = TensorMapArgs.contiguous(F32, (1024, 1024), (32, 128))
    (v,) = check_tma_copy(args, buffer_bytes=16384, tx_bytes=tx)
    assert v.rule == TX_BYTES_MISMATCH
    assert ("never come" in v.message) == (tx > 16384)


def test_descriptor_rules_come_first():
    args = TensorMapArgs.contiguous(F32, (1024, 1024), (64, 128), swizzle=Swizzle.B128)
    rules = [v.rule for v in check_tma_copy(args, buffer_bytes=16384, tx_bytes=16384)]
    assert rules == ["swizzle-span", BUFFER_OVERFLOW, TX_BYTES_MISMATCH]
    with pytest.raises(LimitViolation) as caught:
        enforce_tma_copy(args, buffer_bytes=16384, tx_bytes=16384)
    assert caught.value.rule == "swizzle-span"
    assert enforce_tma_copy(args1d(256), buffer_bytes=1024, tx_bytes=1024) == 1024


def test_limit_violation_round_trips():
    error = LimitViolation("box-dim-range", "too big", "the docs")
    again = pickle.loads(pickle.dumps(error))
    assert (again.rule, again.message, again.source) == ("box-dim-range", "too big", "the docs")
    assert str(again).splitlines() == ["box-dim-range: too big", "source: the docs"]
    with pytest.raises(ValueError):
        LimitViolation.from_findings([])


# ------------------------------------------------------------------ nvcc, through the engine


def run_one(repro_id: str, cfg: dict, target: str, tmp_path: Path, gpu_arch: int | None = None):
    """The case run by the engine; with ``gpu_arch`` launched on the tests' GPUs, a failed
    launch not rerun under compute-sanitizer or other ptxas builds (not what these tests
    check: tests/test_sanitizer.py and tests/test_ptxas_differential.py do)."""
    (spec,) = expand_cases([found(repro_id)], [target], configs=[cfg], gpu_arch=gpu_arch)
    gpus = the_gpus() if gpu_arch else ()
    execution = Execution(gpus=gpus, sanitize=False, ptxas_differential=False)
    return run_case(spec, tmp_path / "case", execution)


@needs_nvcc
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("repro_id", sorted(FILES))
def test_corrected_compiles_with_nvcc(repro_id, target, tmp_path):
    result = run_one(repro_id, config(repro_id, "corrected"), target, tmp_path)
    assert result.outcome.label == "passed", (result.message, result.artifacts)
    assert result.metrics["arch"] == f"{target}a"
    assert result.metrics["static_findings"] == "none"
    assert result.metrics["shared_bytes"] > 0
    assert result.metrics["registers"] > 0


@needs_nvcc
@pytest.mark.parametrize("repro_id", sorted(FILES))
def test_seed_with_the_check_off_still_compiles(repro_id, tmp_path):
    cfg = config(repro_id, "seed", static_check=False)
    result = run_one(repro_id, cfg, "sm_90", tmp_path)
    assert result.outcome.label == "passed", (result.message, result.artifacts)
    expected = "box-dim-range" if repro_id == "cuda-tma-1d" else "buffer-overflow,tx-bytes-mismatch"
    assert result.metrics["static_findings"] == expected


@pytest.mark.parametrize(
    ("repro_id", "rule"),
    [("cuda-tma-1d", "box-dim-range"), ("cuda-tma-2d-pipeline", "buffer-overflow")],
)
def test_child_reports_limit_violation(repro_id, rule, tmp_path):
    """What the classifier sees: an error event of type LimitViolation, the rule first."""
    result = run_one(repro_id, config(repro_id, "seed", static_check=True), "sm_90", tmp_path)
    assert result.outcome.is_failure
    events = [
        json.loads(line) for line in Path(result.artifacts["events.jsonl"]).read_text().splitlines()
    ]
    (error,) = [e for e in events if e["event"] == "error"]
    assert (error["phase"], error["type"]) == ("compile", "LimitViolation")
    assert error["qualname"] == "suite.static_check.LimitViolation"
    assert error["message"].startswith(f"{rule}: ")


def corrected_program() -> Path:
    """The 1D program built for the corrected config (box 256), host side included."""
    module = module_of("cuda-tma-1d")
    c = case("cuda-tma-1d", config("cuda-tma-1d", "corrected"))
    program = executable(module["SOURCE"], c, module["defines"](c))
    assert program.exists()
    return program


@needs_nvcc
def test_program_builds_and_reports_json_without_a_gpu():
    """With no GPU, the host program builds and ends in its JSON runtime-error outcome.

    On a machine with a GPU this test skips: ``test_gpu_program_copies_exactly`` runs the same
    program there and must copy exactly.
    """
    if gpu_arch() is not None:
        pytest.skip("a GPU is visible: test_gpu_program_copies_exactly covers this program")
    with pytest.raises(CudaRunError) as caught:
        run_cuda(corrected_program(), ["--n", "4096"])
    error = caught.value
    assert error.error.startswith("cudaError"), str(error)  # no device / no driver here
    assert error.result["program"] == "tma_bulk_1d"
    assert error.result["box_bytes"] == 1024
    assert error.result["encode"] == "not-run"
    assert (error.result["strides"], error.result["global_bytes"]) == ("padded", 16384)


@pytest.mark.gpu
@needs_nvcc
@pytest.mark.parametrize("n", [4096, 1 << 20, 1_000_004])
def test_gpu_program_copies_exactly(n):
    """On a GPU, by hand: lengths of 16-byte multiples with the default (padded) strides."""
    program = corrected_program()  # nvcc's build first: the GPU's lock is for the launch
    with gpu_alone():
        result = run_cuda(program, ["--n", str(n)])
    assert (result["encode"], result["mismatches"]) == ("CUDA_SUCCESS", 0), result
    assert result["global_stride0"] == (n * 4 + 15) // 16 * 16


@needs_nvcc
def test_nvcc_error_names_the_diagnostic():
    from suite.nvcc import NvccError

    source = ROOT / "repros" / "cuda" / "tma_pipeline_2d.cu"
    with pytest.raises(NvccError) as caught:
        compile_cuda(source, case("cuda-tma-2d-pipeline", {}), {"SWIZZLE": 7})
    first = str(caught.value).splitlines()[0]
    assert first.startswith("nvcc (sm_90a): ") and "SWIZZLE must be" in first


# ------------------------------------------------------------------ on a GPU


def gpu_arch() -> int | None:
    """The compute capability of the first visible GPU (90, 100, 120), or None."""
    try:
        import torch

        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability(0)
            return major * 10 + minor
    except ImportError:
        pass
    if shutil.which("nvidia-smi"):
        proc = subprocess.run(
            ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            check=False,
        )
        lines = proc.stdout.split()
        if proc.returncode == 0 and lines:
            major, _, minor = lines[0].partition(".")
            return int(major) * 10 + int(minor or 0)
    return None


def gpu_target() -> str:
    arch = gpu_arch()
    if arch is None:
        pytest.skip("no GPU visible")
    target = f"sm_{arch}"
    if target not in TARGETS:
        pytest.skip(f"the CUDA TMA reproducers do not target {target}")
    return target


def launch(repro_id: str, cfg: dict) -> None:
    """The program built and launched from the test: alone on the GPU (it may fault)."""
    repro = reproducer(repro_id)
    c = case(repro_id, cfg, gpu_target(), gpu=True)
    repro.compile_fn(c)
    with gpu_alone():
        repro.launch_fn(c)


@pytest.mark.gpu
@needs_nvcc
def test_gpu_1d_seed_box_1024_fails_to_encode():
    with pytest.raises(CudaRunError) as caught:
        launch("cuda-tma-1d", config("cuda-tma-1d", "seed", static_check=False))
    assert caught.value.error == "CUDA_ERROR_INVALID_VALUE"
    assert str(caught.value).startswith("cuTensorMapEncodeTiled: CUDA_ERROR_INVALID_VALUE")


@pytest.mark.gpu
@needs_nvcc
@pytest.mark.parametrize("box", [257, 512])
def test_gpu_1d_boxes_over_256_fail_to_encode(box):
    with pytest.raises(CudaRunError) as caught:
        launch("cuda-tma-1d", config("cuda-tma-1d", "boundary", box=box))
    assert caught.value.error == "CUDA_ERROR_INVALID_VALUE"


@pytest.mark.gpu
@needs_nvcc
@pytest.mark.parametrize("set_name", ["corrected", "boundary"])
def test_gpu_1d_box_256_copies_exactly(set_name):
    launch("cuda-tma-1d", config("cuda-tma-1d", set_name, box=256))


@pytest.mark.gpu
@needs_nvcc
@pytest.mark.parametrize("index", range(5))
def test_gpu_1d_rank1_probe_config(index):
    """Each rank1-probe config: the null ones are refused by the static check, the rest copy.

    The H200 copied every non-null probe exactly (ragged byte sizes included) and refused
    every null one at the encode; the static check now stops the null ones first.
    """
    cfg = dict(reproducer("cuda-tma-1d").configs["rank1-probe"][index])
    if cfg["strides"] == "null":
        with pytest.raises(LimitViolation) as caught:
            launch("cuda-tma-1d", cfg)
        assert caught.value.rule == "rank1-null-strides"
        return
    launch("cuda-tma-1d", cfg)


#: The rank-1 matrix: lengths (bytes % 16 == 0 or not) x what is passed as globalStrides.
RANK1_LENGTHS = (4096, 1 << 20, 1_000_004, 1_000_003, 1_000_002, 1_000_001)
RANK1_STRIDES = ("padded", "bytes", "null")


@pytest.mark.gpu
@needs_nvcc
def test_gpu_1d_rank1_encode_matrix():
    """What the driver does with each rank-1 length and stride form (the box is 256 fp32).

    Only the cells the reproducer relies on are asserted (16-byte multiples with the padded
    stride array copy exactly); every cell is printed and, with ``TMA_PROBE_OUT`` set, written
    there as JSON, for docs/tma-descriptor-model.md.
    """
    gpu_target()
    program = corrected_program()
    cells = []
    # One turn alone on the GPU for the whole matrix, the GPU checked once after it: each
    # cell is its own process, and the driver refuses its encode or it copies (asserted).
    with gpu_alone():
        for strides, n in itertools.product(RANK1_STRIDES, RANK1_LENGTHS):
            try:
                result = run_cuda(program, ["--n", str(n), "--strides", strides])
            except (CudaRunError, WrongResult) as error:
                got = getattr(error, "result", {}) or {}
                outcome = getattr(error, "error", type(error).__name__)
            else:
                got, outcome = result, "copied"
            cells.append(
                {
                    "n": n,
                    "bytes": n * 4,
                    "bytes_mod_16": n * 4 % 16,
                    "strides": strides,
                    "global_stride0": got.get("global_stride0"),
                    "encode": got.get("encode"),
                    "outcome": outcome,
                    "device": got.get("device"),
                }
            )
    for cell in cells:
        print(
            f"strides={cell['strides']:<6} n={cell['n']:>8} bytes%16={cell['bytes_mod_16']:>2}"
            f" -> {cell['encode']} ({cell['outcome']})"
        )
    if os.environ.get("TMA_PROBE_OUT"):
        Path(os.environ["TMA_PROBE_OUT"]).write_text(json.dumps(cells, indent=1) + "\n")
    relied_on = [c for c in cells if c["strides"] == "padded" and c["bytes_mod_16"] == 0]
    assert all(c["outcome"] == "copied" for c in relied_on), relied_on
    # The model's observed rule: null is refused at the encode, every array form copies.
    nulls = [c for c in cells if c["strides"] == "null"]
    assert all(c["outcome"] == "CUDA_ERROR_INVALID_VALUE" for c in nulls), nulls
    arrays = [c for c in cells if c["strides"] != "null"]
    assert all(c["outcome"] == "copied" for c in arrays), arrays


@pytest.mark.gpu
@needs_nvcc
def test_gpu_2d_seed_box_128x64_breaks_the_pipeline():
    with pytest.raises((CudaRunError, WrongResult)) as caught:
        launch("cuda-tma-2d-pipeline", config("cuda-tma-2d-pipeline", "seed", static_check=False))
    print(f"2D seed with the check off: {type(caught.value).__name__}: {caught.value}")


@pytest.mark.gpu
@needs_nvcc
def test_gpu_2d_corrected_box_128x32_copies_exactly():
    launch("cuda-tma-2d-pipeline", config("cuda-tma-2d-pipeline", "corrected"))


@pytest.mark.gpu
@needs_nvcc
@pytest.mark.parametrize("index", range(4))
def test_gpu_2d_swizzled_copies_exactly(index):
    cfg = dict(reproducer("cuda-tma-2d-pipeline").configs["swizzle"][index])
    launch("cuda-tma-2d-pipeline", cfg)


@pytest.mark.gpu
@needs_nvcc
def test_gpu_seed_through_the_engine(tmp_path):
    """The engine's launch path: the check-off seed is a runtime error, the fix passes."""
    target = gpu_target()
    arch = int(target[3:])
    bad = run_one(
        "cuda-tma-1d", config("cuda-tma-1d", "seed", static_check=False), target, tmp_path, arch
    )
    assert bad.gpu and bad.outcome.label == "runtime-error", bad.message
    assert "CUDA_ERROR_INVALID_VALUE" in bad.message
    good = run_one("cuda-tma-1d", config("cuda-tma-1d", "corrected"), target, tmp_path, arch)
    assert good.gpu and good.outcome.label == "passed", good.message
