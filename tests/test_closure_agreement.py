"""What we hand out agrees with the engine on every release: for each finding of the closure
corpus (``tests/data/closure/``: reproducer files, and programs captured by ``repro
capture``), the report's repro.py and the repro.py of the reduced kernel, each run by itself
with nothing of this project importable, exit as the engine's own matrix judges that kernel
on each release of ``.ci/releases``: 1 where the engine sees the same bug, 0 where it passes,
2 where the release refuses the kernel or lacks its API, and never a ``NameError``.

The ground truth is ``repro matrix`` of the corpus file (or the captured reproducer) and of
the reduced file: the engine's verdicts, never a table written here. The whole sweep (every
finding, every release, reduced too) is ``slow``; by default one finding is checked on this
machine's release only.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import RELEASES, ROOT, repro_cli, triton_release, write_finding
from test_closure import COMPILE_FAILURES, _with_site, no_suite

from suite.engine.same_bug import is_same_bug

CORPUS = ROOT / "tests" / "data" / "closure"
SITE = CORPUS / "site"
#: A name the program reads and does not define: Python's ``NameError: name 'X' is not
#: defined``, or Triton's ``NameError('X is not defined')`` for a kernel's global. (Triton's
#: "Cannot access global variable X" is its refusal of a global the release has no value for.)
UNDEFINED = re.compile(r"NameError\W+(?:name )?'?\w+'? is not defined")
#: Seconds each reduction may take: the sweep checks what a reduction hands out, not how small.
REDUCE_BUDGET = "30"


@dataclass(frozen=True)
class Origin:
    """A finding of the corpus: a reproducer file (``NAME.py``) run by the engine under
    ``release`` ("" for this machine's Triton), or a program (``programs/NAME.py``) run
    under ``repro capture`` here."""

    name: str
    program: bool = False
    release: str = ""

    def __str__(self) -> str:
        where = f"@{self.release}" if self.release else ""
        return ("program:" if self.program else "") + self.name + where


ORIGINS = (
    *(Origin(name) for name in COMPILE_FAILURES),
    # Fixed in 3.9.0: found on 3.8.0; 3.3 reaches it through the experimental builtin.
    Origin("descriptor_compat", release="3.8.0"),
    Origin("aot_package", program=True),
    Origin("jit_launch", program=True),
    Origin("warmup_cache", program=True),
)


@dataclass(frozen=True)
class Found:
    """A finding and what the engine judges it by."""

    finding: Path
    signature: str
    #: The reproducer file the engine runs (the corpus file, or the captured reproducer).
    engine_file: Path
    config_set: str
    python: str


@dataclass(frozen=True)
class Agreement:
    """One program run by itself under one release, beside the engine's verdict there."""

    program: str
    release: str
    verdict: str
    #: None where the engine gave no verdict on the kernel (a harness error: the file could
    #: not be run there).
    expected: int | None
    exit: int
    name_error: bool

    @property
    def agrees(self) -> bool:
        return self.expected in (None, self.exit) and not self.name_error

    def row(self) -> str:
        if self.name_error:
            mark = "DISAGREES (NameError)"
        else:
            mark = "agrees" if self.expected is not None else "no verdict"
            mark = mark if self.agrees else "DISAGREES"
        verdict = self.verdict if len(self.verdict) < 90 else self.verdict[:87] + "..."
        expected = "-" if self.expected is None else str(self.expected)
        cells = (self.program, self.release, verdict, expected, str(self.exit), mark)
        return "| " + " | ".join(cells) + " |"


def python_of(release: str) -> str:
    if release in ("", triton_release()):
        return sys.executable
    from suite.toolchain.venvs import for_version

    return str(for_version(release).python)


def found_in_file(origin: Origin, out: Path) -> Found:
    python = python_of(origin.release)
    file = CORPUS / f"{origin.name}.py"
    done = repro_cli("run", str(file), "-c", "trigger", "--python", python, "-o", str(out))
    assert done.code in (0, 1), done.stdout + done.stderr
    (run,) = (out / "runs").iterdir()
    (line,) = (run / "results.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["outcome"] == "compiler-error", record
    release = origin.release or triton_release()
    finding = write_finding(
        file, record["signature"], record["outcome"], out, record["config"],
        name=origin.name, release=release, python=python,
    )  # fmt: skip
    return Found(finding, record["signature"], file, "trigger", python)


def found_in_program(origin: Origin, out: Path) -> Found:
    program = CORPUS / "programs" / f"{origin.name}.py"
    done = subprocess.run(
        [sys.executable, "-m", "suite.capture", "--output", str(out), "--", sys.executable,
         str(program)],
        capture_output=True, text=True, cwd=out.parent, timeout=900,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]
    (summary,) = out.glob("captures/*/capture.json")
    (failure,) = json.loads(summary.read_text())["failures"]
    assert failure["reproduced"], failure
    finding = out / "findings" / f"{failure['finding']}.json"
    return Found(finding, failure["isolated"], Path(failure["file"]), "captured", sys.executable)


def report(found: Found, out: Path, name: str) -> Path:
    done = repro_cli("report", str(found.finding), "-o", str(out), "--id", name)
    assert done.code == 0, done.stdout + done.stderr
    script = out / name / "repro.py"
    assert script.exists(), done.stdout + done.stderr
    return script


def reduced(found: Found, out: Path) -> Path:
    done = repro_cli(
        "reduce", str(found.finding), "--time-budget", REDUCE_BUDGET, "-j", "2",
        "--fixed-release", "none", "--python", found.python, "-o", str(out),
    )  # fmt: skip
    assert done.code == 0, done.stdout + done.stderr
    return out / "reduce" / found.finding.stem / "reduced_case.py"


def engine_verdicts(file: Path, config_set: str, releases: list[str], out: Path) -> dict:
    """``repro matrix`` of ``file``'s one config: each release's cell."""
    if releases == [triton_release()]:
        where = ["--python", sys.executable]
    else:
        where = ["--triton", ",".join(releases)]
    done = repro_cli(
        "matrix", str(file), "-c", config_set, *where, "-j", "2", "-o", str(out), "--json", "-q"
    )
    assert done.code in (0, 1), done.stdout + done.stderr
    (row,) = json.loads(done.stdout)["rows"]
    if where[0] == "--python":  # one column, named after the interpreter
        (cell,) = row["cells"].values()
        return {triton_release(): cell}
    return row["cells"]


def expected_exit(verdict: str, signature: str) -> int | None:
    """What repro.py must exit with where the engine says ``verdict``; None where the engine
    could not run the file (a harness error: its glue needs what the release lacks, such as
    3.5's ``triton.constexpr_function`` at the top of the file)."""
    if verdict.startswith("harness-error"):
        return None
    if verdict == "passed":
        return 0
    if verdict in ("unsupported", "toolchain-gap"):
        return 2  # the release lacks the kernel's API: it refuses it
    return 1 if is_same_bug(verdict, signature) else 2


def run_alone(script: Path, python: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, script.name],
        cwd=script.parent,
        env=no_suite(script.parent),
        capture_output=True,
        text=True,
        timeout=600,
    )


def agreement(origin: Origin, out: Path, releases: list[str], reduce: bool) -> list[Agreement]:
    found = (found_in_program if origin.program else found_in_file)(origin, out / "found")
    programs = {"repro.py": report(found, out / "found", "original")}
    truths = {"repro.py": engine_verdicts(found.engine_file, found.config_set, releases, out)}
    if reduce:
        file = reduced(found, out / "found")
        programs["reduced"] = report(found, out / "found", "reduced")
        truths["reduced"] = engine_verdicts(file, "finding", releases, out)
    jobs = [(name, release) for name in programs for release in releases]
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda j: run_alone(programs[j[0]], python_of(j[1])), jobs))
    rows = []
    for (name, release), done in zip(jobs, runs, strict=True):
        verdict = truths[name][release]
        rows.append(
            Agreement(
                name, release, verdict, expected_exit(verdict, found.signature),
                done.returncode, bool(UNDEFINED.search(done.stdout + done.stderr)),
            )
        )  # fmt: skip
    return rows


def table(origin: Origin, rows: list[Agreement]) -> str:
    head = ["| program | release | engine | expected | exit | |", "|---|---|---|---|---|---|"]
    return "\n".join([f"{origin}", *head, *(r.row() for r in rows)])


# module_constants needs tl.make_tensor_descriptor and tl.range(warp_specialize=...)
# (its `requires`), both first in 3.4.0.
@pytest.mark.triton(">=3.4")
def test_repro_py_agrees_with_the_engine_on_this_release(tmp_path, monkeypatch):
    """The sweep's representative: one finding, this machine's release, no reduction."""
    monkeypatch.setenv("PYTHONPATH", _with_site()["PYTHONPATH"])
    origin = Origin("module_constants")
    rows = agreement(origin, tmp_path, [triton_release()], reduce=False)
    assert rows and all(r.agrees for r in rows), table(origin, rows)
    assert rows[0].expected == 1


@pytest.mark.venv
@pytest.mark.slow
@pytest.mark.parametrize("origin", ORIGINS, ids=str)
def test_repro_py_and_the_reduced_kernel_agree_with_the_engine_on_every_release(
    tmp_path, monkeypatch, origin
):
    monkeypatch.setenv("PYTHONPATH", _with_site()["PYTHONPATH"])
    rows = agreement(origin, tmp_path, RELEASES, reduce=True)
    print(table(origin, rows))
    assert len(rows) == 2 * len(RELEASES)
    assert all(r.agrees for r in rows), table(origin, rows)
