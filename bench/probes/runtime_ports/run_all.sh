#!/usr/bin/env bash
# Run every runtime-port probe side by side on one GPU; each writes $OUT/<name>.txt.
#   OUT=/some/dir bash bench/probes/runtime_ports/run_all.sh
# Each probe runs its configs in separate processes (30 s timeout each) and ends within
# 90 s; this script gives each probe 200 s in all, so the whole run ends within 4 minutes.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:?set OUT to the folder for the results}"
mkdir -p "$out"
python="${PYTHON:-python}"
{
  date -u +%FT%TZ
  "$python" -c 'import torch, triton; print("triton", triton.__version__, "torch", torch.__version__, "cuda", torch.version.cuda); print(torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))'
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
} >"$out/environment.txt" 2>&1
pids=()
for probe in "$here"/*.py; do
  name="$(basename "$probe" .py)"
  [[ "$name" == _* ]] && continue
  timeout -k 5 200 "$python" "$probe" >"$out/$name.txt" 2>"$out/$name.stderr.txt" &
  pids+=("$!")
done
status=0
for pid in "${pids[@]}"; do
  wait "$pid" || status=1
done
for result in "$out"/*.txt; do
  case "$result" in *.stderr.txt | */environment.txt) continue ;; esac
  echo "== $(basename "$result" .txt)"
  cat "$result"
done
exit "$status"
