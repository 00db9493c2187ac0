"""One source of judgement (:mod:`suite.judgement`): the engine compiles and judges with it,
and every standalone program the report and reduce paths write carries it verbatim and
runs with the suite made unimportable.

Real inputs: reproducer files of ``repros/`` and ``tests/data``, the capture child, real
compiles under this machine's Triton and the release venvs, ``python repro.py`` run by itself.
"""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, repro_cli, suite_blocked, write_finding

from suite import judgement, oracles, tritonc
from suite.engine import exception_facts, same_bug, signature
from suite.engine.outcome import CaseResult, Outcome
from suite.report.launch_repro import launch_script
from suite.report.script_output import signature_of_run
from suite.report.standalone import (
    capture_compile,
    foreign_imports,
    minimal_snippet,
    repro_script,
)
from suite.report.verify import clean_env
from suite.standalone_kit import COMPILE_KIT, LAUNCH_KIT
from suite.templating import template_environment

CONSTANTS = ROOT / "tests" / "data" / "closure" / "module_constants.py"
WS_POINTER = ROOT / "repros" / "upstream" / "ws_pointer_dot_hopper.py"
KERNELS = ROOT / "tests" / "data" / "oracle_kernels.py"


def _python(version: str) -> str:
    from suite.toolchain.venvs import for_version

    return for_version(version).python


def run_alone(script: Path, python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, script.name],
        cwd=script.parent,
        env={**clean_env(), "PYTHONPATH": suite_blocked(script.parent)},
        capture_output=True,
        text=True,
        timeout=600,
    )


def undefined_names(script: Path) -> str:
    """What ruff's undefined-name check (F821) finds in ``script``: a NameError before it runs."""
    found = subprocess.run(
        ["ruff", "check", "--isolated", "--no-cache", "--select", "F821", str(script)],
        capture_output=True,
        text=True,
    )
    return "" if found.returncode == 0 else found.stdout


def _probe(repro: str, target: str, config: dict) -> CaseResult:
    return CaseResult(
        case_id=f"{repro}[{target}]",
        repro=repro,
        target=target,
        config=config,
        outcome=Outcome.COMPILER_ERROR,
    )


def definitions(text: str) -> dict[str, str]:
    """The code of each top-level function of ``text``, by name: its AST without docstring."""
    found = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef):
            if ast.get_docstring(node) is not None and len(node.body) > 1:
                node.body = node.body[1:]
            found[node.name] = ast.dump(node, include_attributes=False)
    return found


def test_a_kit_carries_code_not_prose():
    """The carried blocks hold the code of the closure, line for line, and none of its
    docstrings or comment lines (those stay in suite/judgement.py): what we hand out is short."""
    for kit in (COMPILE_KIT, LAUNCH_KIT):
        code = kit.partition("\n")[2]  # below the block's head
        assert not [ln for ln in code.splitlines() if ln.strip().startswith("#")]
        tree = ast.parse(code)
        assert not [
            n.name
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef) and ast.get_docstring(n)
        ]
        source = inspect.getsource(judgement).splitlines()
        assert all(line in source for line in code.splitlines())


def test_the_engine_judges_with_the_code_every_standalone_program_carries(tmp_path):
    """The engine's same-bug rule, normalisation, stages and tolerances are the module's own
    objects, and the kits the templates carry are its text, verbatim."""
    assert same_bug.is_same_bug is judgement.same_bug
    assert same_bug.named_pass is judgement.named_pass
    assert signature.normalize is judgement.normalize
    assert signature.meaningful_message is judgement.meaningful_message
    assert exception_facts.stages_entered is judgement.stages_entered
    assert oracles.tolerance is judgement.tolerance
    assert "from suite.judgement import ast_source" in inspect.getsource(tritonc._ast_source)
    compile_kit, launch_kit = definitions(COMPILE_KIT), definitions(LAUNCH_KIT)
    module = definitions(inspect.getsource(judgement))
    for name in ("ast_source", "compile_options", "printed_signature", "same_bug", "normalize"):
        assert compile_kit[name] == module[name], name
    assert launch_kit["tolerance"] == module["tolerance"]
    # The launch form judges with the engine's tolerances: no fallback of its own.
    text = launch_script(
        template_environment(),
        KERNELS.read_text(),
        "oracle-differential",
        {"BLOCK": 16, "UNROLL": 2, "N": 1000},
        "wrong-result:launch:differential:UNROLL: nan",
        "t",
        "sm_90",
        "3.9.0",
    )
    assert text is not None and LAUNCH_KIT in text
    assert "1e-2" not in text.partition(LAUNCH_KIT)[0]
    launch = tmp_path / "repro.py"
    launch.write_text(text)
    assert foreign_imports(text) == [] and undefined_names(launch) == ""


# closure-module-constants's kernel calls tl.make_tensor_descriptor and
# tl.range(warp_specialize=...) (its `requires`), both first in 3.4.0.
@pytest.mark.triton(">=3.4")
def test_repro_py_and_the_snippet_run_with_the_suite_unimportable(tmp_path):
    """A reproducer whose kernel reads module constants, captured in the capture child: its
    repro.py and snippet.py import nothing of the suite, name nothing undefined, and run by
    themselves (the nearest passing config compiles: exit 0)."""
    config = {"WARP_SPECIALIZE": False, "num_warps": 4, "num_stages": 3}
    call, why = capture_compile(
        _probe("closure-module-constants", "sm_90", config), {"path": str(CONSTANTS)}
    )
    assert call is not None, why
    expected = "compiler-error:llir: some other failure"
    env = template_environment()
    script = tmp_path / "repro.py"
    script.write_text(repro_script(env, call, expected, "t", "test", "3.9.0", "sm_90"))
    snippet = tmp_path / "snippet.py"
    snippet.write_text(minimal_snippet(call))
    for program in (script, snippet):
        assert foreign_imports(program.read_text()) == []
        assert undefined_names(program) == "", program.name
    ran = run_alone(script)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "compile succeeded" in ran.stdout and "NameError" not in ran.stderr
    pasted = run_alone(snippet)
    assert pasted.returncode == 0, pasted.stdout + pasted.stderr


@pytest.mark.slow
def test_a_reduced_file_runs_alone_and_agrees_with_the_engine(tmp_path):
    """``repro reduce`` of #9728: reduced.py is a standalone program that exits 1 with the
    suite made unimportable, judged the same bug as the finding; the reducer's form beside it
    is what the finding points to."""
    out = tmp_path / "out"
    done = repro_cli("run", str(WS_POINTER), "-c", "trigger", "-o", str(out))
    assert done.code in (0, 1), done.stdout + done.stderr  # known to the baseline: 0
    (run,) = (out / "runs").iterdir()
    record = json.loads((run / "results.jsonl").read_text().splitlines()[0])
    finding = write_finding(
        WS_POINTER, record["signature"], record["outcome"], tmp_path, record["config"], name="f"
    )
    reduced = repro_cli(
        "reduce", str(finding), "--time-budget", "20", "-j", "1", "--fixed-release", "none",
        "-o", str(out),
    )  # fmt: skip
    assert reduced.code == 0, reduced.stdout + reduced.stderr
    folder = out / "reduce" / "f"
    assert reduced.stdout.strip().splitlines()[-1] == str(folder / "reduced_case.py")
    standalone = folder / "reduced.py"
    assert json.loads(finding.read_text())["reduced"]["standalone"] == str(standalone)
    text = standalone.read_text()
    assert foreign_imports(text) == [] and COMPILE_KIT in text
    alone = run_alone(standalone)
    assert alone.returncode == 1, alone.stdout + alone.stderr[-2000:]
    seen = signature_of_run(alone.stdout, alone.stderr)
    assert seen is not None and judgement.same_bug(record["signature"], seen)


def _engine_signature(python: str, out: Path) -> tuple[str, Path]:
    """``repro run`` of #9728's trigger under ``python``: the case's signature and run."""
    done = repro_cli("run", str(WS_POINTER), "-c", "trigger", "--python", python, "-o", str(out))
    assert done.code in (0, 1), done.stdout + done.stderr
    (run,) = (out / "runs").iterdir()
    record = json.loads((run / "results.jsonl").read_text().splitlines()[0])
    return record["signature"], run / f"{record['case_id']}"


@pytest.mark.venv
def test_the_engine_and_repro_py_agree_on_the_same_bug_across_releases(tmp_path):
    """#9728 on 3.5.0 and on 3.9.0, each judged by the engine (its case's signature): the
    repro.py reported from 3.5.0, run by itself on each release, reads the same signature as
    the engine did there, and exits 1 exactly where the engine's rule calls it the same bug."""
    seen = {}
    for version in ("3.5.0", "3.9.0"):
        seen[version] = _engine_signature(_python(version), tmp_path / version)[0]
    old_run = next((tmp_path / "3.5.0" / "runs").iterdir())
    case = json.loads((old_run / "results.jsonl").read_text().splitlines()[0])["case_id"]
    empty = tmp_path / "baseline.toml"
    empty.write_text("")
    done = repro_cli(
        "report", f"{old_run}:{case}", "-o", str(tmp_path), "--id", "r", "--baseline", str(empty)
    )
    assert done.code == 0, done.stdout + done.stderr
    script = tmp_path / "r" / "repro.py"
    for version, engine_saw in seen.items():
        alone = run_alone(script, _python(version))
        printed = signature_of_run(alone.stdout, alone.stderr)
        assert printed == engine_saw, (version, alone.stdout)
        same = judgement.same_bug(seen["3.5.0"], engine_saw)
        assert alone.returncode == (1 if same else 2), (version, alone.stdout)
        assert f"seen:     {engine_saw}" in alone.stdout


#: Compile options as the capture hook writes a JIT launch's (through JSON: tuples are lists).
JIT_OPTIONS = (
    '{"num_warps": 4, "num_stages": 2, "cluster_dims": [1, 1, 1], "launch_pdl": false, '
    '"enable_fp_fusion": true}'
)
COMPILE_WITH_OPTIONS = f"""
import json, os, sys, tempfile
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from suite.judgement import ast_source, compile_options

@triton.jit
def copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets))

captured = json.loads({JIT_OPTIONS!r})
signature = {{"x_ptr": "*fp32", "y_ptr": "*fp32"}}
def compiled(options):
    source = ast_source(copy, signature, {{"BLOCK": 128}}, {{}})
    try:
        triton.compile(source, target=GPUTarget("cuda", 90, 32), options=options)
    except TypeError as exc:
        return str(exc)
    return "compiled"
reduced = compile_options(captured)
print(json.dumps({{"raw": compiled(captured), "reduced": compiled(reduced),
                  "options": {{k: [type(v).__name__, v] for k, v in reduced.items()}}}}))
"""


@pytest.mark.venv
def test_captured_options_with_lists_compile_on_an_older_and_a_newer_release(tmp_path):
    """JSON's lists back to tuples (3.2 on hash the options: a list raised ``unhashable
    type``), and only the options the release has: 3.2.0 has no ``launch_pdl``, 3.9.0 no
    longer has ``cluster_dims``. Imported in a venv holding triton alone (stdlib only)."""
    seen = {}
    program = tmp_path / "compile_with_options.py"
    program.write_text(COMPILE_WITH_OPTIONS)
    for version in ("3.2.0", "3.9.0"):
        ran = subprocess.run(
            [_python(version), str(program)],
            env={**clean_env(), "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert ran.returncode == 0, ran.stderr[-2000:]
        seen[version] = json.loads(ran.stdout.strip().splitlines()[-1])
    old, new = seen["3.2.0"], seen["3.9.0"]
    assert old["raw"] == "unhashable type: 'list'" and old["reduced"] == "compiled"
    assert old["options"]["cluster_dims"] == ["tuple", [1, 1, 1]]
    assert "launch_pdl" not in old["options"]
    assert new["reduced"] == "compiled"
    assert "cluster_dims" not in new["options"] and new["options"]["launch_pdl"] == ["bool", False]
