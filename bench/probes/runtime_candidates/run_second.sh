#!/usr/bin/env bash
# On an sm_90 GPU, after run_all.sh: the runtime catalogue against its baseline (the seven
# confirmed bugs: `repro run --gpu on` must exit 0). Two candidates it also ran once (#3017,
# #4078) did not reproduce on an H200 and were deleted (docs/upstream-bugs.md).
#   pip install --no-deps --no-build-isolation -e . && OUT=/some/dir bash bench/probes/runtime_candidates/run_second.sh
# Everything lands under $OUT; at most about 2 minutes (its timeouts: 80 s + 40 s).
# The two faulting bugs (#10474, #11601) run after the others:
# faults have left a GPU unusable for later processes before (docs/facts.md).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/../../.."
out="${OUT:?set OUT to the folder for the results}"
python="${PYTHON:-python3}"
mkdir -p "$out/work"
{
  date -u +%FT%TZ
  "$python" -c 'import torch, triton; print("triton", triton.__version__, "torch", torch.__version__, "cuda", torch.version.cuda); print(torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))'
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
} >"$out/environment.txt" 2>&1
# timeout runs programs, not shell functions: the command is an array.
run=("$python" -m suite.cli.main run -t sm_90 --gpu on --no-sanitizer --format plain)
known=(
  upstream-6691-pipelined-dot-and-sum
  upstream-11519-flatten-assume-other-branch
  upstream-11656-flatten-empty-inner-loop
  upstream-8259-pipelined-flatten-store-reload
  upstream-11583-descriptor-store-past-extent
)
faulting=(upstream-10474-descriptor-1d-pipelined upstream-11601-flatten-hoisted-bound-load)
timeout -k 10 80 "${run[@]}" "${known[@]}" -j 8 --timeout 60 --no-ptxas-differential \
  -o "$out/work/known" >"$out/run-known.txt" 2>"$out/run-known.stderr.txt"
echo "exit $?" >>"$out/run-known.txt"
timeout -k 10 40 "${run[@]}" "${faulting[@]}" -j 4 --timeout 30 --no-ptxas-differential \
  -o "$out/work/faulting" >"$out/run-faulting.txt" 2>"$out/run-faulting.stderr.txt"
echo "exit $?" >>"$out/run-faulting.txt"
tar -czf "$out/work.tar.gz" -C "$out" work 2>/dev/null && rm -rf "$out/work"
cat "$out/environment.txt"
tail -n 3 "$out/run-known.txt" "$out/run-faulting.txt"
