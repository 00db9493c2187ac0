#!/usr/bin/env bash
# On an sm_90 GPU: `repro report --verify` of the two runtime findings explore recorded
# (docs/results/2026-11-25-runtime-gpu/), each repro.py run by itself, and run again at the
# nearest passing config (one edit of its CONFIG line). Outputs under $OUT.
set -u
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT/work/findings"
cp docs/results/2026-11-25-runtime-gpu/upstream-*.json "$OUT/work/findings/"
report() {  # finding, CONFIG edit (sed expression) for the nearest passing config
  python3 -m suite.cli.main report "$1" --verify -o "$OUT/work" >"$OUT/report-$1.txt" 2>&1
  cd "$OUT/work/$1" || return
  python3 repro.py >>"$OUT/report-$1.txt" 2>&1; echo "repro.py exit $?" >>"$OUT/report-$1.txt"
  sed "$2" repro.py >nearest.py
  grep '^CONFIG' nearest.py >>"$OUT/report-$1.txt"
  python3 nearest.py >>"$OUT/report-$1.txt" 2>&1; echo "nearest exit $?" >>"$OUT/report-$1.txt"
  cp repro.py "$OUT/repro-$1.py"
}
report upstream-6691-pipelined-dot-and-sum-f4683ab7d156 "s/'num_stages': 2/'num_stages': 1/" &
report upstream-10474-descriptor-1d-pipelined-126948bb4a6c "s/'XBLOCK': 8/'XBLOCK': 32/" &
wait
tail -n 12 "$OUT"/report-*.txt
rm -rf "$OUT/work"
