"""Shell completion through argcomplete: commands and options from the parser, and the values
that name things (reproducer ids, targets, config sets, finding ids) from the catalogue and
the findings store.

Enable it once per shell: ``eval "$(register-python-argcomplete repro)"`` (bash, zsh), or
``activate-global-python-argcomplete`` for every argcomplete program. Completers are attached
by option name, so a new command's ``--target`` or ``repros`` completes without more code.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from suite.cli.options import DEFAULT_OUTPUT


def reproducer_ids(**_: Any) -> list[str]:
    from suite.engine import discover

    return sorted(found.repro.id for found in discover.catalogue())


def targets(**_: Any) -> list[str]:
    from suite.toolchain.limits import TARGETS

    return list(TARGETS)


def config_sets(parsed_args: argparse.Namespace | None = None, **_: Any) -> list[str]:
    from suite.engine import discover

    chosen = set(getattr(parsed_args, "repros", None) or [])
    sets = {
        name
        for found in discover.catalogue()
        if not chosen or found.repro.id in chosen
        for name in found.repro.configs
    }
    return sorted(sets)


def finding_ids(parsed_args: argparse.Namespace | None = None, **_: Any) -> list[str]:
    root = Path(getattr(parsed_args, "output", None) or DEFAULT_OUTPUT) / "findings"
    return sorted(p.stem for p in root.glob("*.json")) if root.is_dir() else []


COMPLETERS: dict[str, Callable[..., list[str]]] = {
    "repros": reproducer_ids,
    "repro": reproducer_ids,
    "kernel": reproducer_ids,
    "target": targets,
    "targets": targets,
    "configs": config_sets,
    "finding": finding_ids,
    "subject": finding_ids,
}
"""Which values an argument takes, by its ``dest``."""


def attach(parser: argparse.ArgumentParser) -> None:
    """Give every argument named in :data:`COMPLETERS`, in every subcommand, its completer."""
    for action in parser._actions:
        completer = COMPLETERS.get(action.dest)
        if completer is not None:
            action.completer = completer  # type: ignore[attr-defined]
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                attach(subparser)


def autocomplete(parser: argparse.ArgumentParser) -> None:
    """Answer a completion request (the shell sets ``_ARGCOMPLETE``) and exit; else nothing."""
    if "_ARGCOMPLETE" not in os.environ:
        return
    import argcomplete

    attach(parser)
    argcomplete.autocomplete(parser)
