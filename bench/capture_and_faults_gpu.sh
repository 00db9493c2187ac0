#!/usr/bin/env bash
# On a GPU machine, from the repository root, everything under $OUT (docs/capture.md,
# docs/reduce.md): what capture adds to a program, the GPU-marked tests twice in a row with a
# fresh CUDA context checked after each, and which way of faulting breaks the GPU. One step a
# device call (each fits in 10 minutes):
#   STEP=overhead bash bench/capture_and_faults_gpu.sh   # capture_overhead.py, the MLP step
#   STEP=launches bash bench/capture_and_faults_gpu.sh   # the same, launches; capture_launch_cost.py
#   STEP=attribution bash bench/capture_and_faults_gpu.sh  # the MLP's cost, part by part
#   STEP=unswitched bash bench/capture_and_faults_gpu.sh   # the MLP step, no modes
#   STEP=calls bash bench/capture_and_faults_gpu.sh      # what a warm step runs in Python
#   STEP=tests bash bench/capture_and_faults_gpu.sh      # bench/gpu_tests_twice.sh
#   STEP=faults bash bench/capture_and_faults_gpu.sh     # bench/gpu_after_faults.py (last:
#                                                       # it may leave the GPU unusable)
set -u
OUT=${OUT:-$(mktemp -d)}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
STEP=${STEP:-overhead}
case "$STEP" in
  overhead | unswitched)
    # The MLP step: three batches of 12 fresh processes an arm, one after the other (each
    # 85 s of rounds and about 60 s to start; processes differ by a few percent for life, so
    # the interval narrows with processes, not rounds); caches shared. overhead: the
    # captured processes also take rounds with every launch kept by its scalars and with
    # Inductor's run as Torch made it (the hook's own cost, paired within each process).
    # unswitched: plain and captured alone, since a captured process of overhead switches
    # its hook's parts (a class attribute, a module global, each tuner's attributes) before
    # every round and a plain one never: whether that is part of what captured costs there
    # (docs/gpu-results.md, 2026-11-27 12:22-12:55).
    name=capture-$STEP
    arms="plain captured"
    [ "$STEP" = overhead ] && arms="$arms captured:unsteady captured:unhooked"
    # shellcheck disable=SC2086  # the arms are words
    timeout -s INT 560 python bench/capture_overhead.py --workloads mlp --processes 12 \
      --batches 3 --arms $arms --budget-s 255 --caches "$(mktemp -d)" \
      --raw "$OUT/$name-mlp.jsonl" > "$OUT/$name.txt" 2>&1
    echo "capture_overhead exit $?" >> "$OUT/$name.txt"
    grep -E "against|exit" "$OUT/$name.txt"
    ;;
  launches)
    # kernel[grid] launches, 4 processes an arm; then the hook's Python per launch (CPU).
    timeout -s INT 120 python bench/capture_overhead.py --workloads launches --processes 4 \
      --budget-s 40 --raw "$OUT/capture-overhead-launches.jsonl" \
      > "$OUT/capture-overhead-launches.txt" 2>&1
    echo "capture_overhead exit $?" >> "$OUT/capture-overhead-launches.txt"
    grep -E "against|exit" "$OUT/capture-overhead-launches.txt"
    python bench/capture_launch_cost.py > "$OUT/capture-launch-cost.txt" 2>&1  # CPU, seconds
    tail -n 6 "$OUT/capture-launch-cost.txt"
    ;;
  attribution)
    # Inside captured processes: Torch's run as the hook inlined it, compiled again with its
    # body in the hook's try alone, with nothing added, and as Torch made it; where the 1%
    # between the hook's steady run and Torch's goes (docs/gpu-results.md, 2026-11-27
    # 10:37-11:14): over the MLP step, then over the step's Inductor launches alone (what
    # a call of each run costs, apart from the step).
    caches=$(mktemp -d)
    timeout -s INT 360 python bench/capture_overhead.py --workloads mlp --processes 12 \
      --arms plain captured captured:handled captured:recompiled captured:unhooked \
      --budget-s 220 --caches "$caches" \
      --raw "$OUT/capture-attribution-mlp.jsonl" > "$OUT/capture-attribution.txt" 2>&1
    echo "capture_overhead exit $?" >> "$OUT/capture-attribution.txt"
    timeout -s INT 190 python bench/capture_overhead.py --workloads inductor-launches \
      --processes 6 --budget-s 60 --caches "$caches" --arms plain captured captured:handled \
      captured:recompiled captured:unhooked captured:bare \
      --raw "$OUT/capture-attribution-launches.jsonl" >> "$OUT/capture-attribution.txt" 2>&1
    echo "capture_overhead exit $?" >> "$OUT/capture-attribution.txt"
    grep -E "against|exit|launches a step" "$OUT/capture-attribution.txt" | sort | uniq -c
    ;;
  calls)
    # The Python functions one warm MLP step starts, alone and captured (about a minute):
    # whether a captured step does Python work the program alone does not.
    timeout -s INT 300 python bench/capture_step_calls.py > "$OUT/capture-step-calls.txt" 2>&1
    echo "capture_step_calls exit $?" >> "$OUT/capture-step-calls.txt"
    tail -n 25 "$OUT/capture-step-calls.txt"
    ;;
  tests)
    OUT="$OUT" bash bench/gpu_tests_twice.sh
    ;;
  faults)
    python bench/gpu_after_faults.py > "$OUT/gpu-after-faults.txt" 2>&1
    echo "gpu_after_faults exit $?" >> "$OUT/gpu-after-faults.txt"
    tail -n 12 "$OUT/gpu-after-faults.txt"
    ;;
esac
