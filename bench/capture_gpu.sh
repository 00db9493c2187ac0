#!/bin/bash
# repro capture on a GPU (docs/capture.md): an autotuned kernel[grid](...) program with a
# launch that runs out of shared memory, its captured configs through `repro gate`, and a
# torch.compile'd model. Run from the repository root: OUT=/some/dir bash bench/capture_gpu.sh
set -u
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}  # the caller's paths kept (wheels carried there)
OUT=${OUT:-/tmp/capture-gpu}
mkdir -p "$OUT"
{
  date -u +%Y-%m-%dT%H:%MZ
  python -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
} > "$OUT/versions.txt" 2>&1

if [[ "${STEPS:-123}" == *1* ]]; then
echo "== 1. autotuned program with a launch-time failure" | tee "$OUT/log.txt"
python -m suite.capture --all -o "$OUT/program" -- python tests/data/capture/gpu_program.py \
  > "$OUT/program.stdout" 2> "$OUT/program.stderr"
echo "capture exit status: $?" | tee -a "$OUT/log.txt"
summary=$(ls "$OUT"/program/captures/*/capture.json)
python - "$summary" <<'PY' | tee -a "$OUT/log.txt"
import json, sys
s = json.load(open(sys.argv[1]))
print("compile records:", s["compile_records"], "| kernel reproducers:", len(s["kernel_reproducers"]))
for f in s["failures"]:
    print(f"failure: {f['kernel']} {f['phase']} {f['target']} observed={f['observed']!r}"
          f" isolated={f['isolated']!r} reproduced={f['reproduced']} handled_by={f['handled_by']!r}")
print("autotune configs:", s["autotune_configs"])
PY

echo "== 2. the captured autotune configs through repro gate (static checks, sm_90)" | tee -a "$OUT/log.txt"
configs=$(python -c "import json,sys; s=json.load(open('$summary')); print(s['autotune_configs'][0])")
kernel=$(dirname "$configs")/../reproducers/$(basename "$configs" .json).py
python -m suite.cli.main gate --kernel "$kernel" --current "$configs" --proposed "$configs" \
  --target sm_90 -o "$OUT/gate" > "$OUT/gate.stdout" 2> "$OUT/gate.stderr"
echo "gate exit status: $?" | tee -a "$OUT/log.txt"
tail -25 "$OUT/gate.stdout" | tee -a "$OUT/log.txt"
fi

if [[ "${STEPS:-123}" == *3* ]]; then
echo "== 3. torch.compile'd model" | tee -a "$OUT/log.txt"
python -m suite.capture --all -o "$OUT/inductor" -- python tests/data/capture/gpu_inductor.py \
  > "$OUT/inductor.stdout" 2> "$OUT/inductor.stderr"
echo "capture exit status: $?" | tee -a "$OUT/log.txt"
cat "$OUT/inductor.stdout" | tee -a "$OUT/log.txt"
isummary=$(ls "$OUT"/inductor/captures/*/capture.json)
python - "$isummary" <<'PY' | tee -a "$OUT/log.txt"
import json, sys
s = json.load(open(sys.argv[1]))
print("compile records:", s["compile_records"], "| kernel reproducers:", len(s["kernel_reproducers"]))
for path in s["kernel_reproducers"]:
    text = open(path).read()
    imports = [l for l in text.splitlines() if l.startswith(("import torch", "from torch"))]
    print(path.rsplit("/", 1)[1], "| requires torch:", "'torch'," in text, "|", imports)
print("hook errors:", s["hook_errors"][:2000])
PY
files=$(python -c "import json; print(' '.join(json.load(open('$isummary'))['kernel_reproducers']))")
if [ -n "$files" ]; then
  python -m suite.cli.main run $files -o "$OUT/inductor" -j 4 > "$OUT/inductor-run.stdout" 2>&1
  echo "repro run of the inductor kernel reproducers: exit $?" | tee -a "$OUT/log.txt"
  tail -4 "$OUT/inductor-run.stdout" | tee -a "$OUT/log.txt"
  cp $files "$OUT/" 2>/dev/null
fi
fi
if [[ "${STEPS:-123}" == *4* ]]; then
echo "== 4. a launch whose illegal address surfaces at the next synchronize" | tee -a "$OUT/log.txt"
python -m suite.capture -o "$OUT/late" -- python tests/data/capture/gpu_late_failure.py \
  > "$OUT/late.stdout" 2> "$OUT/late.stderr"
echo "capture exit status: $?" | tee -a "$OUT/log.txt"
lsummary=$(ls "$OUT"/late/captures/*/capture.json)
python - "$lsummary" <<'PY' | tee -a "$OUT/log.txt"
import json, sys
s = json.load(open(sys.argv[1]))
print("compile records:", s["compile_records"])
for f in s["failures"]:
    print({k: f.get(k) for k in ("kernel", "phase", "target", "observed", "isolated",
                                 "reproduced", "surfaced_later", "file", "finding")})
PY
cp "$OUT"/late/captures/*/reproducers/*.py "$OUT/" 2>/dev/null
fi
# Keep what comes back small: no MLIR dumps of passing cases, no caches.
find "$OUT" -name "*.mlir" -size +200k -delete
