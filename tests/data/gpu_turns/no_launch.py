"""A case that fails before it launches (its inputs raise) (tests/test_gpu_turns.py): it never
used its GPU, so nothing there needs checking after it."""

from suite import Reproducer

REPRO = Reproducer(
    id="no-launch",
    title="a case whose inputs fail",
    family="test",
    params=(),
    configs={},
    targets=("sm_90",),
)


@REPRO.inputs
def inputs(case):
    raise RuntimeError("no inputs: nothing is launched")


@REPRO.launch
def launch(case, **inputs):
    raise AssertionError("never reached")
