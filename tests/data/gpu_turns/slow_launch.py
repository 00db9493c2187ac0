"""A launch that takes ``SECONDS`` and writes down when it ran (tests/test_gpu_turns.py).

No kernel: the launch phase alone, under Triton's interpreter (no GPU needed), so that
the engine's turns on a GPU can be watched from the outside. ``LINGER``: the process ends
that many seconds after its launch, and writes down when (``LOG.exits``). ``FAULT``: the
launch then raises as a launch that faulted does.
"""

import atexit
import json
import time

from suite import Choice, Reproducer

REPRO = Reproducer(
    id="slow-launch",
    title="a launch that takes a while",
    family="test",
    params=(
        Choice("SECONDS", (1.5,)),
        Choice("LOG", ("",)),
        Choice("N", (0, 1)),
        Choice("LINGER", (0.0,)),
        Choice("FAULT", (False,)),
    ),
    configs={},
    targets=("sm_90",),
    label="n{N}",
)


@REPRO.launch
def launch(case):
    began = time.monotonic()
    time.sleep(case.config["SECONDS"])
    with open(case.config["LOG"], "a") as log:
        log.write(json.dumps([began, time.monotonic()]) + "\n")
    if case.config.get("LINGER"):  # the process ends this much later: when is written down
        atexit.register(_linger, case.config["LINGER"], case.config["LOG"] + ".exits")
    if case.config.get("FAULT"):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")


def _linger(seconds, path):
    time.sleep(seconds)
    with open(path, "a") as log:
        log.write(json.dumps(time.monotonic()) + "\n")
