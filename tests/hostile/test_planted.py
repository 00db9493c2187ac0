"""Hostile inputs, second round (issue 29): what a case plants, lies about or hides, through
the real ``repro run``, warm and fresh. Real links, FIFOs, hard links and escaped processes;
nothing outside the output root may change, and the run keeps every result."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import repro_cli
from tests.hostile.test_hostile import alive, sleepers

HERE = Path(__file__).resolve().parent / "repros"
PLANTED = HERE / "planted.py"
sys.path.insert(0, str(HERE))
from planted import FAULTS, PASSWORD_VALUE, TOKEN  # noqa: E402

SECRET_PIECES = (TOKEN[:20], TOKEN[20:], PASSWORD_VALUE)


def outside_folder(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("a file outside the output root\n")
    (outside / "big.bin").write_bytes(os.urandom(17 << 20))
    return outside


def snapshot(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


@pytest.mark.parametrize("isolation", ["warm", "fresh"])
def test_what_a_case_plants_lies_or_hides_stays_its_own(tmp_path, isolation):
    outside = outside_folder(tmp_path)
    before = snapshot(outside)
    notes, out = tmp_path / "notes", tmp_path / "out"
    env = {"HOSTILE_OUTSIDE": str(outside), "HOSTILE_PIDS": str(notes)}
    argv = ["run", str(PLANTED), "-c", "faults", "-j", "2", "--timeout", "60"]
    done = repro_cli(*argv, "--isolation", isolation, "-o", str(out), env=env)
    assert done.code == 1, done.stderr
    assert "Traceback" not in done.stderr

    # 1. Nothing outside the output root was written through a link, hard or symbolic.
    assert snapshot(outside) == before
    (run,) = (out / "runs").iterdir()
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    by_fault = {r["config"]["fault"]: r for r in records}
    assert len(records) == len(by_fault) == len(FAULTS)
    for fault in ("symlink-streams", "odd-files", "fifo-stdout"):
        kept = Path(by_fault[fault]["artifacts"]["stdout.txt"])
        assert not kept.is_symlink() and kept.read_text() == "this goes to stdout\n", fault
    planted = " ".join(by_fault["odd-files"]["detail"]["planted"])
    assert "zero.txt (link)" in planted and "mlir-reproducer.mlir (fifo)" in planted
    for path in run.rglob("*"):  # nothing left there for a later reader to follow or wait on
        regular = path.is_file() and not path.is_symlink()
        assert path.is_dir() or regular or path.name == "run.lock", path
    linked = Path(by_fault["hardlink-out"]["artifacts"]["linked.txt"])
    assert linked.stat().st_nlink == 1 and linked.read_text() == "a file outside the output root\n"

    # 4. Exit status and signal decide, never the child's word.
    assert by_fault["done-then-exit-1"]["outcome"] == "crash"
    assert by_fault["skipped-then-segv"]["outcome"] == "crash"
    assert "SIGSEGV" in by_fault["skipped-then-segv"]["signature"]
    assert by_fault["forged-dumps"]["outcome"] == "crash"
    assert by_fault["ok"]["outcome"] == "passed"

    # 5. A grandchild that left the session with an empty environment is gone.
    lines = notes.read_text().split()
    assert not alive([int(x) for x in lines if x.isdigit()])
    assert not sleepers("1000.25")
    # ... and so is a temporary file a case left (10. smaller).
    litter = [x for x in lines if not x.isdigit()]
    assert litter and not any(Path(x).exists() for x in litter)

    # 8. No secret in anything written: dict keys, file names, after a NUL, at the cut.
    for path in out.rglob("*"):
        assert TOKEN[:12] not in path.name, path
        if path.is_file() and "sources" not in path.parts:
            data = path.read_bytes()
            for piece in SECRET_PIECES:
                assert piece.encode() not in data, (path, piece)
    assert by_fault["secret-keys"]["outcome"] == "passed"

    # A case that deleted run.json and replaced results.jsonl and run.lock with links: the
    # run wrote them again, whole, and resumes with nothing to do.
    assert json.loads((run / "run.json").read_text())["repros"] == [str(PLANTED)]
    again = repro_cli("run", "--resume", "-o", str(out), env=env)
    assert again.code == 1, again.stderr
    assert len((run / "results.jsonl").read_text().splitlines()) == len(FAULTS)
    assert snapshot(outside) == before
