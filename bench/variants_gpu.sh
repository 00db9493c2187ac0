#!/usr/bin/env bash
# On an sm_90 GPU: the reports of the two runtime findings explore recorded on the H100
# (docs/results/2026-11-25-runtime-gpu/), each with its pass/fail table of variants launched
# there (stages 1..N, warp specialization, tiles), the first pass where the failure and the
# variant that avoids it part (compile-only), and compute-sanitizer's first error (the
# finding's minimal config re-run on the GPU, then under memcheck/racecheck/synccheck).
# One try each; everything under $OUT. Run from the repository root.
set -u
OUT=${OUT:-$(mktemp -d)}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}  # the caller's paths kept (wheels carried there)
work=$(mktemp -d)
mkdir -p "$work/findings"
cp docs/results/2026-11-25-runtime-gpu/upstream-*.json "$work/findings/"
{
  date -u +%Y-%m-%dT%H:%MZ
  python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  command -v compute-sanitizer && compute-sanitizer --version | tail -1
} >"$OUT/versions.txt" 2>&1
one() {
  id=$1
  log="$OUT/report-$id.txt"
  start=$(date +%s)
  timeout "${REPORT_S:-540}" python3 -m suite.cli.main report "$id" -o "$work" >"$log" 2>&1
  echo "report exit $? in $(( $(date +%s) - start )) s" >>"$log"
  mkdir -p "$OUT/$id"
  for name in issue.md comment.md report.json variants.json repro.py explain/explain.json; do
    [ -f "$work/$id/$name" ] && cp "$work/$id/$name" "$OUT/$id/$(basename "$name")"
  done
  grep -A 12 '^\*\*Variants\*\*' "$work/$id"/*.md >>"$log" 2>/dev/null
  grep -h 'compute-sanitizer\|Against the variant' "$work/$id"/*.md >>"$log" 2>/dev/null
}
# Both at once (the device allows 10 minutes a command); launches share the one GPU.
one upstream-6691-pipelined-dot-and-sum-f4683ab7d156 &
one upstream-10474-descriptor-1d-pipelined-126948bb4a6c &
wait
tail -n 30 "$OUT"/report-*.txt
rm -rf "$work"
