"""What a child and its parent say to each other: each side refuses a line it cannot read
instead of crashing on it (the warm template's pipes, the gate's GPU child, the replay child);
and the environment, typed, reading its recorded files back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from suite.children import Role, child_argv
from suite.engine.environment import Environment, capture_environment
from suite.engine.isolate import Bounds
from suite.engine.protocol import (
    ChildReport,
    ChildSpec,
    Exited,
    Fork,
    Forked,
    Ready,
    Refused,
    TemplateMessage,
    read_request,
)
from suite.engine.shim import child_env
from suite.engine.warm import Template, run_warm
from suite.engine.wire import Unreadable
from suite.failures.findings import Finding
from suite.gate.events import Begin, Done, GateEvent, GpuSpec, Prior, SpecItem, Start, Timed
from suite.gate.gpu import GpuEvents, GpuRun
from suite.replay.bindings import Binding
from suite.replay.passes import ProbeReader, ir_types, probe
from suite.replay.protocol import (
    PassPlan,
    Probed,
    Probing,
    ReplayMessage,
    TypesSaid,
    Version,
)

PASSING = """
from suite import Choice, Compiled, Reproducer

REPRO = Reproducer(
    id="protocol-passing",
    title="A case that compiles nothing and passes",
    family="test",
    params=(Choice("tag", (0,)),),
    configs={"all": [{"tag": 0}]},
    targets=("sm_90",),
    label="{tag}",
)


@REPRO.compile
def compile_case(case):
    return Compiled(shared_bytes=0)
"""

# Imported by the template before it says it is ready: writes a foreign line on every pipe
# it may write to (its answers pipe among them), as a stray reproducer file could.
STRAY_WRITER = """
import os

for fd in os.listdir("/proc/self/fd"):
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
        flags = int(open(f"/proc/self/fdinfo/{fd}").read().split("flags:")[1].split()[0], 8)
    except (OSError, IndexError, ValueError):
        continue
    if target.startswith("pipe:") and flags & 3 == os.O_WRONLY:
        os.write(int(fd), b'not json\\n{"event": "forked", "id": "seven"}\\n')
"""


@pytest.mark.parametrize(
    "line",
    [
        b"not json at all\n",
        b"[1, 2, 3]\n",
        b'{"event": "start"}\n',  # an event of a case's child: another dialect
        b'{"event": "launch-rockets"}\n',
        b'{"event": "forked", "id": 3}\n',  # pid missing
        b'{"event": "forked", "id": 3, "pid": "12"}\n',
        b'{"event": "exited", "pid": 12, "code": true}\n',
        b'{"event": "fork", "id": 1, "spec": "s", "env": {"A": 1}, "cwd": "/",'
        b' "stdout": "o", "stderr": "e"}\n',  # an environment value that is no string
        b'{"event": "ready", "pid": 5, "failed_warm_up": ["90"]}\n',
        b"\xff\xfe\n",
    ],
)
def test_a_malformed_or_foreign_message_is_unreadable(line):
    with pytest.raises(Unreadable):
        TemplateMessage.from_line(line)
    assert isinstance(read_request(line), Refused)


def test_every_message_reads_back_as_itself():
    for message in (
        Fork(1, "/x/spec.json", {"A": "b"}, "/x", "/x/1.out", "/x/1.err"),
        Ready(42, [90, 100]),
        Forked(1, 43),
        Exited(43, -9),
        Refused("not JSON", None),
        Refused("a forked message is no request", 7),
    ):
        assert TemplateMessage.from_line(message.line()) == message
    assert read_request(Forked(7, 43).line().encode()) == Refused(
        "a forked message is no request", 7
    )


def test_the_warm_template_refuses_foreign_lines_and_keeps_serving(tmp_path):
    repro = tmp_path / "passing.py"
    repro.write_text(PASSING)
    stray = tmp_path / "stray.py"
    stray.write_text(STRAY_WRITER)
    template = Template(sys.executable, child_env(), preload=[str(stray), str(repro)])
    try:
        # The parent skipped the stray lines before the ready message and noted them.
        assert any("not JSON" in line for line in template.unreadable), template.unreadable
        assert any("forked" in line for line in template.unreadable), template.unreadable
        # Lines the template cannot take as a request: refused, and it serves on.
        template._stdin.write(b"garbage\n" + Exited(1, 0).line().encode() + b'{"event": "fork"}\n')
        template._stdin.flush()
        case = tmp_path / "case"
        case.mkdir()
        report_path = str(case / "events.jsonl")
        spec = ChildSpec(
            {"path": str(repro)}, "protocol-passing", {"tag": 0}, "sm_90", False, report_path
        )
        (case / "spec.json").write_text(spec.to_json())
        ended = run_warm(
            template, str(case / "spec.json"), child_env(), str(case), Bounds(timeout_s=120)
        )
        assert ended.returncode == 0, ended.stderr.text
        assert template.alive
        report = ChildReport.read(case / "events.jsonl")
        assert report.done and report.compiled is not None and not report.unreadable
    finally:
        template.close()


def test_a_child_report_with_an_ill_typed_event_is_unreadable(tmp_path):
    events = tmp_path / "events.jsonl"
    lines = [{"event": "start", "python": "3.12"}, {"event": "phase", "phase": 7}, "torn"]
    events.write_text("\n".join(json.dumps(line) for line in lines) + '\n{"event": "do')
    report = ChildReport.read(events)
    assert report.start is not None and report.unreadable and report.phase == "load"


def test_the_events_path_of_nothing_reads_as_no_events(tmp_path):
    report = ChildReport.read(Path(tmp_path / "missing.jsonl"))
    assert not report.any_event and report.phase == "start"


GOOD_SPEC = GpuSpec(
    source={"module": "repros.none"},
    kernel="gemm",
    events="events.jsonl",
    sizes=[[512, 512, 512]],
    check_shapes=[[512, 512, 512]],
    items=[SpecItem("k1", {"BLOCK_M": 64}, "both")],
    prior={"k1": Prior(screen=1.5, checked=True)},
    deadline=None,
)


def test_the_gate_spec_reads_back_and_refuses_a_malformed_one():
    assert GpuSpec.from_json(GOOD_SPEC.to_json()) == GOOD_SPEC
    good = json.loads(GOOD_SPEC.to_json())
    for broken in (
        "{not json",
        "[]",
        json.dumps({**good, "items": [{"key": "k1", "config": {}}]}),  # kind missing
        json.dumps({**good, "items": "k1"}),
        json.dumps({**good, "sizes": [["512", 512, 512]]}),
        json.dumps({**good, "prior": {"k1": {"screen": "fast"}}}),
        json.dumps({k: v for k, v in good.items() if k != "kernel"}),
    ):
        with pytest.raises(Unreadable):
            GpuSpec.from_json(broken)


def test_the_gate_child_refuses_a_malformed_spec_in_one_line(tmp_path):
    spec = tmp_path / "spec-1.json"
    spec.write_text(json.dumps({"kernel": "gemm", "items": [{"key": 1}]}))
    done = subprocess.run(
        child_argv(sys.executable, Role.GATE_GPU, str(spec)),
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "refused" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_gate_parent_skips_ill_typed_events_and_says_so(tmp_path):
    events = tmp_path / "events-1.jsonl"
    lines: list[GateEvent | str] = [
        Start(device="H100", capability=[9, 0], seed=1),
        Begin(key="k1", stage="check"),
        json.dumps({"event": "time", "key": "k1", "size": [512, 512, 512], "ms": "fast"}),
        json.dumps({"event": "check", "key": "k1", "stage": "check", "ok": "yes"}),
        json.dumps({"event": "a-future-event", "key": "k1"}),
        Timed(key="k1", size=[512, 512, 512], input_set=0, ms=0.25),
        Done(),
    ]
    events.write_text("".join(x.line() if isinstance(x, GateEvent) else x + "\n" for x in lines))
    run = GpuRun("sm_90")
    seen = GpuEvents(run).feed(events)
    assert seen.done and run.device is not None and run.device.device == "H100"
    assert run.measured["k1"].times == {"512x512x512": [0.25]}
    assert not run.measured["k1"].checked  # the ill-typed check was not taken as a pass
    assert run.notes == ["2 unreadable event(s) from the GPU child skipped"]


def test_a_replay_pass_plan_reads_back_and_a_malformed_one_is_refused():
    plan = PassPlan("passes.ttgpuir.add_pipeline", [{"kind": "int", "value": 3}], "tritongpu-x")
    assert PassPlan.from_json(plan.to_json()) == plan
    assert plan.binding_args[0].value == 3
    for broken in (
        "",
        '{"binding": 7, "args": [], "pass": "x"}',
        '{"binding": "b", "args": [{"value": 3}], "pass": "x"}',  # an argument with no kind
        '{"binding": "b", "args": {}, "pass": "x"}',
        '{"args": [], "pass": "x"}',
    ):
        with pytest.raises(Unreadable):
            PassPlan.from_json(broken)


def test_the_replay_child_refuses_a_malformed_plan_with_exit_2(tmp_path):
    plan = tmp_path / "pass.json"
    plan.write_text('{"binding": "passes.common.add_cse", "args": "none"}')
    done = subprocess.run(
        child_argv(sys.executable, Role.REPLAY, "run", str(tmp_path / "x.mlir"), str(plan)),
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "refused" in done.stderr and "Traceback" not in done.stderr


def test_a_probe_file_with_torn_and_foreign_lines_reads_what_it_can():
    good = Binding("passes.common.add_cse", pass_key="cse", params=())
    text = "".join(
        [
            Version("3.9.0").line(),
            "a warning some library printed\n",
            Probing("passes.common.add_cse").line(),
            Probed(good.to_json()).line(),
            Probing("passes.common.add_bad").line(),
            Probed({"pass": "no path"}).line(),  # ill-formed binding: skipped
            '{"event": "probed", "binding": ',  # torn: the probe died mid-line
        ]
    )
    table: dict[str, Binding] = {}
    seen = ProbeReader(table).feed(text)
    assert seen.version == "3.9.0" and not seen.done
    assert table == {good.path: good}
    assert seen.current == "passes.common.add_bad"  # the binding to blame and skip


@pytest.mark.triton(">=3.3")  # the probe reads get_pipeline_str: none before 3.3
def test_the_replay_child_s_answers_read_back(tmp_path):
    """A real probe under the installed Triton; the ``types`` answer's line reads back."""
    version, table = probe(sys.executable, tmp_path)
    assert version != "unknown" and any(b.pass_key for b in table)
    said = TypesSaid(2, {"3": ["i32"]})
    assert ReplayMessage.from_line(said.line()) == said
    with pytest.raises(Unreadable):
        ReplayMessage.from_line('{"event": "types", "ops": "2", "results": {}}')


# The child reads an op's line from its result's location (value.get_loc), a binding first
# in 3.5.0: under 3.3.x and 3.4.0 it prints no result types (the reducer's "replace" pass
# then finds no typed value to stand in).
@pytest.mark.triton(">=3.5")
def test_the_replay_child_s_types_query_names_each_lines_result_types(tmp_path):
    """A real ``types`` query under the installed Triton."""
    ir = tmp_path / "m.mlir"
    ir.write_text(
        "module {\n  tt.func @f(%a: i32) -> i32 {\n    %b = arith.addi %a, %a : i32\n"
        "    tt.return %b : i32\n  }\n}\n"
    )
    types = ir_types(sys.executable, ir)
    assert types is not None and types.ops == 4 and types.results == {"3": ["i32"]}


# ---------------------------------------------------------------------- the environment

ROOT = Path(__file__).resolve().parent.parent


def _is_finding(path: Path) -> bool:
    record = json.loads(path.read_text())
    return isinstance(record, dict) and {"repro", "environment", "signature"} <= set(record)


RECORDED_FINDINGS = sorted(
    p
    for p in [*(ROOT / "tests" / "data").glob("**/*.json"), *(ROOT / "docs").glob("**/*.json")]
    if _is_finding(p)
)


@pytest.mark.parametrize("path", RECORDED_FINDINGS, ids=lambda p: p.stem)
def test_a_recorded_finding_s_environment_reads_back(path):
    record = json.loads(path.read_text())
    finding = Finding.from_json(record)
    assert isinstance(finding.environment, Environment)
    assert finding.environment.triton == record["environment"]["triton"]
    written = finding.to_json()["environment"]
    # Every recorded fact is kept; a fact the record lacks is written as unknown.
    assert {k: written[k] for k in record["environment"]} == record["environment"]
    assert all(written[k] in (None, "", {}, []) for k in set(written) - set(record["environment"]))
    assert Finding.from_json(json.loads(json.dumps(finding.to_json()))) == finding


def test_the_probed_environment_reads_back_as_itself():
    captured = capture_environment(sys.executable)
    assert captured.triton and captured.python_executable
    assert Environment.from_json(json.loads(json.dumps(captured.to_json()))) == captured


def test_an_ill_typed_environment_is_refused():
    for broken in ([], {"triton": 3.5}, {"gpu_arch": "90"}, {"gpus": [{"name": 1}]}):
        with pytest.raises(Unreadable):
            Environment.from_json(broken)
    record = json.loads(RECORDED_FINDINGS[0].read_text())
    with pytest.raises(TypeError):
        Finding.from_json({**record, "environment": {"triton": ["3.5.0"]}})
