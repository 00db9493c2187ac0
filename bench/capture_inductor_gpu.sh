#!/usr/bin/env bash
# On a GPU: `repro capture` of a torch.compile'd function (tests/data/capture/
# gpu_inductor_launch.py): Inductor's kernel launches (CachingAutotuner.run, not
# JITFunction.run) recorded; then the GPU test that asserts it. One try; all under $OUT.
# Run from the repository root.
set -u
OUT=${OUT:-$(mktemp -d)}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}  # the caller's paths kept (wheels carried there)
python3 -m suite.capture --no-confirm -o "$OUT/capture" -- \
  python3 tests/data/capture/gpu_inductor_launch.py >"$OUT/capture.stdout" 2>"$OUT/capture.stderr"
echo "capture exit $?" | tee "$OUT/log.txt"
folder=$(dirname "$(ls "$OUT"/capture/captures/*/capture.json 2>/dev/null | head -1)")
if [ -d "$folder/last-launch" ]; then
  python3 - "$folder" <<'PY' | tee -a "$OUT/log.txt"
import sys
from pathlib import Path
from suite.capture.site.repro_capture_records import load_last_launches
folder = Path(sys.argv[1])
for path, r in load_last_launches(folder / "last-launch").values():
    print(path.name, r.kernel.name, "grid", r.grid, "constexprs", r.constexprs,
          "options", r.options, "tensors", {k: t.shape for k, t in r.tensors.items()},
          "problems", r.problems)
errors = folder / "hook-errors.txt"
print("hook errors:", errors.read_text()[-2000:] if errors.exists() else "none")
PY
fi
python3 -m pytest -m gpu -p no:cacheprovider -q -rA tests/test_capture_inductor.py \
  >"$OUT/pytest.txt" 2>&1
tail -n 5 "$OUT/pytest.txt" | tee -a "$OUT/log.txt"
