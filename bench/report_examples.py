"""Regenerate ``reports/examples/``: what ``repro report --verify`` writes today.

    python bench/report_examples.py            # rewrite reports/examples/<name>/
    python bench/report_examples.py --check    # exit 1 when an example differs

Each example is a real run of a built-in reproducer under a release venv, then
``repro report --verify`` of its case, through the real command line. What depends on the
machine or the moment (scratch folders, run stamps, the platform line) is replaced by a
placeholder, here and in the comparison alike; ``tests/test_repro_script.py`` compares the
files in :data:`COMPARED` with the checked-in ones.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES_DIR = ROOT / "reports" / "examples"
#: The files a change of the tool's templates or logic changes; the attachments (output,
#: MLIR reproducers) hold the machine's paths and are written but not compared.
COMPARED = ("repro.py", "snippet.py", "issue.md", "comment.md")


@dataclass(frozen=True)
class Example:
    """One example report: a built-in reproducer's trigger case under one release."""

    name: str
    repro: str
    case: str
    release: str
    #: Report it as a new bug (an empty baseline), not as a comment on a known issue.
    as_new: bool = False


EXAMPLES = (
    Example(
        "assign-latencies-sm100",
        "tma-gemm-prefetch",
        "tma-gemm-prefetch[sm_100-64x64x32-w4-s2]",
        "3.5.0",
    ),
    Example(
        "ws-pointer-dot-sm90",
        "upstream-9728-ws-pointer-dot-hopper",
        "upstream-9728-ws-pointer-dot-hopper[sm_90-128x128x64-w4-s3-wsTrue]",
        "3.9.0",
        as_new=True,
    ),
)

_VOLATILE = (
    (re.compile(r"/tmp/[\w.-]+"), "/tmp/<scratch>"),
    (re.compile(r"\b\d{8}-\d{6}\b"), "<run>"),
    (re.compile(r"^- OS: .*$", re.M), "- OS: <platform>"),
    (re.compile(r"^- Python: .*$", re.M), "- Python: <python>"),
    # A long line is cut at a fixed width after its paths are shown, so where it is cut moves
    # with the length of the machine's paths.
    (re.compile(r"^(.{0,80}).* \.\.\. \[\d+ chars cut\]$", re.M), r"\1 ... <cut>"),
)


def normalized(text: str) -> str:
    """``text`` with what depends on the machine or the moment replaced by placeholders."""
    from suite.files import cache_root
    from suite.toolchain.venvs import venv_root

    text = text.replace(str(ROOT), "<repo>")
    # The release venvs and the cache folder live where this machine keeps them
    # ($REPRO_VENV_ROOT, $XDG_CACHE_HOME): shown as in a default home.
    text = text.replace(str(venv_root()), "~/.cache/triton-repro-suite/venvs")
    text = text.replace(str(cache_root()), "~/.cache/triton-repro-suite")
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


def _repro(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    paths = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": paths, "COLUMNS": "200"}
    command = [sys.executable, "-m", "suite.cli.main", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def generate(example: Example, work: Path) -> dict[str, str]:
    """The files of ``example``'s report, normalized, by name."""
    from suite.toolchain.venvs import for_version

    python = for_version(example.release).python
    out = work / example.name
    argv = ["run", example.repro, "-c", "trigger", "--python", python, "-o", str(out)]
    ran = _repro(*argv, cwd=work)
    if ran.returncode not in (0, 1):
        raise RuntimeError(f"repro run {example.repro}: {ran.stderr.strip()[-400:]}")
    (run,) = (out / "runs").iterdir()
    args = ["report", f"{run}:{example.case}", "-o", str(out), "--id", example.name, "--verify"]
    if example.as_new:
        (work / "empty-baseline.toml").write_text("")
        args += ["--baseline", str(work / "empty-baseline.toml")]
    reported = _repro(*args, cwd=work)
    if reported.returncode != 0:
        raise RuntimeError(f"repro report {example.case}: {reported.stderr.strip()[-400:]}")
    folder = out / example.name
    files = {p.name: normalized(p.read_text(errors="replace")) for p in folder.iterdir()}
    record = json.loads(files["report.json"])
    if not (record.get("verification") or {}).get("ok"):
        raise RuntimeError(f"{example.name}: not verified: {record.get('verification')}")
    return files


def differences(example: Example, files: dict[str, str]) -> list[str]:
    """The compared files of ``example`` that differ from the checked-in ones."""
    folder = EXAMPLES_DIR / example.name
    return [
        name
        for name in COMPARED
        if files.get(name) != ((folder / name).read_text() if (folder / name).is_file() else None)
    ]


def write(example: Example, files: dict[str, str]) -> None:
    """Replace ``reports/examples/<name>/`` (this script's own folder) with ``files``."""
    folder = EXAMPLES_DIR / example.name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, text in sorted(files.items()):
        (folder / name).write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when an example differs")
    args = parser.parse_args(argv)
    changed = []
    with tempfile.TemporaryDirectory(prefix="report-examples-") as work:
        for example in EXAMPLES:
            files = generate(example, Path(work))
            differ = differences(example, files)
            if differ:
                changed.append(f"{example.name}: {', '.join(differ)}")
            if not args.check:
                write(example, files)
    for line in changed:
        print(f"{'differs' if args.check else 'rewritten'}: {line}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
