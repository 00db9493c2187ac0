"""``repro gate``: static checks with real compiles, the autotune-file reader, bad input,
the rendered report, the GPU side's protocol (through a fake child), and on a GPU the
real thing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from suite.errors import UsageError
from suite.gate import gate, gpu, inputs
from suite.gate import report as gate_report
from suite.gate.decide import ProposalOutcome
from tests.conftest import ROOT, gpu_visible, triton_release
from tests.test_cli_output import check_json, schemas

BENCH = ROOT / "bench" / "gate"
#: A copy kernel whose BLOCK=128 compiles, BLOCK=256 is unsupported, BLOCK=96 is refused.
COPY_KERNEL = ROOT / "tests" / "data" / "gate_copy.py"
CURRENT = BENCH / "seed003-current.yaml"
PROPOSED = BENCH / "seed003-proposed.yaml"
AUTOTUNE = BENCH / "seed003_autotune.py"
SHARED_LIMIT_SM90 = 232448
TABLE_HEADER = "| role | config | verdict | shared | registers | spills | reason |"
#: The gated kernels make TMA descriptors in the kernel: tl.make_tensor_descriptor, new in
#: Triton 3.4 (before it, each config is `unsupported`, and the gate has nothing to check).
DESCRIPTORS = pytest.mark.triton(">=3.4")
NO_DESCRIPTORS = pytest.mark.triton("<3.4")


def gate_cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """The real command in a fresh interpreter (``python -m suite.cli.gate`` = ``repro gate``)."""
    return subprocess.run(
        [sys.executable, "-m", "suite.cli.gate", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200"},
    )


def only_report(output: Path) -> Path:
    (folder,) = sorted((output / "gate").iterdir())
    return folder


# --------------------------------------------------------------------------- static, real compiles


@pytest.fixture(scope="module")
def static_gate(tmp_path_factory):
    out = tmp_path_factory.mktemp("gate")
    done = gate_cli(
        "--kernel",
        "tma-gemm",
        "--current",
        str(CURRENT),
        "--proposed",
        str(PROPOSED),
        "--target",
        "sm_90",
        "-o",
        str(out),
    )
    folder = only_report(out)
    return done, json.loads((folder / "gate.json").read_text()), folder


@DESCRIPTORS
def test_static_gate_rejects_the_four_that_cannot_run_on_sm_90(static_gate):
    done, report, _ = static_gate
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr
    assert report["verdict"] == "fail"
    configs = {c["label"]: c for c in report["configs"] if "proposed" in c["role"]}
    assert len(configs) == 6

    registers = configs["256x256x128-w16-s5-fp16"]
    assert registers["verdict"] == "reject"
    check = registers["static"]["sm_90"]
    assert check["outcome"] == "ptxas-error"
    assert check["signature"] == "ptxas-error:C7602"
    assert "C7602" in check["summary"] and "registers" in check["reason"].lower()
    assert check["dropped"]

    for label in ("256x128x128-w16-s4-fp16", "128x256x128-w16-s4-fp16", "128x128x128-w8-s4-fp16"):
        config = configs[label]
        assert config["verdict"] == "reject", label
        check = config["static"]["sm_90"]
        assert check["outcome"] == "resource-limit", label
        assert check["shared_bytes"] > SHARED_LIMIT_SM90, label
        assert str(SHARED_LIMIT_SM90) in check["reason"], label
        assert check["dropped"]

    for label in ("128x128x64-w8-s3-fp16", "64x64x64-w4-s2-fp16"):
        config = configs[label]
        assert config["verdict"] == "accept", (label, config["reasons"])
        check = config["static"]["sm_90"]
        assert check["status"] == "ok"
        assert check["shared_bytes"] <= SHARED_LIMIT_SM90
        assert check["registers"] and check["local_bytes"] == 0

    current = [c for c in report["configs"] if c["role"] == "current"]
    assert [c["verdict"] for c in current] == ["accept"] * 3
    dropped = {d["config"] for d in report["dropped"]}
    assert dropped == {
        "256x256x128-w16-s5-fp16",
        "256x128x128-w16-s4-fp16",
        "128x256x128-w16-s4-fp16",
        "128x128x128-w8-s4-fp16",
    }


@NO_DESCRIPTORS
def test_before_descriptors_the_seed003_gate_checks_nothing_and_does_not_pass(static_gate):
    """Before Triton 3.4 tma-gemm's every config is unsupported (no tl.make_tensor_descriptor):
    nothing is checked, so nothing may ship: exit 2, never a pass."""
    done, report, _ = static_gate
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr
    assert report["verdict"] == "unchecked" and report["exit_status"] == 2
    assert {c["verdict"] for c in report["configs"]} == {"unchecked"}
    assert {c["static"]["sm_90"]["status"] for c in report["configs"]} == {"unchecked"}
    (reason,) = report["reasons"]
    assert reason.startswith("6 of 6 proposed configs were not checked")
    assert "requires triton.language.make_tensor_descriptor" in reason
    assert done.stderr.splitlines()[-1] == f"repro: error: {reason}"
    assert "gate: unchecked (exit 2)" in done.stdout and "PASS" not in done.stdout


def _copy_gate(tmp_path: Path, proposed: str, *extra: str, kernel: Path = COPY_KERNEL):
    """The gate on the copy kernel: current BLOCK=128, proposed ``proposed`` (YAML)."""
    current, proposals = tmp_path / "current.yaml", tmp_path / "proposed.yaml"
    current.write_text("- {BLOCK: 128}\n")
    proposals.write_text(proposed)
    out = tmp_path / "out"
    done = gate_cli(
        "--kernel", str(kernel), "--current", str(current), "--proposed", str(proposals),
        "-o", str(out), *extra,
    )  # fmt: skip
    return done, json.loads((only_report(out) / "gate.json").read_text())


def _verdicts(report: dict) -> dict[str, str]:
    return {c["label"]: c["verdict"] for c in report["configs"]}


def test_a_proposed_config_the_release_cannot_check_is_unchecked_and_not_a_pass(tmp_path):
    """One proposed config compiles, the other is unsupported: the second is `unchecked`
    (never `accept`), and the gate does not pass: exit 2, one line on stderr, the report whole."""
    done, report = _copy_gate(tmp_path, "- {BLOCK: 128}\n- {BLOCK: 256}\n", "--json", "-q")
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr
    document = check_json("gate", done.stdout)
    assert document["verdict"] == "unchecked" and document["exit_status"] == 2
    verdicts = schemas()["gate"]["properties"]["verdict"]["enum"]
    assert verdicts == [o.value for o in ProposalOutcome]  # the schema lists every word
    assert document["report"] == report
    assert _verdicts(report) == {"128-w4": "accept", "256-w4": "unchecked"}
    unchecked = next(c for c in report["configs"] if c["label"] == "256-w4")
    assert unchecked["static"]["sm_90"]["status"] == "unchecked"
    assert "BLOCK=256" in unchecked["reasons"][0]
    (reason,) = report["reasons"]
    assert reason.startswith("1 of 2 proposed configs were not checked") and "256-w4" in reason
    assert done.stderr == f"repro: error: {reason}\n"  # --quiet: that line alone
    markdown = (Path(document["markdown"])).read_text()
    assert "**UNCHECKED**" in markdown and "**Why it does not pass:**" in markdown
    assert "| proposed | `256-w4` | unchecked |" in markdown


def test_a_rejected_config_fails_the_gate_though_another_is_unchecked(tmp_path):
    """A config Triton refuses is a finding (exit 1); the unchecked one is still named."""
    done, report = _copy_gate(tmp_path, "- {BLOCK: 96}\n- {BLOCK: 256}\n")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr
    assert report["verdict"] == "fail"
    assert _verdicts(report) == {"128-w4": "accept", "96-w4": "reject", "256-w4": "unchecked"}
    assert len(report["reasons"]) == 2 and "256-w4" in report["reasons"][1]
    assert "repro: error" not in done.stderr


def test_a_reproducer_whose_requires_this_release_does_not_meet_checks_nothing(tmp_path):
    """The same kernel requiring a release after the installed one: no config is checked,
    current or proposed, and the gate says so (exit 2), under every release."""
    kernel = tmp_path / "gate_copy_next.py"
    targets = '    targets=("sm_90",),\n'
    requires = f'    requires=("triton>{triton_release()}",),\n'
    assert targets in COPY_KERNEL.read_text()
    kernel.write_text(COPY_KERNEL.read_text().replace(targets, targets + requires))
    done, report = _copy_gate(tmp_path, "- {BLOCK: 128}\n", kernel=kernel)
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr
    assert report["verdict"] == "unchecked"
    (check,) = report["configs"]
    assert check["verdict"] == "unchecked"
    assert f"requires triton>{triton_release()}" in check["static"]["sm_90"]["reason"]
    assert done.stderr.splitlines()[-1].startswith("repro: error: 1 of 1 proposed configs")


def test_an_output_root_named_gate_gets_no_second_gate_folder(tmp_path):
    """``-o out/gate`` writes ``out/gate/<stamp>``, not ``out/gate/gate/<stamp>``; an earlier
    release's ``out/gate/gate/`` stays as it was."""
    out = tmp_path / "gate"
    earlier = out / "gate" / "20261122-044456"
    earlier.mkdir(parents=True)
    (earlier / "gate.json").write_text("{}")
    current = tmp_path / "current.yaml"
    current.write_text("- {BLOCK: 128}\n")  # compiles under every release
    done = gate_cli(
        "--kernel", str(COPY_KERNEL), "--current", str(current), "--proposed", str(current),
        "-o", str(out), "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    folder = Path(json.loads(done.stdout)["folder"])
    assert folder.parent == out and (folder / "gate.json").is_file()
    assert sorted(p.name for p in (out / "gate").iterdir()) == [earlier.name]


@DESCRIPTORS
def test_the_rendered_report_has_the_table(static_gate):
    done, _, folder = static_gate
    markdown = (folder / "gate.md").read_text()
    assert markdown in done.stdout  # printed as well
    assert "**FAIL**" in markdown
    assert "Autotuning would silently drop" in markdown
    assert TABLE_HEADER in markdown
    lines = markdown.splitlines()
    start = lines.index(TABLE_HEADER)
    rows = [line for line in lines[start + 2 : start + 20] if line.startswith("| ")]
    assert len(rows) == 9
    assert any("`128x128x64-w8-s3-fp16` | ok | 96 KiB" in row for row in rows)
    assert any("`256x256x128-w16-s5-fp16` | reject" in row for row in rows)
    assert "{{" not in markdown and "{%" not in markdown


# --------------------------------------------------------------------------- the autotune reader


def _found():
    return inputs.resolve_kernel("tma-gemm")


def test_the_autotune_file_gives_the_same_six_configs_without_a_gpu():
    found = _found()
    from_python = inputs.load_configs(str(AUTOTUNE), found)
    from_yaml = inputs.load_configs(str(PROPOSED), found)
    assert from_python == from_yaml
    assert len(from_python) == 6
    assert from_python[0] == {
        "BLOCK_M": 256,
        "BLOCK_N": 256,
        "BLOCK_K": 128,
        "num_stages": 5,
        "num_warps": 16,
        "dtype": "fp16",  # not in the file: the first value of the domain
    }


def test_the_reader_never_imports_and_follows_names_and_positions(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(
        textwrap.dedent(
            """
            import not_a_module_anywhere  # would fail on import: the reader must not import
            import triton

            CONFIGS = [
                triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, 4, 1),
                triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64}, num_warps=8,
                              num_stages=3, num_ctas=1, pre_hook=lambda args: None),
                triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32}),
            ]

            @triton.autotune(CONFIGS, key=["M"])
            @triton.jit
            def kernel(a, BLOCK_M: tl.constexpr):
                pass
            """
        )
    )
    configs = inputs.read_autotune_configs(path)
    assert configs == [
        {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 1},
        {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3},
        {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32},
    ]
    completed = inputs.load_configs(str(path), _found())
    assert completed[2]["num_warps"] == 4 and completed[2]["num_stages"] == 3  # Config defaults


def test_the_reader_refuses_what_it_cannot_read_without_running_it(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(
        "import triton\n"
        "@triton.autotune(configs=[triton.Config({'BLOCK_M': m}) for m in (64, 128)], key=[])\n"
        "@triton.jit\n"
        "def kernel(a):\n"
        "    pass\n"
    )
    with pytest.raises(UsageError, match="not a literal list"):
        inputs.read_autotune_configs(path)
    (tmp_path / "plain.py").write_text("x = 1\n")
    with pytest.raises(UsageError, match=r"no triton\.autotune"):
        inputs.read_autotune_configs(tmp_path / "plain.py")


def test_sizes_and_yaml_round_trip(tmp_path):
    assert inputs.parse_sizes("4096, 8192") == [(4096, 4096, 4096), (8192, 8192, 8192)]
    assert inputs.parse_sizes("512x1024x256") == [(512, 1024, 256)]
    for bad in ("", "4096x", "0", "big"):
        with pytest.raises(UsageError):
            inputs.parse_sizes(bad)
    configs = inputs.load_configs(str(PROPOSED), _found())
    path = tmp_path / "round.yaml"
    path.write_text(gate_report.yaml_list(configs))
    assert inputs.load_configs(str(path), _found()) == configs


# --------------------------------------------------------------------------- bad input


def _bad(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout[-2000:], done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def _gate_with_proposed(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return gate_cli(
        "--kernel", "tma-gemm", "--current", str(CURRENT), "--proposed", str(path), *extra
    )


def test_malformed_yaml(tmp_path):
    path = tmp_path / "proposed.yaml"
    path.write_text("- {BLOCK_M: [unclosed\n")
    _bad(_gate_with_proposed(path), "malformed config file")


def test_unknown_param(tmp_path):
    path = tmp_path / "proposed.yaml"
    path.write_text("- {BLOCK_M: 64, BLOCK_N: 64, BLOCK_K: 32, BLOCK_Q: 2, num_warps: 4}\n")
    _bad(_gate_with_proposed(path), "unknown parameter(s) BLOCK_Q")


def test_value_outside_the_space(tmp_path):
    path = tmp_path / "proposed.toml"
    path.write_text("[[configs]]\nBLOCK_M = 48\nBLOCK_N = 64\nBLOCK_K = 32\n")
    _bad(_gate_with_proposed(path), "BLOCK_M=48")


def test_missing_file(tmp_path):
    _bad(_gate_with_proposed(tmp_path / "nowhere.yaml"), "nowhere.yaml")
    _bad(_gate_with_proposed(tmp_path / "nowhere.py"), "nowhere.py")


def test_unreadable_autotune_file(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text("import triton\n@triton.autotune(configs=make(), key=[])\ndef k(): pass\n")
    _bad(_gate_with_proposed(path), "not a literal list")


def test_bad_options():
    _bad(_gate_with_proposed(PROPOSED, "--target", "sm_999"), "sm_999")
    _bad(_gate_with_proposed(PROPOSED, "--sizes", "4096x"), "--sizes")
    _bad(gate_cli("--kernel", "no-such-repro", "--current", str(CURRENT)), "no-such-repro")
    _bad(gate_cli("--kernel", "tma-gemm", "--current", str(CURRENT)), "--proposed is required")


@pytest.mark.skipif(gpu_visible(), reason="checks the refusal without a GPU")
def test_gpu_without_a_gpu_is_bad_usage():
    _bad(_gate_with_proposed(PROPOSED, "--gpu", "on", "-t", "sm_90"), "no NVIDIA GPU")


# --------------------------------------------------------------------------- GPU protocol, faked

FAKE_CHILD = """
import json, os, signal, sys

from suite.gate.events import Begin, Check, Done, EventLog, Finalists, Screen, Start, Timed

spec = json.load(open(sys.argv[1]))
emit = EventLog(spec["events"]).emit


def tflops(config):  # made up: bigger tiles and deeper pipelines are faster, no ties
    return config["BLOCK_M"] * config["BLOCK_N"] * config["num_stages"] / 100 + config["num_stages"]


def ms(size, value):
    m, n, k = size
    return 2 * m * n * k / (value * 1e9)


emit(Start(device="Fake H200", capability=[9, 0], torch="fake", triton="fake",
           flush={"verified": True, "how": "fake flush"}, seed=spec["seed"]))
first = spec["events"].endswith("events-1.jsonl")
items = {i["key"]: i for i in spec["items"]}
final = [i for i in spec["items"] if i["kind"] in ("final", "both")]
scores = {}
for item in spec["items"]:
    if item["kind"] in ("screen", "both"):
        emit(Begin(key=item["key"], stage="screen"))
        for size in spec["sizes"]:
            emit(Screen(key=item["key"], size=size, ms=ms(size, tflops(item["config"]))))
        scores[item["key"]] = tflops(item["config"])
if scores:
    best = sorted(scores, key=lambda k: -scores[k])[: spec["finalists"]]
    final += [items[k] for k in best if items[k] not in final]
    emit(Finalists(keys=best))
timed = []
for item in final:
    emit(Begin(key=item["key"], stage="check"))
    if first and item["key"] == os.environ.get("FAKE_CRASH"):
        os.kill(os.getpid(), signal.SIGSEGV)
    if item["key"] == os.environ.get("FAKE_WRONG"):
        emit(Check(key=item["key"], stage="check", ok=False, outcome="wrong-result",
                   message="C[520x1040]: 7 of 540800 elements left NaN (unwritten)"))
        continue
    emit(Check(key=item["key"], stage="check", ok=True))
    timed.append(item)
for size in spec["sizes"]:
    for input_set in range(spec["input_sets"]):
        for item in timed:
            if input_set == 0:
                emit(Check(key=item["key"], stage="size", ok=True, size=size))
            value = tflops(item["config"]) * (1 + 0.002 * input_set)
            emit(Timed(key=item["key"], size=size, input_set=input_set, ms=ms(size, value)))
        emit(Timed(key="cublas", size=size, input_set=input_set, ms=ms(size, 700.0)))
emit(Done())
"""


@pytest.fixture
def fake_gpu(tmp_path, monkeypatch):
    child = tmp_path / "fake_gate_gpu.py"
    child.write_text(FAKE_CHILD)
    monkeypatch.setattr(gpu, "child_argv", lambda python, role, *args: [python, str(child), *args])
    import suite.engine.environment

    monkeypatch.setattr(
        suite.engine.environment,
        "capture_environment",
        lambda python: suite.engine.environment.Environment(gpu_arch=90, gpu="Fake H200"),
    )
    return tmp_path


def _options(tmp_path: Path, proposed: Path | None, **extra) -> inputs.GateOptions:
    return inputs.GateOptions(
        kernel="tma-gemm",
        current=str(CURRENT),
        proposed=str(proposed) if proposed else None,
        targets=["sm_90"],
        sizes=[(1024, 1024, 1024), (2048, 2048, 2048)],
        gpu=True,
        output=tmp_path / "out",
        workers=2,
        seed=3,
        **extra,
    )


@DESCRIPTORS
def test_gpu_report_tables_per_size_and_a_pass(fake_gpu, tmp_path):
    proposed = tmp_path / "good.yaml"
    proposed.write_text(
        "- {BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 64, num_warps: 8, num_stages: 3}\n"
        "- {BLOCK_M: 64, BLOCK_N: 64, BLOCK_K: 64, num_warps: 4, num_stages: 2}\n"
    )
    result = gate.run_gate(_options(tmp_path, proposed))
    assert result.exit_status == 0, result.report["reasons"]
    markdown = result.markdown
    assert "**PASS**" in markdown
    for size in ("1024x1024x1024", "2048x2048x2048"):
        assert f"### sm_90, {size} on Fake H200" in markdown
    assert "| baseline | `cuBLAS (torch.matmul)` | n/a | 700 | 100% |" in markdown
    assert "`128x128x64-w8-s3-fp16` **(best)** | yes (+ragged) | 496 | 71% | 495-496 |" in markdown
    assert "fake flush" in markdown
    comparison = result.report["gpu"][0]["sizes"][0]["comparison"]
    assert "not slower" in comparison


@DESCRIPTORS
def test_gpu_slower_proposal_fails(fake_gpu, tmp_path):
    proposed = tmp_path / "slow.yaml"
    proposed.write_text("- {BLOCK_M: 64, BLOCK_N: 64, BLOCK_K: 32, num_warps: 4, num_stages: 1}\n")
    result = gate.run_gate(_options(tmp_path, proposed))
    assert result.exit_status == 1
    assert any("slower beyond the noise" in r for r in result.report["reasons"])


@DESCRIPTORS
def test_gpu_wrong_result_and_a_crashed_child(fake_gpu, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_CRASH", "64x64x64-w4-s2-fp16")
    monkeypatch.setenv("FAKE_WRONG", "128x128x64-w8-s3-fp16")
    result = gate.run_gate(_options(tmp_path, PROPOSED))
    assert result.exit_status == 1
    verdicts = {c["label"]: c for c in result.report["configs"]}
    crashed = verdicts["64x64x64-w4-s2-fp16"]
    assert crashed["verdict"] == "reject"
    assert "crash" in " ".join(crashed["reasons"]) and "SIGSEGV" in " ".join(crashed["reasons"])
    wrong = verdicts["128x128x64-w8-s3-fp16"]
    assert "wrong-result" in " ".join(wrong["reasons"])
    section = result.report["gpu"][0]
    assert section["children"] == 2
    assert any("restarted" in note for note in section["notes"])
    # the current configs were still measured, by the second child
    rows = section["sizes"][0]["rows"]
    assert sum(1 for r in rows if r["role"] == "current") == 3


SMALL_REPRO = """
import triton
import triton.language as tl

from suite import Choice, Reproducer
from suite.tritonc import compile_kernel

REPRO = Reproducer(
    id="gate-small-gemm",
    title="A descriptor GEMM with a four-point space",
    family="test",
    params=(
        Choice("BLOCK_M", (64, 128)),
        Choice("BLOCK_N", (64,)),
        Choice("BLOCK_K", (32,)),
        Choice("num_stages", (1, 2)),
        Choice("num_warps", (4,)),
        Choice("dtype", ("fp16",)),
    ),
    configs={"current": [{"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_stages": 1,
                          "num_warps": 4, "dtype": "fp16"}]},
    targets=("sm_90",),
    label="{BLOCK_M}x{BLOCK_N}x{BLOCK_K}-w{num_warps}-s{num_stages}-{dtype}",
)


@triton.jit
def gemm(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
         BLOCK_K: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        acc += tl.dot(a_desc.load([tl.program_id(0) * BLOCK_M, k]),
                      b_desc.load([k, tl.program_id(1) * BLOCK_N]))
    c_desc.store([tl.program_id(0) * BLOCK_M, tl.program_id(1) * BLOCK_N], acc.to(tl.float16))


@REPRO.compile
def compile_case(case):
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32",
                 "K": "i32"}
    tile = {n: case[n] for n in ("BLOCK_M", "BLOCK_N", "BLOCK_K")}
    return compile_kernel(gemm, case, signature, tile)
"""


@DESCRIPTORS
def test_suggest_ranks_the_declared_space_and_writes_a_config_set(fake_gpu, tmp_path):
    repro = tmp_path / "small_repro.py"
    repro.write_text(SMALL_REPRO)
    current = tmp_path / "current.yaml"
    current.write_text("- {BLOCK_M: 64, BLOCK_N: 64, BLOCK_K: 32, num_warps: 4, num_stages: 1}\n")
    options = inputs.GateOptions(
        kernel=str(repro),
        current=str(current),
        targets=["sm_90"],
        sizes=[(1024, 1024, 1024)],
        gpu=True,
        suggest=True,
        suggest_count=2,
        output=tmp_path / "out",
        workers=2,
        seed=3,
    )
    result = gate.run_gate(options)
    assert result.exit_status == 0, result.report["reasons"]
    suggest = result.report["suggest"]
    assert suggest["space"] == 4 and suggest["eligible"] == 4 and suggest["screened"] == 4
    assert suggest["labels"] == ["128x64x32-w4-s2-fp16", "64x64x32-w4-s2-fp16"]
    written = inputs.load_configs(
        str(result.folder / "suggested.yaml"), inputs.resolve_kernel(str(repro))
    )
    assert [c["BLOCK_M"] for c in written] == [128, 64]
    assert "### Suggestion" in result.markdown


# --------------------------------------------------------------------------- on a GPU


@pytest.mark.gpu
@pytest.mark.long
def test_gate_on_the_gpu_at_a_small_size(tmp_path):
    out = Path(os.environ.get("REPRO_GPU_OUT") or tmp_path)
    done = gate_cli(
        "--kernel",
        "tma-gemm",
        "--current",
        str(CURRENT),
        "--proposed",
        str(PROPOSED),
        "--target",
        "sm_90",
        "--gpu",
        "--sizes",
        "1024,1536x1024x2048",
        "--input-sets",
        "2",
        "-o",
        str(out),
        timeout=900,
    )
    assert done.returncode == 1, done.stdout[-4000:] + done.stderr[-4000:]  # 4 cannot run
    report = json.loads((sorted((out / "gate").iterdir())[-1] / "gate.json").read_text())
    (section,) = report["gpu"]
    assert not section["error"], section
    assert not section["failures"], section["failures"]
    assert section["flush_verified"], section["flush"]
    for size in section["sizes"]:
        rows = {r["config"]: r for r in size["rows"]}
        assert "cuBLAS (torch.matmul)" in rows
        for label in ("128x128x64-w8-s3-fp16", "64x64x64-w4-s2-fp16", "64x64x32-w4-s1-fp16"):
            assert rows[label]["correct"] == "yes (+ragged)", rows[label]
            assert float(rows[label]["tflops"]) > 0
