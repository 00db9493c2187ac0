"""Find reproducers: the built-ins, a user's file, and installed plugins.

A reproducer is found, never registered: any module-level
:class:`~suite.api.Reproducer` in a file under ``repros/``, in a file named on
the command line, or in a module an installed package advertises under the
``triton_repro_suite.reproducers`` entry-point group. Each found reproducer
remembers where it came from, so the isolated child can import it again.

A user's file, a plugin or a carried copy is code nobody here has read: this process
never imports it. An isolated child (``python -m suite.children discover``, the same bounds
as a case, a scratch working folder) imports it and answers with what it declares, as
data (:class:`~suite.engine.described.Described`); a config is judged against its
constraints (code) in such a child too. A file that exits, crashes, hangs or eats memory
at import, declares nothing usable, or answers in another shape, is one line and exit 2,
never this process's end; a file that behaves otherwise in this process than in a child
is never run here. Declarations are checked too: known targets, a label its configs can
fill. The built-ins ship with the suite and are imported here.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from suite.api import Config
from suite.children import Role, child_argv
from suite.engine.child import load_reproducers
from suite.engine.defaults import DEFAULTS, Bounds
from suite.engine.described import Described, Malformed, canonical, describe, module_of
from suite.engine.isolate import run_isolated
from suite.engine.shim import child_env
from suite.errors import UsageError
from suite.files import read_regular, scratch_folder, write_atomic
from suite.toolchain.limits import UnknownTarget, limits_for

ENTRY_POINT_GROUP = "triton_repro_suite.reproducers"
BUILTIN_DIR = Path(__file__).resolve().parents[2] / "repros"
# Importing a reproducer file imports Triton: seconds. A file still importing after this
# (or after the command's --timeout, if shorter) is hung.
IMPORT_TIMEOUT_S = 120.0
# A description larger than this is no declaration of parameters and configs.
ANSWER_LIMIT = 64 << 20


@dataclass(frozen=True)
class Found:
    """A reproducer's description and the source the child loads it from."""

    repro: Described
    source: dict[str, str]


def _load(source: dict[str, str], shown: str, untrusted: bool = True) -> list[Found]:
    found = _described_in_child(source, shown) if untrusted else _imported_here(source, shown)
    if not found:
        raise UsageError(f"{shown} defines no Reproducer")
    for item in found:
        _check_declaration(item.repro, shown)
    return found


def _imported_here(source: dict[str, str], shown: str) -> list[Found]:
    """A built-in, imported in this process: it ships with the suite."""
    try:
        repros = load_reproducers(source)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise UsageError(f"cannot import {shown}: {type(exc).__name__}: {first}") from None
    return [Found(describe(r, module_of(r)), source) for r in repros]


class ChildJudge:
    """Judges configs against a reproducer's constraints in an isolated child, each config
    once (the curated ones were judged by the child that described the file)."""

    def __init__(self, source: dict[str, str], repro_id: str, shown: str) -> None:
        self.source, self.repro_id, self.shown = source, repro_id, shown
        self.known: dict[str, list[str]] = {}

    def __call__(self, configs: Sequence[Config]) -> list[list[str]]:
        asked = [dict(c) for c in configs if canonical(c) not in self.known]
        if asked:
            said = _ask_child(
                {"source": self.source, "judge": {"repro": self.repro_id, "configs": asked}},
                self.shown,
            )
            broken = said.get("broken")
            if not isinstance(broken, list) or len(broken) != len(asked):
                raise UsageError(f"cannot judge configs of {self.shown}: no verdict came back")
            for config, verdict in zip(asked, broken, strict=True):
                if not isinstance(verdict, list) or not all(isinstance(v, str) for v in verdict):
                    raise UsageError(f"cannot judge configs of {self.shown}: a malformed verdict")
                self.known[canonical(config)] = verdict
        return [list(self.known[canonical(c)]) for c in configs]


def _described_in_child(source: dict[str, str], shown: str) -> list[Found]:
    said = _ask_child({"source": source}, shown)
    entries = said.get("reproducers")
    if not isinstance(entries, list):
        raise UsageError(f"cannot import {shown}: the import ended the process without an answer")
    found = []
    for entry in entries:
        judge = ChildJudge(source, str(entry.get("id")) if isinstance(entry, dict) else "", shown)
        try:
            described = Described.from_json(entry, judge)
            curated = entry.get("broken") or {}
            if not isinstance(curated, dict):
                raise Malformed("the curated configs' verdicts are not a mapping")
            for key, verdict in curated.items():
                if not isinstance(verdict, list) or not all(isinstance(v, str) for v in verdict):
                    raise Malformed("a curated config's verdict is not a list of text")
                judge.known[str(key)] = verdict
        except Malformed as exc:
            raise UsageError(
                f"cannot import {shown}: its declaration is malformed ({exc})"
            ) from None
        found.append(Found(described, source))
    return found


def _check_declaration(repro: Described, shown: str) -> None:
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


def _ask_child(request: dict[str, Any], shown: str) -> dict[str, Any]:
    """Import ``request["source"]`` in an isolated child (the command's memory cap, its
    timeout up to ``IMPORT_TIMEOUT_S``) and return its JSON answer; any way that fails is a
    UsageError."""
    chosen = DEFAULTS.bounds
    bounds = Bounds(min(IMPORT_TIMEOUT_S, chosen.timeout_s), chosen.memory_bytes)
    with scratch_folder("discover") as scratch:
        asked, answer = Path(scratch) / "request.json", Path(scratch) / "answer.json"
        write_atomic(asked, json.dumps(request))
        exit = run_isolated(
            child_argv(sys.executable, Role.DISCOVER, str(asked), str(answer)),
            env=child_env(),
            cwd=scratch,
            bounds=bounds,
        )
        try:
            said = json.loads(read_regular(answer, "answer", ANSWER_LIMIT, follow=False))
        except (UsageError, ValueError):
            said = {}
    said = said if isinstance(said, dict) else {}
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
    return said


def main(argv: list[str]) -> int:
    """The ``discover`` child: ``REQUEST ANSWER``: import the source, then answer
    with what it declares (or, asked to judge, which constraints each config breaks)."""
    request, answer = json.loads(Path(argv[0]).read_text()), Path(argv[1])
    try:
        repros = load_reproducers(request["source"])
        asked = request.get("judge")
        if asked:
            repro = next(r for r in repros if r.id == asked["repro"])
            said: dict[str, Any] = {"broken": describe(repro).judge(asked["configs"])}
        else:
            said = {"reproducers": [_description(r) for r in repros]}
        text = json.dumps({"imported": True, **said})
    except BaseException as exc:  # a file may raise anything, SystemExit included
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        text = json.dumps({"error": f"{type(exc).__name__}: {first}"})
    answer.write_text(text)
    return 0


def _description(repro: Any) -> dict[str, Any]:
    described = describe(repro, module_of(repro))
    curated = [c for cs in described.configs.values() for c in cs]
    broken = dict(zip((canonical(c) for c in curated), described.judge(curated), strict=True))
    return {**described.to_json(), "broken": broken}


def from_source(source: dict[str, str], shown: str) -> list[Found]:
    """The reproducers a child ``source`` defines (``shown`` names it in errors), described
    by a child."""
    return _load(source, shown)


def builtins() -> list[Found]:
    """Every reproducer file under ``repros/``, subfolders included (``repros/upstream/``);
    a file or folder whose name starts with ``_`` or ``.`` is not a reproducer."""
    found: list[Found] = []
    for path in sorted(BUILTIN_DIR.rglob("*.py")):
        parts = path.relative_to(BUILTIN_DIR).parts
        if not any(part.startswith(("_", ".")) for part in parts):
            found += _load({"path": str(path)}, str(path), untrusted=False)
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
