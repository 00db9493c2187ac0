# Sourced by the GPU reduction scripts (bench/reduce_gpu.sh, bench/capture_reduce_gpu.sh):
# reduced_check PROGRAM REDUCED MINIMAL STATE RUN_FOLDER
# prints the kernel sizes of PROGRAM, REDUCED and the hand-minimal MINIMAL (target: the
# reduced kernel at most 1.5 times MINIMAL's tokens) and the reduction's STATE, then launches
# REDUCED again on the GPU by itself (it must fail the same way) and prints its kernel. Its
# `repro run` output goes to $OUT/run-reduced.txt; the lines are also added to $SUMMARY.
reduced_check() {
  local program=$1 reduced=$2 minimal=$3 state=$4 runs=$5
  python3 - "$program" "$reduced" "$minimal" "$state" <<'PY' | tee -a "$SUMMARY"
import json, sys
from pathlib import Path

from suite.reduce.tree import kernel_measure

(program, reduced, minimal, state) = (Path(p) for p in sys.argv[1:])
sizes = {name: kernel_measure(path.read_text()) for name, path in
         (("program", program), ("reduced", reduced), ("hand-minimal", minimal))}
for name, (lines, tokens) in sizes.items():
    print(f"{name}: {lines} kernel lines, {tokens} tokens")
ratio = sizes["reduced"][1] / sizes["hand-minimal"][1]
print(f"reduced / hand-minimal tokens: {ratio:.2f} (target <= 1.5: {'met' if ratio <= 1.5 else 'NOT met'})")
if state.is_file():
    record = json.loads(state.read_text())
    keys = ("done", "fresh_check", "tries", "seconds", "rounds", "improvements")
    print("state: " + ", ".join(f"{k}={record.get(k)}" for k in keys))
    print("rejected: " + json.dumps(record.get("rejected", {}), sort_keys=True)[:2000])
PY
  timeout 300 python3 -m suite.cli.main run "$reduced" -t sm_90 --gpu on -o "$runs" \
    >"$OUT/run-reduced.txt" 2>&1
  echo "reduced file launched on the GPU: exit $? (1: it fails)" | tee -a "$SUMMARY"
  grep -m1 ':launch' "$OUT/run-reduced.txt" | cut -c1-300 >>"$SUMMARY"
  sed -n '/^@triton.jit/,/^@REPRO/p' "$reduced" | head -n 40 >>"$SUMMARY"
}
