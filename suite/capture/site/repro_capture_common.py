"""What the hook's modules share inside the user's program: where records go, the hook's
own errors, the per-thread state, a sequence over all events of the process, and the
plain facts of a call (options, target, release, the program's frame, an exception).

Standard library (and triton, imported lazily) only, like the rest of this folder.
"""

from __future__ import annotations

import itertools
import math
import os
import stat
import sys
import threading
import traceback
import types
from pathlib import Path
from typing import Any

from repro_capture_records import ENV_ALL, ENV_DIR, ErrorFacts, TargetFacts

LOCAL = threading.local()  # per thread: the launch in flight, a failed compile, autotune records
UNREPRESENTABLE = object()
HOOK_FOLDER = os.path.dirname(os.path.abspath(__file__))


def folder() -> Path | None:
    value = os.environ.get(ENV_DIR)
    return Path(value) if value else None


def keep_all() -> bool:
    return os.environ.get(ENV_ALL) == "1"


#: The order of compiles and launches in this process (what came after what): the
#: counter's own ``__next__``, one C call on the launch path.
next_sequence = itertools.count().__next__


def compile_failed_since(sequence: int) -> bool:
    """Whether a compile of this thread failed after event ``sequence`` (a launch's own
    compile: its failure is the compile's, not the launch's)."""
    failed: int = getattr(LOCAL, "compile_failed_at", -1)
    return failed > sequence


def note_hook_error(where: str) -> None:
    """The hook's own failure: kept for the capture's summary, never raised."""
    try:
        base = folder()
        if base is not None:
            with open(base / "hook-errors.txt", "a") as handle:
                handle.write(f"[pid {os.getpid()}] {where}\n{traceback.format_exc()}\n")
    except Exception:
        pass


def error_facts(exc: BaseException) -> ErrorFacts:
    cause = exc.__cause__ or exc.__context__
    return ErrorFacts(
        type=type(exc).__name__,
        qualname=f"{type(exc).__module__}.{type(exc).__qualname__}",
        message=str(exc),
        cause=f"{type(cause).__name__}: {cause}" if cause is not None else "",
        frames=[frame.name for frame in traceback.extract_tb(exc.__traceback__)],
        traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
    )


def stderr_offset() -> int | None:
    """Where the program's stderr stands, when ``repro capture`` made it a log file."""
    try:
        sys.stderr.flush()
        status = os.fstat(2)
    except (OSError, ValueError, AttributeError):
        return None
    return status.st_size if stat.S_ISREG(status.st_mode) else None


def triton_version() -> str:
    import triton

    return str(getattr(triton, "__version__", "?"))


def target_of(target: Any) -> TargetFacts:
    """``backend``, ``arch``, ``warp_size`` of ``target`` (the active driver's when None)."""
    if target is None:
        try:
            from triton.runtime import driver

            target = driver.active.get_current_target()
        except Exception:
            return {}
    return {
        "backend": getattr(target, "backend", ""),
        "arch": getattr(target, "arch", ""),
        "warp_size": getattr(target, "warp_size", 32),
    }


def called_from() -> str:
    """The innermost frame of the program (not triton, not this hook) on the stack."""
    import triton

    skipped = (os.path.dirname(triton.__file__), HOOK_FOLDER, "<frozen")
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if not frame.f_code.co_filename.startswith(skipped):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return ""


def json_options(options: Any, problems: list[str]) -> dict[str, object]:
    if not isinstance(options, dict):
        options = dict(getattr(options, "__dict__", {}))
    kept: dict[str, object] = {}
    for name, value in options.items():
        value_plain = plain(value)
        if value_plain is UNREPRESENTABLE:
            problems.append(f"option {name}={value!r} is not a plain value: left out")
        else:
            kept[str(name)] = value_plain
    return kept


def plain(value: Any) -> Any:
    """``value`` as JSON data (tuples become lists), or ``UNREPRESENTABLE``."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else UNREPRESENTABLE
    if isinstance(value, (tuple, list)):
        items = [plain(v) for v in value]
        return UNREPRESENTABLE if any(i is UNREPRESENTABLE for i in items) else items
    return UNREPRESENTABLE
