#!/usr/bin/env bash
# On a GPU machine (sm_90): the runtime ports launched by `repro run` (through
# tests/test_runtime_ports.py) and found by `repro explore --gpu on`, side by side on one
# GPU; every output under $OUT (default: a temporary folder).
set -u
OUT=${OUT:-$(mktemp -d)}
LIMIT=${LIMIT_S:-170}
mkdir -p "$OUT/work"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'cuda', torch.version.cuda)"
} 2>&1 | tee "$OUT/environment.txt"
REPRO_GPU_OUT="$OUT/work/run" timeout "$LIMIT" python3 -m pytest -q -p no:cacheprovider \
  tests/test_runtime_ports.py >"$OUT/pytest.txt" 2>&1 &
for repro in upstream-10474-descriptor-1d-pipelined upstream-6691-pipelined-dot-and-sum; do
  timeout "$LIMIT" python3 -m suite.cli.main explore "$repro" -t sm_90 --gpu on \
    --time-budget "${SEARCH_S:-30}" --seed 1 -o "$OUT/work/explore-$repro" \
    >"$OUT/explore-$repro.txt" 2>&1 &
done
wait
for repro in upstream-10474-descriptor-1d-pipelined upstream-6691-pipelined-dot-and-sum; do
  python3 -m suite.cli.main findings -o "$OUT/work/explore-$repro" >>"$OUT/findings.txt" 2>&1
done
tail -n 25 "$OUT"/*.txt
tar -czf "$OUT/outputs.tar.gz" -C "$OUT/work" . 2>/dev/null
rm -rf "$OUT/work"
