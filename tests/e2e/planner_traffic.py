"""What the SLA planner's throughput scaling reads from Prometheus, read by the planner's own client (the ai-dynamo of
the interpreter that runs it: 1.2.1, or 1.6.1 on the dynamo-1.6 line).

usage: python planner_traffic.py CONFIG_JSON INTERVAL
Builds the PlannerConfig from the chart's rendered --config (the environment gives DYN_NAMESPACE and
PROMETHEUS_ENDPOINT as the operator and the chart do), and prints, as one JSON line, what PrometheusAPIClient returns
for the frontend's TTFT, ITL, request count, request duration and sequence lengths over INTERVAL, with the config as
PlannerConfig validated it.
"""
from __future__ import annotations

import json
import sys


def _without_package_init() -> None:
    """Make dynamo.planner a bare package (its folder, no __init__ run): ai-dynamo 1.6.1's __init__ imports the
    planner's performance model, which needs scikit-learn and aisimulate_core (the latter not installable here, so
    .venv-dynamo-1.6 holds neither); the config and the Prometheus client need neither."""
    import importlib.util
    import types
    from pathlib import Path

    for name in [n for n in sys.modules if n == "dynamo.planner" or n.startswith("dynamo.planner.")]:
        del sys.modules[name]
    package = types.ModuleType("dynamo.planner")
    package.__path__ = [str(Path(importlib.util.find_spec("dynamo").submodule_search_locations[0]) / "planner")]
    sys.modules["dynamo.planner"] = package


try:
    from dynamo.planner.config.planner_config import PlannerConfig
except ModuleNotFoundError:  # the engine's packages (1.6.1: sklearn, aisimulate_core), which these two do not use
    _without_package_init()
    from dynamo.planner.config.planner_config import PlannerConfig
from dynamo.planner.monitoring.traffic_metrics import PrometheusAPIClient  # noqa: E402


def main(config_json: str, interval: str) -> int:
    config = PlannerConfig.from_config_arg(config_json)
    client = PrometheusAPIClient(config.metric_pulling_prometheus_endpoint, config.namespace,
                                 metrics_source=config.throughput_metrics_source)
    model = config.model_name
    print(json.dumps({
        "config": json.loads(config.model_dump_json()),
        "endpoint": config.metric_pulling_prometheus_endpoint, "namespace": config.namespace,
        "ttft_s": client.get_avg_time_to_first_token(interval, model),
        "itl_s": client.get_avg_inter_token_latency(interval, model),
        "requests": client.get_avg_request_count(interval, model),
        "request_duration_s": client.get_avg_request_duration(interval, model),
        "isl": client.get_avg_input_sequence_tokens(interval, model),
        "osl": client.get_avg_output_sequence_tokens(interval, model),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
