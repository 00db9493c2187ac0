"""Triton refusing a kernel, told apart by where the refusal is raised (issue 28).

Everything here is a real compile (``tests/data/refusals.py``; which release refuses what
is in its docstring). An exception raised by Triton's frontend while it turns the kernel
into TTIR, before any MLIR pass, is the release refusing the program: ``unsupported`` or
``user-error:triton-rejects`` (words pick; unknown words are ``unsupported``, the message
kept), never ``compiler-error``, never triaged ``compiler-bug``, never a regression (exit
1), in ``run``, ``matrix`` and ``capture``. The suite's own glue raising before Triton stays
a harness error.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, checkout_env, repro_cli

from suite.api import Case, Target
from suite.engine.exception_facts import Origin, describe_exception
from suite.engine.signature import classify_ending
from suite.tritonc import compile_kernel

REFUSALS = ROOT / "tests" / "data" / "refusals.py"


def _results(output: Path) -> dict[str, dict]:
    found = {}
    for path in output.glob("runs/*/results.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            found[record["case_id"]] = record
    return found


def _raised(fn, *args) -> BaseException:
    try:
        fn(*args)
    except Exception as exc:
        return exc
    raise AssertionError("it compiled")


# The NVIDIA backend refuses num_ctas > 1 before sm_90 ("num_ctas > 1 requires NVIDIA SM90+")
# from 3.5.0; earlier releases hand it to ptxas.
@pytest.mark.triton(">=3.5")
def test_the_raising_frame_decides_and_the_glue_stays_a_harness_error():
    """This machine's Triton: num_ctas=2 for sm_80 is refused while parsing the options (the
    frontend); a signature that is not a dict fails in the suite's glue before Triton."""
    import triton
    import triton.language as tl

    @triton.jit
    def copy(x_ptr, y_ptr):
        r = tl.arange(0, 128)
        tl.store(y_ptr + r, tl.load(x_ptr + r))

    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32"}
    refused = _raised(
        compile_kernel, copy, Case("r", {"num_ctas": 2}, Target("sm_80")), signature, {}
    )
    glue = _raised(compile_kernel, copy, Case("r", {}, Target("sm_90")), None, {})
    seen = {}
    for name, exc in (("refused", refused), ("glue", glue)):
        error = describe_exception(exc, "compile")
        verdict = classify_ending(
            error,
            stderr="",
            phase="compile",
            returncode=1,
            signal_name=None,
            timed_out=False,
            done=False,
        )
        assert verdict is not None
        seen[name] = (error.origin, verdict.outcome, verdict.refused)
    assert seen == {
        "refused": (Origin.FRONTEND.value, "user-error", True),
        "glue": (Origin.GLUE.value, "harness-error", False),
    }


# The NVIDIA backend refuses num_ctas > 1 before sm_90 ("num_ctas > 1 requires NVIDIA SM90+")
# from 3.5.0; earlier releases hand it to ptxas.
@pytest.mark.triton(">=3.5")
def test_a_refusal_on_this_triton_is_never_a_regression(tmp_path):
    out = tmp_path / "out"
    done = repro_cli("run", str(REFUSALS), "-o", str(out))
    assert done.code == 0, done.stdout + done.stderr
    num_ctas = _results(out)["triton-refusals[sm_80-num-ctas]"]
    assert num_ctas["outcome"] == "user-error"
    assert num_ctas["verdict"] == "refused"
    assert num_ctas["triage"] == "user-error:triton-rejects"
    assert num_ctas["detail"]["origin"] == "frontend"
    assert num_ctas["signature"].startswith("user-error:triton-rejects: ValueError: num_ctas > N")


@pytest.mark.slow
@pytest.mark.venv
def test_real_refusals_of_four_releases_in_a_matrix(tmp_path):
    """3.1.0 and 3.2.0 have no warp_specialize keyword, 3.2.0 no fp16 dot_scaled, 3.3.1
    refuses 8-row fp8 dots, 3.5.0 num_ctas > 1 before sm_90: every one a refusal."""
    done = repro_cli(
        "matrix",
        str(REFUSALS),
        "-c",
        "all",
        "-j",
        "1",
        "--triton",
        "3.1.0,3.2.0,3.3.1,3.5.0",
        "-o",
        str(tmp_path),
        "--json",
    )
    assert done.code == 0, done.stdout + done.stderr
    runs = json.loads(done.stdout)["runs"]
    seen: dict[str, dict[str, tuple[str, str]]] = {}
    for release, folder in runs.items():
        for line in (Path(folder) / "results.jsonl").read_text().splitlines():
            record = json.loads(line)
            assert record["outcome"] not in ("compiler-error", "crash"), record
            assert record["triage"] != "compiler-bug" and record["verdict"] != "regression"
            if record["detail"].get("triton_refused"):
                assert record["detail"]["origin"] == "frontend", record
                kind = record["config"]["kind"]
                seen.setdefault(release, {})[kind] = (record["outcome"], record["message"])
    assert seen["3.2.0"]["fp16-scaled"] == (
        "skipped",
        "unsupported: this Triton refuses it: Invalid float format: constexpr[fp16].",
    )
    assert seen["3.3.1"]["fp8-small-m"][0] == "user-error"
    assert "M >= 16" in seen["3.3.1"]["fp8-small-m"][1]
    assert seen["3.5.0"]["num-ctas"][0] == "user-error"
    for release in ("3.1.0", "3.2.0", "3.3.1"):
        outcome, message = seen[release]["ws-keyword"]
        assert outcome == "skipped" and "warp_specialize" in message, (release, message)


FP16_SCALED = (
    "accepts:tl.dot_scaled(tl.zeros((64, 64), tl.float16), None, 'fp16', "
    "tl.zeros((32, 64), tl.uint8), None, 'e2m1')"
)
NEEDS_FP16_SCALED = f'''
import triton
import triton.language as tl

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

REPRO = Reproducer(
    id="needs-fp16-scaled",
    title="A kernel that needs dot_scaled to take an fp16 operand",
    family="test",
    params=(Choice("num_warps", (4,)),),
    configs={{"default": [{{"num_warps": 4}}]}},
    targets=("sm_90",),
    requires=("triton.language.dot_scaled", "{FP16_SCALED}"),
)


@triton.jit
def copy(x_ptr, y_ptr):
    r = tl.arange(0, 128)
    tl.store(y_ptr + r, tl.load(x_ptr + r))


@REPRO.compile
def compile_case(case):
    return compile_kernel(copy, case, {{"x_ptr": "*fp32", "y_ptr": "*fp32"}}, {{}})
'''


# dot_scaled takes an fp16 operand from 3.3.0 (checked: 3.2.0 refuses it, 3.3.0 compiles it).
@pytest.mark.triton(">=3.3")
@pytest.mark.venv
def test_an_api_that_takes_these_arguments_is_probed_once_per_release(tmp_path):
    """``accepts:`` compiles the call once per release: 3.2.0's dot_scaled exists but refuses
    an fp16 operand (the case is unsupported, the requirement named); this Triton takes it."""
    from suite.files import cache_root
    from suite.toolchain.venvs import for_version

    path = tmp_path / "needs.py"
    path.write_text(NEEDS_FP16_SCALED)
    old = repro_cli(
        "run", str(path), "--python", str(for_version("3.2.0").python), "-o", str(tmp_path / "a")
    )
    new = repro_cli("run", str(path), "-o", str(tmp_path / "b"))
    assert old.code == 0 and new.code == 0, old.stderr + new.stderr
    (on_old,) = _results(tmp_path / "a").values()
    (on_new,) = _results(tmp_path / "b").values()
    assert on_old["outcome"] == "skipped"
    assert on_old["message"] == f"unsupported: requires {FP16_SCALED}"
    assert on_new["outcome"] == "passed"
    answers = [json.loads(p.read_text()) for p in (cache_root() / "probes").glob("accepts-*.json")]
    import triton

    mine = {a["key"][1]: a["accepted"] for a in answers if a["key"][3] == FP16_SCALED[8:]}
    assert mine == {"3.2.0": False, triton.__version__: True}


# The NVIDIA backend refuses num_ctas > 1 before sm_90 ("num_ctas > 1 requires NVIDIA SM90+")
# from 3.5.0; earlier releases hand it to ptxas.
@pytest.mark.triton(">=3.5")
def test_capture_writes_no_reproducer_for_a_refusal(tmp_path):
    program = ROOT / "tests" / "data" / "capture" / "refused.py"
    env = checkout_env()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "suite.capture",
            "--output",
            str(tmp_path),
            "--",
            sys.executable,
            str(program),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    (summary_path,) = tmp_path.glob("captures/*/capture.json")
    summary = json.loads(summary_path.read_text())
    (failure,) = summary["failures"]
    assert failure["file"] is None, done.stderr[-2000:]
    assert failure["not_generated"].startswith("Triton's frontend refused it, not a bug")
    assert "num_ctas > 1 requires NVIDIA SM90+" in failure["not_generated"]
