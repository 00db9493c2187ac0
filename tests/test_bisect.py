"""Bisection over real releases: every config the finding has seen fail, per-release signatures.

``tests/data/dot_mma.py`` (given by path) on sm_90, as the releases behave (its docstring):
the fp8 tile 8x64x32 is refused by 3.3.0-3.4.0 and compiles from 3.5.0, while the fp8 tile
64x64x16 keeps failing with the same normalized signature through 3.9.0. A finding shrunk
to the 8x64x32 tile would bisect to a "first good" 3.5.0 on its minimal config alone: one
release too early for the trigger, which still fails there.
"""

from __future__ import annotations

import json

import pytest
from conftest import ROOT

from suite.engine.discover import select
from suite.engine.isolate import Bounds
from suite.engine.runner import Execution
from suite.engine.sources import capture_source
from suite.failures.findings import DirectoryFindingsStore, Finding
from suite.releases import bisect
from suite.toolchain.venvs import for_version

DOT_MMA = ROOT / "tests" / "data" / "dot_mma.py"
# Triton's frontend refusing small fp8 dots (a limit it names): bisection works on any
# failure's signature, a refusal's included.
FRONTEND = "user-error:triton-rejects: Input shapes should have M >= N, N >= N and K >= N"
SMALL_M = {"BLOCK_M": 8, "BLOCK_K": 32, "dtype": "fp8e4nv", "num_warps": 4}
SMALL_K = {"BLOCK_M": 64, "BLOCK_K": 16, "dtype": "fp8e4nv", "num_warps": 4}


def _finding(**fields: object) -> Finding:
    (found,) = select([str(DOT_MMA)])
    carried = capture_source(found.source)
    assert carried is not None
    record = {
        "repro": "dot-mma-select",
        "signature": FRONTEND,
        "kind": "limit",
        "outcome": "user-error",
        "message": "triton-rejects: Input shapes should have M >= 16, N >= 16 and K >= 32",
        "target": "sm_90",
        "targets": ["sm_90"],
        "minimal_config": SMALL_M,
        "failing_configs": [{"target": "sm_90", "config": SMALL_K}],
        "passing_neighbours": [],
        "boundary": [],
        "environment": {"triton": "3.4.0"},
        "seed": None,
        "first_seen": "2026-11-22T00:00:00+00:00",
        "last_seen": "2026-11-22T00:00:00+00:00",
        "source": carried.to_json(with_text=True),
        "signatures": {"3.4.0": FRONTEND},
        **fields,
    }
    return Finding.from_json(json.loads(json.dumps(record)))


@pytest.mark.venv
def test_a_release_where_only_the_shrunk_config_passes_is_still_bad(tmp_path):
    finding = _finding()
    tried: list[tuple[str, str]] = []
    outcome = bisect.run(
        finding,
        for_version,
        ["3.4.0", "3.5.0"],
        Execution(bounds=Bounds(timeout_s=300), warm=False),
        lambda release, state: tried.append((release, state)),
        max_configs=2,
    )
    assert tried == [("3.4.0", bisect.BAD), ("3.5.0", bisect.BAD)]
    assert outcome.good is None and outcome.first_good is None
    # 3.4.0 refuses the minimal config: bad at once, its other config is not compiled.
    first, rest = outcome.configs["3.4.0"]
    assert first.startswith("sm_90 BLOCK_M=8, BLOCK_K=32") and first.endswith(": bad")
    assert rest.startswith("sm_90 BLOCK_M=64, BLOCK_K=16") and rest.endswith(bisect.NOT_COMPILED)
    shown = outcome.configs["3.5.0"]
    assert shown[0].startswith("sm_90 BLOCK_M=8, BLOCK_K=32") and shown[0].endswith("passed")
    assert shown[1].startswith("sm_90 BLOCK_M=64, BLOCK_K=16") and shown[1].endswith(": bad")
    assert "no release in the range comes out good" in outcome.note
    # Nothing inconclusive is stored: the finding keeps no first good release.
    bisect.record(finding, outcome)
    assert finding.first_good is None
    assert finding.signatures == {"3.4.0": FRONTEND, "3.5.0": FRONTEND}


@pytest.mark.venv
def test_the_minimal_config_alone_would_have_named_3_5_0(tmp_path):
    """The answer the old bisect gave, for contrast: the same search over the minimal config."""
    outcome = bisect.run(
        _finding(failing_configs=[]),
        for_version,
        ["3.4.0", "3.5.0"],
        Execution(bounds=Bounds(timeout_s=300), warm=False),
        max_configs=1,
    )
    assert (outcome.bad, outcome.good) == ("3.4.0", "3.5.0")


def test_a_set_aside_release_is_never_the_last_bad():
    states = {
        "3.1.0": bisect.BAD,
        "3.2.0": bisect.OTHER,
        "3.3.0": bisect.UNSUPPORTED,
        "3.4.0": bisect.GOOD,
    }
    last_bad, first_good, order, aside = bisect.bisect(list(states), states.__getitem__)
    assert order[last_bad] == "3.1.0" and order[first_good] == "3.4.0"
    assert aside == {"3.2.0": bisect.OTHER, "3.3.0": bisect.UNSUPPORTED}


def test_where_the_bugs_own_failure_ends():
    """The release where the configs stop failing as the bug and fail otherwise, whether or
    not a later release passes; nothing when the bug goes straight to a pass."""
    B, X, G = bisect.BAD, bisect.OTHER, bisect.GOOD
    order = ["3.4.0", "3.5.0", "3.6.0", "3.7.0", "3.8.0"]
    for states, ends in (
        ([B, X, X, X, X], ("3.4.0", "3.5.0")),
        ([B, B, X, X, G], ("3.5.0", "3.6.0")),
        ([B, B, B, G, G], None),
        ([B, bisect.UNSUPPORTED, X, X, G], ("3.4.0", "3.6.0")),
    ):
        state = dict(zip(order, states, strict=True))
        assert bisect.where_it_ends(order, state.__getitem__) == ends


@pytest.mark.venv
def test_a_changed_message_is_one_finding_with_per_release_signatures(tmp_path):
    """#9728 (Hopper warp specialization) on 3.6.0 then 3.7.1: the same pass fails with
    another message, so one finding says 'message changed in 3.7.1'."""
    from suite.search.explore import Budget, explore

    store = DirectoryFindingsStore(tmp_path / "findings")
    (found,) = select(["upstream-9728-ws-pointer-dot-hopper"])
    for version in ("3.6.0", "3.7.1"):
        explore(
            found,
            ["sm_90"],
            store,
            Execution(python=for_version(version).python, bounds=Bounds(timeout_s=300)),
            tmp_path,
            Budget(max_examples=1),
            seed=0,
        )
    (finding,) = store.all()
    family = "compiler-error:ttgir:NVGPUWarpSpecialization"
    assert finding.signatures == {
        "3.6.0": f"{family}: Assertion `false' failed in processProducerCommitOp",
        "3.7.1": f"{family}: LLVM ERROR: unsupported load type for producer commit",
    }
    assert finding.message_note() == (
        "message changed in 3.7.1: LLVM ERROR: unsupported load type for producer commit"
    )
    assert finding.evaluations["first_failure"] == 1  # the curated config came first


CAPABILITY = 'Assertion `false && "computeCapability not supported"\' failed'


@pytest.mark.venv
def test_an_abort_that_a_later_release_reports_as_a_compiler_error_stays_bad():
    """#6087 (sm_120): 3.2.0 aborts on the assertion, 3.3.0 reports the same assertion as
    TritonGPUAccelerateMatmul's error, 3.3.1 compiles. 3.3.0 is bad, not set aside, so the
    bisection names 3.3.1 with nothing between the ends."""
    config = {"BLOCK": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2, "USE_DOT": True}
    finding = _finding(
        repro="upstream-6087-sm120-mma-version",
        signature=f"crash:SIGABRT:compile: {CAPABILITY}",
        outcome="crash",
        message=f"SIGABRT in compile: {CAPABILITY}",
        target="sm_120",
        targets=["sm_120"],
        minimal_config=config,
        failing_configs=[],
        source=None,
        signatures={"3.2.0": f"crash:SIGABRT:compile: {CAPABILITY}"},
    )
    outcome = bisect.run(
        finding,
        for_version,
        ["3.2.0", "3.3.0", "3.3.1"],
        Execution(bounds=Bounds(timeout_s=300), warm=False),
        max_configs=1,
    )
    assert outcome.tried == {"3.2.0": bisect.BAD, "3.3.1": bisect.GOOD, "3.3.0": bisect.BAD}
    assert (outcome.first_good, outcome.set_aside) == ("3.3.1", {})
    bisect.record(finding, outcome)
    assert finding.signatures["3.3.0"] == (
        f"compiler-error:ttgir:TritonGPUAccelerateMatmul: {CAPABILITY}"
    )
    assert finding.message_note() == (
        "reported as compiler-error:ttgir:TritonGPUAccelerateMatmul from 3.3.0 (same message)"
    )


TCGEN05 = (
    "crash:SIGABRT:compile:ptx: LLVM ERROR: Cannot select: intrinsic llvm.nvvm.tcgen05.wait.st"
)


@pytest.mark.venv
def test_a_toolchain_gap_after_the_bugs_stage_is_past_the_bug():
    """#8473 (sm_103): 3.5.0 crashes in LLVM instruction selection (the ptx stage); 3.5.1,
    which holds the fix (#8485), gets through ptx and stops at its ptxas, which does not know
    sm_103a. That release is past the bug: the first good one, not set aside."""
    config = {"BLOCK": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2, "USE_DOT": True}
    finding = _finding(
        repro="upstream-8473-sm103-tcgen05-wait",
        signature=TCGEN05,
        outcome="crash",
        message="SIGABRT in compile (ptx)",
        target="sm_103",
        targets=["sm_103"],
        minimal_config=config,
        failing_configs=[],
        source=None,
        signatures={"3.5.0": TCGEN05},
    )
    outcome = bisect.run(
        finding,
        for_version,
        ["3.5.0", "3.5.1", "3.6.0"],
        Execution(bounds=Bounds(timeout_s=300), warm=False),
        max_configs=1,
    )
    assert (outcome.bad, outcome.first_good, outcome.set_aside) == ("3.5.0", "3.5.1", {})
    (line,) = outcome.configs["3.5.1"]
    assert "past the bug's stage (toolchain-gap: this Triton's ptxas does not know sm_103a)" in line


ALLOCATE_WARP_GROUPS = (
    "compiler-error:llir:TritonGPUAllocateWarpGroups: Assertion `!empty()' failed"
)


@pytest.mark.venv
def test_a_bug_that_becomes_another_failure_ends_there_without_a_first_good_release():
    """#8005's port (sm_100, num_warps=2): 3.4.0 asserts in AllocateWarpGroups; from 3.5.0
    (#8005) the kernel is rejected with a diagnostic instead. No release passes, so none is
    named first good, but the bug's own failure ends in 3.5.0, and bisect says so."""
    config = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 2, "num_stages": 2}
    finding = _finding(
        repro="upstream-8005-ws-two-warps",
        signature=ALLOCATE_WARP_GROUPS,
        target="sm_100",
        targets=["sm_100"],
        minimal_config=config,
        failing_configs=[],
        source=None,
        signatures={"3.4.0": ALLOCATE_WARP_GROUPS},
    )
    outcome = bisect.run(
        finding,
        for_version,
        ["3.4.0", "3.5.0"],
        Execution(bounds=Bounds(timeout_s=300), warm=False),
        max_configs=1,
    )
    assert (outcome.bad, outcome.replaced_in, outcome.first_good) == ("3.4.0", "3.5.0", None)
    assert "the bug ends in 3.5.0" in outcome.note
    assert "NVWSLowerWarpGroup: warp-specialized kernels requires num_warps" in outcome.note
    bisect.record(finding, outcome)
    assert finding.first_good is None and finding.bisect["replaced_in"] == "3.5.0"


PIPELINE_VERIFY = (
    "compiler-error:ttgir:TritonGPUPipeline: Assertion `verify(moduleOp).succeeded()' failed"
)


@pytest.mark.slow
@pytest.mark.venv
def test_a_regression_whose_good_end_is_unsupported_is_stored_when_a_good_release_is_found(
    tmp_path,
):
    """#10284's port (sm_120), `repro bisect --good 3.3.1 --bad 3.7.0`: 3.3.1 has no
    warp_specialize (unsupported), 3.4.0-3.5.1 compile, 3.6.0 fails in another pass
    (NVWSInsertAref, no message: set aside), 3.7.0 fails as the finding. The answer (first
    bad 3.7.0, last good 3.5.1, 3.6.0 named between) is conclusive and stored; the command
    used to call it inconclusive because its --good end was not good."""
    from conftest import repro_cli

    config = {
        "BLOCK_M": 64,
        "BLOCK_N": 128,
        "BLOCK_K": 32,
        "num_warps": 4,
        "num_stages": 2,
        "WARP_SPECIALIZE": True,
    }
    finding = _finding(
        repro="upstream-10284-ws-partition-attr",
        signature=PIPELINE_VERIFY,
        target="sm_120",
        targets=["sm_120"],
        minimal_config=config,
        failing_configs=[],
        source=None,
        signatures={"3.7.0": PIPELINE_VERIFY},
    )
    path = tmp_path / "finding.json"
    path.write_text(json.dumps(finding.to_json()))
    versions = "3.3.1,3.4.0,3.5.0,3.5.1,3.6.0,3.7.0"
    done = repro_cli(
        "bisect", str(path), "--good", "3.3.1", "--bad", "3.7.0", "--versions", versions,
        "--isolation", "fresh", "--json",
    )  # fmt: skip
    assert done.code == 0, done.stderr
    answer = json.loads(done.stdout)
    assert (answer["first_bad"], answer["good"]) == ("3.7.0", "3.5.1")
    assert answer["set_aside"] == {"3.3.1": "unsupported", "3.6.0": bisect.OTHER}
    assert "3.6.0 lies between 3.7.0 and 3.5.1" in answer["note"]
    assert json.loads(path.read_text())["first_bad"] == "3.7.0"
