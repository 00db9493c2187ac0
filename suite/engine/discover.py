"""Find reproducers: the built-ins, a user's file, and installed plugins.

A reproducer is found, never registered: any module-level
:class:`~suite.api.Reproducer` in a file under ``repros/``, in a file named on
the command line, or in a module an installed package advertises under the
``triton_repro_suite.reproducers`` entry-point group. Each found reproducer
remembers where it came from, so the isolated child can import it again.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from suite.api import Reproducer
from suite.engine.child import load_reproducers
from suite.errors import UsageError

ENTRY_POINT_GROUP = "triton_repro_suite.reproducers"
BUILTIN_DIR = Path(__file__).resolve().parents[2] / "repros"


@dataclass(frozen=True)
class Found:
    """A reproducer and the source the child loads it from."""

    repro: Reproducer
    source: dict[str, str]


def _load(source: dict[str, str], shown: str) -> list[Found]:
    try:
        repros = load_reproducers(source)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise UsageError(f"cannot import {shown}: {type(exc).__name__}: {first}") from None
    if not repros:
        raise UsageError(f"{shown} defines no Reproducer")
    return [Found(r, source) for r in repros]


def builtins() -> list[Found]:
    found: list[Found] = []
    for path in sorted(BUILTIN_DIR.glob("*.py")):
        if not path.name.startswith("_"):
            found += _load({"path": str(path)}, str(path))
    return found


def plugins() -> list[Found]:
    found: list[Found] = []
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        module = entry.value.split(":")[0]
        found += _load({"module": module}, f"plugin {entry.name} ({module})")
    return found


def catalogue() -> list[Found]:
    """Every reproducer the suite knows without being told about a file."""
    found = builtins() + plugins()
    seen: dict[str, Found] = {}
    for item in found:
        if item.repro.id in seen:
            raise UsageError(f"two reproducers share the id {item.repro.id!r}")
        seen[item.repro.id] = item
    return found


def select(names: list[str]) -> list[Found]:
    """Resolve command-line names: reproducer ids, or paths to reproducer files."""
    if not names:
        return catalogue()
    known: dict[str, Found] | None = None
    chosen: list[Found] = []
    for name in names:
        path = Path(name)
        if name.endswith(".py") or path.is_file():
            if not path.is_file():
                raise UsageError(f"no such reproducer file: {name}")
            chosen += _load({"path": str(path.resolve())}, name)
            continue
        if known is None:
            known = {f.repro.id: f for f in catalogue()}
        if name not in known:
            raise UsageError(f"unknown reproducer {name!r} (known: {', '.join(sorted(known))})")
        chosen.append(known[name])
    return chosen
