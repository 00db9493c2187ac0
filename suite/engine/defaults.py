"""The bounds and isolation the command line chose, for every execution of reproducer code.

Its own module, below everything that runs a case (discover, expand, runner), so that
none of them imports another for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Bounds:
    """Per-case limits. ``memory_bytes=None`` disables the cap."""

    timeout_s: float = 600.0
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
