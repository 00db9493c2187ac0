"""The third round of hostile angles (issue 36), run by ``bench/hostile_probe.py``.

- bad inputs: ``--output`` a link loop, a read-only ``--output`` (a read-only tmpfs, where
  this user may mount one), a YAML alias bomb as ``--config-file``: exit 2, one short line,
  nothing written;
- faults, each through the real command with the reproducers of ``tests/hostile/repros/``:
  a file that acts only in the main process (``os._exit(0)``, a replaced classifier); a
  case that forges a ``passed`` line and SIGTERMs ``repro`` (warm, fresh), then
  ``--resume``; terminal control and bidi text in a config value and an error; a case's
  error text with mentions, references, links, an image and HTML, through ``report`` and
  ``dashboard``; links, FIFOs and ``/dev/zero`` planted for ``merge`` and ``dashboard``;
  two case ids that make one folder name; a warm case that SIGSTOPs its template; a
  ``report`` SIGKILLed mid-way; secrets in everyday forms; a full disk and no file
  descriptors left (exit 4, one line); the scrubber on 1 MB of adversarial text.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "hostile" / "repros"
CASE = "hostile-live-text[sm_90-0]"
EVERYDAY = "hunter2-everyday"
DEPLOY_SECRET = "deploy-s3cr3t-0x5eed"


def command(argv: list[str], timeout: float = 300, **env: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [sys.executable, "-m", "suite.cli.main", *argv],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **env},
        )
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(exc.cmd, -1, "", f"timed out after {timeout} s")


def one_line(done: subprocess.CompletedProcess[str], status: int, needle: str = "") -> str:
    """Why ``done`` is not exit ``status`` with one short line holding ``needle`` ('' if it is)."""
    lines = done.stderr.strip().splitlines()
    problems = []
    if done.returncode != status:
        problems.append(f"exit {done.returncode}")
    if len(lines) != 1 or len(done.stderr) > 1000:
        problems.append(f"{len(lines)} lines, {len(done.stderr)} chars")
    if needle and needle not in done.stderr:
        problems.append(f"no {needle!r}")
    return "; ".join(problems) + (" | " + lines[-1][:200] if lines and problems else "")


def records(out: Path) -> list[dict[str, Any]]:
    runs = sorted((out / "runs").iterdir()) if (out / "runs").is_dir() else []
    if not runs or not (runs[-1] / "results.jsonl").is_file():
        return []
    return [json.loads(line) for line in (runs[-1] / "results.jsonl").read_text().splitlines()]


def head(path: Path) -> str:
    """The first MiB of a file (a copy of /dev/zero may be huge)."""
    with path.open("rb") as handle:
        return handle.read(1 << 20).decode(errors="replace")


def mounted(folder: Path, options: str) -> bool:
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True
    )
    return done.returncode == 0


def bad_inputs(work: Path, check: Callable[..., Any]) -> list[Any]:
    checks = []
    work.mkdir(parents=True)
    (work / "loop").symlink_to(work / "loop")
    done = command(["run", str(HOSTILE / "live_text.py"), "-o", str(work / "loop" / "out")])
    why = one_line(done, 2, "ELOOP")
    checks.append(check("bad-input", "--output a link loop", not why, why))
    lines, previous = ['l0: &l0 ["x","x","x","x","x","x","x","x","x","x"]'], "l0"
    for level in range(1, 9):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*{previous}"] * 10) + "]")
        previous = f"l{level}"
    lines.append(f"configs: [{{name: 'a b', junk: *{previous}}}]")
    bomb = work / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    out = work / "bomb-out"
    done = command(["run", str(HOSTILE / "alike.py"), "--config-file", str(bomb), "-o", str(out)])
    why = one_line(done, 2, "aliases") or ("wrote" if out.exists() else "")
    checks.append(check("bad-input", "a YAML alias bomb (10^9 nodes)", not why, why))
    readonly = work / "readonly"
    if mounted(readonly, "size=1m,ro"):
        try:
            done = command(["run", str(HOSTILE / "live_text.py"), "-o", str(readonly / "out")])
            why = one_line(done, 2)
            checks.append(check("bad-input", "--output on a read-only file system", not why, why))
        finally:
            subprocess.run(["umount", str(readonly)], check=False)
    return checks


def faults(work: Path, check: Callable[..., Any]) -> list[Any]:
    checks: list[Any] = []
    for step in (
        _parent_only,
        _forged_results,
        _terminal_text,
        _live_text,
        _links_for_readers,
        _alike_ids,
        _stopped_template,
        _killed_report,
        _everyday_secrets,
        _storage,
    ):
        folder = work / step.__name__.strip("_")
        folder.mkdir(parents=True)
        checks += step(folder, check)
    return checks


def _parent_only(work: Path, check: Callable[..., Any]) -> list[Any]:
    checks = []
    for act in ("exit", "classifier"):
        out = work / act
        done = command(["run", str(HOSTILE / "parent_only.py"), "-o", str(out)], PARENT_ONLY=act)
        outcomes = [r["outcome"] for r in records(out)]
        ok = done.returncode == 1 and outcomes == ["compiler-error"] * 2
        checks.append(
            check(
                "fault",
                f"a file that acts only in repro ({act})",
                ok,
                f"{done.returncode} {outcomes}",
            )
        )
    return checks


def _forged_results(work: Path, check: Callable[..., Any]) -> list[Any]:
    checks = []
    for isolation in ("warm", "fresh"):
        out, mark = work / isolation, work / f"{isolation}.mark"
        common = ["--isolation", isolation, "-j", "1", "-o", str(out)]
        first = command(["run", str(HOSTILE / "forger.py"), *common], FORGER_MARK=str(mark))
        done = command(["run", "--resume", *common], FORGER_MARK=str(mark))
        outcomes = sorted(r["outcome"] for r in records(out))
        ok = first.returncode == 143 and done.returncode == 1 and outcomes == ["compiler-error"] * 2
        why = f"{first.returncode} then {done.returncode}: {outcomes}"
        checks.append(check("fault", f"a forged passed line, then --resume ({isolation})", ok, why))
    return checks


def _terminal_text(work: Path, check: Callable[..., Any]) -> list[Any]:
    checks = []
    for fmt in ("plain", "table"):
        done = command(
            ["run", str(HOSTILE / "terminal.py"), "--format", fmt, "-o", str(work / fmt)]
        )
        shown = done.stdout + done.stderr
        raw = [repr(c) for c in ("\x1b", "\r", "\u202e") if c in shown]
        forged = [
            line for line in shown.splitlines() if line.startswith("hostile-terminal[sm_90-y]")
        ]
        why = f"raw {raw}, forged {forged[:1]}, exit {done.returncode}"
        ok = done.returncode == 1 and not raw and not forged
        checks.append(
            check("fault", f"terminal control in a config value and an error ({fmt})", ok, why)
        )
    return checks


def _live_text(work: Path, check: Callable[..., Any]) -> list[Any]:
    out = work / "out"
    command(["run", str(HOSTILE / "live_text.py"), "-o", str(out)])
    runs = sorted((out / "runs").iterdir()) if (out / "runs").is_dir() else []
    if not runs:
        return [check("fault", "a case's markup in issue.md and the dashboard", False, "no run")]
    command(["report", f"{runs[0]}:{CASE}", "--no-rerun", "--id", "live", "-o", str(out)])
    command(["dashboard", "-o", str(out)])
    issue = (out / "live" / "issue.md").read_text() if (out / "live" / "issue.md").is_file() else ""
    prose = issue.replace("`", "\0").split("\0")[::2]
    live = [
        s
        for s in ("@kernel_name", "@maintainer", "#1234", "GH-99", "![x](", "[click](", "<img")
        if any(s in part for part in prose)
    ]
    page = out / "dashboard" / "index.html"
    html = page.read_text() if page.is_file() else ""
    ok = bool(issue) and not live and bool(html) and "<img src=x" not in html
    why = f"live in issue.md: {live}; raw <img> in the dashboard: {'<img src=x' in html}"
    return [check("fault", "a case's markup in issue.md and the dashboard", ok, why)]


def _links_for_readers(work: Path, check: Callable[..., Any]) -> list[Any]:
    outside = work / "outside.txt"
    outside.write_text("password-outside-the-root")
    shards = []
    for k in (1, 2):
        out = work / f"s{k}"
        command(["run", str(HOSTILE / "live_text.py"), "--shard", f"{k}/2", "-o", str(out)])
        shards.extend(sorted((out / "runs").iterdir()) if (out / "runs").is_dir() else [])
    if len(shards) != 2:
        return [check("fault", "merge and dashboard through links and FIFOs", False, "no shards")]
    planted = shards[0] / "cases" / "planted"
    planted.mkdir(parents=True)
    (planted / "leak.txt").symlink_to(outside)
    (planted / "zero").symlink_to("/dev/zero")
    os.mkfifo(planted / "fifo")
    merged = command(["merge", *map(str, shards), "-o", str(work / "merged")], timeout=120)
    copied = [p for p in (work / "merged").rglob("*") if p.is_file() and not p.is_symlink()]
    leaked = [p.name for p in copied if "password-outside" in head(p)]
    runs = work / "s1" / "runs"
    (runs / "zero").mkdir()
    (runs / "zero" / "results.jsonl").symlink_to("/dev/zero")
    (runs / "fifo").mkdir()
    os.mkfifo(runs / "fifo" / "results.jsonl")
    dashboard = command(["dashboard", "-o", str(work / "s1")], timeout=120)
    checks = [
        check(
            "fault",
            "merge: a link out, a FIFO, /dev/zero in a shard",
            merged.returncode in (0, 1) and not leaked,
            f"exit {merged.returncode}, leaked {leaked}",
        ),
        check(
            "fault",
            "dashboard: results.jsonl a link to /dev/zero, a FIFO",
            dashboard.returncode == 0,
            f"exit {dashboard.returncode} {dashboard.stderr[-200:]}",
        ),
    ]
    return checks


def _alike_ids(work: Path, check: Callable[..., Any]) -> list[Any]:
    out = work / "out"
    command(["run", str(HOSTILE / "alike.py"), "-j", "1", "-o", str(out)])
    found = records(out)
    folders = {Path(p).parent for r in found for p in r["artifacts"].values()}
    own = all(
        any(f"<{r['config']['name']}>" in head(Path(p)) for p in r["artifacts"].values())
        for r in found
    )
    ok = len(found) == 2 and len(folders) == 2 and own
    return [
        check(
            "fault", "case ids 'a b' and 'a_b'", ok, f"{len(found)} cases, {len(folders)} folders"
        )
    ]


def _stopped_template(work: Path, check: Callable[..., Any]) -> list[Any]:
    out = work / "out"
    argv = ["run", str(HOSTILE / "stops_template.py"), "--isolation", "warm", "-j", "1"]
    done = command([*argv, "--timeout", "30", "-o", str(out)], timeout=240)
    found = sorted(r["config"]["n"] for r in records(out))
    ok = done.returncode == 1 and found == [0, 1]
    return [
        check(
            "fault",
            "a warm case that SIGSTOPs its template",
            ok,
            f"exit {done.returncode}, {found}",
        )
    ]


def _killed_report(work: Path, check: Callable[..., Any]) -> list[Any]:
    out = work / "out"
    command(["run", str(HOSTILE / "live_text.py"), "-o", str(out)])
    runs = sorted((out / "runs").iterdir()) if (out / "runs").is_dir() else []
    if not runs:
        return [check("fault", "a report SIGKILLed mid-way", False, "no run")]
    argv = ["report", f"{runs[0]}:{CASE}", "--no-rerun", "--id", "live", "-o", str(out)]
    killed = subprocess.Popen(
        [sys.executable, "-m", "suite.cli.main", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while (
        not list(out.glob(".live.new-*")) and killed.poll() is None and time.monotonic() < deadline
    ):
        time.sleep(0.01)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    drafted = bool(list(out.glob(".live.new-*")))
    done = command(argv)
    left = [p.name for p in out.glob(".live.*")]
    ok = done.returncode == 0 and not left
    why = f"killed with a draft: {drafted}; exit {done.returncode}; left {left}"
    return [check("fault", "a report SIGKILLed mid-way, then again", ok, why)]


def _everyday_secrets(work: Path, check: Callable[..., Any]) -> list[Any]:
    out = work / "out"
    command(
        ["run", str(HOSTILE / "everyday_secrets.py"), "-o", str(out)],
        HOSTILE_DEPLOY_SECRET=DEPLOY_SECRET,
    )
    found = [
        str(p.relative_to(out))
        for p in out.rglob("*")
        if p.is_file()
        and not p.is_symlink()
        and "sources" not in p.parts
        and any(s in head(p) for s in (EVERYDAY, DEPLOY_SECRET))
    ]
    ok = bool(records(out)) and not found
    return [
        check(
            "fault",
            "secrets in everyday forms and a secret variable's bare value",
            ok,
            str(found[:3]),
        )
    ]


def _storage(work: Path, check: Callable[..., Any]) -> list[Any]:
    checks = []
    script = (
        f"ulimit -n 8; exec {sys.executable} -m suite.cli.main run {HOSTILE / 'live_text.py'} "
        f"-o {work / 'fds'}"
    )
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300)
    why = one_line(proc, 4, "EMFILE")
    checks.append(check("fault", "no file descriptors left: exit 4, one line", not why, why))
    disk = work / "disk"
    if mounted(disk, "size=64k"):
        try:
            (disk / "filler").write_bytes(b"\0" * 60000)
            done = command(["run", str(HOSTILE / "live_text.py"), "-o", str(disk / "out")])
            why = one_line(done, 4, "ENOSPC")
            checks.append(
                check("fault", "a full disk: exit 4, one line, the file named", not why, why)
            )
        finally:
            subprocess.run(["umount", str(disk)], check=False)
    return checks


def scrubber(work: Path, check: Callable[..., Any]) -> list[Any]:
    """1 MB of each adversarial form, scrubbed in a child bounded at 20 s."""
    checks = []
    for unit in ("a.", "a-", "TOKEN", "x://a:", "-----BEGIN PRIVATE KEY-----", 'password="'):
        code = (
            "import time; from suite.engine.scrub import scrub_secrets; t = time.perf_counter(); "
            f"scrub_secrets(({unit!r} * 1048576)[:1048576]); print(time.perf_counter() - t)"
        )
        try:
            done = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, timeout=20
            )
            why = f"{float(done.stdout):.2f} s" if done.returncode == 0 else done.stderr[-200:]
            ok = done.returncode == 0
        except subprocess.TimeoutExpired:
            ok, why = False, "over 20 s"
        checks.append(check("fault", f"scrub 1 MB of {unit!r}", ok, why))
    return checks
