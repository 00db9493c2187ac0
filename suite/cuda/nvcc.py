"""Build and run a CUDA C++ reproducer program with nvcc, in the child.

The CUDA reproducers (``repros/cuda/*.cu``) are whole programs: the host encodes the
descriptor, launches, checks the copy and prints one JSON line. :func:`compile_cuda`
compiles one for a case's target, as Triton's reproducers compile a kernel: without a GPU
it builds only the cubin (``nvcc -cubin``, about a second); when the case will be launched
it builds the executable and keeps the cubin of the same nvcc run (``--keep``), so a GPU
case costs one compile. :func:`executable` hands the launch code that program (building it
if the compile did not), and :func:`run_cuda` runs it and turns its exit status into the
engine's terms: a :class:`~suite.api.WrongResult` for wrong data, a :class:`CudaRunError`
naming the CUDA error for anything else.

Standard library only (plus ``suite.tritonc.cubin_resources`` for registers and spills,
which uses the ``cuobjdump`` Triton bundles, when Triton is importable).
"""

from __future__ import annotations

import atexit
import functools
import json
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from suite.api import Case, Compiled, Unsupported, WrongResult
from suite.cuda.model import Violation
from suite.toolchain.limits import limits_for
from suite.tritonc import cubin_resources

__all__ = [
    "EXIT_ENCODE",
    "EXIT_OK",
    "EXIT_RUNTIME",
    "EXIT_TIMEOUT",
    "EXIT_WRONG",
    "CudaRunError",
    "NvccError",
    "compile_checked",
    "compile_cuda",
    "cuda_arch",
    "executable",
    "run_cuda",
]

# Exit statuses of the reproducer programs (see the header comment of each .cu file).
EXIT_OK = 0
EXIT_USAGE = 2
EXIT_WRONG = 3
EXIT_ENCODE = 4
EXIT_RUNTIME = 5
EXIT_TIMEOUT = 6

_VERSION = re.compile(r"release [\d.]+, V([\d.]+)")


class NvccError(RuntimeError):
    """nvcc failed; the message holds the command and nvcc's own diagnostics (ptxas included)."""


class CudaRunError(RuntimeError):
    """The program hit a CUDA error: the first line of the message names it.

    ``error`` is the error's name (``CUDA_ERROR_INVALID_VALUE`` from the encode,
    ``cudaErrorIllegalAddress``, ...); ``result`` is the program's JSON line, parsed.
    """

    def __init__(
        self, message: str, error: str, result: Mapping[str, object] | None = None
    ) -> None:
        super().__init__(message)
        self.error = error
        self.result = dict(result or {})


def cuda_arch(case: Case) -> str:
    """nvcc's ``-arch`` for the case's target: ``sm_90a``, ``sm_100a``, ``sm_120a``.

    The ``a`` suffix is what unlocks the architecture-specific features (the same name Triton
    hands ptxas); TMA itself needs sm_90 or later.
    """
    return limits_for(case.target.name).ptxas_arch


def _nvcc() -> str:
    path = shutil.which("nvcc")
    if path is None:
        # The reproducers declare requires=("exe:nvcc",), so the child skips them before here.
        raise Unsupported("requires nvcc (CUDA toolkit) on the PATH")
    return path


@functools.lru_cache(maxsize=1)
def nvcc_version() -> str:
    proc = subprocess.run([_nvcc(), "--version"], capture_output=True, text=True, check=False)
    match = _VERSION.search(proc.stdout)
    return match.group(1) if match else "unknown"


@functools.lru_cache(maxsize=1)
def _scratch() -> Path:
    root = Path(tempfile.mkdtemp(prefix="nvcc-"))
    atexit.register(shutil.rmtree, root, True)
    return root


# One build per (source, arch, defines, with executable) in this process: the launch reuses
# the compile's executable instead of running nvcc again.
_BUILDS: dict[tuple[Any, ...], tuple[Compiled, Path | None]] = {}


def _key(source: Path, arch: str, defines: Mapping[str, object], with_exe: bool) -> tuple[Any, ...]:
    flat = tuple(sorted((k, str(v)) for k, v in defines.items()))
    return (str(Path(source).resolve()), arch, flat, with_exe)


def compile_cuda(
    source: Path,
    case: Case,
    defines: Mapping[str, object],
    arch: str | None = None,
    *,
    executable: bool | None = None,
    shared_bytes: int | None = None,
    timeout_s: float = 600.0,
) -> Compiled:
    """Compile ``source`` with ``-D`` ``defines`` for ``arch`` (default: :func:`cuda_arch`).

    ``executable`` (default ``case.gpu``) also builds the host program, for :func:`executable`
    to find. ``shared_bytes`` is the dynamic shared memory the program will request: the
    cubin cannot say (``cuobjdump`` reports only static shared memory and the 1 KB the system
    reserves per block on sm_90+), so the caller, who knows the layout, passes it for the
    engine's limit check. Registers, stack and spills come from the cubin.

    Raises :class:`NvccError` with nvcc's stderr when the compile fails.
    """
    arch = arch or cuda_arch(case)
    with_exe = case.gpu if executable is None else executable
    key = _key(source, arch, defines, with_exe)
    if key in _BUILDS:
        return _BUILDS[key][0]

    source = Path(source).resolve()
    out = Path(tempfile.mkdtemp(prefix=f"{source.stem}-{arch}-", dir=_scratch()))
    command = [_nvcc(), f"-arch={arch}", "-O2", "-std=c++17", "-lineinfo"]
    command += [f"-D{name}={value}" for name, value in defines.items()]
    exe: Path | None = None
    if with_exe:
        exe = out / source.stem
        command += ["--keep", f"--keep-dir={out}", "-o", str(exe), str(source)]
    else:
        command += ["-cubin", "-o", str(out / f"{source.stem}.cubin"), str(source)]

    started = time.monotonic()
    try:
        proc = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout_s, check=False, cwd=out
        )
    except subprocess.TimeoutExpired as exc:
        raise NvccError(f"nvcc did not finish in {timeout_s:g} s\n{' '.join(command)}") from exc
    seconds = time.monotonic() - started
    if proc.returncode != 0:
        diagnostics = (proc.stderr + proc.stdout).strip()
        lines = diagnostics.splitlines() or [f"exit status {proc.returncode}"]
        first = next((line for line in lines if "error" in line.lower()), lines[0])
        # The first line is the first diagnostic, which the classifier's signature keeps.
        raise NvccError(
            f"nvcc ({arch}): {first.strip()}\n{diagnostics}\ncommand: {' '.join(command)}"
        )

    cubin_path = _find_cubin(out, source.stem, arch)
    cubin = cubin_path.read_bytes()
    extra: dict[str, object] = {
        "nvcc_version": nvcc_version(),
        "arch": arch,
        "compile_s": round(seconds, 3),
    }
    extra.update(_resources(cubin))
    compiled = Compiled(shared_bytes=shared_bytes, cubin=cubin, extra=extra)
    _BUILDS[key] = (compiled, exe)
    return compiled


def _find_cubin(out: Path, stem: str, arch: str) -> Path:
    direct = out / f"{stem}.cubin"
    if direct.exists():
        return direct
    # --keep names it <stem>.compute_90a.sm_90a.cubin (beside the device-link <exe>_dlink one).
    kept = sorted(p for p in out.glob(f"{stem}.*{arch}.cubin") if "_dlink" not in p.name)
    if not kept:
        raise NvccError(f"nvcc succeeded but left no {arch} cubin in {out}")
    return kept[0]


def _resources(cubin: bytes) -> dict[str, int]:
    """Registers, stack and spill bytes, through the cuobjdump Triton bundles."""
    try:
        return cubin_resources(cubin)
    except ImportError:  # no triton in this interpreter: no bundled cuobjdump to ask
        return {}


def executable(
    source: Path, case: Case, defines: Mapping[str, object], arch: str | None = None, **kw: Any
) -> Path:
    """The built program for these arguments: the compile's, or a new build."""
    arch = arch or cuda_arch(case)
    key = _key(source, arch, defines, True)
    if key not in _BUILDS:
        compile_cuda(source, case, defines, arch, executable=True, **kw)
    exe = _BUILDS[key][1]
    assert exe is not None
    return exe


def run_cuda(program: Path, args: Sequence[str] = (), timeout: float = 120.0) -> dict[str, object]:
    """Run a reproducer program; return its JSON result when it copied exactly.

    Raises :class:`~suite.api.WrongResult` when it reports wrong data (exit 3) and
    :class:`CudaRunError` otherwise, its first line naming the error:
    ``cuTensorMapEncodeTiled: CUDA_ERROR_INVALID_VALUE`` (exit 4),
    ``cudaErrorIllegalAddress at cudaDeviceSynchronize`` (exit 5),
    ``mbarrier wait timed out: ...`` (exit 6, the kernel trapped out of a wait that never
    ended), a timeout or a signal.
    """
    command = [str(program), *map(str, args)]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise CudaRunError(
            f"program-timeout: {Path(program).name} did not finish in {timeout:g} s",
            "timeout",
        ) from exc
    result = _last_json(proc.stdout)
    shown = json.dumps(result) if result else (proc.stdout + proc.stderr).strip()[-2000:]
    code = proc.returncode
    if code == EXIT_OK and result is not None:
        return result
    if code == EXIT_WRONG and result is not None:
        raise WrongResult(
            f"{result.get('mismatches')} elements differ (the copy must be exact)\n{shown}"
        )
    if code == EXIT_ENCODE and result is not None:
        error = str(result.get("encode"))
        raise CudaRunError(f"cuTensorMapEncodeTiled: {error}\n{shown}", error, result)
    if code == EXIT_TIMEOUT and result is not None:
        error = str(result.get("error"))
        raise CudaRunError(
            f"mbarrier wait timed out: the kernel trapped ({error})\n{shown}", "timeout", result
        )
    if code == EXIT_RUNTIME and result is not None:
        error = str(result.get("error"))
        raise CudaRunError(f"{error} at {result.get('error_at')}\n{shown}", error, result)
    if code < 0:
        raise CudaRunError(f"program killed by signal {-code}\n{shown}", f"signal {-code}", result)
    raise CudaRunError(f"program exited with status {code}\n{shown}", f"exit {code}", result)


def _last_json(stdout: str) -> dict[str, object] | None:
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    return None


def compile_checked(
    source: Path,
    case: Case,
    findings: Sequence[Violation],
    defines: Mapping[str, object],
    shared_bytes: int,
) -> Compiled:
    """Build a CUDA reproducer case unless its static check found a broken rule.

    With ``static_check`` on, the first broken rule refuses the case
    (``LimitViolation``: a user error, never a build). With it off the program is
    built anyway, to show on a GPU what the hardware does, and the rules it breaks
    are recorded with the build.
    """
    from suite.cuda.static_check import LimitViolation

    if case["static_check"] and findings:
        raise LimitViolation.from_findings(findings)
    compiled = compile_cuda(source, case, defines, shared_bytes=shared_bytes)
    compiled.extra["static_findings"] = ",".join(v.rule for v in findings) or "none"
    return compiled
