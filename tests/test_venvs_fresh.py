"""Release venvs built from nothing work, and a broken one is found and rebuilt.

Each run builds the oldest and the newest release the package supports into an empty venv
root (not the machine's shared one), as a fresh machine would: 3.0.0 imports setuptools
without declaring it, so a venv that only holds what pip resolved for ``triton==3.0.0``
cannot ``import triton``. A venv counts only after a compile in it passed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from suite.toolchain.venvs import CHECKED, folder_for, for_version
from tests.conftest import ROOT, SESSION_STARTED, checkout_env, repro_cli

pytestmark = pytest.mark.venv

RELEASES = (ROOT / ".ci" / "releases").read_text().split()
OLDEST, NEWEST = RELEASES[0], RELEASES[-1]


def _build(root: Path, *versions: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "suite.toolchain.venvs", *versions],
        capture_output=True,
        text=True,
        env={**checkout_env(), "REPRO_VENV_ROOT": str(root)},
        timeout=1800,
    )


def _doctor_venvs(root: Path) -> tuple[list[dict], list[dict]]:
    done = repro_cli("doctor", "--json", env={"REPRO_VENV_ROOT": str(root)})
    report = json.loads(done.stdout)
    return report["venvs"], report["problems"]


def _built_this_session(version: str) -> Path | None:
    """The machine's venv of ``version`` when this session built it (on a fresh machine the
    prebuild builds every release from nothing: ``conftest.Prebuild``), else None."""
    folder = folder_for(version)
    marker = folder / CHECKED
    if not marker.is_file() or marker.stat().st_mtime < SESSION_STARTED:
        return None
    return folder


def _linked(source: Path, target: Path) -> None:
    """A copy of the venv ``source`` whose files are hard links (seconds, not a build); what
    the test breaks in it is unlinked there, never written through to the machine's venv."""

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:  # another file system
            shutil.copy2(src, dst)

    shutil.copytree(source, target, symlinks=True, copy_function=link)


def test_the_oldest_and_newest_release_venvs_built_from_nothing_import_triton_and_compile(
    tmp_path,
):
    root = tmp_path / "venvs"
    for version in (OLDEST, NEWEST):
        for_version(version)  # built by the session's prebuild on a fresh machine, or waited for
    fresh = {version: _built_this_session(version) for version in (OLDEST, NEWEST)}
    if all(fresh.values()):
        # The session built both from nothing (a fresh machine, a new cache): the same build
        # again into an empty root would prove nothing more (2 x 6.5 CPU s and a minute).
        for folder in fresh.values():
            _linked(folder, root / folder.name)
    else:
        built = _build(root, OLDEST, NEWEST)
        assert built.returncode == 0, built.stdout + built.stderr
    for version in (OLDEST, NEWEST):  # written only after an import and a compile passed
        assert (root / f"triton-{version}" / CHECKED).is_file()

    # A venv built the old way (no setuptools beside 3.0.0): the doctor names it broken, with
    # the command that rebuilds it, and that command makes it work again. The doctor checks
    # each venv again with an import and a compile: the newest one passes.
    oldest = root / f"triton-{OLDEST}"
    site = next(oldest.glob("lib/python*/site-packages"))
    for installed in site.glob("setuptools*"):
        shutil.rmtree(installed)
    venvs, problems = _doctor_venvs(root)
    broken = {v["name"]: v for v in venvs}[f"triton-{OLDEST}"]
    assert {v["name"]: v for v in venvs}[f"triton-{NEWEST}"]["complete"]
    assert not broken["complete"]
    assert "setuptools" in broken["error"]
    fix = f"python -m suite.toolchain.venvs {OLDEST}"
    assert any(p["fix"] == fix and "does not work" in p["what"] for p in problems), problems

    rebuilt = _build(root, OLDEST)
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    venvs, problems = _doctor_venvs(root)
    assert all(v["complete"] for v in venvs), venvs
    assert not any("does not work" in p["what"] for p in problems)
