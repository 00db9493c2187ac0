"""`repro reduce` against C-Vise, side by side, on bugs planted in realistic larger kernels.

    python bench/bench_reduce.py --jobs 2 --budget 900 --cvise-cap 240 --json reduce-bench.json

For each input under bench/reduce_inputs/ (a reproducer file, 120-250 lines) this checks
that it fails with the same signature as its hand-written minimal form on the bug's
release, makes a finding of it, runs `repro reduce` on the finding, and runs C-Vise (its
default passes, `--n JOBS`) on the same file with the same interestingness test
(`python -m suite.reduce.interesting`, which runs the case in isolation and compares the
signature). With the fixed-release guard (the default; --no-fixed-guard turns it off) both
get the same stricter test: a candidate must also compile on the fixed release (the finding's
first_good for `repro reduce`, the expectation's fixed_python for C-Vise). Then both results
are checked: same signature on the bug's release, a pass on the fixed release. Lines and
tokens are those of the @triton.jit functions, normalized by ast.unparse
(suite.reduce.tree.kernel_measure), so layout and comments count for no one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from suite.engine import Environment, Execution, capture_source
from suite.failures.findings import Finding
from suite.reduce.interesting import ReductionGoal, SignatureTest
from suite.reduce.passes import kernel_measure
from suite.toolchain.venvs import for_version

ROOT = Path(__file__).resolve().parents[1]
INPUTS = ROOT / "bench" / "reduce_inputs"


@dataclass(frozen=True)
class Planted:
    """One planted bug: the input, its minimal form, the releases, the case."""

    file: str
    minimal: str
    minimal_config: dict[str, object]
    bad: str
    good: str
    target: str
    config: dict[str, object]


PLANTED = (
    Planted(
        "prefetch_gemm_epilogue_sm100.py",
        "repros/tma_gemm_prefetch.py",
        {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_stages": 2, "num_warps": 4},
        "3.5.0",
        "3.6.0",
        "sm_100",
        {
            "BLOCK_M": 64,
            "BLOCK_N": 64,
            "BLOCK_K": 32,
            "GROUP_M": 8,
            "num_warps": 4,
            "num_stages": 2,
        },
    ),
    Planted(
        "gemm_epilogue_sm103.py",
        "repros/upstream/sm103_tcgen05_wait.py",
        {"BLOCK": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 3, "USE_DOT": True},
        "3.5.0",
        "3.6.0",
        "sm_103",
        {
            "BLOCK_M": 128,
            "BLOCK_N": 128,
            "BLOCK_K": 64,
            "GROUP_M": 8,
            "num_warps": 4,
            "num_stages": 3,
        },
    ),
    Planted(
        "attention_sm103.py",
        "repros/upstream/sm103_tcgen05_wait.py",
        {"BLOCK": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 3, "USE_DOT": True},
        "3.5.0",
        "3.6.0",
        "sm_103",
        {"BLOCK_M": 128, "BLOCK_N": 64, "HEAD_DIM": 64, "num_warps": 4, "num_stages": 2},
    ),
    Planted(
        "gemm_epilogue_sm120.py",
        "repros/upstream/sm120_mma_version.py",
        {"BLOCK": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2, "USE_DOT": True},
        "3.3.0",
        "3.3.1",
        "sm_120",
        {
            "BLOCK_M": 128,
            "BLOCK_N": 128,
            "BLOCK_K": 64,
            "GROUP_M": 8,
            "num_warps": 4,
            "num_stages": 3,
        },
    ),
)


def _repro_id(path: Path) -> str:
    text = path.read_text()
    start = text.index('id="') + 4
    return text[start : text.index('"', start)]


def _judge(path: Path, repro: str, planted: Planted, python: str, config: dict) -> tuple[str, str]:
    """(outcome, signature) of ``path`` as the planted case under ``python``."""
    expectation = ReductionGoal(repro, "", planted.target, dict(config), python)
    with tempfile.TemporaryDirectory(prefix="bench-reduce-") as work:
        verdict = SignatureTest(
            expectation, Path(work), None, Execution(python=python, warm=False)
        )(path)
    return verdict.outcome, verdict.signature or ""


def _checks(path: Path, repro: str, planted: Planted, signature: str) -> dict[str, object]:
    bad = _judge(path, repro, planted, for_version(planted.bad).python, planted.config)
    good = _judge(path, repro, planted, for_version(planted.good).python, planted.config)
    return {"same_signature_on_bad": bad[1] == signature, "passes_on_good": good[0] == "passed"}


def _measure(path: Path) -> dict[str, int]:
    lines, tokens = kernel_measure(path.read_text())
    return {"lines": lines, "tokens": tokens}


def run_reduce(
    planted: Planted, scratch: Path, signature: str, jobs: int, budget: float, guard: bool
) -> dict:
    source = INPUTS / planted.file
    repro = _repro_id(source)
    carried = capture_source({"path": str(source)})
    assert carried is not None
    python = for_version(planted.bad).python
    finding = Finding(
        repro=repro,
        signature=signature,
        kind="bug",
        outcome=signature.split(":")[0],
        message="",
        target=planted.target,
        targets=[planted.target],
        minimal_config=dict(planted.config),
        failing_configs=[],
        passing_neighbours=[],
        boundary=[],
        environment=Environment(triton=planted.bad, python_executable=python),
        seed=0,
        first_seen="",
        last_seen="",
        source=carried.to_json(with_text=True),
        first_good=planted.good if guard else None,
    )
    findings = scratch / "findings"
    findings.mkdir(parents=True, exist_ok=True)
    finding_path = findings / f"{repro}.json"
    finding_path.write_text(json.dumps(finding.to_json(), indent=2, default=str))
    argv = [sys.executable, "-m", "suite.cli", "reduce", str(finding_path), "-o", str(scratch)]
    argv += ["-j", str(jobs), "--time-budget", str(budget)]
    argv += [] if guard else ["--fixed-release", "none"]
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:], "wall_s": round(wall, 1)}
    reduced = Path(done.stdout.strip().splitlines()[-1])
    state = json.loads((reduced.parent / "state.json").read_text())
    return {
        "file": str(reduced),
        "wall_s": round(wall, 1),
        "compiles": state["tries"],
        "cached": state.get("cached"),
        "rounds": state.get("rounds"),
        "by_pass": state.get("by_pass"),
        "improvements_by_pass": state.get("passes"),
        "fresh_check": state.get("fresh_check"),
        "complete": state["done"],
        **_measure(reduced),
        **_checks(reduced, repro, planted, signature),
    }


def run_cvise(
    planted: Planted, scratch: Path, signature: str, jobs: int, cap: float, guard: bool
) -> dict:
    source = INPUTS / planted.file
    repro = _repro_id(source)
    work = scratch / "cvise"
    work.mkdir(parents=True, exist_ok=True)
    case = work / planted.file
    shutil.copy(source, case)
    expectation = ReductionGoal(
        repro,
        signature,
        planted.target,
        dict(planted.config),
        for_version(planted.bad).python,
        fixed_python=for_version(planted.good).python if guard else "",
    )
    (work / "expect.json").write_text(json.dumps(expectation.to_json()))
    counter = work / "compiles"
    script = work / "interesting.sh"
    script.write_text(
        "#!/bin/sh\n"
        f"echo x >> {counter}\n"
        f"exec {sys.executable} -m suite.reduce.interesting {work / 'expect.json'} {planted.file}\n"
    )
    script.chmod(0o755)
    # C-Vise wants the test case named relative to its working folder.
    argv = ["cvise", "--n", str(jobs), "--timeout", "120", str(script), planted.file]
    started = time.monotonic()
    # Its own session, so that the cap stops C-Vise and every helper and test it started.
    cvise = subprocess.Popen(
        argv,
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _, stderr = cvise.communicate(timeout=cap)
        finished = cvise.returncode == 0
        if not finished:
            print(f"  cvise exited {cvise.returncode}: {stderr[-500:]}", flush=True)
    except subprocess.TimeoutExpired:
        os.killpg(cvise.pid, signal.SIGKILL)
        cvise.communicate()
        finished = False  # C-Vise writes each improvement into the file: that is its best
    wall = time.monotonic() - started
    compiles = len(counter.read_text().splitlines()) if counter.exists() else 0
    result: dict[str, object] = {
        "file": str(case),
        "wall_s": round(wall, 1),
        "compiles": compiles,
        "complete": finished,
    }
    try:
        result.update(_measure(case))
    except SyntaxError:
        result["error"] = "the result does not parse"
        return result
    result.update(_checks(case, repro, planted, signature))
    return result


def _shown(entry: dict) -> str:
    return f"{entry.get('lines')} l / {entry.get('tokens')} t"


def _checks_shown(entry: dict) -> str:
    bad = "same" if entry.get("same_signature_on_bad") else "NO"
    good = "pass" if entry.get("passes_on_good") else "NO"
    return f"bad: {bad}, good: {good}"


def _table_row(row: dict) -> str:
    r, c = row["reduce"], row["cvise"]
    capped = "" if c.get("complete") else " (capped)"
    return (
        f"| {row['file']} | {_shown(row['minimal_form'])} | {_shown(row['input'])} "
        f"| {_shown(r)} | {_shown(c)} | {r.get('wall_s')} / {r.get('compiles')} "
        f"| {c.get('wall_s')} / {c.get('compiles')}{capped} "
        f"| {_checks_shown(r)} | {_checks_shown(c)} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--budget", type=float, default=900.0, help="repro reduce --time-budget")
    parser.add_argument("--cvise-cap", type=float, default=900.0, help="C-Vise wall-clock cap")
    parser.add_argument("--only", action="append", help="input file names to run")
    parser.add_argument(
        "--no-fixed-guard",
        dest="guard",
        action="store_false",
        help="judge on the bug's release only (by default both tools' candidates must also "
        "compile on the fixed release)",
    )
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    rows = []
    for planted in PLANTED:
        if args.only and planted.file not in args.only:
            continue
        source = INPUTS / planted.file
        repro = _repro_id(source)
        python = for_version(planted.bad).python
        outcome, signature = _judge(source, repro, planted, python, planted.config)
        minimal = ROOT / planted.minimal
        minimal_signature = _judge(
            minimal, _repro_id(minimal), planted, python, planted.minimal_config
        )[1]
        row: dict[str, object] = {
            **asdict(planted),
            "signature": signature,
            "minimal_signature_matches": signature == minimal_signature and bool(signature),
            "input": _measure(source),
            "minimal_form": _measure(minimal),
        }
        print(f"{planted.file}: {outcome} {signature}", flush=True)
        with tempfile.TemporaryDirectory(prefix="bench-reduce-") as scratch:
            row["reduce"] = run_reduce(
                planted, Path(scratch) / "ours", signature, args.jobs, args.budget, args.guard
            )
            print(f"  repro reduce: {row['reduce']}", flush=True)
            row["cvise"] = run_cvise(
                planted, Path(scratch), signature, args.jobs, args.cvise_cap, args.guard
            )
            print(f"  cvise: {row['cvise']}", flush=True)
            for tool in ("reduce", "cvise"):
                entry = row[tool]
                if isinstance(entry, dict) and "file" in entry:
                    entry["text"] = Path(str(entry["file"])).read_text()
        rows.append(row)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    print(
        "| input | minimal | before | repro reduce | C-Vise | reduce s / compiles "
        "| C-Vise s / compiles | reduce checks | C-Vise checks |"
    )
    for row in rows:
        print(_table_row(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
