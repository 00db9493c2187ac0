#!/usr/bin/env bash
# One device call for the runtime checks of a session, on an sm_90 GPU: the reduction of a
# runtime failure (bench/reduce_gpu.sh), the runtime reports with their variants,
# explanation and sanitizer line (bench/variants_gpu.sh) and Inductor's launches under
# capture (bench/capture_inductor_gpu.sh), side by side: they share the GPU, and each
# reduction serializes its own launches. Results under $OUT/<script>/.
#   OUT=/tmp/out EXPLORE_S=40 REDUCE_S=200 bash bench/gpu_checks.sh
set -u
OUT=${OUT:-$(mktemp -d)}
export EXPLORE_S=${EXPLORE_S:-40} REDUCE_S=${REDUCE_S:-200}
for script in reduce_gpu variants_gpu capture_inductor_gpu; do
  mkdir -p "$OUT/$script"
  (
    start=$(date +%s)
    OUT="$OUT/$script" bash "bench/$script.sh" >"$OUT/$script/stdout.txt" 2>&1
    echo "$script: exit $? after $(($(date +%s) - start)) s" >>"$OUT/done.txt"
  ) &
done
wait
cat "$OUT/done.txt"
