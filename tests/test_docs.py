"""Every command the docs show runs as written.

Each command of a ``bash`` or ``console`` block in README.md and docs/*.md is a test: it runs
with ``bash`` in a fresh copy of the checkout (the folder a user types it in, so relative
paths mean what they say there), with ``HOME`` and the cache folder in scratch, where
``~/.cache/triton-repro-suite/venvs`` is the machine's built release venvs (shared, never
rebuilt per test) for a command marked ``venv`` (those it names, where :data:`HEAVY` names
them) and an empty folder for the others. It must exit 0, or the status its comment names
(``# exit 1``); after a ``console`` block's ``$ command`` comes what it prints, compared with
``...`` matching anything (doctest's ELLIPSIS). A command costs seconds and needs nothing but
this checkout unless :data:`HEAVY` says otherwise (``slow``: the nightly job; ``venv``: a
release venv; ``gpu``: a GPU); :data:`NOT_RUN` lists, with the reason, the few that the tests
do not run; :data:`GIVEN` what a command needs first that the docs say in words ("a reproducer
file of your own"). Every fence says its language, so a command cannot hide in an untagged
block: output and diagrams are ``text``, a usage synopsis is ``text``.
"""

from __future__ import annotations

import contextlib
import doctest
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from suite.toolchain.venvs import for_version, venv_root
from tests.conftest import gpu_alone

ROOT = Path(__file__).resolve().parent.parent
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
#: The fences whose lines are commands; ``console`` prefixes them with ``$ `` and shows output.
SHELL = frozenset({"bash", "console"})
#: Every other language a fence may say.
NOT_SHELL = frozenset({"text", "json", "python", "mlir", "yaml", "toml"})
_COMMENT = re.compile(r"\s+#\s.*$")
_EXIT = re.compile(r"#\s*exit (\d+)\b")


@dataclass(frozen=True)
class Command:
    """One command of a docs shell block, as written there."""

    where: str  # README.md:12
    text: str  # the logical line, continuation lines and comment included, as bash reads it
    exit: int  # what its comment says it exits with (``# exit 1``), else 0
    output: str | None  # what a console block shows it print

    @property
    def key(self) -> str:
        """The command without its comment, its whitespace folded: the tables' key."""
        return " ".join(_COMMENT.sub("", self.text).replace("\\\n", " ").split())


@dataclass(frozen=True)
class Heavy:
    """A command outside the default selection: its marks and what it costs or needs."""

    marks: tuple[str, ...]
    why: str
    # A program of its own that may fault on the GPU (not `repro`, which takes its turns):
    # run alone there, the GPU checked after it (conftest.gpu_alone).
    alone: bool = False
    #: With ``venv``: the releases whose venvs its scratch home holds; None: all of the
    #: machine's (a bisect or a matrix may reach any release).
    releases: tuple[str, ...] | None = None


def fences(path: Path) -> list[tuple[str, int, str]]:
    """The fenced blocks of ``path``: language, first line (1-based), content."""
    tokens = MarkdownIt("commonmark").parse(path.read_text())
    return [
        (t.info.strip(), t.map[0] + 1, t.content) for t in tokens if t.type == "fence" and t.map
    ]


def _logical_lines(content: str, first: int) -> list[tuple[int, str]]:
    """``content``'s lines with ``\\`` continuations joined, numbered from ``first``."""
    lines: list[tuple[int, str]] = []
    pending: list[str] = []
    start = first
    for number, line in enumerate(content.splitlines(), first):
        if not pending:
            start = number
        pending.append(line)
        if not line.endswith("\\"):
            lines.append((start, "\n".join(pending)))
            pending = []
    return lines


def commands(path: Path) -> list[Command]:
    """The commands of ``path``'s shell blocks, in order."""
    found: list[Command] = []
    name = path.relative_to(ROOT).as_posix()
    for language, line, content in fences(path):
        if language not in SHELL:
            continue
        numbered = _logical_lines(content, line + 1)
        if language == "bash":
            for number, text in numbered:
                if text.strip() and not text.lstrip().startswith("#"):
                    found.append(_command(f"{name}:{number}", text, None))
            continue
        prompts = [i for i, (_, text) in enumerate(numbered) if text.startswith("$ ")]
        for i, at in enumerate(prompts):
            end = prompts[i + 1] if i + 1 < len(prompts) else len(numbered)
            output = "".join(text + "\n" for _, text in numbered[at + 1 : end])
            number, text = numbered[at]
            found.append(_command(f"{name}:{number}", text[2:], output or None))
    return found


def _command(where: str, text: str, output: str | None) -> Command:
    stated = _EXIT.search(text)
    return Command(where, text, int(stated.group(1)) if stated else 0, output)


ALL = [command for path in DOCS for command in commands(path)]

_SUITE_ITSELF = "this test suite itself (it would run inside itself); .ci/run runs it"
_DEVICE_RECORD = "the GPU machine's session as recorded: $OUT and .whl/ exist only there"

#: Commands the tests do not run, and why not. Each is still checked to be in the docs.
NOT_RUN: dict[str, str] = {
    "pip install -e .": "installs the checkout into the interpreter that runs these tests",
    'apt-get update && apt-get install -y chromium && pip install -e ".[dev]" && python -m '
    "pytest -n auto": f"root and the network (apt), then an install and {_SUITE_ITSELF}",
    'pip install -e ".[dev]" && python -m pytest -n auto': f"an install, then {_SUITE_ITSELF}",
    "python -m pytest -n auto": _SUITE_ITSELF,
    "python -m pytest -n auto -m slow": "this suite's slow part, of which this test is one",
    'python -m pytest -n auto -m "not venv and not gpu"': _SUITE_ITSELF,
    "REPRO_TEST_TIMES=/tmp/times nice -n 5 python -m pytest -n 2 -p bench.pytest_times -q -rs": (
        _SUITE_ITSELF
    ),
    "repro bisect tma-gemm-prefetch-dd243cf3450f --bad nightly-a.whl --good nightly-b.whl": (
        "nightly wheels, which no package index keeps; tests/test_wheelhouse.py bisects over "
        "release wheels re-tagged as nightlies"
    ),
    "pip install --no-index --no-deps --target /tmp/site .whl/*.whl": _DEVICE_RECORD,
    "PYTHONPATH=/tmp/site:. python -m pytest -m gpu -n 4 -p no:cacheprovider -q -rA "
    "--junitxml=$OUT/gpu-junit.xml tests/": _DEVICE_RECORD,
    "apt-get install -y cvise": "root and the network (apt)",
    "python bench/bench_reduce.py --jobs 2 --budget 900 --cvise-cap 240 --json "
    "reduce-bench.json": "C-Vise (apt, above) and about 40 minutes; the doc keeps its figures",
    "PYTHONPATH=. python bench/bench_reduce.py --jobs 2 --budget 900 --cvise-cap 900 --json "
    "reduce-bench.json": "C-Vise (apt) and about an hour; the doc keeps its figures",
    "repro matrix -j 1 --timeout 300 -o /tmp/rf/full --triton 3.0.0,3.1.0,3.2.0,3.3.0,3.3.1,"
    "3.4.0,3.5.0,3.5.1,3.6.0,3.7.0,3.7.1,3.8.0,3.9.0": (
        "the whole catalogue under 13 releases: hours; the three matrices above are its slices"
    ),
}
_DEVICE_SESSION = next(c.key for c in ALL if c.key.startswith("export PYTHONPATH=$PWD"))
NOT_RUN[_DEVICE_SESSION] = _DEVICE_RECORD

_PY350 = "~/.cache/triton-repro-suite/venvs/triton-3.5.0/bin/python"
_CATALOGUE = Heavy(("slow",), "the whole catalogue: 162 cases, 100 s on a quiet 2-core machine")
_BUILT_350 = Heavy(("slow", "venv"), "the 3.5.0 release venv")
_FINDING = Heavy(("slow", "venv"), "the 3.5.0 venv and its explore (the finding)")
_RELEASES = Heavy(("slow", "venv"), "a release venv each")
# What a GPU-marked test already shows, at more cost: outside the GPU-marked run
# (bench/gpu_tests_twice.sh), in docs/testing.md's table of which test keeps it.
_GPU_SHOWN = Heavy(("gpu", "slow"), "launches on an NVIDIA GPU what a GPU-marked test shows")

#: Commands outside the default selection.
HEAVY: dict[str, Heavy] = {
    "repro run": _CATALOGUE,
    "pytest --repro -n auto --junitxml=repro.xml": _CATALOGUE,
    "repro run --python ~/venvs/triton-3.5.0/bin/python": _BUILT_350,
    "repro doctor --python ~/.cache/triton-repro-suite/venvs/triton-3.5.0/bin/python": Heavy(
        ("venv",), "the 3.5.0 release venv", releases=("3.5.0",)
    ),
    "repro matrix tma-gemm-prefetch -t sm_100 --triton 3.3.1,3.5.0,3.6.0,latest": _RELEASES,
    "repro bisect tma-gemm-prefetch-dd243cf3450f --bad 3.5.0 --good 3.9.0": _FINDING,
    "repro bisect tma-gemm-prefetch-dd243cf3450f --good 3.3.1 --bad 3.5.0": _FINDING,
    "repro matrix tma-gemm -t sm_90 --triton 3.6.0 --wheelhouse wheels": _RELEASES,
    "repro reduce tma-gemm-prefetch-dd243cf3450f": _FINDING,
    "repro explain tma-gemm-prefetch-dd243cf3450f --variant num_stages=1": _FINDING,
    "repro report tma-gemm-prefetch-dd243cf3450f --verify": _FINDING,
    "repro report tma-gemm-prefetch-dd243cf3450f --format github": _FINDING,
    "repro run cuda-tma-1d cuda-tma-2d-pipeline -c all": Heavy(("slow",), "54 cases, 80 s"),
    "python -m pytest tests/test_cuda_tma.py -q": Heavy(("slow",), "a test file of its own"),
    "repro run cuda-tma-1d cuda-tma-2d-pipeline -c all --target sm_90 --gpu on": _GPU_SHOWN,
    "python -m pytest tests/test_cuda_tma.py -q -m gpu -s": _GPU_SHOWN,
    "nvcc -arch=sm_90a -DBOX_ROWS=128 -DBOX_COLS=64 -DBUFFER_ELEMS=4096 -DTX_BYTES=16384 "
    "-DSTAGES=2 -o /tmp/p repros/cuda/tma_pipeline_2d.cu && /tmp/p --rows 1024 --cols 1024": Heavy(
        ("gpu",), "a kernel that traps on the GPU", alone=True
    ),
    "pytest --repro --repro-select tma-gemm-prefetch --repro-target sm_100": Heavy(
        ("slow",), "a pytest session of its own, 15-20 s"
    ),
    f"repro explore tma-gemm-prefetch --target sm_100 --python {_PY350} --seed 0 "
    "--max-examples 10": _BUILT_350,
    "python bench/bench_explore.py --full-grid --workers 2 --json bench-explore.json": Heavy(
        ("slow",), "the full grid: 340 CPU s (docs/testing.md)"
    ),
    "repro gate --kernel tma-gemm --current bench/gate/seed003-current.yaml --proposed "
    "bench/gate/seed003-proposed.yaml --target sm_90 --gpu on --sizes 4096,8192": _GPU_SHOWN,
    "repro gate --kernel tma-gemm --current bench/gate/seed003-current.yaml --suggest "
    "--target sm_90 --sizes 8192 --time-budget 420": Heavy(("gpu", "slow"), "a GPU for 420 s"),
    "python bench/hostile_probe.py --json probe.json": Heavy(("slow",), "155 probes, 8 minutes"),
    "PYTHONPATH=. python bench/hostile_probe.py --round 2 --json probe2.json": Heavy(
        ("slow",), "minutes"
    ),
    "PYTHONPATH=. python bench/hostile_probe.py --round 4 --json probe4.json": Heavy(
        ("slow",), "3 GiB memfd and /dev/shm hoards, minutes"
    ),
    "PYTHONPATH=. python bench/hostile_probe.py --round 3 --json probe3.json": Heavy(
        ("slow",), "46 CPU s; its angles are tests/hostile/test_round3.py's, run by default"
    ),
    "pip download triton==3.6.0 --no-deps -d wheels": Heavy(("slow", "venv"), "the network"),
    "python bench/report_examples.py --check": Heavy(
        ("slow", "venv"), "two runs and reports under 3.5.0 and 3.9.0; test_repro_script.py's twin"
    ),
    "PIP_NO_INDEX=1 repro matrix tma-gemm-prefetch -t sm_100 -c trigger --triton 3.6.0 "
    "--wheelhouse wheels": _RELEASES,
    "repro explore tma-gemm-prefetch -t sm_100 --python "
    "~/.cache/triton-repro-suite/venvs/triton-3.5.0/bin/python": _BUILT_350,
    "python -m bench.pytest_times /tmp/times.*.jsonl": Heavy(
        ("slow",), "a pytest session of its own first"
    ),
}
for _command in ALL:
    if _command.key.startswith("repro matrix upstream-"):
        HEAVY[_command.key] = Heavy(("slow", "venv"), "13 release venvs, tens of minutes")

_VENV_350 = "python -m suite.toolchain.venvs 3.5.0"
_EXPLORED = (
    f"{_VENV_350} && repro explore tma-gemm-prefetch -t sm_100 "
    "--python ~/.cache/triton-repro-suite/venvs/triton-3.5.0/bin/python"
)
_A_PROGRAM = "cp tests/data/capture/several_kernels.py"

#: What a command needs first, in words in the docs, as shell run in the same folder before it.
GIVEN: dict[str, str] = {
    # "a reproducer file of your own": the first python block of docs/writing-reproducers.md
    # (the second shows the plain-data declaration of the same reproducer).
    "repro run my_repro.py": (
        "awk '/^```python/ {inside=1; next} inside && /^```/ {exit} inside'"
        " docs/writing-reproducers.md > my_repro.py"
    ),
    "repro run --config-file configs.yaml tma-gemm": (
        "echo '- {BLOCK_M: 64, BLOCK_N: 64, BLOCK_K: 32, num_stages: 2, num_warps: 4, dtype: fp16}'"
        " > configs.yaml"
    ),
    # "the newest interrupted run": one stopped by SIGINT once a case is recorded (or done).
    "repro run --resume": (
        "repro run tma-gemm-prefetch -t sm_100 & "
        "until grep -qs . reports/runs/*/results.jsonl; do sleep 0.1; done; "
        "kill -INT $! 2>/dev/null; wait $! || true"
    ),
    "repro run --python ~/venvs/triton-3.5.0/bin/python": (
        f"{_VENV_350} && mkdir ~/venvs && ln -s $REPRO_VENV_ROOT/triton-3.5.0 ~/venvs/"
    ),
    "repro doctor --python ~/.cache/triton-repro-suite/venvs/triton-3.5.0/bin/python": _VENV_350,
    f"repro explore tma-gemm-prefetch --target sm_100 --python {_PY350} --seed 0 "
    "--max-examples 10": _VENV_350,
    "repro explore tma-gemm-prefetch -t sm_100 --python "
    "~/.cache/triton-repro-suite/venvs/triton-3.5.0/bin/python": _VENV_350,
    # a run to show: one case is enough (the prefetch reproducer's 8 on sm_100 cost 3.9 CPU s)
    "repro dashboard": "repro run tma-copy -t sm_90 -c fp32",
    "repro capture -- python my_script.py": f"{_A_PROGRAM} my_script.py",
    "repro capture -- python train.py --steps 10": f"{_A_PROGRAM} train.py",
    "repro matrix tma-gemm -t sm_90 --triton 3.6.0 --wheelhouse wheels": (
        "pip download triton==3.6.0 --no-deps -d wheels"
    ),
    "PIP_NO_INDEX=1 repro matrix tma-gemm-prefetch -t sm_100 -c trigger --triton 3.6.0 "
    "--wheelhouse wheels": "pip download triton==3.6.0 --no-deps -d wheels",
    "python -m bench.pytest_times /tmp/times.*.jsonl": (
        "REPRO_TEST_TIMES=/tmp/times python -m pytest -p bench.pytest_times -q "
        "tests/test_docs.py -k fence"
    ),
}
# The night's commands, each after the ones before it on the three runners' shards.
_SHARDS = " && ".join(f"repro run --gpu off --shard {k}/3 -o shard-{k}" for k in (1, 2, 3))
_NIGHT = (
    _SHARDS,
    "repro merge shard-*/runs/* -o reports",
    "repro nightly plan reports/runs/* --state state --plan plan.json",
    "repro nightly advance plan.json --state state",
)
for _at in range(1, len(_NIGHT)):
    GIVEN[_NIGHT[_at]] = " && ".join(_NIGHT[:_at])
    HEAVY[_NIGHT[_at]] = Heavy(("slow",), "the whole catalogue in three shards first")
HEAVY["repro run --gpu off --shard 1/3 -o shard-1"] = Heavy(("slow",), "a third of the catalogue")
for _command in ALL:
    if "tma-gemm-prefetch-dd243cf3450f" in _command.key and _command.key not in NOT_RUN:
        GIVEN[_command.key] = _EXPLORED


#: Commands whose stated exit holds only under some Triton releases (the ``triton`` marker):
#: the gate's verdict on tma-gemm needs tl.make_tensor_descriptor (3.4); before it each config
#: is `unsupported`, not checked, and the gate's verdict is `unchecked` (exit 2).
TRITON_BOUNDS: dict[str, str] = {
    command.key: ">=3.4"
    for command in ALL
    if command.key.startswith("repro gate --kernel tma-gemm ")
}


def _marks(command: Command) -> list[pytest.MarkDecorator]:
    heavy = HEAVY.get(command.key)
    marks = [getattr(pytest.mark, mark) for mark in heavy.marks] if heavy else []
    if command.key in TRITON_BOUNDS:
        marks.append(pytest.mark.triton(TRITON_BOUNDS[command.key]))
    return marks


def _params() -> list:
    """One test per distinct command and shown output (the README and a doc may show the same
    command), named by where it first appears."""
    first: dict[tuple[str, str | None], Command] = {}
    for command in ALL:
        first.setdefault((command.key, command.output), command)
    return [
        pytest.param(command, id=command.where, marks=_marks(command))
        for command in first.values()
        if command.key not in NOT_RUN
    ]


def _clone(folder: Path) -> Path:
    """A copy of the checkout's files (tracked, and untracked ones git does not ignore)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a file deleted in the work tree is still in the index
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return folder


def _home(folder: Path, heavy: Heavy | None) -> Path:
    """A scratch home whose cache folder holds the machine's release venvs (a link) for a
    command marked ``venv`` (only those it names, when it names them), and none for the
    others, as on a fresh machine: ``repro doctor`` checks each cached venv with an import
    and a compile (about 0.7 CPU s a venv), and a command that needs none must not depend on
    what this machine has built."""
    venvs = folder / ".cache" / "triton-repro-suite" / "venvs"
    venvs.parent.mkdir(parents=True)
    if heavy is None or "venv" not in heavy.marks:
        venvs.mkdir()
    elif heavy.releases is None:
        venvs.symlink_to(venv_root(), target_is_directory=True)
    else:
        venvs.mkdir()
        for release in heavy.releases:
            built = Path(for_version(release).python).parents[1]  # or waited for (prebuild)
            (venvs / built.name).symlink_to(built, target_is_directory=True)
    return folder


def _bash(script: str, folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", script], cwd=folder, env=env, capture_output=True, text=True, timeout=3600
    )


def _shown(done: subprocess.CompletedProcess[str]) -> str:
    out, err = done.stdout[-4000:], done.stderr[-4000:]
    return f"{done.args[-1]}\nexit {done.returncode}\nstdout:\n{out}\nstderr:\n{err}"


#: A capture whose exit is its program's own (docs/capture.md: the exit status is the
#: program's): the program alone, whose exit the capture must give. The sample program's
#: compile fails where the release has its bug (3.5.0: exit 1) and passes where it is fixed.
PROGRAM_ALONE: dict[str, str] = {
    "repro capture -- python my_script.py": "python my_script.py",
    "repro capture -- python train.py --steps 10": "python train.py --steps 10",
}


@pytest.mark.parametrize("command", _params())
def test_the_command_runs_as_written(command: Command, tmp_path: Path) -> None:
    clone = _clone(tmp_path / "clone")
    home = _home(tmp_path / "home", HEAVY.get(command.key))
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "REPRO_VENV_ROOT": str(home / ".cache" / "triton-repro-suite" / "venvs"),
        # The copy's code, as the clone's own `pip install -e .` would run it.
        "PYTHONPATH": os.pathsep.join(p for p in (str(clone), os.environ.get("PYTHONPATH")) if p),
        # `repro`, `pytest`: this interpreter's scripts first.
        "PATH": os.pathsep.join((str(Path(sys.executable).parent), os.environ["PATH"])),
        "COLUMNS": "200",
    }
    if command.key in GIVEN:
        given = _bash(GIVEN[command.key], clone, env)
        assert given.returncode == 0, f"given for {command.where}: {_shown(given)}"
    expected = command.exit
    if command.key in PROGRAM_ALONE:
        expected = _bash(PROGRAM_ALONE[command.key], clone, env).returncode
    heavy = HEAVY.get(command.key)
    with gpu_alone() if heavy is not None and heavy.alone else contextlib.nullcontext():
        done = _bash(command.text, clone, env)
    assert done.returncode == expected, f"{command.where}: {_shown(done)}"
    if command.output is not None:
        checker = doctest.OutputChecker()
        flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
        assert checker.check_output(command.output, done.stdout, flags), _shown(done)


def test_every_fence_says_its_language() -> None:
    """An untagged fence could hold a command no test runs: each says what it holds."""
    untagged = [
        f"{path.relative_to(ROOT)}:{line} {language!r}"
        for path in DOCS
        for language, line, _ in fences(path)
        if language not in SHELL | NOT_SHELL
    ]
    assert not untagged, untagged


#: What marks a line of a usage synopsis as one to fill in: a metavariable (FINDING, RUN_DIR),
#: an <angle> or [optional] part, or an ellipsis.
_PLACEHOLDER = re.compile(r"\b[A-Z][A-Z_]*\b(?!=)|<[^>]+>|\[[^\]]*\]|\.\.\.")
_COMMAND_WORDS = ("repro ", "python ", "pytest ", "pip ", "PYTHONPATH=")


def test_a_text_block_holds_no_command_that_could_run_as_written() -> None:
    """A synopsis is text; a command with nothing left to fill in belongs in a shell block,
    where it runs."""
    runnable = [
        f"{path.relative_to(ROOT)}:{number}: {text}"
        for path in DOCS
        for language, line, content in fences(path)
        if language == "text"
        for number, text in _logical_lines(content, line + 1)
        if text.removeprefix("$ ").startswith(_COMMAND_WORDS) and not _PLACEHOLDER.search(text)
    ]
    assert not runnable, runnable


def test_every_table_entry_names_a_command_of_the_docs() -> None:
    """A command rewritten or removed in the docs leaves no stale entry behind."""
    shown = {command.key for command in ALL}
    stale = [key for table in (NOT_RUN, HEAVY, GIVEN) for key in table if key not in shown]
    assert not stale, stale


def test_the_docs_show_commands() -> None:
    """The parser finds the blocks (a test over nothing would pass)."""
    readme = [c for c in ALL if c.where.startswith("README.md:")]
    assert any(c.key == "repro list" for c in readme), [c.key for c in readme]


def test_ci_runs_the_readme_test_command_as_written(tmp_path: Path) -> None:
    """``.ci/run`` runs the README's line that ends ``# the tests``, as written: the command
    that :data:`NOT_RUN` names as the test command (a ``bash`` first on the path shows what
    it was handed instead of running it)."""
    shown = tmp_path / "bin"
    shown.mkdir()
    (shown / "bash").write_text(
        '#!/bin/sh\n[ "$1" = -euo ] && exec echo "$4"\nexec /bin/bash "$@"\n'
    )
    (shown / "bash").chmod(0o755)
    env = {**os.environ, "PATH": os.pathsep.join((str(shown), os.environ["PATH"]))}
    done = subprocess.run(
        ["/bin/bash", str(ROOT / ".ci" / "run")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,  # a script that ran the command itself would be stopped here
    )
    assert done.returncode == 0, done.stderr
    (command,) = [c for c in ALL if c.where.startswith("README.md:") and "# the tests" in c.text]
    assert done.stdout.strip() == command.key
    assert command.key in NOT_RUN
