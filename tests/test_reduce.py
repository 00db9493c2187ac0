"""`repro reduce`: the passes on small real kernels, real compiles, resume, bad input.

Compiles are few: CPU is scarce. The reduction tests run the AssignLatencies bug under the
cached Triton 3.5.0 venv (and check the result under 3.6.0, where it is fixed).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from suite.engine.environment import Environment
from suite.engine.runner import Execution
from suite.engine.sources import capture_source
from suite.failures.findings import Finding
from suite.reduce.interesting import CandidateAnswer, ReductionGoal, SignatureTest
from suite.reduce.judge import Judge
from suite.reduce.passes import PASSES, TIDY, candidates, kernel_measure, well_formed
from suite.reduce.reducer import Progress
from suite.report.reduced import reduced_of
from suite.toolchain.venvs import for_version
from tests.conftest import SOURCE_SECRET

ROOT = Path(__file__).resolve().parents[1]
PREFETCH = ROOT / "repros" / "tma_gemm_prefetch.py"
SIGNATURE = "compiler-error:ttgir:TritonGPUAssignLatencies"
CONFIG = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_stages": 2, "num_warps": 4}

SMALL = '''"""A small kernel in the reducer's form."""

import triton
import triton.language as tl

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

REPRO = Reproducer(
    id="small",
    title="small",
    family="test",
    params=(Choice("num_warps", (4,)),),
    configs={"finding": [{"num_warps": 4}]},
    targets=("sm_90",),
)


@triton.jit
def twice(x, FACTOR: tl.constexpr):
    return x * FACTOR


@triton.jit
def kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    if BLOCK > 16:
        x = twice(x, 2)
    for i in range(0, 4):
        x = x + 1.0
    tl.store(y_ptr + offs, x, mask=mask)


@REPRO.compile
def compile_case(case):
    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}
    constexprs = {"BLOCK": 128}
    return compile_kernel(kernel, case, signature, constexprs)
'''


def _venv(version: str) -> str:
    """The release's venv: built, or waited for while the session's prebuild builds it."""
    return str(for_version(version).python)


def _finding(
    path: Path, source: Path, python: str, release: str, first_good: str | None = None
) -> Path:
    carried = capture_source({"path": str(source)})
    assert carried is not None
    record = Finding(
        repro="tma-gemm-prefetch",
        signature=SIGNATURE,
        kind="bug",
        outcome="compiler-error",
        message="",
        target="sm_100",
        targets=["sm_100"],
        minimal_config=dict(CONFIG),
        failing_configs=[],
        passing_neighbours=[],
        boundary=[],
        environment=Environment(triton=release, python_executable=python),
        seed=0,
        first_seen="",
        last_seen="",
        source=carried.to_json(with_text=True),
        first_good=first_good,
    )
    path.write_text(json.dumps(record.to_json(), indent=2))
    return path


def _reduce(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "suite.cli", "reduce", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )


def test_every_pass_proposes_only_well_formed_edits() -> None:
    proposed = {}
    for chosen in PASSES:
        texts = [text for _, text in candidates(SMALL, chosen)]
        assert all(well_formed(ast.parse(t)) for t in texts)
        proposed[chosen.name] = texts
    # Each kind of edit the issue lists shows up on this kernel.
    assert any(
        "twice" not in t.split("@REPRO")[0].split("def kernel")[1]
        for t in proposed["inline-helpers"]
    )
    assert any("if BLOCK" not in t for t in proposed["if-to-branch"])
    assert any("for i" not in t for t in proposed["loop-to-body"])
    assert any("range(0, 1)" in t for t in proposed["loop-single-trip"])
    assert any("other=" not in t for t in proposed["drop-masks"])
    assert any(
        "'BLOCK'" not in t and "BLOCK: tl.constexpr" not in t for t in proposed["inline-constexprs"]
    )
    assert any("{'BLOCK': 64}" in t for t in proposed["shrink-constants"])
    # Deleting the definition of a name still read is never proposed.
    assert not any(
        "mask = offs < n" not in t and "mask=mask" in t for t in proposed["delete-statements"]
    )


def test_passes_on_a_small_real_kernel_keep_it_compiling(tmp_path: Path) -> None:
    """A handful of real compiles: the form compiles, so do the kept edits of two passes."""
    expectation = ReductionGoal("small", "", "sm_90", {"num_warps": 4}, sys.executable)
    test = SignatureTest(expectation, tmp_path, None, Execution(warm=False))
    seen = []
    for name in ("inline-helpers", "drop-masks"):
        chosen = next(p for p in PASSES if p.name == name)
        _, text = next(iter(candidates(SMALL, chosen)))
        (tmp_path / f"{name}.py").write_text(text)
        seen.append(test(tmp_path / f"{name}.py", name).outcome)
    assert seen == ["passed", "passed"]


@pytest.mark.venv
def test_reduced_kernel_fails_the_same_way_and_the_fixed_release_compiles_it(
    tmp_path: Path,
) -> None:
    bad = _venv("3.5.0")
    good = _venv("3.6.0")
    # bisect's first good release: every kept kernel must also compile there.
    finding = _finding(tmp_path / "finding.json", PREFETCH, bad, "3.5.0", first_good="3.6.0")
    done = _reduce(str(finding), "-o", str(tmp_path), "-j", "2", "--time-budget", "600")
    assert done.returncode == 0, done.stderr
    reduced = Path(done.stdout.strip().splitlines()[-1])
    assert reduced.is_file()
    assert "tries/s" in done.stderr
    lines, _ = kernel_measure(reduced.read_text())
    assert lines < kernel_measure(PREFETCH.read_text())[0]
    record = json.loads(finding.read_text())
    assert record["reduced"]["path"] == str(reduced.resolve())
    expectation = ReductionGoal("tma-gemm-prefetch", SIGNATURE, "sm_100", CONFIG, bad)
    assert SignatureTest(expectation, tmp_path, None, Execution(python=bad, warm=False))(
        reduced, "bad"
    ).interesting
    fixed = ReductionGoal("tma-gemm-prefetch", SIGNATURE, "sm_100", CONFIG, good)
    verdict = SignatureTest(fixed, tmp_path, None, Execution(python=good, warm=False))(
        reduced, "good"
    )
    assert verdict.outcome == "passed"
    # The report shows the reduced kernel and attaches the original.
    argv = ["report", str(finding), "-o", str(tmp_path), "--id", "reduced-report", "--no-rerun"]
    shown = subprocess.run(
        [sys.executable, "-m", "suite.cli", *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert shown.returncode == 0, shown.stderr
    folder = tmp_path / "reduced-report"
    assert (folder / "original_repro.py").read_text() == PREFETCH.read_text()
    # 3.6.0 is the finding's first good release: the body is a comment, "fixed upstream".
    issue = (folder / "comment.md").read_text()
    assert "reduced automatically (`repro reduce`)" in issue
    assert "def kernel(" in issue and "def gemm_prefetch(" not in issue
    assert "def gemm_prefetch(" not in (folder / "repro.py").read_text()


@pytest.mark.slow
@pytest.mark.venv
def test_an_interrupted_reduce_resumes_from_its_best_so_far(tmp_path: Path) -> None:
    bad = _venv("3.5.0")
    finding = _finding(tmp_path / "finding.json", PREFETCH, bad, "3.5.0")
    # A budget this short stops after the first improvements: the best so far is kept. The
    # output folder is given relative to the working folder, as a user types it.
    first = _reduce("finding.json", "-o", ".", "-j", "2", "--time-budget", "3", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    best = Path(first.stdout.strip().splitlines()[-1])
    state = json.loads((best.parent / "state.json").read_text())
    assert not state["done"]
    kept = best.read_text()
    second = _reduce(str(finding), "-o", str(tmp_path), "-j", "2", "--time-budget", "600")
    assert second.returncode == 0, second.stderr
    assert f"resuming from {best}" in second.stderr
    assert json.loads((best.parent / "state.json").read_text())["tries"] >= state["tries"]
    assert kernel_measure(best.read_text())[1] <= kernel_measure(kept)[1]


@pytest.mark.venv
def test_a_finding_that_does_not_reproduce_exits_2(tmp_path: Path) -> None:
    good = _venv("3.6.0")  # the bug is fixed there: the finding's case compiles
    finding = _finding(tmp_path / "finding.json", PREFETCH, good, "3.6.0")
    done = _reduce(str(finding), "-o", str(tmp_path), "-j", "1")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "does not reproduce" in done.stderr
    assert not (tmp_path / "reduce" / "finding" / "reduced.py").exists()


def test_a_file_that_is_not_a_finding_exits_2(tmp_path: Path) -> None:
    bogus = tmp_path / "x.json"
    bogus.write_text("[1, 2]")
    done = _reduce(str(bogus), "-o", str(tmp_path))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1


def test_propagate_copies_takes_the_copies_inlining_leaves() -> None:
    kernel = SMALL.replace(
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n",
        "    start = tl.program_id(0) * BLOCK\n    offs = start + tl.arange(0, BLOCK)\n"
        "    y = y_ptr\n",
    ).replace("tl.store(y_ptr + offs", "tl.store(y + offs")
    chosen = next(p for p in PASSES if p.name == "propagate-copies")
    texts = [text for _, text in candidates(kernel, chosen)]
    assert all(well_formed(ast.parse(t)) for t in texts)
    # Every copy at once first: `start` (read once) and `y` (a copy of a name).
    assert "start =" not in texts[0] and "y = y_ptr" not in texts[0]
    assert "offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)" in texts[0]
    assert "tl.store(y_ptr + offs" in texts[0]
    # `offs` and `mask` are read twice and are not copies: they stay in every candidate.
    assert all("offs = " in t and "mask = offs < n" in t for t in texts)


def test_drop_unused_takes_every_helper_and_constant_left_unread_in_one_edit() -> None:
    # `twice` inlined away leaves it unread; `half` is read only by `twice`, `SCALE` only by
    # `half`; `LIMIT` is read by the kernel and stays.
    kernel = (
        SMALL.replace("        x = twice(x, 2)\n", "        x = x * 2\n")
        .replace(
            "@triton.jit\ndef twice",
            "@triton.jit\ndef half(x):\n    return x * SCALE\n\n\n@triton.jit\ndef twice",
        )
        .replace("    return x * FACTOR\n", "    return half(x) * FACTOR\n")
        .replace("\n\n@triton.jit\ndef half", "\nSCALE = 0.5\nLIMIT = 4\n\n\n@triton.jit\ndef half")
        .replace("range(0, 4)", "range(0, LIMIT)")
    )
    assert well_formed(ast.parse(kernel)) and "def half" in kernel
    texts = [text for _, text in candidates(kernel, TIDY)]
    assert len(texts) == 1 and well_formed(ast.parse(texts[0]))
    tidied = texts[0]
    assert "def twice" not in tidied and "def half" not in tidied and "SCALE" not in tidied
    assert "LIMIT = 4" in tidied and "def kernel" in tidied
    # Nothing left to drop: no candidate.
    assert list(candidates(tidied, TIDY)) == []


class _Scripted:
    """A stand-in test: a candidate is interesting when its text says so; compiles take
    scripted times, so that later candidates finish first."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.seen: list[str] = []

    def __call__(self, source: Path, name: str = "case") -> CandidateAnswer:
        text = source.read_text()
        self.seen.append(text)
        time.sleep(float(text.split()[1]))
        good = text.startswith("yes")
        return CandidateAnswer(good, "crash" if good else "passed", "sig" if good else None)


def test_the_judge_accepts_the_first_interesting_candidate_in_order(tmp_path: Path) -> None:
    progress = Progress("f", "sig", "", 0)
    stream = ["no 0.3", "no 0.0", "yes 0.2", "yes 0.0", "no 0.0"]
    for jobs in (1, 2, 3):
        judge = Judge(_Scripted(tmp_path), jobs, progress)  # type: ignore[arg-type]
        try:
            found = judge.first(iter(enumerate(stream)), lambda _: True, lambda: False)
            assert found == (2, "yes 0.2")  # not "yes 0.0", which finished first
            assert judge.first(iter(enumerate(stream)), lambda t: "0.0" in t, lambda: False) == (
                3,
                "yes 0.0",
            )
        finally:
            judge.close()
    # The cache answers texts seen before: nothing compiled twice.
    assert progress.cached > 0 and progress.tries <= 3 * len(stream)


def test_a_report_uses_the_reduction_only_while_its_files_are_there(tmp_path: Path) -> None:
    folder = tmp_path / "reduce" / "f-1"
    folder.mkdir(parents=True)
    reduced, original = folder / "reduced_case.py", folder / "original.py"
    entry = {
        "path": str(reduced),
        "original": str(original),
        "lines": 7,
        "tokens": 60,
        "original_lines": 70,
        "original_tokens": 800,
        "complete": True,
    }
    assert reduced_of({"reduced": entry}, "f-1") is None  # not written yet
    reduced.write_text(SMALL)
    original.write_text(SMALL)
    found = reduced_of({"reduced": entry}, "f-1")
    assert found is not None and found.source == {"path": str(reduced)}
    assert found.context()["original_name"] == "original_repro.py"
    assert reduced_of({"reduced": {**entry, "lines": "many"}}, "f-1") is None
    assert reduced_of({}, "f-1") is None and reduced_of(None, "f-1") is None
    # A crafted record never makes a report read a file from anywhere else (issue 29).
    assert reduced_of({"reduced": {**entry, "original": "/etc/passwd"}}, "f-1") is None
    assert reduced_of({"reduced": entry}, "another-finding") is None
    original.unlink()
    original.symlink_to("/etc/passwd")
    assert reduced_of({"reduced": entry}, "f-1") is None


@pytest.mark.venv
def test_a_credential_in_the_kernel_never_reaches_the_reduced_file(tmp_path: Path) -> None:
    """The reducer's form is scrubbed: candidates, reduced.py and state.json never hold a
    credential of the source (here in the reproducer's title, which every form keeps); only
    original.py, the source as it was, keeps it."""
    bad = _venv("3.5.0")
    leaky = tmp_path / "leaky.py"
    title = "next-tile prefetch in the K loop"
    leaky.write_text(PREFETCH.read_text().replace(title, f"{title}, token {SOURCE_SECRET}"))
    assert SOURCE_SECRET in leaky.read_text()
    finding = _finding(tmp_path / "finding.json", leaky, bad, "3.5.0")
    done = _reduce(str(finding), "-o", str(tmp_path), "-j", "2", "--time-budget", "3")
    assert done.returncode == 0, done.stderr
    assert SOURCE_SECRET not in done.stdout + done.stderr
    folder = Path(done.stdout.strip().splitlines()[-1]).parent
    assert SOURCE_SECRET in (folder / "original.py").read_text()
    written = [p for p in folder.rglob("*") if p.is_file() and p.name != "original.py"]
    assert written
    for path in written:
        assert SOURCE_SECRET not in path.read_text(errors="replace"), path
