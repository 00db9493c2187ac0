"""triton-repro-suite: isolated, classified reproducers for Triton and CUDA TMA bugs.

The public surface for reproducer files is re-exported here; everything else
is the engine. Importing this package stays cheap and standard-library only,
because isolated children (possibly in a venv with nothing but triton) import it.
"""

from suite.api import (
    Case,
    Choice,
    Compiled,
    Constraint,
    Param,
    Pow2,
    Reproducer,
    Size,
    Unsupported,
    WrongResult,
)
from suite.oracles import Determinism, Differential, Fault, Hang, Reference

__all__ = [
    "Case",
    "Choice",
    "Compiled",
    "Constraint",
    "Determinism",
    "Differential",
    "Fault",
    "Hang",
    "Param",
    "Pow2",
    "Reference",
    "Reproducer",
    "Size",
    "Unsupported",
    "WrongResult",
]
