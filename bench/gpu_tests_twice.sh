#!/usr/bin/env bash
# On a GPU machine, from the repository root (issue 37, docs/gpu-results.md): the GPU-marked
# tests twice in a row in one call, and after each run a fresh process must make a CUDA
# context (`python -m suite.engine.gpu_check`). Each step runs under `timeout -s INT`, so an
# interrupted pytest still prints its summary; the kernel log's Xid lines and nvidia-smi's
# view of the GPU are kept after each run. Everything goes under $OUT; summary.txt says what
# happened. Exit 0 when both runs passed and the GPU gave a context after each.
#
#   OUT=$OUT bash bench/gpu_tests_twice.sh
#
# A run is three pytest processes under one bound: the fault reduction
# (test_a_launch_fault_in_a_realistic_kernel_is_reduced_on_the_gpu, the longest) started
# first; HEAD_S later the other GPU tests marked `long` (the closure reproducers, the
# catalogue's builtins, the sanitizer, ...), all at once, each in an xdist worker of its own,
# so none waits behind another to start; and all the others, JOBS workers. What may fault or
# hang runs alone on the GPU machine-wide whatever the workers (suite/engine/gpu_check.py):
# the GPU's lock is what the processes share. Every hold of it is logged
# (REPRO_GPU_LOCK_LOG, suite/engine/gpu_lock_log.py): gpu-locks-RUN.txt sums them per test
# and per holder, and the summary names the tests that held it longest.
#
# Knobs: JOBS (the other tests' xdist workers, default 4), RUN_S (one run's bound, default
# 245 s), REDUCE_S (the fault reduction's --time-budget, default 90 s), HEAD_S (its head
# start, default 15 s). With the defaults the whole script stays within 590 s: two runs of at
# most 250 s, two checks of at most 30 s, and before them the versions and the count of long
# tests (about 20 s).
set -u
OUT=${OUT:-$(mktemp -d)}
JOBS=${JOBS:-4}
RUN_S=${RUN_S:-245}
HEAD_S=${HEAD_S:-15}
REDUCTION=tests/test_reduce_runtime.py::test_a_launch_fault_in_a_realistic_kernel_is_reduced_on_the_gpu
export REPRO_TEST_REDUCE_S=${REDUCE_S:-90}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}  # the caller's paths kept (wheels carried there)
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
say() { echo "$*" | tee -a "$SUMMARY"; }
xids() { dmesg 2>/dev/null | grep -i 'xid' ; }

# One worker per long test but the reduction: their count, as pytest selects them.
LONG=$(python -m pytest -m "gpu and long" --collect-only -q -p no:cacheprovider \
  --deselect "$REDUCTION" tests/ 2>/dev/null | grep -c '::')
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  python -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
  nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
  echo "LONG=$LONG JOBS=$JOBS RUN_S=$RUN_S HEAD_S=$HEAD_S REPRO_TEST_REDUCE_S=$REPRO_TEST_REDUCE_S"
} >"$OUT/versions.txt" 2>&1
cat "$OUT/versions.txt" >>"$SUMMARY"
xids >"$OUT/xid-before.txt"
failed=0
tests() {  # tests RUN PART BOUND ARGS...: one pytest process, its output under $OUT
  local run=$1 part=$2 bound=$3
  shift 3
  timeout -s INT -k 5 "$bound" python -m pytest "$@" -p no:cacheprovider -q -rA \
    --durations=0 --junitxml="$OUT/junit-$run-$part.xml" >"$OUT/gpu-tests-$run-$part.txt" 2>&1
}
for run in 1 2; do
  start=$(date +%s)
  export REPRO_GPU_LOCK_LOG="$OUT/gpu-locks-$run.jsonl"
  tests "$run" reduction "$RUN_S" -p no:xdist "$REDUCTION" &
  reduction=$!
  sleep "$HEAD_S"
  tests "$run" long "$((RUN_S - HEAD_S))" -m "gpu and long" --deselect "$REDUCTION" \
    -n "$((LONG > 0 ? LONG : 1))" tests/ &
  long=$!
  tests "$run" others "$((RUN_S - HEAD_S))" -m "gpu and not long" -n "$JOBS" tests/
  others=$?
  wait "$long"
  longs=$?
  wait "$reduction"
  reduced=$?
  say "run $run: in $(($(date +%s) - start)) s; pytest exit $reduced (the reduction), $longs (long)," \
    "$others (the others) (124: stopped by the ${RUN_S} s bound)"
  for part in reduction long others; do
    say "  $part: $(tail -n 1 "$OUT/gpu-tests-$run-$part.txt")"
    grep -E '^(FAILED|ERROR) ' "$OUT/gpu-tests-$run-$part.txt" | sed 's/^/  /' | tee -a "$SUMMARY"
  done
  if [ -s "$REPRO_GPU_LOCK_LOG" ]; then
    python -m suite.engine.gpu_lock_log "$REPRO_GPU_LOCK_LOG" >"$OUT/gpu-locks-$run.txt" 2>&1
    say "  the GPU lock, per test (held s, waited s, holds, to exit): gpu-locks-$run.txt"
    sed -n '2,7p' "$OUT/gpu-locks-$run.txt" | sed 's/^/    /' | tee -a "$SUMMARY"
  fi
  unset REPRO_GPU_LOCK_LOG
  timeout -s INT -k 5 25 python -m suite.engine.gpu_check >"$OUT/gpu-check-$run.txt" 2>&1
  checked=$?
  say "  gpu_check after run $run: exit $checked: $(tail -n 1 "$OUT/gpu-check-$run.txt")"
  xids >"$OUT/xid-after-$run.txt"
  say "  kernel log: $(($(wc -l <"$OUT/xid-after-$run.txt") - $(wc -l <"$OUT/xid-before.txt"))) new Xid lines in all so far"
  nvidia-smi --query-gpu=utilization.gpu,memory.used,pstate --format=csv,noheader \
    >"$OUT/nvidia-smi-$run.txt" 2>&1
  [ "$reduced" -eq 0 ] && [ "$longs" -eq 0 ] && [ "$others" -eq 0 ] && [ "$checked" -eq 0 ] ||
    failed=1
done
exit "$failed"
