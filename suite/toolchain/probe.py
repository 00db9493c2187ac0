"""What one interpreter's Triton toolchain can do, read in that interpreter (``python -m
suite.children toolchain-probe sm_90a sm_121a ...`` prints one JSON line).

It runs under another release's venv as well, so it uses only the standard library and
triton, and asks Triton's own NVIDIA backend which ptxas it would run for each target and
which PTX ISA that ptxas speaks. Each target is then checked for real: a one-instruction
kernel is assembled with ``ptxas -arch <target>``. The CUDA driver's version is read with
``cuDriverGetVersion``, which needs no context and touches no GPU.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.metadata
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NotRequired, TypedDict

PTX_PROGRAM = Path(__file__).with_name("probe_kernel.ptx")
"""The kernel each target assembles: a PTX file with ``@VERSION@``/``@TARGET@`` holes."""


def ptxas_for(nvidia: Any, arch: int) -> str:
    """The ptxas Triton runs for ``arch`` (releases differ: one binary, or one per arch;
    3.0-3.2 have no ``get_ptxas``, 3.3's returns ``(path, version)``, 3.4's and later's a
    tool with a ``path``)."""
    get_ptxas = getattr(nvidia, "get_ptxas", None)
    if get_ptxas is None:
        return str(nvidia._path_to_binary("ptxas")[0])
    try:
        tool = get_ptxas(arch)
    except TypeError:
        tool = get_ptxas()
    return str(tool[0] if isinstance(tool, tuple) else tool.path)


def _release(ptxas: str) -> str:
    out = subprocess.run([ptxas, "--version"], capture_output=True, text=True, timeout=60)
    match = re.search(r"release (\d+\.\d+)", out.stdout)
    return match.group(1) if match else ""


def _assemble(ptxas: str, ptx_version: int, target: str, work: Path) -> str:
    """'' when ``ptxas`` assembles the probe kernel for ``target``, else its first error."""
    source = work / f"{target}.ptx"
    text = PTX_PROGRAM.read_text()
    text = text.replace("@VERSION@", f"{ptx_version // 10}.{ptx_version % 10}")
    source.write_text(text.replace("@TARGET@", target))
    proc = subprocess.run(
        [ptxas, "-arch", target, str(source), "-o", str(work / f"{target}.cubin")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if proc.returncode == 0:
        return ""
    lines = (proc.stderr or proc.stdout).strip().splitlines()
    return lines[0] if lines else f"ptxas exit {proc.returncode}"


class TargetSupport(TypedDict):
    """Whether this Triton's ptxas assembles for one target (the doctor's probe)."""

    target: str
    compiles: bool
    ptxas: str
    release: str  # ptxas's CUDA release ("" when it did not say)
    error: str


class TritonOrigin(TypedDict):
    """Where an interpreter's triton comes from."""

    version: str
    path: str
    python: str
    installer: NotRequired[str]
    source: NotRequired[str]


def targets(names: list[str]) -> list[TargetSupport]:
    from triton.backends.nvidia import compiler as nvidia

    found: list[TargetSupport] = []
    with tempfile.TemporaryDirectory(prefix="repro-ptxas-probe-") as scratch:
        for target in names:
            arch = int(re.sub(r"\D", "", target))
            ptxas = ptxas_for(nvidia, arch)
            release = _release(ptxas)
            ptx_version = nvidia.ptx_get_version(release) if release else 0
            error = _assemble(ptxas, ptx_version, target, Path(scratch)) if release else "no ptxas"
            found.append(
                {
                    "target": target,
                    "compiles": not error,
                    "ptxas": ptxas,
                    "release": release,
                    "error": error,
                }
            )
    return found


def triton_origin() -> TritonOrigin:
    """Where this interpreter's triton comes from: its files and how it was installed."""
    import triton

    origin: TritonOrigin = {
        "version": triton.__version__,
        "path": str(Path(triton.__file__).parent),
        "python": sys.executable,
    }
    try:
        dist = importlib.metadata.distribution("triton")
    except importlib.metadata.PackageNotFoundError:
        origin["installer"] = ""
        origin["source"] = "not an installed distribution (a source tree on sys.path)"
        return origin
    origin["installer"] = (dist.read_text("INSTALLER") or "").strip()
    direct = dist.read_text("direct_url.json")
    if direct:
        url = json.loads(direct)
        editable = url.get("dir_info", {}).get("editable", False)
        origin["source"] = ("editable " if editable else "") + str(url.get("url", ""))
    else:
        origin["source"] = "a package index (release wheel)"
    return origin


def driver_version() -> str | None:
    """The CUDA driver's version (``13.0``), or None where no libcuda loads."""
    name = ctypes.util.find_library("cuda") or "libcuda.so.1"
    try:
        libcuda = ctypes.CDLL(name)
    except OSError:
        return None
    version = ctypes.c_int(0)
    if libcuda.cuDriverGetVersion(ctypes.byref(version)) != 0:
        return None
    return f"{version.value // 1000}.{version.value % 1000 // 10}"


def main(argv: list[str]) -> int:
    print(
        json.dumps(
            {"triton": triton_origin(), "targets": targets(argv), "driver": driver_version()}
        )
    )
    return 0
