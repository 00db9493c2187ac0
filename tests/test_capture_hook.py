"""What the capture hook records, whatever the program does: the compiler's own output
(fds 1 and 2 teed around each compile, nothing the program wrote lost or delayed, even by a
compile that aborts its process), and every specialization the JIT makes, reproduced on
every release 3.0.0-3.9.0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from suite.capture.program import SITE
from suite.capture.site.repro_capture_records import load_last_launches
from suite.engine.template import HOOK_TEE
from tests.conftest import checkout_env
from tests.test_capture import PROGRAMS, capture, venv_python


@dataclass(frozen=True)
class Teed:
    """One program run plain and under the hook, and what the hook wrote."""

    plain: subprocess.CompletedProcess[str]
    done: subprocess.CompletedProcess[str]
    summary: dict[str, Any]


@pytest.fixture(scope="module")
def teed(tmp_path_factory) -> Teed:
    """Two threads compiling (one kernel compiles, one fails) while the main thread writes."""
    command = [sys.executable, str(PROGRAMS / "threads_and_output.py")]
    plain = subprocess.run(command, capture_output=True, text=True, check=False)
    output = tmp_path_factory.mktemp("teed") / "reports"
    done, summary = capture(output, command, "--no-confirm")
    return Teed(plain, done, summary)


# The program's kernel takes tl.range(warp_specialize=...), which 3.4.0 brought (checked:
# 3.3.1 fails both compiles, 3.4.0 compiles the plain one).
@pytest.mark.triton(">=3.4")
def test_the_compilers_output_is_teed_and_nothing_the_program_wrote_is_lost(teed: Teed) -> None:
    """Around each compile fds 1 and 2 go to the hook's logs and are copied back when the
    last compile in flight ends: the program's stdout and stderr hold the same lines with
    and without the hook, and the failing compile's record holds the compiler's output."""
    plain, done, summary = teed.plain, teed.done, teed.summary
    assert plain.returncode == 0 and done.returncode == 0, done.stderr[-3000:]
    assert plain.stdout.endswith("plain: compiled, warp-specialized: RuntimeError\n")
    assert sorted(done.stdout.splitlines()) == sorted(plain.stdout.splitlines())
    for stderr in (plain.stderr, done.stderr):
        assert all(f"stderr line {i}\n" in stderr for i in range(50))
    [failure] = summary["failures"]
    record = json.loads(Path(failure["record"]).read_text())
    assert record["output"]["complete"] and record["output"]["stderr"]
    # The logs of finished redirections are gone; nothing died inside a compile.
    assert list((Path(summary["folder"]) / "compile-output").iterdir()) == []


# Checked on 3.9.0 (#9728's message); 3.5.0 fails the warp-specialized compile otherwise.
@pytest.mark.triton(">=3.9")
def test_the_compilers_diagnostic_reaches_the_program_and_the_record(teed: Teed) -> None:
    diagnostic = "LLVM ERROR: unsupported load type for producer commit"
    for stderr in (teed.plain.stderr, teed.done.stderr):
        assert diagnostic in stderr
    [failure] = teed.summary["failures"]
    assert failure["observed"] == f"compiler-error:ttgir:NVGPUWarpSpecialization: {diagnostic}"
    record = json.loads(Path(failure["record"]).read_text())
    assert diagnostic in record["output"]["stderr"]


@pytest.mark.parametrize(
    ("version", "mode", "said"),
    [
        # The oldest release: LLVM aborts the child inside the compile (#4418, SIGABRT).
        pytest.param("3.0.0", "abort", "LLVM ERROR", marks=pytest.mark.venv, id="3.0.0-abort"),
        pytest.param("3.2.0", "abort", "LLVM ERROR", marks=pytest.mark.venv, id="3.2.0-abort"),
        # The newest: the compile raises after the compiler wrote on fd 2 (#9728).
        pytest.param("3.9.0", "raise", "LLVM ERROR: unsupported load type", id="3.9.0-raise"),
    ],
)
def test_a_program_that_reads_its_childs_compiler_output_sees_the_same_under_capture(
    tmp_path: Path, version: str, mode: str, said: str
) -> None:
    """A harness compiles in a child and reads the child's stderr for the compiler's own
    diagnostic: alone and under capture it prints the same and exits the same (1: the
    compiler said something). The hook tees the child's fd 2, it never takes the text."""
    python = venv_python(version)
    command = [python, str(PROGRAMS / "reads_childs_compiler.py"), mode]
    alone = subprocess.run(command, capture_output=True, text=True, check=False, cwd=tmp_path)
    assert alone.returncode == 1 and f"compiler said: {said}" in alone.stdout, alone
    done, summary = capture(tmp_path / "reports", command, "--no-confirm")
    assert (done.returncode, done.stdout) == (alone.returncode, alone.stdout), done.stderr[-3000:]
    assert summary["program"]["left_behind"] == 0  # the child's tee ended by itself
    [failure] = summary["failures"]
    assert said in failure["observed"]


def test_the_keeper_knows_the_hooks_tee() -> None:
    """The keeper lets the tee of a process that died inside a compile finish copying."""
    assert (SITE / HOOK_TEE).is_file()
    assert f'"{HOOK_TEE}"' in (SITE / "repro_capture_output.py").read_text()


RELEASES = [
    "3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.3.1", "3.4.0",
    "3.5.0", "3.5.1", "3.6.0", "3.7.1", "3.8.0", "3.9.0",
]  # fmt: skip
#: Run by default: the first release of each way the JIT hands over its specialization (3.0
#: and 3.1 by index, 3.2 an AttrsDescriptor, 3.3 on by path; tritonc.py and the hook's
#: repro_capture_kernel.py branch on these), the first with tensor descriptors (3.4.0) and
#: the newest. The other releases repeat one of these: the full sweep, `-m slow` (nightly).
REPRESENTATIVE = ("3.0.0", "3.2.0", "3.3.0", "3.4.0", "3.9.0")


def sweep(version: str) -> Any:
    marks = () if version in REPRESENTATIVE else (pytest.mark.slow,)
    return pytest.param(version, marks=marks, id=version)


@pytest.mark.venv
@pytest.mark.parametrize("version", [sweep(version) for version in RELEASES])
def test_every_specialization_is_reproduced_on_every_release(tmp_path: Path, version: str) -> None:
    """What the JIT decided for a launch's arguments (strides equal to 1, sizes divisible by
    16, do_not_specialize, a constexpr default, None, a helper of another module, a host
    TensorDescriptor and a device-side descriptor from 3.4 on) is recorded as the JIT's own
    binder made it, and each kernel's reproducer compiles it in isolation: no harness error."""
    python = venv_python(version)
    program = str(PROGRAMS / "specializations.py")
    done, summary = capture(tmp_path / "reports", [python, program], "--all", "--no-confirm")
    assert done.returncode == 0, done.stderr[-3000:]
    records = {
        r["kernel"]["name"]: r
        for r in (json.loads(p.read_text()) for p in Path(summary["folder"]).glob("compiles/*"))
    }
    rows = records["scale_rows"]
    assert rows["equal_to_1"] == ["stride_xn", "stride_yn"]  # contiguous strides; not seed
    assert "seed" in rows["signature"] and "stride_xn" not in rows["signature"]
    assert rows["constexprs"] == {
        "bias_ptr": "None",
        "BLOCK_N": "128",
        "ACTIVATION": "'leaky_relu'",
    }
    assert {"x_ptr", "n_cols", "stride_xm"} <= set(rows["divisible"])
    assert [f["name"] for f in rows["kernel"]["functions"]] == [
        "leaky_relu",
        "activation",
        "scale_rows",
    ]
    assert rows["problems"] == [] and rows["kernel"]["unresolved"] == []
    expected = {"scale_rows"}
    if version >= "3.4":
        expected.add("descriptor_copy")
        assert records["descriptor_copy"]["signature"]["in_desc"] == "tensordesc<fp16[64, 64]>"
    assert set(records) == expected
    for reproducer in summary["kernel_reproducers"]:
        arguments = ["run", reproducer, "-c", "captured", "--python", python, "--json", "-q"]
        ran = subprocess.run(
            [sys.executable, "-m", "suite.cli.main", *arguments, "-o", str(tmp_path / "runs")],
            capture_output=True,
            text=True,
            check=False,
            cwd=tmp_path,
            env=checkout_env(),
        )
        assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
        [case] = json.loads(ran.stdout)["cases"]
        assert case["outcome"] == "passed", case


KEPT_LAUNCHES = """
import json, os, sys

import repro_capture_launch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)


class Tensor:  # what the hook reads of a torch tensor (no torch, no GPU here)
    def __init__(self, n):
        self.shape, self.dtype, self.device = (n,), "torch.float16", "cuda:0"

    def stride(self):
        return (1,)

    def data_ptr(self):
        return 0


# JITFunction.run as the hook wraps it, around a launcher that launches nothing (the GPU's
# part): what the hook does at each launch that succeeds.
run = repro_capture_launch.run_wrapper(lambda self, *args, **kwargs: None)
for n in range(1, 1001):
    run(scale, Tensor(n), Tensor(n), n, 0.5, BLOCK=256, grid=lambda meta: (triton.cdiv(n, 256),))
folder = os.environ["REPRO_CAPTURE_DIR"]
print(json.dumps(sorted(os.listdir(folder))))  # written while the launches ran
if sys.argv[1] == "raise":
    raise RuntimeError("CUDA error: an illegal memory access was encountered")
"""


@pytest.mark.parametrize("end", ["exit", "raise"])
def test_launches_are_kept_by_reference_and_described_at_the_end(tmp_path: Path, end: str) -> None:
    """A thousand launches that succeed write nothing; when the process ends (or an
    exception reaches its top) the latest launch is described into its slot and the last
    ``KEPT`` into ``kept-launches/``: their shapes, scalars, constexprs and grids are the
    ones each launch had."""
    program = tmp_path / "kept.py"
    program.write_text(KEPT_LAUNCHES)
    folder = tmp_path / "capture"
    folder.mkdir()
    env = {**checkout_env(), "REPRO_CAPTURE_DIR": str(folder)}
    env["PYTHONPATH"] = os.pathsep.join([str(SITE), env["PYTHONPATH"]])
    ran = subprocess.run(
        [sys.executable, str(program), end], capture_output=True, text=True, env=env, check=False
    )
    assert ran.returncode == (1 if end == "raise" else 0), ran.stderr[-3000:]
    assert json.loads(ran.stdout) == []  # no file while the launches ran
    from suite.capture.site.repro_capture_records import load_last_launches, load_uncaught

    [(_, latest)] = load_last_launches(folder / "last-launch").values()
    assert latest.scalars == {"n": 1000, "factor": 0.5} and latest.grid == [4, 1, 1]
    assert latest.tensors["x_ptr"].shape == [1000] and latest.constexprs == {"BLOCK": "256"}
    kept = json.loads(next((folder / "kept-launches").glob("*.json")).read_text())
    assert [k["scalars"]["n"] for k in kept] == list(range(993, 1001))
    assert [k["tensors"]["y_ptr"]["shape"] for k in kept] == [[n] for n in range(993, 1001)]
    if end == "raise":  # the failure surfaces after the launch: tied to the latest one
        [uncaught] = (folder / "uncaught").glob("*.json")
        assert load_uncaught(uncaught).sequence > latest.sequence


INDUCTOR_LAUNCHES = """
import gc, json, sys, weakref

import repro_capture_inductor
import triton
import triton.language as tl


@triton.jit
def triton_poi_fused_add_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    offsets = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    tl.store(out_ptr0 + offsets, tl.load(in_ptr0 + offsets) + 1, mask=offsets < xnumel)


class Tensor:  # what the hook reads of a torch tensor (no torch, no GPU here)
    def __init__(self, n):
        self.shape, self.dtype, self.device = (n,), "torch.float32", "cuda:0"

    def stride(self):
        return (1,)

    def data_ptr(self):
        return 0


class Config:
    kwargs, num_warps, num_stages = {"XBLOCK": 256}, 4, 1


class Launcher:
    config = Config()


class CachingAutotuner:  # what the hook reads of Inductor's (its config chosen)
    fn, configs, launchers = triton_poi_fused_add_0, [Config()], [Launcher()]
    triton_meta, inductor_meta = {"constants": {}}, {}

    def _interpret_args_grid(self, args, config):
        return None, (triton.cdiv(args[2], config.kwargs["XBLOCK"]), 1, 1)


def run(self, *args, stream, **kwargs):  # Inductor's, around a launcher that launches nothing
    \"\"\"Launch (a docstring, which the hook keeps first).\"\"\"
    if args[2:] == (13,):
        raise RuntimeError("CUDA error: too many resources requested for launch")
    self.launched.append(args[2] if args[2:] else None)


# As the hook gives it (sys.argv[1]: inlined or wrapped), and as Inductor's generated code
# calls it: kernel.run(..., stream=).
CachingAutotuner.run = run
inlined = sys.argv[1] == "inlined"
repro_capture_inductor.hook_tuner(CachingAutotuner, inline=inlined)
hooked = CachingAutotuner.run
assert hooked.__code__.co_filename == (__file__ if inlined else repro_capture_inductor.__file__)


class DebugAutotuner(CachingAutotuner):  # a subclass with a run of its own (Inductor has one)
    def run(self, *args, **kwargs):
        self.debugged += 1
        return super().run(*args, **kwargs)


debug = DebugAutotuner()
debug.launched, debug.debugged = [], 0
for n in range(3):
    debug.run(Tensor(4096), Tensor(4096), 4096, stream=0)
assert debug.debugged == 3 and debug.launched == [4096] * 3  # its own run still runs
try:
    debug.run(Tensor(4096), Tensor(4096), 13, stream=0)
except RuntimeError as error:  # raised as it was, from its own line
    last = error.__traceback__
    while last.tb_next:
        last = last.tb_next
    assert (last.tb_frame.f_code.co_filename, last.tb_lineno) == (
        __file__, run.__code__.co_firstlineno + 3
    )
    assert "too many resources" in str(error)
else:
    raise AssertionError("the launch did not raise")
# sys.argv[2]: the sizes vary (the scalars kept every launch), or they do not (steady: the
# kernel kept alone), but the last launch's, which raises.
# A size of None: a launch with fewer arguments than the kernel's first (the hook cannot
# describe it; the program never knows, and the other launches kept are described).
sizes = [4096 - n % 2 if sys.argv[2] == "varying" else 4096 for n in range(1, 1001)]
sizes[-4] = None if sys.argv[2] == "varying" else sizes[-4]
sizes[-1] = sizes[-1] if sys.argv[2] == "varying" else 13
tuner, outputs = CachingAutotuner(), []
tuner.launched = []
for size in sizes:
    x, out = Tensor(4096), Tensor(4096)
    try:
        tuner.run(x, out, *([] if size is None else [size]), stream=0)
    except RuntimeError:
        assert size == 13
    outputs.append(weakref.ref(out))
assert tuner.launched == [size for size in sizes if size != 13]
assert tuner._repro_capture_steady == (sys.argv[2] == "steady")
del x, out
gc.collect()
print(json.dumps(sum(output() is not None for output in outputs)))
"""


@pytest.mark.parametrize("sizes", ["varying", "steady"])
@pytest.mark.parametrize("hook", ["inlined", "wrapped"])
def test_an_inductor_kernels_launches_keep_no_tensor_alive(
    tmp_path: Path, hook: str, sizes: str
) -> None:
    """The hook keeps an Inductor kernel's launches by their scalars: no tensor the program
    dropped stays alive (autograd copies a gradient another reference holds, where it
    would take it over), and what the process's end describes of the last ``KEPT``
    launches still has each one's scalars and grid, the layouts (Inductor fixes them when
    it compiles) and the config. A kernel whose first ``STEADY_AFTER`` launches had the
    same scalars is kept by the kernel alone: its kept launches are described with its
    first launch's arguments and say so. The same whether the hook compiled its
    bookkeeping into Torch's ``run`` or wraps it; a subclass's own ``run`` still runs, and
    a launch that raises is raised as it was and recorded with its own arguments."""
    program = tmp_path / "inductor.py"
    program.write_text(INDUCTOR_LAUNCHES)
    folder = tmp_path / "capture"
    folder.mkdir()
    env = {**checkout_env(), "REPRO_CAPTURE_DIR": str(folder)}
    env["PYTHONPATH"] = os.pathsep.join([str(SITE), env["PYTHONPATH"]])
    ran = subprocess.run(
        [sys.executable, str(program), hook, sizes],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert json.loads(ran.stdout) == 0  # no output tensor alive once the program dropped it
    errors = folder / "hook-errors.txt"
    noted = errors.read_text().count("describing a kept launch") if errors.exists() else 0
    assert noted == (sizes == "varying")  # the launch of fewer arguments, and nothing else
    failed = sorted(
        (json.loads(p.read_text()) for p in (folder / "launches").glob("*.json")),
        key=lambda record: record["sequence"],
    )
    assert [f["state"] for f in failed] == ["failed"] * len(failed)
    assert [f["scalars"]["xnumel"] for f in failed] == [13] * (1 if sizes == "varying" else 2)
    assert all("too many resources" in json.dumps(f["error"]) for f in failed)
    kept = json.loads(next((folder / "kept-launches").glob("*.json")).read_text())
    assert len({k["sequence"] for k in kept}) == len(kept) == (7 if sizes == "varying" else 8)
    assert [k["grid"] for k in kept] == [[-(-k["scalars"]["xnumel"] // 256), 1, 1] for k in kept]
    for launch in kept:
        assert launch["tensors"]["out_ptr0"] == {
            "dtype": "float32",
            "shape": [4096],
            "strides": [1],
            "device": "cuda:0",
        }
        assert launch["constexprs"] == {"XBLOCK": "256"} and launch["options"]["num_warps"] == 4
    if sizes == "varying":
        assert [k["scalars"]["xnumel"] for k in kept] == [
            4096 - n % 2 for n in range(993, 1001) if n != 997
        ]
        # The first launch's xnumel was 4095: a launch with another is said to carry its layouts.
        noted = [bool(k["problems"]) for k in kept]
        assert noted == [k["scalars"]["xnumel"] != 4095 for k in kept], kept
    else:  # kept by the kernel alone, described with its first launch's arguments, but
        # the launch that raised: its failure record numbered it, with its own scalars
        assert [k["scalars"]["xnumel"] for k in kept] == [4096] * 7 + [13]
        steady = ["kept by the kernel alone" in " ".join(k["problems"]) for k in kept]
        assert steady == [True] * 7 + [False]
        assert kept[-1]["sequence"] == failed[-1]["sequence"]
        # The slot holds that launch, with the failure's number: the failure explains it.
        [(_, latest)] = load_last_launches(folder / "last-launch").values()
        assert latest.sequence == failed[-1]["sequence"]


NOT_INLINED = """
import functools, importlib, json, linecache, pathlib, sys

import repro_capture_inductor as hook

folder = pathlib.Path(sys.argv[1])
source = (
    "class CachingAutotuner:\\n"
    "    def run(self, *args, stream, **kwargs):\\n"
    "        return {}\\n"
)
(folder / "heuristics.py").write_text(source.format(1))
sys.path.insert(0, str(folder))
import heuristics

exact = hook.inlined_run(heuristics.CachingAutotuner.run)
# Compiled again with nothing added (the bench's :recompiled): Torch's code, another function.
again = hook.inlined_run(heuristics.CachingAutotuner.run, prologue=False, handler=False)
assert again.__code__ == heuristics.CachingAutotuner.run.__code__
assert again is not heuristics.CachingAutotuner.run and again.__code__ != exact.__code__
(folder / "heuristics.py").write_text(source.format(2))  # the file no longer what runs
linecache.checkcache()


def decorate(function):
    @functools.wraps(function)
    def decorated(*args, **kwargs):
        return function(*args, **kwargs)

    return decorated


@decorate
def decorated(self, *args, **kwargs):
    pass


def named_only(self, x, stream):
    pass


def enclosing():
    y = 1

    def closure(self, *args, **kwargs):
        return y

    def local(self, *args, **kwargs):
        pass

    return closure, local


made = {}
exec("def made(self, *args, **kwargs):\\n    pass\\n", made)
refused = [heuristics.CachingAutotuner.run, decorated, named_only, *enclosing(), made["made"]]
print(json.dumps([exact is not None] + [hook.inlined_run(f) is None for f in refused]))
"""


def test_the_hook_inlines_only_what_compiles_back_to_the_same_code(tmp_path: Path) -> None:
    """The hook compiles its bookkeeping into a ``run`` only where the source, compiled
    again without it, gives the code Python runs: not once the file changed on disk, nor
    for a decorated function, one without ``*args``, a closure, a function local to another
    or one with no source (there the hook wraps the function instead)."""
    program = tmp_path / "not_inlined.py"
    program.write_text(NOT_INLINED)
    env = {**checkout_env(), "REPRO_CAPTURE_DIR": str(tmp_path)}
    env["PYTHONPATH"] = os.pathsep.join([str(SITE), env["PYTHONPATH"]])
    ran = subprocess.run(
        [sys.executable, str(program), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert json.loads(ran.stdout) == [True] * 7
    assert not (tmp_path / "hook-errors.txt").exists()


NO_CHILD = """
import os, sys

sys.path.insert(0, {corpus!r})
import triton
import triton.language as tl
from aot import Buffer, compile_like_launch


@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)


compile_like_launch(copy, 90, Buffer("float32", (64,)), Buffer("float32", (64,)), 64, BLOCK=64)
try:
    os.waitpid(-1, os.WNOHANG)
    print("a child")
except ChildProcessError:
    print("no child")
"""


def test_the_tee_is_no_child_of_the_program(tmp_path: Path) -> None:
    """A program that waits for all its children (``waitpid(-1)`` until none is left) is
    not kept waiting by the hook's tee: the tee detaches from the process that started it."""
    program = tmp_path / "no_child.py"
    program.write_text(NO_CHILD.format(corpus=str(PROGRAMS / "corpus")))
    done, summary = capture(tmp_path / "reports", [sys.executable, str(program)], "--all")
    assert done.returncode == 0 and done.stdout == "no child\n", done.stderr[-3000:]
    assert summary["compile_records"] == 1 and summary["program"]["left_behind"] == 0


FIRST_LAUNCH = """
import json, os

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.runtime import driver


class NoGpu:  # what a launch asks of the active driver before its compile (no GPU here)
    def get_current_device(self):
        return 0

    def get_current_stream(self, device):
        return 0

    def get_current_target(self):
        return GPUTarget("cuda", 90, 32)


driver.set_active(NoGpu())


@triton.jit
def scale(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)


class Tensor:  # what Triton and the hook read of a torch tensor
    def __init__(self, n):
        self.shape, self.dtype, self.device = (n,), "torch.float16", "cuda:0"

    def stride(self):
        return (1,)

    def data_ptr(self):
        return 0


folder = os.path.join(os.environ["REPRO_CAPTURE_DIR"], "last-launch")
scale.warmup(Tensor(64), Tensor(64), 64, 0.5, BLOCK=64, grid=(1,))  # compiled, no launch
print(json.dumps(os.listdir(folder) if os.path.isdir(folder) else []))
try:  # compiled for this launch, then the launch fails: the driver has no launcher
    scale[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](
        Tensor(4096), Tensor(4096), 4096, 2.0, BLOCK=256
    )
except AttributeError:
    pass
print(json.dumps(os.listdir(folder)))  # while the program runs: written after the compile
scale.run = lambda *args, **kwargs: print(f"its own run: {kwargs['grid']}")
scale[(3,)](Tensor(8), Tensor(8), 8, 1.0, BLOCK=8)  # as Triton's kernel[grid] calls it
"""


def test_the_first_launch_of_a_specialization_is_written_after_its_compile(tmp_path: Path) -> None:
    """``kernel[grid](...)`` that compiles: the compile finds its launch (the hook's launcher
    frame) and writes it in full before the launch; a warm-up's compile writes none."""
    program = tmp_path / "first.py"
    program.write_text(FIRST_LAUNCH)
    folder = tmp_path / "capture"
    folder.mkdir()
    env = {**checkout_env(), "REPRO_CAPTURE_DIR": str(folder)}
    env["PYTHONPATH"] = os.pathsep.join([str(SITE), env["PYTHONPATH"]])
    env["TRITON_CACHE_DIR"] = str(tmp_path / "cache")
    ran = subprocess.run(
        [sys.executable, str(program)], capture_output=True, text=True, env=env, check=False
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    warmup_line, launch_line, own = ran.stdout.splitlines()
    after_warmup, after_launch = json.loads(warmup_line), json.loads(launch_line)
    assert after_warmup == [] and len(after_launch) == 1, ran.stdout
    assert own == "its own run: (3,)"  # a kernel's own run is called, as without the hook
    record = json.loads((folder / "last-launch" / after_launch[0]).read_text())
    assert record["state"] == "launching" and record["grid"] == [16, 1, 1]
    assert record["scalars"] == {"n": 4096, "factor": 2.0}
    assert record["constexprs"] == {"BLOCK": "256"}
    assert record["tensors"]["x_ptr"]["shape"] == [4096]
    assert record["called_from"].startswith(str(program))
    assert not (folder / "hook-errors.txt").exists()
