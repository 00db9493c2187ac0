#!/usr/bin/env bash
# On an sm_90 GPU (an H100 or H200 with torch and triton 3.6.0): the closure corpus's runtime
# reproducers (tests/data/closure/gpu/: module helpers and constants, a kernel package on the
# path, an autotuned kernel) through run, `report --verify` and repro.py alone (exit 1, and 0
# at the nearest passing config); then one of them reduced on the GPU and its report's
# repro.py run alone. The reduction faults many times: it runs last, in a process of its own
# (docs/facts.md: after fault-heavy runs the GPU may refuse new processes).
set -u
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
python3 -m pytest -p no:xdist -q -rs tests/test_closure.py -m gpu -k verified_and_runs_alone
first=$?
python3 -m pytest -p no:xdist -q -rs tests/test_closure.py -m gpu -k reduced_and_runs_alone
exit $((first || $?))
