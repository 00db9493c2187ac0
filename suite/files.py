"""Read the structured files users hand the suite: configs and baselines."""

from __future__ import annotations

import json
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
    text = path.read_text()
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
