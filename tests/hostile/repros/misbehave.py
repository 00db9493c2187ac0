"""One reproducer, one fault per config: every case's misbehaviour must stay that case's.

HOSTILE_PIDS names a file where every process the case starts writes its pid, so a test
can check that none survives. Nothing here compiles a Triton kernel.
"""

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time

from suite import Choice, Compiled, Reproducer

FAULTS = (
    "ok",
    "fork-escape",
    "double-fork",
    "delete-own-folder",
    "link-own-folder",
    "secrets",
    "markup",
    "garbage-events",
    "segv",
    "abort",
    "exit-7",
    "kill-self",
    "flood",
    "oom",
    "close-streams",
    "many-children",
    "hang",
)
# What the "oom" fault takes and keeps: well past the 1 GiB cap the tests and the probe set,
# far below a machine's memory.
HOARD_MIB = 3072
# Built at run time, so that this file's own text (which a run keeps, to load it again)
# holds none of them: only what the case prints and raises does.
SECRETS = tuple(
    "".join(parts)
    for parts in (
        ("password=", "hunter2", "-lowercase"),
        ("Authorization: Bearer ", "abcdefghijklmnop", "0123456789"),
        ("https://alice:", "s3cr3t-in-url", "@example.com/repo.git"),
        ("aws_secret_access_key=", "wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY"),
        ("GITHUB_TOKEN=", "ghp_", "0123456789abcdefghijklmnopqrstuvwxyzAB"),
    )
)

REPRO = Reproducer(
    id="hostile-misbehave",
    title="a reproducer that misbehaves in every way the engine must survive",
    family="hostile",
    params=(Choice("fault", FAULTS), Choice("tag", (0, 1, 2, 3, 4, 5, 6, 7))),
    configs={
        "faults": [{"fault": f, "tag": 0} for f in FAULTS if f != "hang"],
        "slow": [{"fault": "ok", "tag": t} for t in range(8)],
        "hang": [{"fault": "hang", "tag": 0}],
    },
    targets=("sm_90",),
    label="{fault}-{tag}",
)


def _note_pid() -> None:
    path = os.environ.get("HOSTILE_PIDS")
    if path:
        with open(path, "a") as handle:
            handle.write(f"{os.getpid()}\n")


def _escape(double: bool) -> None:
    """A descendant that leaves the session and never execs: no token in /proc to find."""
    if os.fork() == 0:
        os.setsid()
        if double and os.fork() != 0:
            os._exit(0)
        _note_pid()
        while True:
            time.sleep(1)


@REPRO.compile
def compile_case(case):
    fault = case["fault"]
    if os.environ.get("HOSTILE_SLEEP"):
        time.sleep(float(os.environ["HOSTILE_SLEEP"]))
    if fault in ("fork-escape", "double-fork"):
        _escape(double=fault == "double-fork")
        time.sleep(0.2)
    if fault == "delete-own-folder":
        shutil.rmtree(os.getcwd())
    if fault == "link-own-folder":
        here = os.getcwd()
        shutil.rmtree(here)
        os.symlink(os.path.dirname(os.path.dirname(here)), here)
    if fault == "secrets":
        print(" ".join(SECRETS), file=sys.stderr)
        raise RuntimeError("leaked: " + " | ".join(SECRETS))
    if fault == "markup":
        raise RuntimeError("`` ` <details open><img src=x onerror=alert(1)></details> ``")
    if fault == "garbage-events":
        report = os.path.join(os.getcwd(), "events.jsonl")
        with open(report, "a") as handle:
            handle.write('[1, 2]\n{"event": 3}\n{"event": "phase"}\n"x"\n')
    if fault == "segv":
        ctypes.string_at(0)
    if fault == "abort":
        os.abort()
    if fault == "exit-7":
        os._exit(7)
    if fault == "kill-self":
        os.kill(os.getpid(), signal.SIGKILL)
    if fault == "flood":
        for _ in range(256):
            sys.stdout.buffer.write(b"y" * (1 << 20))
        sys.stdout.flush()
    if fault == "oom":
        # Past any cap a test sets (1 GiB), then it holds what it took: however late the
        # supervisor looks, it finds the hoard over the cap. An endless hoard would meet the
        # kernel's OOM killer, or stall a loaded machine, before the cap on a busy box.
        hoard = [b"\1" * (1 << 24) for _ in range(HOARD_MIB // 16)]
        while True:
            time.sleep(1)
        return Compiled(shared_bytes=len(hoard))
    if fault == "close-streams":
        os.close(1)
        os.close(2)
        raise RuntimeError("nobody hears this")
    if fault == "many-children":
        for _ in range(20):
            subprocess.Popen(["sleep", "1000.125"], start_new_session=True)
    if fault == "hang":
        _note_pid()
        _escape(double=False)
        while True:
            time.sleep(1)
    return Compiled(shared_bytes=1024)
