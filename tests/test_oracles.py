"""Each oracle's judgement on real launches: Triton's interpreter (``TRITON_INTERPRET=1``)
runs the kernels of ``tests/data/oracle_kernels.py`` on the CPU in the engine's isolated
child, and the parent classifies what the child reported and how it ended."""

from __future__ import annotations

from pathlib import Path

import pytest

from suite import Differential, Hang, Reference, Reproducer
from suite.engine import discover
from suite.engine.expand import CaseSpec
from suite.engine.isolate import Bounds
from suite.engine.outcome import Outcome
from suite.engine.runner import Execution, run_case

pytest.importorskip("torch")

KERNELS = Path(__file__).parent / "data" / "oracle_kernels.py"


@pytest.fixture(scope="module")
def found():
    return {f.repro.id: f for f in discover.from_source({"path": str(KERNELS)}, str(KERNELS))}


@pytest.fixture
def interpreted(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def launched(found, tmp_path, repro_id, config_set, timeout=120.0):
    item = found[repro_id]
    (config,) = item.repro.configs[config_set]
    spec = CaseSpec(item, dict(config), "sm_90", gpu=True)
    execution = Execution(warm=False, bounds=Bounds(timeout_s=timeout))
    return run_case(spec, tmp_path / f"{repro_id}-{config_set}", execution)


@pytest.mark.usefixtures("interpreted")
@pytest.mark.parametrize(
    ("repro_id", "signature"),
    [
        ("oracle-differential", "wrong-result:launch:differential:UNROLL: nan"),
        ("oracle-reference", "wrong-result:launch:reference: nan"),
        ("oracle-reference-softmax", "wrong-result:launch:reference: mismatch"),
        ("oracle-determinism", "wrong-result:launch:determinism: mismatch"),
    ],
)
def test_an_oracle_passes_the_right_config_and_names_the_wrong_one(
    found, tmp_path, repro_id, signature
):
    right = launched(found, tmp_path, repro_id, "right")
    assert right.outcome is Outcome.PASSED, (right.message, right.artifacts)
    wrong = launched(found, tmp_path, repro_id, "wrong")
    assert wrong.outcome is Outcome.WRONG_RESULT, (wrong.message, wrong.artifacts)
    assert wrong.signature is not None and wrong.signature.text == signature
    assert wrong.site.phase == "launch"


@pytest.mark.usefixtures("interpreted")
def test_a_differential_case_where_both_sides_are_right_passes(found, tmp_path):
    # UNROLL=2 with N=1: the one element is in the first block, whose mask is right.
    result = launched(found, tmp_path, "oracle-differential", "tiny")
    assert result.outcome is Outcome.PASSED, result.message


@pytest.mark.usefixtures("interpreted")
def test_the_message_counts_but_the_signature_does_not(found, tmp_path):
    wrong = launched(found, tmp_path, "oracle-reference-softmax", "wrong")
    assert "root-mean-square error" in wrong.message
    assert "float32 has" in wrong.message
    assert any(ch.isdigit() for ch in wrong.message)
    assert not any(ch.isdigit() for ch in wrong.signature.text)


@pytest.mark.usefixtures("interpreted")
def test_a_launch_past_its_hang_bound_is_killed_and_named(found, tmp_path):
    right = launched(found, tmp_path, "oracle-hang", "right")
    assert right.outcome is Outcome.PASSED, right.message
    hung = launched(found, tmp_path, "oracle-hang", "wrong", timeout=300.0)
    assert hung.outcome is Outcome.TIMEOUT
    assert hung.signature.text == "timeout:launch:hang: kernel"
    # Killed at the launch's bound (5 s), not by the case's timeout, which names no launch.
    assert hung.facts.launch == "kernel" and hung.facts.bound_s == 5


@pytest.mark.usefixtures("interpreted")
def test_a_fault_names_the_launch_it_was_in(found, tmp_path):
    right = launched(found, tmp_path, "oracle-fault", "right")
    assert right.outcome is Outcome.PASSED, right.message
    fault = launched(found, tmp_path, "oracle-fault", "wrong")
    assert fault.outcome is Outcome.RUNTIME_ERROR, fault.message
    assert fault.signature.text.startswith("runtime-error:launch:")
    assert "block offset start must be 16-byte aligned" in fault.message
    assert fault.facts.launch == "kernel"


def test_oracles_are_small_typed_declarations():
    assert Differential({"num_stages": 1}).name == "differential:num_stages"
    assert Differential({"warp_specialize": False}, label="ws").name == "differential:ws"
    assert not Differential({"num_stages": 1}).applies_to({"num_stages": 1})
    assert Reference(lambda x: x).name == "reference"
    with pytest.raises(ValueError):
        Hang(bound_s=0)
    with pytest.raises(ValueError):
        Differential({})
    judged = Reproducer(
        id="no-inputs",
        title="",
        family="",
        params=(),
        configs={},
        targets=("sm_90",),
        oracles=(Differential({"num_stages": 1}), Hang(bound_s=3)),
    )
    assert judged.oracle_problems() == [
        "no-inputs: oracles Differential need @REPRO.inputs and @REPRO.launch"
    ]
    judged.oracles = (Hang(bound_s=3),)
    assert judged.oracle_problems() == []


@pytest.mark.usefixtures("interpreted")
def test_explore_launches_and_shrinks_a_problem_size(found, tmp_path):
    from suite.failures.findings import DirectoryFindingsStore
    from suite.search.explore import Budget, explore

    store = DirectoryFindingsStore(tmp_path / "findings")
    exploration = explore(
        found["oracle-differential"],
        ["sm_90"],
        store,
        Execution(bounds=Bounds(timeout_s=120.0)),
        tmp_path,
        Budget(max_examples=4),
        seed=1,
        launch_arch=90,
    )
    assert all(e.result.gpu for e in exploration.evaluations)
    (finding,) = exploration.findings
    assert finding.signature == "wrong-result:launch:differential:UNROLL: nan"
    # Shrunk along the launch-side size too: N=1 passes (one element, in the first block).
    assert finding.minimal_config == {"BLOCK": 16, "UNROLL": 2, "N": 17}
    walked = {(s.param, s.value_to): s.passed for s in finding.boundary}
    assert walked[("N", 1)] is True and walked[("UNROLL", 1)] is True
