"""Whether a GPU still gives a fresh process a CUDA context.

A launch that faults leaves its own context unusable, and its process ends; the GPU should
then serve the next process as before. On an H100 a reduction of a launch fault (many
faulting candidates, some killed while hung, launches beside other processes' faults) left
the GPU refusing every new context three times (``No CUDA GPUs are available``,
``cuDevicePrimaryCtxRetain returned CUDA_ERROR_UNKNOWN``). So a run of faulting cases checks
the GPU after each: a fresh interpreter (no torch, no site: ``ctypes`` on the driver) makes
the device's primary context and synchronizes it, within ``CHECK_TIMEOUT_S``. A GPU that
fails the check ends the run (:class:`GpuStopped`, exit 4) before more faults land on it.

What may fault or hang runs alone on its GPU, machine-wide: every ``repro`` process of this
user takes the GPU's lock file in :func:`machine_locks` around its launches
(``suite.engine.launch.gpu_turn``); a launch that raised keeps it until its process has
ended, and the parent checks the GPU before the next launch there (:func:`check_after`). A
rerun of a failed launch (a sanitizer's, a ptxas relaunch) and a gate's GPU child hold the
lock from their first launch to their exit, then the check; a program that takes no turns
of its own (a report's ``repro.py`` run by itself) runs under :func:`alone_on`: the lock held
from its start to its end, then the check. Every hold can be logged
(``suite.engine.gpu_lock_log``).
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from suite.engine.gpu_lock_log import GpuLock
from suite.errors import HarnessError

#: A driver that hangs on a new context counts as a GPU that stopped answering.
CHECK_TIMEOUT_S = 60.0

_PROBE = """
import ctypes, sys
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError as exc:
    sys.exit(f"no CUDA driver: {exc}")
device, context = ctypes.c_int(), ctypes.c_void_p()
steps = (
    ("cuInit", (0,)),
    ("cuDeviceGet", (ctypes.byref(device), 0)),
    ("cuDevicePrimaryCtxRetain", (ctypes.byref(context), device)),
    ("cuCtxSetCurrent", (context,)),
    ("cuCtxSynchronize", ()),
)
for name, arguments in steps:
    code = getattr(cuda, name)(*arguments)
    if code:
        text = ctypes.c_char_p()
        cuda.cuGetErrorName(code, ctypes.byref(text))
        sys.exit(f"{name} returned {(text.value or b'error %d' % code).decode()}")
cuda.cuDevicePrimaryCtxRelease(device)
"""


class GpuStopped(HarnessError):
    """The GPU stopped giving new processes a CUDA context: nothing run on it now says
    anything about a case (a harness error: exit 4, the finished cases kept)."""


def machine_locks_path() -> Path:
    return Path(tempfile.gettempdir()) / f"repro-gpu-locks-{os.getuid()}"


def machine_locks() -> Path | None:
    """``$TMPDIR/repro-gpu-locks-<uid>``, made if need be (never removed: a lock file is
    empty, and a lock dies with its holder); None when it is not this user's own folder."""
    folder = machine_locks_path()
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        status = folder.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.getuid():
        return None
    return folder


def first_visible_gpu() -> str:
    """The GPU a program that names none launches on (a ``CUDA_VISIBLE_DEVICES`` id): the
    first visible one."""
    return (os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0].strip()


def machine_lock(gpu: str) -> Path | None:
    """The machine-wide lock file of ``gpu`` (a ``CUDA_VISIBLE_DEVICES`` id), None without
    the folder of this user's locks."""
    folder = machine_locks()
    return folder / f"gpu-{gpu}.lock" if folder is not None else None


@contextlib.contextmanager
def alone_on(gpu: str, who: str = "a process alone") -> Iterator[None]:
    """Run a process that may fault or hang on ``gpu`` (a ``CUDA_VISIBLE_DEVICES`` id) alone:
    holding the GPU's machine-wide lock (no launch of another ``repro`` process there
    meanwhile) and, when it has ended (or raised: a fault, say), still holding it, check that
    a fresh process makes a CUDA context there; :class:`GpuStopped` when none does. ``who``
    names the holder in the lock log (``suite.engine.gpu_lock_log``)."""
    path = machine_lock(gpu)
    # Without the folder nobody else's lock could be shared either: the process just runs.
    lock = GpuLock(path, who) if path is not None else None
    try:
        try:
            yield
        except Exception:
            _stop_unless_answering(gpu)  # the GPU's state first: it explains the error
            raise
        _stop_unless_answering(gpu)
    finally:
        if lock is not None:
            lock.release()


def check_after(gpu: str, lock_path: Path | None) -> None:
    """After a process that may have faulted on ``gpu`` has ended: holding the GPU's lock
    (``lock_path``, if any: no launch there meanwhile), a fresh process makes a CUDA context
    there; :class:`GpuStopped` when none does."""
    lock = GpuLock(lock_path, "context check") if lock_path is not None else None
    try:
        _stop_unless_answering(gpu)
    finally:
        if lock is not None:
            lock.release()


def _stop_unless_answering(gpu: str) -> None:
    reason = context_check(gpu)
    if reason:
        raise GpuStopped(reason)


def context_check(gpu: str, python: str = sys.executable) -> str:
    """``""`` when a fresh process makes a CUDA context on ``gpu`` (a ``CUDA_VISIBLE_DEVICES``
    id), else why it did not."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": gpu}
    try:
        ran = subprocess.run(
            [python, "-I", "-S", "-c", _PROBE],
            env=env,
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"a fresh process made no CUDA context on GPU {gpu} in {CHECK_TIMEOUT_S:.0f} s"
    if ran.returncode == 0:
        return ""
    said = (ran.stderr.strip().splitlines() or [f"exit {ran.returncode}"])[-1]
    return f"a fresh process made no CUDA context on GPU {gpu}: {said}"


def main() -> int:
    """``python -m suite.engine.gpu_check [GPU]``: exit 0 when the GPU makes a context."""
    reason = context_check(sys.argv[1] if len(sys.argv) > 1 else "0")
    print(reason or "a fresh process made a CUDA context")
    return 1 if reason else 0


if __name__ == "__main__":
    sys.exit(main())
