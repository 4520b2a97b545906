"""Print an AIPerf run's summary; exit non-zero when AIPerf failed or any request errored.

usage: summarize_benchmark.py ARTIFACT_DIR AIPERF_EXIT_STATUS
Environment: EXPECTED_REQUESTS, the request count the Job asked for.
"""
import json
import os
import pathlib
import sys

run_dir = pathlib.Path(sys.argv[1])
aiperf_status = int(sys.argv[2])
expected = int(os.environ["EXPECTED_REQUESTS"])
# The run's own summary sits at the top; with warm-up AIPerf also writes one per phase below it.
top = run_dir / "profile_export_aiperf.json"
exports = [top] if top.exists() else sorted(run_dir.rglob("profile_export_aiperf.json"))
if not exports:
    sys.exit(f"FAIL: AIPerf exited {aiperf_status} and wrote no summary under {run_dir} "
             "(it writes none when every request fails)")
summary = json.loads(exports[0].read_text())


def metric(name: str, stat: str = "avg"):
    entry = summary.get(name)
    if isinstance(entry, dict):
        return entry.get(stat)
    return entry


completed = int(metric("request_count") or 0)
errors = int(summary.get("error_request_count", {}).get("avg", 0) if isinstance(
    summary.get("error_request_count"), dict) else summary.get("error_request_count") or 0)
print(f"summary ({exports[0]}):")
print(f"  requests completed: {completed} of {expected}")
print(f"  requests failed:    {errors}")
for name, unit in (("request_throughput", "req/s"), ("output_token_throughput", "tokens/s"),
                   ("time_to_first_token", "ms"), ("inter_token_latency", "ms"),
                   ("request_latency", "ms")):
    value = metric(name)
    if value is not None:
        print(f"  {name}: {value:.2f} {unit}")
if aiperf_status != 0 or errors > 0 or completed < expected:
    sys.exit(f"FAIL: aiperf exit {aiperf_status}, {errors} failed requests, {completed}/{expected} completed")
print("PASS")
