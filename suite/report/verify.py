"""Proof: ``repro.py`` run in a clean venv holding the affected Triton release alone."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suite.engine import (
    DEFAULTS,
    alone_on,
    first_visible_gpu,
    home_to_tilde,
    is_same_bug,
    run_isolated,
)
from suite.errors import UsageError
from suite.files import scratch_folder
from suite.report.script_output import signature_of_run
from suite.report.standalone import foreign_imports
from suite.toolchain.venvs import for_version


@dataclass
class Verification:
    """One run of ``repro.py`` under one Triton release."""

    ok: bool
    version: str
    line: str
    exit_status: int | None = None
    signature: str | None = None
    python: str = ""
    output: str = ""
    command: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "version": self.version,
            "line": self.line,
            "exit": self.exit_status,
            "signature": self.signature,
            "python": home_to_tilde(self.python),
            "command": self.command,
        }


def venv_for(version: str) -> Path:
    """The cached venv of ``triton==version`` (reused, else built); raises UsageError."""
    return Path(for_version(version).python)


def clean_env() -> dict[str, str]:
    """A minimal environment: no PYTHONPATH, no TRITON_* knobs, nothing of this project."""
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.setdefault("LANG", "C.UTF-8")
    return env


#: The launch form's verdict line (templates/launch_repro.py.j2): what a launch showed.
_LAUNCH_SIGNATURE = re.compile(r"^signature: (.+)$", re.MULTILINE)


def _installed_triton() -> str:
    try:
        import triton
    except ImportError:
        return ""
    return str(triton.__version__)


def _launch_signature(stdout: str) -> str | None:
    found = _LAUNCH_SIGNATURE.search(stdout)
    return found.group(1).strip() if found else None


def run_script(python: str, script: Path) -> Verification:
    """``python repro.py`` in the script's (fresh) report folder with a clean environment and
    an empty Triton cache, isolated like any case: the command's --timeout and --memory-cap,
    its own session."""
    bounds = DEFAULTS.bounds
    command = f"python {script.name}"
    env = clean_env()
    alone: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
    if "import torch" in script.read_text():  # the launch form: it launches (and may fault)
        gpu = first_visible_gpu()
        env["CUDA_VISIBLE_DEVICES"] = gpu
        alone = alone_on(gpu, f"{command} (report --verify)")  # the GPU checked after it
    with scratch_folder("verify-cache") as cache, alone:
        ended = run_isolated(
            [python, script.name],
            env={**env, "TRITON_CACHE_DIR": cache},
            cwd=str(script.parent.resolve()),
            bounds=bounds,
        )
    if ended.timed_out:
        return Verification(False, "", f"Not verified: {command} ran past {bounds.timeout_s:g} s")
    if ended.memory_exceeded:
        return Verification(False, "", f"Not verified: {command} went over the memory cap")
    stdout, stderr = ended.stdout.text, ended.stderr.text
    output = (stderr + stdout).replace(str(script.parent.resolve()) + os.sep, "")
    # The signature is the suite's reading of what the script printed, never the script's.
    signature = signature_of_run(stdout, stderr) or _launch_signature(stdout)
    code = ended.returncode
    return Verification(False, "", "", code, signature, python, output.rstrip(), command)


def verify(script: Path, version: str, expected: str) -> Verification:
    """Run ``script`` in the clean venv of ``version``: a ``Verified:``/``Not verified:`` line."""
    foreign = foreign_imports(script.read_text())
    if foreign:
        return Verification(False, version, f"Not verified: repro.py imports {', '.join(foreign)}")
    where = ""  # a clean venv of the release, the usual place: said only when it is not
    here = f"in this interpreter ({sys.executable}: a fresh process, an empty Triton cache)"
    try:
        if "import torch" in script.read_text() and _installed_triton() == version:
            # A launch needs torch, which a venv of triton alone lacks.
            raise OSError("repro.py launches with torch")
        python = str(venv_for(version))
    except (UsageError, subprocess.CalledProcessError, OSError) as exc:
        # No registry (as on many GPU clusters): this interpreter, when it has the release.
        if _installed_triton() != version:
            return Verification(
                False, version, f"Not verified: no venv with triton {version}: {exc}"
            )
        python = sys.executable
        reason = str(exc).splitlines()[0][:160]
        if reason == "repro.py launches with torch":
            where = f" {here}, since {reason}"
        else:
            where = f" {here}, since no clean venv could be built ({reason})"
    run = run_script(python, script)
    run.version = version
    if run.exit_status is None:
        run.line = run.line or f"Not verified: repro.py did not finish on triton {version}"
        return run
    if run.exit_status == 1 and _same(run.signature, expected):
        run.ok = True
        run.line = (
            f"Verified{where}: reproduces on triton {version} (exit {run.exit_status}, "
            f"signature {expected})"
        )
    else:
        run.line = (
            f"Not verified: repro.py exited {run.exit_status} on triton {version} with signature "
            f"{run.signature or 'none'} (expected {expected})"
        )
    return run


def check_current(script: Path, version: str, expected: str) -> Verification | None:
    """``script`` under this interpreter's Triton, when that is another release."""
    try:
        import triton
    except ImportError:
        return None
    current = str(triton.__version__)
    if current == version:
        return None
    run = run_script(sys.executable, script)
    run.version = current
    reproduces = run.exit_status == 1 and _same(run.signature, expected)
    state = "still reproduces" if reproduces else "does not reproduce"
    if not reproduces and run.exit_status not in (None, 0):
        state = "fails in another way"
    run.ok = reproduces
    run.line = (
        f"On triton {current} (this machine's): {state} "
        f"(exit {run.exit_status}, signature {run.signature or 'none'})"
    )
    return run


def _same(seen: str | None, expected: str) -> bool:
    """The expected failure, or the same bug seen another way (``same_bug``)."""
    return seen == expected or (seen is not None and is_same_bug(seen, expected))
