"""The second round of hostile angles (issue 29), run by ``bench/hostile_probe.py``.

- bad inputs: the planted and crafted inputs of ``tests/hostile/test_paths.py`` (a FIFO, a
  device link or a folder named like a finding, findings of the wrong shape, a finding stem
  of ``..``, ``OUTPUT/reduce/<id>`` a link or ``reduce`` a file, reserved report ids, corrupt
  ``run.json``/``results.jsonl``/nightly state, ``runs``/``findings`` a file) and environment
  faults (a cache folder that cannot be made, a deleted working folder, a closed and a
  broken stdout): exit 2, one line, nothing outside touched, nothing blocks;
- faults: every case of ``tests/hostile/repros/planted.py`` (links and hard links to files
  outside, FIFOs and folders where the streams go, a "done" then exit 1, a "skipped" then
  SIGSEGV, a forged ``json.dumps``, an escape with an empty environment, secrets in dict
  keys, file names, after a NUL and at the output cut, a 64 MiB temporary file, a case that
  deletes ``run.json`` and links ``results.jsonl`` and ``run.lock`` outside) warm and fresh,
  1 and 2 workers, then ``--resume``; two ``repro baseline accept`` into one file at once.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "hostile" / "repros"))
from planted import FAULTS, PASSWORD_VALUE, TOKEN  # noqa: E402

from tests.hostile.test_paths import BAD_INPUTS, finding  # noqa: E402

PLANTED = ROOT / "tests" / "hostile" / "repros" / "planted.py"
SECRET_PIECES = (TOKEN[:20], TOKEN[20:], PASSWORD_VALUE)
# The outcome each lying case must get: never the child's word.
DEATHS = {"done-then-exit-1": "crash", "skipped-then-segv": "crash", "forged-dumps": "crash"}


def snapshot(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


def command(argv: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "suite.cli.main", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        **options,
    )


def one_line_exit_2(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    problems = [] if done.returncode == 2 else [f"exit {done.returncode}"]
    if len(lines) != 1 or "Traceback" in done.stderr:
        problems.append(f"{len(lines)} stderr lines")
    return "; ".join(problems) + (" | " + lines[-1] if lines and problems else "")


def bad_inputs(work: Path, check: Callable[..., Any]) -> list[Any]:
    checks = []
    for name, plant in sorted(BAD_INPUTS.items()):
        root = Path(tempfile.mkdtemp(prefix="bad-", dir=work))
        argv = plant(root)
        outside = root / "outside"
        outside.mkdir(exist_ok=True)
        (outside / "keep.txt").write_text("not the tool's\n")
        before = snapshot(outside)
        try:
            why = one_line_exit_2(command(argv, env={**os.environ, "HOME": str(root / "h")}))
        except subprocess.TimeoutExpired:
            why = "blocked past 300 s"
        if snapshot(outside) != before:
            why += " wrote outside"
        checks.append(check("bad-input", name, not why, why))
    checks += environment_faults(work, check)
    return checks


def environment_faults(work: Path, check: Callable[..., Any]) -> list[Any]:
    (work / "afile").write_text("")
    faults: dict[str, dict[str, Any]] = {
        "XDG_CACHE_HOME a file": {"env": {**os.environ, "XDG_CACHE_HOME": str(work / "afile")}},
        "HOME a file, no XDG_CACHE_HOME": {
            "env": {k: v for k, v in os.environ.items() if k != "XDG_CACHE_HOME"}
            | {"HOME": str(work / "afile")}
        },
        "closed stdout": {"preexec_fn": lambda: os.close(1)},
    }
    gone = work / "gone"
    gone.mkdir()
    # Python itself cannot start in a deleted folder with a relative PYTHONPATH entry, as the
    # docs run this probe (PYTHONPATH=.): "Fatal Python error: error evaluating path", exit 1,
    # before the tool could say anything. The child gets the entries made absolute.
    entries = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    absolute = os.pathsep.join(os.path.abspath(entry) for entry in entries if entry)
    faults["a deleted working folder"] = {
        "cwd": gone,
        "preexec_fn": lambda: os.rmdir(gone),
        "env": {**os.environ, "PYTHONPATH": absolute},
    }
    checks = []
    for name, options in faults.items():
        why = one_line_exit_2(command(["list"], **options))
        checks.append(check("bad-input", name, not why, why))
    read, write = os.pipe()
    os.close(read)
    done = subprocess.run(
        [sys.executable, "-m", "suite.cli.main", "list"],
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
    )
    os.close(write)
    why = one_line_exit_2(subprocess.CompletedProcess(done.args, done.returncode, "", done.stderr))
    checks.append(check("bad-input", "a broken stdout (repro list | head -c1)", not why, why))
    return checks


def planted_runs(work: Path, check: Callable[..., Any], left_behind: Callable[[], list[int]]):
    checks = []
    for isolation in ("warm", "fresh"):
        for workers in ("1", "2"):
            here = work / f"planted-{isolation}-{workers}"
            outside = here / "outside"
            outside.mkdir(parents=True)
            (outside / "victim.txt").write_text("a file outside the output root\n")
            (outside / "big.bin").write_bytes(os.urandom(17 << 20))
            before = snapshot(outside)
            notes, out = here / "notes", here / "out"
            env = {**os.environ, "HOSTILE_OUTSIDE": str(outside), "HOSTILE_PIDS": str(notes)}
            argv = ["run", str(PLANTED), "-c", "faults", "-j", workers, "--timeout", "60"]
            done = command([*argv, "--isolation", isolation, "-o", str(out)], env=env)
            (run,) = (out / "runs").iterdir()
            lines = (run / "results.jsonl").read_text().splitlines()
            by_fault = {r["config"]["fault"]: r for r in map(json.loads, lines)}
            written = [p for p in out.rglob("*") if "sources" not in p.parts]
            leaked = [
                f"{p.name}:{piece[:6]}"
                for p in written
                for piece in SECRET_PIECES
                if piece in p.name or (p.is_file() and piece.encode() in p.read_bytes())
            ]
            noted = notes.read_text().split() if notes.exists() else []
            litter = [x for x in noted if not x.isdigit() and Path(x).exists()]
            # The escaped process has an empty environment: no marker, found by its pid.
            survivors = left_behind() + [int(x) for x in noted if x.isdigit() and escaped(int(x))]
            outside_changed = snapshot(outside) != before
            for fault in FAULTS:
                record = by_fault.get(fault)
                problems = [] if record else ["not recorded"]
                if done.returncode != 1 or "Traceback" in done.stderr:
                    problems.append(f"run exit {done.returncode}")
                if record and fault in DEATHS and record["outcome"] != DEATHS[fault]:
                    problems.append(f"recorded {record['outcome']}")
                if fault.startswith(("hardlink", "symlink")) and outside_changed:
                    problems.append("a file outside changed")
                if fault.startswith("secret") and leaked:
                    problems.append(f"secrets {leaked[:3]}")
                if fault == "empty-env-escape" and survivors:
                    problems.append(f"survivors {survivors}")
                if fault == "tmp-litter" and litter:
                    problems.append(f"left {litter}")
                if fault == "run-files" and len(lines) != len(FAULTS):
                    problems.append(f"{len(lines)} results")
                name = f"{fault} ({isolation}, -j {workers})"
                checks.append(check("fault", name, not problems, "; ".join(problems)))
            again = command(["run", "--resume", "-o", str(out)], env=env)
            after = len((run / "results.jsonl").read_text().splitlines())
            ok = again.returncode == 1 and after == len(FAULTS) and snapshot(outside) == before
            why = f"exit {again.returncode}, {after} results"
            name = f"--resume after them ({isolation}, -j {workers})"
            checks.append(check("fault", name, ok, why))
    return checks


def escaped(pid: int) -> bool:
    try:
        return b"1000.25" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def concurrent_accepts(work: Path, check: Callable[..., Any]) -> list[Any]:
    checks = []
    signatures = ("compiler-error:ttgir:PassOne: one", "compiler-error:ttgir:PassTwo: two")
    for round_ in range(3):
        baseline = work / f"baseline-{round_}.toml"
        procs = []
        for index, signature in enumerate(signatures):
            path = work / f"accept-{round_}-{index}.json"
            path.write_text(finding(signature=signature, message=signature))
            argv = ["baseline", "accept", str(path), "--baseline", str(baseline)]
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "suite.cli.main", *argv],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        codes = [proc.wait(timeout=300) for proc in procs]
        text = baseline.read_text() if baseline.exists() else ""
        ok = codes == [0, 0] and "PassOne" in text and "PassTwo" in text
        why = f"exits {codes}, entries kept: {[s for s in ('PassOne', 'PassTwo') if s in text]}"
        checks.append(check("fault", f"two baseline accepts at once, round {round_ + 1}", ok, why))
    return checks
