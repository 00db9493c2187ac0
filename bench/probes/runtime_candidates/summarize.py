"""One line per case of the runs given (their output roots): outcome, signature, and the
ptxas differential's verdict with each build's result. ``--failing ROOT`` prints the
``RUN_DIR:CASE`` subject of each failing launch instead (for ``repro report``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def results(root: Path) -> list[tuple[Path, dict]]:
    found = []
    for run in sorted((root / "runs").glob("*/")):
        lines = (
            (run / "results.jsonl").read_text().splitlines()
            if (run / "results.jsonl").is_file()
            else []
        )
        found += [(run, json.loads(line)) for line in lines if line.strip()]
    return found


def line(record: dict) -> str:
    said = f"{record['case_id']}: {record['outcome']}"
    if record.get("signature"):
        said += f" ({record['signature']})"
    differential = (record.get("detail") or {}).get("ptxas")
    if differential:
        runs = "; ".join(
            f"ptxas {r['version']}{' -O0' if r['opt_level'] == '0' else ''}: "
            f"{r['signature'] or r['outcome']} (same PTX: {r['same_ptx']}, "
            f"SASS instructions unlike the bundled run's: {r.get('sass_differs')})"
            for r in differential["runs"]
        )
        said += f"\n    ptxas differential: {differential['verdict']}: {differential['reason']}"
        said += f"\n    {runs or differential['note']}"
    return said


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--failing":
        for run, record in results(Path(argv[1])):
            if record["outcome"] in ("wrong-result", "runtime-error", "crash", "timeout"):
                print(f"{run}:{record['case_id']}")
        return 0
    for root in argv:
        for _, record in results(Path(root)):
            print(line(record))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
