"""Oracles: how a reproducer's launch is judged.

A reproducer that launches declares its oracles (``Reproducer(oracles=...)``) and two
functions: ``@REPRO.inputs`` makes fresh random inputs for a case, ``@REPRO.launch``
launches the kernel on them into freshly poisoned outputs and returns the outputs. The
engine then launches and judges (``suite.engine.launch``):

- :class:`Fault`: every launch is checked for a fault at the launch or at the next
  synchronize (always on; ``runtime-error:launch:<exception>``);
- :class:`Hang`: a launch not finished within ``bound_s`` is killed by the parent
  (``timeout:launch:hang``, naming the launch it was in);
- :class:`Reference`: the outputs against a float64 reference computed by the reproducer's
  function, with the error judged against the error of the same function run in the
  inputs' own precision (PyTorch's accuracy minifier judges this way);
- :class:`Differential`: the same kernel under a variant of the config (``num_stages=1``,
  warp specialization off, another tile) must agree; no reference needed;
- :class:`Determinism`: two launches on the same inputs must agree bit for bit.

A wrong result's signature names the oracle and the kind of difference, never counts or
values: ``wrong-result:launch:differential:num_stages: mismatch``.

A reproducer whose ``@REPRO.launch`` takes the case alone (and raises
:class:`suite.WrongResult` itself) keeps working: it is launched once and judged for faults.

The tolerances are :mod:`suite.judgement`'s, which every launch ``repro.py`` carries.
Standard library at import; the judging functions import torch when they run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from suite.judgement import tolerance

__all__ = [
    "Determinism",
    "Differential",
    "Fault",
    "Hang",
    "Judgement",
    "Oracle",
    "Reference",
    "outputs_of",
]

#: The kinds of difference a wrong result can show, the message key of its signature.
NAN = "nan"  # NaN where the other side has a number: poison never overwritten, or computed
INF = "inf"  # an infinity where the other side is finite
MISMATCH = "mismatch"  # finite values beyond the tolerance


@dataclass(frozen=True)
class Judgement:
    """What one oracle found: ``difference`` is '' when the launches agree."""

    oracle: str
    difference: str = ""
    message: str = ""

    @property
    def wrong(self) -> bool:
        return bool(self.difference)


@dataclass(frozen=True)
class Fault:
    """A launch that raises, at the launch call or at the synchronize after it."""

    @property
    def name(self) -> str:
        return "fault"


@dataclass(frozen=True)
class Hang:
    """A launch must finish within ``bound_s`` seconds (the case's timeout still applies)."""

    bound_s: float = 60.0

    def __post_init__(self) -> None:
        if not self.bound_s > 0:
            raise ValueError(f"Hang(bound_s={self.bound_s}): the bound must be positive")

    @property
    def name(self) -> str:
        return "hang"


@dataclass(frozen=True)
class Reference:
    """``compute(**inputs)`` gives the expected outputs (a tensor, a tuple or a dict).

    It runs twice: on the inputs cast to float64 (the reference) and on the inputs as they
    are (the same computation in the inputs' precision). The kernel's root-mean-square
    error against the reference must be at most ``multiplier`` times that second error plus
    a floor that fits the output dtype.
    """

    compute: Callable[..., Any]
    multiplier: float = 3.0

    @property
    def name(self) -> str:
        return "reference"


@dataclass(frozen=True)
class Differential:
    """The kernel under ``variant`` (config values overriding the case's, e.g.
    ``{"num_stages": 1}``) must agree with it within a dtype-fitting tolerance.

    ``label`` (default: the variant's keys) names it in the signature.
    """

    variant: Mapping[str, Any]
    label: str = ""

    def __post_init__(self) -> None:
        if not self.variant:
            raise ValueError("Differential needs a variant, e.g. {'num_stages': 1}")

    @property
    def name(self) -> str:
        return "differential:" + (self.label or "+".join(sorted(self.variant)))

    def applies_to(self, config: Mapping[str, Any]) -> bool:
        """Whether the case differs from its variant (a case already at it has no other side)."""
        return any(config.get(k) != v for k, v in self.variant.items())

    def describe(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.variant.items())


@dataclass(frozen=True)
class Determinism:
    """Two launches on the same inputs give the same bits."""

    @property
    def name(self) -> str:
        return "determinism"


Oracle = Fault | Hang | Reference | Differential | Determinism


def outputs_of(value: Any) -> dict[str, Any]:
    """A launch's or a reference's outputs by name: ``out`` for one tensor, ``out0``... for
    a tuple or list, the keys of a dict."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (tuple, list)):
        return {f"out{i}": v for i, v in enumerate(value)}
    return {"out": value}


def _name(tensor: Any) -> str:
    return str(tensor.dtype).replace("torch.", "")


def _poison_left(name: str, got: Any, want: Any) -> Judgement | None:
    """NaN (the poison, never overwritten, or computed) or an infinity in ``got`` where
    ``want`` has a number."""
    import torch

    nan = int((torch.isnan(got) & ~torch.isnan(want)).sum())
    if nan:
        return Judgement(
            "", NAN, f"{name}: {nan} of {got.numel()} elements NaN (left unwritten, or computed)"
        )
    inf = int((torch.isinf(got) & torch.isfinite(want)).sum())
    if inf:
        return Judgement("", INF, f"{name}: {inf} of {got.numel()} elements infinite")
    return None


def agree(oracle: str, ours: Any, theirs: Any, what: str) -> Judgement:
    """Whether two launches' outputs agree within the tolerance of their dtype."""
    import torch

    mine, other = outputs_of(ours), outputs_of(theirs)
    for name in mine:
        a, b = mine[name], other[name]
        if a.shape != b.shape:
            return Judgement(
                oracle, MISMATCH, f"{name}: shape {tuple(a.shape)} vs {tuple(b.shape)}"
            )
        if not a.is_floating_point():
            bad = int((a != b).sum())
            if bad:
                return Judgement(oracle, MISMATCH, f"{name}: {bad} of {a.numel()} elements {what}")
            continue
        x, y = a.double(), b.double()
        for got, want in ((x, y), (y, x)):
            left = _poison_left(name, got, want)
            if left is not None:
                side = "the case" if got is x else "the other launch"
                return Judgement(oracle, left.difference, f"{left.message} in {side}")
        atol, rtol = tolerance(_name(a))
        finite = torch.isfinite(x) & torch.isfinite(y)
        error = torch.where(finite, (x - y).abs(), torch.zeros_like(x))
        bound = atol + rtol * torch.where(finite, y.abs(), torch.zeros_like(y))
        bad = int((error > bound).sum())
        if bad:
            worst = int(torch.argmax(error - bound))
            return Judgement(
                oracle,
                MISMATCH,
                f"{name}: {bad} of {a.numel()} elements {what}; worst at flat index {worst}: "
                f"{x.flatten()[worst].item():.6g} vs {y.flatten()[worst].item():.6g}",
            )
    return Judgement(oracle)


def identical(oracle: str, ours: Any, theirs: Any) -> Judgement:
    """Whether two launches' outputs are the same bits (NaN equal to NaN)."""
    import torch

    mine, other = outputs_of(ours), outputs_of(theirs)
    for name in mine:
        a, b = mine[name], other[name]
        same = torch.eq(a, b)
        if a.is_floating_point():
            same |= torch.isnan(a) & torch.isnan(b)
        bad = int((~same).sum())
        if bad:
            return Judgement(
                oracle, MISMATCH, f"{name}: {bad} of {a.numel()} elements differ between launches"
            )
    return Judgement(oracle)


def _rmse(a: Any, b: Any) -> float:
    import torch

    return float(torch.sqrt(torch.mean((a - b) ** 2)).item()) if a.numel() else 0.0


def against_reference(reference: Reference, got: Any, inputs: Mapping[str, Any]) -> Judgement:
    """The outputs against the float64 reference, relative to the inputs' own precision."""
    import torch

    wide = {
        k: v.double() if torch.is_tensor(v) and v.is_floating_point() else v
        for k, v in inputs.items()
    }
    precise = outputs_of(reference.compute(**wide))
    narrow = outputs_of(reference.compute(**inputs))
    for name, value in outputs_of(got).items():
        want = precise[name].double()
        if not value.is_floating_point():
            bad = int((value.to(want.dtype) != want).sum())
            if bad:
                return Judgement(reference.name, MISMATCH, f"{name}: {bad} elements differ")
            continue
        have = value.double()
        left = _poison_left(name, have, want)
        if left is not None:
            return Judgement(reference.name, left.difference, left.message)
        floor = tolerance(_name(value))[0] / 10
        own = _rmse(narrow[name].double(), want)
        error = _rmse(have, want)
        bound = reference.multiplier * own + floor
        if not error <= bound or math.isnan(error):
            return Judgement(
                reference.name,
                MISMATCH,
                f"{name}: root-mean-square error {error:.3g} against the float64 reference; "
                f"the same computation in {_name(value)} has {own:.3g} (bound {bound:.3g})",
            )
    return Judgement(reference.name)
