"""Imports fine anywhere but in the warm template, which it kills: the run goes on fresh."""

import os

from suite import Choice, Compiled, Reproducer

if os.environ.get("REPRO_PRELOAD"):
    os._exit(3)

REPRO = Reproducer(
    id="hostile-kills-template",
    title="kills the warm template at import",
    family="hostile",
    params=(Choice("x", (1, 2)),),
    configs={"default": [{"x": 1}, {"x": 2}]},
    targets=("sm_90", "sm_103"),
)


@REPRO.compile
def compile_case(case):
    return Compiled(shared_bytes=1024)
