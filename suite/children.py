"""The one door through which the suite starts a process of its own: ``python -m suite.children
ROLE ARGS...``.

Every child the suite starts (a case, the warm template, a reproducer file's import, the
environment probe, the report's compile capture, ...) is one :class:`Role`, which
:data:`ROLES` maps to the function that runs it, left in the module that owns its work. Each
function takes the arguments after the role's name and returns the exit status.
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

import enum
import importlib
import sys
from collections.abc import Callable, Sequence

#: This module, as ``python -m`` names it.
ENTRY = "suite.children"


class Role(str, enum.Enum):
    """A child of the suite; its value is its name on the command line."""

    CASE = "case"
    WARM_TEMPLATE = "warm-template"
    DISCOVER = "discover"
    ENVIRONMENT = "environment"
    ACCEPTS_PROBE = "accepts-probe"
    PTXAS_PROBE = "ptxas-probe"
    REPORT_CAPTURE = "report-capture"
    TOOLCHAIN_PROBE = "toolchain-probe"
    CUDA_DRIVER = "cuda-driver"
    REPLAY = "replay"
    GATE_GPU = "gate-gpu"
    #: ``python -m suite.capture`` becomes the ``repro`` command (``suite.capture`` is below
    #: the command package and may not import it).
    REPRO = "repro"


#: The function (``module:function``) that runs each role with the arguments after its name.
ROLES: dict[Role, str] = {
    Role.CASE: "suite.engine.child:main",
    Role.WARM_TEMPLATE: "suite.engine.template:main",
    Role.DISCOVER: "suite.engine.discover:main",
    Role.ENVIRONMENT: "suite.engine.environment:main",
    Role.ACCEPTS_PROBE: "suite.engine.accepts_probe:main",
    Role.PTXAS_PROBE: "suite.engine.ptxas:print_bundled",
    Role.REPORT_CAPTURE: "suite.report.capture:main",
    Role.TOOLCHAIN_PROBE: "suite.toolchain.probe:main",
    Role.CUDA_DRIVER: "suite.cuda.driver:main",
    Role.REPLAY: "suite.replay.child:main",
    Role.GATE_GPU: "suite.gate.gpu_child:main",
    Role.REPRO: "suite.cli.main:main",
}


def child_argv(python: str, role: Role, *args: str) -> list[str]:
    """The command line that runs ``role`` with ``args`` under the interpreter ``python``."""
    return [python, "-m", ENTRY, Role(role).value, *args]


def role_function(role: Role) -> Callable[[list[str]], int]:
    """The function that runs ``role`` (its module imported now)."""
    module, _, name = ROLES[role].partition(":")
    function: Callable[[list[str]], int] = getattr(importlib.import_module(module), name)
    return function


def main(argv: Sequence[str]) -> int:
    """Run the role named ``argv[0]`` with the rest of ``argv``."""
    names = [role.value for role in Role]
    if not argv or argv[0] not in names:
        print(f"usage: python -m {ENTRY} {{{','.join(names)}}} ARGS...", file=sys.stderr)
        return 2
    name, *args = argv
    return role_function(Role(name))(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
