"""The facts of a failure as Python tells them: an exception raised in this process
(:func:`describe_exception`, the child's error event) or a traceback another process printed
(:func:`describe_printed`, a standalone ``repro.py``), with the compile stage it was in and
who raised it (:class:`Origin`). :mod:`suite.engine.signature` judges these facts.

Standard library only: the child runs it under a venv holding nothing but triton.
"""

from __future__ import annotations

import contextlib
import enum
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from suite.engine.protocol import Error

# Names of the functions that run each compile stage, from Triton's backends.
STAGE_FUNCTIONS = {
    "make_ir": "ttir",
    "ast_to_ttir": "ttir",
    "make_ttir": "ttir",
    "make_ttgir": "ttgir",
    "make_llir": "llir",
    "make_ptx": "ptx",
    "make_cubin": "cubin",
}

# Triton's Python turning the kernel into TTIR: its options, the walk of the kernel's source
# for its cache key (3.0-3.2 resolve every ``tl.`` name there), the code generator
# (``make_ir`` calls ``ast_to_ttir``, whose frames Triton filters out of the traceback).
FRONTEND_FUNCTIONS = frozenset({"parse_options", "cache_key", "make_ir", "ast_to_ttir"})
# The stages that run MLIR passes, LLVM or ptxas.
PASS_STAGE_FUNCTIONS = frozenset(STAGE_FUNCTIONS) - FRONTEND_FUNCTIONS


class Origin(str, enum.Enum):
    """Where a compile's exception was raised: what decides whose failure it is."""

    GLUE = "glue"  # outside Triton's compile: the harness or the reproducer's own code
    FRONTEND = "frontend"  # Triton's Python making TTIR, before any MLIR pass ran
    PIPELINE = "pipeline"  # a stage that runs MLIR passes, LLVM or ptxas
    COMPILE = "compile"  # ``triton.compile`` itself, around the stages


def origin_of(frames: list[str], compiling: bool) -> Origin:
    """The origin of an exception from its traceback's function names (outermost first)."""
    if any(name in PASS_STAGE_FUNCTIONS for name in frames):
        return Origin.PIPELINE
    if not compiling:
        return Origin.GLUE
    if any(name in FRONTEND_FUNCTIONS for name in frames):
        return Origin.FRONTEND
    return Origin.COMPILE


@contextlib.contextmanager
def stages_entered(on_stage: Callable[[str], None]) -> Iterator[None]:
    """Call ``on_stage`` with each compile stage as Triton enters it.

    A native crash's stage is read from faulthandler's frames, but libtriton's LLVM may
    install its own signal handlers over faulthandler's during a process's first compile,
    and then the frames are lost (a fresh child lost them where a warm one, whose template
    compiled first, kept them). The last stage entered names the stage the same way in both.
    """
    entered: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            stage = STAGE_FUNCTIONS.get(frame.f_code.co_name)
            if stage and (not entered or entered[-1] != stage):
                entered.append(stage)
                on_stage(stage)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(previous)


def stage_of(frames: list[str]) -> str | None:
    """The compile stage of the innermost frame that names one (frames outermost first)."""
    stage = None
    for name in frames:
        stage = STAGE_FUNCTIONS.get(name, stage)
    return stage


def _raised_in_triton(tb: list[traceback.FrameSummary]) -> bool:
    """Whether the innermost frame is Triton's own Python (its frontend or a backend's
    option checks), not the reproducer, the harness or a native pass."""
    triton = sys.modules.get("triton")
    root = os.path.dirname(getattr(triton, "__file__", None) or "")
    if not tb or not root:
        return False
    return os.path.abspath(tb[-1].filename).startswith(root + os.sep)


def _entered_compile(tb: list[traceback.FrameSummary]) -> bool:
    """Whether Triton's compile pipeline (``triton.compile`` or a stage) was running."""
    for frame in tb:
        path = frame.filename.replace("\\", "/")
        if frame.name in STAGE_FUNCTIONS:
            return True
        if frame.name == "compile" and path.endswith("triton/compiler/compiler.py"):
            return True
    return False


def describe_exception(exc: BaseException, phase: str) -> Error:
    """The facts of an exception that :func:`suite.engine.signature.classify_ending` reads
    (the child's error event)."""
    tb = traceback.extract_tb(exc.__traceback__)
    cause = exc.__cause__ or exc.__context__
    compiling = _entered_compile(tb)
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


TRACEBACK_HEAD = "Traceback (most recent call last):"
TRACEBACK_FRAME = re.compile(r'^  File "(.+?)", line \d+, in (\S+)')
_TRITON_PACKAGE = re.compile(r"[/\\]triton[/\\](?:compiler|language|runtime|backends|_C)[/\\]")


def _printed_exception(block: str) -> tuple[list[tuple[str, str]], str, str]:
    """The frames ``(file, function)``, the type and the message of one printed traceback."""
    frames: list[tuple[str, str]] = []
    lines = block.splitlines()
    for at, line in enumerate(lines):
        frame = TRACEBACK_FRAME.match(line)
        if frame:
            frames.append((frame.group(1), frame.group(2)))
        elif line and not line[0].isspace():
            kind, _, message = "\n".join(lines[at:]).partition(": ")
            if re.fullmatch(r"[\w.]+", kind):
                return frames, kind.rsplit(".", 1)[-1], message.strip()
            return frames, "", "\n".join(lines[at:]).strip()
    return frames, "", ""


def describe_printed(output: str, phase: str) -> Error | None:
    """:func:`describe_exception`'s facts read back from the traceback Python printed (the
    last one in ``output``, the one before it being its cause); ``None`` when there is none."""
    blocks = output.split(TRACEBACK_HEAD)
    if len(blocks) < 2:
        return None
    chained = re.compile(r"\n\s*\n(?:The above exception|During handling of the above)[^\n]*\n")
    frames, kind, message = _printed_exception(blocks[-1].lstrip("\n"))
    cause = ""
    if len(blocks) > 2:
        _, cause_kind, cause_message = _printed_exception(chained.split(blocks[-2])[0])
        cause = f"{cause_kind}: {cause_message}" if cause_kind else cause_message
    tb = [traceback.FrameSummary(file, 0, name) for file, name in frames]
    return Error(
        phase=phase,
        type=kind,
        qualname=kind,
        message=chained.split(message)[0],
        cause=cause,
        stage=stage_of([name for _, name in frames]),
        compiling=_entered_compile(tb),
        raised_in_triton=bool(frames and _TRITON_PACKAGE.search(frames[-1][0])),
        traceback=TRACEBACK_HEAD + blocks[-1],
    )
