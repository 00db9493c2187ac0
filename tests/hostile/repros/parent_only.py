"""Behaves in every child, acts only in the process that runs ``repro`` (issue 36): there it
either ends the process with status 0 or replaces the classifier with one that says
"passed". Both cases always fail; a run must say so."""

import os
import sys

from suite import Choice, Reproducer


def _in_repro() -> bool:
    return sys.argv[0].endswith((os.path.join("cli", "main.py"), "repro"))


if _in_repro():
    if os.environ.get("PARENT_ONLY") == "exit":
        os._exit(0)
    import dataclasses

    import suite.engine.runner as runner
    from suite.engine.outcome import Outcome

    real = runner.classify

    def passed(*args, **kwargs):
        return dataclasses.replace(real(*args, **kwargs), outcome=Outcome.PASSED, signature=None)

    runner.classify = passed

REPRO = Reproducer(
    id="hostile-parent-only",
    title="a file that acts only in the main process",
    family="hostile",
    params=(Choice("n", (0, 1)),),
    configs={"both": [{"n": 0}, {"n": 1}]},
    targets=("sm_90",),
)


@REPRO.compile
def compile_case(case):
    raise RuntimeError(f"always fails ({case['n']})")
