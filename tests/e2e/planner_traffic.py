"""What the SLA planner's throughput scaling reads from Prometheus, read by the planner's own client (ai-dynamo 1.2.1).

usage: python planner_traffic.py CONFIG_JSON INTERVAL
Builds the PlannerConfig from the chart's rendered --config (the environment gives DYN_NAMESPACE and
PROMETHEUS_ENDPOINT as the operator and the chart do), and prints, as one JSON line, what PrometheusAPIClient returns
for the frontend's TTFT, ITL, request count, request duration and sequence lengths over INTERVAL.
"""
from __future__ import annotations

import json
import sys

from dynamo.planner.config.planner_config import PlannerConfig
from dynamo.planner.monitoring.traffic_metrics import PrometheusAPIClient


def main(config_json: str, interval: str) -> int:
    config = PlannerConfig.from_config_arg(config_json)
    client = PrometheusAPIClient(config.metric_pulling_prometheus_endpoint, config.namespace,
                                 metrics_source=config.throughput_metrics_source)
    model = config.model_name
    print(json.dumps({
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
