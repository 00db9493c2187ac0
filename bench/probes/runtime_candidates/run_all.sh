#!/usr/bin/env bash
# On an sm_90 GPU: the runtime candidates of repros/upstream/ launched on 2026-11-26 (now in the
# baseline, docs/gpu-results.md), their nearest passing configs, and #6691, launched by `repro run --gpu on` with the ptxas
# differential on; every failing launch relaunched with the toolkit's ptxas and at -O0.
#   pip install --no-deps --no-build-isolation -e . && OUT=/some/dir bash bench/probes/runtime_candidates/run_all.sh
# Everything lands under $OUT; at most about 8 minutes (its timeouts), on an H100 (16 cores). The fault candidate
# (#11601, an illegal memory access) runs last and alone: faults have left a GPU unusable
# for later processes before (docs/facts.md).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/../../.."
out="${OUT:?set OUT to the folder for the results}"
python="${PYTHON:-python3}"
mkdir -p "$out/work" "$out/reports"
repro() { "$python" -m suite.cli.main "$@"; }
{
  date -u +%FT%TZ
  "$python" -c 'import torch, triton; print("triton", triton.__version__, "torch", torch.__version__, "cuda", torch.version.cuda); print(torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))'
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  command -v ptxas && ptxas --version | tail -1
  "$python" -c 'import sys; from suite.engine.ptxas import toolchain; print(toolchain(sys.executable, 90))'
} >"$out/environment.txt" 2>&1
candidates=(
  repros/upstream/flatten_empty_inner_loop.py
  repros/upstream/flatten_assume_other_branch.py
  repros/upstream/pipelined_flatten_store_reload.py
  repros/upstream/descriptor_store_past_extent.py
  upstream-6691-pipelined-dot-and-sum
)
# The sanitizer's reruns are off: racecheck over these kernels takes minutes; the
# differential (3 relaunches per failing case) is the point here.
timeout -k 10 270 "$python" -m suite.cli.main run "${candidates[@]}" -t sm_90 --gpu on \
  -j 8 --timeout 200 --no-sanitizer -o "$out/work/main" --format plain \
  >"$out/run.txt" 2>"$out/run.stderr.txt" &
timeout -k 10 240 "$python" -m pytest -q -p no:cacheprovider -m gpu \
  tests/test_ptxas_differential.py >"$out/pytest-ptxas-differential.txt" 2>&1 &
wait
timeout -k 10 75 "$python" -m suite.cli.main run repros/upstream/flatten_hoisted_bound_load.py \
  -t sm_90 --gpu on -j 4 --timeout 60 --no-sanitizer --no-ptxas-differential \
  -o "$out/work/fault" --format plain >"$out/run-fault.txt" 2>"$out/run-fault.stderr.txt"
"$python" "$here/summarize.py" "$out/work/main" "$out/work/fault" >"$out/summary.txt" 2>&1
# One report per failing case of the main run (the differential's verdict, nvidia.md where
# it is the assembler's), no rerun; none is started after 120 s of reports.
started=$SECONDS
"$python" "$here/summarize.py" --failing "$out/work/main" | while read -r subject; do
  [ $((SECONDS - started)) -lt 120 ] || break
  timeout -k 5 60 "$python" -m suite.cli.main report "$subject" -o "$out/work/reports" \
    --no-rerun >>"$out/reports.txt" 2>&1
done
for folder in "$out"/work/reports/*/; do
  [ -d "$folder" ] || continue
  mkdir -p "$out/reports/$(basename "$folder")"
  cp "$folder"/*.md "$folder"/report.json "$folder"/kernel.ptx "$out/reports/$(basename "$folder")/" 2>/dev/null
done
tar -czf "$out/work.tar.gz" -C "$out" work 2>/dev/null && rm -rf "$out/work"
cat "$out/environment.txt" "$out/summary.txt"
tail -n 5 "$out/pytest-ptxas-differential.txt"
