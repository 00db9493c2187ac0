"""A case that fills the disk its folder is on, leaving 64 KiB, then fails with 512 KiB on
stderr: room for the run's record of it, none for its stderr.txt. Nothing here compiles a
Triton kernel."""

import sys

from suite import Choice, Compiled, Reproducer

REPRO = Reproducer(
    id="hostile-fills-disk",
    title="fills the disk, then fails loudly",
    family="hostile",
    params=(Choice("x", (1,)),),
    configs={"default": [{"x": 1}]},
    targets=("sm_90",),
)


@REPRO.compile
def compile_case(case):
    with open("filler.bin", "wb", buffering=0) as filler:
        try:
            while True:
                filler.write(b"\0" * 65536)
        except OSError:
            pass
        filler.truncate(max(0, filler.tell() - (64 << 10)))
    sys.stderr.write("loud " * (100 << 10))
    raise RuntimeError("failed after filling the disk")
    return Compiled(shared_bytes=1024)
