"""A fresh probe of the suite as a hostile user: bad inputs and injected faults.

    python bench/hostile_probe.py --json out.json

Bad inputs: every one must exit 2 with exactly one line on stderr and no traceback, and
write nothing into the output root. Faults (hostile reproducers, signals mid-run,
concurrent resumes, simultaneous creates): no data lost (every case recorded exactly once,
summary.json and junit.xml written), no process left behind, no secret in any written file.
Prints one line per check that failed and the totals; docs/hostile.md keeps the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "hostile" / "repros"
MISBEHAVE = HOSTILE / "misbehave.py"
sys.path.insert(0, str(HOSTILE))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import hostile_probe_round2 as round2  # noqa: E402
import hostile_probe_round3 as round3  # noqa: E402
import hostile_probe_round4 as round4  # noqa: E402
from misbehave import FAULTS  # noqa: E402

SECRET_VALUES = (
    "hunter2-lowercase",
    "abcdefghijklmnop0123456789",
    "alice:s3cr3t-in-url",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB",
)


@dataclass
class Check:
    kind: str  # "bad-input" or "fault"
    name: str
    ok: bool
    why: str = ""


def repro(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    return subprocess.run(
        [sys.executable, "-m", "suite.cli.main", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=900,
    )


# ------------------------------------------------------------------------------ bad inputs


def bad_inputs(work: Path) -> list[tuple[str, list[str]]]:
    files = work / "files"
    files.mkdir()
    (files / "nonutf8.yaml").write_bytes(b"\xff\xfe- {x: 1}\n")
    (files / "garbage.yaml").write_text("- {BLOCK_M: [unclosed\n")
    (files / "notalist.yaml").write_text("BLOCK_M: 64\n")
    (files / "plain.txt").write_text("x")
    base = "BLOCK_M: 64, BLOCK_N: 64, num_warps: 4, num_stages: 2, dtype: fp16"
    for name, value in {
        "float": base.replace("BLOCK_M: 64", "BLOCK_M: 64.0"),
        "bool": base.replace("num_stages: 2", "num_stages: true"),
        "string": base.replace("BLOCK_M: 64", "BLOCK_M: '64'"),
        "null": base.replace("BLOCK_M: 64", "BLOCK_M: null"),
        "list": base.replace("BLOCK_M: 64", "BLOCK_M: [64]"),
        "outside": base.replace("BLOCK_M: 64", "BLOCK_M: 48"),
        "unknown": base + ", BOGUS: 1",
    }.items():
        (files / f"type-{name}.yaml").write_text(f"- {{{value}}}\n")
    for name, text in {
        "garbage": "[[known]\nid=",
        "lacks": "[[known]]\nid = 'x'\n",
        "range": "[[known]]\nid='x'\nrepro='r'\nsignature='s'\nkind='k'\ntriton='>>1'\n",
    }.items():
        (files / f"baseline-{name}.toml").write_text(text)
    (files / "baseline-nonutf8.toml").write_bytes(b"\xff[[known]]\n")
    for name, text in {
        "list": "[]",
        "empty": "{}",
        "types": '{"repro": 1}',
        "null": "null",
        "str": '"x"',
    }.items():
        (files / f"finding-{name}.json").write_text(text)
    (files / "finding-nonutf8.json").write_bytes(b"\xff\xfe{}")
    for name, text in {
        "syntax": "def (:\n",
        "nothing": "x = 1\n",
        "systemexit": "raise SystemExit(0)\n",
        "keyboard": "raise KeyboardInterrupt\n",
        "importerror": "import not_a_module_anywhere\n",
    }.items():
        (files / f"repro_{name}.py").write_text(text)
    (files / "repro_nonutf8.py").write_bytes(b"\xff\xfe = 1\n")
    out = str(work / "out")
    cases: list[tuple[str, list[str]]] = []
    numeric = {
        "run": ["run", "tma-copy"],
        "matrix": ["matrix", "tma-copy", "--triton", "3.9.0"],
        "explore": ["explore", "tma-copy"],
        "bisect": [
            "bisect",
            str(files / "finding-empty.json"),
            "--good",
            "3.9.0",
            "--bad",
            "3.5.0",
        ],
        "report": ["report", str(files / "finding-empty.json")],
        "replay": ["replay", str(files / "finding-empty.json")],
    }
    for command, argv in numeric.items():
        for option in ("--timeout", "--memory-cap"):
            for value in ("nan", "inf", "-inf", "-1", "0", "1e309"):
                cases.append((f"{command} {option} {value}", [*argv, option, value, "-o", out]))
    for command in ("run", "explore", "report"):
        argv = numeric[command]
        cases += [
            (f"{command} --python /nonexistent", [*argv, "--python", "/nonexistent", "-o", out]),
            (f"{command} --python not executable", [*argv, "--python", str(files / "plain.txt")]),
            (f"{command} --output is a file", [*argv, "-o", str(files / "plain.txt")]),
            (f"{command} --isolation cold", [*argv, "--isolation", "cold", "-o", out]),
        ]
    for path in sorted(files.glob("*.yaml")):
        cases.append(
            (
                f"run --config-file {path.name}",
                ["run", "tma-copy", "--config-file", str(path), "-o", out],
            )
        )
    for path in sorted(files.glob("baseline-*.toml")):
        cases.append(
            (f"run --baseline {path.name}", ["run", "tma-copy", "--baseline", str(path), "-o", out])
        )
    for path in sorted(files.glob("finding-*.json")):
        for command in ("bisect", "report", "replay"):
            extra = ["--good", "3.9.0", "--bad", "3.5.0"] if command == "bisect" else []
            cases.append((f"{command} {path.name}", [command, str(path), *extra, "-o", out]))
    for good, bad in (("abc", "3.5.0"), ("3.5.0", "3.5.0"), ("3.5.0", "x.y"), ("9.9.9", "3.5.0")):
        cases.append(
            (
                f"bisect --good {good} --bad {bad}",
                [
                    "bisect",
                    str(files / "finding-empty.json"),
                    "--good",
                    good,
                    "--bad",
                    bad,
                    "-o",
                    out,
                ],
            )
        )
    for target in ("sm_42", "", "sm_foo", "sm_80", "gfx90a"):
        cases.append((f"run -t {target!r}", ["run", "tma-copy", "-t", target, "-o", out]))
    for configs in ("", "nope", ","):
        cases.append((f"run -c {configs!r}", ["run", "tma-copy", "-c", configs, "-o", out]))
    for spec in ("0/0", "3/2", "x", "1/0", "1/2/3"):
        cases.append((f"run --shard {spec}", ["run", "tma-copy", "--shard", spec, "-o", out]))
    for report_id in ("runs", "findings", "matrix", "../x", ".x", "a/b", ""):
        cases.append(
            (
                f"report --id {report_id!r}",
                ["report", str(files / "finding-empty.json"), "--id", report_id, "-o", out],
            )
        )
    for name in ("exit_at_import", "segv_at_import", "hang_at_import", "bad_target", "bad_label"):
        cases.append(
            (f"run {name}.py", ["run", str(HOSTILE / f"{name}.py"), "--timeout", "5", "-o", out])
        )
        cases.append(
            (f"list {name}.py", ["list", str(HOSTILE / f"{name}.py")])
            if name != "hang_at_import"
            else (
                f"explore {name}.py",
                ["explore", str(HOSTILE / f"{name}.py"), "--timeout", "5", "-o", out],
            )
        )
    for path in sorted(files.glob("repro_*.py")):
        cases.append((f"run {path.name}", ["run", str(path), "-o", out]))
    cases += [
        ("run no-such-repro", ["run", "no-such-repro", "-o", out]),
        ("run missing.py", ["run", str(work / "missing.py"), "-o", out]),
        ("run --resume nothing", ["run", "--resume", "-o", out]),
        ("run --resume not a run", ["run", "--resume", str(files), "-o", out]),
        ("run --frobnicate", ["run", "--frobnicate"]),
        ("matrix without releases", ["matrix", "tma-copy", "-o", out]),
        ("dashboard without a root", ["dashboard", "-o", str(work / "nowhere")]),
        ("run -j 0", ["run", "tma-copy", "-j", "0", "-o", out]),
    ]
    return cases


def probe_bad_inputs(work: Path) -> list[Check]:
    cases = bad_inputs(work)

    def one(case: tuple[str, list[str]]) -> Check:
        name, argv = case
        done = repro(*argv, cwd=work)
        lines = done.stderr.strip().splitlines()
        problems = []
        if done.returncode != 2:
            problems.append(f"exit {done.returncode}")
        if len(lines) != 1:
            problems.append(f"{len(lines)} stderr lines")
        if "Traceback" in done.stderr:
            problems.append("traceback")
        return Check(
            "bad-input", name, not problems, "; ".join(problems) + " " + " | ".join(lines[-2:])
        )

    with ThreadPoolExecutor(2) as pool:
        checks = list(pool.map(one, cases))
    survivors = left_behind()
    checks.append(Check("bad-input", "no process left", not survivors, str(survivors)))
    out = work / "out"
    if out.exists() and any(out.rglob("*")):
        written = sorted(str(p.relative_to(out)) for p in out.rglob("*"))[:5]
        checks.append(Check("bad-input", "output root untouched", False, f"wrote {written}"))
    return checks


# ------------------------------------------------------------------------------ faults


def alive(pids: list[int]) -> list[int]:
    living = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                living.append(pid)
        except psutil.NoSuchProcess:
            continue
    return living


#: Set in this probe's environment at start: every process a command it runs starts carries it
#: in /proc/PID/environ (a forked case shows its template's, which has it too), and no other
#: process on the machine does (this probe's own /proc entry shows the environment it
#: started with).
MARKER = "HOSTILE_PROBE_MARKER"


def marked() -> list[int]:
    """Live processes (zombies left out) that a command of this probe started."""
    needle = f"{MARKER}={os.environ[MARKER]}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if state not in (b"Z", b"X") and needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def left_behind(patience_s: float = 30.0) -> list[int]:
    """The probe's processes still alive once every command has ended, after ``patience_s``
    for the cleanup a SIGKILLed run's template or keeper does on its own."""
    deadline = time.monotonic() + patience_s
    while marked() and time.monotonic() < deadline:
        time.sleep(0.2)
    return marked()


def pids_in(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def sleepers(tag: str) -> list[int]:
    return [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if (p.info["cmdline"] or []) == ["sleep", tag]
    ]


def secrets_in(root: Path) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and "sources" not in path.parts:
            text = path.read_text(errors="replace")
            found += [f"{path.name}:{s[:8]}" for s in SECRET_VALUES if s in text]
    return found


def run_records(out: Path) -> tuple[Path, list[dict]]:
    (run,) = (out / "runs").iterdir()
    results = run / "results.jsonl"
    lines = results.read_text().splitlines() if results.exists() else []
    return run, [json.loads(line) for line in lines]


def probe_hostile_runs(work: Path) -> list[Check]:
    checks = []
    for isolation in ("warm", "fresh"):
        for workers in ("1", "2"):
            out, pids = work / f"faults-{isolation}-{workers}", work / f"pids-{isolation}-{workers}"
            done = repro(
                "run",
                str(MISBEHAVE),
                "-c",
                "faults",
                "-j",
                workers,
                "--timeout",
                "30",
                "--memory-cap",
                "1",
                "--isolation",
                isolation,
                "-o",
                str(out),
                env={"HOSTILE_PIDS": str(pids)},
            )
            run, records = run_records(out)
            by_fault = {r["config"]["fault"]: r for r in records}
            survivors = alive(pids_in(pids)) + left_behind()
            leaked = secrets_in(out)
            whole = (run / "summary.json").is_file() and (run / "junit.xml").is_file()
            for fault in FAULTS[:-1]:  # every fault but the hang (the signal probes stop one)
                problems = []
                if fault not in by_fault:
                    problems.append("not recorded")
                if done.returncode != 1 or "Traceback" in done.stderr:
                    problems.append(f"run exit {done.returncode}")
                if fault in ("fork-escape", "double-fork") and survivors:
                    problems.append(f"survivors {survivors}")
                if fault == "many-children" and sleepers("1000.125"):
                    problems.append(f"survivors {sleepers('1000.125')}")
                if fault == "secrets" and leaked:
                    problems.append(f"secrets {leaked}")
                oom = by_fault.get(fault, {})
                if fault == "oom" and not oom.get("detail", {}).get("memory_cap"):
                    problems.append(f"not killed at the cap: {oom.get('signature')}")
                if survivors and fault == "ok":
                    problems.append(f"processes left {survivors}")
                if not whole:
                    problems.append("no summary/junit")
                checks.append(
                    Check(
                        "fault",
                        f"{fault} ({isolation}, -j {workers})",
                        not problems,
                        "; ".join(problems),
                    )
                )
            if len(records) != len(by_fault):
                checks.append(Check("fault", f"duplicates ({isolation})", False, str(len(records))))
    return checks


def probe_signals(work: Path, rounds: int) -> list[Check]:
    checks = []
    rng = random.Random(14)
    for round_ in range(rounds):
        for signum, expected in ((signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGKILL, -9)):
            out = work / f"signal-{signum}-{round_}"
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "suite.cli.main",
                    "run",
                    str(MISBEHAVE),
                    "-c",
                    "slow",
                    "-j",
                    "2",
                    "-o",
                    str(out),
                ],
                env={**os.environ, "HOSTILE_SLEEP": "0.4"},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            deadline = time.monotonic() + 120
            while not list(out.glob("runs/*/run.json")) and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(rng.uniform(0.0, 3.0))
            proc.send_signal(signum)
            _, stderr = proc.communicate(timeout=120)
            run, before = run_records(out)
            problems = []
            if len(before) < 8 and proc.returncode != expected:
                problems.append(f"exit {proc.returncode}")
            if "Traceback" in stderr:
                problems.append("traceback")
            if signum != signal.SIGKILL and not (run / "summary.json").is_file():
                problems.append("no partial summary")
            done = repro("run", "--resume", "-o", str(out), env={"HOSTILE_SLEEP": "0"})
            _, after = run_records(out)
            ids = [r["case_id"] for r in after]
            if done.returncode != 0 or len(ids) != 8 or len(set(ids)) != 8:
                distinct = len(set(ids))
                problems.append(f"after resume: exit {done.returncode}, {len(ids)}/{distinct}")
            survivors = left_behind()
            if survivors:
                problems.append(f"processes left {survivors}")
            name = f"{signal.Signals(signum).name} after {len(before)}/8 cases, then --resume"
            checks.append(Check("fault", name, not problems, "; ".join(problems)))
    return checks


def probe_sigkill_hung(work: Path) -> list[Check]:
    """SIGKILL (which no process can catch) of a run whose case hangs and has an escaped
    child: nothing of the run may stay, warm or fresh, one worker or two."""
    checks = []
    for isolation in ("warm", "fresh"):
        for workers in ("1", "2"):
            pids = work / f"hung-pids-{isolation}-{workers}"
            argv = ["run", str(MISBEHAVE), "-c", "hang", "-j", workers, "--timeout", "600"]
            argv += ["--isolation", isolation, "-o", str(work / f"hung-{isolation}-{workers}")]
            proc = subprocess.Popen(
                [sys.executable, "-m", "suite.cli.main", *argv],
                env={**os.environ, "HOSTILE_PIDS": str(pids)},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + 120
            while len(pids_in(pids)) < 2 and time.monotonic() < deadline:
                time.sleep(0.1)
            started = len(pids_in(pids)) == 2
            proc.kill()
            proc.wait()
            survivors = left_behind()
            problems = [] if started else ["the hung case never started"]
            if survivors:
                problems.append(f"processes left {survivors}")
            name = f"SIGKILL of a run with a hung case ({isolation}, -j {workers})"
            checks.append(Check("fault", name, not problems, "; ".join(problems)))
    return checks


# A credential in a reproducer's own source: the run carries a byte-exact copy (its hash
# loads it again), and nothing rendered from it (report, issue body, repro.py) publishes it.
SOURCE_SECRET = "ghp_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8Nn"


def probe_secret_in_source(work: Path) -> list[Check]:
    leaky = work / "leaky" / "leaky.py"
    leaky.parent.mkdir()
    # A reproducer whose trigger still fails on the newest release (dot_mma's is refused
    # there since 3.9.0: its run exited 0 and the check had nothing to read).
    text = (ROOT / "tests" / "data" / "closure" / "module_constants.py").read_text()
    note = f"    # deploy with GITHUB_TOKEN={SOURCE_SECRET} password=hunter2-in-source\n"
    anchor = "    a_desc = tl.make_tensor_descriptor(\n"
    text = text.replace(anchor, note + anchor)
    leaky.write_text(text)
    out = work / "leaky" / "out"
    case = "closure-module-constants[sm_90-True-4-3]"
    ran = repro("run", str(leaky), "-c", "trigger", "-t", "sm_90", "-o", str(out))
    run, _ = run_records(out)
    reported = repro("report", f"{run}:{case}", "-o", str(out), "--id", "leaky")
    body = repro("report", f"{run}:{case}", "-o", str(out), "--id", "leaky", "--format", "github")
    problems = []
    if (
        ran.returncode != 1
        or reported.returncode != 0
        or not (out / "leaky" / "repro.py").is_file()
    ):
        problems.append(f"exits {ran.returncode}/{reported.returncode}, no repro.py")
    carried = list((run / "sources").glob("*-leaky.py"))
    for path in out.rglob("*"):
        secret = SOURCE_SECRET in path.read_text(errors="replace") if path.is_file() else False
        if secret and path not in carried:
            problems.append(f"in {path.relative_to(out)}")
    for printed in (ran, reported, body):
        if SOURCE_SECRET in printed.stdout + printed.stderr:
            problems.append("printed")
    exact = len(carried) == 1 and carried[0].read_bytes() == leaky.read_bytes()
    checks = [
        Check(
            "fault",
            "a credential in a reproducer's source: not published",
            not problems,
            "; ".join(problems),
        )
    ]
    checks.append(Check("fault", "its carried copy is byte-exact", exact, str(carried)))
    return checks


def probe_concurrency(work: Path) -> list[Check]:
    checks = []
    out = work / "two-resumes"
    first = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "suite.cli.main",
            "run",
            str(MISBEHAVE),
            "-c",
            "slow",
            "-j",
            "1",
            "-o",
            str(out),
        ],
        env={**os.environ, "HOSTILE_SLEEP": "0.5"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not list(out.glob("runs/*/run.lock")) and time.monotonic() < deadline:
        time.sleep(0.1)
    second = repro("run", "--resume", "-o", str(out))
    first.wait(timeout=300)
    _, records = run_records(out)
    ids = [r["case_id"] for r in records]
    ok = (
        second.returncode == 2
        and "in use by pid" in second.stderr
        and len(set(ids)) == len(ids) == 8
    )
    checks.append(Check("fault", "second resume of a held run", ok, second.stderr.strip()))

    sys.path.insert(0, str(ROOT))
    from suite.engine import RunStore

    with ThreadPoolExecutor(30) as pool:
        stores = list(pool.map(lambda _: RunStore.create(work / "creates", {}), range(30)))
    checks.append(
        Check("fault", "30 simultaneous RunStore.create", len({s.folder for s in stores}) == 30)
    )

    outs = [work / "matrix"] * 2
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "suite.cli.main",
                "matrix",
                str(MISBEHAVE),
                "-c",
                "faults",
                "--python",
                sys.executable,
                "--memory-cap",
                "1",  # the "oom" fault holds 3 GiB: under the default 8 GiB cap it would hang
                "--timeout",
                "30",
                "-o",
                str(o),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for o in outs
    ]
    for p in procs:
        p.wait(timeout=600)
    folders = (
        list((work / "matrix" / "matrix").iterdir())
        if (work / "matrix" / "matrix").is_dir()
        else []
    )
    checks.append(Check("fault", "two matrices started together", len(folders) == 2, str(folders)))
    return checks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", help="write every check here")
    parser.add_argument("--signal-rounds", type=int, default=3)
    parser.add_argument(
        "--round",
        choices=("all", "1", "2", "3", "4"),
        default="all",
        help="only issue 14's, 29's, 36's or 36's second (the kernel's boundary) angles",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="repro-probe-"))
    # The commands' temporary folders go to a folder of the probe's own: other runs on the
    # machine make /tmp/repro-fifo-* of theirs, and those are not this probe's to count.
    private_tmp = work / "tmp"
    private_tmp.mkdir()
    os.environ["TMPDIR"] = str(private_tmp)
    os.environ[MARKER] = uuid.uuid4().hex
    tempfile.tempdir = None
    started = time.monotonic()
    try:
        checks: list[Check] = []
        first = [
            probe_bad_inputs,
            probe_hostile_runs,
            lambda w: probe_signals(w, args.signal_rounds),
            probe_sigkill_hung,
            probe_secret_in_source,
            probe_concurrency,
        ]
        second = [
            lambda w: round2.bad_inputs(w, Check),
            lambda w: round2.planted_runs(w, Check, left_behind),
            lambda w: round2.concurrent_accepts(w, Check),
        ]
        third = [
            lambda w: round3.bad_inputs(w / "round3-bad", Check),
            lambda w: round3.faults(w / "round3", Check),
            lambda w: round3.scrubber(w, Check),
        ]
        fourth = [lambda w: round4.faults(w / "round4", Check)]
        steps = {
            "all": first + second + third + fourth,
            "1": first,
            "2": second,
            "3": third,
            "4": fourth,
        }[args.round]
        for step in steps:
            found = step(work)
            checks += found
            failed = sum(not c.ok for c in found)
            print(f"{len(found)} checks, {failed} failed", flush=True)
        survivors = left_behind()
        left = sorted(str(p.name) for p in private_tmp.glob("repro-*"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    checks.append(Check("fault", "no repro-fifo-* left", not left, str(sorted(left)[:3])))
    checks.append(Check("fault", "no process left at the end", not survivors, str(survivors)))
    for check in checks:
        if not check.ok:
            print(f"FAIL {check.kind}: {check.name}: {check.why}")
    for kind in ("bad-input", "fault"):
        mine = [c for c in checks if c.kind == kind]
        print(f"{kind}: {sum(c.ok for c in mine)}/{len(mine)} passed")
    print(f"{time.monotonic() - started:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(c) for c in checks], indent=1))
    return 0 if all(c.ok for c in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
