"""Exposure, disruption budgets and routing (issue 17): Ingress, HTTPRoute, the inference pool for trtllm-serve,
PodDisruptionBudgets and KV-aware routing, offline; one negative case per refusal of
templates/validation/_check-exposure.tpl and _check-routing.tpl, in one table per concern.

Pod labels the Dynamo operator puts on every pod of a DynamoGraphDeployment component, read in the operator's
source (ai-dynamo/dynamo, deploy/operator/...):
- Grove pathway: `generateLabels()` in deploy/operator/internal/dynamo/graph.go @d4872d7e893368976cb9ce9a2799d7e276c54f2d
  sets `nvidia.com/dynamo-graph-deployment-name` = the DGD name (re-applied after the user's labels are merged)
  and `nvidia.com/dynamo-component` = the DGD component (service) name on each PodClique template.
- Deployment pathway: `generateSingleDCD()` in the same graph.go sets both labels on the DynamoComponentDeployment,
  and `generatePodTemplateSpec()` in deploy/operator/internal/controller/dynamocomponentdeployment_controller.go
  @c452788db4b47a58b65fd2e70ff68c0aba5ebe89 copies the DCD's labels onto the pod template (`getKubeLabels`) and
  sets `nvidia.com/dynamo-graph-deployment-name` again.
So the chart's budgets select on exactly those two labels.
"""
from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path

import pytest
import yaml

from tests.helpers import (CHART_DIR, NETWORK_POLICY_ON, DGD, DYNAMO_OVERLAYS, ENGINE_CONFIG, HTTP_ROUTE, INGRESS_TEMPLATE, OVERLAYS, PDBS,
                           PICKER_CONFIG, PICKER_DEPLOYMENT, PROMETHEUS_PEERS, TRTLLM_SERVE_OVERLAYS, Refusal, assert_refused,
                           dgd_components, dgd_pods, find, refusal_params, render_chart, render_notes)
from tests.helpers.schemas import KUBERNETES_VERSIONS, crd_errors, kubernetes_errors

OPERATOR_DGD_LABEL = "nvidia.com/dynamo-graph-deployment-name"
OPERATOR_COMPONENT_LABEL = "nvidia.com/dynamo-component"

# PodDisruptionBudgets per overlay: {name: DGD component it guards (None for trtllm-serve)}.
BUDGETS = {
    "2xh100-truss.yaml": {"gpt-oss-frontend": "Frontend", "gpt-oss-worker": "TRTLLMWorker"},
    "agg.yaml": {"gpt-oss-frontend": "Frontend", "gpt-oss-worker": "TRTLLMWorker"},
    "8xb200-single-node-balanced.yaml": {"gpt-oss-frontend": "Frontend", "gpt-oss-worker": "TRTLLMWorker"},
    "8xb200-single-node.yaml": {"gpt-oss-frontend": "Frontend", "gpt-oss-prefill": "TRTLLMPrefillWorker",
                                "gpt-oss-decode": "TRTLLMDecodeWorker"},
    "disagg-k8s.yaml": {"gpt-oss-frontend": "Frontend", "gpt-oss-prefill": "TRTLLMPrefillWorker",
                        "gpt-oss-decode": "TRTLLMDecodeWorker"},
    "disagg-k8s-balanced.yaml": {"gpt-oss-frontend": "Frontend", "gpt-oss-prefill": "TRTLLMPrefillWorker",
                                 "gpt-oss-decode": "TRTLLMDecodeWorker"},
    "trtllm-serve-low-latency.yaml": {"gpt-oss-trtllm-serve": None},
    "trtllm-serve-max-throughput.yaml": {"gpt-oss-trtllm-serve": None},
}

INGRESS = {"ingress": {"enabled": True, "className": "nginx",
                       "hosts": [{"host": "gpt-oss.example.com", "paths": [{"path": "/", "pathType": "Prefix"}]}],
                       "tls": [{"secretName": "gpt-oss-tls", "hosts": ["gpt-oss.example.com"]}]}}
ROUTE = {"httpRoute": {"enabled": True, "parentRefs": [{"name": "inference-gateway", "namespace": "gateway-system"}],
                       "hostnames": ["gpt-oss.example.com"]}}
# The picker reads gauges TensorRT-LLM serves from 1.3.0 on: the chart refuses the pool on the pinned 1.2.0.
POOL = {"inferencePool": {"enabled": True}, "trtllmServe": {"image": {"tag": "1.3.0rc29"}}}
# KV routing as the 1.2 line writes it (the 1.2.1 parsers check the flags; the 1.6 line's queue threshold:
# tests/chart/dynamo/test_dynamo_release.py).
LINE_1_2 = {"dynamo": {"releaseLine": "1.2"}}
KV_AGG = {"frontend": {"routerMode": "kv"}, "workers": {"worker": {"engine": {"kv_cache_config": {"enable_block_reuse": True}}}},
          **LINE_1_2}
KV_DISAGG = {**LINE_1_2, "frontend": {"routerMode": "kv"},
             "workers": {"prefill": {"engine": {"kv_cache_config": {"enable_block_reuse": True}}},
                         "decode": {"engine": {"kv_cache_config": {"enable_block_reuse": True}}}}}
# The Service the API is served from: the operator's frontend Service, or the chart's trtllm-serve Service.
SERVING = {name: ("gpt-oss-trtllm-serve", 8000) if name in TRTLLM_SERVE_OVERLAYS else ("gpt-oss-frontend", 8000)
           for name in OVERLAYS}
# The metric flags the GAIE v1.5.0 chart sets for trtllm-serve (PRODUCTION-FACTS.md section C), which the v1.5.0
# picker refuses ("flag ... is deprecated and cannot be used; configure metrics via engineConfigs in
# EndpointPickerConfig instead": its pkg/epp/server/options.go, seen in tests/cluster/test_gateway.py), and the
# deprecated metrics path flag the config replaces.
EPP_REFUSED_FLAGS = ("--total-queued-requests-metric", "--total-running-requests-metric",
                     "--kv-cache-usage-percentage-metric", "--lora-info-metric", "--cache-info-metric",
                     "--model-server-metrics-path")
# trtllm-serve's gauges (../shared/trtllm/RELEASES-FACTS.md section 2, tensorrt_llm/metrics/collector.py).
TRTLLM_SERVE_ENGINE = {"name": "trtllm-serve", "queuedRequestsSpec": "trtllm_num_requests_waiting",
                       "runningRequestsSpec": "trtllm_num_requests_running",
                       "kvUsageSpec": "trtllm_kv_cache_utilization", "loraSpec": "", "cacheInfoSpec": "",
                       "cacheBlockSizeSpec": "trtllm_kv_cache_tokens_per_block",
                       "cacheNumBlocksSpec": "trtllm_kv_cache_max_blocks"}
ROUTER_MODES_1_2_1 = ["round-robin", "random", "power-of-two", "kv", "direct", "least-loaded", "device-aware-weighted"]


def matches(selector: dict, labels: dict) -> bool:
    return selector.items() <= labels.items()


def operator_pod_labels(dgd: dict) -> dict[str, dict]:
    """Each component's pod labels once the operator has added its own (see the module docstring)."""
    return {name: dict(pod["metadata"].get("labels", {}), **{OPERATOR_DGD_LABEL: dgd["metadata"]["name"],
                                                             OPERATOR_COMPONENT_LABEL: name})
            for name, pod in dgd_pods(dgd).items()}


class TestDisruptionBudgets:
    @pytest.mark.parametrize("overlay", OVERLAYS)
    def test_should_render_one_budget_per_role_by_default(self, overlay):
        budgets = [o for o in render_chart([overlay], show_only=[PDBS]) if o["kind"] == "PodDisruptionBudget"]
        assert sorted(b["metadata"]["name"] for b in budgets) == sorted(BUDGETS[overlay])
        for budget in budgets:
            assert budget["apiVersion"] == "policy/v1"
            assert budget["spec"]["maxUnavailable"] == 1 and "minAvailable" not in budget["spec"]
            assert budget["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"

    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS)
    def test_should_select_exactly_its_components_pods_by_the_operators_labels(self, overlay):
        objects = render_chart([overlay])
        pods = operator_pod_labels(find(objects, "DynamoGraphDeployment"))
        for budget in (o for o in objects if o["kind"] == "PodDisruptionBudget"):
            selector = budget["spec"]["selector"]["matchLabels"]
            assert set(selector) == {OPERATOR_DGD_LABEL, OPERATOR_COMPONENT_LABEL}
            selected = [name for name, labels in pods.items() if matches(selector, labels)]
            assert selected == [BUDGETS[overlay][budget["metadata"]["name"]]]

    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS)
    def test_should_select_the_server_pods_and_no_other_pod(self, overlay):
        objects = render_chart([overlay], POOL)
        budget = find(objects, "PodDisruptionBudget")
        selector = budget["spec"]["selector"]["matchLabels"]
        server = find(objects, "Deployment", "gpt-oss-trtllm-serve")
        assert matches(selector, server["spec"]["template"]["metadata"]["labels"])
        others = [find(objects, "Deployment", "gpt-oss-trtllm-serve-epp")["spec"]["template"]["metadata"]["labels"],
                  find(objects, "Pod", "gpt-oss-smoke-test")["metadata"]["labels"]]
        others += [o["spec"]["template"]["metadata"]["labels"] for o in objects if o["kind"] == "Job"]
        assert not any(matches(selector, labels) for labels in others)

    def test_should_take_min_available_instead(self):
        values = {"podDisruptionBudget": {"maxUnavailable": None, "minAvailable": 1},
                  "workers": {"prefill": {"replicas": 2}, "decode": {"replicas": 3}}, "frontend": {"replicas": 2}}
        budgets = [o for o in render_chart(["disagg-k8s-balanced.yaml"], values,
                                           show_only=[PDBS]) if o["kind"] == "PodDisruptionBudget"]
        assert [b["spec"].get("minAvailable") for b in budgets] == [1, 1, 1]
        assert not any("maxUnavailable" in b["spec"] for b in budgets)

    def test_should_render_none_when_disabled(self):
        objects = render_chart(["agg.yaml"], {"podDisruptionBudget": {"enabled": False}}, show_only=[PDBS])
        assert not [o for o in objects if o["kind"] == "PodDisruptionBudget"]


class TestIngress:
    @pytest.mark.parametrize("overlay", OVERLAYS)
    def test_should_route_every_path_to_the_serving_service(self, overlay):
        objects = render_chart([overlay], INGRESS, show_only=[INGRESS_TEMPLATE])
        ingress = find(objects, "Ingress")
        assert ingress["apiVersion"] == "networking.k8s.io/v1"
        assert ingress["spec"]["ingressClassName"] == "nginx"
        assert ingress["spec"]["tls"] == INGRESS["ingress"]["tls"]
        [rule] = ingress["spec"]["rules"]
        assert rule["host"] == "gpt-oss.example.com"
        [path] = rule["http"]["paths"]
        assert (path["path"], path["pathType"]) == ("/", "Prefix")
        backend = path["backend"]["service"]
        assert (backend["name"], backend["port"]["number"]) == SERVING[overlay]

    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS)
    def test_should_use_a_port_the_trtllm_serve_service_has(self, overlay):
        objects = render_chart([overlay], INGRESS)
        backend = find(objects, "Ingress")["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
        service = find(objects, "Service", backend["name"])
        assert backend["port"]["number"] in [p["port"] for p in service["spec"]["ports"]]

    @pytest.mark.parametrize("overlay", OVERLAYS)
    def test_should_render_nothing_by_default(self, overlay):
        assert not [o for o in render_chart([overlay]) if o["kind"] in ("Ingress", "HTTPRoute", "InferencePool")]


class TestHTTPRoute:
    @pytest.mark.parametrize("overlay", OVERLAYS)
    def test_should_route_to_the_serving_service_with_the_defaults(self, overlay):
        route = find(render_chart([overlay], ROUTE, show_only=[HTTP_ROUTE]), "HTTPRoute")
        assert route["apiVersion"] == "gateway.networking.k8s.io/v1"
        assert route["spec"]["parentRefs"] == [{"name": "inference-gateway", "namespace": "gateway-system"}]
        assert route["spec"]["hostnames"] == ["gpt-oss.example.com"]
        [rule] = route["spec"]["rules"]
        assert rule["matches"] == [{"path": {"type": "PathPrefix", "value": "/"}}]
        assert rule["timeouts"] == {"request": "300s"}
        [backend] = rule["backendRefs"]
        assert (backend["kind"], backend["name"], backend["port"]) == ("Service", *SERVING[overlay])

    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS)
    def test_should_route_to_the_inference_pool_when_it_is_on(self, overlay):
        objects = render_chart([overlay], {**ROUTE, **POOL})
        [backend] = find(objects, "HTTPRoute")["spec"]["rules"][0]["backendRefs"]
        assert backend == {"group": "inference.networking.k8s.io", "kind": "InferencePool",
                           "name": "gpt-oss-trtllm-serve"}
        assert find(objects, "InferencePool", backend["name"])


class TestInferencePool:
    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS)
    def test_should_pool_the_server_pods_on_their_port(self, overlay):
        objects = render_chart([overlay], POOL)
        pool = find(objects, "InferencePool")
        assert pool["apiVersion"] == "inference.networking.k8s.io/v1"
        server = find(objects, "Deployment", "gpt-oss-trtllm-serve")
        assert matches(pool["spec"]["selector"]["matchLabels"], server["spec"]["template"]["metadata"]["labels"])
        assert pool["spec"]["targetPorts"] == [{"number": 8000}]
        assert server["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] == 8000
        ref = pool["spec"]["endpointPickerRef"]
        assert (ref["kind"], ref["name"], ref["port"], ref["failureMode"]) == \
            ("Service", "gpt-oss-trtllm-serve-epp", {"number": 9002}, "FailClose")
        service = find(objects, "Service", ref["name"])
        assert {(p["port"], p["targetPort"]) for p in service["spec"]["ports"]} == \
            {(9002, "grpc"), (9003, "grpc-health"), (9090, "metrics")}

    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS)
    def test_should_run_the_upstream_endpoint_picker_without_the_metric_flags_it_refuses(self, overlay):
        objects = render_chart([overlay], POOL, show_only=[PICKER_DEPLOYMENT])
        epp = find(objects, "Deployment", "gpt-oss-trtllm-serve-epp")
        pod = epp["spec"]["template"]["spec"]
        [container] = pod["containers"]
        assert container["image"] == "registry.k8s.io/gateway-api-inference-extension/epp:v1.5.0"
        args = container["args"]
        refused = [arg for arg in args if arg.split("=")[0] in EPP_REFUSED_FLAGS]
        assert not refused, refused
        assert args[args.index("--pool-name") + 1] == "gpt-oss-trtllm-serve"
        assert args[args.index("--pool-namespace") + 1] == "llm"
        assert args[args.index("--config-file") + 1] == "/config/default-plugins.yaml"
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
        assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
        assert pod["serviceAccountName"] == "gpt-oss-trtllm-serve-epp"
        assert matches(epp["spec"]["selector"]["matchLabels"], epp["spec"]["template"]["metadata"]["labels"])

    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS)
    def test_should_configure_the_three_scorers_on_prometheus_metrics(self, overlay):
        config = yaml.safe_load(find(render_chart([overlay], POOL,
                                                  show_only=[PICKER_CONFIG]), "ConfigMap", "gpt-oss-trtllm-serve-epp")
                                ["data"]["default-plugins.yaml"])
        assert config["kind"] == "EndpointPickerConfig"
        plugins = {p["type"]: p.get("parameters") for p in config["plugins"]}
        assert plugins["metrics-data-source"]["path"] == "/prometheus/metrics"
        # The gauges by trtllm-serve's names: the picker's metric flags are refused, the config names them.
        assert plugins["core-metrics-extractor"] == {"defaultEngine": "trtllm-serve",
                                                     "engineConfigs": [TRTLLM_SERVE_ENGINE]}
        weights = {p["pluginRef"]: p["weight"] for p in config["schedulingProfiles"][0]["plugins"]}
        assert weights == {"queue-scorer": 2, "kv-cache-utilization-scorer": 2, "prefix-cache-scorer": 3}

    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS)
    def test_should_grant_read_access_to_pods_and_pools_only(self, overlay):
        objects = render_chart([overlay], POOL)
        rules = find(objects, "Role", "gpt-oss-trtllm-serve-epp")["rules"]
        assert {(g, r) for rule in rules for g in rule["apiGroups"] for r in rule["resources"]} >= \
            {("", "pods"), ("inference.networking.k8s.io", "inferencepools")}
        assert all(rule["verbs"] == ["get", "watch", "list"] for rule in rules)
        binding = find(objects, "RoleBinding", "gpt-oss-trtllm-serve-epp")
        assert binding["roleRef"]["name"] == "gpt-oss-trtllm-serve-epp"
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "gpt-oss-trtllm-serve-epp", "namespace": "llm"}]
        assert find(objects, "ServiceAccount", "gpt-oss-trtllm-serve-epp")

    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS)
    def test_should_make_the_server_expose_prometheus_metrics(self, overlay):
        engine = yaml.safe_load(find(render_chart([overlay], POOL,
                                                  show_only=[ENGINE_CONFIG]), "ConfigMap", "gpt-oss-engine")
                                ["data"]["trtllm-serve.yaml"])
        assert engine["return_perf_metrics"] is True and engine["enable_iter_perf_stats"] is True
        plain = yaml.safe_load(find(render_chart([overlay], show_only=[ENGINE_CONFIG]), "ConfigMap", "gpt-oss-engine")
                               ["data"]["trtllm-serve.yaml"])
        assert "return_perf_metrics" not in plain and "enable_iter_perf_stats" not in plain


def site_packages_dynamo() -> Path:
    dynamo = pytest.importorskip("dynamo.frontend.frontend_args", reason="needs ai-dynamo (requirements-e2e.txt)")
    return Path(dynamo.__file__).resolve().parent.parent


def frontend_parser() -> argparse.ArgumentParser:
    """The 1.2.1 frontend's own argument parser (dynamo.frontend.main.parse_args builds the same)."""
    from dynamo.frontend.frontend_args import FrontendArgGroup
    parser = argparse.ArgumentParser(exit_on_error=False)
    FrontendArgGroup().add_arguments(parser)
    return parser


def trtllm_worker_flags() -> set[str]:
    """Every flag dynamo.trtllm 1.2.1 declares, read from its source (importing it needs tensorrt_llm)."""
    root = site_packages_dynamo()
    flags = set()
    for path in (root / "trtllm" / "backend_args.py", root / "common" / "configuration" / "groups" / "runtime_args.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("add_argument", "add_negatable_bool_argument"):
                name = next((k.value.value for k in node.keywords if k.arg == "flag_name"), None)
                if name:
                    flags.add(name)
                    if node.func.id == "add_negatable_bool_argument":
                        flags.add("--no-" + name[2:])
    return flags


def frontend_args(objects) -> list[str]:
    return next(v for v in dgd_components(find(objects, "DynamoGraphDeployment")).values() if v["type"] == "frontend")["args"]


class TestRouting:
    def test_should_accept_exactly_the_modes_of_the_1_2_1_frontend(self):
        site_packages_dynamo()
        action = next(a for a in frontend_parser()._actions if "--router-mode" in a.option_strings)
        assert list(action.choices) == ROUTER_MODES_1_2_1
        schema = json.loads((CHART_DIR / "values.schema.json").read_text())
        assert schema["properties"]["frontend"]["properties"]["routerMode"]["enum"] == ROUTER_MODES_1_2_1

    @pytest.mark.parametrize("mode", ROUTER_MODES_1_2_1)
    def test_should_pass_each_mode_to_the_frontend(self, mode):
        values = KV_AGG if mode == "kv" else {"frontend": {"routerMode": mode}}
        args = frontend_args(render_chart(["agg.yaml"], values, show_only=[DGD]))
        assert args[args.index("--router-mode") + 1] == mode

    def test_should_route_aggregated_workers_by_kv_events(self):
        objects = render_chart(["agg.yaml"], KV_AGG)
        assert frontend_args(objects) == ["--router-mode", "kv", "--kv-cache-block-size", "32", "--http-port", "8000"]
        worker = dgd_components(find(objects, "DynamoGraphDeployment"))["TRTLLMWorker"]["args"]
        assert worker[-3:] == ["--kv-block-size", "32", "--publish-events-and-metrics"]
        engine = yaml.safe_load(find(objects, "ConfigMap", "gpt-oss-engine")["data"]["worker.yaml"])
        assert engine["kv_cache_config"]["tokens_per_block"] == 32
        assert engine["kv_cache_config"]["enable_block_reuse"] is True

    def test_should_take_the_engines_block_size(self):
        values = {"frontend": {"routerMode": "kv"},
                  "workers": {"worker": {"engine": {"kv_cache_config": {"enable_block_reuse": True, "tokens_per_block": 64}}}}}
        objects = render_chart(["agg.yaml"], values, show_only=[DGD])
        assert frontend_args(objects)[2:4] == ["--kv-cache-block-size", "64"]
        worker = dgd_components(find(objects, "DynamoGraphDeployment"))["TRTLLMWorker"]["args"]
        assert worker[worker.index("--kv-block-size") + 1] == "64"

    def test_should_use_the_new_flag_name_from_runtime_1_3_0(self):
        values = {**KV_AGG, "dynamo": {"releaseLine": "1.2", "image": {"tag": "1.3.0"}}}
        worker = dgd_components(find(render_chart(["agg.yaml"], values,
                                                  show_only=[DGD]), "DynamoGraphDeployment"))["TRTLLMWorker"]["args"]
        assert worker[-1] == "--publish-kv-events"

    @pytest.mark.parametrize("overlay", ["disagg-k8s.yaml", "disagg-k8s-balanced.yaml", "8xb200-single-node.yaml"])
    def test_should_predict_cache_state_when_disaggregated(self, overlay):
        objects = render_chart([overlay], KV_DISAGG, show_only=[DGD])
        assert frontend_args(objects) == ["--router-mode", "kv", "--kv-cache-block-size", "32", "--no-router-kv-events",
                                          "--http-port", "8000"]
        for worker in dgd_components(find(objects, "DynamoGraphDeployment")).values():
            if worker["type"] != "frontend":
                assert worker["args"][-2:] == ["--kv-block-size", "32"]
                assert "--publish-events-and-metrics" not in worker["args"]

    @pytest.mark.parametrize("overlay,values", [("agg.yaml", KV_AGG), ("disagg-k8s.yaml", KV_DISAGG)])
    def test_should_write_flags_the_1_2_1_parsers_know(self, overlay, values):
        site_packages_dynamo()
        objects = render_chart([overlay], values, show_only=[DGD])
        parsed = frontend_parser().parse_args(frontend_args(objects))
        assert (parsed.router_mode, parsed.kv_cache_block_size) == ("kv", 32)
        assert parsed.use_kv_events is (overlay == "agg.yaml")
        known = trtllm_worker_flags()
        for worker in dgd_components(find(objects, "DynamoGraphDeployment")).values():
            if worker["type"] != "frontend":
                kv_flags = {a for a in worker["args"] if a.startswith("--")} & {"--kv-block-size", "--publish-events-and-metrics"}
                assert kv_flags == ({"--kv-block-size", "--publish-events-and-metrics"} if overlay == "agg.yaml"
                                    else {"--kv-block-size"})
                assert kv_flags <= known

    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS)
    def test_should_keep_round_robin_and_no_kv_flags_by_default(self, overlay):
        objects = render_chart([overlay], show_only=[DGD])
        assert frontend_args(objects)[:2] == ["--router-mode", "round-robin"]
        for worker in dgd_components(find(objects, "DynamoGraphDeployment")).values():
            assert "--kv-block-size" not in worker["args"]


class TestNotes:
    def test_should_say_how_to_reach_it_what_guards_it_and_how_it_routes(self):
        notes = render_notes(["agg.yaml"], {**INGRESS, **KV_AGG})
        assert "Ingress: curl https://gpt-oss.example.com/v1/models" in notes
        assert "PodDisruptionBudget gpt-oss-worker guards worker (1 replica(s), at most 1 down during a drain)" in notes
        assert "Router mode: kv (KV blocks of 32 tokens, workers publish KV events with --publish-events-and-metrics" in notes

    def test_should_fall_back_to_port_forward(self):
        notes = render_notes(["trtllm-serve-low-latency.yaml"])
        assert notes.split("5. Reach it")[1].splitlines()[1].strip() == \
            ("No Ingress or HTTPRoute (ingress.enabled, httpRoute.enabled): reach svc/gpt-oss-trtllm-serve with the "
             "port-forward of step 2")


# Refusals (gpt-oss.checkValues.<concern>, templates/validation/_check-*.tpl): one table per concern, one case per
# message; tests/chart/validation/test_check_values.py counts them against the fail calls.
# gpt-oss.checkValues.exposure (_check-exposure.tpl): routes that are served.
EXPOSURE_REFUSALS = [
    Refusal("ingress-without-hosts", "agg.yaml", {"ingress": {"enabled": True}},
            "ingress.enabled=true needs at least one ingress.hosts entry ({host, paths: [{path: /, pathType: Prefix}]}): an "
            "Ingress without a host rule would take every host of its class; set ingress.hosts, or ingress.enabled=false"),
    Refusal("route-without-parents", "trtllm-serve-low-latency.yaml", {"httpRoute": {"enabled": True}},
            "httpRoute.enabled=true needs at least one httpRoute.parentRefs entry (the Gateway to attach to, e.g. {name: "
            "inference-gateway, namespace: gateway-system}): a route without a parent is never served; set "
            "httpRoute.parentRefs, or httpRoute.enabled=false"),
    Refusal("pool-on-dynamo", "agg.yaml", POOL,
            "inferencePool.enabled=true renders the upstream endpoint picker for runtime=trtllm-serve, but runtime=dynamo: "
            "Dynamo has its own endpoint picker (a DynamoGraphDeployment component of type epp, see Dynamo's "
            "docs/kubernetes/gateway-api), which this chart does not render because its Dynamo 1.2.x packaging is "
            "unconfirmed; set inferencePool.enabled=false (httpRoute then routes to the frontend), or runtime=trtllm-serve"),
]
# gpt-oss.checkValues.disruption (_check-exposure.tpl): budgets that let a node drain.
DISRUPTION_REFUSALS = [
    Refusal("budget-both", "agg.yaml", {"podDisruptionBudget": {"minAvailable": 0}},
            "podDisruptionBudget.minAvailable=0 and podDisruptionBudget.maxUnavailable=1 are both set, but a "
            "PodDisruptionBudget takes one of them: set podDisruptionBudget.maxUnavailable=null to use minAvailable, or "
            "podDisruptionBudget.minAvailable=null"),
    Refusal("budget-neither", "agg.yaml", {"podDisruptionBudget": {"maxUnavailable": None}},
            "podDisruptionBudget.enabled=true needs podDisruptionBudget.maxUnavailable (default 1) or "
            "podDisruptionBudget.minAvailable; set one, or podDisruptionBudget.enabled=false"),
    Refusal("budget-max-zero", "trtllm-serve-max-throughput.yaml", {"podDisruptionBudget": {"maxUnavailable": 0}},
            "podDisruptionBudget.maxUnavailable=0 never allows an eviction, so a node drain would hang forever; allowed: 1 "
            "or more, or podDisruptionBudget.enabled=false"),
    Refusal("budget-min-not-below-replicas", "disagg-k8s-balanced.yaml",
            {"podDisruptionBudget": {"maxUnavailable": None, "minAvailable": 2}, "frontend": {"replicas": 3}},
            "podDisruptionBudget.minAvailable=2 is not below workers.prefill.replicas=2, so that role's budget would never "
            "allow an eviction and a node drain would hang forever; allowed: podDisruptionBudget.minAvailable below every "
            "role's replicas, or podDisruptionBudget.maxUnavailable instead"),
]
# gpt-oss.checkValues.routing (_check-routing.tpl): KV routing.
ROUTING_REFUSALS = [
    Refusal("kv-without-block-reuse", "agg.yaml", {"frontend": {"routerMode": "kv"}},
            "frontend.routerMode=kv sends each request to the worker that already caches its prefix, but "
            "workers.worker.engine.kv_cache_config.enable_block_reuse=false turns that cache off; set it to true (or null: "
            "the chart then turns reuse on), or another frontend.routerMode"),
    Refusal("kv-two-block-sizes", "disagg-k8s.yaml",
            {"frontend": {"routerMode": "kv"},
             "workers": {"prefill": {"engine": {"kv_cache_config": {"enable_block_reuse": True, "tokens_per_block": 64}}},
                  "decode": {"engine": {"kv_cache_config": {"enable_block_reuse": True, "tokens_per_block": 32}}}}},
            "frontend.routerMode=kv needs one KV block size on the frontend and every worker, but "
            "workers.decode.engine.kv_cache_config.tokens_per_block=32 and "
            "workers.prefill.engine.kv_cache_config.tokens_per_block=64 differ; set the same tokens_per_block on every role "
            "(or none: 32)"),
]
REFUSALS = {"exposure": EXPOSURE_REFUSALS, "disruption": DISRUPTION_REFUSALS, "routing": ROUTING_REFUSALS}


@pytest.mark.parametrize("case", refusal_params(REFUSALS))
def test_should_refuse(case):
    assert_refused(case)


class TestEndpointPickerNetworkPolicy:
    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS)
    def test_should_let_the_picker_scrape_the_servers_and_reach_the_api(self, overlay):
        objects = render_chart([overlay], {**POOL, "networkPolicy": NETWORK_POLICY_ON})
        picker_labels = find(objects, "Deployment", "gpt-oss-trtllm-serve-epp")["spec"]["template"]["metadata"]["labels"]
        server_labels = find(objects, "Deployment", "gpt-oss-trtllm-serve")["spec"]["template"]["metadata"]["labels"]
        picker = find(objects, "NetworkPolicy", "gpt-oss-endpoint-picker")["spec"]
        assert matches(picker["podSelector"]["matchLabels"], picker_labels)
        assert [{p["port"] for p in rule["ports"]} for rule in picker["ingress"]] == [{9002, 9003}]  # 9090: nobody
        to_server, to_api = picker["egress"]
        assert matches(to_server["to"][0]["podSelector"]["matchLabels"], server_labels)
        assert to_server["ports"] == [{"port": 8000, "protocol": "TCP"}]
        assert {p["port"] for p in to_api["ports"]} == {443, 6443}
        assert to_api["to"] == NETWORK_POLICY_ON["apiServer"]["to"]  # the API server's peers only, never any address
        scrape = find(objects, "NetworkPolicy", "gpt-oss-endpoint-picker-scrape")["spec"]
        assert matches(scrape["podSelector"]["matchLabels"], server_labels)
        assert matches(scrape["ingress"][0]["from"][0]["podSelector"]["matchLabels"], picker_labels)
        assert scrape["ingress"][0]["ports"] == [{"port": 8000, "protocol": "TCP"}]


    def test_should_admit_only_the_prometheus_peers_to_the_metrics_port_and_serve_no_profiles(self):
        # v1.5.0 serves /debug/pprof/ beside /metrics on 9090 unless told not to; the port admits Prometheus only.
        peers = PROMETHEUS_PEERS
        objects = render_chart(["trtllm-serve-low-latency.yaml"], {**POOL, "networkPolicy": {
            **NETWORK_POLICY_ON, "clients": [{"podSelector": {"matchLabels": {"role": "gateway"}}}],
            "prometheus": {"to": peers}}})
        picker = find(objects, "NetworkPolicy", "gpt-oss-endpoint-picker")["spec"]
        assert picker["ingress"] == [
            {"ports": [{"port": 9002, "protocol": "TCP"}, {"port": 9003, "protocol": "TCP"}],
             "from": [{"podSelector": {"matchLabels": {"role": "gateway"}}}]},
            {"from": peers, "ports": [{"port": 9090, "protocol": "TCP"}]}]
        args = find(objects, "Deployment", "gpt-oss-trtllm-serve-epp")["spec"]["template"]["spec"]["containers"][0]["args"]
        assert "--enable-pprof=false" in args and "--metrics-endpoint-auth=false" in args


NEW_KINDS = {"Ingress", "HTTPRoute", "InferencePool", "PodDisruptionBudget", "ServiceAccount", "Role", "RoleBinding",
             "NetworkPolicy"}
CRD_KINDS = {"HTTPRoute", "InferencePool"}


def exposure_objects(overlay: str) -> list[dict]:
    """Every object this feature adds, all switched on (the pool and its picker with trtllm-serve)."""
    extra = {**INGRESS, **ROUTE, "networkPolicy": NETWORK_POLICY_ON}
    if overlay in TRTLLM_SERVE_OVERLAYS:
        extra.update(POOL)
    objects = render_chart([overlay], extra)
    picker = [o for o in objects if o["metadata"]["name"] == "gpt-oss-trtllm-serve-epp"]
    return [o for o in objects if o["kind"] in NEW_KINDS] + [o for o in picker if o["kind"] not in NEW_KINDS]


class TestUpstreamSchemas:
    @pytest.mark.parametrize("overlay", OVERLAYS)
    def test_should_match_the_gateway_api_and_inference_pool_crds(self, overlay):
        # Schema and every CEL rule of the upstream CRDs (tests/helpers/schemas.py finds them by apiVersion and kind).
        checked = [o for o in exposure_objects(overlay) if o["kind"] in CRD_KINDS]
        assert {o["kind"] for o in checked} == ({"HTTPRoute", "InferencePool"} if overlay in TRTLLM_SERVE_OVERLAYS
                                                else {"HTTPRoute"})
        for obj in checked:
            assert crd_errors(obj) == [], obj["kind"]

    @pytest.mark.parametrize("kubernetes_version", KUBERNETES_VERSIONS)
    @pytest.mark.parametrize("overlay", ["agg.yaml", "trtllm-serve-low-latency.yaml"])
    def test_should_render_core_objects_valid_for_kubernetes(self, overlay, kubernetes_version):
        core = [o for o in exposure_objects(overlay) if o["kind"] not in CRD_KINDS]
        errors = {f"{o['kind']}/{o['metadata']['name']}": kubernetes_errors(o, kubernetes_version) for o in core}
        assert not {k: v for k, v in errors.items() if v}


class TestPlanTool:
    def test_should_print_the_routes_the_budgets_and_the_router(self):
        from tools.gptoss.plan import plan
        text = plan(["agg.yaml"], {**INGRESS, **ROUTE, **KV_AGG})
        assert "  Reach: Ingress gpt-oss https://gpt-oss.example.com/ -> Service gpt-oss-frontend:8000" in text
        assert ("  Reach: HTTPRoute gpt-oss on Gateway inference-gateway (gpt-oss.example.com) -> "
                "Service gpt-oss-frontend:8000") in text
        assert ("  PodDisruptionBudget gpt-oss-worker (maxUnavailable 1): pods nvidia.com/dynamo-component=TRTLLMWorker, "
                "nvidia.com/dynamo-graph-deployment-name=gpt-oss") in text
        assert "  Router: --router-mode kv --kv-cache-block-size 32" in text

    def test_should_fall_back_to_port_forward_and_name_the_pool(self):
        from tools.gptoss.plan import plan
        assert ("  Reach: kubectl port-forward -n llm svc/gpt-oss-frontend 8000:8000 (no Ingress or HTTPRoute)"
                in plan(["agg.yaml"], {}))
        text = plan(["trtllm-serve-low-latency.yaml"], {**ROUTE, **POOL})
        assert "-> InferencePool gpt-oss-trtllm-serve" in text
        assert "  Router: InferencePool gpt-oss-trtllm-serve, endpoint picker gpt-oss-trtllm-serve-epp" in text
        assert "Deployment gpt-oss-trtllm-serve (trtllm-serve, no Dynamo)" in text
