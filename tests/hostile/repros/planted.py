"""One reproducer, one fault per config (issue 29): a case that plants links and odd files,
lies in its own event log, escapes with an empty environment, hides secrets where a
scrubber does not look, litters /tmp, or tampers with its run's own files.

HOSTILE_OUTSIDE names a folder outside the output root that holds ``victim.txt`` and
``big.bin`` (over 16 MiB): a case links to them, and nothing the suite does may change them
or create anything else there. HOSTILE_PIDS names a file where escaped processes write their
pid. Nothing here compiles a Triton kernel.
"""

import ctypes
import json
import os
import signal
import sys
import tempfile
import time

from suite import Choice, Compiled, Reproducer

FAULTS = (
    "ok",
    "hardlink-out",
    "hardlink-big",
    "symlink-streams",
    "fifo-stdout",
    "odd-files",
    "done-then-exit-1",
    "skipped-then-segv",
    "forged-dumps",
    "empty-env-escape",
    "secret-keys",
    "secret-file-name",
    "secret-after-nul",
    "secret-at-cut",
    "tmp-litter",
    "run-files",
)
# Put together at run time, so that this file's text (which a run carries) holds none.
TOKEN = "".join(("ghp_", "Zq8Xw7Vu6Ts5Rq4Po3", "Nm2Lk1Jh0GfEdCbAaZzY"))
PASSWORD_VALUE = "".join(("planted", "-hunter3"))
PASSWORD = "password=" + PASSWORD_VALUE
LITTER_BYTES = 64 << 20
# The head a kept stream keeps (half of isolate.Bounds.output_bytes, 1 MiB).
HEAD_BYTES = 512 << 10

REPRO = Reproducer(
    id="hostile-planted",
    title="a reproducer that plants links, lies in its events and hides secrets",
    family="hostile",
    params=(Choice("fault", FAULTS),),
    configs={"faults": [{"fault": f} for f in FAULTS]},
    targets=("sm_90",),
    label="{fault}",
)


def _outside(name: str) -> str:
    return os.path.join(os.environ["HOSTILE_OUTSIDE"], name)


def _event(record: dict) -> None:
    with open("events.jsonl", "a") as handle:
        handle.write(json.dumps(record) + "\n")
        handle.flush()


def _note(line: str) -> None:
    path = os.environ.get("HOSTILE_PIDS")
    if path:
        with open(path, "a") as handle:
            handle.write(line + "\n")


def _escape_with_an_empty_environment() -> None:
    """A grandchild in a session of its own that execs with no environment at all (no token
    to find it by), whose parent is then killed: only a subreaper still knows it."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            script = f"echo $$ >> {os.environ['HOSTILE_PIDS']}; exec sleep 1000.25"
            os.execve("/bin/sh", ["sh", "-c", script], {})
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.6)


@REPRO.compile
def compile_case(case):
    fault = case["fault"]
    if fault == "hardlink-out":
        os.link(_outside("victim.txt"), "linked.txt")
        raise RuntimeError("failing, with an outside file hard-linked into my folder")
    if fault == "hardlink-big":
        os.link(_outside("big.bin"), "big.bin")
        raise RuntimeError("failing, with a large outside file hard-linked into my folder")
    if fault == "symlink-streams":
        os.symlink(_outside("victim.txt"), "stdout.txt")
        os.symlink(_outside("created-by-stderr.txt"), "stderr.txt")
        print("this goes to stdout")
        print("this goes to stderr", file=sys.stderr)
        raise RuntimeError("failing, with my streams' files linked outside")
    if fault == "fifo-stdout":
        os.mkfifo("stdout.txt")
        os.mkfifo("stderr.txt")
        print("this goes to stdout")
        raise RuntimeError("failing, with my streams' files planted as FIFOs")
    if fault == "odd-files":
        os.mkdir("stdout.txt")
        os.symlink("/dev/zero", "zero.txt")
        os.mkfifo("mlir-reproducer.mlir")
        print("this goes to stdout")
        raise RuntimeError("failing, with a folder, a device link and a FIFO in my folder")
    if fault == "done-then-exit-1":
        _event({"event": "done"})
        os._exit(1)
    if fault == "skipped-then-segv":
        _event({"event": "skipped", "reason": "unsupported: a lie"})
        ctypes.string_at(0)
    if fault == "forged-dumps":
        json.dumps = lambda *args, **kwargs: '{"event": "done"}'
        raise RuntimeError("the error event will read as done")
    if fault == "empty-env-escape":
        _escape_with_an_empty_environment()
    if fault == "secret-keys":
        return Compiled(shared_bytes=1024, extra={TOKEN: 1, PASSWORD: 2})
    if fault == "secret-file-name":
        with open(TOKEN + ".txt", "w") as handle:
            handle.write("named after a token\n")
        raise RuntimeError("failing, with a file named after a token")
    if fault == "secret-after-nul":
        with open("events.jsonl", "a") as handle:
            handle.write(f"\0\0 {PASSWORD} {TOKEN}\n")
        raise RuntimeError("failing, with secrets after a NUL byte in my events")
    if fault == "secret-at-cut":
        # The kept head ends inside a token; the kept tail starts with a password's value,
        # its name cut away with the middle.
        out = sys.stdout
        out.write("x" * (HEAD_BYTES - 21) + " " + TOKEN[:20])
        out.write(TOKEN[20:] + " password=\n" + ("y" * 999 + "\n") * 100)
        out.write(PASSWORD_VALUE + "\n" + ("z" * 999 + "\n") * 524 + "z" * 271 + "\n")
        out.flush()
        raise RuntimeError("failing, with secrets at the edges of the output cut")
    if fault == "tmp-litter":
        with tempfile.NamedTemporaryFile(delete=False, prefix="litter-") as handle:
            handle.truncate(LITTER_BYTES)
            handle.write(b"x")
        _note(handle.name)
    if fault == "run-files":
        run = os.path.dirname(os.path.dirname(os.getcwd()))
        os.unlink(os.path.join(run, "run.json"))
        results = os.path.join(run, "results.jsonl")
        if os.path.lexists(results):
            os.unlink(results)
        os.symlink(_outside("victim.txt"), results)
        os.unlink(os.path.join(run, "run.lock"))
        os.symlink(_outside("victim.txt"), os.path.join(run, "run.lock"))
    return Compiled(shared_bytes=1024)
