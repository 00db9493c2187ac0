"""Managed interpreters, one per Triton release, built once and cached.

``repro matrix`` and ``repro bisect`` run the same cases under several Triton
releases. Each release gets a venv under the user's cache folder holding
triton and nothing else: the isolated child needs only triton (this package
reaches it through ``suite.engine.shim``), and anything more could shadow what the
release brings. Venvs are built with the standard ``venv`` and ``pip``, under
a file lock so that parallel runs (xdist workers, CI shards) build each once.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from suite.errors import UsageError
from suite.files import cache_root


@dataclass(frozen=True)
class Release:
    """One column of a matrix: a label and the interpreter whose Triton it is."""

    label: str
    python: str


def venv_root() -> Path:
    """``$REPRO_VENV_ROOT``, else ``venvs/`` under the cache folder. The tests point the
    cache folder at a scratch one per session but keep sharing the built venvs through this."""
    override = os.environ.get("REPRO_VENV_ROOT")
    return Path(override) if override else cache_root() / "venvs"


@contextmanager
def _locked(name: str) -> Iterator[None]:
    venv_root().mkdir(parents=True, exist_ok=True)
    with open(venv_root() / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _build(folder: Path, requirement: str) -> Path:
    """A venv at ``folder`` with ``requirement`` installed, unless a complete one is there."""
    python = folder / "bin" / "python"
    complete = folder / ".repro-complete"
    if complete.exists():
        return python
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", requirement], capture_output=True, text=True
    )
    if installed.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        last = (installed.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError(f"cannot install {requirement}: {last}")
    complete.write_text(requirement + "\n")
    return python


def folder_for(version: str) -> Path:
    """Where the venv of ``triton==version`` lives (built or not)."""
    return venv_root() / f"triton-{version}"


def for_version(version: str) -> Release:
    """The cached venv of ``triton==version`` (built on first use)."""
    try:
        Version(version)
    except InvalidVersion:
        raise UsageError(f"not a Triton version: {version!r}") from None
    folder = folder_for(version)
    with _locked(folder.name):
        return Release(version, str(_build(folder, f"triton=={version}")))


def for_wheel(wheel: str) -> Release:
    """A venv holding one wheel file (a nightly build, say), keyed by the file's content."""
    path = Path(wheel)
    if not path.is_file() or path.suffix != ".whl":
        raise UsageError(f"not a wheel file: {wheel}")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    name = f"wheel-{digest}"
    match = re.match(r"triton[_-]?[a-z]*-([^-]+)-", path.name)
    with _locked(name):
        python = _build(venv_root() / name, str(path.resolve()))
    return Release(match.group(1) if match else path.stem, str(python))


def released_versions() -> list[str]:
    """Every Triton release the package index offers, oldest first."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "triton"],
        capture_output=True,
        text=True,
    )
    match = re.search(r"Available versions:\s*(.+)", proc.stdout)
    if proc.returncode != 0 or not match:
        raise UsageError("cannot list Triton releases from the package index (pip index versions)")
    versions = [v.strip() for v in match.group(1).split(",")]
    return sorted((v for v in versions if not Version(v).is_prerelease), key=Version)


def resolve(spec: str) -> Release:
    """``3.5.0``, ``latest``, a wheel file, or an interpreter path."""
    if spec == "latest":
        return for_version(released_versions()[-1])
    if spec.endswith(".whl"):
        return for_wheel(spec)
    if "/" in spec:
        if not Path(spec).exists():
            raise UsageError(f"no such interpreter: {spec}")
        return Release(spec, spec)
    return for_version(spec)


def main(argv: list[str]) -> int:
    """``python -m suite.toolchain.venvs 3.4.0 3.5.0 ...``: build the venvs ahead (CI caches)."""
    try:
        for version in argv:
            print(f"{version}: {for_version(version).python}", flush=True)
    except UsageError as exc:
        print(f"venvs: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
