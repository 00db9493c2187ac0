"""What we hand out carries what the user's kernel reads: repro.py, snippet.py and the reducer's
form of kernels written the ways library authors write them (``tests/data/closure/``).

Every file there is a real bug on this machine's Triton (triton-lang/triton#11586's int8
WGMMA under warp specialization, sm_90, compile-only) written another way: tiles as module
``tl.constexpr`` globals, helpers by decorator and by assignment, a kernel from an installed
package (``site/kernlib``, on the path as site-packages would be) reading a sibling module,
an autotuned and heuristics-wrapped kernel, a ``triton.constexpr_function``, ``@triton.jit``
arguments and a dtype global, source generated into a deleted temp file, an AOT build
captured through ``triton.compile``; and, for a GPU, three runtime reproducers. Each repro.py runs
by itself, with nothing of this project importable, and agrees with the engine: exit 1 on the
bug, 0 at the nearest passing config, 2 where the release refuses the kernel.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import (
    ROOT,
    gpu_alone,
    gpu_reduce_budget,
    newest_installed,
    repro_cli,
    triton_release,
)

import suite
from suite.engine.same_bug import is_same_bug
from suite.report.script_output import signature_of_run
from suite.report.standalone import foreign_imports
from suite.report.verify import clean_env

CORPUS = ROOT / "tests" / "data" / "closure"
SITE = CORPUS / "site"
#: The files of the corpus whose kernel fails to compile, each with its trigger and nearest
#: passing config (both differ in WARP_SPECIALIZE alone).
COMPILE_FAILURES = (
    "module_constants",
    "assigned_helper",
    "package_kernel",
    "autotuned",
    "constexpr_function",
    "aliased_imports",
    "jit_arguments",
    "codegen_tempfile",
)


def _with_site() -> dict[str, str]:
    """The environment a user runs the tool in: kernlib installed (on the path), and the
    suite under test; what the environment already puts on the path (wheels carried onto a
    GPU machine) stays."""
    paths = [str(Path(suite.__file__).parents[1]), str(SITE), os.environ.get("PYTHONPATH", "")]
    return {"PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def no_suite(folder: Path) -> dict[str, str]:
    """A clean environment in which ``import suite`` and ``import kernlib`` fail: what a
    maintainer who never installed this project or the package has. What the environment
    puts on the path stays behind the blockers (wheels carried onto a GPU machine: torch's
    or Triton's dependencies may be there)."""
    blocked = folder / "blocked"
    for package in ("suite", "kernlib"):
        (blocked / package).mkdir(parents=True, exist_ok=True)
        (blocked / package / "__init__.py").write_text(
            f"raise ImportError('{package} is not installed here')\n"
        )
    kept = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(SITE)]
    return {**clean_env(), "PYTHONPATH": os.pathsep.join([str(blocked), *kept])}


def run_alone(script: Path, python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, script.name],
        cwd=script.parent,
        env=no_suite(script.parent),
        capture_output=True,
        text=True,
        timeout=600,
    )


def engine_run(name: str, out: Path, python: str = sys.executable) -> dict[str, dict]:
    """``repro run`` of a corpus file's trigger and nearest pass: each config set's record."""
    done = repro_cli(
        "run",
        str(CORPUS / f"{name}.py"),
        "-c",
        "trigger",
        "-c",
        "nearest-pass",
        "--python",
        python,
        "-o",
        str(out),
        env=_with_site(),
    )
    assert done.code in (0, 1), done.stdout + done.stderr
    (run,) = (out / "runs").iterdir()
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    by_set = {}
    for record in records:
        key = "trigger" if record["config"]["WARP_SPECIALIZE"] else "nearest-pass"
        by_set[key] = {**record, "run": str(run)}
    return by_set


def report(record: dict, out: Path) -> Path:
    done = repro_cli(
        "report", f"{record['run']}:{record['case_id']}", "-o", str(out), "--id", "r",
        env=_with_site(),
    )  # fmt: skip
    assert done.code == 0, done.stdout + done.stderr
    return out / "r"


@dataclass(frozen=True)
class Made:
    """A corpus file's `repro run` on this machine's Triton (each config set's record) and
    the report of its trigger: made once a module, read by every test that asks for it."""

    ran: dict[str, dict]
    folder: Path

    def copied(self, target: Path) -> Path:
        """The report's folder copied to ``target``: what a test writes or runs there is its
        own (a variant of repro.py, what repro.py leaves behind)."""
        return Path(shutil.copytree(self.folder, target))


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Made]:
    """Each test of a corpus file ran the file and reported it again: the carried repro.py,
    its run under 3.5.0, a refusing release, a broken install all read one run and report."""
    cache: dict[str, Made] = {}

    def make(name: str) -> Made:
        if name not in cache:
            out = tmp_path_factory.mktemp(f"made-{name}")
            ran = engine_run(name, out)
            cache[name] = Made(ran, report(ran["trigger"], out))
        return cache[name]

    return make


def at_the_nearest_pass(script: Path) -> Path:
    """``repro.py`` with the one change of the nearest passing config (a copy beside it)."""
    text = script.read_text()
    changed = text.replace("'WARP_SPECIALIZE': True", "'WARP_SPECIALIZE': False")
    assert changed != text
    passing = script.parent / "at_nearest_pass.py"
    passing.write_text(changed)
    return passing


def assert_standalone(text: str) -> None:
    assert foreign_imports(text) == []
    assert not re.search(r"^\s*(?:from|import) (?:suite|kernlib)\b", text, re.M)
    ast.parse(text)


@pytest.mark.parametrize("name", COMPILE_FAILURES)
def test_repro_py_carries_what_the_kernel_reads_and_agrees_with_the_engine(made, tmp_path, name):
    newest_installed()  # the corpus's triggers and nearest passes are the newest release's
    ran = made(name).ran
    trigger, passing = ran["trigger"], ran["nearest-pass"]
    assert trigger["outcome"] == "compiler-error" and passing["outcome"] == "passed", ran
    folder = made(name).copied(tmp_path / "r")
    script = folder / "repro.py"
    for program in (script, folder / "snippet.py"):
        assert_standalone(program.read_text())
    alone = run_alone(script)
    assert "NameError" not in alone.stderr
    assert alone.returncode == 1, alone.stdout + alone.stderr[-2000:]
    seen = signature_of_run(alone.stdout, alone.stderr)
    assert seen is not None and is_same_bug(seen, trigger["signature"]), (seen, trigger)
    fixed = run_alone(at_the_nearest_pass(script))
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr[-2000:]
    # The title names the failing pass, the target and the release.
    title = (folder / "issue.md").read_text().splitlines()[0]
    assert re.match(r"# \w+ fails on sm_90: .+ \(triton \d+\.\d+\.\d+\)$", title), title


# The corpus's kernels need tl.make_tensor_descriptor and tl.range(warp_specialize=...)
# (their `requires`), both first in 3.4.0.
@pytest.mark.triton(">=3.4")
@pytest.mark.venv
@pytest.mark.parametrize(
    "name",
    ["module_constants", pytest.param("package_kernel", marks=pytest.mark.slow), "assigned_helper"],
)
def test_repro_py_made_on_390_agrees_with_the_engine_on_350(made, tmp_path, name):
    """The same repro.py under triton 3.5.0: exit 1 where the engine sees the same bug there,
    2 where it sees another (``assigned_helper``'s noinline helper fails another pass on 3.9.0
    than on 3.5.0). ``package_kernel`` is a second exit 1 (docs/testing.md)."""
    from suite.toolchain.venvs import for_version

    python = str(for_version("3.5.0").python)
    here = made(name).ran["trigger"]
    there = engine_run(name, tmp_path / "there", python)["trigger"]
    script = made(name).copied(tmp_path / "here") / "repro.py"
    alone = run_alone(script, python)
    expected = 1 if is_same_bug(there["signature"], here["signature"]) else 2
    assert alone.returncode == expected, (there["signature"], alone.stdout)
    if expected == 1:
        seen = signature_of_run(alone.stdout, alone.stderr)
        assert seen is not None and is_same_bug(seen, there["signature"])


# The corpus's kernels need tl.make_tensor_descriptor and tl.range(warp_specialize=...)
# (their `requires`), both first in 3.4.0.
@pytest.mark.triton(">=3.4")
@pytest.mark.venv
def test_a_kernel_from_a_deleted_file_is_judged_on_a_release_that_rereads_its_source(tmp_path):
    """Triton 3.4.0 reads a kernel's source lines again when it compiles it; the file
    ``codegen_tempfile`` generated its kernel into is gone by then. The engine judges the
    kernel there as repro.py (which carries the source) does: the same bug, not a refusal
    (``OSError: could not get source code``)."""
    from suite.toolchain.venvs import for_version

    here = engine_run("codegen_tempfile", tmp_path / "here")["trigger"]
    there = engine_run("codegen_tempfile", tmp_path / "there", str(for_version("3.4.0").python))
    assert there["trigger"]["outcome"] == "compiler-error", there["trigger"]["message"]
    assert is_same_bug(there["trigger"]["signature"], here["signature"])
    assert there["nearest-pass"]["outcome"] == "passed", there["nearest-pass"]["message"]


# The corpus's kernels need tl.make_tensor_descriptor and tl.range(warp_specialize=...)
# (their `requires`), both first in 3.4.0.
@pytest.mark.triton(">=3.4")
def test_a_release_without_the_kernels_api_is_a_refusal_exit_2(made, tmp_path):
    """repro.py under a Triton whose ``tl`` lacks what the kernel calls: the compile fails
    otherwise, so 2, never 1. Simulated with this machine's Triton by a script whose kernel
    calls a ``tl`` function no release has."""
    folder = made("module_constants").copied(tmp_path / "r")
    script = folder / "repro.py"
    refused = script.parent / "refused.py"
    refused.write_text(script.read_text().replace("tl.make_tensor_descriptor(", "tl.no_such_api("))
    alone = run_alone(refused)
    assert alone.returncode == 2, alone.stdout + alone.stderr[-2000:]


# The corpus's kernels need tl.make_tensor_descriptor and tl.range(warp_specialize=...)
# (their `requires`), both first in 3.4.0.
@pytest.mark.triton(">=3.4")
def test_a_broken_triton_install_is_the_scripts_own_failure_exit_2(made, tmp_path):
    """``import triton`` failing at the top of repro.py is not the bug: one line, exit 2."""
    folder = made("module_constants").copied(tmp_path / "r")
    script = folder / "repro.py"
    broken = tmp_path / "broken" / "triton"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text(
        "raise OSError('libtriton.so: cannot open shared object')\n"
    )
    env = {**no_suite(tmp_path), "PYTHONPATH": str(broken.parent)}
    done = subprocess.run(
        [sys.executable, script.name], cwd=folder, env=env, capture_output=True, text=True
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        "this script failed, not the kernel: OSError: libtriton.so: cannot open shared object"
    ]


# The corpus's kernels need tl.make_tensor_descriptor and tl.range(warp_specialize=...)
# (their `requires`), both first in 3.4.0.
@pytest.mark.triton(">=3.4")
def test_a_global_with_no_literal_is_named_at_report_time_never_a_name_error(tmp_path):
    """A kernel that reads a global the suite cannot write as Python: the report says which,
    in one line, and writes no repro.py that would fail with NameError."""
    folder = report(engine_run("uncarried", tmp_path / "out")["trigger"], tmp_path / "out")
    record = json.loads((folder / "report.json").read_text())
    assert not (folder / "repro.py").exists()
    notes = [n for n in record["notes"] if n.startswith("repro.py not written")]
    assert notes and "ROUNDING (Fraction)" in notes[0], record["notes"]


def _finding(source: Path, record: dict, path: Path) -> Path:
    """A finding of ``record`` (a case of ``source``) as ``repro explore`` writes one."""
    from suite.engine.environment import Environment
    from suite.engine.sources import capture_source
    from suite.failures.findings import Finding

    carried = capture_source({"path": str(source)})
    assert carried is not None
    finding = Finding(
        repro=record["repro"],
        signature=record["signature"],
        kind="bug",
        outcome=record["outcome"],
        message="",
        target=record["target"],
        targets=[record["target"]],
        minimal_config=dict(record["config"]),
        failing_configs=[],
        passing_neighbours=[],
        boundary=[],
        environment=Environment(triton=triton_release(), python_executable=sys.executable),
        seed=0,
        first_seen="",
        last_seen="",
        source=carried.to_json(with_text=True),
    )
    path.write_text(json.dumps(finding.to_json(), indent=2))
    return path


@pytest.mark.triton(">=3.4")  # the corpus's descriptors and warp_specialize (above)
def test_a_kernel_reading_module_constants_is_reduced_and_reported_standalone(made, tmp_path):
    """The reducer's form writes each module constant on its own line (it wrote
    ``A = tl.constexpr(64)B = tl.constexpr(32)``: a kernel reading two globals could not be
    reduced); the report of the reduced kernel is a repro.py that runs alone."""
    out = tmp_path / "out"
    trigger = made("module_constants").ran["trigger"]
    finding = _finding(CORPUS / "module_constants.py", trigger, tmp_path / "f.json")
    done = repro_cli(
        "reduce", str(finding), "--time-budget", "20", "-j", "1", "--fixed-release", "none",
        "-o", str(out),
    )  # fmt: skip
    assert done.code == 0, done.stdout + done.stderr
    reduced = (out / "reduce" / "f" / "reduced.py").read_text()
    tree = ast.parse(reduced)
    constants = [
        n for n in tree.body if isinstance(n, ast.Assign) and "constexpr" in ast.unparse(n)
    ]
    assert len(constants) >= 2, reduced
    reported = repro_cli("report", str(finding), "-o", str(out), "--id", "reduced")
    assert reported.code == 0, reported.stdout + reported.stderr
    script = out / "reduced" / "repro.py"
    assert_standalone(script.read_text())
    with gpu_alone():
        alone = run_alone(script)
    assert alone.returncode == 1, alone.stdout + alone.stderr[-2000:]
    seen = signature_of_run(alone.stdout, alone.stderr)
    assert seen is not None and is_same_bug(seen, trigger["signature"])


def run_on_the_gpu(file: Path, change: dict, out: Path) -> tuple[dict, dict]:
    """``repro run FILE -c trigger -c nearest-pass`` in one process, bounded (no sanitizer or
    ptxas rerun: not what these tests check): the trigger's record and the nearest pass's
    (the one whose config holds ``change``), each with its run folder."""
    done = repro_cli(
        "run", str(file), "-c", "trigger", "-c", "nearest-pass", "--gpu", "on", "--no-sanitizer",
        "--no-ptxas-differential", "--timeout", "120", "-o", str(out),
        env=_with_site(), timeout=400,
    )  # fmt: skip
    assert done.code in (0, 1), done.stdout + done.stderr
    (run,) = (out / "runs").iterdir()
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    passing = [r for r in records if change.items() <= r["config"].items()]
    trigger = [r for r in records if r not in passing]
    assert len(passing) == 1 and len(trigger) == 1, records
    return {**trigger[0], "run": str(run)}, {**passing[0], "run": str(run)}


def launch_repro_py(file: Path, repro_id: str, config: dict, folder: Path) -> Path:
    """The launch repro.py of ``file``'s reproducer at ``config``, written as a report writes it
    (the closure found in a child that loads the file), with no GPU."""
    from suite.engine import CaseResult, Outcome
    from suite.report.launch_repro import PROVIDED, launch_script, launch_source
    from suite.report.standalone import capture_launch
    from suite.templating import template_environment

    result = CaseResult(
        case_id=f"{repro_id}[sm_90]",
        repro=repro_id,
        target="sm_90",
        config=config,
        outcome=Outcome.from_label("runtime-error"),
    )
    text = file.read_text()
    source = launch_source(text, repro_id)
    assert source is not None
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = _with_site()["PYTHONPATH"]  # kernlib, installed
    try:
        closure, why = capture_launch(
            result, {"path": str(file)}, None, source.roots(), list(PROVIDED), source.dropped()
        )
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = before
    assert closure is not None, why
    script = launch_script(
        template_environment(), text, repro_id, config, "?", "t", "sm_90", "3.6.0", closure
    )
    assert script is not None
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "repro.py").write_text(script)
    return folder / "repro.py"


@pytest.mark.parametrize(
    ("file", "repro_id", "config"),
    [
        (CORPUS / "launch_helpers.py", "closure-launch-helpers", {"num_stages": 2}),
        (
            ROOT / "repros" / "upstream" / "descriptor_1d_pipelined_misaligned.py",
            "upstream-10474-descriptor-1d-pipelined",
            {"dtype": "fp16", "XBLOCK": 16, "STAGES": 3, "OP": "axpy", "N": 8192},
        ),
    ],
)
def test_a_launch_repro_py_defines_every_name_its_launch_reads(tmp_path, file, repro_id, config):
    """The launch form carries constants assigned by tuple and annotation, a helper made by
    assignment, a package's helpers and host functions; it imports neither the suite nor the
    package, and a linter finds no name it reads undefined (a GPU runs it: the gpu tests)."""
    script = launch_repro_py(file, repro_id, config, tmp_path)
    text = script.read_text()
    assert_standalone(text)
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed")
    lint = subprocess.run(
        [ruff, "check", "--no-cache", "--isolated", "--select", "F821,F811", str(script)],
        capture_output=True,
        text=True,
    )
    assert lint.returncode == 0, lint.stdout


def test_a_launch_that_reads_the_suites_own_names_is_refused_naming_them(tmp_path):
    """A launch reading a suite helper the launch script does not define is named at report
    time, never a NameError when repro.py runs."""
    file = tmp_path / "uses_suite.py"
    file.write_text(
        (CORPUS / "launch_helpers.py")
        .read_text()
        .replace(
            "from suite.checks import device, poisoned",
            "from suite.checks import assert_close, device, poisoned",
        )
        .replace(
            "    y = poisoned(x.shape, x.dtype)",
            "    y = poisoned(x.shape, x.dtype)\n    assert_close(y, y)",
        )
    )
    with pytest.raises(AssertionError, match=r"assert_close \(suite\.checks: the suite.s"):
        launch_repro_py(file, "closure-launch-helpers", {"num_stages": 2}, tmp_path / "out")


#: The GPU corpus: runtime bugs on an H100 with triton 3.6.0, written with module helpers and
#: constants; each with its nearest passing config (the one change from the trigger).
# One of the three in the GPU-marked run (module constants and helpers: the first
# case); the package and the autotuned one with `-m slow` (bench/closure_gpu.sh runs all three):
# each holds the GPU turn for about 50 s, and the three at once kept the fault reduction from
# finishing in one run's bound (2026-11-27, docs/gpu-results.md).
GPU_CORPUS = [
    ("misaligned_constants", {"STAGES": 1}),
    pytest.param("package_dot_and_sum", {"num_stages": 1}, marks=pytest.mark.slow),
    pytest.param("autotuned_misaligned", {"STAGES": 1}, marks=pytest.mark.slow),
]


@pytest.mark.gpu
@pytest.mark.long
@pytest.mark.parametrize(("name", "change"), GPU_CORPUS)
def test_a_runtime_reproducer_with_module_helpers_is_verified_and_runs_alone(
    tmp_path, name, change
):
    """``repro report --verify`` is ready; repro.py alone (no suite, no kernlib) exits 1, and 0
    at the nearest passing config."""
    file = CORPUS / "gpu" / f"{name}.py"
    trigger, passing = run_on_the_gpu(file, change, tmp_path / "t")
    assert trigger["outcome"] in ("runtime-error", "wrong-result"), trigger
    assert passing["outcome"] == "passed", passing
    done = repro_cli(
        "report", f"{trigger['run']}:{trigger['case_id']}", "-o", str(tmp_path / "t"),
        "--id", "r", "--verify", env=_with_site(), timeout=300,
    )  # fmt: skip
    assert done.code == 0, done.stdout + done.stderr
    folder = tmp_path / "t" / "r"
    record = json.loads((folder / "report.json").read_text())
    assert record["verification"]["ok"], record
    # ready, unless a newer release's venv is cached here and was never tried
    assert record["status"] == "ready" or record["status"].startswith("not checked"), record
    script = folder / "repro.py"
    assert_standalone(script.read_text())
    with gpu_alone():
        alone = run_alone(script)
    assert alone.returncode == 1, alone.stdout + alone.stderr[-2000:]
    # The nearest passing config: the same program with the config's one change (values are
    # written as Python literals).
    text = script.read_text()
    config = repr(dict(trigger["config"]))
    assert config in text, config
    nearest = folder / "at_nearest_pass.py"
    nearest.write_text(text.replace(config, repr({**trigger["config"], **change})))
    with gpu_alone():
        fixed = run_alone(nearest)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr[-2000:]


@pytest.mark.gpu
@pytest.mark.slow  # the GPU-marked run reduces a launch fault in test_reduce_runtime.py
def test_a_runtime_reproducer_with_module_helpers_is_reduced_and_runs_alone(tmp_path):
    """misaligned_constants reduced on the GPU; the report of the reduced kernel is a repro.py
    that runs alone and exits 1."""
    out = tmp_path / "out"
    file = CORPUS / "gpu" / "misaligned_constants.py"
    trigger, _ = run_on_the_gpu(file, {"STAGES": 1}, out)
    finding = _finding(file, trigger, tmp_path / "f.json")
    # Four candidates at a time: a reduction faults the GPU hundreds of times (docs/facts.md:
    # fault-heavy runs have left the GPU refusing new processes).
    done = repro_cli(
        "reduce", str(finding), "--time-budget", gpu_reduce_budget(), "-j", "4", "--timeout", "60",
        "-o", str(out), env=_with_site(), timeout=300,
    )  # fmt: skip
    assert done.code == 0, done.stdout + done.stderr
    reported = repro_cli(
        "report", str(finding), "-o", str(out), "--id", "reduced", "--verify", timeout=300
    )
    assert reported.code == 0, reported.stdout + reported.stderr
    script = out / "reduced" / "repro.py"
    assert_standalone(script.read_text())
    with gpu_alone():
        alone = run_alone(script)
    assert alone.returncode == 1, alone.stdout + alone.stderr[-2000:]


def test_a_kernel_package_built_ahead_of_time_is_captured_carried_and_reported(tmp_path):
    """An AOT build script compiles kernlib's kernel (installed, read from a sibling module)
    through ``triton.compile`` with ``cluster_dims=(1, 1, 1)``: the captured reproducer carries
    kernlib's helpers and constants instead of importing kernlib, the options stay tuples, and
    the report's repro.py is verified and runs alone. The captured reproducer itself runs
    alone too, with neither the suite nor kernlib importable: exit 1 on the bug the engine's
    run of the same file saw (capture's isolated run: ``repro run`` of the file, its target
    and its ``captured`` config), 0 at the nearest passing config."""
    newest_installed()  # the corpus's triggers and nearest passes are the newest release's
    output = tmp_path / "reports"
    program = CORPUS / "programs" / "aot_package.py"
    done = subprocess.run(
        [sys.executable, "-m", "suite.capture", "--output", str(output), "--", sys.executable,
         str(program)],
        capture_output=True, text=True, cwd=tmp_path, env={**os.environ, **_with_site()},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]
    (summary,) = output.glob("captures/*/capture.json")
    (failure,) = json.loads(summary.read_text())["failures"]
    assert failure["reproduced"], failure
    captured = Path(failure["file"]).read_text()
    assert not re.search(r"^\s*(?:from|import) kernlib\b", captured, re.M), captured
    assert "'cluster_dims': (1, 1, 1)" in captured
    assert_standalone(captured)
    alone = run_alone(Path(failure["file"]))
    assert alone.returncode == 1 and "REPRODUCED" in alone.stdout, alone.stdout + alone.stderr
    (seen,) = re.findall(r"^seen: +(.*)$", alone.stdout, re.M)
    assert is_same_bug(failure["isolated"], seen), (failure["isolated"], seen)
    passing = at_the_nearest_pass(Path(failure["file"]))
    assert run_alone(passing).returncode == 0
    reported = repro_cli("report", failure["finding"], "-o", str(output), "--verify")
    assert reported.code == 0, reported.stdout + reported.stderr
    folder = output / failure["finding"]
    assert json.loads((folder / "report.json").read_text())["status"] == "ready"
    script = folder / "repro.py"
    # Options written as Python literals (never JSON's lists).
    (options,) = re.findall(r"^OPTIONS = (.*)$", script.read_text(), re.M)
    assert "[" not in options, options
    assert_standalone(script.read_text())
    alone = run_alone(script)
    assert alone.returncode == 1, alone.stdout + alone.stderr[-2000:]


@pytest.mark.triton(">=3.4")  # repro.py runs here too: its kernel uses warp_specialize
@pytest.mark.venv
def test_an_assert_false_keeps_the_function_it_failed_in_and_repro_py_sees_it(tmp_path):
    """#9728 under 3.5.0 aborts with ``Assertion `false' failed``, which says nothing: the
    signature keeps the function it failed in (two such assertions of one pass are two
    findings), and repro.py's evidence (printed before the assertion) still reproduces; on
    this machine's release, which words it otherwise, too."""
    from suite.toolchain.venvs import for_version

    python = str(for_version("3.5.0").python)
    file = ROOT / "repros" / "upstream" / "ws_pointer_dot_hopper.py"
    out = tmp_path / "out"
    done = repro_cli("run", str(file), "-c", "trigger", "--python", python, "-o", str(out))
    assert done.code in (0, 1), done.stdout + done.stderr
    (run,) = (out / "runs").iterdir()
    (line,) = (run / "results.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["signature"].endswith("Assertion `false' failed in processProducerCommitOp")
    done = repro_cli(
        "report", f"{run}:{record['case_id']}", "-o", str(out), "--id", "r", "--verify"
    )
    assert done.code == 0, done.stdout + done.stderr
    verification = json.loads((out / "r" / "report.json").read_text())["verification"]
    assert verification["ok"] and verification["exit"] == 1, verification
    # This machine's Triton words the same bug otherwise (the same pass, an LLVM ERROR from
    # 3.7): repro.py judges by the engine's same-bug rule, so it still reproduces here.
    alone = run_alone(out / "r" / "repro.py")
    assert alone.returncode == 1, alone.stdout + alone.stderr[-2000:]
    assert "seen:     compiler-error:ttgir:NVGPUWarpSpecialization: " in alone.stdout


@pytest.mark.venv
def test_status_says_what_was_checked(tmp_path):
    """A finding of triton 3.5.0: with no newer release tried it is not ready ("not checked
    on the newest release 3.9.0"); a newer release that refuses the kernel for another
    reason (repro.py exit 2 there) cannot show the fix, so bisect's first good release still
    makes it "fixed upstream"; one after that release that still reproduces it leaves it
    unfixed, one before it does not."""
    newest_installed()  # what the newest release says of a 3.5.0 finding
    from dataclasses import replace

    from suite.report.context import fixed_upstream_in, unchecked_newer
    from suite.report.verify import Verification
    from suite.subject import subject_of
    from suite.toolchain.venvs import for_version

    python = str(for_version("3.5.0").python)
    record = engine_run("module_constants", tmp_path / "out", python)["trigger"]
    subject = subject_of(f"{record['run']}:{record['case_id']}", tmp_path / "out")
    assert subject.triton_version == "3.5.0"
    assert unchecked_newer(subject, None) == triton_release()
    refused = Verification(False, triton_release(), "", 2, "compiler-error:ttir: other")
    reproduces = Verification(True, triton_release(), "", 1, record["signature"])
    assert unchecked_newer(subject, refused) == ""
    finding = _finding(CORPUS / "module_constants.py", record, tmp_path / "f.json")
    from suite.failures.findings import Finding

    bisected = replace(Finding.from_json(json.loads(finding.read_text())), first_good="3.6.0")
    subject.finding = replace(bisected, signatures={"3.5.0": record["signature"]})
    from suite.engine import Baseline

    nothing_known = Baseline([])
    assert fixed_upstream_in(subject, refused, nothing_known) == "3.6.0"
    assert fixed_upstream_in(subject, reproduces, nothing_known) == ""
    # This machine's Triton newer than the finding's but older than bisect's first good
    # release (3.5.1, seen in its lane): that it still fails there says nothing of the fix.
    between = Verification(True, "3.5.1", "", 1, record["signature"])
    assert fixed_upstream_in(subject, between, nothing_known) == "3.6.0"


# Making an Autotuner needs a GPU driver or torch before 3.4.0: 3.0.0 and 3.1.0's import
# torch; 3.2.0-3.3.1's take driver.active.get_benchmarker() (3.2.0's AMD is_active imports
# torch, 3.3.1 finds "0 active drivers" without a GPU); 3.4.0 asks for it at the first bench.
@pytest.mark.triton(">=3.4")
def test_an_autotuned_kernel_under_heuristics_is_carried_not_imported(tmp_path):
    """An Autotuner's own ``__module__`` is Triton's: the kernel under it decides where it
    lives (seen on the H200: 'copy_1d (Autotuner)' could not be carried, so the launch's
    repro.py was not written)."""
    (tmp_path / "tuned.py").write_text(
        textwrap.dedent(
            """
            import triton
            import triton.language as tl

            SPLIT = tl.constexpr(1024)


            @triton.autotune(configs=[triton.Config({}, num_warps=4)], key=["n"])
            @triton.heuristics({"EVEN": lambda args: args["n"] % SPLIT.value == 0})
            @triton.jit
            def copy_1d(x, n, B: tl.constexpr, EVEN: tl.constexpr):
                pass
            """
        )
    )
    site = Path(suite.__file__).parent / "capture" / "site"
    probe = (
        "import sys, json; sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
        "import tuned, repro_capture_kernel as k\n"
        "carried, _ = k.closure_of(['copy_1d'], vars(tuned))\n"
        "print(json.dumps([carried.unresolved, [f.name for f in carried.functions]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(site), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    unresolved, functions = json.loads(done.stdout)
    assert unresolved == []
    assert functions == ["copy_1d"]


# Before 3.3 neither builtin exists: the global is None here, carried as the literal None.
@pytest.mark.triton(">=3.3")
def test_a_global_bound_by_an_expression_is_carried_as_written_not_as_this_releases_path(
    tmp_path,
):
    """A library binds whichever descriptor builtin the installed release has (3.3's
    ``_experimental_make_tensor_descriptor``, 3.4's ``make_tensor_descriptor``): the program
    carries that expression, not an import of the object found here (``from
    triton.language.core import make_tensor_descriptor``, which 3.3 lacks: repro.py exited 2
    there while the engine saw the bug)."""
    (tmp_path / "compat.py").write_text(
        textwrap.dedent(
            """
            import triton
            import triton.language as tl

            make_desc = getattr(tl, "make_tensor_descriptor", None) or getattr(
                tl, "_experimental_make_tensor_descriptor", None
            )


            @triton.jit
            def load_tile(ptr, n, B: tl.constexpr):
                return make_desc(ptr, [n], [1], [B]).load([0])
            """
        )
    )
    site = Path(suite.__file__).parent / "capture" / "site"
    probe = (
        "import sys, json; sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
        "import compat, repro_capture_kernel as k\n"
        "carried, _ = k.closure_of(['load_tile'], vars(compat))\n"
        "print(json.dumps([carried.unresolved, [[v.name, v.python] for v in carried.values],\n"
        "                  sorted([i.name, i.module] for i in carried.imports)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(site), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    unresolved, values, imports = json.loads(done.stdout)
    assert unresolved == []
    expression = (
        "getattr(tl, 'make_tensor_descriptor', None) or "
        "getattr(tl, '_experimental_make_tensor_descriptor', None)"
    )
    assert values == [["make_desc", expression]]
    assert all(module in ("triton", "triton.language") for _, module in imports), imports
