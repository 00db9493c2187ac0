"""The facts of a failure as Python tells them: an exception raised in this process
(:func:`describe_exception`, the child's error event), with the compile stage it was in and
who raised it (:class:`Origin`). :mod:`suite.engine.signature` judges these facts; a
traceback a standalone ``repro.py`` printed is read by :func:`suite.judgement.printed_signature`,
from the same stage and frontend functions.

Standard library only: the child runs it under a venv holding nothing but triton.
"""

from __future__ import annotations

import enum
import os
import sys
import traceback

from suite.engine.protocol import Error
from suite.judgement import PASS_STAGE_FUNCTIONS as PASS_STAGE_FUNCTIONS
from suite.judgement import entered_compile, stage_of
from suite.judgement import origin_of as judged_origin
from suite.judgement import stages_entered as stages_entered


class Origin(str, enum.Enum):
    """Where a compile's exception was raised: what decides whose failure it is."""

    GLUE = "glue"  # outside Triton's compile: the harness or the reproducer's own code
    FRONTEND = "frontend"  # Triton's Python making TTIR, before any MLIR pass ran
    PIPELINE = "pipeline"  # a stage that runs MLIR passes, LLVM or ptxas
    COMPILE = "compile"  # ``triton.compile`` itself, around the stages


def origin_of(frames: list[str], compiling: bool) -> Origin:
    """The origin of an exception from its traceback's function names (outermost first)."""
    return Origin(judged_origin(frames, compiling))


def _raised_in_triton(tb: list[traceback.FrameSummary]) -> bool:
    """Whether the innermost frame is Triton's own Python (its frontend or a backend's
    option checks), not the reproducer, the harness or a native pass."""
    triton = sys.modules.get("triton")
    root = os.path.dirname(getattr(triton, "__file__", None) or "")
    if not tb or not root:
        return False
    return os.path.abspath(tb[-1].filename).startswith(root + os.sep)


def describe_exception(exc: BaseException, phase: str) -> Error:
    """The facts of an exception that :func:`suite.engine.signature.classify_ending` reads
    (the child's error event)."""
    tb = traceback.extract_tb(exc.__traceback__)
    cause = exc.__cause__ or exc.__context__
    compiling = entered_compile([(f.filename, f.name) for f in tb])
    return Error(
        phase=phase,
        type=type(exc).__name__,
        qualname=f"{type(exc).__module__}.{type(exc).__qualname__}",
        message=str(exc),
        cause=f"{type(cause).__name__}: {cause}" if cause is not None else "",
        stage=stage_of([f.name for f in tb]),
        compiling=compiling,
        raised_in_triton=_raised_in_triton(tb),
        origin=origin_of([f.name for f in tb], compiling).value,
        traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
    )
