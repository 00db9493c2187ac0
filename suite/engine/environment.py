"""What the cases ran on: Triton, Python, ptxas, the driver and the GPU.

The facts are read by the interpreter that runs the cases (``python -m
suite.children environment``), which may be another venv with another Triton, so the
probe itself uses only the standard library and triton. It never imports
torch (seconds) and never initializes CUDA: the GPU is read with nvidia-smi.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from suite.children import Role, child_argv
from suite.engine.scrub import home_to_tilde, safe_variables
from suite.engine.wire import Unreadable, typed


@dataclass(frozen=True)
class Environment:
    """What the cases ran on, as :func:`probe` saw it (``environment.json``, a finding's
    ``environment``). A field the probe could not tell is None (or empty); a recorded file
    missing a field reads as that default, and a key no field holds is dropped."""

    python: str = ""
    python_executable: str = ""  # ~ for the home folder
    platform: str = ""
    triton: str | None = None  # None: the interpreter cannot import triton
    triton_error: str | None = None  # why, then
    triton_commit: str | None = None
    ptxas: dict[str, dict[str, str]] = field(default_factory=dict)  # file name -> path, version
    cache_env: dict[str, object] | None = None  # the variables that invalidate Triton's cache
    triton_env: dict[str, str] = field(default_factory=dict)  # TRITON_* (secret-like: dropped)
    gpu: str | None = None  # the first visible GPU's name; None without one
    gpus: list[dict[str, str]] = field(default_factory=list)  # name, driver, compute_cap
    driver: str | None = None
    cuda_driver_api: str | None = None
    gpu_arch: int | None = None  # 90 for sm_90

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_json(cls, record: object) -> Environment:
        """The environment of a record; raises :class:`Unreadable` (a ValueError) for one
        that is no object or holds a field of the wrong type."""
        if not isinstance(record, dict):
            raise Unreadable(f"the environment is a {type(record).__name__}, not an object")
        return typed(cls, record, "environment")


def _run(argv: list[str]) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout.strip()


def _tool_version(path: str) -> str:
    out = _run([path, "--version"])
    match = re.search(r"release (\S+?),?\s+V(\S+)", out)
    return f"{match.group(1)} (V{match.group(2)})" if match else out.splitlines()[-1] if out else ""


def probe() -> dict[str, Any]:
    """The facts, as seen from this interpreter."""
    facts: dict[str, Any] = {
        "python": platform.python_version(),
        "python_executable": home_to_tilde(sys.executable),
        "platform": platform.platform(),
    }
    try:
        import triton
    except ImportError as exc:
        facts["triton"] = None
        facts["triton_error"] = str(exc)
        return facts
    facts["triton"] = triton.__version__
    # No reproducer code runs in this process: it may keep the key the cases' processes read.
    from suite.engine.triton_key import remember

    remember()
    commit = re.search(r"git([0-9a-f]{7,40})", triton.__version__)
    facts["triton_commit"] = commit.group(1) if commit else None
    bindir = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"
    ptxas = {}
    override = os.environ.get("TRITON_PTXAS_PATH")
    for candidate in [override] if override else sorted(bindir.glob("ptxas*")):
        if candidate and os.path.exists(candidate):
            ptxas[Path(candidate).name] = {
                "path": home_to_tilde(str(candidate)),
                "version": _tool_version(str(candidate)),
            }
    facts["ptxas"] = ptxas
    try:
        from triton._C.libtriton import get_cache_invalidating_env_vars

        facts["cache_env"] = dict(get_cache_invalidating_env_vars())
    except ImportError:
        facts["cache_env"] = None
    # A secret-like name or value is never written (issue 14: scrub at write time).
    facts["triton_env"] = safe_variables(
        {k: v for k, v in os.environ.items() if k.startswith("TRITON_")}
    )
    facts.update(_gpu())
    return facts


def _gpu() -> dict[str, Any]:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return {"gpu": None}
    out = _run(
        [smi, "--query-gpu=name,driver_version,compute_cap", "--format=csv,noheader"]
    ).splitlines()
    if not out or "," not in out[0]:
        return {"gpu": None}
    gpus = [
        dict(
            zip(
                ("name", "driver", "compute_cap"),
                (f.strip() for f in line.split(",")),
                strict=False,
            )
        )
        for line in out
    ]
    cuda = re.search(r"CUDA Version:\s*([\d.]+)", _run([smi]))
    first = gpus[0]
    major, _, minor = first.get("compute_cap", "0.0").partition(".")
    return {
        "gpu": first["name"],
        "gpus": gpus,
        "driver": first.get("driver"),
        "cuda_driver_api": cuda.group(1) if cuda else None,
        "gpu_arch": int(major) * 10 + int(minor or 0),
    }


def visible_gpu_ids(count: int) -> tuple[str, ...]:
    """The GPU ids a launch may be pinned to: ``CUDA_VISIBLE_DEVICES``, else all ``count``."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return tuple(v.strip() for v in visible.split(",") if v.strip())
    return tuple(str(i) for i in range(count))


def local_gpu_ids() -> tuple[str, ...]:
    """This machine's GPU ids a launch may be pinned to (nvidia-smi's count)."""
    return visible_gpu_ids(len(_gpu().get("gpus") or ()))


def gpu_arch() -> int | None:
    """The visible GPU's compute capability (90 for sm_90), None without one."""
    arch = _gpu().get("gpu_arch")
    return int(arch) if arch is not None else None


# Probed once per process for an interpreter file and an environment: a command asks again
# (explore's door and its search), and the answer cannot change while neither does.
_PROBED: dict[tuple[object, ...], Environment] = {}


def capture_environment(python: str) -> Environment:
    """Run the probe under ``python`` in isolation; a broken interpreter is a usage error."""
    try:
        facts = os.lstat(python)
    except OSError:
        facts = None
    asked = (python, facts and (facts.st_ino, facts.st_mtime_ns), tuple(sorted(os.environ.items())))
    if asked not in _PROBED:
        _PROBED[asked] = _probe_in_child(python)
    return _PROBED[asked]


def _probe_in_child(python: str) -> Environment:
    from suite.engine.defaults import Bounds
    from suite.engine.isolate import run_isolated
    from suite.engine.shim import child_env
    from suite.errors import UsageError

    probed = run_isolated(
        child_argv(python, Role.ENVIRONMENT), env=child_env(), bounds=Bounds(timeout_s=180)
    )
    try:
        facts = Environment.from_json(json.loads(probed.stdout.text.strip().splitlines()[-1]))
    except (IndexError, ValueError):
        line = probed.stderr.text.strip().splitlines()[-1:] or ["no output"]
        raise UsageError(f"cannot probe the interpreter {python}: {line[0]}") from None
    if not facts.triton:
        raise UsageError(f"{python} cannot import triton: {facts.triton_error or ''}")
    return facts


def main(argv: list[str]) -> int:
    """The ``environment`` child: print this interpreter's facts as JSON."""
    print(json.dumps(probe()))
    return 0
