"""Files the suite reads and keeps: structured user files (configs, baselines), the cache folder."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from suite.errors import UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def load_structured(path: Path, what: str) -> Any:
    """Parse a TOML, JSON or YAML file (by suffix); any problem is a one-line UsageError."""
    if not path.is_file():
        raise UsageError(f"no such {what}: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"unreadable {what} {path}: {exc}") from None
    try:
        if path.suffix == ".toml":
            return tomllib.loads(text)
        if path.suffix == ".json":
            return json.loads(text)
        import yaml

        return yaml.safe_load(text)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"malformed {what} {path}: {first}") from None


def cache_root() -> Path:
    """The user's cache folder for the suite (venvs, the import shim)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "triton-repro-suite"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader sees the old file or the new one, never half."""
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(text)
    os.replace(partial, path)
