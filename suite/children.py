"""The one door through which the suite starts a process of its own: ``python -m suite.children
ROLE ARGS...``.

Every child the suite starts (a case, the warm template, a reproducer file's import, the
environment probe, the report's compile capture, ...) is one *role*: a name in :data:`ROLES`
mapped to the function that runs it, each left in the module that owns its work. Each
function takes the arguments after the role and returns the exit status.
:func:`child_argv` builds the command line of a child; no other module of the suite writes one
that names a module of its own.

A role's module is imported only when that role runs, by its dotted name: this module
imports nothing but the standard library, so a case child under another Triton release's
venv (where ``suite.engine.shim.child_env`` puts only a link to this package on the path)
pays for nothing but its own role.

Not a role: the keeper of a fresh case (``suite.engine.template.keeper_argv``) runs its file
by path under ``python -I -S``, without the package or site-packages, so that it costs no
import and nothing on the path can run in it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence

#: This module, as ``python -m`` names it.
ENTRY = "suite.children"

#: Each role, and the function (``module:function``) that runs it with the arguments after
#: the role's name.
ROLES: dict[str, str] = {
    "case": "suite.engine.child:main",
    "warm-template": "suite.engine.template:main",
    "discover": "suite.engine.discover:main",
    "environment": "suite.engine.environment:main",
    "accepts-probe": "suite.engine.accepts_probe:main",
    "ptxas-probe": "suite.engine.ptxas:print_bundled",
    "report-capture": "suite.report.capture:main",
    "toolchain-probe": "suite.toolchain.probe:main",
    "cuda-driver": "suite.cuda.driver:main",
    "replay": "suite.replay.child:main",
    "gate-gpu": "suite.gate.gpu_child:main",
    # ``python -m suite.capture`` becomes the ``repro`` command (suite.capture is below the
    # command package and may not import it).
    "repro": "suite.cli.main:main",
}


def child_argv(python: str, role: str, *args: str) -> list[str]:
    """The command line that runs ``role`` with ``args`` under the interpreter ``python``."""
    if role not in ROLES:
        raise KeyError(f"no child role {role!r}")
    return [python, "-m", ENTRY, role, *args]


def role_function(role: str) -> Callable[[list[str]], int]:
    """The function that runs ``role`` (its module imported now)."""
    module, _, name = ROLES[role].partition(":")
    function: Callable[[list[str]], int] = getattr(importlib.import_module(module), name)
    return function


def main(argv: Sequence[str]) -> int:
    """Run the role ``argv[0]`` with the rest of ``argv``."""
    if not argv or argv[0] not in ROLES:
        print(f"usage: python -m {ENTRY} {{{','.join(ROLES)}}} ARGS...", file=sys.stderr)
        return 2
    role, *args = argv
    return role_function(role)(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
