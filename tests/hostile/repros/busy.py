"""Cases that keep ``repro`` busy when SIGTERM comes: one leaves 2 MiB of adversarial output
for the scrubber (each stream at its bound), one runs on with a child. Each touches
``HOSTILE_BUSY`` once it got there. Nothing here compiles a Triton kernel."""

import os
import subprocess
import sys
import time

from suite import Choice, Compiled, Reproducer

REPRO = Reproducer(
    id="hostile-busy",
    title="keeps repro busy: adversarial output for the scrubber, a long case",
    family="hostile",
    params=(Choice("busy", ("scrubber", "long")),),
    # The long case after the scrubber's: the run is still on whenever SIGTERM comes.
    configs={"scrubber": [{"busy": "scrubber"}, {"busy": "long"}], "long": [{"busy": "long"}]},
    targets=("sm_90",),
    label="{busy}",
)


def _there() -> None:
    with open(os.environ["HOSTILE_BUSY"], "a") as mark:
        mark.write(str(os.getpid()))


@REPRO.compile
def compile_case(case):
    if case["busy"] == "scrubber":
        sys.stdout.write("a." * (1 << 19))
        sys.stderr.write("x://a:" * (1 << 18))
        sys.stdout.flush()
        sys.stderr.flush()
        _there()
        raise RuntimeError("TOKEN" * 20000)
    subprocess.Popen(["sleep", "1000.25"])
    _there()
    while True:
        time.sleep(1)
    return Compiled(shared_bytes=1024)
