"""Metric names per Dynamo release line (templates/monitoring/_metrics.tpl, gpt-oss.dynamoMetrics) in what the chart
renders: scalers, alerts, dashboard and cost rules; and the release line's refusals (_check-dynamo-line.tpl). The
names are literals from DYNAMO-RELEASES-FACTS.md 3f and the wheels' trtllm/args.py; tests/e2e/test_monitoring_live.py
proves each from the real components of its line."""
import json

import pytest

from tests.helpers import deep_merge, dynamo_line_values, find, render_chart

MONITORING = {"monitoring": {"podMonitor": {"enabled": True}, "dashboard": {"enabled": True},
                             "prometheusRule": {"enabled": True}},
              "frontend": {"autoscaling": {"enabled": True, "scaler": "keda"}},
              "workers": {"decode": {"autoscaling": {"enabled": True, "scaler": "hpa"}},
                          "prefill": {"autoscaling": {"enabled": True, "scaler": "keda"}}}}
EXPECTED = {
    "1.2": {"frontend": 'sum(max by (namespace, pod, worker_id, model) (dynamo_frontend_inflight_requests'
                        '{dynamo_namespace="llm-gpt-oss"}))',
            "decode": "tensorrt_llm",
            "queued": 'sum(max by (namespace, pod, model) (dynamo_frontend_queued_requests'
                      '{dynamo_namespace="llm-gpt-oss"})) > 10',
            "panel": 'sum(max by (namespace, pod, model) (dynamo_frontend_queued_requests{namespace="$namespace", '
                     'pod=~"$deployment-.+", model=~"$model"}))'},
    "1.6": {"frontend": 'sum(max by (namespace, pod, worker_id, model) (dynamo_frontend_active_requests'
                        '{dynamo_namespace="llm-gpt-oss"}))',
            "decode": "backend",
            "queued": 'sum(max by (namespace, pod, stage, phase) (dynamo_frontend_stage_requests'
                      '{dynamo_namespace="llm-gpt-oss", stage=~"preprocess|route|dispatch"})) > 10',
            "panel": 'sum(max by (namespace, pod, stage, phase) (dynamo_frontend_stage_requests{namespace="$namespace", '
                     'pod=~"$deployment-.+", stage=~"preprocess|route|dispatch"}))'},
}


def render(line: str, values: dict | None = None) -> list[dict]:
    return render_chart(["disagg-k8s.yaml"], deep_merge(deep_merge(MONITORING, dynamo_line_values(line)), values or {}))


@pytest.mark.parametrize("line", ["1.2", "1.6"], ids=lambda line: f"dynamo-{line}")
class TestDynamoMetrics:
    def test_should_scale_the_frontend_on_the_lines_gauge(self, line):
        scaled = find(render(line), "ScaledObject", "gpt-oss-frontend")
        assert scaled["spec"]["triggers"][0]["metadata"]["query"] == EXPECTED[line]["frontend"]

    def test_should_select_the_lines_worker_component(self, line):
        hpa = find(render(line), "HorizontalPodAutoscaler", "gpt-oss-decode")
        selector = hpa["spec"]["metrics"][0]["external"]["metric"]["selector"]["matchLabels"]
        assert selector["dynamo_component"] == EXPECTED[line]["decode"]

    def test_should_alert_on_the_lines_queue(self, line):
        rules = [r for g in find(render(line), "PrometheusRule", "gpt-oss-alerts")["spec"]["groups"] for r in g["rules"]]
        assert next(r for r in rules if r.get("alert") == "GptOssRequestsQueuing")["expr"] == EXPECTED[line]["queued"]

    def test_should_chart_the_lines_queue(self, line):
        board = json.loads(find(render(line), "ConfigMap", "gpt-oss-dashboard")["data"]["gpt-oss-serving.json"])
        panel = next(p for p in board["panels"] if p["title"] == "Queue depth and in-flight requests")
        assert panel["targets"][0]["expr"] == EXPECTED[line]["panel"]


class TestDynamoLineRefusals:
    # The 1.6 line's refusal is a case of the benchmark table (tests/chart/benchmark/test_benchmark.py).
    def test_should_take_nvext_ignore_eos_on_the_12_line(self):
        render("1.2", {"benchmark": {"extraInputs": ['{"nvext":{"ignore_eos":true}}']}})
