"""Opt-in monitoring: PodMonitors that mirror the Dynamo platform's, and the Grafana dashboard ConfigMap."""
from __future__ import annotations

import json
import re

import pytest

from tests.helpers import CHART_DIR, DYNAMO_OVERLAYS, OVERLAYS, ChartRenderError, dump, render_chart

ON = {"monitoring": {"podMonitor": {"enabled": True}, "dashboard": {"enabled": True}}}
TEMPLATES = ["templates/podmonitor.yaml", "templates/configmap-dashboard.yaml"]
DASHBOARD_FILE = CHART_DIR / "dashboards" / "gpt-oss-serving.json"
# Metric names confirmed in Dynamo's metrics documentation (frontend: dynamo_frontend_*, on the HTTP
# port; workers: dynamo_component_* on the system port). A typo here is an empty panel in Grafana.
KNOWN_METRICS = {
    "dynamo_frontend_requests_total", "dynamo_frontend_output_tokens_total",
    "dynamo_frontend_time_to_first_token_seconds_bucket", "dynamo_frontend_inter_token_latency_seconds_bucket",
    "dynamo_frontend_request_duration_seconds_bucket", "dynamo_frontend_queued_requests",
    "dynamo_frontend_inflight_requests", "dynamo_component_kvstats_gpu_cache_usage_percent",
}


def monitors(objects: list[dict]) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == "PodMonitor"}


def selector(monitor: dict) -> dict[str, list[str]]:
    return {e["key"]: e["values"] for e in monitor["spec"]["selector"]["matchExpressions"]}


def dashboard(objects: list[dict]) -> dict:
    [configmap] = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-dashboard")]
    return json.loads(configmap["data"]["gpt-oss-serving.json"])


def exprs(board: dict) -> list[str]:
    return [target["expr"] for panel in board["panels"] for target in panel["targets"]]


class TestDefaults:
    # Every target, trtllm-serve too (its PodMonitor: tests/test_autoscaling.py; its dashboard is refused).
    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_render_no_monitoring_objects_by_default(self, overlay):
        # Off by default: the Dynamo platform chart may already scrape these pods.
        objects = render_chart([overlay], show_only=TEMPLATES)
        assert objects == [], dump(objects)


class TestPodMonitors:
    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_select_only_this_release_and_namespace(self, overlay):
        found = monitors(render_chart([overlay], ON, name="gpt-oss", namespace="llm"))
        assert set(found) == {"gpt-oss-frontend", "gpt-oss-worker"}
        for monitor in found.values():
            assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["llm"]}
            assert selector(monitor)["nvidia.com/dynamo-graph-deployment-name"] == ["gpt-oss"]
            # The platform's PodMonitors require it too: a DGD's metrics opt-out holds for both.
            assert selector(monitor)["nvidia.com/metrics-enabled"] == ["true"]

    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_scrape_each_pod_once_on_its_metrics_port(self, overlay):
        found = monitors(render_chart([overlay], ON))
        frontend, worker = found["gpt-oss-frontend"], found["gpt-oss-worker"]
        # Same component types and ports as the platform's dynamo-frontend and dynamo-worker monitors.
        assert selector(frontend)["nvidia.com/dynamo-component-type"] == ["frontend"]
        assert sorted(selector(worker)["nvidia.com/dynamo-component-type"]) == ["decode", "prefill", "worker"]
        assert [(e["port"], e["path"]) for e in frontend["spec"]["podMetricsEndpoints"]] == [("http", "/metrics")]
        assert [(e["port"], e["path"]) for e in worker["spec"]["podMetricsEndpoints"]] == [("system", "/metrics")]
        # Disjoint component types: no pod matches both monitors.
        assert not set(selector(frontend)["nvidia.com/dynamo-component-type"]) & set(
            selector(worker)["nvidia.com/dynamo-component-type"])

    def test_should_pass_labels_interval_and_ports_through(self):
        values = {"monitoring": {"podMonitor": {"enabled": True, "labels": {"release": "kube-prometheus-stack"},
                                                "interval": "30s", "scrapeTimeout": "20s",
                                                "frontendPort": "web", "workerPort": "metrics"}}}
        found = monitors(render_chart(["agg.yaml"], values))
        for monitor in found.values():
            assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
            [endpoint] = monitor["spec"]["podMetricsEndpoints"]
            assert (endpoint["interval"], endpoint["scrapeTimeout"]) == ("30s", "20s")
        assert found["gpt-oss-frontend"]["spec"]["podMetricsEndpoints"][0]["port"] == "web"
        assert found["gpt-oss-worker"]["spec"]["podMetricsEndpoints"][0]["port"] == "metrics"

    @pytest.mark.parametrize("values,message", [
        ({"monitoring": {"podMonitor": {"enabled": True, "interval": "soon"}}}, "/monitoring/podMonitor/interval"),
        ({"monitoring": {"podMonitor": {"enabled": "yes"}}}, "/monitoring/podMonitor/enabled"),
        ({"monitoring": {"serviceMonitor": {"enabled": True}}}, "additional properties 'serviceMonitor' not allowed"),
    ], ids=["bad-interval", "string-enabled", "unknown-key"])
    def test_should_refuse_wrong_monitoring_values(self, values, message):
        with pytest.raises(ChartRenderError) as error:
            render_chart(["agg.yaml"], values)
        assert message in str(error.value)


class TestDashboard:
    def test_should_ship_valid_json(self):
        board = json.loads(DASHBOARD_FILE.read_text())
        assert board["panels"] and board["templating"]["list"]

    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_label_the_configmap_for_the_grafana_sidecar(self, overlay):
        objects = render_chart([overlay], ON, show_only=["templates/configmap-dashboard.yaml"])
        [configmap] = objects
        assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
        board = dashboard(objects)
        # Every placeholder was replaced by the release's own names.
        assert "__GPT_OSS" not in json.dumps(board)
        assert board["title"] == "gpt-oss serving (llm/gpt-oss)"

    def test_should_give_each_release_its_own_uid(self):
        uids = {dashboard(render_chart(["agg.yaml"], ON, name=name, namespace=namespace))["uid"]
                for name, namespace in [("gpt-oss", "llm"), ("gpt-oss-b", "llm"), ("gpt-oss", "other")]}
        assert len(uids) == 3, uids
        assert all(len(uid) <= 40 for uid in uids), uids  # Grafana's uid limit

    def test_should_chart_the_serving_metrics(self):
        joined = "\n".join(exprs(json.loads(DASHBOARD_FILE.read_text())))
        for needed in ("dynamo_frontend_requests_total", "dynamo_frontend_output_tokens_total",
                       "dynamo_frontend_time_to_first_token_seconds_bucket",
                       "dynamo_frontend_inter_token_latency_seconds_bucket", "dynamo_frontend_queued_requests",
                       "dynamo_component_kvstats_gpu_cache_usage_percent"):
            assert needed in joined, f"no panel queries {needed}"

    def test_should_query_only_known_dynamo_metrics(self):
        used = set()
        for expr in exprs(json.loads(DASHBOARD_FILE.read_text())):
            # Metric names are followed by their label matchers; label names such as dynamo_component_type are not.
            used |= set(re.findall(r"\b(dynamo_[a-z_]+)\{", expr))
        assert used <= KNOWN_METRICS, sorted(used - KNOWN_METRICS)

    def test_should_filter_every_query_by_namespace(self):
        # Without it, two releases of the chart in different namespaces add up in one panel.
        for expr in exprs(json.loads(DASHBOARD_FILE.read_text())):
            assert 'namespace="$namespace"' in expr, expr

    def test_should_honour_the_namespace_value(self):
        values = {"monitoring": {"dashboard": {"enabled": True, "namespace": "monitoring",
                                               "annotations": {"grafana_folder": "LLM"}}}}
        [configmap] = render_chart(["agg.yaml"], values, show_only=["templates/configmap-dashboard.yaml"])
        assert configmap["metadata"]["namespace"] == "monitoring"
        assert configmap["metadata"]["annotations"] == {"grafana_folder": "LLM"}
