"""An opt-in record of every hold of a GPU's machine-wide lock, and its summary.

What may fault runs alone on its GPU (``suite.engine.gpu_check``), so the lock is where runs
side by side spend their time. With ``REPRO_GPU_LOCK_LOG=PATH`` every process that takes a
GPU's lock (a case's launch, a process run alone, the parent's context check) appends one
JSON line per hold to ``PATH`` (under an flock of its own): who held it, how long it waited
and held it, and why a hold lasted to its process's end. Such a hold is written when it
becomes one (the process may die by a signal, or end without running ``atexit``): its length
is read back as the time to the next hold of the same lock, exact whenever someone was
waiting for it, which is when it matters.

``python -m suite.engine.gpu_lock_log PATH`` prints the holds summed per pytest test
(``PYTEST_CURRENT_TEST``, inherited by every process a test starts) and per kind of holder
(bench/gpu_tests_twice.sh).
"""

from __future__ import annotations

import enum
import fcntl
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import IO

#: Environment knob: the JSON-lines file every hold of a GPU lock is appended to.
LOCK_LOG = "REPRO_GPU_LOCK_LOG"


class HoldEnd(str, enum.Enum):
    """How a hold ended: let go (its length known), or kept until its process ended."""

    RELEASED = "released"
    PROCESS_END = "process end"


@dataclass(frozen=True)
class LockHold:
    """One hold of a GPU's lock file (``lock``: its name). ``who``: the kind of holder (a
    launch, a rerun alone, the context check); ``process``: its command line, which names the
    case; ``asked_at``: the wall clock when it asked; ``held_s``: None for a hold to its
    process's end (``why``)."""

    lock: str
    who: str
    pid: int
    process: str
    test: str
    asked_at: float
    waited_s: float
    held_s: float | None
    until: HoldEnd
    why: str = ""


class GpuLock:
    """A GPU's lock file, taken (waiting as long as it takes) when made; each hold written
    to the log when the log is on."""

    def __init__(self, path: str | os.PathLike[str], who: str) -> None:
        self.path = os.fspath(path)
        self.who = who
        self.asked_at = time.time()
        self.file: IO[str] = open(self.path, "a")  # noqa: SIM115 (closed by release, or the exit)
        fcntl.flock(self.file, fcntl.LOCK_EX)  # released when the file closes, or the holder dies
        self.taken_at = time.time()

    def release(self) -> None:
        self.file.close()
        self._write(time.time() - self.taken_at, HoldEnd.RELEASED)

    def keep_to_exit(self, why: str) -> None:
        """Hold it until this process ends (the file never closed here)."""
        self._write(None, HoldEnd.PROCESS_END, why)

    def _write(self, held_s: float | None, until: HoldEnd, why: str = "") -> None:
        log = os.environ.get(LOCK_LOG)
        if not log:
            return
        hold = LockHold(
            lock=os.path.basename(self.path),
            who=self.who,
            pid=os.getpid(),
            process=" ".join(sys.argv)[:300],
            test=os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0],
            asked_at=round(self.asked_at, 3),
            waited_s=round(self.taken_at - self.asked_at, 3),
            held_s=None if held_s is None else round(held_s, 3),
            until=until,
            why=why,
        )
        line = json.dumps({**asdict(hold), "until": hold.until.value}) + "\n"
        try:
            with open(log, "a", encoding="utf-8") as stream:
                fcntl.flock(stream, fcntl.LOCK_EX)
                stream.write(line)
        except OSError:
            pass  # a record is a measurement: never the reason a launch fails


def read_holds(lines: Iterable[str]) -> list[LockHold]:
    """The holds of a log, in the order they were asked for; a line that is not one is
    skipped (a writer killed mid-line)."""
    holds = []
    for line in lines:
        try:
            record = json.loads(line)
            holds.append(LockHold(**{**record, "until": HoldEnd(record["until"])}))
        except (ValueError, TypeError, KeyError):
            continue
    return sorted(holds, key=lambda h: h.asked_at)


def held_for(holds: Sequence[LockHold]) -> list[float]:
    """How long each of ``holds`` held its lock: a hold to its process's end lasted until the
    next hold of the same lock was taken (``asked_at + waited_s``), or 0 with none after it."""
    lengths = []
    for index, hold in enumerate(holds):
        if hold.held_s is not None:
            lengths.append(hold.held_s)
            continue
        taken = hold.asked_at + hold.waited_s
        later = [h.asked_at + h.waited_s for h in holds[index + 1 :] if h.lock == hold.lock]
        lengths.append(max(0.0, min(later) - taken) if later else 0.0)
    return lengths


def summary(holds: Sequence[LockHold]) -> list[str]:
    """One line per test (the longest holder first), then one per kind of holder."""
    lengths = held_for(holds)
    lines = []
    for key, title in ((lambda h: h.test or "(no test)", "test"), (lambda h: h.who, "holder")):
        held: dict[str, float] = defaultdict(float)
        waited: dict[str, float] = defaultdict(float)
        count: dict[str, int] = defaultdict(int)
        to_exit: dict[str, int] = defaultdict(int)
        for hold, length in zip(holds, lengths, strict=True):
            held[key(hold)] += length
            waited[key(hold)] += hold.waited_s
            count[key(hold)] += 1
            to_exit[key(hold)] += hold.until is HoldEnd.PROCESS_END
        lines.append(f"{'held s':>8} {'waited s':>9} {'holds':>6} {'to exit':>7}  {title}")
        for name in sorted(held, key=held.__getitem__, reverse=True):
            lines.append(
                f"{held[name]:8.1f} {waited[name]:9.1f} {count[name]:6d} {to_exit[name]:7d}  {name}"
            )
        lines.append("")
    return lines


def main(argv: list[str]) -> int:
    """``python -m suite.engine.gpu_lock_log PATH``: the summary of a lock log."""
    with open(argv[1], encoding="utf-8") as stream:
        holds = read_holds(stream)
    print(f"{len(holds)} holds of a GPU lock")
    print("\n".join(summary(holds)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
