#!/bin/bash
# compute-sanitizer on real faulting Triton launches (docs/gpu-results.md). From the repository
# root: OUT=/some/dir bash bench/sanitizer_gpu.sh. Keeps each tool's raw output, the versions,
# and the GPU-marked sanitizer tests' log.
set -u
OUT=${OUT:-/tmp/sanitizer-gpu}
mkdir -p "$OUT"
{
  date -u +%Y-%m-%dT%H:%MZ
  python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  compute-sanitizer --version | tail -1
} > "$OUT/versions.txt" 2>&1
export PYTORCH_NO_CUDA_MEMORY_CACHING=1  # each tensor its own allocation: bounds are exact
run() {  # name, then the command
  local name=$1; shift
  timeout 150 "$@" > "$OUT/$name.txt" 2>&1
  echo "$name: exit $?" >> "$OUT/versions.txt"
}
run plain-descriptor python3 bench/sanitizer_kernels.py descriptor 3
run memcheck-descriptor compute-sanitizer --tool memcheck python3 bench/sanitizer_kernels.py descriptor 3
run memcheck-oob compute-sanitizer --tool memcheck python3 bench/sanitizer_kernels.py oob
run racecheck-descriptor1 compute-sanitizer --tool racecheck python3 bench/sanitizer_kernels.py descriptor 1
TRITON_INSTRUMENTATION_MODE=consan run consan-descriptor python3 bench/sanitizer_kernels.py descriptor 3
