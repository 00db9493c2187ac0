#!/usr/bin/env bash
# On a GPU machine (sm_90, triton 3.6.0): `repro reduce` of a runtime failure, end to end.
# The realistic program bench/reduce_inputs/runtime/fused_add_rmsnorm_sm90.py (102 kernel
# lines, triton-lang/triton#10474 planted) is explored on the GPU to a finding (if explore
# makes none, the finding is made from one launch of its trigger config), reduced with every
# candidate launched, measured against the hand-minimal kernel beside it (target: at most 1.5
# times its tokens), and the reduced file is launched again on the GPU to show it still
# faults. Everything goes under $OUT; summary.txt says what happened. Each step has its own
# time limit and a failed step does not stop the later ones: the script gets one try.
# Budgets (seconds): EXPLORE_S (60; 0 skips explore), REDUCE_S (270): with them the whole script fits one
# 10-minute device command. JOBS compiles at once (default: half the cores).
set -u
OUT=${OUT:-$(mktemp -d)}
EXPLORE_S=${EXPLORE_S:-60}
REDUCE_S=${REDUCE_S:-270}
JOBS=${JOBS:-$(($(nproc) / 2 > 1 ? $(nproc) / 2 : 1))}
HERE=bench/reduce_inputs/runtime
PROGRAM=$HERE/fused_add_rmsnorm_sm90.py
MINIMAL=$HERE/minimal_descriptor_1d_pipelined.py
WORK="$OUT/work"
mkdir -p "$WORK"
SUMMARY="$OUT/summary.txt"
say() { echo "$*" | tee -a "$SUMMARY"; }
. bench/reduced_check.sh

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'cuda', torch.version.cuda)"
  echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-unset} jobs=$JOBS explore=${EXPLORE_S}s reduce=${REDUCE_S}s"
} 2>&1 | tee "$OUT/environment.txt" >>"$SUMMARY"

# 1. The hand-minimal kernel launched by itself (exit 1: it faults).
timeout 120 python3 "$MINIMAL" >"$OUT/minimal-launch.txt" 2>&1
say "hand-minimal launch: exit $? ($(tail -n 1 "$OUT/minimal-launch.txt"))"

# 2. A finding, by explore on the GPU (EXPLORE_S=0: none, the trigger config's launch below).
if [ "$EXPLORE_S" -gt 0 ]; then
  timeout $((EXPLORE_S + 90)) python3 -m suite.cli.main explore "$PROGRAM" -t sm_90 --gpu on \
    --time-budget "$EXPLORE_S" --seed 1 -o "$WORK" >"$OUT/explore.txt" 2>&1
  say "explore: exit $? ($(tail -n 2 "$OUT/explore.txt" | head -n 1))"
fi
FINDING=$(python3 - "$WORK/findings" <<'EOF'
import json, sys
from pathlib import Path
found = sorted(Path(sys.argv[1]).glob("*.json")) if Path(sys.argv[1]).is_dir() else []
for path in found:
    record = json.loads(path.read_text())
    if isinstance(record, dict) and ":launch" in str(record.get("signature", "")):
        print(path)
        break
EOF
)
if [ -z "$FINDING" ]; then
  # No runtime finding from explore: one launch of the trigger config makes it.
  FINDING=$(timeout 300 python3 - "$PROGRAM" "$WORK/findings" 2>"$OUT/finding-fallback.txt" <<'EOF'
import dataclasses, json, sys
from pathlib import Path

from suite.engine import discover
from suite.engine.environment import capture_environment
from suite.engine.expand import CaseSpec
from suite.engine.runner import Execution, run_case
from suite.engine.sources import capture_source
from suite.failures.findings import Finding, SeenConfig

program, folder = Path(sys.argv[1]).resolve(), Path(sys.argv[2])
found = discover.from_source({"path": str(program)}, str(program))[0]
trigger = dict(found.repro.configs["trigger"][0])
result = run_case(CaseSpec(found, trigger, "sm_90", gpu=True), folder.parent / "fallback-case", Execution(warm=False, sanitize=False))
print(f"trigger: {result.outcome.label} {result.signature.text if result.signature else ''}", file=sys.stderr)
if result.signature is None or ":launch" not in result.signature.text:
    sys.exit(1)
environment = dataclasses.replace(capture_environment(sys.executable), python_executable=sys.executable)
finding = Finding(
    repro=found.repro.id, signature=result.signature.text, kind="bug", outcome=result.outcome.label,
    message=result.message, target="sm_90", targets=["sm_90"], minimal_config=trigger,
    failing_configs=[], passing_neighbours=[SeenConfig("sm_90", dict(found.repro.configs["nearest-pass"][0]))],
    boundary=[], environment=environment, seed=None, first_seen="", last_seen="",
    source=capture_source({"path": str(program)}).to_json(with_text=True),
)
folder.mkdir(parents=True, exist_ok=True)
path = folder / "fallback.json"
path.write_text(json.dumps(finding.to_json(), indent=2, default=str))
print(path)
EOF
  )
  say "finding from one launch of the trigger config: ${FINDING:-none} ($(tail -n 1 "$OUT/finding-fallback.txt" 2>/dev/null))"
fi
if [ -z "$FINDING" ]; then
  say "no runtime finding: nothing to reduce (see explore.txt, finding-fallback.txt)"
  tar -czf "$OUT/outputs.tar.gz" -C "$WORK" . 2>/dev/null
  exit 1
fi
cp "$FINDING" "$OUT/finding.json"
say "finding: $(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['signature'], r['minimal_config'], 'passing:', r['passing_neighbours'][:1])" "$FINDING")"

# 3. The reduction, every candidate launched on the GPU.
timeout $((REDUCE_S + 120)) python3 -m suite.cli.main reduce "$FINDING" -o "$WORK" -j "$JOBS" \
  --time-budget "$REDUCE_S" >"$OUT/reduce.txt" 2>"$OUT/reduce-progress.txt"
say "reduce: exit $? ($(grep -m 1 'kernel lines' "$OUT/reduce.txt"))"
REDUCED=$(tail -n 1 "$OUT/reduce.txt")
if [ ! -f "$REDUCED" ]; then
  say "no reduced file (see reduce-progress.txt)"
  tar -czf "$OUT/outputs.tar.gz" -C "$WORK" . 2>/dev/null
  exit 1
fi
FOLDER=$(dirname "$REDUCED")
cp "$REDUCED" "$OUT/reduced_case.py"
# reduce's standalone reduced.py beside it, run by itself (no PYTHONPATH): exit 1 when the bug shows.
if [ -f "$FOLDER"/reduced.py ]; then
  cp "$FOLDER"/reduced.py "$OUT/reduced.py"
  (cd "$FOLDER" && env -u PYTHONPATH python3 reduced.py >"$OUT/reduced-alone.txt" 2>&1)
  say "reduced.py alone: exit $?"
fi
cp "$FOLDER/state.json" "$OUT/state.json" 2>/dev/null

# 4-5. The size against the hand-minimal kernel; the reduced file launched again by itself.
reduced_check "$PROGRAM" "$REDUCED" "$MINIMAL" "$FOLDER/state.json" "$WORK/run-reduced"
tar -czf "$OUT/outputs.tar.gz" -C "$WORK" . 2>/dev/null
rm -rf "$WORK"
cat "$SUMMARY"
