"""``repro.py`` a maintainer reads at a glance, and the compact issue body around it.

Real inputs only: user reproducer files (``tests/data/user/``, written in the style of
``repros/upstream/``) and a built-in upstream bug run through the real ``repro`` command,
each ``repro.py`` run by itself in a clean environment under the release venvs.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, repro_cli

from suite.engine.same_bug import is_same_bug
from suite.report.script_output import signature_of_run
from suite.report.standalone import (
    REPRO_LINES,
    compact_header,
    foreign_imports,
    glance_lines,
)
from suite.report.verify import clean_env
from suite.standalone_kit import COMPILE_KIT
from suite.templating import MARKDOWN_WIDTH

USER = ROOT / "tests" / "data" / "user"
ASSIGN_LATENCIES = "compiler-error:ttgir:TritonGPUAssignLatencies"
CAPABILITY = 'Assertion `false && "computeCapability not supported"\' failed'


def _python(version: str) -> str:
    from suite.toolchain.venvs import for_version

    return for_version(version).python


def run_alone(python: str, script: Path) -> subprocess.CompletedProcess:
    """``python repro.py`` in its folder, with nothing of this project in the environment."""
    return subprocess.run(
        [python, script.name],
        cwd=script.parent,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )


def reported(file: Path, python: str, out: Path, *report_args: str, env: dict | None = None):
    """``repro run FILE -c trigger --python PY`` then ``repro report RUN:CASE``: the folder."""
    done = repro_cli("run", str(file), "-c", "trigger", "--python", python, "-o", str(out))
    assert done.code in (0, 1), done.stdout + done.stderr
    (run,) = (out / "runs").iterdir()
    (line,) = (run / "results.jsonl").read_text().splitlines()
    case = json.loads(line)["case_id"]
    done = repro_cli("report", f"{run}:{case}", "-o", str(out), "--id", "r", *report_args, env=env)
    assert done.code == 0, done.stdout + done.stderr
    return out / "r", json.loads(line)["signature"]


def assert_at_a_glance(script: Path) -> None:
    """Read at a glance above the carried block, which is the engine's judgement verbatim."""
    text = script.read_text()
    assert glance_lines(text) <= REPRO_LINES["compile"], glance_lines(text)
    assert foreign_imports(text) == []
    assert not re.search(r"^\s*(?:from|import) suite\b", text, re.M)
    assert COMPILE_KIT in text


def assert_markdown_width(folder: Path) -> None:
    for page in folder.glob("*.md"):
        for line in page.read_text().splitlines():
            assert len(line) <= MARKDOWN_WIDTH, (page.name, line[:80])


@pytest.mark.slow
@pytest.mark.venv
def test_a_user_file_of_the_assign_latencies_bug_on_350_fails_there_and_not_on_360(tmp_path):
    folder, signature = reported(
        USER / "prefetch_gemm_sm100.py", _python("3.5.0"), tmp_path, "--verify"
    )
    assert signature == ASSIGN_LATENCIES
    record = json.loads((folder / "report.json").read_text())
    assert record["verification"]["ok"], record["verification"]
    assert record["verification"]["line"].startswith("Verified: reproduces on triton 3.5.0")
    script = folder / "repro.py"
    assert_at_a_glance(script)
    bad = run_alone(_python("3.5.0"), script)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert f"expected: {ASSIGN_LATENCIES}" in bad.stdout and "REPRODUCED" in bad.stdout
    assert signature_of_run(bad.stdout, bad.stderr) == ASSIGN_LATENCIES
    fixed = run_alone(_python("3.6.0"), script)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "triton 3.6.0, sm_100: compile succeeded" in fixed.stdout
    assert signature_of_run(fixed.stdout, fixed.stderr) is None
    assert_markdown_width(folder)


@pytest.mark.slow
@pytest.mark.venv
def test_an_older_release_bug_reproduces_on_every_form_of_the_compile_call(tmp_path):
    """sm_120 GEMM, run on 3.2.0 (ASTSource by name with an AttrsDescriptor): the same
    repro.py aborts on 3.0.0 (by position), raises on 3.3.0 (constexprs=) and compiles on
    3.3.1, the fixed release."""
    folder, signature = reported(USER / "gemm_sm120.py", _python("3.2.0"), tmp_path, "--verify")
    assert signature == f"crash:SIGABRT:compile:ttgir: {CAPABILITY}"
    assert json.loads((folder / "report.json").read_text())["verification"]["ok"]
    script = folder / "repro.py"
    assert_at_a_glance(script)
    seen = {}
    for version in ("3.0.0", "3.2.0", "3.3.0", "3.3.1"):
        ran = run_alone(_python(version), script)
        seen[version] = (ran.returncode, signature_of_run(ran.stdout, ran.stderr))
    assert {v: code for v, (code, _) in seen.items()} == {
        "3.0.0": 1,
        "3.2.0": 1,
        "3.3.0": 1,
        "3.3.1": 0,
    }, seen
    assert seen["3.2.0"][1] is not None and is_same_bug(seen["3.2.0"][1], signature)
    assert seen["3.3.0"][1] == f"compiler-error:ttgir:TritonGPUAccelerateMatmul: {CAPABILITY}"
    assert seen["3.3.1"][1] is None
    # The snippet in the body is the 3.2 form, and runs there as it is.
    snippet = folder / "snippet.py"
    assert "AttrsDescriptor.from_hints(" in snippet.read_text()
    pasted = run_alone(_python("3.2.0"), snippet)
    assert pasted.returncode < 0 and "computeCapability not supported" in pasted.stderr


# upstream-9728-ws-pointer-dot-hopper takes tl.range(warp_specialize=...) (its `requires`),
# first in 3.4.0.
@pytest.mark.triton(">=3.4")
def test_a_report_made_where_huge_variables_are_set_stays_compact(tmp_path):
    """The built-in #9728 bug, still failing on this machine's Triton: repro.py run here
    exits 1 and the suite reads its signature back; a GPU machine's kilobyte NVIDIA_*
    variable is not shown, a long TRITON_* one is cut; no Markdown line is over 300."""
    huge = {
        "NVIDIA_REQUIRE_CUDA": "cuda>=13.0 " + "brand=tesla,driver>=470,driver<471 " * 150,
        "TRITON_PLANTED_LONG_KNOB": "x" * 3000,
        "CUDA_VISIBLE_DEVICES": "0",
    }
    builtin = ROOT / "repros" / "upstream" / "ws_pointer_dot_hopper.py"
    empty = tmp_path / "baseline.toml"
    empty.write_text("")  # as a new bug: an issue, not a comment on the known one
    folder, signature = reported(
        builtin, sys.executable, tmp_path, "--baseline", str(empty), env=huge
    )
    issue = (folder / "issue.md").read_text()
    assert "NVIDIA_REQUIRE_CUDA" not in issue and "CUDA_VISIBLE_DEVICES" not in issue
    assert "TRITON_PLANTED_LONG_KNOB=" + "x" * 100 in issue and "[3000 chars]" in issue
    assert_markdown_width(folder)
    script = folder / "repro.py"
    assert_at_a_glance(script)
    ran = run_alone(sys.executable, script)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert signature_of_run(ran.stdout, ran.stderr) == signature
    assert f"seen:     {signature}" in ran.stdout and "REPRODUCED" in ran.stdout


def test_a_formatters_one_argument_a_line_header_is_wrapped():
    source = (ROOT / "repros" / "tma_gemm_prefetch.py").read_text()
    kernel = source[source.index("@triton.jit") : source.index("@REPRO.compile")].rstrip()
    compact = compact_header(kernel)
    assert len(compact.splitlines()) == len(kernel.splitlines()) - 7  # 9 arguments on 2 lines
    assert compact.splitlines()[1] == "def gemm_prefetch("
    assert all(len(line) <= 100 for line in compact.splitlines())
    assert compact.endswith(kernel.splitlines()[-1])
    commented = kernel.replace("    c_ptr,\n", "    c_ptr,  # the output\n")
    assert compact_header(commented) == commented  # a comment in the header is kept


def test_every_example_repro_py_is_read_at_a_glance():
    """The checked-in examples (bench/report_examples.py writes them) stay within bounds."""
    folders = sorted((ROOT / "reports" / "examples").iterdir())
    assert folders
    for folder in folders:
        assert_at_a_glance(folder / "repro.py")
        assert_markdown_width(folder)


# The checked-in examples were written where this machine's Triton is 3.9.0 (a report says what
# the running release does with the bug).
@pytest.mark.venv
@pytest.mark.triton(">=3.9,<3.10")
def test_the_examples_are_what_the_tool_writes_today(tmp_path):
    """Regenerate each example as bench/report_examples.py does; its repro.py, snippet and
    body must equal the checked-in ones (run the script to update them)."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import report_examples
    finally:
        sys.path.remove(str(ROOT / "bench"))
    for example in report_examples.EXAMPLES:
        files = report_examples.generate(example, tmp_path)
        assert report_examples.differences(example, files) == [], example.name
