"""Text that would drive a terminal (issue 36): a declared config value that ends a line
and forges a "passed" row, an error message that clears the screen and reverses text."""

from suite import Choice, Reproducer

FORGED = "hostile-terminal[sm_90-y]\tpassed\tok"
VALUE = "x\r\n\x1b[1A\x1b[2K" + FORGED

REPRO = Reproducer(
    id="hostile-terminal",
    title="a reproducer whose text is terminal control",
    family="hostile",
    params=(Choice("name", (VALUE,)),),
    configs={"one": [{"name": VALUE}]},
    targets=("sm_90",),
)


@REPRO.compile
def compile_case(case):
    raise RuntimeError("\x1b[H\x1b[J\x1bc\rall good \u202egnissap")
