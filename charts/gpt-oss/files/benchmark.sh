#!/usr/bin/env bash
# Benchmark Job entry point: wait for the model, run the AIPerf command given as arguments with a
# fresh artifact directory on the model cache, print the summary, fail when any request failed.
set -euo pipefail
here=$(dirname "$0")
python3 "$here/wait_until_served.py"
run_dir="${ARTIFACTS_ROOT}/$(date +%s)_${JOB_NAME}"
mkdir -p "$run_dir"
echo "artifacts: $run_dir"
status=0
"$@" --artifact-dir "$run_dir" || status=$?
python3 "$here/summarize_benchmark.py" "$run_dir" "$status"
