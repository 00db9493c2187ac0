"""``repro report``: triage, upstream-ready reports, proof of reproduction.

Real inputs only: every result comes from the engine (``repro run`` or ``run_case``, each
case a child process), findings from ``suite.search.explore`` under the cached triton 3.5.0 venv,
and ``repro.py`` is run as a user would run it, in a clean environment.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from suite.cli import report as report_cli
from suite.cli.options import Parser
from suite.engine.discover import select
from suite.engine.expand import expand_cases
from suite.engine.isolate import Bounds
from suite.engine.outcome import CaseResult, Signature
from suite.engine.record import RunStore
from suite.engine.runner import Execution, run_case
from suite.engine.scrub import scrub_text
from suite.engine.triage import TriageKind, triage_of
from suite.errors import UsageError
from suite.failures.findings import DirectoryFindingsStore
from suite.report.script_output import signature_of_run
from suite.report.standalone import foreign_imports
from suite.report.verify import clean_env
from suite.search.explore import Budget, explore
from suite.templating import fence, trim_lines
from tests.conftest import ROOT, newest_installed, repro_cli, write_finding

ASSIGN_LATENCIES = "compiler-error:ttgir:TritonGPUAssignLatencies"
TRIGGER = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_stages": 2, "num_warps": 4}
FAKE_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

# A reproducer whose compile prints 100k lines (backtick runs and a token among them) and fails.
FLOOD = """
import os
import sys

from suite import Choice, Reproducer

REPRO = Reproducer(
    id="planted-flood",
    title="A compile that floods its output and fails",
    family="test",
    params=(Choice("lines", (100_000,)),),
    configs={"all": [{"lines": 100_000}]},
    targets=("sm_90",),
    label="{lines}",
)


@REPRO.compile
def compile_case(case):
    token = os.environ.get("FLOOD_TOKEN", "")
    out = sys.stderr
    for i in range(case["lines"]):
        if i % 1000 == 0:
            out.write("```` fence-breaker ```````` line %d\\n" % i)
        elif i == 500:
            out.write("leaked: %s\\n" % token)
        else:
            out.write("noise line %d\\n" % i)
    out.write("error: the planted compile failed (token %s)\\n" % token)
    out.flush()
    raise RuntimeError("planted compile failure ``` %s" % token)
"""

# PTX handed to the ptxas Triton bundles: setmaxnreg on .target sm_90 (no 'a'), or a typo.
PTX = """
import os
import subprocess
import tempfile

import triton

from suite import Choice, Compiled, Reproducer

BODIES = {
    "setmaxnreg": ("sm_90", "setmaxnreg.inc.sync.aligned.u32 240;"),
    "typo": ("sm_90a", "bogus.instruction;"),
}
PTX = (
    ".version 8.0\\n.target {arch}\\n.address_size 64\\n"
    ".visible .entry k()\\n{{\\n  {body}\\n  ret;\\n}}\\n"
)

REPRO = Reproducer(
    id="planted-ptx",
    title="Hand-written PTX given to the bundled ptxas",
    family="test",
    params=(Choice("body", tuple(BODIES)),),
    configs={"all": [{"body": b} for b in BODIES]},
    targets=("sm_90",),
    label="{body}",
)


@REPRO.compile
def compile_case(case):
    arch, body = BODIES[case["body"]]
    ptxas = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "k.ptx")
        with open(path, "w") as handle:
            handle.write(PTX.format(arch=arch, body=body))
        command = [ptxas, "--gpu-name", arch, path, "-o", path + ".o"]
        proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(
            "ptxas failed\\n" + proc.stderr + "\\nRepro command: " + " ".join(command)
        )
    return Compiled(shared_bytes=0)
"""


def report(*argv: str) -> int:
    """``repro report ...`` as ``suite.cli.main.main`` runs it (one line and 2 on bad input)."""
    parser = Parser(prog="repro")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    report_cli.add_parsers(commands)
    try:
        args: argparse.Namespace = parser.parse_args(["report", *argv])
        return report_cli.cmd_report(args)
    except UsageError as exc:
        print(f"repro: error: {exc}", file=sys.stderr)
        return 2


def run_one(repro: str, target: str, config: dict, tmp_path: Path, python: str | None = None):
    (spec,) = expand_cases(select([repro]), [target], configs=[config])
    execution = Execution(python=python or sys.executable, bounds=Bounds(timeout_s=600))
    return run_case(spec, tmp_path / "case", execution)


def run_script(python: str | Path, script: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(python), script.name],
        cwd=script.parent,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )


def fences_are_valid(markdown: str) -> bool:
    """Every fence closes, and no line inside a fence could close it early."""
    opening = None
    for line in markdown.splitlines():
        run = re.match(r"^(`{3,})", line)
        if opening is None:
            if run:
                opening = len(run.group(1))
        elif run and len(run.group(1)) >= opening:
            if line.strip("`").strip():
                return False  # a backtick run inside the block that is not a closing fence
            opening = None
    return opening is None


# ---------------------------------------------------------------------------------------------
# The 3.5.0 AssignLatencies finding, end to end.
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def assign_latencies(tmp_path_factory, triton_350):
    """``suite.search.explore`` on tma-gemm-prefetch, sm_100, triton 3.5.0: the findings root."""
    root = tmp_path_factory.mktemp("explore350")
    (found,) = select(["tma-gemm-prefetch"])
    exploration = explore(
        found,
        ["sm_100"],
        DirectoryFindingsStore(root / "findings"),
        Execution(python=str(triton_350), bounds=Bounds(timeout_s=300)),
        root,
        Budget(max_examples=4),
        seed=0,
    )
    assert [f.minimal_config for f in exploration.findings if f.signature == ASSIGN_LATENCIES] == [
        TRIGGER
    ]
    digest = Signature(ASSIGN_LATENCIES).digest
    return root, root / "findings" / f"tma-gemm-prefetch-{digest}.json"


# The report checks the fix on this machine's Triton: AssignLatencies is gone from 3.6.0.
@pytest.mark.venv
@pytest.mark.triton(">=3.6")
def test_a_bug_fixed_upstream_is_a_comment_never_ready_to_file(assign_latencies, capsys):
    """AssignLatencies reproduces on 3.5.0 (verified) but not on this machine's newer Triton:
    the report is a comment for the existing issue with the advice to drop the workaround."""
    root, finding_file = assign_latencies
    code = report(finding_file.stem, "-o", str(root), "--verify")
    out = capsys.readouterr().out
    assert code == 0, out
    folder = root / finding_file.stem
    line = f"Verified: reproduces on triton 3.5.0 (exit 1, signature {ASSIGN_LATENCIES})"
    assert line in out.splitlines()
    record = json.loads((folder / "report.json").read_text())
    # The shipped baseline knows the fix (fixed_in 3.6.0): not "<this Triton> or earlier".
    assert record["status"] == "fixed upstream in 3.6.0: do not file"
    assert record["kind"] == "comment" and not (folder / "issue.md").exists()
    comment = (folder / "comment.md").read_text()
    assert "no longer reproduces" in comment and "dropped" in comment
    assert record["verification"]["signature"] == ASSIGN_LATENCIES
    # What was run again to say so: the minimal config, the compile call's capture, repro.py
    # in a clean 3.5.0 venv and under this machine's Triton.
    ran = {step["step"]: step["ran"] for step in record["gathered"]}
    assert ran["rerun"].startswith("the minimal config, under ")
    assert ran["standalone"].startswith("the reproducer up to its compile call, in a child")
    assert ran["verify"] == "repro.py in a clean venv of triton 3.5.0"
    assert (
        ran["current"].startswith("repro.py under triton ") and "(this machine's)" in ran["current"]
    )
    assert ran["attach"] is None and ran["decide"] is None
    # repro.py carries the failing compile's specialization (tt.divisibility).
    names = "['a_ptr', 'b_ptr', 'c_ptr', 'M', 'N', 'K']"
    attrs = f"ATTRS = dict.fromkeys({names}, [['tt.divisibility', 16]])"
    assert attrs in (folder / "repro.py").read_text()
    assert json.loads((folder / "finding.json").read_text())["signature"] == ASSIGN_LATENCIES


# The report checks the fix on this machine's Triton: AssignLatencies is gone from 3.6.0.
@pytest.mark.venv
@pytest.mark.triton(">=3.6")
def test_repro_py_reproduces_on_350_and_not_on_the_newest(assign_latencies, triton_350):
    root, finding_file = assign_latencies
    assert report(finding_file.stem, "-o", str(root), "--id", "standalone") == 0
    script = root / "standalone" / "repro.py"
    assert foreign_imports(script.read_text()) == []
    assert "suite" not in re.findall(r"^(?:from|import) (\w+)", script.read_text(), re.M)
    old = run_script(triton_350, script)
    assert old.returncode == 1, old.stdout + old.stderr
    assert signature_of_run(old.stdout, old.stderr) == ASSIGN_LATENCIES
    snippet = run_script(triton_350, root / "standalone" / "snippet.py")  # the issue's inline code
    assert snippet.returncode != 0 and "PassManager::run failed" in snippet.stderr
    new = run_script(sys.executable, script)  # fixed since 3.6.0
    assert new.returncode == 0, new.stdout + new.stderr
    assert signature_of_run(new.stdout, new.stderr) is None
    status = json.loads((root / "standalone" / "report.json").read_text())["status"]
    assert status.startswith("fixed upstream in ")  # this machine's Triton compiles it


# The report checks the fix on this machine's Triton: AssignLatencies is gone from 3.6.0.
@pytest.mark.venv
@pytest.mark.triton(">=3.6")
def test_github_format_prints_title_then_body(assign_latencies, capsys):
    root, finding_file = assign_latencies
    assert report(finding_file.stem, "-o", str(root), "--format", "github", "--no-rerun") == 0
    title, _, body = capsys.readouterr().out.partition("\n")
    assert "fixed upstream" in title  # a comment on the existing issue, not a new one
    assert "no longer reproduces" in body
    assert len(body) < 65536


@pytest.mark.venv
def test_known_upstream_issue_renders_a_comment_not_an_issue(assign_latencies, tmp_path, capsys):
    root, finding_file = assign_latencies
    upstream = "https://github.com/triton-lang/triton/issues/99999"
    baseline = tmp_path / "baseline.toml"
    baseline.write_text(
        textwrap.dedent(
            f"""
            [[known]]
            id = "assign-latencies"
            repro = "tma-gemm-prefetch"
            targets = ["sm_100"]
            signature = "{ASSIGN_LATENCIES}"
            kind = "compiler-bug"
            upstream = "{upstream}"
            """
        )
    )
    argv = [finding_file.stem, "-o", str(root), "--id", "known", "--no-rerun"]
    assert report(*argv, "--baseline", str(baseline)) == 0
    out = capsys.readouterr().out
    assert f"matches {upstream}" in out
    folder = root / "known"
    assert (folder / "comment.md").is_file() and not (folder / "issue.md").exists()
    assert upstream in (folder / "comment.md").read_text()
    assert json.loads((folder / "report.json").read_text())["kind"] == "comment"


# A comment (comment.md.j2) because the bug is fixed on this machine's Triton (3.6.0 on).
@pytest.mark.venv
@pytest.mark.triton(">=3.6")
def test_templates_folder_overrides_one_template(assign_latencies, tmp_path):
    root, finding_file = assign_latencies
    mine = tmp_path / "templates"
    mine.mkdir()
    (mine / "comment.md.j2").write_text("# {{ title }}\n\nmy own body for {{ signature }}\n")
    argv = [finding_file.stem, "-o", str(root), "--id", "custom", "--no-rerun"]
    assert report(*argv, "--templates", str(mine)) == 0
    issue = (root / "custom" / "comment.md").read_text()
    assert issue.endswith(f"my own body for {ASSIGN_LATENCIES}\n")
    assert (root / "custom" / "repro.py").is_file()  # the other templates are the shipped ones


# ---------------------------------------------------------------------------------------------
# User errors: a documented rule, never an upstream issue.
# ---------------------------------------------------------------------------------------------


# tma-gemm loads through tl.make_tensor_descriptor (its `requires`), which 3.4.0 brought.
@pytest.mark.triton(">=3.4")
def test_shared_memory_over_the_limit_is_a_user_error_with_no_issue(tmp_path, capsys):
    config = {
        "BLOCK_M": 128,
        "BLOCK_N": 128,
        "BLOCK_K": 128,
        "num_warps": 8,
        "num_stages": 4,
        "dtype": "fp16",
    }
    done = repro_cli(
        "run", "tma-gemm", "-t", "sm_90", "--config-file", _configs(tmp_path, config), "-o",
        str(tmp_path),
    )  # fmt: skip
    assert done.code == 0, done.stdout + done.stderr  # a known user error of the baseline
    (run,) = (tmp_path / "runs").iterdir()
    (result,) = RunStore(run).results()
    found = triage_of(result)
    assert found is not None and found.label == "user-error:shared-memory"
    assert found.kind is TriageKind.USER_ERROR and found.rule == "shared-memory"
    assert "232448" in found.explanation and str(result.facts.used) in found.explanation
    assert "Programming Guide" in found.source
    assert report(f"{run}:{result.case_id}", "-o", str(tmp_path)) == 0
    out = capsys.readouterr().out
    assert "user-error:shared-memory" in out and "no issue rendered" in out
    folder = tmp_path / "tma-gemm_sm_90-128x128x128-w8-s4-fp16"
    assert (folder / "explanation.md").is_file()
    assert not any((folder / name).exists() for name in ("issue.md", "repro.py", "nvidia.md"))
    record = json.loads((folder / "report.json").read_text())
    assert record["status"] == "user-error"
    # A run's result is reported as recorded; an explanation runs nothing again.
    assert record["gathered"] == [
        {"step": "rerun", "ran": None, "said": "a run's result, as it was recorded"},
        {"step": "attach", "ran": None, "said": None},
    ]
    # Nothing to file: --format github says so and exits 1.
    assert report(f"{run}:{result.case_id}", "-o", str(tmp_path), "--format", "github") == 1


# tma-gemm loads through tl.make_tensor_descriptor (its `requires`), which 3.4.0 brought.
@pytest.mark.triton(">=3.4")
def test_insufficient_registers_is_a_user_error_that_names_the_fix(tmp_path):
    config = {
        "BLOCK_M": 256,
        "BLOCK_N": 256,
        "BLOCK_K": 128,
        "num_warps": 16,
        "num_stages": 5,
        "dtype": "fp16",
    }
    result = run_one("tma-gemm", "sm_90", config, tmp_path)
    assert result.signature.text == "ptxas-error:C7602"
    found = triage_of(result)
    assert found.label == "user-error:registers"
    assert "num_warps <= 8" in found.explanation and "255" in found.source


def test_tma_box_over_256_is_a_user_error_with_the_driver_api_source(tmp_path):
    config = {
        "box": 1024,
        "buffer_elems": 1024,
        "tx_bytes": 4096,
        "static_check": True,
        "lengths": "x16",
        "strides": "padded",
    }
    result = run_one("cuda-tma-1d", "sm_90", config, tmp_path)
    if result.outcome.label == "skipped":
        pytest.skip(result.message)
    found = triage_of(result)
    assert found.label == "user-error:box-dim-range"
    assert "boxDim[0]=1024" in found.explanation and "256" in found.explanation
    assert "cuTensorMapEncodeTiled" in found.source


def test_ptx_features_without_the_arch_suffix_are_a_user_error(tmp_path):
    planted = tmp_path / "planted_ptx.py"
    planted.write_text(textwrap.dedent(PTX))
    (spec,) = expand_cases(select([str(planted)]), ["sm_90"], configs=[{"body": "setmaxnreg"}])
    result = run_case(spec, tmp_path / "case", Execution(bounds=Bounds(timeout_s=120)))
    assert result.outcome.label == "ptxas-error"
    found = triage_of(result)
    assert found.label == "user-error:arch-suffix"
    assert "setmaxnreg" in found.explanation and "sm_90a" in found.explanation
    assert "PTX ISA" in found.source


def test_other_ptxas_errors_are_bugs_with_an_nvidia_report(tmp_path, capsys):
    planted = tmp_path / "planted_ptx.py"
    planted.write_text(textwrap.dedent(PTX))
    done = repro_cli("run", str(planted), "-o", str(tmp_path / "out"))
    (run,) = (tmp_path / "out" / "runs").iterdir()
    by_case = {r.config["body"]: r for r in RunStore(run).results()}
    typo = by_case["typo"]
    assert typo.outcome.label == "ptxas-error", done.stdout
    assert triage_of(typo).label == "compiler-bug"
    assert report(f"{run}:{typo.case_id}", "-o", str(tmp_path / "out"), "--verify") == 1
    out = capsys.readouterr().out
    # The real cause, not "no standalone repro.py could be made".
    assert (
        "Not verified: the reproducer's compile function raised RuntimeError: ptxas failed" in out
    )
    folder = tmp_path / "out" / "planted-ptx_sm_90-typo"
    nvidia = (folder / "nvidia.md").read_text()
    for section in ("## Summary", "## Environment", "## Steps to reproduce", "## Expected result"):
        assert section in nvidia
    assert "## ptxas invocation" in nvidia and "--gpu-name sm_90a" in nvidia
    record = json.loads((folder / "report.json").read_text())
    assert record["status"] == "not-verified"
    # Each gathering step says what it ran again: only the capture of the compile call ran,
    # and failed, so there was no repro.py to verify or to run under this Triton.
    gathered = {step["step"]: step for step in record["gathered"]}
    assert list(gathered) == [
        "rerun", "attach", "standalone", "verify", "current", "decide", "variants", "explain",
    ]  # fmt: skip
    assert gathered["standalone"]["ran"].startswith("the reproducer up to its compile call")
    assert gathered["standalone"]["said"].startswith("no repro.py: the reproducer's compile")
    assert gathered["verify"]["ran"] is None
    assert gathered["verify"]["said"].startswith("Not verified: the reproducer's compile")
    assert [gathered[s]["ran"] for s in ("current", "decide", "variants", "explain")] == [None] * 4
    assert gathered["decide"]["said"] == f"{record['kind']}: not-verified"


H200_RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"


def _h200(name: str) -> list[CaseResult]:
    lines = (H200_RESULTS / name).read_text().splitlines()
    return [CaseResult.from_json(json.loads(line)) for line in lines if line.strip()]


def test_h200_results_driver_bug_and_rules_broken_with_the_check_off(tmp_path, capsys):
    """Results the engine recorded on an H200 (docs/gpu-results.md), triaged and reported."""
    results = {r.case_id: r for r in _h200("2026-11-22-h200-cuda-tma-1d.jsonl")}
    # The box of 1024 with the static check off: the driver's refusal is the documented rule.
    off = results["cuda-tma-1d[sm_90-box1024-buf1024-tx4096-checkFalse-lenx16-gspadded]"]
    assert off.outcome.label == "runtime-error"
    assert triage_of(off).label == "user-error:box-dim-range"
    # A clean static check and still CUDA_ERROR_INVALID_VALUE (null strides, rank 1): driver.
    null = results["cuda-tma-1d[sm_90-box256-buf256-tx1024-checkTrue-lenragged-gsnull]"]
    assert triage_of(null).label == "driver-bug"
    store = RunStore(tmp_path / "h200")
    store.folder.mkdir()
    store.append(null)
    assert report(f"{store.folder}:{null.case_id}", "-o", str(tmp_path)) == 0
    folder = tmp_path / "cuda-tma-1d_sm_90-box256-buf256-tx1024-checkTrue-lenragged-gsnull"
    nvidia = (folder / "nvidia.md").read_text()
    assert not (folder / "issue.md").exists() and not (folder / "repro.py").exists()
    assert nvidia.startswith("# TMA copy fails at launch on sm_90")
    assert "CUDA_ERROR_INVALID_VALUE" in nvidia and "nvcc: 13.0.88" in nvidia
    assert "## Descriptor and error as recorded" in nvidia and fences_are_valid(nvidia)
    assert json.loads((folder / "report.json").read_text())["kind"] == "nvidia"
    # Shared memory over the limit at launch (OutOfResources): the numbers Triton gave.
    (launch,) = [
        r
        for r in _h200("2026-11-22-h200-builtins.jsonl")
        if r.case_id == "tma-gemm[sm_90-128x128x128-w8-s4-fp16]"
    ]
    explained = triage_of(launch)
    assert explained.label == "user-error:shared-memory"
    assert "262176 bytes needed" in explained.explanation and "232448" in explained.explanation


# ---------------------------------------------------------------------------------------------
# Safety: secrets, fences, long output.
# ---------------------------------------------------------------------------------------------


def test_no_token_valid_fences_and_trimmed_output(tmp_path, monkeypatch, capsys):
    planted = tmp_path / "flood.py"
    planted.write_text(textwrap.dedent(FLOOD))
    secrets = {
        "GITHUB_TOKEN": FAKE_TOKEN,
        "FLOOD_TOKEN": FAKE_TOKEN,
        "TRITON_DEBUG_NOTE": FAKE_TOKEN,  # a harmless name with a credential for a value
        "TRITON_SERVICE_PASSWORD": "hunter2-not-a-pattern",  # a secret name
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    done = repro_cli("run", str(planted), "-o", str(tmp_path / "out"), env=secrets)
    assert done.code == 1, done.stdout + done.stderr
    (run,) = (tmp_path / "out" / "runs").iterdir()
    kept = "".join(p.read_text() for p in run.rglob("*") if p.is_file())
    assert FAKE_TOKEN not in kept and "hunter2" not in kept  # scrubbed at write time
    assert report(f"{run}:planted-flood[sm_90-100000]", "-o", str(tmp_path / "out")) == 0
    folder = tmp_path / "out" / "planted-flood_sm_90-100000"
    everything = "".join(p.read_text() for p in folder.iterdir()) + capsys.readouterr().out
    assert FAKE_TOKEN not in everything and "hunter2" not in everything
    assert "GITHUB_TOKEN" not in everything and "TRITON_SERVICE_PASSWORD" not in everything
    issue = (folder / "issue.md").read_text()
    assert fences_are_valid(issue)
    assert "`````````" in issue  # a fence longer than the 8-backtick runs inside
    assert re.search(r"\.\.\. \[\d+ lines cut\] \.\.\.", issue)
    assert len(issue) < 65536
    assert str(Path.home()) + "/" not in everything


def test_safety_helpers():
    home = str(Path.home())
    assert scrub_text(f"token {FAKE_TOKEN} in {home}/x") == "token [redacted] in ~/x"
    assert scrub_text("AWS AKIAABCDEFGHIJKLMNOP and API_KEY=abc123") == (
        "AWS [redacted] and API_KEY=[redacted]"
    )
    assert scrub_text("commit " + "a" * 40) == "commit " + "a" * 40  # a git hash is not a secret
    block = fence("a\n`````\nb", "text")
    assert block.startswith("``````text\n") and block.endswith("\n``````")
    trimmed = trim_lines("\n".join(map(str, range(1000))), head=3, tail=2)
    assert trimmed.splitlines() == ["0", "1", "2", "... [995 lines cut] ...", "998", "999"]


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert report("no-such-finding", "-o", str(tmp_path)) == 2
    err = capsys.readouterr().err
    assert err.startswith("repro: error: no finding or run result") and err.count("\n") == 1
    assert report("x", "--case", "y", "-o", str(tmp_path)) == 2
    assert report("x", "--templates", str(tmp_path / "missing")) == 2
    assert report("x", "--format", "pdf") == 2


def test_a_passing_case_has_nothing_to_report(tmp_path, capsys):
    config = dict(TRIGGER, num_stages=1)
    result = run_one("tma-gemm-prefetch", "sm_90", config, tmp_path)
    assert triage_of(result) is None
    store = RunStore(tmp_path / "run")
    store.folder.mkdir()
    store.append(result)
    assert report(f"{store.folder}:{result.case_id}", "-o", str(tmp_path)) == 2
    assert "did not fail" in capsys.readouterr().err


def test_toolchain_gap_skip_is_labelled_not_a_failure():
    skipped = CaseResult.from_json(
        {
            "case_id": "x[sm_121-a]",
            "repro": "x",
            "target": "sm_121",
            "config": {},
            "outcome": "skipped",
            "message": "toolchain-gap: this Triton's ptxas does not know sm_121a",
            "detail": {"toolchain_gap": "sm_121a"},
        }
    )
    found = triage_of(skipped)
    assert found is not None and found.label == "toolchain-gap" and not found.is_bug


def _configs(tmp_path: Path, *configs: dict) -> str:
    path = tmp_path / "configs.json"
    path.write_text(json.dumps(list(configs)))
    return str(path)


def test_environment_capture_drops_secret_variables(monkeypatch):
    from suite.engine.scrub import capture_variables

    monkeypatch.setenv("TRITON_CACHE_DIR", os.path.join(str(Path.home()), "cache"))
    monkeypatch.setenv("TRITON_HF_TOKEN", "hf_" + "x" * 34)
    monkeypatch.setenv("TRITON_NOTE", FAKE_TOKEN)
    captured = capture_variables()
    assert captured["TRITON_CACHE_DIR"] == "~/cache"
    assert "TRITON_HF_TOKEN" not in captured and "TRITON_NOTE" not in captured


def test_docs_list_every_triage_rule():
    from suite.engine.triage import RULES

    docs = (Path(__file__).resolve().parent.parent / "docs" / "reports.md").read_text()
    for rule in RULES:
        assert f"`{rule.label}`" in docs, rule.label


def test_a_bug_still_failing_on_the_newest_release_is_an_issue_with_its_real_message(tmp_path):
    """#11586's port as a file of the user's own (no baseline entry, no upstream link), run
    on this machine's Triton: an int8 WGMMA under warp specialization has no PTX. The headline
    carries the failing pass and the assertion; repro.py is attached, not inlined."""
    newest_installed()
    port = (ROOT / "repros" / "upstream" / "ws_int8_wgmma.py").read_text()
    mine = tmp_path / "my_int8.py"
    mine.write_text(port.replace('id="upstream-11586-ws-int8-wgmma"', 'id="my-int8-ws"'))
    out = tmp_path / "out"
    repro_cli("run", str(mine), "-o", str(out))
    (run,) = (out / "runs").iterdir()
    case = "my-int8-ws[sm_90-64x32x32-w4-s3-wsTrue]"
    done = repro_cli("report", f"{run}:{case}", "-o", str(out), "--verify", "--id", "i8")
    assert done.code == 0, done.stdout + done.stderr
    folder = out / "i8"
    record = json.loads((folder / "report.json").read_text())
    assert record["status"] == "ready", record
    issue = (folder / "issue.md").read_text()
    assert issue.splitlines()[0].startswith("# ConvertNVGPUToLLVM fails on sm_90: Assertion")
    assert len(issue.splitlines()) <= 250 and fences_are_valid(issue)
    assert (folder / "repro.py").is_file() and "def judge(" not in issue


@pytest.mark.venv
def test_a_refusal_of_tritons_frontend_is_never_reported_as_a_bug(tmp_path):
    """fp8 tl.dot with K=16 on sm_90 under 3.3.1 (tests/data/dot_mma.py): the frontend's
    assertion names a limit, so the report is the user error, never an issue."""
    from suite.toolchain.venvs import for_version

    dot_mma = Path(__file__).parent / "data" / "dot_mma.py"
    out = tmp_path / "out"
    python = for_version("3.3.1").python
    ran = repro_cli(
        "run", str(dot_mma), "-c", "trigger", "-t", "sm_90", "--python", python, "-o", str(out)
    )
    assert ran.code == 0, ran.stdout + ran.stderr
    (run,) = (out / "runs").iterdir()
    case = "dot-mma-select[sm_90-fp8e4nv-64x64x16]"
    done = repro_cli("report", f"{run}:{case}", "-o", str(out), "--id", "fp8")
    record = json.loads((out / "fp8" / "report.json").read_text())
    assert record["status"] == "user-error", done.stdout + done.stderr
    assert not (out / "fp8" / "issue.md").exists()


PASSES = """
from suite import Choice, Compiled, Reproducer

REPRO = Reproducer(
    id="passes-now",
    title="A config that compiles",
    family="test",
    params=(Choice("num_warps", (4, 8)),),
    configs={"all": [{"num_warps": 4}]},
    targets=("sm_90",),
)


@REPRO.compile
def compile_case(case):
    return Compiled(shared_bytes=1024)
"""


def test_a_finding_whose_rerun_passes_is_refused_and_nothing_is_written(tmp_path):
    """issue 35: a finding of a harness failure (every child of an explore exited 1 at
    `start`) was reported upstream, though the report's own re-run passed."""
    program = tmp_path / "passes_now.py"
    program.write_text(PASSES)
    finding = write_finding(
        program, "crash:exit-1:start", "crash", tmp_path / "out", {"num_warps": 4}
    )
    done = repro_cli("report", str(finding), "-o", str(tmp_path / "out"), "-q")
    assert done.code == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("repro: error: runtime: re-running its minimal config")
    assert "gave passed, not crash:exit-1:start: it does not reproduce" in line
    assert done.stdout.startswith("passes-now[sm_90-4] not reported: runtime: re-running")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["findings"]
