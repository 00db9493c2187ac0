"""Shared fixtures: real reproducer files on disk and the real ``repro`` command."""

from __future__ import annotations

import compileall
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from suite.files import cache_root

ROOT = Path(__file__).resolve().parent.parent

# Release venvs and the npm tools are built once per machine and shared; everything else the
# suite caches (the import shim, Triton's kernel caches) goes to a scratch folder per session.
SHARED_CACHE = cache_root()
#: A GitHub-token-shaped credential that hostile tests plant in a source (split: not a real one).
SOURCE_SECRET = "ghp_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8Nn"
os.environ.setdefault("REPRO_VENV_ROOT", str(SHARED_CACHE / "venvs"))
SESSION_CACHE = tempfile.mkdtemp(prefix="repro-test-cache-")
#: When this process began (each xdist worker's is its own, seconds after the first's): a
#: release venv checked after it was built during this session, from nothing.
SESSION_STARTED = time.time()
os.environ["XDG_CACHE_HOME"] = SESSION_CACHE

PLANTED = """
import ctypes
import os
import re
import subprocess
import sys
import time

from suite import Choice, Compiled, Reproducer

MODES = ("ok", "segv", "abort", "pyhang", "chang", "flood", "oom", "orphan", "exit", "raise")

REPRO = Reproducer(
    id="planted-crashes",
    title="Children that misbehave in every way the engine must survive",
    family="test",
    params=(Choice("mode", MODES), Choice("tag", (0, 1, 2, 3, 4, 5))),
    configs={"all": [{"mode": m, "tag": 0} for m in MODES],
             "slow": [{"mode": "ok", "tag": t} for t in range(6)]},
    targets=("sm_90",),
    label="{mode}-{tag}",
)


@REPRO.compile
def compile_case(case):
    mode = case["mode"]
    if os.environ.get("PLANTED_SLEEP"):
        time.sleep(float(os.environ["PLANTED_SLEEP"]))
    if mode == "segv":
        ctypes.string_at(0)
    if mode == "abort":
        os.abort()
    if mode == "pyhang":
        # A hang in Python code, asleep there: a busy loop burned the whole timeout (15 CPU s
        # in test_isolation.py) for the same timeout, kill and traceback.
        while True:
            time.sleep(0.05)
    if mode == "chang":
        ctypes.CDLL(None).pause()
    if mode == "flood":
        chunk = b"x" * (1 << 20)
        for _ in range(1024):
            sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
        raise RuntimeError("flooded")
    if mode == "oom":
        # 3 GiB, then held: over any cap a test sets (1 GiB), far under the machine's memory,
        # so the cap (not the kernel's OOM killer) ends it however late the check comes.
        hoard = [b"\\1" * (1 << 26) for _ in range(48)]
        time.sleep(600)
        return Compiled(shared_bytes=len(hoard))
    if mode == "orphan":
        subprocess.Popen(["sleep", "1000.25"], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.Popen(["sleep", "1000.5"], stdout=sys.stdout, stderr=sys.stderr)
    if mode == "exit":
        os._exit(7)
    if mode == "raise":
        raise RuntimeError(f"planted failure at 0x7f3a12 in /tmp/x{case['tag']}/f.py:12")
    return Compiled(shared_bytes=1024)
"""


@dataclass
class Completed:
    code: int
    stdout: str
    stderr: str


def checkout_env() -> dict[str, str]:
    """This process's environment with the checkout first on the path of a child (what the
    environment already puts there, wheels carried onto a GPU machine say, stays)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def repro_cli(
    *args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 900
) -> Completed:
    """Run the real ``repro`` command line in a fresh interpreter."""
    proc = subprocess.run(
        [sys.executable, "-m", "suite.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )
    return Completed(proc.returncode, proc.stdout, proc.stderr)


#: Every release the tests run cases under (CI caches their venvs by this file).
RELEASES = (ROOT / ".ci" / "releases").read_text().split()
#: Releases no default test runs a case under: only the checks of every release's table (its
#: source form, its instrumentation) read them, and those rows are the nightly's, so a fresh
#: machine's default run builds two venvs fewer.
NIGHTLY_RELEASES = ("3.7.0", "3.8.0")


def per_release(releases: list[str]) -> list:
    """One test parameter per release; those of :data:`NIGHTLY_RELEASES` are ``slow`` and say
    their release (``releases``), so the prebuild leaves them to a session that runs them."""
    return [
        pytest.param(r, marks=(pytest.mark.slow, pytest.mark.releases(r)))
        if r in NIGHTLY_RELEASES
        else r
        for r in releases
    ]


def prebuilt(items: list[pytest.Item]) -> list[str]:
    """The releases to prebuild for ``items``: all, but those only skipped tests name."""

    def named(chosen: list[pytest.Item]) -> set[str]:
        return {v for item in chosen for mark in item.iter_markers("releases") for v in mark.args}

    skipped = [item for item in items if any(True for _ in item.iter_markers("skip"))]
    left_out = named(skipped) - named([item for item in items if item not in skipped])
    return [r for r in RELEASES if r not in left_out]


class Prebuild:
    """The release venvs a fresh machine lacks, built side by side in the background while
    the tests that need none run (tests that need one wait on its lock). Built lazily, one
    at a time per worker, they held up a worker each for their whole build."""

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self, releases: list[str]) -> None:
        self.thread = threading.Thread(target=self._build_all, args=(releases,), daemon=True)
        self.thread.start()

    def _build_all(self, releases: list[str]) -> None:
        from suite.toolchain.venvs import BUILDS_AT_ONCE

        with ThreadPoolExecutor(max_workers=BUILDS_AT_ONCE) as pool:
            list(pool.map(self._build, releases))

    def _build(self, release: str) -> None:
        from suite.errors import UsageError
        from suite.toolchain.venvs import for_version

        if self.stopping.is_set():
            return
        # No package index, no disk: the test that needs the venv says so when it builds it.
        with contextlib.suppress(UsageError, OSError, subprocess.CalledProcessError):
            for_version(release)

    def stop(self) -> None:
        """Start no more builds; wait for those under way (a venv is never left half-built)."""
        self.stopping.set()
        if self.thread:
            self.thread.join()


PREBUILD = Prebuild()


def pytest_configure(config):
    """The checkout's bytecode, made once by the controlling process: where
    PYTHONDONTWRITEBYTECODE is set (this project's machines) no import writes it, and each
    of the thousands of processes the tests start compiled the suite's and the catalogue's
    modules again (about 0.1 CPU s a process). Only what Python itself writes without that
    setting, under ``__pycache__`` (or ``PYTHONPYCACHEPREFIX``)."""
    if not hasattr(config, "workerinput"):
        for package in ("suite", "repros"):
            compileall.compile_dir(ROOT / package, quiet=1)


def pytest_collection_finish(session):
    """One process prebuilds (xdist's first worker, else the only one), and only when a
    selected test uses release venvs."""
    from suite.toolchain.venvs import CHECKED, folder_for

    worker = getattr(session.config, "workerinput", {}).get("workerid", "gw0")
    if worker != "gw0" or session.config.option.collectonly:
        return
    if not any(item.get_closest_marker("venv") for item in session.items):
        return
    missing = [r for r in prebuilt(session.items) if not (folder_for(r) / CHECKED).exists()]
    if missing:
        PREBUILD.start(missing)


def pytest_sessionfinish(session, exitstatus):
    PREBUILD.stop()
    shutil.rmtree(SESSION_CACHE, ignore_errors=True)


@pytest.fixture(scope="session")
def shared_cache() -> Path:
    """The user's cache folder, where tools built once per machine (npm packages) live."""
    return SHARED_CACHE


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    path = tmp_path / "planted_repro.py"
    path.write_text(textwrap.dedent(PLANTED))
    return path


@pytest.fixture(scope="session")
def triton_350() -> Path:
    """A cached venv holding triton==3.5.0 and nothing else, built once per machine."""
    from suite.toolchain.venvs import for_version

    return Path(for_version("3.5.0").python)


@dataclass(frozen=True)
class SharedRun:
    """A ``repro run`` made once for the whole session, every xdist worker included: what it
    printed and its run folder, which the tests that share it only read."""

    done: Completed
    run: Path


def shared_run(factory: pytest.TempPathFactory, name: str, *args: str) -> SharedRun:
    """``repro run ARGS -o <folder>`` in a folder of the session (under xdist, the one above
    the workers' own), made by the first worker to ask while the others wait on its lock."""
    from suite.files import locked

    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # shared by this session's workers, unlike its parent
    folder = base / f"shared-{name}"
    folder.mkdir(exist_ok=True)
    answer = folder / "done.json"
    with locked(folder):
        if not answer.exists():
            done = repro_cli("run", *args, "-o", str(folder / "out"))
            answer.write_text(json.dumps(vars(done)))
    done = Completed(**json.loads(answer.read_text()))
    runs = sorted((folder / "out" / "runs").iterdir()) if done.code in (0, 1) else []
    assert len(runs) == 1, done.stdout + done.stderr
    return SharedRun(done, runs[0])


@pytest.fixture(scope="session")
def prefetch_run_350(tmp_path_factory: pytest.TempPathFactory, triton_350: Path) -> SharedRun:
    """``repro run tma-gemm-prefetch -t sm_100`` under 3.5.0 (the AssignLatencies bug), read
    by the 3.5.0 verdicts, the replay tests and the replay logs: one run, not three."""
    args = ("tma-gemm-prefetch", "-t", "sm_100", "--python", str(triton_350))
    return shared_run(tmp_path_factory, "prefetch-350", *args)


@pytest.fixture(scope="session")
def readme_run(tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    """The README's ``repro run`` (every built-in, on each of its targets, every config set)
    under the installed Triton, two workers: read by the README command's own check, the
    upstream ports' outcomes, the default run's files and the fixed bug's pass on the newest
    release, each of which ran a part of it again (86.6 CPU s, the largest test)."""
    return shared_run(tmp_path_factory, "readme", "--workers", "2")


@contextlib.contextmanager
def gpu_alone() -> Iterator[None]:
    """Around a test's own process that may fault or hang on the GPU (a repro.py run by
    itself, a CUDA program): run as the tool runs one (``suite.engine.gpu_check.alone_on``),
    alone on the tests' GPU machine-wide, the GPU checked after it. Never around a ``repro``
    command: it takes the same lock for its own launches. Without a GPU nothing can fault
    there: the process just runs."""
    from suite.engine import gpu_arch
    from suite.engine.gpu_check import alone_on

    if gpu_arch() is None:
        yield
        return
    with alone_on(the_gpus()[0], "a test's own process"):
        yield


def gpu_reduce_budget() -> str:
    """``--time-budget`` of a GPU test's reduction: 240 s, or ``REPRO_TEST_REDUCE_S`` (a device
    call that runs the GPU tests twice in 560 s gives it less: bench/gpu_tests_twice.sh)."""
    return os.environ.get("REPRO_TEST_REDUCE_S", "240")


def the_gpus() -> tuple[str, ...]:
    """The GPUs a GPU test runs cases on, as ``repro`` picks them (``Execution.gpus``): the
    machine-wide lock of each, and the GPU checked after a launch that failed."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    return tuple(v.strip() for v in visible.split(",") if v.strip()) or ("0",)


def gpu_visible() -> bool:
    """A GPU that CUDA can use: nvidia-smi lists one and torch sees it."""
    if not shutil.which("nvidia-smi"):
        return False
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config, items):
    from suite.api import _release_in

    no_gpu = pytest.mark.skip(reason="needs an NVIDIA GPU with torch (none visible)")
    visible = gpu_visible()
    opted_in = "slow" in (config.option.markexpr or "")
    not_slow = pytest.mark.skip(reason="the full sweep: opt in with -m slow (the nightly job)")
    for item in items:
        if "slow" in item.keywords and not opted_in:
            item.add_marker(not_slow)
        if "gpu" in item.keywords and not visible:
            item.add_marker(no_gpu)
        for mark in item.iter_markers("triton"):
            (bounds,) = mark.args
            if not _release_in("triton", bounds):
                reason = f"expectations written for triton{bounds} (installed: {triton_release()})"
                item.add_marker(pytest.mark.skip(reason=reason))


def newest_installed() -> str:
    """The installed Triton, when no cached release venv is newer (else skip): for a test of
    what the newest release does (a lane under an older release, such as 3.5.0's, skips it)."""
    import triton
    from packaging.version import Version

    from suite.toolchain.venvs import venv_root

    installed = triton.__version__.split("+")[0]
    cached = [p.name.removeprefix("triton-") for p in venv_root().glob("triton-*")]
    newer = [v for v in cached if Version(v) > Version(installed)]
    if newer:
        pytest.skip(f"installed triton {installed} is not the newest release ({max(newer)})")
    return installed


def triton_release() -> str:
    """The installed Triton's release number, without local or dev tags (3.5.0)."""
    from importlib.metadata import version

    return re.match(r"\d+\.\d+\.\d+", version("triton")).group(0)


def write_finding(
    program: Path,
    signature: str,
    outcome: str,
    folder: Path,
    config: dict,
    passing: dict | None = None,
    name: str = "runtime",
    release: str = "3.9.0",
    python: str = sys.executable,
) -> Path:
    """A finding of ``program``'s reproducer at ``config`` on sm_90 (carrying its source),
    found under triton ``release`` by ``python``, written as ``folder/findings/NAME.json``, as
    explore or capture writes one."""
    from suite.engine import discover
    from suite.engine.environment import Environment
    from suite.engine.sources import capture_source
    from suite.failures.findings import Finding, SeenConfig

    found = discover.from_source({"path": str(program)}, str(program))[0]
    carried = capture_source({"path": str(program)})
    assert carried is not None
    record = Finding(
        repro=found.repro.id,
        signature=signature,
        kind="bug",
        outcome=outcome,
        message="",
        target="sm_90",
        targets=["sm_90"],
        minimal_config=dict(config),
        failing_configs=[],
        passing_neighbours=[SeenConfig("sm_90", dict(passing))] if passing else [],
        boundary=[],
        environment=Environment(triton=release, python_executable=python),
        seed=0,
        first_seen="",
        last_seen="",
        source=carried.to_json(with_text=True),
    )
    path = folder / "findings" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record.to_json(), indent=2))
    return path


def suite_blocked(folder: Path) -> str:
    """A folder under ``folder`` to put first on ``PYTHONPATH`` so that ``import suite`` fails
    however the suite is installed (a package of its name there refuses to load)."""
    blocked = folder / "no-suite" / "suite"
    blocked.mkdir(parents=True, exist_ok=True)
    (blocked / "__init__.py").write_text("raise ImportError('suite is made unimportable')\n")
    return str(blocked.parent)


def run_alone(script: Path) -> subprocess.CompletedProcess[str]:
    """``script`` (a report's repro.py) run by itself under Triton's interpreter, the suite
    made unimportable, as a maintainer runs it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, script.name],
        cwd=script.parent,
        env={**env, "TRITON_INTERPRET": "1", "PYTHONPATH": suite_blocked(script.parent)},
        capture_output=True,
        text=True,
        timeout=600,
    )
