"""The baseline's verdicts: known, regression, fixed, and what an expectation covers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from suite.engine.baseline import Baseline, Expectation, exit_status, record_range, write_entry
from suite.engine.outcome import CaseResult, Outcome, Signature, Verdict
from suite.errors import UsageError
from tests.conftest import newest_installed, repro_cli

KNOWN = Expectation(
    id="k",
    repro="r",
    signature="compiler-error:ttgir:*",
    kind="compiler-bug",
    targets=("sm_100",),
    triton=">=3.4.0",
    where={"num_stages": ">=2", "num_warps": [4, 8]},
)


def _result(outcome=Outcome.PASSED, signature=None, gpu=False, **config):
    config = {"num_stages": 2, "num_warps": 4, **config}
    sig = Signature(signature) if signature else None
    return CaseResult("r[x]", "r", "sm_100", config, outcome, sig, gpu=gpu)


def test_a_verdict_is_written_as_its_word_and_read_back_as_its_member():
    baseline = Baseline([KNOWN])
    judged = baseline.judge(_result(Outcome.COMPILER_ERROR, "compiler-error:ttgir:P"), "3.5.0")
    line = json.dumps(judged.to_json())
    assert json.loads(line)["verdict"] == "known"
    back = CaseResult.from_json(json.loads(line))
    assert back.verdict is Verdict.KNOWN and f"{back.verdict}" == "known"
    unjudged = CaseResult.from_json({**json.loads(line), "verdict": ""})
    assert unjudged.verdict is Verdict.NONE
    with pytest.raises(TypeError, match="verdict"):
        CaseResult.from_json({**json.loads(line), "verdict": "maybe"})


def test_verdicts():
    baseline = Baseline([KNOWN])
    failing = baseline.judge(
        _result(Outcome.COMPILER_ERROR, "compiler-error:ttgir:SomePass"), "3.5.0"
    )
    assert failing.verdict == "known"
    other = baseline.judge(_result(Outcome.CRASH, "crash:SIGSEGV:compile"), "3.5.0")
    assert other.verdict == "regression"
    assert baseline.judge(_result(), "3.9.0").verdict == "fixed"
    assert baseline.judge(_result(num_warps=16), "3.9.0").verdict == "ok"
    assert baseline.judge(_result(), "3.3.1").verdict == "ok"
    assert exit_status([failing, other]) == 1
    assert exit_status([failing, baseline.judge(_result(), "3.9.0")]) == 3


def test_gpu_only_expectation_ignores_compile_only_cases():
    gpu_only = Expectation(id="g", repro="r", signature="runtime-error:*", kind="x", gpu=True)
    baseline = Baseline([gpu_only])
    assert baseline.judge(_result(gpu=False), "3.9.0").verdict == "ok"
    assert baseline.judge(_result(gpu=True), "3.9.0").verdict == "fixed"
    launched = _result(Outcome.RUNTIME_ERROR, "runtime-error:launch:CudaRunError: x", gpu=True)
    assert baseline.judge(launched, "3.9.0").verdict == "known"


FIXED_IN = Expectation(
    id="f",
    repro="r",
    signature="compiler-error:ttgir:TritonGPUAssignLatencies*",
    kind="compiler-bug",
    targets=("sm_100",),
    where={"num_stages": ">=2"},
    first_bad="3.4.0",
    fixed_in="3.6.0",
)
BUG = "compiler-error:ttgir:TritonGPUAssignLatencies: LLVM ERROR: failed"


def test_a_known_fix_makes_a_pass_ok_and_the_old_failure_a_regression():
    baseline = Baseline([FIXED_IN])
    assert baseline.judge(_result(Outcome.COMPILER_ERROR, BUG), "3.5.1").verdict == "known"
    assert baseline.judge(_result(), "3.5.1").verdict == "fixed"  # earlier than known: exit 3
    on_fix = baseline.judge(_result(), "3.6.0")
    newest = baseline.judge(_result(), "3.9.0+git1234")
    assert (on_fix.verdict, newest.verdict) == ("ok", "ok")
    assert exit_status([on_fix, newest]) == 0
    back = baseline.judge(_result(Outcome.COMPILER_ERROR, BUG), "3.7.1")
    assert (back.verdict, back.expectation) == ("regression", "f")  # the fixed bug came back
    assert exit_status([back]) == 1
    # Before first_bad the entry says nothing: the failure is new there.
    early = baseline.judge(_result(Outcome.COMPILER_ERROR, BUG), "3.3.1")
    assert (early.verdict, early.expectation) == ("regression", "")
    assert baseline.judge(_result(), "3.3.1").verdict == "ok"


def _write(path, text):
    path.write_text(textwrap.dedent(text))
    return path


ENTRY = """
    # a comment that must survive
    [[known]]
    id = "k"
    repro = "tma-gemm-prefetch"
    signature = "compiler-error:ttgir:X*"
    kind = "compiler-bug"
    targets = ["sm_100"]
    where = { num_stages = ">=2" }
    # the next entry's comment
    """


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ('triton = ">=3.x"', "bad triton range"),
        ('fixed_in = "soon"', "bad fixed_in 'soon'"),
        ('first_bad = "3.6.0"\nfixed_in = "3.4.0"', "fixed_in 3.4.0 is not after first_bad 3.6.0"),
        ('triton = ">=3.5"\nfirst_bad = "3.4.0"', "does not hold first_bad 3.4.0"),
    ],
)
def test_bad_ranges_are_one_line_usage_errors(tmp_path, extra, problem):
    path = _write(
        tmp_path / "b.toml", ENTRY.replace("    # the next", f"    {extra}\n    # the next")
    )
    with pytest.raises(UsageError, match=re.escape(problem)) as raised:
        Baseline.load(path)
    assert "\n" not in str(raised.value)


def test_duplicate_ids_are_refused(tmp_path):
    path = _write(tmp_path / "b.toml", ENTRY + ENTRY)
    with pytest.raises(UsageError, match="duplicate id 'k'"):
        Baseline.load(path)


def test_write_entry_keeps_comments_and_refuses_what_would_not_load(tmp_path):
    path = _write(tmp_path / "b.toml", ENTRY)
    assert write_entry(path, {"id": "k", "first_bad": "3.4.0", "fixed_in": "3.6.0"}) == "updated"
    text = path.read_text()
    assert "# a comment that must survive" in text
    # New keys go before the comment that introduces the next entry.
    assert text.index('fixed_in = "3.6.0"') < text.index("# the next entry's comment")
    assert Baseline.load(path).entry("k").fixed_in == "3.6.0"
    before = path.read_text()
    with pytest.raises(UsageError, match="not after first_bad"):
        write_entry(path, {"id": "k", "fixed_in": "3.3.0"})
    assert path.read_text() == before  # nothing half-written
    assert not list(tmp_path.glob(".b.toml*"))
    new = {"id": "n", "repro": "r", "signature": "s", "kind": "compiler-bug", "targets": ("sm_90",)}
    assert write_entry(path, {**new, "where": {"BLOCK": [64, 128]}}) == "added"
    assert Baseline.load(path).entry("n").where == {"BLOCK": [64, 128]}


def test_record_range_fills_the_entry_that_knows_the_failure(tmp_path):
    path = _write(tmp_path / "b.toml", ENTRY)
    failure = CaseResult(
        "c",
        "tma-gemm-prefetch",
        "sm_100",
        {"num_stages": 3},
        Outcome.COMPILER_ERROR,
        Signature("compiler-error:ttgir:X: some message"),
    )
    assert record_range(path, failure, fixed_in="3.6.0") == "k"
    assert Baseline.load(path).entry("k").fixed_in == "3.6.0"
    other = CaseResult("c", "tma-gemm", "sm_100", {}, Outcome.CRASH, Signature("crash:SIGSEGV"))
    assert record_range(path, other, fixed_in="3.6.0") is None


def test_the_readme_command_exits_0_on_the_newest_release(readme_run):
    """`repro run` over the built-ins on a fresh install with the newest Triton: exit 0, and no
    case 'fixed' (the verdict that is a strict XPASS under `pytest --repro`)."""
    release = newest_installed()
    done = readme_run.done
    assert done.code == 0, done.stdout[-3000:] + done.stderr
    environment = json.loads((readme_run.run / "environment.json").read_text())
    assert environment["triton"].split("+")[0] == release
    summary = json.loads((readme_run.run / "summary.json").read_text())
    assert "fixed" not in summary["verdicts"]
    assert "regression" not in summary["verdicts"]


def test_pytest_repro_shows_no_strict_xpass_on_the_newest_release(tmp_path):
    """The reproducer whose entry knows its fix (3.6.0), under `pytest --repro`, on the
    entry's targets (only the cases an entry covers can be a strict XPASS)."""
    newest_installed()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--repro",
            "--repro-select",
            "tma-gemm-prefetch",
            *("--repro-target", "sm_100", "--repro-target", "sm_103"),
            "-p",
            "no:randomly",
            "-n",
            "0",
            "-rxX",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    assert "XPASS" not in proc.stdout
    assert re.search(r"\d+ passed", proc.stdout)


FINDING = (
    Path(__file__).parent / "data" / "findings" / "tma-gemm-prefetch-assign-latencies-3.5.0.json"
)


def test_accept_writes_a_new_entry_from_a_finding(tmp_path):
    """A real finding of `repro explore` on 3.5.0, accepted into an empty baseline: the entry
    holds its signature (the pass's family and *), targets, where from the boundary, kind."""
    finding = json.loads(FINDING.read_text())
    finding["first_bad"], finding["first_good"] = "3.4.0", "3.6.0"  # as bisect writes them
    (tmp_path / "f.json").write_text(json.dumps(finding))
    path = tmp_path / "b.toml"
    done = repro_cli(
        "baseline",
        "accept",
        str(tmp_path / "f.json"),
        "--baseline",
        str(path),
        "--upstream",
        "https://github.com/triton-lang/triton/issues/1",
        "--json",
    )
    assert done.code == 0, done.stderr
    assert json.loads(done.stdout)["action"] == "added"
    (entry,) = Baseline.load(path).expectations
    assert entry.repro == "tma-gemm-prefetch" and entry.targets == ("sm_100",)
    assert entry.signature == "compiler-error:ttgir:TritonGPUAssignLatencies*"
    assert entry.kind == "compiler-bug"
    assert dict(entry.where) == {"num_stages": ">=2", "num_warps": "<=8"}
    assert (entry.first_bad, entry.fixed_in) == ("3.4.0", "3.6.0")
    assert entry.upstream.endswith("/issues/1")
    again = repro_cli("baseline", "accept", str(tmp_path / "f.json"), "--baseline", str(path))
    assert again.code == 0 and again.stdout.startswith("updated ")
    assert len(Baseline.load(path).expectations) == 1


def test_accept_updates_the_entry_that_knows_the_finding(tmp_path):
    path = tmp_path / "b.toml"
    shipped = (Path(__file__).parent.parent / "repros" / "baseline.toml").read_text()
    path.write_text(shipped.replace('fixed_in = "3.6.0"\n', ""))
    done = repro_cli("baseline", "accept", str(FINDING), "--baseline", str(path))
    assert done.code == 0, done.stderr
    assert done.stdout.startswith("updated assign-latencies-prefetch")
    # The finding was not bisected: nothing it does not know is written or removed.
    assert Baseline.load(path).entry("assign-latencies-prefetch").fixed_in == ""
    assert path.read_text().count("\n#") == shipped.count("\n#")  # every comment kept


def test_check_names_every_problem_and_exits_2(tmp_path):
    path = _write(
        tmp_path / "b.toml",
        """
        [[known]]
        id = "x"
        repro = "no-such-repro"
        signature = "s"
        kind = "compiler-bug"
        [[known]]
        id = "x"
        repro = "tma-gemm"
        signature = "s"
        kind = "compiler-bug"
        first_bad = "3.6.0"
        fixed_in = "3.5.0"
        """,
    )
    done = repro_cli("baseline", "check", "--baseline", str(path))
    assert done.code == 2
    assert "unknown reproducer 'no-such-repro'" in done.stdout
    assert "duplicate id 'x'" in done.stdout
    assert "fixed_in 3.5.0 is not after first_bad 3.6.0" in done.stdout
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    shipped = repro_cli("baseline", "check")
    assert shipped.code == 0, shipped.stdout + shipped.stderr


def test_show_gives_each_entry_its_status_on_the_installed_release():
    done = repro_cli("baseline", "show", "--json")
    assert done.code == 0, done.stderr
    shown = json.loads(done.stdout)
    by_id = {e["id"]: e for e in shown["entries"]}
    entry = by_id["assign-latencies-prefetch"]
    assert (entry["first_bad"], entry["fixed_in"]) == ("3.4.0", "3.6.0")
    from packaging.version import Version

    installed = Version(shown["triton"].split("+")[0])
    if installed >= Version("3.6.0"):
        assert entry["state"] == "fixed"
    elif installed >= Version("3.4.0"):
        assert entry["state"] == "known"
    else:  # 3.0.0-3.3.x: no make_tensor_descriptor, so no bug to expect yet
        assert entry["state"] == "before first_bad"
