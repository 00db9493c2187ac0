"""A warm case that stops its template (issue 36): ``n=0`` sends SIGSTOP to the process
that forked it, then fails; ``n=1`` fails. The run must end with both recorded."""

import os
import signal

from suite import Choice, Reproducer

REPRO = Reproducer(
    id="hostile-stops-template",
    title="a case that stops the warm template",
    family="hostile",
    params=(Choice("n", (0, 1)),),
    configs={"both": [{"n": 0}, {"n": 1}]},
    targets=("sm_90",),
)


@REPRO.compile
def compile_case(case):
    if case["n"] == 0:
        os.kill(os.getppid(), signal.SIGSTOP)
    raise RuntimeError(f"fails ({case['n']})")
