"""``repro doctor``: what this machine can do, in a few seconds, and how to fix what it cannot.

It reads, without running any reproducer:

- the Triton release of the interpreter that runs the cases, and where it comes from;
- for each target the built-in reproducers cover, whether the ptxas that Triton runs for it
  assembles a kernel for the ``a`` target (a real ``ptxas -arch`` of a one-instruction PTX
  kernel, in :mod:`suite.toolchain.probe`, under that interpreter);
- nvcc, the CUDA driver, the GPUs and their arch;
- the cached release venvs and their sizes, the output root and its free disk;
- whether the baseline and the findings store load;
- the boundary around each case: a cgroup per case (kill and memory) or the process tree
  and PSS, and why a better one is not in force (:mod:`suite.engine.boundary`).

Each problem comes with the command that fixes it. Exit status: 0 when everything the
default ``repro run`` needs is there (Triton imports, its ptxas assembles at least one target,
the output root is writable, the baseline loads); 2 otherwise, with one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from suite.cli.options import DEFAULT_OUTPUT, user_path
from suite.cli.render import add_output_options

PROBED_TARGETS = ("sm_90a", "sm_100a", "sm_103a", "sm_120a", "sm_121a")
"""The architecture-specific targets of the built-in reproducers (sm_90 .. sm_121)."""
LOW_DISK_BYTES = 2 << 30
"""Below this much free space under the output root, a run may not finish writing."""
EXIT_NOT_READY = 2


@dataclass(frozen=True)
class TritonOrigin:
    version: str
    path: str
    python: str
    installer: str
    source: str


@dataclass(frozen=True)
class TargetSupport:
    target: str
    compiles: bool
    ptxas: str
    release: str
    error: str


@dataclass(frozen=True)
class Tool:
    path: str
    version: str


@dataclass(frozen=True)
class Gpu:
    name: str
    arch: str
    driver: str


@dataclass(frozen=True)
class CachedVenv:
    name: str
    path: str
    size_bytes: int
    complete: bool  # its triton imports and compiles a kernel (checked now, in the venv)
    error: str  # why not, in one line ("" when it works)


@dataclass(frozen=True)
class OutputRoot:
    path: str
    exists: bool
    writable: bool
    free_bytes: int


@dataclass(frozen=True)
class StoreCheck:
    path: str
    valid: bool
    entries: int
    error: str


@dataclass(frozen=True)
class CaseBoundary:
    """What ends a case's processes and measures its memory here (``suite.engine.boundary``)."""

    kill: str
    memory: str
    in_force: str
    why_not: list[str]


@dataclass(frozen=True)
class Problem:
    what: str
    fix: str
    blocking: bool


@dataclass
class Diagnosis:
    """Everything ``repro doctor`` found (its ``--json``, ``docs/schemas.md``)."""

    triton: TritonOrigin | None
    targets: list[TargetSupport]
    nvcc: Tool | None
    cuda_driver: str | None
    gpus: list[Gpu]
    venv_root: str
    venvs: list[CachedVenv]
    output: OutputRoot
    baseline: StoreCheck
    findings: StoreCheck
    case_boundary: CaseBoundary
    problems: list[Problem] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return not any(p.blocking for p in self.problems)


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """Add ``doctor`` to ``commands``. Imports nothing heavy."""
    doctor = commands.add_parser(
        "doctor", help="what this machine can do (Triton, ptxas targets, GPU, venvs, stores)"
    )
    doctor.add_argument(
        "--python", type=user_path, help="interpreter whose Triton runs the cases (default: this)"
    )
    doctor.add_argument(
        "-o",
        "--output",
        type=user_path,
        default=DEFAULT_OUTPUT,
        help="output root (default: reports)",
    )
    doctor.add_argument(
        "--baseline", type=user_path, help="expectations file (default: the shipped baseline)"
    )
    add_output_options(doctor)


def _probe(python: str) -> tuple[TritonOrigin | None, list[TargetSupport], str | None, str]:
    """The toolchain probe under ``python``, isolated; the error line when it fails."""
    from suite.children import Role, child_argv
    from suite.engine import Bounds, child_env, run_isolated

    exit = run_isolated(
        child_argv(python, Role.TOOLCHAIN_PROBE, *PROBED_TARGETS),
        env=child_env(),
        bounds=Bounds(timeout_s=300),
    )
    try:
        facts = json.loads(exit.stdout.text.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        lines = exit.stderr.text.strip().splitlines() or ["no output"]
        return None, [], None, lines[-1]
    targets = [TargetSupport(**t) for t in facts["targets"]]
    return TritonOrigin(**facts["triton"]), targets, facts.get("driver"), ""


def _nvcc() -> Tool | None:
    path = shutil.which("nvcc")
    if path is None:
        return None
    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60).stdout
    match = re.search(r"release (\S+?),?\s+V(\S+)", out)
    return Tool(path, f"{match.group(1)} (V{match.group(2)})" if match else "unknown")


def _gpus() -> list[Gpu]:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    proc = subprocess.run(
        [smi, "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    gpus = []
    for line in proc.stdout.splitlines() if proc.returncode == 0 else []:
        name, cap, driver = (f.strip() for f in [*line.split(","), "", ""][:3])
        gpus.append(Gpu(name, "sm_" + cap.replace(".", ""), driver))
    return gpus


def _size(folder: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                continue
    return total


def _venvs(root: Path) -> list[CachedVenv]:
    """Every cached venv, each checked the way a build is: import triton, compile a kernel."""
    from concurrent.futures import ThreadPoolExecutor

    from suite.toolchain.venvs import BUILDS_AT_ONCE, check

    if not root.is_dir():
        return []
    folders = [f for f in sorted(root.iterdir()) if f.is_dir() and not f.name.startswith(".")]
    with ThreadPoolExecutor(max_workers=BUILDS_AT_ONCE) as pool:
        errors = list(pool.map(lambda f: check(str(f / "bin" / "python")), folders))
    return [
        CachedVenv(folder.name, str(folder), _size(folder), not error, error)
        for folder, error in zip(folders, errors, strict=True)
    ]


def _output_root(path: Path) -> OutputRoot:
    existing = path.resolve()
    while not existing.exists():
        existing = existing.parent
    return OutputRoot(
        str(path.resolve()),
        path.is_dir(),
        existing.is_dir() and os.access(existing, os.W_OK | os.X_OK),
        shutil.disk_usage(existing).free,
    )


def _baseline(path: str | None) -> StoreCheck:
    from suite.engine import DEFAULT_BASELINE, Baseline
    from suite.errors import UsageError

    shown = path or str(DEFAULT_BASELINE)
    try:
        baseline = Baseline.load(Path(path) if path else None)
    except UsageError as exc:
        return StoreCheck(shown, False, 0, str(exc))
    return StoreCheck(shown, True, len(baseline.expectations), "")


def _findings(root: Path) -> StoreCheck:
    from suite.failures.findings import Finding

    folder = root.resolve() / "findings"
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    for path in files:
        try:
            Finding.from_json(json.loads(path.read_text()))
        except (OSError, ValueError, TypeError, KeyError) as exc:
            return StoreCheck(str(folder), False, len(files), f"{path.name}: {exc}")
    return StoreCheck(str(folder), True, len(files), "")


def _case_boundary() -> CaseBoundary:
    from suite.engine import case_boundary

    found = case_boundary()
    return CaseBoundary(found.kill.value, found.memory.value, found.describe(), [*found.why_not])


def diagnose(python: str, output: Path, baseline: str | None) -> Diagnosis:
    from suite.toolchain.venvs import venv_root

    triton, targets, driver, probe_error = _probe(python)
    gpus = _gpus()
    diagnosis = Diagnosis(
        triton=triton,
        targets=targets,
        nvcc=_nvcc(),
        cuda_driver=driver,
        gpus=gpus,
        venv_root=str(venv_root()),
        venvs=_venvs(venv_root()),
        output=_output_root(output),
        baseline=_baseline(baseline),
        findings=_findings(output),
        case_boundary=_case_boundary(),
    )
    diagnosis.problems = problems(diagnosis, python, probe_error)
    return diagnosis


def problems(d: Diagnosis, python: str, probe_error: str) -> list[Problem]:
    """What is missing or broken, each with the command that fixes it."""
    return [*_toolchain_problems(d, python, probe_error), *_storage_problems(d)]


def _toolchain_problems(d: Diagnosis, python: str, probe_error: str) -> list[Problem]:
    """Triton, its ptxas, nvcc, the driver, the release venvs."""
    found: list[Problem] = []
    if d.triton is None:
        found.append(
            Problem(
                f"triton does not import under {python}: {probe_error}",
                f"{python} -m pip install triton",
                True,
            )
        )
    gaps = [t.target for t in d.targets if not t.compiles]
    if d.triton is not None and len(gaps) == len(d.targets):
        found.append(
            Problem(
                "the bundled ptxas assembles none of " + ", ".join(PROBED_TARGETS),
                f"{python} -m pip install --upgrade triton",
                True,
            )
        )
    elif gaps:
        found.append(
            Problem(
                f"triton {d.triton.version if d.triton else '?'}'s ptxas does not know "
                f"{', '.join(gaps)}: those cases are skipped as toolchain-gap",
                f"{python} -m pip install --upgrade triton  (or export TRITON_PTXAS_PATH="
                "/usr/local/cuda/bin/ptxas from a newer CUDA)",
                False,
            )
        )
    if d.nvcc is None:
        found.append(
            Problem(
                "no nvcc on PATH: the cuda-tma reproducers are skipped",
                "install the CUDA toolkit and export PATH=/usr/local/cuda/bin:$PATH",
                False,
            )
        )
    if d.gpus and d.cuda_driver is None:
        found.append(
            Problem(
                "a GPU is listed by nvidia-smi but libcuda does not load",
                "install the NVIDIA driver's libcuda (or add its folder to LD_LIBRARY_PATH)",
                False,
            )
        )
    for venv in d.venvs:
        if not venv.complete:
            version = venv.name.removeprefix("triton-")
            found.append(
                Problem(
                    f"the venv {venv.path} does not work: {venv.error}",
                    f"python -m suite.toolchain.venvs {version}"
                    if venv.name.startswith("triton-")
                    else f"rm -r {venv.path}  (the next run that needs it builds it again)",
                    False,
                )
            )
    return found


def _storage_problems(d: Diagnosis) -> list[Problem]:
    """The output root, the baseline, the findings, the case boundary."""
    found: list[Problem] = []
    if not d.output.writable:
        found.append(
            Problem(
                f"the output root {d.output.path} is not writable",
                "repro run -o <a writable folder>",
                True,
            )
        )
    elif d.output.free_bytes < LOW_DISK_BYTES:
        found.append(
            Problem(
                f"{_gib(d.output.free_bytes)} free under {d.output.path}",
                f"free space there, or repro run -o <a folder with {_gib(LOW_DISK_BYTES)} free>",
                False,
            )
        )
    if not d.baseline.valid:
        found.append(
            Problem(
                d.baseline.error,
                f"fix {d.baseline.path}, or repro run --baseline <a valid file>",
                True,
            )
        )
    if not d.findings.valid:
        broken = Path(d.findings.path) / d.findings.error.split(":")[0]
        found.append(
            Problem(
                f"malformed finding {d.findings.error}",
                f"mv {broken} {broken}.broken",
                False,
            )
        )
    if d.case_boundary.kill != "cgroup":
        found.append(
            Problem(
                "no cgroup per case ("
                + "; ".join(d.case_boundary.why_not)
                + "): a case's daemon that leaves its process tree and kills its keeper "
                "can outlive its case",
                "run repro in a cgroup it may make cgroups under, e.g. "
                "systemd-run --user --scope -p Delegate=yes repro run ...",
                False,
            )
        )
    return found


def _gib(size: int) -> str:
    return f"{size / (1 << 30):.1f} GiB"


def _lines(d: Diagnosis) -> list[str]:
    lines = []
    if d.triton is not None:
        t = d.triton
        lines.append(f"triton {t.version}: {t.path}")
        lines.append(f"  from {t.source} (installer {t.installer or 'unknown'}), python {t.python}")
    else:
        lines.append("triton: not importable")
    for target in d.targets:
        state = "yes" if target.compiles else f"no ({target.error})"
        lines.append(f"ptxas {target.target}: {state}  [{target.ptxas}, CUDA {target.release}]")
    lines.append(f"nvcc: {f'{d.nvcc.version} ({d.nvcc.path})' if d.nvcc else 'not found'}")
    lines.append(f"cuda driver: {d.cuda_driver or 'none (libcuda does not load)'}")
    if d.gpus:
        for gpu in d.gpus:
            lines.append(f"gpu: {gpu.name} ({gpu.arch}, driver {gpu.driver})")
    else:
        lines.append("gpu: none (cases compile only)")
    total = sum(v.size_bytes for v in d.venvs)
    lines.append(f"venvs: {len(d.venvs)} under {d.venv_root} ({_gib(total)})")
    for venv in d.venvs:
        state = "" if venv.complete else f" (broken: {venv.error})"
        lines.append(f"  {venv.name}: {_gib(venv.size_bytes)}{state}")
    out = d.output
    lines.append(
        f"output root: {out.path} ({'exists' if out.exists else 'not yet created'}, "
        f"{'writable' if out.writable else 'NOT writable'}, {_gib(out.free_bytes)} free)"
    )
    for name, store in (("baseline", d.baseline), ("findings", d.findings)):
        state = f"valid, {store.entries} entries" if store.valid else f"INVALID: {store.error}"
        lines.append(f"{name}: {store.path} ({state})")
    lines.append(f"case boundary: {d.case_boundary.in_force}")
    for why in d.case_boundary.why_not:
        lines.append(f"  not in force: {why}")
    for problem in d.problems:
        kind = "PROBLEM" if problem.blocking else "warning"
        lines.append(f"{kind}: {problem.what}")
        lines.append(f"  fix: {problem.fix}")
    lines.append(
        "ready: the default `repro run` has what it needs"
        if d.ready
        else "NOT ready: fix the PROBLEM lines above"
    )
    return lines


def cmd_doctor(args: argparse.Namespace) -> int:
    from suite.cli import render

    out = render.output_for(args)
    python = args.python or sys.executable
    diagnosis = diagnose(python, Path(args.output), args.baseline)  # a few seconds: no progress
    data = {**asdict(diagnosis), "ready": diagnosis.ready}
    out.show(render.View(data=data, lines=_lines(diagnosis)))
    if diagnosis.ready:
        return 0
    blocking = "; ".join(p.what for p in diagnosis.problems if p.blocking)
    print(f"repro: doctor: not ready: {blocking}", file=sys.stderr)
    return EXIT_NOT_READY
