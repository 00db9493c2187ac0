"""The bounds and isolation the command line chose, for every execution of reproducer code.

Its own module, below everything that runs a case (discover, expand, runner), so that
none of them imports another for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Work(Enum):
    """The kinds of work a timeout bounds, each with its one default (seconds): the default
    of ``--timeout`` on the commands that make executions of that kind (docs/cli.md)."""

    CASE = 600.0
    """A case: compile, launch on a GPU, judge, a faulting launch run again under the
    sanitizer (run, matrix, explore, bisect, report, capture's confirmations)."""
    COMPILE = 300.0
    """One compile or pass, no launch of the case (gate's static checks, explain's
    per-pass dumps, a report's comparison, replay's pass children)."""
    CANDIDATE = 120.0
    """One of a reduction's hundreds of candidates: one slower than this is dropped, not
    waited for (reduce)."""


@dataclass(frozen=True)
class Bounds:
    """Per-case limits. ``memory_bytes=None`` disables the cap."""

    timeout_s: float = Work.CASE.value
    memory_bytes: int | None = 8 << 30
    output_bytes: int = 1 << 20


@dataclass
class Defaults:
    """The bounds and isolation the command line chose (``--timeout``, ``--memory-cap``,
    ``--isolation``): every execution of reproducer code that does not say otherwise, in
    every command (report, replay, bisect, gate, explore, capture), runs within them."""

    bounds: Bounds = field(default_factory=Bounds)
    warm: bool = True


DEFAULTS = Defaults()


def choose_defaults(bounds: Bounds, warm: bool) -> None:
    """Set :data:`DEFAULTS`; done once, by the command line, before anything runs."""
    DEFAULTS.bounds, DEFAULTS.warm = bounds, warm
