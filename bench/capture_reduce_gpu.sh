#!/usr/bin/env bash
# On a GPU machine (sm_90, triton 3.6.0): a runtime failure in a user's program, from capture
# to a reduced kernel. bench/reduce_inputs/runtime/rmsnorm_program.py (a small model whose
# layers launch the fused add+RMSNorm kernel; triton-lang/triton#10474 at XBLOCK=16, 3
# stages) is run alone (it dies at its first synchronize; with --xblock 64 it runs), then
# under `repro capture`, whose finding goes through `repro report` (its repro.py run by
# itself must exit 1) and `repro reduce` (every candidate launched; measured against the
# hand-minimal kernel), and the reduced file is launched again. Everything under $OUT;
# summary.txt says what happened. REDUCE_S (default 200), JOBS (default: half the cores).
set -u
OUT=${OUT:-$(mktemp -d)}
REDUCE_S=${REDUCE_S:-200}
JOBS=${JOBS:-$(($(nproc) / 2 > 1 ? $(nproc) / 2 : 1))}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}  # the caller's paths kept (wheels carried there)
HERE=bench/reduce_inputs/runtime
PROGRAM=$HERE/rmsnorm_program.py
WORK="$OUT/work"
mkdir -p "$WORK"
SUMMARY="$OUT/summary.txt"
say() { echo "$*" | tee -a "$SUMMARY"; }
. bench/reduced_check.sh

# 1. The program by itself: it dies with the fault; with a larger tile it runs.
timeout 120 python3 "$PROGRAM" >"$OUT/program.txt" 2>&1
say "program alone: exit $? ($(grep -m1 -o 'CUDA error: [a-z ]*' "$OUT/program.txt"))"
timeout 120 python3 "$PROGRAM" --xblock 64 >"$OUT/program-x64.txt" 2>&1
say "program --xblock 64: exit $? ($(tail -n 1 "$OUT/program-x64.txt"))"

# 2. Under capture: the failing launch, confirmed in isolation, becomes a finding.
timeout 300 python3 -m suite.capture --output "$WORK" -- python3 "$PROGRAM" >"$OUT/capture.txt" 2>&1
say "capture: exit $? ($(grep -m1 'distinct failure' "$OUT/capture.txt"))"
grep 'repro capture:' "$OUT/capture.txt" | cut -c1-400 >>"$SUMMARY"
FINDING=$(ls "$WORK"/findings/*.json 2>/dev/null | head -n 1)
if [ -z "$FINDING" ]; then
  say "no finding from capture (see capture.txt)"
  exit 1
fi
ID=$(basename "$FINDING" .json)
cp "$FINDING" "$OUT/finding.json"

# 3. The report: its repro.py, run by itself, must show the fault.
timeout 300 python3 -m suite.cli.main report "$ID" -o "$WORK" >"$OUT/report.txt" 2>&1
say "report: exit $?"
for name in issue.md repro.py; do
  [ -f "$WORK/$ID/$name" ] && cp "$WORK/$ID/$name" "$OUT/report-$name"
done
if [ -f "$WORK/$ID/repro.py" ]; then
  (cd "$WORK/$ID" && timeout 120 python3 repro.py >"$OUT/repro-alone.txt" 2>&1)
  say "report's repro.py alone: exit $? ($(tail -n 1 "$OUT/repro-alone.txt"))"
fi
grep -h 'compute-sanitizer' "$WORK/$ID"/*.md 2>/dev/null | head -n 2 | cut -c1-300 >>"$SUMMARY"

# 4. The reduction, every candidate launched on the GPU.
timeout $((REDUCE_S + 120)) python3 -m suite.cli.main reduce "$FINDING" -o "$WORK" -j "$JOBS" \
  --time-budget "$REDUCE_S" >"$OUT/reduce.txt" 2>"$OUT/reduce-progress.txt"
say "reduce: exit $? ($(grep -m 1 'kernel lines' "$OUT/reduce.txt"))"
REDUCED=$(tail -n 1 "$OUT/reduce.txt")
if [ ! -f "$REDUCED" ]; then
  say "no reduced file (see reduce-progress.txt)"
  exit 1
fi
cp "$REDUCED" "$OUT/reduced_case.py"
# reduce's standalone reduced.py beside it, run by itself (no PYTHONPATH): exit 1 when the bug shows.
if [ -f "$(dirname "$REDUCED")"/reduced.py ]; then
  cp "$(dirname "$REDUCED")"/reduced.py "$OUT/reduced.py"
  (cd "$(dirname "$REDUCED")" && env -u PYTHONPATH python3 reduced.py >"$OUT/reduced-alone.txt" 2>&1)
  say "reduced.py alone: exit $?"
fi
cp "$(dirname "$REDUCED")/state.json" "$OUT/state.json" 2>/dev/null

# 5. The size against the hand-minimal kernel (the program's kernel is its library module's);
# the reduced file launched again by itself.
reduced_check "$HERE/fused_add_rmsnorm_sm90.py" "$REDUCED" "$HERE/minimal_descriptor_1d_pipelined.py" \
  "$(dirname "$REDUCED")/state.json" "$WORK/run-reduced"
cat "$SUMMARY"
