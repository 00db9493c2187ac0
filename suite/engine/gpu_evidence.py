"""Whether a run could have shown a runtime failure: the one home of "needs a GPU".

A failure of the launch phase (a fault, a hang, a wrong result) shows only when the case
is launched on a GPU of its target; a compile that succeeds says nothing about it. Every
command that would conclude "fixed", "passed" or "do not file" asks here first, and says
instead that the failure needs a GPU of that compute capability, and what to run there.
"""

from __future__ import annotations

from suite.engine.outcome import CaseResult, Verdict
from suite.engine.signature import family_of

#: A pass that, only compiled, says nothing of a runtime failure: a verdict, and a state of
#: a bisection's release.
NEEDS_GPU = Verdict.NEEDS_GPU


def runtime_failure(signature: str | None) -> bool:
    """Whether ``signature`` (or a baseline pattern) is a failure of the launch phase."""
    return bool(signature) and "launch" in family_of(str(signature)).split(":")


def could_show(signature: str | None, result: CaseResult) -> bool:
    """Whether ``result`` is evidence about the failure ``signature``: always for a compile
    failure, only when the case was launched for a runtime failure."""
    return result.gpu or not runtime_failure(signature)


def needs_gpu(target: str) -> str:
    """What to say instead of a verdict that a compile cannot give."""
    return f"needs a GPU ({target}) to check"


def command_there(command: str, target: str) -> str:
    """The line that tells a user where and what to run."""
    return f"{needs_gpu(target)}: on a machine with an {target} GPU, run `{command}`"
