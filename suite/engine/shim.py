"""Make this package importable in a child interpreter, and nothing else with it.

A child may run under another venv (another Triton release). Putting our
site-packages on its ``PYTHONPATH`` would also put our Triton there, ahead of
its own. Instead the child gets a folder holding one link, ``suite``, to this
package.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Mapping
from pathlib import Path

from suite.files import cache_root

PACKAGE_DIR = Path(__file__).resolve().parents[1]


def shim_dir() -> Path:
    digest = hashlib.sha256(str(PACKAGE_DIR).encode()).hexdigest()[:16]
    folder = cache_root() / "shim" / digest
    link = folder / "suite"
    if not link.exists():
        folder.mkdir(parents=True, exist_ok=True)
        # Unique per call: threads of one process (the gate's static checks) make it at once.
        tmp = folder / f".suite-{os.getpid()}-{uuid.uuid4().hex}"
        tmp.symlink_to(PACKAGE_DIR, target_is_directory=True)
        os.replace(tmp, link)
    return folder


def child_env(
    extra: dict[str, str] | None = None, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a child: ``base`` (default: ours), with the shim first on
    PYTHONPATH."""
    env = dict(os.environ if base is None else base)
    paths = [str(shim_dir()), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(extra or {})
    return env
