"""The kernel's boundary around each case, where this machine lets the suite draw one.

A process tree is not a boundary: a case's daemon that double-forks, clears its
``PR_SET_CHILD_SUBREAPER`` and ``PR_SET_PDEATHSIG``, overwrites its environment block and
kills its keeper leaves it, and the sum of resident sizes over a tree neither sees a ``memfd``
nor counts a page shared by 300 forked children once. A cgroup is one: every process a case
starts is born in it and cannot leave it (without write access to another cgroup), its
``cgroup.kill`` ends them all, and its memory charge holds ``memfd``, ``/dev/shm`` and
anonymous pages, each page once however many processes share it.

Each case gets its own cgroup (``repro-<pid>-<hex>``, under the cgroup this process runs in)
where the machine allows, detected once per process by making one and moving a process (a
short-lived interpreter) into it:

- the **kill boundary**: a cgroup v2 folder with ``cgroup.kill`` (Linux 5.14); else the
  process tree (subreapers, the keeper, the token hunt: ``suite.engine.isolate``);
- the **memory measure**: anonymous plus shared-memory bytes charged to the case's cgroup
  (``memory.stat`` of cgroup v2, else of the v1 memory controller); else the proportional set
  size (PSS, ``/proc/PID/smaps_rollup``) summed over the case's tree plus each ``memfd`` or
  ``/dev/shm`` object its processes hold open but do not map (mapped ones are in the PSS).
  Page cache is never counted: the kernel takes it back before it runs out.

The case's first process joins its cgroups itself, before it starts anything
(``suite.engine.template.join_cgroups``: the keeper of a fresh process, or a warm template's
forked case), told where by ``CGROUP_VARIABLE``. ``REPRO_BOUNDARY=process-tree`` turns the
cgroups off (the fallback, as on a machine that allows none). ``repro doctor`` says which
boundary is in force and why a better one is not.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import psutil

from suite.engine.template import CGROUP_VARIABLE
from suite.files import process_alive

__all__ = [
    "CGROUP_VARIABLE",
    "Boundary",
    "CaseGroup",
    "Kill",
    "Memory",
    "case_boundary",
    "tree_memory",
]

FORCE_VARIABLE = "REPRO_BOUNDARY"
FALLBACK = "process-tree"
PREFIX = "repro-"
# How long a killed cgroup may take to empty before its folder is left to the next run.
_EMPTY_PATIENCE_S = 5.0


class Kill(enum.Enum):
    CGROUP = "cgroup"  # cgroup.kill ends every process the case started
    PROCESS_TREE = "process-tree"  # subreapers, the keeper and the token hunt


class Memory(enum.Enum):
    CGROUP_V2 = "cgroup-v2"  # memory.stat of the case's cgroup v2: anon + shmem
    CGROUP_V1 = "cgroup-v1"  # memory.stat of the case's v1 memory cgroup: rss + shmem
    PSS = "pss"  # PSS over the tree, plus memfd and /dev/shm objects held open


@dataclass(frozen=True)
class Boundary:
    """What this machine lets the suite put around a case, and why not more."""

    kill: Kill
    memory: Memory
    kill_base: str  # the cgroup v2 folder each case's cgroup is made under ("" none)
    memory_base: str  # the cgroup folder whose memory controller charges a case ("" none)
    why_not: tuple[str, ...]  # why a better boundary is not in force

    def describe(self) -> str:
        kill = (
            f"cgroup (cgroup.kill, a cgroup per case under {self.kill_base})"
            if self.kill is Kill.CGROUP
            else "process tree (subreapers, the keeper, the token hunt)"
        )
        memory = {
            Memory.CGROUP_V2: f"cgroup v2 charge (anon + shmem) under {self.memory_base}",
            Memory.CGROUP_V1: f"cgroup v1 memory charge (rss + shmem) under {self.memory_base}",
            Memory.PSS: "PSS of the process tree + memfd and /dev/shm objects held open",
        }[self.memory]
        return f"kill: {kill}; memory cap: {memory}"


def _mounts() -> tuple[tuple[str, str] | None, tuple[str, str] | None]:
    """(mount point, root) of the cgroup v2 hierarchy and of the v1 memory hierarchy."""
    unified = memory = None
    with contextlib.suppress(OSError), open("/proc/self/mountinfo") as info:
        for line in info:
            ours, _, theirs = line.partition(" - ")
            fields, (fstype, _source, options) = ours.split(), theirs.split()[:3]
            if fstype == "cgroup2" and unified is None:
                unified = (fields[4], fields[3])
            elif fstype == "cgroup" and "memory" in options.split(",") and memory is None:
                memory = (fields[4], fields[3])
    return unified, memory


def _own_cgroups() -> tuple[str | None, str | None]:
    """This process's cgroup path in the v2 hierarchy and in the v1 memory hierarchy."""
    unified = memory = None
    with contextlib.suppress(OSError), open("/proc/self/cgroup") as lines:
        for line in lines:
            number, controllers, path = line.rstrip("\n").split(":", 2)
            if number == "0" and not controllers:
                unified = path
            elif "memory" in controllers.split(","):
                memory = path
    return unified, memory


def _folder(mount: tuple[str, str], path: str) -> Path:
    point, root = mount
    if root != "/" and path.startswith(root):
        path = path[len(root) :]
    return Path(point) / path.lstrip("/")


def _try_make(base: Path, needs: tuple[str, ...]) -> str:
    """Why a case's cgroup cannot be made under ``base`` with the files ``needs`` ("": it can)."""
    probe = base / f"{PREFIX}{os.getpid()}-probe-{uuid.uuid4().hex[:8]}"
    try:
        probe.mkdir()
    except OSError as exc:
        return f"cannot make a cgroup under {base}: {exc.strerror}"
    try:
        missing = [name for name in needs if not (probe / name).exists()]
        if missing:
            return f"a cgroup under {base} has no {', '.join(missing)}"
        return _try_join(probe, base)
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


def _try_join(probe: Path, base: Path) -> str:
    """Why a process cannot be moved into ``probe`` ("": it can), tried with a real one."""
    sleeper = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", "import time; time.sleep(60)"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        (probe / "cgroup.procs").write_text(str(sleeper.pid))
    except OSError as exc:
        return f"cannot move a process into a cgroup under {base}: {exc.strerror}"
    finally:
        sleeper.kill()
        sleeper.wait()
    return ""


@functools.cache
def case_boundary() -> Boundary:
    """The boundary in force for this process's cases (detected once; stale cgroups of this
    tool's dead processes are removed on the way)."""
    if os.environ.get(FORCE_VARIABLE) == FALLBACK:
        return Boundary(
            Kill.PROCESS_TREE, Memory.PSS, "", "", (f"{FORCE_VARIABLE}={FALLBACK} is set",)
        )
    why_not: list[str] = []
    (unified_mount, memory_mount), (unified_path, memory_path) = _mounts(), _own_cgroups()
    kill, kill_base, memory, memory_base = Kill.PROCESS_TREE, "", Memory.PSS, ""
    if unified_mount is None or unified_path is None:
        why_not.append("no cgroup v2 hierarchy is mounted for this process")
    else:
        base = _folder(unified_mount, unified_path)
        why = _try_make(base, ("cgroup.kill",))
        if why:
            why_not.append(why)
        else:
            kill, kill_base = Kill.CGROUP, str(base)
            _remove_stale(base)
            if _try_make(base, ("memory.stat",)) == "":
                memory, memory_base = Memory.CGROUP_V2, str(base)
            else:
                why_not.append(f"the memory controller is not enabled for the cgroups under {base}")
    if memory is Memory.PSS:
        if memory_mount is None or memory_path is None:
            why_not.append("no cgroup v1 memory hierarchy is mounted for this process")
        else:
            base = _folder(memory_mount, memory_path)
            why = _try_make(base, ("memory.stat",))
            if why:
                why_not.append(why)
            else:
                memory, memory_base = Memory.CGROUP_V1, str(base)
                _remove_stale(base)
    return Boundary(kill, memory, kill_base, memory_base, tuple(why_not))


@dataclass(frozen=True)
class CaseGroup:
    """One case's cgroups (a v2 one to kill by, a memory one to measure by: one folder when
    the v2 hierarchy does both)."""

    folders: tuple[Path, ...]
    killable: Path | None  # the folder with cgroup.kill
    measured: Path | None  # the folder whose memory.stat charges the case
    memory: Memory

    @classmethod
    def make(cls) -> CaseGroup | None:
        """A fresh cgroup for one case under the boundary in force (None: no cgroup here, or
        making one failed now: the process tree is the boundary)."""
        found = case_boundary()
        name = f"{PREFIX}{os.getpid()}-{uuid.uuid4().hex[:12]}"
        bases = dict.fromkeys(filter(None, (found.kill_base, found.memory_base)))
        folders = tuple(Path(base) / name for base in bases)
        made: list[Path] = []
        try:
            for folder in folders:
                folder.mkdir()
                made.append(folder)
        except OSError:
            for folder in made:
                with contextlib.suppress(OSError):
                    folder.rmdir()
            return None
        if not folders:
            return None
        killable = Path(found.kill_base) / name if found.kill is Kill.CGROUP else None
        measured = Path(found.memory_base) / name if found.memory is not Memory.PSS else None
        return cls(folders, killable, measured, found.memory)

    def join_value(self) -> str:
        """The value of ``CGROUP_VARIABLE`` for the case's first process."""
        return os.pathsep.join(str(folder) for folder in self.folders)

    def charge(self) -> int | None:
        """Bytes of anonymous and shared memory charged to the case (None: not measured here)."""
        if self.measured is None or not _pids(self.measured):
            return None  # nothing joined it (a move the machine refused): measure the tree
        try:
            stat = dict(
                line.split() for line in (self.measured / "memory.stat").read_text().splitlines()
            )
        except (OSError, ValueError):
            return None
        if self.memory is Memory.CGROUP_V2:
            return int(stat.get("anon", 0)) + int(stat.get("shmem", 0))
        return int(stat.get("total_rss", stat.get("rss", 0))) + int(
            stat.get("total_shmem", stat.get("shmem", 0))
        )

    def end(self) -> int:
        """Kill every process left in the case's cgroups, then remove them; how many it killed."""
        return _end(self.folders, self.killable)


def _pids(folder: Path) -> list[int]:
    try:
        return [int(pid) for pid in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _end(folders: tuple[Path, ...], killable: Path | None) -> int:
    found = {pid for folder in folders for pid in _pids(folder)}
    if killable is not None:
        with contextlib.suppress(OSError):
            (killable / "cgroup.kill").write_text("1")
    deadline = time.monotonic() + _EMPTY_PATIENCE_S
    for folder in folders:
        while True:
            # A v1 memory cgroup has no cgroup.kill: each process in it, until none is left.
            left = _pids(folder)
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            found.update(left)
            with contextlib.suppress(OSError):
                folder.rmdir()
                break
            if time.monotonic() > deadline or not folder.exists():
                break
            time.sleep(0.01)
    return len(found)


def _remove_stale(base: Path) -> None:
    """End and remove the cgroups this tool's processes made under ``base`` and left when
    they died (SIGKILLed): named ``repro-<pid>-...`` with a pid no longer alive."""
    with contextlib.suppress(OSError):
        for folder in base.iterdir():
            owner = folder.name.removeprefix(PREFIX).split("-")[0]
            if folder.name.startswith(PREFIX) and owner.isdigit() and not process_alive(int(owner)):
                _end((folder,), folder if (folder / "cgroup.kill").exists() else None)


def tree_memory(pid: int) -> int:
    """The memory a process tree holds, where no cgroup measures it: the PSS of each process
    (a page shared by N processes counts 1/N in each) plus every ``memfd`` and ``/dev/shm``
    object a process holds open that none maps (a mapped one is in the PSS already)."""
    try:
        root = psutil.Process(pid)
        pids = [pid, *(child.pid for child in root.children(recursive=True))]
    except psutil.Error:
        return 0
    total, held, mapped = 0, {}, set()
    for member in pids:
        total += _pss(member)
        mapped |= _shared_mapped(member)
        held.update(_shared_held(member))
    return total + sum(size for key, size in held.items() if key not in mapped)


def _is_shared_object(path: str) -> bool:
    return path.startswith(("/memfd:", "/dev/shm/"))


def _pss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as rollup:
            for line in rollup:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) << 10
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _shared_held(pid: int) -> dict[tuple[int, int], int]:
    """(device, inode) -> allocated bytes of each memfd or /dev/shm object ``pid`` holds open."""
    held = {}
    folder = f"/proc/{pid}/fd"
    with contextlib.suppress(OSError):
        for fd in os.listdir(folder):
            with contextlib.suppress(OSError):
                if _is_shared_object(os.readlink(f"{folder}/{fd}")):
                    stat = os.stat(f"{folder}/{fd}")
                    held[(stat.st_dev, stat.st_ino)] = stat.st_blocks * 512
    return held


def _shared_mapped(pid: int) -> set[tuple[int, int]]:
    """(device, inode) of each memfd or /dev/shm object ``pid`` maps."""
    mapped = set()
    with contextlib.suppress(OSError), open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and _is_shared_object(parts[5]):
                major, minor = (int(part, 16) for part in parts[3].split(":"))
                mapped.add((os.makedev(major, minor), int(parts[4])))
    return mapped
