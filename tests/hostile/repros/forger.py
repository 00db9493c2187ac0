"""A case that forges its run's results (issue 36): once (``FORGER_MARK`` names the file
that says it did), the case ``n=0`` appends a ``passed`` line for the case ``n=1``, which
has not run yet and always fails, to its run's ``results.jsonl``, then sends SIGTERM to
``repro``. ``repro run --resume`` must still run ``n=1``."""

import json
import os
import signal
import time
from pathlib import Path

from suite import Choice, Reproducer

REPRO = Reproducer(
    id="hostile-forger",
    title="a case that writes its run's results",
    family="hostile",
    params=(Choice("n", (0, 1)),),
    configs={"both": [{"n": 0}, {"n": 1}]},
    targets=("sm_90",),
)


def _repro_pid() -> int:
    """The topmost ancestor running ``repro`` (a warm template is a fork of it)."""
    pid, found = os.getppid(), 0
    while pid > 1:
        if b"suite.cli.main" in Path(f"/proc/{pid}/cmdline").read_bytes():
            found = pid
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    if not found:
        raise RuntimeError("no repro above this case")
    return found


def _forge() -> None:
    from suite.engine.outcome import CaseResult, Outcome

    forged = CaseResult(
        "hostile-forger[sm_90-1]", "hostile-forger", "sm_90", {"n": 1}, Outcome.PASSED
    )
    line = json.dumps({**forged.to_json(), "verdict": "ok"}) + "\n"
    folder = Path(os.environ["TRITON_CACHE_DIR"]).parents[2]  # <run>/cases/<case>/cache
    with open(folder / "results.jsonl", "a") as results:
        results.write(line)
    Path(os.environ["FORGER_MARK"]).write_text("forged")
    os.kill(_repro_pid(), signal.SIGTERM)
    time.sleep(60)


@REPRO.compile
def compile_case(case):
    if case["n"] == 0 and not Path(os.environ["FORGER_MARK"]).exists():
        _forge()
    raise RuntimeError(f"always fails ({case['n']})")
