"""The warm template: imports once, then forks one isolated child per case.

Started by ``suite.engine.warm`` as the ``warm-template`` child (``suite.children``) under the
interpreter whose Triton runs the cases; it reads JSON lines on stdin and answers on a dedicated
pipe (``PROTOCOL_FD_VARIABLE``), never on stdout: a warm-up compile, a reproducer file or a ptxas
it starts may print anything there. It is single-threaded (forking a threaded process can
copy a held lock into the child) and never touches CUDA: a process forked after CUDA is
initialized cannot use the GPU. It reaps its children and reports each exit status,
since only a parent can wait for a process.

Nothing a case starts outlives it: the template and every case are child subreapers, so a
descendant that escapes with ``setsid`` or a double fork (and never execs, so no token in
its environment says where it came from) is adopted by its case while the case lives and
by the template once the case is gone; the template kills what it adopts before it reports
the case's exit, and kills its whole tree when its stdin closes (the run ended or died).
A warm-up compile that fails is reported in the ready message: cases of that target then
run as fresh interpreters.

Run as ``python -I -S template.py --keep PARENT FD ARGV...`` the same file is the keeper of one
fresh-interpreter case (``suite.engine.isolate.run_isolated``): a child subreaper that runs
``ARGV`` as its child and exits as it did. A SIGKILLed run cannot clean up after itself, so
the keeper watches it instead: it gets SIGTERM when its parent dies
(``prctl(PR_SET_PDEATHSIG)``), and its child gets SIGKILL when the keeper dies; either way,
and whenever the case ends, the keeper kills every process below it before it exits.

Standard library and triton only, like ``suite.engine.child``.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import os
import select
import shutil
import signal
import sys
import time
import traceback
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from suite.engine.protocol import Fork, TemplateMessage

PRELOAD_VARIABLE = "REPRO_PRELOAD"
WARM_UP_VARIABLE = "REPRO_WARM_UP"
PROTOCOL_FD_VARIABLE = "REPRO_PROTOCOL_FD"
FOLDER_VARIABLE = "REPRO_TEMPLATE_FOLDER"
#: The cgroup folders (``os.pathsep``-separated) a case's first process joins before it starts
#: anything (``suite.engine.boundary``).
CGROUP_VARIABLE = "REPRO_CASE_CGROUPS"
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
KEEP_FLAG = "--keep"
# A fork bomb adopted round after round still ends: kill rounds for this long, then give up.
_KILL_PATIENCE_S = 10.0
#: The capture hook's tee (``suite/capture/site/repro_capture_tee.py``): an orphan the keeper
#: lets end by itself, for up to ``_TEE_PATIENCE_S``, before it kills what is left. It copies
#: out what a process that died inside a compile wrote, then ends when its pipes close.
HOOK_TEE = "repro_capture_tee.py"
_TEE_PATIENCE_S = 2.0


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def join_cgroups() -> None:
    """Move this process into the cgroups its case was given (``CGROUP_VARIABLE``, removed
    from the environment): everything it starts from now on is born in them, and the kernel
    keeps it there. A cgroup it cannot join leaves the process tree as the boundary."""
    for folder in filter(None, os.environ.pop(CGROUP_VARIABLE, "").split(os.pathsep)):
        with contextlib.suppress(OSError), open(os.path.join(folder, "cgroup.procs"), "w") as procs:
            procs.write(str(os.getpid()))


def _tree() -> dict[int, list[int]]:
    """Every process's children, by parent pid (one scan of /proc). Zombies stay in: a
    process whose first thread has ended shows as a zombie while its other threads still
    hold its children, which are not orphans yet."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def _below(tree: dict[int, list[int]], roots: list[int]) -> list[int]:
    """``roots`` and all their descendants in ``tree``."""
    found, queue = [], list(roots)
    while queue:
        pid = queue.pop()
        found.append(pid)
        queue.extend(tree.get(pid, ()))
    return found


def _let_tees_finish() -> None:
    """Wait (bounded) for the capture hook's tees below this process to end by themselves."""
    deadline = time.monotonic() + _TEE_PATIENCE_S
    while time.monotonic() < deadline:
        _reap(set(), {})  # a tee that has ended is reaped, not killed (nor counted) later
        tree = _tree()
        if not any(_is_tee(pid) for pid in _below(tree, tree.get(os.getpid(), []))[:256]):
            return
        time.sleep(0.005)


def _is_tee(pid: int) -> bool:
    """A tee, or a process on its way out (its command line is gone: a tee that just ended
    among them, which must be reaped rather than killed and counted)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            text = cmdline.read()
    except OSError:
        return False
    return not text or HOOK_TEE.encode() in text


def _kill_adopted(cases: set[int], exited: dict[int, int]) -> int:
    """Kill this process's children that are not cases (orphans it adopted as a subreaper),
    with everything below them, until none is left. Cases that end meanwhile are reaped into
    ``exited``; with no cases, everything below this process dies."""
    killed: set[int] = set()
    deadline = time.monotonic() + _KILL_PATIENCE_S
    while time.monotonic() < deadline:
        tree = _tree()
        adopted = [pid for pid in tree.get(os.getpid(), ()) if pid not in cases]
        if not adopted:
            break
        # A killed process takes a moment to die; its orphans come here on a later round.
        for pid in _below(tree, adopted):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        _reap(cases, exited)
        time.sleep(0.005)
    return len(killed)


def _reap(cases: set[int], exited: dict[int, int]) -> None:
    """Reap every child that has ended; the exit codes of cases go into ``exited``."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid in cases:
            cases.discard(pid)
            exited[pid] = os.waitstatus_to_exitcode(status)


def _preload() -> list[int]:
    """Import what every case needs and warm up each target; the targets whose warm-up failed."""
    import suite.engine.child

    with contextlib.suppress(ImportError):
        import triton
        import triton.compiler  # noqa: F401

        import suite.tritonc
    # Before any reproducer runs here: the forks inherit Triton's hash of itself.
    from suite.engine.triton_key import recall, remember

    remember()
    recall()
    for entry in filter(None, os.environ.get(PRELOAD_VARIABLE, "").split(os.pathsep)):
        with contextlib.suppress(Exception):
            if entry.endswith(".py"):
                suite.engine.child.load_reproducers({"path": entry})
            else:
                importlib.import_module(entry)
    failed = []
    for arch in filter(None, os.environ.get(WARM_UP_VARIABLE, "").split(",")):
        try:
            import suite.tritonc

            suite.tritonc.warm_up(int(arch))
        except BaseException:
            traceback.print_exc()
            failed.append(int(arch))
    return failed


def _case(request: Fork, protocol: int) -> int:
    """In the forked child: become an isolated case and run it."""
    os.setsid()
    os.close(protocol)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.environ.clear()
    os.environ.update(request.env)
    join_cgroups()
    import tempfile

    tempfile.tempdir = None  # the case's own TMPDIR, not the one the template looked up
    os.chdir(request.cwd)
    for fd, fifo in ((1, request.stdout), (2, request.stderr)):
        os.dup2(os.open(fifo, os.O_WRONLY), fd)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    from suite.engine import child

    return child.main([request.spec])


def serve() -> None:
    children: set[int] = set()
    try:
        _serve(children)
    finally:
        # The run is over, or its process died (even while this one started: the ready
        # message then meets a closed pipe): nothing started here may stay.
        for pid in list(children):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        _kill_adopted(set(), {})
        # A run that was SIGKILLed leaves its FIFO folder to no one else.
        shutil.rmtree(os.environ.get(FOLDER_VARIABLE) or "/nonexistent", ignore_errors=True)


def _serve(children: set[int]) -> None:
    # Imported here: the keeper runs this file alone (``-I -S``), without the package.
    from suite.engine.protocol import Exited, Fork, Forked, Ready, read_request

    protocol = int(os.environ.pop(PROTOCOL_FD_VARIABLE))
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    failed = _preload()
    # Keep the children's garbage collector off the inherited heap: touching it
    # would copy every page on write.
    gc.collect()
    gc.freeze()
    out = os.fdopen(protocol, "wb", closefd=False)

    def answer(message: TemplateMessage) -> None:
        out.write(message.line().encode())
        out.flush()

    answer(Ready(os.getpid(), failed))
    stdin = sys.stdin.fileno()
    # A child's exit wakes the loop at once: SIGCHLD writes a byte to this pipe.
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    buffer = b""
    while True:
        readable, _, _ = select.select([stdin, wake_read], [], [], 1.0)
        if wake_read in readable:
            os.read(wake_read, 4096)
        if stdin in readable:
            chunk = os.read(stdin, 65536)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                request = read_request(line)
                if not isinstance(request, Fork):
                    answer(request)
                    continue
                pid = os.fork()
                if pid == 0:
                    code = 1
                    try:
                        code = _case(request, protocol)
                    except BaseException:
                        traceback.print_exc()
                    finally:
                        with contextlib.suppress(Exception):
                            sys.stdout.flush()
                            sys.stderr.flush()
                        os._exit(code)
                children.add(pid)
                answer(Forked(request.id, pid))
        exited: dict[int, int] = {}
        _reap(children, exited)
        if exited:
            # The orphans of a case that ended are ours now: none outlives its case's report.
            _kill_adopted(children, exited)
        for pid, code in exited.items():
            answer(Exited(pid, code))


def keeper_argv(python: str, argv: list[str], report_fd: int) -> list[str]:
    """``argv`` run under a keeper (see the module's docstring), started by this process; the
    keeper writes to ``report_fd`` (to be passed to it) the case's pid once it started it,
    then, as it exits, how many processes it killed below the case: ``"PID KILLED"``
    (:func:`keeper_report`)."""
    here = os.path.abspath(__file__)
    return [python, "-I", "-S", here, KEEP_FLAG, str(os.getpid()), str(report_fd), *argv]


def keep(parent: int, report: int, argv: list[str]) -> None:
    """Run ``argv`` as a child; exit as it did, or with 137 once ``parent`` is gone, after
    killing every process below this one (never returns)."""
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    join_cgroups()
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    # A terminal's Ctrl-C reaches the keeper's group (``repro capture``): it is the case's.
    interrupt = signal.SIG_IGN if signal.getsignal(signal.SIGINT) == signal.SIG_IGN else None
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    orphaned: list[int] = []
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    signal.signal(signal.SIGTERM, lambda signum, frame: orphaned.append(signum))
    _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # it died before the line above: no signal will come
        orphaned.append(signal.SIGTERM)
    status: int | None = None
    case = 0  # none started
    if not orphaned:
        me = os.getpid()
        case = os.fork()
        if case == 0:
            _exec_case(argv, keeper=me, fds=(wake_read, wake_write, report), interrupt=interrupt)
    with contextlib.suppress(OSError):
        os.write(report, f"{case} ".encode())
    while not orphaned and status is None:
        select.select([wake_read], [], [])
        with contextlib.suppress(OSError):
            os.read(wake_read, 4096)
        status = _reap_case(case)
    _let_tees_finish()
    killed = _kill_adopted(set(), {})
    with contextlib.suppress(OSError):
        os.write(report, str(killed).encode())
    if orphaned or status is None:
        os._exit(137)
    _exit_as(status)


def _exec_case(
    argv: list[str], keeper: int, fds: tuple[int, ...], interrupt: signal.Handlers | None
) -> None:
    """In the keeper's child: die with the keeper, then become ``argv`` (SIGINT ignored only
    if the keeper's parent ignored it)."""
    try:
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, interrupt or signal.SIG_DFL)
        for fd in fds:
            os.close(fd)
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() == keeper:
            os.execvp(argv[0], argv)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.write(2, f"cannot run {argv[0]}: {exc}\n".encode())
        os._exit(127)
    os._exit(137)


def keeper_report(told: bytes) -> tuple[int | None, int]:
    """What a keeper wrote to its report pipe: the case's pid (None if it started none) and
    how many processes it killed below the case (0 when it was killed before it could say)."""
    words = told.split()
    pid = int(words[0]) if words and words[0].isdigit() and int(words[0]) else None
    killed = int(words[1]) if len(words) > 1 and words[1].isdigit() else 0
    return pid, killed


def _reap_case(case: int) -> int | None:
    """Reap every ended child (adopted orphans too); the case's wait status once it ended."""
    status = None
    while True:
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status
        if pid == 0:
            return status
        if pid == case:
            status = code


def _exit_as(status: int) -> None:
    """End this process as the case ended: the same exit code, or the same signal."""
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        _prctl(_PR_SET_DUMPABLE, 0)  # the case's crash is not the keeper's: no second core
        with contextlib.suppress(OSError, ValueError):
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
        os._exit(128 + signum)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def main(argv: list[str]) -> int:
    """The ``warm-template`` child: :func:`serve` until stdin closes."""
    serve()
    return 0


if __name__ == "__main__":  # the keeper, run by file path (:func:`keeper_argv`)
    if sys.argv[1:2] != [KEEP_FLAG]:
        sys.exit(f"usage: python -I -S {os.path.basename(__file__)} {KEEP_FLAG} PARENT FD ARGV...")
    keep(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:])
