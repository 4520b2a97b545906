"""Autoscaling (KEDA ScaledObjects, HPAs on the scaling adapters and the trtllm-serve Deployment) and the SLA
planner component: what renders, what each scaler targets, and that everything is off by default.

Expected values are literals from ../shared/PRODUCTION-FACTS.md sections A and B.
"""
from __future__ import annotations

import copy
import json
import re

import jsonschema
import pytest
import yaml

from tests.helpers import (CHART_DIR, DGD, DYNAMO_OVERLAYS, HPA, OVERLAYS, REPO_ROOT, SCALED_OBJECT,
                           TRTLLM_SERVE_OVERLAYS, Refusal, assert_refused, dgd_components, dgd_workers, find,
                           load_values, refusal_params, render_chart, render_notes)
from tests.helpers.schemas import _strict, crd_file, dgd_errors, kubernetes_errors
from tools.gptoss import plan as plan_tool
from tools.gptoss.plan import scaling_lines
from tools.gptoss.yaml_text import load_yaml

# The literal queries below are the 1.2 line's names (docs/monitoring.md; the 1.6 line's: tests/chart/monitoring/test_dynamo_metrics.py).
LINE_1_2 = {"dynamo": {"releaseLine": "1.2"}}
API_VERSIONS = ["nvidia.com/v1beta1"]
SCALER_KINDS = {"ScaledObject", "HorizontalPodAutoscaler"}
PLANNER_KINDS = {"ServiceAccount", "Role", "RoleBinding"}
ADAPTER = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeploymentScalingAdapter"}
# The scaling-adapter names of the operator and the 1.2.1 planner: <dgd>-<lowercase component name>.
ADAPTERS = {"Frontend": "gpt-oss-frontend", "TRTLLMWorker": "gpt-oss-trtllmworker",
            "TRTLLMPrefillWorker": "gpt-oss-trtllmprefillworker", "TRTLLMDecodeWorker": "gpt-oss-trtllmdecodeworker"}
# The form that turns a component's adapter on (facts A1).
ADAPTER_ON = {"nvidia.com/v1beta1": {}, "nvidia.com/v1alpha1": {"enabled": True}}
# Default signals (docs/monitoring.md): requests in flight per frontend, selected by the dynamo_namespace target label
# the platform's and the chart's PodMonitors add; requests in flight on a worker role's generate endpoint, by the
# dynamo_namespace the runtime puts on its own series (- as _, the worker-hash suffix allowed) and its component.
FRONTEND_INFLIGHT = ('sum(max by (namespace, pod, worker_id, model) '
                     '(dynamo_frontend_inflight_requests{dynamo_namespace="llm-gpt-oss"}))')
AGG_INFLIGHT = ('sum(max by (namespace, pod, worker_id, model) (dynamo_component_inflight_requests'
                '{dynamo_namespace=~"llm_gpt_oss(_[a-z0-9]+)?",dynamo_component="tensorrt_llm",dynamo_endpoint="generate"}))')
TRTLLM_QUEUE = ('sum(max by (namespace, pod) (rate({__name__=~"(trtllm_)?request_queue_time_seconds_sum",'
                'namespace="llm",pod=~"gpt-oss-trtllm-serve-.+"}[1m])))')
# The queue gauge of TensorRT-LLM 1.3 (tensorrt_llm/metrics/collector.py; docs/monitoring.md), trtllm-serve's default.
TRTLLM_WAITING = 'sum(max by (namespace, pod) (trtllm_num_requests_waiting{namespace="llm",pod=~"gpt-oss-trtllm-serve-.+"}))'

# Targets whose planner can only scale from forward-pass metrics, which dynamo.trtllm 1.2.1 does not publish under
# attention DP: the chart refuses the planner there (tests/chart/validation/test_check_values.py).
PLANNER_OVERLAYS = [o for o in DYNAMO_OVERLAYS if o not in ("agg.yaml", "8xb200-single-node.yaml")]
PLANNER_CASES = [(o, api) for o in PLANNER_OVERLAYS for api in API_VERSIONS]
# A planner that decides by throughput from aiconfigurator's sweep: Dynamo 1.3.0 or newer (the chart refuses it before).
AIC_PLANNER = {"enabled": True, "image": {"tag": "1.3.0"}, "aicInterpolation": {"enabled": True},
               "throughputScaling": True, "preDeploymentSweepingMode": "rapid"}
PROMETHEUS = "http://prometheus-kube-prometheus-prometheus.monitoring.svc:9090"
CASES = [(o, api) for o in DYNAMO_OVERLAYS for api in API_VERSIONS]
CASE_IDS = [f"{o}-{api.split('/')[1]}" for o, api in CASES]


# The most worker replicas the one-node overlays' scalers and planner may run: their node's 8 B200 GPUs
# (gpt-oss.checkValues.placement counts maxReplicas and maxGpuBudget): TP4 prefill + TP4 decode, or 8 TP1 workers.
ONE_NODE_MAX_REPLICAS = {"8xb200-single-node.yaml": 1, "8xb200-single-node-balanced.yaml": 8}
ONE_NODE_GPU_BUDGET = 8


def autoscale_all(overlay_roles: list[str], scaler: str, api: str, overlay: str = "") -> dict:
    """Values that turn autoscaling on for the frontend and every worker role of an overlay (on a one-node overlay,
    no more worker replicas than its node holds)."""
    on = {"enabled": True, "scaler": scaler, "maxReplicas": 3}
    worker = {**on, "maxReplicas": ONE_NODE_MAX_REPLICAS.get(overlay, 3)}
    return {"dynamo": {"apiVersion": api}, "frontend": {"autoscaling": on},
            "workers": {role: {"autoscaling": worker} for role in overlay_roles}}


def enabled_roles(overlay: str) -> list[str]:
    dgd = find(render_chart([overlay], show_only=[DGD]), "DynamoGraphDeployment")
    keys = {"worker": "worker", "prefill": "prefill", "decode": "decode"}
    return [keys[view["type"]] for view in dgd_workers(dgd).values()]


def component_fields(dgd: dict) -> dict[str, dict]:
    return {name: view["fields"] for name, view in dgd_components(dgd).items()}


class TestOffByDefault:
    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_render_no_scaler_planner_or_adapter(self, overlay):
        objects = render_chart([overlay])
        assert not [o for o in objects if o["kind"] in SCALER_KINDS | PLANNER_KINDS]
        for o in objects:
            if o["kind"] == "DynamoGraphDeployment":
                assert all("scalingAdapter" not in f for f in component_fields(o).values())
                assert "Planner" not in dgd_components(o)
            if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "gpt-oss-engine" and "trtllm-serve.yaml" in o["data"]:
                assert "return_perf_metrics" not in o["data"]["trtllm-serve.yaml"]
            if o["kind"] == "Deployment":
                assert o["spec"]["replicas"] == 1


class TestDynamoScalers:
    @pytest.mark.parametrize("overlay,api", CASES, ids=CASE_IDS)
    def test_should_target_adapters_the_same_render_turns_on(self, overlay, api):
        scaler = "keda" if api.endswith("v1beta1") else "hpa"
        objects = render_chart([overlay], autoscale_all(enabled_roles(overlay), scaler, api, overlay))
        dgd = find(objects, "DynamoGraphDeployment")
        assert dgd_errors(dgd) == []
        scalers = [o for o in objects if o["kind"] in SCALER_KINDS]
        fields = component_fields(dgd)
        assert len(scalers) == len(fields)  # one per component: frontend and every worker role
        targets = {o["spec"]["scaleTargetRef"]["name"] for o in scalers}
        assert targets == {ADAPTERS[name] for name in fields}
        for o in scalers:
            assert o["kind"] == {"keda": "ScaledObject", "hpa": "HorizontalPodAutoscaler"}[scaler]
            assert {k: o["spec"]["scaleTargetRef"][k] for k in ADAPTER} == ADAPTER
        for name, f in fields.items():
            assert f["scalingAdapter"] == ADAPTER_ON[api], name

    @pytest.mark.parametrize("api", API_VERSIONS)
    def test_should_turn_on_only_the_scaled_components_adapter(self, api):
        values = {"dynamo": {"apiVersion": api}, "workers": {"decode": {"autoscaling": {"enabled": True}}}}
        objects = render_chart(["disagg-k8s.yaml"], values)
        fields = component_fields(find(objects, "DynamoGraphDeployment"))
        assert fields["TRTLLMDecodeWorker"]["scalingAdapter"] == ADAPTER_ON[api]
        assert "scalingAdapter" not in fields["TRTLLMPrefillWorker"] and "scalingAdapter" not in fields["Frontend"]
        [scaled] = [o for o in objects if o["kind"] in SCALER_KINDS]
        assert scaled["spec"]["scaleTargetRef"]["name"] == "gpt-oss-trtllmdecodeworker"

    def test_should_write_the_documented_keda_object(self):
        values = {**LINE_1_2, "workers": {"worker": {"autoscaling": {"enabled": True, "maxReplicas": 10}}}}
        so = find(render_chart(["agg.yaml"], values, show_only=[SCALED_OBJECT]), "ScaledObject")
        assert so["apiVersion"] == "keda.sh/v1alpha1" and so["metadata"]["name"] == "gpt-oss-worker"
        spec = so["spec"]
        assert (spec["minReplicaCount"], spec["maxReplicaCount"], spec["pollingInterval"], spec["cooldownPeriod"]) \
            == (1, 10, 15, 60)
        # Threshold: the role's decode slots per replica, 4 attention-DP ranks x 800 = 3200 (FACTS.md, agg).
        assert spec["triggers"] == [{"type": "prometheus", "metadata": {
            "serverAddress": PROMETHEUS, "query": AGG_INFLIGHT, "threshold": "3200"}}]
        assert so["metadata"]["annotations"]["gpt-oss/query"] == AGG_INFLIGHT
        annotations = so["metadata"]["annotations"]
        assert (annotations["gpt-oss/gpus-at-min-replicas"], annotations["gpt-oss/gpus-at-max-replicas"]) == ("4", "40")

    def test_should_write_the_documented_hpa_on_an_external_metric(self):
        behavior = {"scaleDown": {"stabilizationWindowSeconds": 600}}
        values = {**LINE_1_2, "workers": {"decode": {"autoscaling": {"enabled": True, "scaler": "hpa", "behavior": behavior}}}}
        hpa = find(render_chart(["disagg-k8s.yaml"], values, show_only=[HPA]), "HorizontalPodAutoscaler")
        assert hpa["apiVersion"] == "autoscaling/v2"
        # Decode's slots per replica: max_batch_size 1280, no attention DP (FACTS.md, disagg-k8s decode).
        assert hpa["spec"]["metrics"] == [{"type": "External", "external": {
            "metric": {"name": "dynamo_component_inflight_requests",
                       "selector": {"matchLabels": {"dynamo_component": "tensorrt_llm", "dynamo_endpoint": "generate"}}},
            "target": {"type": "AverageValue", "averageValue": "1280"}}}]
        # What prometheus-adapter answers with under docs/monitoring.md's rule (it adds the HPA's namespace).
        assert hpa["metadata"]["annotations"]["gpt-oss/query"] == (
            'sum(max by (namespace, pod, worker_id, model) (dynamo_component_inflight_requests'
            '{namespace="llm",dynamo_component="tensorrt_llm",dynamo_endpoint="generate"}))')
        assert hpa["spec"]["behavior"] == behavior
        for version in ("1.29.0", "1.37.0"):
            assert kubernetes_errors(hpa, version) == []

    def test_should_replace_the_trigger_and_metric_whole(self):
        ttft = {"type": "prometheus", "metadata": {"serverAddress": PROMETHEUS, "threshold": "0.5",
                                                   "activationThreshold": "0.1", "query": "ttft_p95"}}
        cpu = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                          "averageUtilization": 80}}}
        values = {"frontend": {"autoscaling": {"enabled": True, "scaler": "hpa", "metric": cpu}},
                  "workers": {"worker": {"autoscaling": {"enabled": True, "trigger": ttft}}}}
        objects = render_chart(["agg.yaml"], values)
        assert find(objects, "ScaledObject")["spec"]["triggers"] == [ttft]
        assert find(objects, "HorizontalPodAutoscaler")["spec"]["metrics"] == [cpu]

    @pytest.mark.parametrize("overlay,frontend,prefill,decode", [
        ("disagg-k8s.yaml", "1536", "64", "1280"), ("agg.yaml", "3600", None, None)])
    def test_should_default_each_threshold_to_what_the_role_is_sized_for(self, overlay, frontend, prefill, decode):
        """Frontend: the benchmark concurrency; a worker role: its decode slots per replica (FACTS.md)."""
        roles = {key: {"autoscaling": {"enabled": True}} for key in ("prefill", "decode") if prefill}
        objects = render_chart([overlay], {"frontend": {"autoscaling": {"enabled": True}}, "workers": roles},
                               show_only=[SCALED_OBJECT])
        thresholds = {o["metadata"]["name"]: o["spec"]["triggers"][0]["metadata"]["threshold"]
                      for o in objects if o["kind"] == "ScaledObject"}
        expected = {"gpt-oss-frontend": frontend, "gpt-oss-prefill": prefill, "gpt-oss-decode": decode}
        assert thresholds == {k: v for k, v in expected.items() if v}
        if prefill:
            query = find(objects, "ScaledObject", "gpt-oss-prefill")["spec"]["triggers"][0]["metadata"]["query"]
            assert 'dynamo_component="prefill"' in query

    def test_should_take_a_threshold_from_values(self):
        values = {"workers": {"worker": {"autoscaling": {"enabled": True, "threshold": "900"}}}}
        so = find(render_chart(["agg.yaml"], values, show_only=[SCALED_OBJECT]), "ScaledObject")
        assert so["spec"]["triggers"][0]["metadata"]["threshold"] == "900"

    @pytest.mark.parametrize("replicas,expected", [(1, 2), (3, 3), (9, 4)])
    def test_should_start_an_autoscaled_role_within_its_range(self, replicas, expected):
        values = {"workers": {"worker": {"replicas": replicas,
                                         "autoscaling": {"enabled": True, "minReplicas": 2, "maxReplicas": 4}}}}
        dgd = find(render_chart(["agg.yaml"], values, show_only=[DGD]), "DynamoGraphDeployment")
        assert dgd_workers(dgd)["TRTLLMWorker"]["replicas"] == expected

    def test_should_validate_against_the_keda_crd(self):
        crd = crd_file("keda.sh_scaledobjects.yaml")
        for overlay in ("agg.yaml", "trtllm-serve-max-throughput.yaml"):
            values = ({"trtllmServe": {"autoscaling": {"enabled": True}}} if "trtllm" in overlay else
                      {"frontend": {"autoscaling": {"enabled": True, "behavior": {"scaleUp": {"stabilizationWindowSeconds": 0}}}}})
            so = find(render_chart([overlay], values, show_only=[SCALED_OBJECT]), "ScaledObject")
            versions = {v["name"]: v for v in load_yaml(crd.read_text())["spec"]["versions"]}
            schema = _strict(copy.deepcopy(versions["v1alpha1"]["schema"]["openAPIV3Schema"]))
            assert [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(so)] == []


class TestTrtllmServe:
    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS, ids=TRTLLM_SERVE_OVERLAYS)
    @pytest.mark.parametrize("scaler", ["keda", "hpa"])
    def test_should_scale_the_deployment_and_expose_prometheus_metrics(self, overlay, scaler):
        values = {"trtllmServe": {"autoscaling": {"enabled": True, "scaler": scaler, "maxReplicas": 3}}}
        objects = render_chart([overlay], values)
        deployment = find(objects, "Deployment", "gpt-oss-trtllm-serve")
        assert "replicas" not in deployment["spec"]  # the scaler owns it
        [scaled] = [o for o in objects if o["kind"] in SCALER_KINDS]
        assert scaled["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                                    "name": "gpt-oss-trtllm-serve"}
        assert scaled["metadata"]["annotations"]["gpt-oss/gpus-at-max-replicas"] == "24"
        engine = find(objects, "ConfigMap", "gpt-oss-engine")["data"]["trtllm-serve.yaml"]
        assert "return_perf_metrics: true" in engine and "enable_iter_perf_stats: true" in engine

    def test_should_default_to_the_queue_gauge_of_the_default_release(self):
        """The default image (TensorRT-LLM 1.3.0rc29) serves trtllm_num_requests_waiting: KEDA reads it as it is."""
        values = {"trtllmServe": {"autoscaling": {"enabled": True}}}
        so = find(render_chart(["trtllm-serve-low-latency.yaml"], values, show_only=[SCALED_OBJECT]), "ScaledObject")
        assert so["spec"]["triggers"][0]["metadata"] == {
            "serverAddress": PROMETHEUS, "threshold": "10", "query": TRTLLM_WAITING}

    def test_should_ask_the_hpa_for_the_queue_gauge_of_the_default_release(self):
        values = {"trtllmServe": {"autoscaling": {"enabled": True, "scaler": "hpa"}}}
        hpa = find(render_chart(["trtllm-serve-low-latency.yaml"], values), "HorizontalPodAutoscaler")
        assert hpa["spec"]["metrics"][0]["external"] == {"metric": {"name": "trtllm_num_requests_waiting"},
                                                         "target": {"type": "AverageValue", "averageValue": "10"}}

    @pytest.mark.parametrize("tag", ["1.2.0", "1.3.0rc23", "sha256:0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd"])
    def test_should_default_to_the_queue_histogram_where_no_gauge_is_known(self, tag):
        """TensorRT-LLM 1.2.0 has no queue gauge (and an unconfirmed release may lack it); every release since 1.0
        serves the request_queue_time_seconds histogram, whose summed rate is the number waiting (Little's law)."""
        values = {"trtllmServe": {"image": {"tag": tag}, "allowUnlistedRelease": True, "autoscaling": {"enabled": True}}}
        so = find(render_chart(["trtllm-serve-low-latency.yaml"], values), "ScaledObject")
        assert so["spec"]["triggers"][0]["metadata"] == {
            "serverAddress": PROMETHEUS, "threshold": "10", "query": TRTLLM_QUEUE}

    def test_should_write_the_hpa_threshold_as_the_api_server_stores_it(self):
        values = {"trtllmServe": {"autoscaling": {"enabled": True, "scaler": "hpa", "threshold": "0.7"}}}
        hpa = find(render_chart(["trtllm-serve-low-latency.yaml"], values, show_only=[HPA]), "HorizontalPodAutoscaler")
        # 0.7 is stored as 700m: anything else would show as a diff in Argo CD forever.
        assert hpa["spec"]["metrics"][0]["external"]["target"] == {"type": "AverageValue", "averageValue": "700m"}

    def test_should_scrape_the_prometheus_path_with_monitoring_on(self):
        objects = render_chart(["trtllm-serve-max-throughput.yaml"], {"monitoring": {"podMonitor": {"enabled": True}}})
        monitor = find(objects, "PodMonitor")
        assert monitor["spec"]["podMetricsEndpoints"][0]["path"] == "/prometheus/metrics"
        assert monitor["spec"]["podMetricsEndpoints"][0]["port"] == "http"
        deployment = find(objects, "Deployment")
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert monitor["spec"]["selector"]["matchLabels"].items() <= labels.items()
        assert "http" in [p["name"] for p in deployment["spec"]["template"]["spec"]["containers"][0]["ports"]]
        engine = find(objects, "ConfigMap", "gpt-oss-engine")["data"]["trtllm-serve.yaml"]
        assert "return_perf_metrics: true" in engine and "enable_iter_perf_stats: true" in engine


def planner_config(dgd: dict) -> dict:
    planner = dgd_components(dgd)["Planner"]
    assert planner["main"]["command"] == ["python3", "-m", "dynamo.planner"]
    assert planner["args"][0] == "--config" and len(planner["args"]) == 2
    return json.loads(planner["args"][1])


class TestPlanner:
    @pytest.mark.parametrize("overlay,api", PLANNER_CASES, ids=[f"{o}-{a.split('/')[1]}" for o, a in PLANNER_CASES])
    def test_should_add_a_planner_component_and_the_workers_adapters(self, overlay, api):
        # The 1.2 line's planner (the 1.6 line's planner config: its own tests).
        planner = {"enabled": True, **({"maxGpuBudget": ONE_NODE_GPU_BUDGET} if overlay in ONE_NODE_MAX_REPLICAS else {})}
        dgd = find(render_chart([overlay], {"planner": planner, "dynamo": {"apiVersion": api, "releaseLine": "1.2"}},
                                show_only=[DGD]),
                   "DynamoGraphDeployment")
        assert dgd_errors(dgd) == []
        planner = dgd_components(dgd)["Planner"]
        if api.endswith("v1beta1"):
            assert planner["fields"]["type"] == "planner"
        else:
            assert planner["fields"]["componentType"] == "planner"
        assert planner["main"]["image"] == "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.2.1"
        config = planner_config(dgd)
        assert (config["environment"], config["backend"]) == ("kubernetes", "trtllm")
        workers = dgd_workers(dgd)
        assert config["mode"] == ("agg" if list(workers) == ["TRTLLMWorker"] else "disagg")
        for name, view in workers.items():
            assert view["fields"]["scalingAdapter"] == ADAPTER_ON[api], name
            # Load scaling reads the forward-pass metrics the workers publish only with this flag (1.2.1).
            assert "--publish-events-and-metrics" in view["args"], name
        assert "scalingAdapter" not in dgd_components(dgd)["Frontend"]["fields"]
        # What the 1.2.1 planner can decide with: load scaling only, no aiconfigurator sweep.
        assert (config["enable_load_scaling"], config["enable_throughput_scaling"]) == (True, False)
        assert "aic_interpolation" not in config

    def test_should_not_publish_worker_metrics_without_the_planner(self):
        dgd = find(render_chart(["disagg-k8s.yaml"], show_only=[DGD]), "DynamoGraphDeployment")
        assert not [n for n, v in dgd_workers(dgd).items() if "--publish-events-and-metrics" in v["args"]]

    @pytest.mark.parametrize("overlay,system,isl,osl,prefill,decode", [
        ("agg.yaml", "gb200", 128, 1000, {"tp": 1, "pp": 1, "dp": 4, "moe_tp": 1, "moe_ep": 4}, None),
        ("disagg-k8s.yaml", "gb200", 8192, 1024, {"tp": 1, "pp": 1, "dp": 1, "moe_tp": 1, "moe_ep": 1},
         {"tp": 4, "pp": 1, "dp": 1, "moe_tp": 4, "moe_ep": 1}),
        ("2xh100-truss.yaml", "h100_sxm", None, None, {"tp": 2, "pp": 1, "dp": 1, "moe_tp": 1, "moe_ep": 2}, None),
    ])
    def test_should_fill_aic_interpolation_from_the_plan(self, overlay, system, isl, osl, prefill, decode):
        config = planner_config(find(render_chart([overlay], {"planner": AIC_PLANNER},
                                                  show_only=[DGD]), "DynamoGraphDeployment"))
        aic = config["aic_interpolation"]
        assert (aic["hf_id"], aic["system"], aic["backend"]) == ("openai/gpt-oss-120b", system, "trtllm")
        if isl:
            assert (aic["isl"], aic["osl"]) == (isl, osl)
        assert aic["prefill_pick"] == prefill
        assert aic["decode_pick"] == (decode or prefill)

    def test_should_write_targets_intervals_and_budget_from_values(self):
        values = {"planner": {"enabled": True, "ttftMs": 800, "itlMs": 25, "maxGpuBudget": 12, "minGpuBudget": 5,
                              "throughputAdjustmentIntervalSeconds": 90, "loadAdjustmentIntervalSeconds": 10}}
        config = planner_config(find(render_chart(["disagg-k8s.yaml"], values,
                                                  show_only=[DGD]), "DynamoGraphDeployment"))
        assert {k: config[k] for k in ("ttft_ms", "itl_ms", "max_gpu_budget", "min_gpu_budget",
                                       "throughput_adjustment_interval_seconds", "load_adjustment_interval_seconds",
                                       "prefill_engine_num_gpu", "decode_engine_num_gpu")} == {
            "ttft_ms": 800, "itl_ms": 25, "max_gpu_budget": 12, "min_gpu_budget": 5,
            "throughput_adjustment_interval_seconds": 90, "load_adjustment_interval_seconds": 10,
            "prefill_engine_num_gpu": 1, "decode_engine_num_gpu": 4}

    @pytest.mark.parametrize("api", API_VERSIONS)
    def test_should_run_the_planner_pod_restricted(self, api):
        """PodSecurity restricted, like every pod of the chart: non-root, no privilege escalation, no capabilities."""
        dgd = find(render_chart(["disagg-k8s.yaml"], {"planner": {"enabled": True}, "dynamo": {"apiVersion": api}},
                                show_only=[DGD]),
                   "DynamoGraphDeployment")
        planner = dgd_components(dgd)["Planner"]
        pod = planner["pod_spec"]["securityContext"]
        assert (pod["runAsNonRoot"], pod["seccompProfile"]["type"]) == (True, "RuntimeDefault")
        container = planner["main"]["securityContext"]
        assert container["allowPrivilegeEscalation"] is False and container["capabilities"]["drop"] == ["ALL"]
        assert planner["main"]["image"].endswith(":1.7.0")  # pinned: the runtime's version, never latest

    def test_should_leave_the_frontend_to_its_own_scaler(self):
        values = {"planner": {"enabled": True}, "frontend": {"autoscaling": {"enabled": True}}}
        objects = render_chart(["disagg-k8s.yaml"], values, show_only=[SCALED_OBJECT])
        assert find(objects, "ScaledObject")["spec"]["scaleTargetRef"]["name"] == "gpt-oss-frontend"

    def test_should_render_namespaced_rbac_only_on_request(self):
        assert not [o for o in render_chart(["disagg-k8s.yaml"], {"planner": {"enabled": True}}) if o["kind"] in PLANNER_KINDS]
        objects = render_chart(["disagg-k8s.yaml"], {"planner": {"enabled": True, "rbac": {"create": True}}})
        role, binding = (find(objects, kind, "gpt-oss-planner") for kind in ("Role", "RoleBinding"))
        rules = {(group, resource): (rule["verbs"], rule.get("resourceNames")) for rule in role["rules"]
                 for group in rule["apiGroups"] for resource in rule["resources"]}
        # Its own DGD and its roles' adapters by name (tests/chart/test_security.py checks the verbs against its source).
        assert rules[("nvidia.com", "dynamographdeploymentscalingadapters/scale")] == (
            ["get", "patch"], ["gpt-oss-trtllmprefillworker", "gpt-oss-trtllmdecodeworker"])
        assert rules[("nvidia.com", "dynamographdeployments")] == (["get"], ["gpt-oss"])
        assert rules[("discovery.k8s.io", "endpointslices")] == (["list", "watch"], None)
        assert rules[("", "pods")] == (["list"], None)  # read only: the planner never patches a pod
        # Bound to the account the operator runs every planner pod as (its graph.go sets serviceAccountName on the
        # planner's pod template whatever the DGD says): the chart makes no ServiceAccount and sets none.
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "planner-serviceaccount", "namespace": "llm"}]
        assert binding["roleRef"]["name"] == role["metadata"]["name"]
        assert not [o for o in objects if o["kind"] == "ServiceAccount" and "planner" in o["metadata"]["name"]]
        pod = dgd_components(find(objects, "DynamoGraphDeployment"))["Planner"]["pod_spec"]
        assert "serviceAccountName" not in pod
        for obj in (role, binding):
            assert kubernetes_errors(obj, "1.29.0") == []
        # tools/plan.py's planner lines (from the plan document): the account, the operator's grant, the chart's Role.
        assert scaling_lines(objects)[1] == (
            "    runs as ServiceAccount planner-serviceaccount (the operator sets it on every planner pod of the namespace), "
            "with the operator's grant, which the chart cannot narrow: dynamographdeployments get, list, create, update, "
            "patch (every DGD of the namespace); dynamographdeploymentscalingadapters/scale patch (every adapter); "
            "dynamoworkermetadatas get, list, watch, create, update, patch, delete; endpointslices get, list, watch; and "
            "the chart's Role gpt-oss-planner (planner.rbac.create)")

    def test_should_state_the_planners_account_and_the_operators_grant_in_notes_and_the_plan(self):
        """The account the operator runs the planner as, and the grant the chart cannot narrow, as docs/security.md
        ("The planner's account") states them; the chart's Role only with planner.rbac.create."""
        grant = ("the operator's grant, which the chart cannot narrow: dynamographdeployments get, list, create, update, "
                 "patch (every DGD of the namespace); dynamographdeploymentscalingadapters/scale patch (every adapter); "
                 "dynamoworkermetadatas get, list, watch, create, update, patch, delete; endpointslices get, list, watch")
        notes = render_notes(["disagg-k8s.yaml"], {"planner": {"enabled": True}})
        assert ("    runs as ServiceAccount planner-serviceaccount (the operator sets it on every planner pod of the "
                "namespace), with the operator's\n    grant, which the chart cannot narrow: dynamographdeployments get,") in notes
        assert "endpointslices get, list, watch\n  Benchmark:" in notes  # no chart Role without planner.rbac.create
        with_role = render_notes(["disagg-k8s.yaml"], {"planner": {"enabled": True, "rbac": {"create": True}}})
        assert "endpointslices get, list, watch; and the chart's Role gpt-oss-planner (planner.rbac.create)\n" in with_role
        assert grant.replace("the operator's grant", "grant") in with_role.replace("operator's\n    grant", "grant")


class TestReadout:
    def test_should_print_range_gpus_scaler_and_metric_in_notes(self):
        values = {**LINE_1_2, "workers": {"worker": {"autoscaling": {"enabled": True, "maxReplicas": 3}}}}
        notes = render_notes(["agg.yaml"], values)
        assert ("workers.worker: 1-3 replicas, 4-12 GPUs, ScaledObject gpt-oss-worker on "
                "DynamoGraphDeploymentScalingAdapter gpt-oss-trtllmworker; metric " + AGG_INFLIGHT + ", 3200 per replica\n"
                "      its series come from any scrape of the workers' system port") in notes
        assert "owns its replica count" in notes

    def test_should_print_what_prometheus_adapter_must_answer_in_notes(self):
        notes = render_notes(["agg.yaml"], {**LINE_1_2, "frontend": {"autoscaling": {"enabled": True, "scaler": "hpa"}}})
        assert ("prometheus-adapter must answer it with (rules: docs/monitoring.md): sum(max by (namespace, pod, "
                'worker_id, model) (dynamo_frontend_inflight_requests{namespace="llm",dynamo_namespace="llm-gpt-oss"}))\n'
                "      its series come from the Dynamo platform's dynamo-frontend PodMonitor or monitoring.podMonitor") in notes

    def test_should_print_the_planner_targets_and_budget_in_notes(self):
        notes = render_notes(["disagg-k8s.yaml"], {"planner": {"enabled": True}, "dynamo": {"releaseLine": "1.2"}})
        assert ("scales TRTLLMPrefillWorker, TRTLLMDecodeWorker through their scaling adapters, at least 1 replica(s) "
                "each; sla targets TTFT 500 ms, ITL 50 ms; GPU budget 16 at most\n"
                "    decides by load, from the workers' forward-pass metrics (they publish them: "
                "--publish-events-and-metrics)") in notes
        aic = render_notes(["disagg-k8s.yaml"], {"planner": AIC_PLANNER})
        assert "; aiconfigurator model gb200, ISL 8192 / OSL 1024\n    decides by throughput" in aic


    def test_should_print_ranges_gpus_metric_and_planner_in_the_plan_command(self, capsys):
        values = {**LINE_1_2, "workers": {"decode": {"autoscaling": {"enabled": True, "maxReplicas": 4, "scaler": "hpa"}}},
                  "frontend": {"autoscaling": {"enabled": True, "maxReplicas": 3}}}
        # tools/plan.py's main, in this process (its renders memoized)
        code = plan_tool.main(["values/disagg-k8s.yaml", "--set-json", json.dumps(values)])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert ("Autoscaling workers.decode: 1-4 replicas, 4-16 GPUs, HorizontalPodAutoscaler gpt-oss-decode -> "
                "DynamoGraphDeploymentScalingAdapter gpt-oss-trtllmdecodeworker; metric External "
                'dynamo_component_inflight_requests {"averageValue": "1280", "type": "AverageValue"}') in out
        assert ("Autoscaling frontend: 1-3 replicas, 0-0 GPUs, ScaledObject gpt-oss-frontend -> "
                "DynamoGraphDeploymentScalingAdapter gpt-oss-frontend; metric prometheus " + FRONTEND_INFLIGHT) in out
        # Each scaler's query and the scrape setups its series come from (tools/plan.py monitoring_lines).
        assert ("  Query of ScaledObject gpt-oss-frontend (KEDA): " + FRONTEND_INFLIGHT + "\n"
                "    scrape: the Dynamo platform's dynamo-frontend PodMonitor or monitoring.podMonitor") in out
        assert ("  Query of HorizontalPodAutoscaler gpt-oss-decode (prometheus-adapter (rules: docs/monitoring.md)): "
                'sum(max by (namespace, pod, worker_id, model) (dynamo_component_inflight_requests{namespace="llm",'
                'dynamo_component="tensorrt_llm",dynamo_endpoint="generate"}))\n'
                "    scrape: any scrape of the workers' system port") in out
        planner_values = {"planner": {**AIC_PLANNER, "maxGpuBudget": 12}}
        code = plan_tool.main(["values/agg.yaml", "--set-json", json.dumps(planner_values)])
        planner, err = capsys.readouterr()
        assert code == 0, err
        assert ("SLA planner (component Planner, agg, sla): TTFT 500 ms, ITL 50 ms, GPU budget -1..12, "
                "min 1 replica(s) per worker role, aiconfigurator gb200 ISL 128 / OSL 1000") in planner


class TestLint:
    @pytest.mark.parametrize("overlay,values", [
        ("agg.yaml", {"frontend": {"autoscaling": {"enabled": True}},
                      "workers": {"worker": {"autoscaling": {"enabled": True, "scaler": "hpa"}}}}),
        ("disagg-k8s.yaml", {"planner": {"enabled": True, "rbac": {"create": True}}}),
        ("trtllm-serve-max-throughput.yaml", {"trtllmServe": {"autoscaling": {"enabled": True}},
                                              "monitoring": {"podMonitor": {"enabled": True}}}),
    ], ids=["agg-scalers", "disagg-planner", "trtllm-serve-scaler-and-podmonitor"])
    def test_should_lint_the_new_templates_strictly(self, overlay, values):
        from tests.chart.test_lint import lint, problems
        for kube_version in ("1.29.0", "1.37.0"):
            report = lint(load_values([overlay], values), kube_version)
            assert problems(report) == [], kube_version


# Refusals (gpt-oss.checkValues.<concern>, templates/validation/_check-*.tpl): one table per concern, one case per
# message; tests/chart/validation/test_check_values.py counts them against the fail calls.
# gpt-oss.checkValues.autoscaling (_check-autoscaling.tpl): scalers and planner; then the other runtime's variants.
AUTOSCALING_REFUSALS = [
    Refusal("autoscaling-on-disabled-role", "agg.yaml", {"workers": {"prefill": {"autoscaling": {"enabled": True}}}},
            "workers.prefill.autoscaling.enabled=true, but workers.prefill is not deployed (workers.prefill.enabled=false); "
            "turn workers.prefill.autoscaling.enabled off or deploy the role"),
    Refusal("autoscaling-min-replicas-zero", "disagg-k8s.yaml",
            {"workers": {"decode": {"autoscaling": {"enabled": True, "minReplicas": 0}}}},
            "workers.decode.autoscaling.minReplicas=0 is below 1: a Dynamo frontend with no workers drops the model from "
            "/v1/models, and then nothing scales it up again; allowed: minReplicas 1 or more"),
    Refusal("autoscaling-max-below-min", "agg.yaml",
            {"frontend": {"autoscaling": {"enabled": True, "minReplicas": 3, "maxReplicas": 2}}},
            "frontend.autoscaling.maxReplicas=2 is below frontend.autoscaling.minReplicas=3; allowed: maxReplicas >= minReplicas"),
    Refusal("autoscaler-and-planner", "disagg-k8s.yaml",
            {"planner": {"enabled": True}, "workers": {"decode": {"autoscaling": {"enabled": True, "scaler": "hpa"}}}},
            "planner.enabled=true and workers.decode.autoscaling.enabled=true: the planner scales the worker roles, and a "
            "HPA on the same role would fight it (one autoscaler per service); turn workers.decode.autoscaling.enabled off "
            "(frontend.autoscaling may stay)"),
    Refusal("planner-on-trtllm-serve", "trtllm-serve-low-latency.yaml", {"planner": {"enabled": True}},
            "planner.enabled=true needs runtime=dynamo (the SLA planner scales DynamoGraphDeployment components), but "
            "runtime=trtllm-serve; use trtllmServe.autoscaling instead"),
    Refusal("planner-no-scaling-mode", "agg.yaml",
            {"planner": {"enabled": True, "throughputScaling": False, "loadScaling": False}},
            "planner.throughputScaling=false and planner.loadScaling=false: the planner refuses to start without a scaling "
            "mode; turn one on"),
    Refusal("planner-throughput-without-sweep", "disagg-k8s.yaml",
            {"planner": {"enabled": True, "throughputScaling": True, "preDeploymentSweepingMode": "none"}},
            "planner.throughputScaling=true with planner.preDeploymentSweepingMode=none: the 1.2.1 planner refuses to start "
            "(throughput scaling needs a pre-deployment sweep to model the engines); allowed: preDeploymentSweepingMode "
            "rapid or thorough, or throughputScaling=false"),
    Refusal("planner-load-interval-not-below", "disagg-k8s.yaml",
            {"planner": {"enabled": True, "throughputScaling": True, "preDeploymentSweepingMode": "rapid",
                  "loadAdjustmentIntervalSeconds": 90, "throughputAdjustmentIntervalSeconds": 60}},
            "planner.loadAdjustmentIntervalSeconds=90 is not below planner.throughputAdjustmentIntervalSeconds=60: the "
            "1.2.1 planner refuses to start (load scaling is the fast loop, throughput scaling the slow one); allowed: "
            "loadAdjustmentIntervalSeconds < 60"),
    Refusal("planner-min-budget-above-max", "agg.yaml", {"planner": {"enabled": True, "minGpuBudget": 20}},
            "planner.minGpuBudget=20 is above planner.maxGpuBudget=16: the planner cannot keep both; allowed: "
            "planner.minGpuBudget at most 16, or -1 (no floor)"),
    Refusal("planner-min-endpoint-above-budget", "disagg-k8s.yaml",
            {"planner": {"enabled": True, "minEndpoint": 2, "maxGpuBudget": 8}},
            "planner.minEndpoint=2 keeps at least 2 replicas of each worker role, 10 GPUs (workers.prefill: 2 x 1; "
            "workers.decode: 2 x 4), above planner.maxGpuBudget=8: the planner's floor is above its ceiling; allowed: "
            "planner.maxGpuBudget 10 or more, or a lower planner.minEndpoint"),
    # The other runtime's variants.
    Refusal("trtllm-serve-min-replicas", "trtllm-serve-low-latency.yaml",
            {"trtllmServe": {"autoscaling": {"enabled": True, "minReplicas": 0}}},
            "trtllmServe.autoscaling.minReplicas=0 is below 1: trtllm-serve has no activator, so nothing would scale a "
            "Deployment at zero up again; allowed: minReplicas 1 or more", extra=True),
    Refusal("frontend-autoscaling-on-trtllm-serve", "trtllm-serve-low-latency.yaml",
            {"frontend": {"autoscaling": {"enabled": True}}},
            "frontend.autoscaling.enabled=true, but frontend is not deployed (runtime=trtllm-serve); "
            "turn frontend.autoscaling.enabled off or deploy the role", extra=True),
    Refusal("trtllm-serve-autoscaling-on-dynamo", "agg.yaml", {"trtllmServe": {"autoscaling": {"enabled": True}}},
            "trtllmServe.autoscaling.enabled=true, but trtllmServe is not deployed (runtime=dynamo); "
            "turn trtllmServe.autoscaling.enabled off or deploy the role", extra=True),
]
REFUSALS = {"autoscaling": AUTOSCALING_REFUSALS}


@pytest.mark.parametrize("case", refusal_params(REFUSALS))
def test_should_refuse_with_a_message_naming_the_keys(case):
    assert_refused(case)


class TestArgoCd:
    def test_should_ignore_exactly_the_replicas_the_adapters_own(self):
        """The README's Application snippet: its ignoreDifferences name every component whose adapter is on."""
        readme = (REPO_ROOT / "examples" / "argocd" / "README.md").read_text()
        section = readme.split("## Autoscaling", 1)[1].split("\n## ", 1)[0]
        snippet = yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.S).group(1))["spec"]
        helm = snippet["source"]["helm"]
        overlay = helm["valueFiles"][0].rsplit("/", 1)[-1]
        dgd = find(render_chart([overlay], helm["valuesObject"], show_only=[DGD]), "DynamoGraphDeployment")
        owned = {name for name, fields in component_fields(dgd).items() if "scalingAdapter" in fields}
        [entry] = [e for e in snippet["ignoreDifferences"] if e["kind"] == "DynamoGraphDeployment"]
        ignored = {re.search(r'select\(\.name == "([^"]+)"\)', path).group(1)
                   for path in entry["jqPathExpressions"] if "replicas" in path}
        assert owned == ignored == {"TRTLLMDecodeWorker"}
