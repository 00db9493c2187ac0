#!/usr/bin/env bash
# On an sm_90 GPU: the third set of runtime ports (issue 38) against the baseline, each with its
# trigger and nearest-pass configs, launched by `repro run --gpu on` without the sanitizer:
#   #11905 (a pipelined load before an in-loop gdc_wait, PDL), a wrong result, with the ptxas
#   differential on its failing launches; then, without relaunches, #7386 (a 1-D descriptor tile
#   broadcast into tl.dot, 3-4 stages), a fault, and FLA #984 (the delta-rule WY backward kernel
#   with 4 warps), a wrong result reported also as an illegal memory access: faults have left a
#   GPU unusable for later processes before. On an H100 (2026-11-27 00:32 UTC, before their
#   baseline entries) all three failed at their triggers and passed at their nearest configs;
#   a fourth candidate, #4379, passed everywhere and was deleted (docs/upstream-bugs.md).
#   Against the baseline both runs are expected to exit 0.
#   OUT=/some/dir bash bench/probes/runtime_candidates/run_third.sh
# The checkout is put first on PYTHONPATH; a PYTHONPATH the caller set (extra wheels) is kept.
# Everything lands under $OUT; at most 230 s by its timeouts (130 s + 80 s, 10 s each to die).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/../../.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
out="${OUT:?set OUT to the folder for the results}"
python="${PYTHON:-python3}"
mkdir -p "$out/work"
{
  date -u +%FT%TZ
  "$python" -c 'import torch, triton; print("triton", triton.__version__, "torch", torch.__version__, "cuda", torch.version.cuda); print(torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))'
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "PYTHONPATH=$PYTHONPATH"
} >"$out/environment.txt" 2>&1
# timeout runs programs, not shell functions: the command is an array. SIGINT first, so that
# `repro run` writes what it has; SIGKILL 10 s later.
run=("$python" -m suite.cli.main run -t sm_90 --gpu on --no-sanitizer --format plain)
wrong=(upstream-11905-pdl-wait-pipelined-load)
faulting=(upstream-7386-descriptor-broadcast-dot upstream-fla984-wy-backward-warps)
timeout -s INT -k 10 130 "${run[@]}" "${wrong[@]}" -j 8 --timeout 100 \
  -o "$out/work/wrong" >"$out/run-wrong.txt" 2>"$out/run-wrong.stderr.txt"
echo "exit $?" >>"$out/run-wrong.txt"
timeout -s INT -k 10 80 "${run[@]}" "${faulting[@]}" -j 4 --timeout 60 --no-ptxas-differential \
  -o "$out/work/faulting" >"$out/run-faulting.txt" 2>"$out/run-faulting.stderr.txt"
echo "exit $?" >>"$out/run-faulting.txt"
"$python" "$here/summarize.py" "$out/work/wrong" "$out/work/faulting" >"$out/summary.txt" 2>&1
tar -czf "$out/work.tar.gz" -C "$out" work 2>/dev/null && rm -rf "$out/work"
cat "$out/environment.txt" "$out/summary.txt"
tail -n 3 "$out/run-wrong.txt" "$out/run-faulting.txt"
