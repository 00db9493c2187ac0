#!/usr/bin/env bash
# On an sm_90 GPU (an H100 or H200 with torch and triton 3.6.0): the closure corpus's three
# runtime reproducers (tests/data/closure/gpu/: module helpers and constants, a kernel package
# on the path, an autotuned kernel), each through `repro run`, `report --verify` and repro.py
# alone (exit 1, and 0 at the nearest passing config); then misaligned_constants reduced on the
# GPU and its report's repro.py run alone. The reduction faults many times: it runs last, in a
# pytest of its own, and a fresh CUDA context is checked after it (docs/facts.md: after
# fault-heavy runs the GPU may refuse new processes).
#
#   OUT=$OUT bash bench/closure_gpu.sh
#
# Logs go to $OUT/closure-gpu/ (default: a temporary folder). Each pytest is bounded by
# `timeout -s INT`, so a pytest stopped by its bound still prints its summary; the
# environment's PYTHONPATH (wheels carried onto the device) stays, with this checkout first.
set -u
out=${OUT:-$(mktemp -d)}/closure-gpu
mkdir -p "$out"
export PYTHONPATH=$(pwd)${PYTHONPATH:+:$PYTHONPATH}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} > "$out/environment.txt" 2>&1
# All three (two of them are also `slow`: "slow" in -m opts in, tests/conftest.py).
timeout -s INT -k 15 260 python3 -m pytest -p no:xdist -q -rA tests/test_closure.py \
  -m "gpu and (slow or not slow)" -k verified_and_runs_alone > "$out/verified.log" 2>&1
verified=$?
timeout -s INT -k 15 240 python3 -m pytest -p no:xdist -q -rA tests/test_closure.py \
  -m "gpu and (slow or not slow)" \
  -k reduced_and_runs_alone > "$out/reduced.log" 2>&1
reduced=$?
timeout 60 python3 -m suite.engine.gpu_check > "$out/gpu_check.log" 2>&1
check=$?
tail -n 3 "$out/verified.log" "$out/reduced.log" "$out/gpu_check.log"
echo "verified: exit $verified; reduced: exit $reduced; fresh context check: exit $check"
exit $((verified || reduced || check))
