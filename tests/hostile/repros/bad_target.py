"""Declares a target no NVIDIA GPU has."""

from suite import Choice, Compiled, Reproducer

REPRO = Reproducer(
    id="hostile-bad-target",
    title="target sm_42",
    family="hostile",
    params=(Choice("x", (1,)),),
    configs={"default": [{"x": 1}]},
    targets=("sm_42",),
)


@REPRO.compile
def compile_case(case):
    return Compiled()
