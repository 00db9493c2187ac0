"""Find reproducers: the built-ins, a user's file, and installed plugins.

A reproducer is found, never registered: any module-level
:class:`~suite.api.Reproducer` in a file under ``repros/``, in a file named on
the command line, or in a module an installed package advertises under the
``triton_repro_suite.reproducers`` entry-point group. Each found reproducer
remembers where it came from, so the isolated child can import it again.

A user's file or a plugin is code nobody here has read: before this process imports
it, an isolated child (``python -m suite.engine.discover``, the same bounds as a case,
a scratch working folder) imports it first. A file that exits, crashes, hangs or eats
memory at import, or declares nothing usable, is one line and exit 2, never this
process's end. Declarations are checked too: known targets, a label its configs can fill.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from suite.api import Reproducer
from suite.engine.child import load_reproducers
from suite.engine.defaults import DEFAULTS, Bounds
from suite.engine.isolate import run_isolated
from suite.engine.shim import child_env
from suite.errors import UsageError
from suite.toolchain.limits import UnknownTarget, limits_for

ENTRY_POINT_GROUP = "triton_repro_suite.reproducers"
BUILTIN_DIR = Path(__file__).resolve().parents[2] / "repros"
# Importing a reproducer file imports Triton: seconds. A file still importing after this
# (or after the command's --timeout, if shorter) is hung.
IMPORT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Found:
    """A reproducer and the source the child loads it from."""

    repro: Reproducer
    source: dict[str, str]


def _load(source: dict[str, str], shown: str, untrusted: bool = False) -> list[Found]:
    if untrusted:
        check_in_child(source, shown)
    try:
        repros = load_reproducers(source)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise UsageError(f"cannot import {shown}: {type(exc).__name__}: {first}") from None
    if not repros:
        raise UsageError(f"{shown} defines no Reproducer")
    for repro in repros:
        _check_declaration(repro, shown)
    return [Found(r, source) for r in repros]


def _check_declaration(repro: Reproducer, shown: str) -> None:
    """What the engine relies on later: known targets, a label every curated config fills."""
    for target in repro.targets:
        try:
            limits_for(target)
        except UnknownTarget as exc:
            raise UsageError(f"{shown}: reproducer {repro.id!r}: {exc.args[0]}") from None
    for name, configs in repro.configs.items():
        for config in configs:
            try:
                repro.case_label(config)
            except (KeyError, IndexError, ValueError, TypeError, AttributeError) as exc:
                raise UsageError(
                    f"{shown}: reproducer {repro.id!r}: label {repro.label!r} cannot format "
                    f"config set {name!r} ({type(exc).__name__}: {exc})"
                ) from None


def check_in_child(source: dict[str, str], shown: str) -> None:
    """Import ``source`` in an isolated child first (the command's memory cap, its timeout
    up to ``IMPORT_TIMEOUT_S``); any way that fails is a UsageError."""
    chosen = DEFAULTS.bounds
    bounds = Bounds(min(IMPORT_TIMEOUT_S, chosen.timeout_s), chosen.memory_bytes)
    with tempfile.TemporaryDirectory(prefix="repro-discover-") as scratch:
        answer = Path(scratch) / "answer.json"
        exit = run_isolated(
            [sys.executable, "-m", "suite.engine.discover", json.dumps(source), str(answer)],
            env=child_env(),
            cwd=scratch,
            bounds=bounds,
        )
        try:
            said = json.loads(answer.read_text())
        except (OSError, ValueError):
            said = {}
    if exit.timed_out:
        raise UsageError(f"cannot import {shown}: it hung (killed after {bounds.timeout_s:g} s)")
    if exit.memory_exceeded:
        raise UsageError(f"cannot import {shown}: it went over the memory cap while importing")
    if said.get("error"):
        raise UsageError(f"cannot import {shown}: {said['error']}")
    if exit.signal_name:
        raise UsageError(
            f"cannot import {shown}: importing it killed the process ({exit.signal_name})"
        )
    if exit.returncode != 0 or not said.get("imported"):
        raise UsageError(
            f"cannot import {shown}: the import ended the process (exit status {exit.returncode})"
        )


def _check_child(argv: list[str]) -> int:
    """``python -m suite.engine.discover SOURCE_JSON ANSWER``: import, then say how it went."""
    source, answer = json.loads(argv[1]), Path(argv[2])
    try:
        repros = load_reproducers(source)
    except BaseException as exc:  # a file may raise anything, SystemExit included
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        answer.write_text(json.dumps({"error": f"{type(exc).__name__}: {first}"}))
        return 0
    answer.write_text(json.dumps({"imported": True, "ids": [r.id for r in repros]}))
    return 0


def from_source(source: dict[str, str], shown: str) -> list[Found]:
    """The reproducers a child ``source`` defines (``shown`` names it in errors)."""
    return _load(source, shown)


def builtins() -> list[Found]:
    """Every reproducer file under ``repros/``, subfolders included (``repros/upstream/``);
    a file or folder whose name starts with ``_`` or ``.`` is not a reproducer."""
    found: list[Found] = []
    for path in sorted(BUILTIN_DIR.rglob("*.py")):
        parts = path.relative_to(BUILTIN_DIR).parts
        if not any(part.startswith(("_", ".")) for part in parts):
            found += _load({"path": str(path)}, str(path))
    return found


def plugins() -> list[Found]:
    found: list[Found] = []
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        module = entry.value.split(":")[0]
        found += _load({"module": module}, f"plugin {entry.name} ({module})", untrusted=True)
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
            chosen += _load({"path": str(path.resolve())}, name, untrusted=True)
            continue
        if known is None:
            known = {f.repro.id: f for f in catalogue()}
        if name not in known:
            raise UsageError(f"unknown reproducer {name!r} (known: {', '.join(sorted(known))})")
        chosen.append(known[name])
    return chosen


if __name__ == "__main__":
    sys.exit(_check_child(sys.argv))
