"""A label that names a parameter the reproducer does not have."""

from suite import Choice, Compiled, Reproducer

REPRO = Reproducer(
    id="hostile-bad-label",
    title="label {nope}",
    family="hostile",
    params=(Choice("x", (1,)),),
    configs={"default": [{"x": 1}]},
    targets=("sm_90",),
    label="{nope}",
)


@REPRO.compile
def compile_case(case):
    return Compiled()
