"""Managed interpreters, one per Triton release, built once and cached.

``repro matrix`` and ``repro bisect`` run the same cases under several Triton
releases. Each release gets a venv under the user's cache folder holding
triton and nothing else: the isolated child needs only triton (this package
reaches it through ``suite.engine.shim``), and anything more could shadow what the
release brings. Venvs are built with the standard ``venv`` and ``pip``, under
a file lock so that parallel runs (xdist workers, CI shards) build each once.

On a machine without a package index (a GPU cluster with a shared folder of wheels), the
venvs are built from a wheelhouse: ``$REPRO_WHEELHOUSE`` (``--wheelhouse DIR``) makes every
install ``--no-index --find-links DIR``; pip's own ``PIP_NO_INDEX`` / ``PIP_FIND_LINKS``
reach it unchanged, as the environment of every pip this module runs.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.tags import sys_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
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


WHEELHOUSE = "REPRO_WHEELHOUSE"
"""The environment variable naming the wheelhouse (set by ``--wheelhouse``)."""


def wheelhouse() -> Path | None:
    """The folder of wheels release venvs are built from, with no package index, if any."""
    folder = os.environ.get(WHEELHOUSE)
    return Path(folder) if folder else None


def use_wheelhouse(folder: str) -> None:
    """Build every release venv from ``folder`` (``--wheelhouse``): checked, then kept in the
    environment, so that every venv this process (and its children) builds comes from it."""
    path = Path(folder)
    if not path.is_dir():
        raise UsageError(f"--wheelhouse {folder}: no such folder")
    if not wheels_in(path):
        raise UsageError(f"--wheelhouse {folder}: no Triton wheel for this Python in it")
    os.environ[WHEELHOUSE] = str(path.resolve())


def _pip_sources() -> list[str]:
    house = wheelhouse()
    return ["--no-index", "--find-links", str(house)] if house else []


@dataclass(frozen=True)
class Wheel:
    """A Triton wheel file of a wheelhouse: its distribution name and version."""

    path: Path
    name: str
    version: str


def wheel_of(path: Path) -> Wheel:
    """The name and version a wheel's own metadata declares (a re-tagged or renamed file
    is taken at its word, not its file name); raises UsageError when it is not a wheel."""
    try:
        with zipfile.ZipFile(path) as archive:
            (metadata,) = (
                n for n in archive.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)
            )
            text = archive.read(metadata).decode("utf-8", "replace")
    except (OSError, ValueError, zipfile.BadZipFile):
        raise UsageError(f"not a wheel file: {path}") from None
    fields = dict(re.findall(r"^(Name|Version): *(\S+)", text, re.MULTILINE))
    if "Name" not in fields or "Version" not in fields:
        raise UsageError(f"not a wheel file (no name or version in its METADATA): {path}")
    return Wheel(path, fields["Name"], fields["Version"])


def wheels_in(folder: Path) -> list[Wheel]:
    """The Triton wheels of ``folder`` that this Python can install, oldest first: by
    version (a nightly's ``.devYYYYMMDD`` orders by date), and builds whose versions differ
    only in their git hash (``3.5.0+gitX``) by the file's modification time."""
    tags = set(sys_tags())
    found = []
    for path in sorted(folder.glob("*.whl")):
        try:
            name, _, _, wheel_tags = parse_wheel_filename(path.name)
        except InvalidWheelFilename:
            continue
        if "triton" in name and tags & set(wheel_tags):
            found.append(wheel_of(path))
    found.sort(key=lambda w: (Version(Version(w.version).public), w.path.stat().st_mtime))
    return found


@contextmanager
def _locked(name: str) -> Iterator[None]:
    venv_root().mkdir(parents=True, exist_ok=True)
    with open(venv_root() / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _pip_installs_elsewhere() -> bool:
    """Whether this interpreter has a pip that installs into another one (``--python``,
    pip 22.3 on); an environment made without pip (uv, pipx) has none."""
    try:
        return Version(metadata.version("pip")) >= Version("22.3")
    except metadata.PackageNotFoundError:
        return False


UNDECLARED_IMPORTS = ((SpecifierSet("<3.3"), ("setuptools>=40.8,<76",)),)
"""What a release imports without declaring it, pinned to versions of its time: 3.0-3.2 import
setuptools in ``triton/runtime/build.py`` (3.3 declares it). A venv made without pip has none."""


def _undeclared_imports(version: str) -> list[str]:
    release = Version(Version(version).public)
    return [req for bounds, reqs in UNDECLARED_IMPORTS if release in bounds for req in reqs]


CHECK_SCRIPT = Path(__file__).with_name("venv_check.py")

CHECK_TIMEOUT_S = 300
"""Importing a release and its first compile take seconds; a loaded 2-core machine, more."""

COMPLETE = ".repro-complete"
"""Written once the install finished (its requirements, one a line)."""
CHECKED = ".repro-checked"
"""Written once :func:`check` passed: only such a venv is used."""


def check(python: str) -> str:
    """'' when ``python``'s Triton imports and compiles a kernel, else the failure in one line."""
    with tempfile.TemporaryDirectory(prefix="repro-venv-check-") as cache:
        env = {**os.environ, "TRITON_CACHE_DIR": cache, "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("PYTHONPATH", None)  # the venv's own triton, nothing of ours ahead of it
        try:
            proc = subprocess.run(
                [python, str(CHECK_SCRIPT)],
                capture_output=True,
                text=True,
                env=env,
                timeout=CHECK_TIMEOUT_S,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{type(exc).__name__}: {exc}"
    lines = proc.stdout.strip().splitlines()
    if proc.returncode == 0 and lines and lines[-1].startswith("ok "):
        return ""
    return lines[-1] if lines else f"exit {proc.returncode}: {proc.stderr.strip()[-200:]}"


def _install(folder: Path, requirements: list[str]) -> None:
    python = folder / "bin" / "python"
    shutil.rmtree(folder, ignore_errors=True)
    # Bytecode at install (pip's default): where PYTHONDONTWRITEBYTECODE is set, as on this
    # project's machines, no import ever writes it, and every process of the venv compiled
    # Triton's Python again (0.45 CPU s an `import triton` of 3.5.0, 0.12 s from bytecode).
    install = ["install", "-q", *_pip_sources(), *requirements]
    if _pip_installs_elsewhere():  # no pip of its own: ensurepip costs seconds of CPU a venv
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
        command = [sys.executable, "-m", "pip", "--python", str(python), *install]
    else:
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        command = [str(python), "-m", "pip", *install]
    installed = subprocess.run(command, capture_output=True, text=True)
    if installed.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        last = (installed.stderr.strip().splitlines() or ["no output"])[-1]
        house = wheelhouse()
        where = f" from the wheelhouse {house}" if house else ""
        raise UsageError(f"cannot install {' '.join(requirements)}{where}: {last}")
    (folder / COMPLETE).write_text("".join(r + "\n" for r in requirements))


def _build(folder: Path, requirement: str, version: str) -> Path:
    """A venv at ``folder`` with ``requirement`` (and what that release imports undeclared)
    installed and checked by a compile, unless a checked one is there. A venv that was built
    but fails the check (an older build, a broken install) is built again, once."""
    python = folder / "bin" / "python"
    if (folder / CHECKED).exists():
        return python
    failure = check(str(python)) if (folder / COMPLETE).exists() else "not built"
    if failure:
        _install(folder, [requirement, *_undeclared_imports(version)])
        failure = check(str(python))
    if failure:
        shutil.rmtree(folder, ignore_errors=True)
        raise UsageError(f"triton {version} installed but does not work: {failure}")
    (folder / CHECKED).write_text("import triton and a compile to a cubin passed\n")
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
    house = wheelhouse()
    if house:  # a build of another distribution name (pytorch-triton) is its own file
        named = [w for w in wheels_in(house) if w.version == version and w.name != "triton"]
        if named:
            return for_wheel(str(named[0].path))
    folder = folder_for(version)
    with _locked(folder.name):
        return Release(version, str(_build(folder, f"triton=={version}", version)))


def for_wheel(wheel: str) -> Release:
    """A venv holding one wheel file (a nightly build, say), keyed by the file's content and
    labelled with the version its metadata declares."""
    path = Path(wheel)
    if not path.is_file() or path.suffix != ".whl":
        raise UsageError(f"not a wheel file: {wheel}")
    declared = wheel_of(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    name = f"wheel-{digest}"
    with _locked(name):
        python = _build(venv_root() / name, str(path.resolve()), declared.version)
    return Release(declared.version, str(python))


def cached_versions() -> list[str]:
    """The releases whose venv is already built here (no package index asked)."""
    root = venv_root()
    if not root.is_dir():
        return []
    found = [p.name.removeprefix("triton-") for p in root.iterdir() if p.name.startswith("triton-")]
    return [v for v in found if re.fullmatch(r"\d+\.\d+\.\d+", v)]


def released_versions() -> list[str]:
    """Every Triton release on offer, oldest first: the wheelhouse's builds (nightlies
    included), else the releases the package index lists (pip's own settings apply)."""
    house = wheelhouse()
    if house:
        return [w.version for w in wheels_in(house)]
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


BUILDS_AT_ONCE = 4
"""Venvs built side by side: a build waits on the download and the disk far more than on a
core, so even a 2-core machine gains from several at once."""


def for_versions(versions: list[str]) -> list[Release]:
    """The cached venvs of ``versions``, the missing ones built side by side (in order)."""
    with ThreadPoolExecutor(max_workers=BUILDS_AT_ONCE) as pool:
        return list(pool.map(for_version, versions))


def main(argv: list[str]) -> int:
    """``python -m suite.toolchain.venvs 3.4.0 3.5.0 ...``: build the venvs ahead (CI caches),
    checking those already built again and rebuilding the ones that no longer work."""
    try:
        for version in argv:
            folder = folder_for(version)
            with _locked(folder.name):
                (folder / CHECKED).unlink(missing_ok=True)
        for release in for_versions(argv):
            print(f"{release.label}: {release.python}", flush=True)
    except UsageError as exc:
        print(f"venvs: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
