#!/usr/bin/env bash
# One device session on an sm_90 GPU, everything under $OUT: the GPU-marked tests, the runtime
# ports found by `repro explore --gpu on` (bench/runtime_gpu.sh), and the reports of the
# findings explore just made: `repro report --verify`, repro.py run by itself, and run again
# at the nearest passing config.
set -u
OUT=${OUT:-$(mktemp -d)}
python3 -m pytest -m gpu -n 4 -p no:cacheprovider -q -rA --junitxml="$OUT/gpu-junit.xml" \
  tests/ >"$OUT/gpu-tests.txt" 2>&1
tail -n 5 "$OUT/gpu-tests.txt"
EXPLORED="$OUT/explored"
mkdir -p "$EXPLORED"
OUT="$EXPLORED" bash bench/runtime_gpu.sh >/dev/null 2>&1
tail -n 4 "$EXPLORED"/explore-*.txt
work=$(mktemp -d)
tar -xzf "$EXPLORED/outputs.tar.gz" -C "$work"
nearest() {  # the CONFIG edit to the nearest passing config, by the finding's reproducer
  case "$1" in
    *10474*) echo "s/'STAGES': [0-9]*/'STAGES': 1/" ;;
    *6691*) echo "s/'num_stages': [0-9]*/'num_stages': 1/" ;;
  esac
}
for findings in "$work"/explore-*/findings; do
  for finding in "$findings"/*.json; do
    id=$(basename "$finding" .json)
    log="$OUT/report-$id.txt"
    python3 -m suite.cli.main report "$id" --verify -o "$(dirname "$findings")" >"$log" 2>&1
    echo "report exit $?" >>"$log"
    folder="$(dirname "$findings")/$id"
    (cd "$folder" && python3 repro.py >>"$log" 2>&1; echo "repro.py exit $?" >>"$log")
    sed "$(nearest "$id")" "$folder/repro.py" >"$folder/nearest.py"
    grep '^CONFIG' "$folder/nearest.py" >>"$log"
    (cd "$folder" && python3 nearest.py >>"$log" 2>&1; echo "nearest exit $?" >>"$log")
    cp "$folder/repro.py" "$OUT/repro-$id.py"
    tail -n 8 "$log"
  done
done
