"""The warm template: imports once, then forks one isolated child per case.

Started by ``suite.engine.warm`` as ``python -m suite.engine.template`` under the interpreter
whose Triton runs the cases; it speaks JSON lines on stdin and stdout. It is
single-threaded (forking a threaded process can copy a held lock into the
child) and never touches CUDA: a process forked after CUDA is initialized
cannot use the GPU. It reaps its children and reports each exit status,
since only a parent can wait for a process.

Standard library and triton only, like ``suite.engine.child``.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import select
import signal
import sys
import traceback
from typing import Any

PRELOAD_VARIABLE = "REPRO_PRELOAD"
WARM_UP_VARIABLE = "REPRO_WARM_UP"


def _preload() -> None:
    import suite.engine.child

    with contextlib.suppress(ImportError):
        import triton
        import triton.compiler  # noqa: F401

        import suite.tritonc
    for entry in filter(None, os.environ.get(PRELOAD_VARIABLE, "").split(os.pathsep)):
        with contextlib.suppress(Exception):
            if entry.endswith(".py"):
                suite.engine.child.load_reproducers({"path": entry})
            else:
                importlib.import_module(entry)
    for arch in filter(None, os.environ.get(WARM_UP_VARIABLE, "").split(",")):
        with contextlib.suppress(Exception):
            import suite.tritonc

            suite.tritonc.warm_up(int(arch))


def _case(request: dict[str, Any]) -> int:
    """In the forked child: become an isolated case and run it."""
    os.setsid()
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    for fd, fifo in ((1, request["stdout"]), (2, request["stderr"])):
        os.dup2(os.open(fifo, os.O_WRONLY), fd)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    from suite.engine import child

    return child.main(["suite.engine.child", request["spec"]])


def serve() -> None:
    _preload()
    # Keep the children's garbage collector off the inherited heap: touching it
    # would copy every page on write.
    gc.collect()
    gc.freeze()
    out = sys.stdout
    out.write(json.dumps({"ready": os.getpid()}) + "\n")
    out.flush()
    children: set[int] = set()
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
                request = json.loads(line)
                out.flush()
                pid = os.fork()
                if pid == 0:
                    code = 1
                    try:
                        code = _case(request)
                    except BaseException:
                        traceback.print_exc()
                    finally:
                        with contextlib.suppress(Exception):
                            sys.stdout.flush()
                            sys.stderr.flush()
                        os._exit(code)
                children.add(pid)
                out.write(json.dumps({"id": request["id"], "pid": pid}) + "\n")
                out.flush()
        for pid in list(children):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                children.discard(pid)
                code = os.waitstatus_to_exitcode(status)
                out.write(json.dumps({"exited": pid, "code": code}) + "\n")
                out.flush()


if __name__ == "__main__":
    serve()
