"""The ported upstream Triton bugs (repros/upstream/) behave as docs/upstream-bugs.md says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from suite.replay.bindings import Binding, map_passes
from suite.replay.pipeline import parse_pipeline
from tests.conftest import repro_cli

UPSTREAM = (
    "upstream-4418-hopper-chained-dot",
    "upstream-6087-sm120-mma-version",
    "upstream-8473-sm103-tcgen05-wait",
    "upstream-8005-ws-two-warps",
    "upstream-9728-ws-pointer-dot-hopper",
    "upstream-10284-ws-partition-attr",
    "upstream-10229-descriptor-in-dot-loop",
    "upstream-10901-ws-reduction-convert-layout",
    # Written by a tester from the docs alone (docs/upstream-bugs.md).
    "upstream-7549-sm120-nvfp4-scale",
    "upstream-11733-sm120-batched-mxfp",
    "upstream-7811-num-ctas-pre-hopper",
    # The second set, issue 28 (docs/upstream-bugs.md).
    "upstream-11586-ws-int8-wgmma",
    "upstream-9678-sm120-mxfp4-n-packed",
    "upstream-4336-hopper-batched-dot-mma",
    "upstream-11808-batched-dot-num-ctas",
    "upstream-5620-batched-dot-loop-prefetch",
)
#: Cases of the trigger and nearest-pass sets: one per set and target (#10229 has two targets).
CASES = 2 * len(UPSTREAM) + 2


def rows(stdout: str) -> dict[str, list[str]]:
    """case id -> the plain table's columns (outcome, verdict, triage, signature, ...)."""
    found = {}
    for line in stdout.splitlines():
        if line.startswith("upstream-"):
            case, *columns = line.split("\t")
            found[case] = columns
    return found


def test_upstream_reproducers_are_builtins():
    listed = repro_cli("list", "--format", "plain")
    assert listed.code == 0, listed.stderr
    for repro_id in UPSTREAM:
        assert repro_id in listed.stdout


@pytest.mark.triton(">=3.9,<3.10")
def test_upstream_bugs_on_the_installed_release(readme_run, tmp_path):
    """Their trigger and nearest-pass cases: those of a port's default sets read from the
    README's `repro run` (which ran them all again before), the rest run here."""
    from suite.engine.discover import select

    readme = readme_run.done
    assert readme.code == 0, readme.stdout + readme.stderr
    table = {
        case: cells for case, cells in rows(readme.stdout).items() if case.split("[")[0] in UPSTREAM
    }
    left = [
        f.repro.id for f in select(list(UPSTREAM)) if "nearest-pass" not in f.repro.default_sets
    ]
    ran = repro_cli(
        "run", *left, "-c", "nearest-pass", "-j", "2", "-o", str(tmp_path), "--format", "plain"
    )
    assert ran.code == 0, ran.stdout + ran.stderr
    table.update(rows(ran.stdout))
    assert len(table) == CASES
    failing = {case for case, columns in table.items() if columns[0] != "passed"}
    assert failing == {
        "upstream-8005-ws-two-warps[sm_100-128x128x64-w2-s3]",
        "upstream-9728-ws-pointer-dot-hopper[sm_90-128x128x64-w4-s3-wsTrue]",
        "upstream-7811-num-ctas-pre-hopper[sm_80-b128-w4-ctas2]",
        "upstream-11586-ws-int8-wgmma[sm_90-64x32x32-w4-s3-wsTrue]",
    }
    assert all(table[case][1] == "known" for case in failing)
    # #7812's diagnostic: Triton's own refusal, a user error and never a compiler bug.
    num_ctas = table["upstream-7811-num-ctas-pre-hopper[sm_80-b128-w4-ctas2]"]
    assert num_ctas[0] == "user-error"
    assert "num_ctas > N requires NVIDIA SM90+" in " ".join(num_ctas)
    assert "unsupported load type for producer commit" in " ".join(
        table["upstream-9728-ws-pointer-dot-hopper[sm_90-128x128x64-w4-s3-wsTrue]"]
    )


@pytest.mark.venv
def test_old_release_cells(tmp_path):
    """3.2.0: #4418 and #6087 fail as known (baseline ranges); #4418's nearest pass passes."""
    from suite.toolchain.venvs import for_version

    python = str(for_version("3.2.0").python)
    ran = repro_cli(
        "run",
        "upstream-4418-hopper-chained-dot",
        "upstream-6087-sm120-mma-version",
        "-c",
        "trigger,nearest-pass",
        "-j",
        "2",
        "-o",
        str(tmp_path),
        "--python",
        python,
        "--format",
        "plain",
    )
    assert ran.code == 0, ran.stdout + ran.stderr
    table = rows(ran.stdout)
    trigger_4418 = table["upstream-4418-hopper-chained-dot[sm_90-64x64x64-w8-zerosTrue]"]
    assert trigger_4418[1] == "known"
    assert "Failed to emit transfer from register to shared" in " ".join(trigger_4418)
    assert table["upstream-4418-hopper-chained-dot[sm_90-64x64x64-w8-zerosFalse]"][0] == "passed"
    trigger_6087 = table["upstream-6087-sm120-mma-version[sm_120-64x32-w4-s2-dotTrue]"]
    assert trigger_6087[1] == "known"
    assert "computeCapability not supported" in " ".join(trigger_6087)


@pytest.mark.venv
def test_release_without_warp_specialization_reports_unsupported(tmp_path):
    from suite.toolchain.venvs import for_version

    ran = repro_cli(
        "run",
        "upstream-9728-ws-pointer-dot-hopper",
        "-o",
        str(tmp_path),
        "--python",
        str(for_version("3.2.0").python),
        "--format",
        "plain",
    )
    assert ran.code == 0, ran.stdout + ran.stderr
    (columns,) = rows(ran.stdout).values()
    assert columns[0] == "skipped"
    assert "triton.language.range(warp_specialize)" in " ".join(columns)


@pytest.mark.venv
@pytest.mark.parametrize(
    ("version", "expected"),
    [
        (
            "3.7.1",
            {
                "upstream-7549-sm120-nvfp4-scale[sm_120-64x64x128-w4-s3-scaleTrue]": (
                    "compiler-error",
                    "type.getElementType().isIntOrIndex()",
                ),
                "upstream-11733-sm120-batched-mxfp[sm_120-64x64x64-w4-s1-batchedTrue]": (
                    "compiler-error",
                    "ctaLayout.getNumOutDims() == rank",
                ),
                "upstream-7811-num-ctas-pre-hopper[sm_80-b128-w4-ctas2]": (
                    "user-error",
                    "num_ctas > N requires NVIDIA SM90+",
                ),
            },
        ),
        (
            "3.4.0",
            {
                "upstream-7549-sm120-nvfp4-scale[sm_120-64x64x128-w4-s3-scaleTrue]": (
                    "compiler-error",
                    "type.getElementType().isIntOrIndex()",
                ),
                "upstream-7811-num-ctas-pre-hopper[sm_80-b128-w4-ctas2]": (
                    "crash",
                    "Cannot select: intrinsic llvm.nvvm.read.ptx.sreg.clusterid.x",
                ),
            },
        ),
    ],
)
def test_tester_ports_on_old_releases(tmp_path, version, expected):
    """The three ports a tester wrote from the docs: on 3.7.1 #7549 and #11733 fail as known
    compiler bugs and #7811 is Triton's refusal (user-error); on 3.4.0 #7811 still aborts
    in LLVM and the batched dot compiles. Every nearest pass passes."""
    from suite.toolchain.venvs import for_version

    ran = repro_cli(
        "run",
        "upstream-7549-sm120-nvfp4-scale",
        "upstream-11733-sm120-batched-mxfp",
        "upstream-7811-num-ctas-pre-hopper",
        "-c",
        "trigger,nearest-pass",
        "-j",
        "2",
        "-o",
        str(tmp_path),
        "--python",
        str(for_version(version).python),
        "--format",
        "plain",
    )
    assert ran.code == 0, ran.stdout + ran.stderr
    table = rows(ran.stdout)
    assert len(table) == 6
    failing = {case for case, columns in table.items() if columns[0] != "passed"}
    assert failing == set(expected)
    for case, (outcome, message) in expected.items():
        assert table[case][:2] == [outcome, "known"]
        assert message in " ".join(table[case])


# ---------------------------------------------------------------------------------------------
# The skip vocabulary (unsupported / toolchain-gap), one for run, matrix and bisect.
# ---------------------------------------------------------------------------------------------

SKIPPING = """
from suite import Choice, Reproducer

REPRO = Reproducer(
    id="skips",
    title="never compiles",
    family="test",
    params=(Choice("n", (1,)),),
    configs={"default": [{"n": 1}]},
    targets=("sm_90",),
    requires=(REQUIRES,),
)


@REPRO.compile
def compile_case(case):
    raise AssertionError("a requirement is unmet: never called")
"""


@pytest.mark.parametrize(
    ("requirement", "reason", "triage"),
    [
        (
            "ptxas:sm_999a",
            "toolchain-gap: this Triton's ptxas does not know sm_999a",
            "toolchain-gap",
        ),
        ("triton>=99", "unsupported: requires triton>=99", "-"),
    ],
)
def test_an_unmet_requirement_is_unsupported_or_a_toolchain_gap(
    tmp_path, requirement, reason, triage
):
    source = tmp_path / "skips.py"
    source.write_text(SKIPPING.replace("REQUIRES", repr(requirement)))
    ran = repro_cli("run", str(source), "-o", str(tmp_path / "out"), "--format", "plain")
    assert ran.code == 0, ran.stdout + ran.stderr
    row = next(line.split("\t") for line in ran.stdout.splitlines() if line.startswith("skips["))
    assert row[1:5] == ["skipped", "ok", triage, reason]


@pytest.mark.venv
def test_matrix_cells_say_unsupported_and_toolchain_gap(tmp_path):
    """#8473 on sm_103: 3.4.0 has no sm_103 (a release requirement: unsupported), 3.5.1's
    bundled ptxas does not know sm_103a (toolchain-gap, found at run time)."""
    from suite.toolchain.venvs import for_version

    for version in ("3.4.0", "3.5.1"):
        for_version(version)
    done = repro_cli(
        "matrix",
        "upstream-8473-sm103-tcgen05-wait",
        "--triton",
        "3.4.0,3.5.1",
        "-o",
        str(tmp_path),
    )
    assert done.code == 0, done.stdout + done.stderr
    (folder,) = (tmp_path / "matrix").iterdir()
    (row,) = json.loads((folder / "matrix.json").read_text())["rows"]
    assert row["cells"] == {"3.4.0": "unsupported", "3.5.1": "toolchain-gap"}


# ---------------------------------------------------------------------------------------------
# repro replay on the reproducer files of 3.0-3.2: builtin.module(any(...)).
# ---------------------------------------------------------------------------------------------

OLD_PIPELINE = (
    "builtin.module(any(convert-triton-to-tritongpu{num-ctas=1 num-warps=4 target=cuda:120 "
    "threads-per-warp=32},tritongpu-coalesce,triton-nvidia-gpu-plan-cta))"
)
#: What the binding probe finds on 3.0-3.2, whose pass manager cannot print its pipeline.
UNPROBED: list[dict[str, Any]] = [
    {
        "path": "passes.ttir.add_convert_to_ttgpuir",
        "pass": None,
        "params": [{"kind": "str"}, {"kind": "int"}, {"kind": "int"}, {"kind": "int"}],
        "options": {},
    },
    {"path": "passes.ttgpuir.add_coalesce", "pass": None, "params": [], "options": {}},
    {
        "path": "nvidia.passes.ttnvgpuir.add_plan_cta",
        "pass": None,
        "params": [{"kind": "object", "class": "nvidia.ClusterInfo"}],
        "options": {},
    },
]


def test_an_op_agnostic_pipeline_is_unwrapped_and_maps_pass_by_pass():
    anchor, passes = parse_pipeline(OLD_PIPELINE)
    assert anchor == "builtin.module"
    assert [p.name for p in passes] == [
        "convert-triton-to-tritongpu",
        "tritongpu-coalesce",
        "triton-nvidia-gpu-plan-cta",
    ]
    mapped, missing = map_passes(passes, [Binding.from_json(entry) for entry in UNPROBED])
    assert missing == []
    assert [m.call for m in mapped] == [
        "passes.ttir.add_convert_to_ttgpuir(pm, 'cuda:120', 4, 32, 1)",
        "passes.ttgpuir.add_coalesce(pm)",
        "nvidia.passes.ttnvgpuir.add_plan_cta(pm, nvidia.ClusterInfo())",
    ]


@pytest.mark.venv
def test_a_3_0_reproducer_replays_pass_by_pass(tmp_path):
    """#6087 aborts 3.0.0 in AccelerateMatmul; its reproducer file records 3.0's
    op-agnostic pipeline, and replay finds the pass, under 3.0.0 itself."""
    from suite.toolchain.venvs import for_version

    python = str(for_version("3.0.0").python)
    out = tmp_path / "out"
    ran = repro_cli("run", "upstream-6087-sm120-mma-version", "--python", python, "-o", str(out))
    assert ran.code == 0, ran.stdout + ran.stderr
    (run,) = (out / "runs").iterdir()
    case = "upstream-6087-sm120-mma-version[sm_120-64x32-w4-s2-dotTrue]"
    done = repro_cli("replay", f"{run}:{case}", "--triton", "3.0.0", "-o", str(out))
    assert done.code == 0, done.stdout + done.stderr
    assert "first failing pass: tritongpu-accelerate-matmul" in done.stdout
    (folder,) = [p for p in out.iterdir() if (p / "replay.json").is_file()]
    assert "builtin.module(any(" in (folder / "captured.mlir").read_text()
    record = json.loads((folder / "replay.json").read_text())
    assert record["triton"] == "3.0.0"
    assert record["first_failing"]["pass"] == "tritongpu-accelerate-matmul"
    assert [s["status"] for s in record["scan"]] == ["ok"] * 6 + ["failed"]
    assert Path(folder / "replay.py").is_file()


RUNTIME_RESULTS = Path(__file__).resolve().parents[1] / "docs/results/2026-11-26-runtime-candidates"


def test_the_baseline_knows_every_failure_the_gpu_showed():
    """Each launch recorded on the H200 (2026-11-26) judged by the shipped baseline: every
    failure known, every pass ok, so `repro run --gpu on` of those cases exits 0 there."""
    from suite.engine.baseline import Baseline, exit_status
    from suite.engine.outcome import CaseResult
    from suite.errors import EXIT_OK

    release = (RUNTIME_RESULTS / "environment.txt").read_text().split("triton ", 1)[1].split()[0]
    baseline = Baseline.load()
    judged = [
        baseline.judge(CaseResult.from_json(json.loads(line)), release)
        for name in ("results-main.jsonl", "results-fault.jsonl")
        for line in (RUNTIME_RESULTS / name).read_text().splitlines()
    ]
    failing = [r for r in judged if r.outcome.is_failure]
    assert len(failing) == 14  # 10 new wrong results, 2 of #6691, 2 faults of #11601
    assert {r.verdict for r in failing} == {"known"}
    assert {r.verdict for r in judged if not r.outcome.is_failure} == {"ok"}
    assert exit_status(judged) == EXIT_OK
