#!/usr/bin/env bash
# One device call for the runtime checks of a session, on an sm_90 GPU: the reduction of a
# runtime failure (bench/reduce_gpu.sh), the runtime reports with their variants,
# explanation and sanitizer line (bench/variants_gpu.sh) and Inductor's launches under
# capture (bench/capture_inductor_gpu.sh), side by side: they share the GPU, and each
# reduction serializes its own launches. The device brings back only a few files from $OUT,
# so everything goes into $OUT/gpu-checks.tgz, and the summaries are printed.
# GPU_CHECKS picks the scripts (default: all three).
#   OUT=/tmp/out EXPLORE_S=40 REDUCE_S=200 GPU_CHECKS="reduce_gpu variants_gpu" bash bench/gpu_checks.sh
set -u
OUT=${OUT:-$(mktemp -d)}
export EXPLORE_S=${EXPLORE_S:-40} REDUCE_S=${REDUCE_S:-200}
results=$(mktemp -d)
# Killed by a time limit, it still packs what the checks wrote so far.
trap 'tar -czf "$OUT/gpu-checks.tgz" -C "$results" .; exit 124' TERM
for script in ${GPU_CHECKS:-reduce_gpu variants_gpu capture_inductor_gpu}; do
  mkdir -p "$results/$script"
  (
    start=$(date +%s)
    OUT="$results/$script" bash "bench/$script.sh" >"$results/$script/stdout.txt" 2>&1
    echo "$script: exit $? after $(($(date +%s) - start)) s" >>"$results/done.txt"
  ) &
done
wait
tar -czf "$OUT/gpu-checks.tgz" -C "$results" .
cat "$results/done.txt"
for summary in reduce_gpu/summary.txt capture_inductor_gpu/log.txt; do
  [ -f "$results/$summary" ] || continue
  echo "== $summary"
  head -c 4000 "$results/$summary"
done
rm -rf "$results"
