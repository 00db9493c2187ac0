"""``repro replay``: MLIR reproducers replayed pass by pass, the failing pass found and reduced.

The 3.5.0 tests use the real AssignLatencies bug (tma-gemm-prefetch, sm_100, 64x64x32 w4
s2) in the cached triton==3.5.0 venv; the others use the installed Triton (3.9.0 here).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from suite.cli import main as cli
from suite.engine.outcome import CaseResult, Outcome, Signature
from suite.engine.record import RunStore, safe_name
from suite.engine.shim import child_env
from suite.replay.bindings import Binding, map_passes
from suite.replay.case import ReplayCase, choose_reproducer
from suite.replay.diagnostic import Diagnostic, DiagnosticLine, parse_diagnostic
from suite.replay.ir_text import IRText
from suite.replay.passes import probe
from suite.replay.pipeline import (
    PassSpec,
    normalize_name,
    parse_pipeline,
    pass_flag,
    split_reproducer,
)
from suite.replay.replay import replay
from suite.replay.script import lit_test
from tests.conftest import ROOT, Completed, repro_cli
from tests.test_capture import venv_python

TRIGGER = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_stages": 2, "num_warps": 4}
CASE = "tma-gemm-prefetch[sm_100-64x64x32-w4-s2]"
PASSING = "tma-gemm-prefetch[sm_100-64x64x32-w16-s2]"
PASS = "tritongpu-assign-latencies"

# Until suite/cli/main.py mounts ``replay``, drive it through the same parser and error handling.
DRIVER = """
import argparse, sys
from suite.cli import main as cli, replay as replay_cli
from suite.errors import UsageError
parser = cli.build_parser()
sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
if "replay" not in sub.choices:
    replay_cli.add_parsers(sub)
try:
    sys.exit(replay_cli.cmd_replay(parser.parse_args(sys.argv[1:])))
except UsageError as exc:
    print(f"repro: error: {exc}", file=sys.stderr)
    sys.exit(2)
"""


def _mounted() -> bool:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return "replay" in sub.choices


def replay_argv(*args: str) -> list[str]:
    if _mounted():
        return [sys.executable, "-m", "suite.cli.main", "replay", *args]
    return [sys.executable, "-c", DRIVER, "replay", *args]


def replay_cmd(*args: str, timeout: float = 900) -> Completed:
    if _mounted():
        return repro_cli("replay", *args, timeout=timeout)
    proc = subprocess.run(
        replay_argv(*args), capture_output=True, text=True, cwd=ROOT, timeout=timeout
    )
    return Completed(proc.returncode, proc.stdout, proc.stderr)


def nonblank(path: Path) -> int:
    return len([line for line in path.read_text().splitlines() if line.strip()])


def run_script(python: str | Path, script: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [str(python), str(script), *args], capture_output=True, text=True, env=env, timeout=300
    )


# ---------------------------------------------------------------------------------------------
# Pure parts: reproducer files, pipelines, mapping, diagnostics, the IR model, lit tests.
# ---------------------------------------------------------------------------------------------

LOCAL_350 = """module {
  tt.func @f() {
    tt.return
  }
}

{-#
  external_resources: {
    mlir_reproducer: {
      pipeline: "builtin.module(tritongpu-assign-latencies{num-stages=2})",
      disable_threading: true,
      verify_each: true
    }
  }
#-}
"""


def test_split_reproducer_and_local_pipeline():
    ir, pipeline = split_reproducer(LOCAL_350)
    assert "{-#" not in ir and ir.rstrip().endswith("}")
    anchor, passes = parse_pipeline(pipeline)
    assert anchor == "builtin.module"
    assert [(p.name, p.options) for p in passes] == [(PASS, {"num-stages": "2"})]
    assert pass_flag(passes[0]) == "-tritongpu-assign-latencies=num-stages=2"


def test_stage_pipeline_with_spaces_and_many_options():
    text = (
        "any(convert-triton-to-tritongpu{enable-source-remat=false num-ctas=1 num-warps=4 "
        "target=cuda:100 threads-per-warp=32},tritongpu-coalesce,canonicalize{  "
        "max-iterations=10 max-num-rewrites=-1 region-simplify=normal}, "
        "tritongpu-pipeline{dump-intermediate-steps=false num-stages=2})"
    )
    anchor, passes = parse_pipeline(text)
    assert anchor == "any"
    assert [p.name for p in passes] == [
        "convert-triton-to-tritongpu",
        "tritongpu-coalesce",
        "canonicalize",
        "tritongpu-pipeline",
    ]
    assert passes[0].options["target"] == "cuda:100"
    assert passes[2].options["max-num-rewrites"] == "-1"
    assert pass_flag(passes[3]) == (
        '-tritongpu-pipeline="dump-intermediate-steps=false num-stages=2"'
    )


def test_normalized_names_match_where_they_can():
    assert normalize_name("tritongpu-assign-latencies") == normalize_name("add_assign_latencies")
    assert normalize_name("triton-licm") == normalize_name("add_licm")
    assert normalize_name("cse") == normalize_name("add_cse")
    assert normalize_name("canonicalize") != normalize_name("add_canonicalizer")  # an alias


def _entry(path, name, params=(), options=None):
    return Binding.from_json(
        {"path": path, "pass": name, "params": list(params), "options": options or {}}
    )


def test_map_passes_by_probe_by_name_and_missing():
    table = [
        _entry(
            "passes.ttgpuir.add_assign_latencies",
            PASS,
            [{"kind": "int", "option": "num-stages"}],
            {"num-stages": "1000"},
        ),
        _entry(
            "passes.common.add_canonicalizer",
            "canonicalize",
            options={"max-iterations": "10", "top-down": "true"},
        ),
        Binding("passes.common.add_cse", params=()),
    ]
    passes = [
        PassSpec(PASS, {"num-stages": "3"}, f"{PASS}{{num-stages=3}}"),
        PassSpec("canonicalize", {"max-iterations": "5"}, "canonicalize{max-iterations=5}"),
        PassSpec("cse", {}, "cse"),
        PassSpec("tritongpu-no-such-pass", {}, "tritongpu-no-such-pass"),
    ]
    mapped, missing = map_passes(passes, table)
    assert [m.call for m in mapped] == [
        "passes.ttgpuir.add_assign_latencies(pm, 3)",
        "passes.common.add_canonicalizer(pm)",
        "passes.common.add_cse(pm)",
    ]
    assert mapped[0].how == "probe" and mapped[2].how == "name"
    # An option the binding cannot set is reported, not silently dropped.
    assert any("max-iterations=5" in note for note in mapped[1].notes)
    assert missing == ["tritongpu-no-such-pass"]


@pytest.mark.venv
def test_the_probe_builds_an_int_that_the_binding_writes_as_a_union(tmp_path):
    """3.7.0-3.8.0's bindings write an int argument as ``typing.SupportsInt |
    typing.SupportsIndex``: read as an object the probe could not build, AssignLatencies
    mapped to ``add_assign_latencies(pm, None())`` (the 3.8.0 lane). Under 3.7.1 the probe
    builds it and ties it to the pass's option."""
    _, table = probe(venv_python("3.7.1"), tmp_path)
    (binding,) = [b for b in table if b.path == "passes.ttgpuir.add_assign_latencies"]
    assert binding.error is None and binding.pass_key == PASS, binding
    assert [(p.kind, p.option) for p in binding.params] == [("int", "num-stages")]


def test_a_nested_group_maps_pass_by_pass():
    table = [
        _entry("amd.passes.ttgpuir.add_a", "tt.func(tritonamdgpu-a)"),
        _entry("amd.passes.ttgpuir.add_b", "tt.func(tritonamdgpu-b)"),
    ]
    _, passes = parse_pipeline("builtin.module(tt.func(tritonamdgpu-a, tritonamdgpu-b))")
    mapped, missing = map_passes(passes, table)
    assert missing == []
    assert [m.binding for m in mapped] == ["amd.passes.ttgpuir.add_a", "amd.passes.ttgpuir.add_b"]
    assert [m.spec.text for m in mapped] == ["tt.func(tritonamdgpu-a)", "tt.func(tritonamdgpu-b)"]


def test_parse_diagnostic_keys_on_pass_and_messages():
    stderr = (
        "/x/before.mlir:8:1: error: A signal was caught while processing the MLIR module:"
        "reproducer generated at `std::errs`; marking pass as failed\n"
        "/x/before.mlir:8:1: error: Failures have been detected while processing an MLIR "
        "pass pipeline\n"
        "/x/before.mlir:8:1: note: Pipeline failed while executing [`TritonGPUAssignLatencies` "
        "on 'builtin.module' operation]: reproducer generated at `std::errs`\n"
    )
    diagnostic = parse_diagnostic(stderr)
    assert diagnostic.pass_name == "TritonGPUAssignLatencies"
    assert diagnostic.crashed
    assert diagnostic.specific == []
    other = parse_diagnostic(stderr.replace("/x/before.mlir:8:1", "/y/cand.mlir:3:1"))
    assert other.key == diagnostic.key
    located = parse_diagnostic("/y/c.mlir:12:5: error: operand #0 does not dominate its use\n")
    assert located.specific[0].line == 12
    assert located.key != diagnostic.key


IR = """#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func @f(%arg0: i32, %arg1: i32) {
    %c0 = arith.constant 0 : i32
    %0 = arith.addi %arg0, %c0 : i32
    %1:2 = scf.for %i = %c0 to %arg0 step %arg0 iter_args(%a = %0, %b = %c0) -> (i32, i32)  : i32 {
      %2 = arith.cmpi slt, %a, %b : i32
      %3 = scf.if %2 -> (i32) {
        scf.yield %a : i32
      } else {
        scf.yield %b : i32
      }
      scf.yield %3, %b : i32, i32
    }
    tt.return
  }
}
"""


def test_ir_text_reads_ops_regions_and_values():
    ir = IRText(IR)
    names = [op.name for op in ir.ops]
    assert names == [
        "module",
        "tt.func",
        "arith.constant",
        "arith.addi",
        "scf.for",
        "arith.cmpi",
        "scf.if",
        "scf.yield",
        "scf.yield",
        "scf.yield",
        "tt.return",
    ]
    loop = ir.ops[4]
    assert loop.slots == ["%1#0", "%1#1"] and not ir.used(loop)
    assert loop.block_args == ["%i", "%a", "%b"]
    branch = ir.ops[6]
    assert len(branch.regions) == 2 and ir.used(branch)
    assert "#blocked" in ir.aliases
    values = {v.token: v for v in ir.values({"4": ["i32"], "5": ["i32"], "6": ["i32", "i32"]})}
    assert values["%arg0"].type == "i32" and values["%arg0"].kind == "func-arg"
    assert values["%a"].type == "i32" and values["%i"].type == "i32"


def _subject(tmp_path: Path) -> ReplayCase:
    result = CaseResult(CASE, "tma-gemm-prefetch", "sm_100", TRIGGER, Outcome.COMPILER_ERROR)
    return ReplayCase(result, safe_name(CASE), {}, [], sys.executable, "3.5.0")


def test_lit_test_uses_verify_diagnostics_for_located_errors(tmp_path):
    from suite.replay.bindings import Mapped

    step = Mapped(PassSpec(PASS, {"num-stages": "2"}, f"{PASS}{{num-stages=2}}"), "b", [], [], "")
    diagnostic = Diagnostic(
        errors=[DiagnosticLine("x.mlir", 5, "operand #0 does not dominate its use")],
        pass_name="TritonGPUAssignLatencies",
    )
    flag = "-tritongpu-assign-latencies=num-stages=2"
    text = lit_test(IR, step, flag, diagnostic, "3.5.0", _subject(tmp_path))
    lines = text.splitlines()
    assert lines[0] == (
        "// RUN: triton-opt %s -split-input-file -tritongpu-assign-latencies=num-stages=2 "
        "-verify-diagnostics"
    )
    marker = lines.index("    // expected-error @+1 {{operand #0 does not dominate its use}}")
    assert lines[marker + 1].strip().startswith("%0 = arith.addi")


def test_lit_test_for_a_crash_is_a_regression_test(tmp_path):
    from suite.replay.bindings import Mapped

    step = Mapped(PassSpec(PASS, {"num-stages": "2"}, f"{PASS}{{num-stages=2}}"), "b", [], [], "")
    diagnostic = Diagnostic(pass_name="TritonGPUAssignLatencies", crashed=True)
    flag = "-tritongpu-assign-latencies=num-stages=2"
    text = lit_test(IR, step, flag, diagnostic, "3.5.0", _subject(tmp_path))
    assert text.startswith(
        "// RUN: triton-opt %s -split-input-file -tritongpu-assign-latencies=num-stages=2 "
        "| FileCheck %s\n"
    )
    assert "// CHECK-LABEL: @f" in text and "// CHECK: tt.return" in text
    assert "TritonGPUAssignLatencies crashes" in text


def test_choose_reproducer_takes_the_failing_stage(tmp_path):
    names = ["mlir-reproducer.make_ttir.repro.mlir", "mlir-reproducer.make_ttgir.repro.mlir"]
    files = [tmp_path / n for n in names]
    assert choose_reproducer(files, "ttgir").name == names[1]
    assert choose_reproducer(files, None).name == names[1]
    assert choose_reproducer(files[:1], "ttgir") == files[0]


# ---------------------------------------------------------------------------------------------
# Bad input, and an unmapped pass (installed Triton).
# ---------------------------------------------------------------------------------------------


def _fake_run(tmp_path: Path, reproducer_text: str | None, outcome=Outcome.COMPILER_ERROR) -> Path:
    store = RunStore.create(tmp_path / "out", {"fake": True})
    artifacts = {}
    if reproducer_text is not None:
        case_dir = store.case_dir("fake[sm_100]")
        case_dir.mkdir(parents=True)
        (case_dir / "mlir-reproducer").write_text(reproducer_text)
        artifacts["mlir-reproducer"] = str(case_dir / "mlir-reproducer")
    store.append(
        CaseResult(
            "fake[sm_100]",
            "fake",
            "sm_100",
            {},
            outcome,
            Signature("compiler-error:ttgir:X") if outcome.is_failure else None,
            artifacts=artifacts,
        )
    )
    store.write_json("environment.json", {"python_executable": sys.executable})
    return store.folder


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    done = replay_cmd("no-such-finding", "-o", str(tmp_path))
    assert done.code == 2
    assert done.stderr.strip().count("\n") == 0 and "no finding or run result" in done.stderr
    folder = _fake_run(tmp_path, LOCAL_350)
    done = replay_cmd(f"{folder}:no-such-case", "-o", str(tmp_path))
    assert done.code == 2 and "no case 'no-such-case'" in done.stderr
    done = replay_cmd(f"{folder}:fake[sm_100]", "--max-tries", "0")
    assert done.code == 2 and "--max-tries" in done.stderr


def test_a_case_without_a_reproducer_has_nothing_to_replay(tmp_path):
    folder = _fake_run(tmp_path, None)
    done = replay_cmd(f"{folder}:fake[sm_100]", "-o", str(tmp_path))
    assert done.code == 2
    assert "nothing to replay" in done.stderr and "no MLIR reproducer" in done.stderr


def test_a_pass_the_release_does_not_have_is_one_line_and_exit_2(tmp_path):
    text = LOCAL_350.replace(f"{PASS}{{num-stages=2}}", "tritongpu-no-such-pass")
    folder = _fake_run(tmp_path, text)
    done = replay_cmd(f"{folder}:fake[sm_100]", "-o", str(tmp_path / "reports"))
    assert done.code == 2, done.stdout + done.stderr
    error = [line for line in done.stderr.splitlines() if line.startswith("repro: error:")]
    assert len(error) == 1
    assert "has no binding for pass tritongpu-no-such-pass" in error[0]


# ---------------------------------------------------------------------------------------------
# The installed Triton: every pass of a real stage pipeline maps, and replays exactly.
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def installed_stage_reproducer(tmp_path_factory) -> Path:
    """The make_ttgir reproducer the installed Triton writes for the sm_100 case (it passes)."""
    from suite.engine.discover import select
    from suite.engine.expand import expand_cases
    from suite.engine.runner import Execution, run_case

    folder = tmp_path_factory.mktemp("installed") / "case"
    (spec,) = expand_cases(select(["tma-gemm-prefetch"]), ["sm_100"], configs=[TRIGGER])
    result = run_case(spec, folder, Execution(keep_passing=True))
    files = sorted(folder.glob("mlir-reproducer*.make_ttgir.repro.mlir"))
    if not files:
        pytest.skip(f"the installed triton wrote no per-stage reproducer ({result.outcome})")
    return folder


def test_every_pass_of_a_real_stage_pipeline_maps(installed_stage_reproducer, tmp_path):
    (path,) = installed_stage_reproducer.glob("*.make_ttgir.repro.mlir")
    _, pipeline = split_reproducer(path.read_text())
    _, passes = parse_pipeline(pipeline)
    _, table = probe(sys.executable, tmp_path)
    mapped, missing = map_passes(passes, table)
    assert missing == []
    assert len(mapped) == len(passes) > 20
    calls = {m.spec.name: m.call for m in mapped}
    assert calls[PASS] == "passes.ttgpuir.add_assign_latencies(pm, 2)"
    assert calls["tritongpu-F32DotTC"].startswith("passes.ttgpuir.add_f32_dot_tc(pm")
    assert calls["canonicalize"] == "passes.common.add_canonicalizer(pm)"


@pytest.mark.slow
def test_a_stage_replayed_pass_by_pass_gives_triton_s_ir(installed_stage_reproducer, tmp_path):
    """No pass fails (exit 1), and the IR after the last pass is what make_llir was given."""
    files = sorted(installed_stage_reproducer.glob("mlir-reproducer*"))
    subject = _subject(tmp_path)
    subject.python, subject.recorded_triton = sys.executable, None
    subject.reproducers = files
    subject.result = replace(subject.result, site=replace(subject.result.site, stage="ttgir"))
    done = replay(subject, tmp_path / "out")
    assert done.exit_status == 1
    assert "no pass failed" in done.lines[0]
    assert all(step["status"] == "ok" for step in done.record["scan"])
    (llir,) = installed_stage_reproducer.glob("*.make_llir.repro.mlir")
    expected, _ = split_reproducer(llir.read_text())
    assert (tmp_path / "out" / "after-all.mlir").read_text().strip() == expected.strip()


# ---------------------------------------------------------------------------------------------
# Triton 3.5.0: the AssignLatencies bug.
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_350(prefetch_run_350, tmp_path_factory) -> tuple[Path, Path]:
    """A real ``repro run`` of tma-gemm-prefetch on sm_100 under 3.5.0 (the session's, only
    read here) and an output root of the module's own for what the replays write."""
    done = prefetch_run_350.done
    assert done.code == 0, done.stdout + done.stderr
    return tmp_path_factory.mktemp("replay350"), prefetch_run_350.run


@pytest.mark.venv
def test_replay_names_assign_latencies_and_writes_its_files(run_350, triton_350):
    out, run = run_350
    done = replay_cmd(f"{run}:{CASE}", "-o", str(out / "reports"))
    assert done.code == 0, done.stdout + done.stderr
    assert "first failing pass: tritongpu-assign-latencies (TritonGPUAssignLatencies)" in (
        done.stdout
    )
    folder = out / "reports" / safe_name(CASE)
    record = json.loads((folder / "replay.json").read_text())
    first = record["first_failing"]
    assert first["pass_name"] == "TritonGPUAssignLatencies"
    assert first["call"] == "passes.ttgpuir.add_assign_latencies(pm, 2)"
    assert record["confirmed"] and record["triton"] == "3.5.0"
    assert first["diagnostic"]["crashed"]
    assert record["reproducer"]["passes"] == 1  # 3.5.0 writes the failing pass only
    before = folder / f"before-{PASS}.mlir"
    assert before.is_file() and "{-#" not in before.read_text()
    lit = (folder / f"{PASS}.mlir").read_text()
    assert lit.startswith(
        f"// RUN: triton-opt %s -split-input-file -{PASS}=num-stages=2 | FileCheck %s\n"
    )
    assert "// CHECK-LABEL: @gemm_prefetch" in lit


def unparsing_python() -> str:
    """An interpreter whose Triton cannot parse 3.5.0's IR (3.9.0: the running one, if so)."""
    return venv_python("3.9.0")


@pytest.mark.venv
def test_replay_py_fails_under_350_and_refuses_ir_it_cannot_parse(run_350, triton_350):
    out, run = run_350
    folder = out / "reports" / safe_name(CASE)
    if not (folder / "replay.py").exists():
        assert replay_cmd(f"{run}:{CASE}", "-o", str(out / "reports")).code == 0
    script = folder / "replay.py"
    bad = run_script(triton_350, script)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "failed under triton 3.5.0: the bug reproduces" in bad.stdout
    here = run_script(unparsing_python(), script)
    assert here.returncode == 2, here.stdout + here.stderr
    (line,) = here.stdout.splitlines()
    assert "does not parse under triton" in line and "captured under triton 3.5.0" in line


@pytest.mark.venv
def test_replay_under_a_release_where_the_ir_does_not_parse_is_exit_2(run_350):
    out, run = run_350
    done = replay_cmd(f"{run}:{CASE}", "--python", unparsing_python(), "-o", str(out / "other"))
    assert done.code == 2
    assert "does not parse under triton" in done.stderr
    assert "captured under triton 3.5.0" in done.stderr


@pytest.mark.slow
@pytest.mark.venv
def test_reduced_ir_still_fails_and_is_at_most_half(run_350, triton_350):
    out, run = run_350
    reports = out / "reduced"
    started = time.monotonic()
    done = replay_cmd(f"{run}:{CASE}", "-o", str(reports), "--reduce", "--time-budget", "500")
    assert done.code == 0, done.stdout + done.stderr
    folder = reports / safe_name(CASE)
    before, reduced = folder / f"before-{PASS}.mlir", folder / f"reduced-{PASS}.mlir"
    record = json.loads((folder / "replay.json").read_text())["reduction"]
    assert nonblank(reduced) * 2 <= nonblank(before), reduced.read_text()
    assert record["lines_after"] == nonblank(reduced)
    assert record["ops_after"] < record["ops_before"]
    still = run_script(triton_350, folder / "replay.py", str(reduced))
    assert still.returncode == 1, still.stdout + still.stderr
    # The lit test is built on the reduced IR.
    lit = (folder / f"{PASS}.mlir").read_text().splitlines()
    body = [line for line in lit if line.strip() and not line.strip().startswith("//")]
    assert body == [line for line in reduced.read_text().splitlines() if line.strip()]
    print(f"reduction: {record} ({time.monotonic() - started:.1f} s)")


@pytest.mark.venv
def test_sigint_keeps_the_best_reduction(run_350, triton_350):
    out, run = run_350
    reports = out / "interrupted"
    folder = reports / safe_name(CASE)
    before, reduced = folder / f"before-{PASS}.mlir", folder / f"reduced-{PASS}.mlir"
    proc = subprocess.Popen(
        replay_argv(f"{run}:{CASE}", "-o", str(reports), "--reduce"),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if reduced.exists() and before.exists() and nonblank(reduced) < nonblank(before) - 2:
                break
            time.sleep(0.2)
        else:
            pytest.fail("no reduction step within 240 s")
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stdout + stderr
    assert "interrupted" in stdout
    record = json.loads((folder / "replay.json").read_text())["reduction"]
    assert record["interrupted"] and record["stopped_by"] == "interrupted"
    assert nonblank(reduced) < nonblank(before)
    assert run_script(triton_350, folder / "replay.py", str(reduced)).returncode == 1


@pytest.mark.venv
def test_a_passing_case_has_nothing_to_replay(run_350):
    out, run = run_350
    done = replay_cmd(f"{run}:{PASSING}", "-o", str(out / "reports"))
    assert done.code == 2
    assert "nothing to replay" in done.stderr and "passed" in done.stderr
    assert not (out / "reports" / safe_name(PASSING)).exists()


def _finding(out: Path, python: str, triton: str) -> Path:
    from suite.failures.findings import DirectoryFindingsStore, Finding

    finding = Finding(
        repro="tma-gemm-prefetch",
        signature="compiler-error:ttgir:TritonGPUAssignLatencies",
        kind="bug",
        outcome="compiler-error",
        message="ttgir: pass TritonGPUAssignLatencies failed",
        target="sm_100",
        targets=["sm_100"],
        minimal_config=dict(TRIGGER),
        failing_configs=[],
        passing_neighbours=[],
        boundary=[],
        environment={"python_executable": python, "triton": triton},
        seed=None,
        first_seen="2026-11-22T00:00:00Z",
        last_seen="2026-11-22T00:00:00Z",
    )
    DirectoryFindingsStore(out / "findings").put(finding)
    (path,) = (out / "findings").glob("*.json")
    return path


@pytest.mark.venv
def test_a_finding_is_run_again_to_capture_its_reproducer(triton_350, tmp_path):
    path = _finding(tmp_path, str(triton_350), "3.5.0")
    done = replay_cmd(path.stem, "-o", str(tmp_path))
    assert done.code == 0, done.stdout + done.stderr
    assert "re-ran the minimal config" in done.stderr
    record = json.loads((tmp_path / path.stem / "replay.json").read_text())
    assert record["first_failing"]["pass_name"] == "TritonGPUAssignLatencies"


def test_a_finding_that_passes_where_it_runs_has_nothing_to_replay(tmp_path):
    import triton
    from packaging.version import Version

    if Version(triton.__version__.split("+")[0]) < Version("3.6.0"):
        pytest.skip("the installed triton still has the AssignLatencies bug")
    path = _finding(tmp_path, sys.executable, triton.__version__)
    done = replay_cmd(str(path), "-o", str(tmp_path))
    assert done.code == 2
    assert "nothing to replay" in done.stderr and "passed" in done.stderr


GENERATE_STAGE = """
import sys
from pathlib import Path
from triton._C.libtriton import ir
from suite.api import Case, Target
from suite.engine.child import load_reproducers

out = Path(sys.argv[2])
original = ir.pass_manager.run
stages = iter(["make_ttir", "make_ttgir", "make_llir"])

def run(self, mod, *rest):
    name = rest[0] if rest else next(stages)
    block = ('{-#\\n  external_resources: {\\n    mlir_reproducer: {\\n      pipeline: "'
             + self.get_pipeline_str() + '",\\n      disable_threading: false,\\n'
             '      verify_each: true\\n    }\\n  }\\n#-}\\n')
    (out.parent / f"{out.name}.{name}.repro.mlir").write_text(mod.str_nodebug() + "\\n" + block)
    return original(self, mod, *rest)

ir.pass_manager.run = run
(repro,) = load_reproducers({"path": sys.argv[1]})
config = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_stages=2, num_warps=4)
try:
    repro.compile_fn(Case(repro.id, config, Target("sm_100"), False))
except RuntimeError:
    pass
"""


@pytest.mark.venv
def test_a_whole_stage_reproducer_finds_the_pass_inside_the_stage(triton_350, tmp_path):
    """Newer releases write the whole stage's pipeline; under 3.5.0 we write one the same way
    (the stage's pm.run recorded before it runs) and replay it pass by pass."""
    folder = tmp_path / "case"
    folder.mkdir()
    env = child_env({"TRITON_CACHE_DIR": str(tmp_path / "cache"), "TRITON_ALWAYS_COMPILE": "1"})
    env.pop("TRITON_REPRODUCER_PATH", None)
    subprocess.run(
        [
            str(triton_350),
            "-c",
            GENERATE_STAGE,
            str(ROOT / "repros" / "tma_gemm_prefetch.py"),
            str(folder / "mlir-reproducer"),
        ],
        check=True,
        env=env,
        timeout=300,
        capture_output=True,
    )
    subject = _subject(tmp_path)
    subject.python = str(triton_350)
    subject.reproducers = sorted(folder.glob("mlir-reproducer*"))
    subject.result = replace(subject.result, site=replace(subject.result.site, stage="ttgir"))
    done = replay(subject, tmp_path / "out")
    assert done.exit_status == 0, done.lines
    first = done.record["first_failing"]
    assert first["pass_name"] == "TritonGPUAssignLatencies"
    assert first["pass"] == PASS and first["index"] > 10 and first["of"] > first["index"]
    assert [s["status"] for s in done.record["scan"]][:-1] == ["ok"] * (first["index"] - 1)
