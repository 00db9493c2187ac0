"""Whether two signatures are one bug: the engine's door to the rule of
:mod:`suite.judgement` (the same family and pass, or alike messages, or one failure told two
ways), which every ``repro.py`` carries; and whether a compile got past a failure's stage.

Standard library only, like :mod:`suite.engine.signature`.
"""

from __future__ import annotations

from suite.judgement import compile_failure_site, named_pass
from suite.judgement import same_bug as is_same_bug

__all__ = ["STAGE_ORDER", "completed_stage", "is_same_bug", "named_pass"]

#: The compile stages in the order they run.
STAGE_ORDER = ("ttir", "ttgir", "llir", "ptx", "cubin")


def completed_stage(signature: str, reached: str | None) -> bool:
    """Whether a compile that reached stage ``reached`` (and stopped there for another
    reason, such as a ptxas that does not know the target) had completed the stage in which
    ``signature``'s compile failure happens. ``False`` when either stage is unknown."""
    site = compile_failure_site(signature)
    stage = site[1] if site else None
    if stage not in STAGE_ORDER or reached not in STAGE_ORDER:
        return False
    return STAGE_ORDER.index(str(reached)) > STAGE_ORDER.index(str(stage))
