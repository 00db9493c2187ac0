"""A case that leaves its process tree for good, and cases the memory cap must judge right.

- ``daemon``: a double-forked daemon that leaves the session, clears its
  ``PR_SET_CHILD_SUBREAPER`` and ``PR_SET_PDEATHSIG``, overwrites its environment block (no
  token to hunt for), appends a line to ``HOSTILE_DAEMON_FILE``, kills the case's keeper (a
  warm case's template), then appends one every 0.1 s for a minute. Its pid goes to
  ``HOSTILE_PIDS``.
- ``memfd`` / ``shm``: 3 GiB written into a ``memfd`` (a ``/dev/shm`` file, named by
  ``HOSTILE_SHM``), held: not in anyone's RSS, still the case's memory.
- ``forks``: 300 idle forked children, alive for 3 s: shared copy-on-write pages, which a sum
  of RSS counts 300 times.

Nothing here compiles a Triton kernel.
"""

import ctypes
import os
import signal
import time

from suite import Choice, Compiled, Reproducer

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
HOARD_MIB = 3072
CHILDREN = 300

REPRO = Reproducer(
    id="hostile-boundary",
    title="a daemon that leaves its process tree; memory a sum of RSS gets wrong",
    family="hostile",
    params=(Choice("fault", ("daemon", "memfd", "shm", "forks")),),
    configs={
        "daemon": [{"fault": "daemon"}],
        "memory": [{"fault": "memfd"}, {"fault": "forks"}],
        "shm": [{"fault": "shm"}],
    },
    targets=("sm_90",),
    label="{fault}",
)


def _wipe_environment() -> None:
    """Overwrite this process's environment block, as /proc/PID/environ shows it."""
    with open("/proc/self/stat", "rb") as stat:
        fields = stat.read().rsplit(b")", 1)[1].split()
    start, end = int(fields[47]), int(fields[48])  # env_start, env_end (fields 50, 51)
    with open("/proc/self/mem", "r+b", buffering=0) as memory:
        memory.seek(start)
        memory.write(b"\0" * (end - start))


def _daemon() -> None:
    mark, pids = os.environ["HOSTILE_DAEMON_FILE"], os.environ["HOSTILE_PIDS"]
    keeper = os.getppid()
    if os.fork() != 0:
        time.sleep(2)  # the daemon kills this process's parent, and with it this process
        return
    os.setsid()
    if os.fork() != 0:
        os._exit(0)
    libc = ctypes.CDLL(None)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
    libc.prctl(_PR_SET_PDEATHSIG, 0, 0, 0, 0)
    _wipe_environment()
    with open(pids, "a") as handle:
        handle.write(f"{os.getpid()}\n")
    # Its first line before the kill: the case ends as its keeper dies, and a daemon that
    # waited for the CPU just after the kill lost to the cgroup's kill and never wrote.
    with open(mark, "a") as handle:
        handle.write("left the tree\n")
    time.sleep(0.2)
    os.kill(keeper, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with open(mark, "a") as handle:
            handle.write("still here\n")
        time.sleep(0.1)
    os._exit(0)


def _hoard(fd: int) -> None:
    chunk = b"\1" * (64 << 20)
    for _ in range(HOARD_MIB // 64):
        os.write(fd, chunk)
    while True:
        time.sleep(1)


def _forks() -> None:
    children = []
    for _ in range(CHILDREN):
        pid = os.fork()
        if pid == 0:
            time.sleep(3)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)


@REPRO.compile
def compile_case(case):
    fault = case["fault"]
    if fault == "daemon":
        _daemon()
    if fault == "memfd":
        _hoard(os.memfd_create("hoard"))
    if fault == "shm":
        _hoard(os.open(os.environ["HOSTILE_SHM"], os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
    if fault == "forks":
        _forks()
    return Compiled(shared_bytes=1024)
