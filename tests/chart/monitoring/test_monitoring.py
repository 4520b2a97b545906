"""Opt-in monitoring: PodMonitors that mirror the Dynamo platform's, the Grafana dashboard ConfigMap, the alerts, and the
rules that keep every scaler, the planner and the endpoint picker on metrics the configured releases serve.

What a real Prometheus returns for these queries is proven in tests/e2e/test_monitoring_live.py.
"""
from __future__ import annotations

import json
import re

import pytest

from tests.helpers import (CHART_DIR, DASHBOARD, DGD, DYNAMO_OVERLAYS, INFERENCE_POOL, OVERLAYS, POD_MONITORS,
                           PROMETHEUS_RULE, ChartRenderError, Refusal, assert_refused, deep_merge, dump, find,
                           refusal_params, render_chart)

ON = {"monitoring": {"podMonitor": {"enabled": True}, "dashboard": {"enabled": True}}}
TEMPLATES = ["templates/monitoring/podmonitor.yaml", "templates/monitoring/configmap.yaml", "templates/monitoring/prometheusrule.yaml"]
DASHBOARD_FILE = CHART_DIR / "dashboards" / "gpt-oss-serving.json"
# Metric names of the Dynamo 1.2.1 runtime (PRODUCTION-FACTS.md A2 and G: frontend dynamo_frontend_* on the HTTP
# port; workers dynamo_component_* on the system port). A typo here is an empty panel in Grafana.
KNOWN_METRICS = {
    "dynamo_frontend_requests_total", "dynamo_frontend_output_tokens_total",
    "dynamo_frontend_time_to_first_token_seconds_bucket", "dynamo_frontend_inter_token_latency_seconds_bucket",
    "dynamo_frontend_request_duration_seconds_bucket", "dynamo_frontend_queued_requests",
    "dynamo_frontend_inflight_requests", "dynamo_component_gpu_cache_usage_percent",
}
# KV-aware routing with KV events: the workers then publish their metrics, the KV-cache gauge among them.
PUBLISHING = {"frontend": {"routerMode": "kv"},
              "workers": {"worker": {"engine": {"kv_cache_config": {"enable_block_reuse": True}}}}}
# The platform chart's PodMonitors (deploy/helm/charts/platform/components/operator/templates/prometheus.yaml
# @14947dfa985a93c2fba3a6e3a1abcc667163422c): the relabelings the chart's must reproduce.
PLATFORM_FRONTEND_RELABELINGS = [{"action": "replace", "targetLabel": "dynamo_namespace",
                                  "sourceLabels": ["__meta_kubernetes_pod_label_nvidia_com_dynamo_namespace"]}]
PLATFORM_WORKER_RELABELINGS = [{"action": "replace", "targetLabel": "dynamo_component_type",
                                "sourceLabels": ["__meta_kubernetes_pod_label_nvidia_com_dynamo_component_type"]}]


def monitors(objects: list[dict]) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == "PodMonitor"}


def selector(monitor: dict) -> dict[str, list[str]]:
    return {e["key"]: e["values"] for e in monitor["spec"]["selector"]["matchExpressions"]}


def dashboard(objects: list[dict]) -> dict:
    [configmap] = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-dashboard")]
    return json.loads(configmap["data"]["gpt-oss-serving.json"])


def exprs(board: dict) -> list[str]:
    return [target["expr"] for panel in board["panels"] for target in panel["targets"]]


def alerts(objects: list[dict]) -> dict[str, dict]:
    rule = find(objects, "PrometheusRule")
    return {r["alert"]: r for group in rule["spec"]["groups"] for r in group["rules"]}


class TestDefaults:
    # Every target, trtllm-serve too (its PodMonitor: tests/chart/autoscaling/test_autoscaling.py; its dashboard is refused).
    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_render_no_monitoring_objects_by_default(self, overlay):
        # Off by default: the Dynamo platform chart may already scrape these pods.
        objects = render_chart([overlay], show_only=TEMPLATES)
        assert objects == [], dump(objects)


class TestPodMonitors:
    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_select_only_this_release_and_namespace(self, overlay):
        found = monitors(render_chart([overlay], ON, name="gpt-oss", namespace="llm", show_only=[POD_MONITORS]))
        assert set(found) == {"gpt-oss-frontend", "gpt-oss-worker"}
        for monitor in found.values():
            assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["llm"]}
            assert selector(monitor)["nvidia.com/dynamo-graph-deployment-name"] == ["gpt-oss"]
            # The platform's PodMonitors require it too: a DGD's metrics opt-out holds for both.
            assert selector(monitor)["nvidia.com/metrics-enabled"] == ["true"]

    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_scrape_each_pod_once_on_its_metrics_port(self, overlay):
        found = monitors(render_chart([overlay], ON, show_only=[POD_MONITORS]))
        frontend, worker = found["gpt-oss-frontend"], found["gpt-oss-worker"]
        # Same component types and ports as the platform's dynamo-frontend and dynamo-worker monitors.
        assert selector(frontend)["nvidia.com/dynamo-component-type"] == ["frontend"]
        assert sorted(selector(worker)["nvidia.com/dynamo-component-type"]) == ["decode", "prefill", "worker"]
        assert [(e["port"], e["path"]) for e in frontend["spec"]["podMetricsEndpoints"]] == [("http", "/metrics")]
        assert [(e["port"], e["path"]) for e in worker["spec"]["podMetricsEndpoints"]] == [("system", "/metrics")]
        # Disjoint component types: no pod matches both monitors.
        assert not set(selector(frontend)["nvidia.com/dynamo-component-type"]) & set(
            selector(worker)["nvidia.com/dynamo-component-type"])

    def test_should_relabel_as_the_dynamo_platform_does(self):
        """The frontend's series carry only model: the scalers and the planner need dynamo_namespace from the pod."""
        found = monitors(render_chart(["disagg-k8s.yaml"], ON, show_only=[POD_MONITORS]))
        [frontend] = found["gpt-oss-frontend"]["spec"]["podMetricsEndpoints"]
        [worker] = found["gpt-oss-worker"]["spec"]["podMetricsEndpoints"]
        assert (frontend["honorLabels"], frontend["relabelings"]) == (True, PLATFORM_FRONTEND_RELABELINGS)
        assert "honorLabels" not in worker and worker["relabelings"] == PLATFORM_WORKER_RELABELINGS

    def test_should_pass_labels_interval_and_ports_through(self):
        values = {"monitoring": {"podMonitor": {"enabled": True, "labels": {"release": "kube-prometheus-stack"},
                                                "interval": "30s", "scrapeTimeout": "20s",
                                                "frontendPort": "web", "workerPort": "metrics"}}}
        found = monitors(render_chart(["agg.yaml"], values, show_only=[POD_MONITORS]))
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
        ({"monitoring": {"prometheusRule": {"enabled": True, "alerts": {"GptOssTTFTHigh": {
            "enabled": True, "for": "10m", "severity": "page"}}}}}, "/monitoring/prometheusRule/alerts/GptOssTTFTHigh/severity"),
    ], ids=["bad-interval", "string-enabled", "unknown-key", "unknown-severity"])
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
        objects = render_chart([overlay], ON, show_only=[DASHBOARD])
        [configmap] = objects
        assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
        board = dashboard(objects)
        # Every placeholder was replaced by the release's own names.
        assert "__GPT_OSS" not in json.dumps(board)
        assert board["title"] == "gpt-oss serving (llm/gpt-oss)"

    def test_should_give_each_release_its_own_uid(self):
        uids = {dashboard(render_chart(["agg.yaml"], ON, name=name, namespace=namespace, show_only=[DASHBOARD]))["uid"]
                for name, namespace in [("gpt-oss", "llm"), ("gpt-oss-b", "llm"), ("gpt-oss", "other")]}
        assert len(uids) == 3, uids
        assert all(len(uid) <= 40 for uid in uids), uids  # Grafana's uid limit

    def test_should_chart_the_serving_metrics(self):
        joined = "\n".join(exprs(json.loads(DASHBOARD_FILE.read_text())))
        for needed in ("dynamo_frontend_requests_total", "dynamo_frontend_output_tokens_total",
                       "dynamo_frontend_time_to_first_token_seconds_bucket",
                       "dynamo_frontend_inter_token_latency_seconds_bucket", "dynamo_frontend_queued_requests",
                       "dynamo_component_gpu_cache_usage_percent"):
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

    def test_should_count_each_pod_once(self):
        """The platform's and the chart's PodMonitors may both scrape a pod: every sum takes one series per pod."""
        for expr in exprs(json.loads(DASHBOARD_FILE.read_text())):
            if expr.startswith("gpt_oss:cost"):  # a recorded series: its rule counts once (TestTokenCost)
                continue
            assert re.search(r"max by \(namespace, pod|max by \(pod", expr), expr

    def test_should_render_the_kv_cache_panel_only_where_workers_publish_it(self):
        """dynamo.trtllm sets dynamo_component_gpu_cache_usage_percent only with --publish-events-and-metrics."""
        def titles(values):
            board = dashboard(render_chart(["agg.yaml"], {**ON, **values},
                                           show_only=[DASHBOARD]))
            return [panel["title"] for panel in board["panels"]]
        assert "KV-cache use per worker" not in titles({})
        assert "KV-cache use per worker" in titles(PUBLISHING)

    def test_should_honour_the_namespace_value_the_allowed_namespaces_name(self):
        values = {"monitoring": {"dashboard": {"enabled": True, "namespace": "monitoring",
                                               "allowedNamespaces": ["monitoring"],
                                               "annotations": {"grafana_folder": "LLM"}}}}
        [configmap] = render_chart(["agg.yaml"], values, show_only=[DASHBOARD])
        assert configmap["metadata"]["namespace"] == "monitoring"
        assert configmap["metadata"]["annotations"] == {"grafana_folder": "LLM"}

    def test_should_take_the_release_namespace_named_and_a_disabled_dashboard_without_an_allowance(self):
        # Named explicitly, the release's own namespace (kube-system too, for a release installed there) needs no
        # allowance; a disabled dashboard writes nothing anywhere.
        for namespace in ("llm", "kube-system"):
            [configmap] = render_chart(["agg.yaml"], {"monitoring": {"dashboard": {"enabled": True, "namespace": namespace}}},
                                       show_only=[DASHBOARD], namespace=namespace)
            assert configmap["metadata"]["namespace"] == namespace
        assert render_chart(["agg.yaml"], {"monitoring": {"dashboard": {"namespace": "kube-system"}}}, show_only=[DGD])


class TestAlerts:
    RULE = {"monitoring": {"prometheusRule": {"enabled": True}}}

    def test_should_render_every_dynamo_alert_with_for_severity_summary_and_runbook(self):
        found = alerts(render_chart(["agg.yaml"], {**self.RULE, **PUBLISHING}, show_only=[PROMETHEUS_RULE]))
        assert set(found) == {"GptOssTTFTHigh", "GptOssITLHigh", "GptOssRequestsQueuing", "GptOssNoModelServed",
                              "GptOssModelDownloadFailed", "GptOssKVCacheNearFull"}
        docs = (CHART_DIR.parent.parent / "docs" / "monitoring.md").read_text()
        for name, rule in found.items():
            assert rule["for"] and rule["labels"]["severity"] in ("critical", "warning"), name
            assert rule["annotations"]["summary"] and rule["annotations"]["description"], name
            anchor = rule["annotations"]["runbook"].split("#")[1]
            assert f"\n### {name}\n" in docs and anchor == name.lower(), name

    def test_should_take_the_latency_targets_from_the_planner(self):
        # planner ttftMs 500 and itlMs 50: PRODUCTION-FACTS.md A3, the 1.2.1 planner's defaults.
        found = alerts(render_chart(["disagg-k8s.yaml"], self.RULE, show_only=[PROMETHEUS_RULE]))
        assert found["GptOssTTFTHigh"]["expr"].endswith(") > 0.5")
        assert found["GptOssITLHigh"]["expr"].endswith(") > 0.05")
        mine = alerts(render_chart(["disagg-k8s.yaml"], {"monitoring": {"prometheusRule": {
            "enabled": True, "ttftMs": 2000, "itlMs": 30}}}, show_only=[PROMETHEUS_RULE]))
        assert mine["GptOssTTFTHigh"]["expr"].endswith(") > 2") and mine["GptOssITLHigh"]["expr"].endswith(") > 0.03")

    def test_should_count_each_pod_once(self):
        for name, rule in alerts(render_chart(["agg.yaml"], {**self.RULE, **PUBLISHING},
                                              show_only=[PROMETHEUS_RULE])).items():
            if name != "GptOssModelDownloadFailed":  # kube-state-metrics, one series per Job
                assert "max by (namespace, pod" in rule["expr"], name

    def test_should_leave_out_what_this_deployment_cannot_raise(self):
        found = alerts(render_chart(["agg.yaml"], {**self.RULE, "modelCache": {"download": {"enabled": False}}},
                                    show_only=[PROMETHEUS_RULE]))
        # No KV-cache gauge without the workers' metric publishing; no download Job to fail.
        assert "GptOssKVCacheNearFull" not in found and "GptOssModelDownloadFailed" not in found

    def test_should_switch_alerts_off_and_set_for_and_severity(self):
        values = {"monitoring": {"prometheusRule": {"enabled": True, "alerts": {
            "GptOssITLHigh": {"enabled": False, "for": "10m", "severity": "warning"},
            "GptOssTTFTHigh": {"enabled": True, "for": "30s", "severity": "critical"}}}}}
        found = alerts(render_chart(["agg.yaml"], values, show_only=[PROMETHEUS_RULE]))
        assert "GptOssITLHigh" not in found
        assert (found["GptOssTTFTHigh"]["for"], found["GptOssTTFTHigh"]["labels"]["severity"]) == ("30s", "critical")

    def test_should_read_trtllm_serve_histograms_with_or_without_the_prefix(self):
        found = alerts(render_chart(["trtllm-serve-low-latency.yaml"], self.RULE, show_only=[PROMETHEUS_RULE]))
        assert set(found) == {"GptOssTTFTHigh", "GptOssITLHigh", "GptOssRequestsQueuing", "GptOssModelDownloadFailed"}
        assert '{__name__=~"(trtllm_)?time_to_first_token_seconds_bucket",namespace="llm"' in found["GptOssTTFTHigh"]["expr"]
        assert '(trtllm_)?request_queue_time_seconds_sum' in found["GptOssRequestsQueuing"]["expr"]

    def test_should_label_the_rule_for_the_prometheus_that_selects_it(self):
        values = {"monitoring": {"prometheusRule": {"enabled": True, "labels": {"release": "kube-prometheus-stack"}}}}
        rule = find(render_chart(["agg.yaml"], values, show_only=[PROMETHEUS_RULE]), "PrometheusRule")
        assert rule["apiVersion"] == "monitoring.coreos.com/v1"
        assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"


# Refusals (gpt-oss.checkValues.<concern>, templates/validation/_check-*.tpl): one table per concern, one case per
# message; tests/chart/validation/test_check_values.py counts them against the fail calls.
# gpt-oss.checkValues.monitoring (_check-monitoring.tpl): what the scalers, the planner and the picker read.
MONITORING_REFUSALS = [
    Refusal("planner-aic-before-1-3", "disagg-k8s.yaml", {"planner": {"enabled": True, "aicInterpolation": {"enabled": True}}, "dynamo": {"releaseLine": "1.2"}},
            "planner.aicInterpolation.enabled=true, but the planner is Dynamo 1.2.1 (planner.image.tag, else the runtime's "
            "version): its aiconfigurator wrapper passes get_model the backend object where every aiconfigurator release "
            "(0.8.0 to 0.12.0) takes the backend's name, so the sweep fails at start (\"'TRTLLMBackend' object cannot be "
            "converted to 'PyString'\", then \"Failed to obtain pre-deployment performance data\"); set "
            "planner.aicInterpolation.enabled=false, or a planner image of Dynamo 1.3.0 or newer"),
    Refusal("planner-throughput-without-data", "disagg-k8s.yaml",
            {"planner": {"enabled": True, "throughputScaling": True, "preDeploymentSweepingMode": "rapid"}},
            "planner.throughputScaling=true needs the engines' pre-deployment performance, and this deployment has none: "
            "dynamo.trtllm serves no get_perf_metrics endpoint (Dynamo 1.2.1 turns that self-benchmark on for vLLM workers "
            "only), planner.aicInterpolation.enabled=false, and the chart mounts no profile_results_dir, so the planner stops "
            "at start (\"Failed to obtain pre-deployment performance data\"); set planner.throughputScaling=false (load "
            "scaling decides from the workers' forward-pass metrics), or planner.aicInterpolation.enabled=true with a "
            "planner of Dynamo 1.3.0 or newer"),
    Refusal("planner-on-attention-dp", "agg.yaml", {"planner": {"enabled": True}, "dynamo": {"releaseLine": "1.2"}},
            "planner.enabled=true: the planner's load scaling decides from the forward-pass metrics the workers publish, and "
            "dynamo.trtllm 1.2.1 publishes none under attention DP (publisher.py: \"FPM publisher disabled under "
            "attention-DP\"), but workers.worker.attentionDP=true, so the planner would never scale workers.worker; set "
            "workers.worker.attentionDP=false, or scale the role with workers.worker.autoscaling instead of the planner"),
    Refusal("pool-before-trtllm-1-3", "trtllm-serve-low-latency.yaml", {"inferencePool": {"enabled": True}, "trtllmServe": {"image": {"tag": "1.2.0"}}},
            "inferencePool.enabled=true: the endpoint picker scores pods by trtllm_num_requests_waiting, "
            "trtllm_num_requests_running, trtllm_kv_cache_utilization, which TensorRT-LLM serves from release 1.3.0 on (PRs "
            "#11243 and #12545, after 1.2), but trtllmServe.image.tag=1.2.0 is TensorRT-LLM 1.2.0, so every pod would look "
            "idle and empty; set trtllmServe.image.tag to a TensorRT-LLM release 1.3.0 or newer, or inferencePool.enabled=false"),
    Refusal("trtllm-serve-scaler-on-a-missing-gauge", "trtllm-serve-max-throughput.yaml",
            {"trtllmServe": {"image": {"tag": "1.2.0"}, "autoscaling": {"enabled": True, "trigger": {"type": "prometheus", "metadata": {
         "serverAddress": "http://prometheus:9090", "threshold": "0.7", "query": "sum(trtllm_kv_cache_utilization)"}}}}},
            "trtllmServe.autoscaling reads trtllm_kv_cache_utilization, which TensorRT-LLM serves from release 1.3.0 on (PRs "
            "#11243 and #12545, after 1.2), but trtllmServe.image.tag=1.2.0 is TensorRT-LLM 1.2.0, so the scaler would read "
            "nothing and never scale; keep the default trigger (requests waiting in trtllm-serve's queue, from "
            "request_queue_time_seconds, which 1.2.0 serves), or set trtllmServe.image.tag to a release 1.3.0 or newer"),
    Refusal("cost-on-trtllm-serve", "trtllm-serve-low-latency.yaml",
            {"monitoring": {"prometheusRule": {"enabled": True}, "cost": {"enabled": True, "gpuHourPrice": {"B200": 5.5}}}},
            "monitoring.cost.enabled=true with runtime=trtllm-serve: the cost rules divide by the output tokens the Dynamo "
            "frontend counts (dynamo_frontend_output_tokens_total), and trtllm-serve serves no token counter (TensorRT-LLM "
            "1.2's collector has request counts and latency histograms only); set monitoring.cost.enabled=false, or "
            "runtime=dynamo"),
    Refusal("cost-without-prometheus-rule", "agg.yaml", {"monitoring": {"cost": {"enabled": True, "gpuHourPrice": {"GB200": 3}}}},
            "monitoring.cost.enabled=true renders recording rules into the PrometheusRule, but "
            "monitoring.prometheusRule.enabled=false; set monitoring.prometheusRule.enabled=true, or monitoring.cost.enabled=false"),
    Refusal("cost-without-a-price", "agg.yaml",
            {"monitoring": {"prometheusRule": {"enabled": True}, "cost": {"enabled": True, "gpuHourPrice": {"B200": 5.5}}}},
            "monitoring.cost.enabled=true needs the price of one GB200 GPU-hour (gpu.type=GB200), and "
            "monitoring.cost.gpuHourPrice has none ({\"B200\":5.5}); set monitoring.cost.gpuHourPrice.GB200 to what you pay, "
            "e.g. --set monitoring.cost.gpuHourPrice.GB200=5.5: the chart invents no price"),
    # Where the dashboard may be written (issue 55): the release namespace (llm here), or one allowedNamespaces names.
    Refusal("dashboard-in-a-kube-namespace", "agg.yaml",
            {"monitoring": {"dashboard": {"enabled": True, "namespace": "kube-system",
                                          "allowedNamespaces": ["kube-system"]}}},
            "monitoring.dashboard.namespace=kube-system is one of Kubernetes' own namespaces (kube-*), outside the release "
            "namespace llm: the chart writes no object there, monitoring.dashboard.allowedNamespaces or not; set "
            "monitoring.dashboard.namespace=\"\" (the release namespace), or the namespace of your Grafana's dashboard "
            "sidecar"),
    Refusal("dashboard-outside-the-release-namespace", "agg.yaml",
            {"monitoring": {"dashboard": {"enabled": True, "namespace": "team-a", "allowedNamespaces": ["monitoring"]}}},
            "monitoring.dashboard.namespace=team-a writes the dashboard's ConfigMap outside the release namespace llm, and "
            "monitoring.dashboard.allowedNamespaces ([\"monitoring\"]) does not name it; set "
            "monitoring.dashboard.namespace=\"\" (the release namespace), or name team-a in "
            "monitoring.dashboard.allowedNamespaces (under Argo CD, the Application's AppProject must allow it as a "
            "destination too: examples/argocd/appproject.yaml)"),
    *(Refusal(f"pool-on-older-release-{tag}", "trtllm-serve-low-latency.yaml",
              {"inferencePool": {"enabled": True}, "trtllmServe": {"image": {"tag": tag}, "allowUnlistedRelease": True}},
              f"trtllmServe.image.tag={tag} is TensorRT-LLM 1.2", extra=True) for tag in ["1.2.1", "1.2.0rc6"]),
]
MONITORING_REFUSALS += [
    # Prometheus' "scrape timeout greater than scrape interval": durations compared, not strings (90s > 1m).
    Refusal("scrape-timeout-above-interval", "agg.yaml",
            {"monitoring": {"podMonitor": {"enabled": True, "interval": "1m", "scrapeTimeout": "90s"}}},
            "monitoring.podMonitor.scrapeTimeout=90s is longer than monitoring.podMonitor.interval=1m: Prometheus refuses a "
            "scrape config whose timeout exceeds its interval"),
]
REFUSALS = {"monitoring": MONITORING_REFUSALS}


@pytest.mark.parametrize("case", refusal_params(REFUSALS))
def test_should_refuse_what_would_read_nothing(case):
    assert_refused(case)


class TestReleasesThatServeTheGauges:
    @pytest.mark.parametrize("tag", ["1.3.0", "1.3.1rc2", "sha256:0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd", "1.3.0rc23"])
    def test_should_render_the_pool_on_a_release_with_the_gauges_or_an_unknown_one(self, tag):
        objects = render_chart(["trtllm-serve-low-latency.yaml"], {"inferencePool": {"enabled": True},
                                                                   "trtllmServe": {"image": {"tag": tag},
                                                                                   "allowUnlistedRelease": True}},
                               show_only=[INFERENCE_POOL])
        assert find(objects, "InferencePool")

    def test_should_let_a_1_3_planner_sweep_with_aiconfigurator(self):
        values = {"planner": {"enabled": True, "image": {"tag": "1.3.0"}, "aicInterpolation": {"enabled": True},
                              "throughputScaling": True, "preDeploymentSweepingMode": "rapid"}}
        assert find(render_chart(["agg.yaml"], values, show_only=[DGD]), "DynamoGraphDeployment")


class TestTokenCost:
    """monitoring.cost: recording rules per role with the price and GPUs written out; promtool checks the numbers
    (tests/chart/monitoring/test_alerts.py TestCostRules), the e2e tier on the real frontend (tests/e2e/test_token_cost_live.py)."""
    VALUES = {"monitoring": {"prometheusRule": {"enabled": True}, "dashboard": {"enabled": True},
                             "cost": {"enabled": True, "gpuHourPrice": {"GB200": 3.0}, "window": "1h"}}}

    def rules(self, overlay: str, values: dict | None = None) -> list[dict]:
        # The 1.2 line's worker components (prefill, decode, tensorrt_llm); the 1.6 line's: tests/chart/monitoring/test_dynamo_metrics.py.
        objects = render_chart([overlay], deep_merge(deep_merge(self.VALUES, {"dynamo": {"releaseLine": "1.2"}}), values or {}),
                               show_only=[PROMETHEUS_RULE])
        groups = find(objects, "PrometheusRule")["spec"]["groups"]
        return [rule for group in groups if group["name"].endswith(".cost") for rule in group["rules"]]

    def test_should_record_each_role_and_all_with_its_gpus_and_the_price(self):
        rules = self.rules("disagg-k8s.yaml")
        gpus = {r["labels"]["role"]: r["expr"] for r in rules if r.get("record") == "gpt_oss:role_gpus"}
        assert sorted(gpus) == ["all", "decode", "prefill"]
        # disagg-k8s: prefill TP1 (1 GPU a pod), decode TP4 (4 GPUs a pod); each counts its pods reporting in.
        assert gpus["prefill"].endswith("dynamo_component=\"prefill\",dynamo_endpoint=\"generate\"})) or vector(0)) * 1")
        assert gpus["decode"].endswith("dynamo_component=\"tensorrt_llm\",dynamo_endpoint=\"generate\"})) or vector(0)) * 4")
        per_token = next(r for r in rules if r.get("record") == "gpt_oss:cost_per_million_output_tokens"
                         and r["labels"]["role"] == "decode")
        # 3 per GPU-hour over a 1h window (3600 s), per million output tokens.
        assert f"({gpus['decode']}) * 3 * 3600 / 3600 / (" in per_token["expr"]
        assert per_token["expr"].endswith("> 0) * 1000000")
        assert per_token["labels"] == {"namespace": "llm", "deployment": "gpt-oss", "role": "decode", "window": "1h"}

    def test_should_take_the_price_as_set_types_it_and_plan_it(self, capsys, monkeypatch):
        """docs/operations.md's command: --set types 3.00 and 2.5 as strings (Helm parses only integers), and the
        plan lists the alert beside the recording rules."""
        from tests.helpers import REPO_ROOT
        from tools.gptoss import plan as plan_tool
        monkeypatch.chdir(REPO_ROOT)
        code = plan_tool.main(["-f", "values/disagg-k8s.yaml", "--set", "monitoring.prometheusRule.enabled=true",
                               "--set", "monitoring.cost.enabled=true", "--set", "monitoring.cost.gpuHourPrice.GB200=3.00",
                               "--set", "monitoring.cost.maxCostPerMillionTokens=2.5"])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "GptOssTokenCostHigh (warning, for 30m); recording rules: gpt_oss:cost_per_million_output_tokens, " \
               "gpt_oss:cost_per_request, gpt_oss:role_gpus" in out
        rules = self.rules("disagg-k8s.yaml", {"monitoring": {"cost": {"gpuHourPrice": {"GB200": "3.00"},
                                                                        "maxCostPerMillionTokens": "2.5"}}})
        assert [r["expr"].endswith("> 2.5") for r in rules if r.get("alert")] == [True]
        assert all(" * 3.00 * 3600 / 3600" in r["expr"] for r in rules if r.get("record") == "gpt_oss:cost_per_request")

    @pytest.mark.parametrize("price", ["abc", "0", "0.0", "-1", "3.", "1e3"])
    def test_should_refuse_a_price_that_is_no_positive_decimal(self, price):
        from tests.helpers import render_error
        error = render_error("agg.yaml", deep_merge(self.VALUES, {"monitoring": {"cost": {"gpuHourPrice": {"GB200": price}}}}))
        assert "/monitoring/cost/gpuHourPrice/GB200" in error, error

    def test_should_render_the_alert_only_with_a_bound(self):
        assert not [r for r in self.rules("agg.yaml") if r.get("alert")]
        [alert] = [r for r in self.rules("agg.yaml", {"monitoring": {"cost": {"maxCostPerMillionTokens": 2.5}}})
                   if r.get("alert")]
        assert alert["alert"] == "GptOssTokenCostHigh"
        assert alert["expr"] == ('gpt_oss:cost_per_million_output_tokens{namespace="llm",deployment="gpt-oss",'
                                 'role="all"} > 2.5')
        assert (alert["for"], alert["labels"]) == ("30m", {"severity": "warning"})

    def test_should_add_the_cost_panels_only_with_cost(self):
        def titles(values):
            board = dashboard(render_chart(["agg.yaml"], values,
                                           show_only=[DASHBOARD]))
            return [panel["title"] for panel in board["panels"]]
        assert {"Cost per million output tokens", "Cost per request"} <= set(titles(self.VALUES))
        assert not {"Cost per million output tokens", "Cost per request"} & set(titles(ON))
