"""Exposure, disruption budgets and routing against a real API server (and its disruption controller).

The Gateway API (standard channel) and InferencePool CRDs are found where tests/helpers/schemas.py finds CRDs (the project
keeps no copy).
The disruption checks need kube-controller-manager (its ReplicaSet and disruption controllers); without it they
skip. The pods stand in for the operator's: a Deployment whose pod template carries the labels the Dynamo operator
puts on a component's pods (tests/chart/exposure/test_exposure.py cites its source); no kubelet runs, so the test marks them Ready
through the status subresource.
"""
from __future__ import annotations

import time

import pytest

from tests.helpers import controllers
from tests.cluster import kube
from tests.helpers import find, render_chart, skip_for_missing_part
from tests.helpers.schemas import crd_file, crd_lookup
from tests.chart.exposure.test_exposure import INGRESS, POOL, ROUTE
from tools.gptoss.yaml_text import load_yaml_all

CRD_GROUPS = ("gateway-api", "gateway-api-inference-extension")
EXPOSURE = {**INGRESS, **ROUTE}
EXPOSURE_KINDS = {"Ingress", "HTTPRoute", "InferencePool", "PodDisruptionBudget", "ServiceAccount", "Role",
                  "RoleBinding"}


@pytest.fixture(scope="session")
def exposure_crds(cluster_access) -> None:
    """Installs (or updates) the Gateway API and InferencePool CRDs, found where tests/helpers/schemas.py finds CRDs."""
    crds = [d for crd in crd_lookup.pinned_crds() if crd.group in CRD_GROUPS
            for d in load_yaml_all(crd_file(crd.name).read_text()) if d and d.get("kind") == "CustomResourceDefinition"]
    controllers.install_crds(cluster_access.api_client, cluster_access.kubeconfig, crds, "exposure-crds")


class TestExposureObjects:
    @pytest.mark.parametrize("overlay,extra", [("agg.yaml", EXPOSURE),
                                               ("trtllm-serve-low-latency.yaml", {**EXPOSURE, **POOL})],
                             ids=["agg", "trtllm-serve-low-latency+pool"])
    def test_should_accept_every_exposure_object(self, exposure_crds, release, k8s, overlay, extra, dgd_api):
        if overlay.startswith("trtllm-serve") and dgd_api != kube.API_VERSIONS[0]:
            pytest.skip("renders no DynamoGraphDeployment: runs once")
        release.install(overlay, extra)
        rendered = [o for o in release.manifest() if o["kind"] in EXPOSURE_KINDS]
        expected = {"Ingress", "HTTPRoute", "PodDisruptionBudget"} | (
            {"InferencePool", "ServiceAccount", "Role", "RoleBinding"} if overlay.startswith("trtllm-serve") else set())
        assert {o["kind"] for o in rendered} == expected
        for obj in rendered:
            live = k8s.get(obj, release.namespace)
            assert live is not None, f"{obj['kind']} {obj['metadata']['name']} was not stored"
            assert kube.subset_diff(kube.comparable(obj), live) == [], f"{obj['kind']} {obj['metadata']['name']}"
        if overlay.startswith("trtllm-serve"):
            epp = [o for o in release.manifest() if o["metadata"]["name"] == "gpt-oss-trtllm-serve-epp"]
            assert {o["kind"] for o in epp} == {"Deployment", "Service", "ConfigMap", "ServiceAccount", "Role",
                                                "RoleBinding"}
            for obj in epp:
                assert k8s.get(obj, release.namespace) is not None


def stand_in_deployment(name: str, labels: dict, replicas: int) -> dict:
    """A Deployment whose pods carry the operator's labels (as the operator's DCD pathway makes them)."""
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"nvidia.com/selector": name}},
                     "template": {"metadata": {"labels": {**labels, "nvidia.com/selector": name}},
                                  # Admitted in the tier's PodSecurity-restricted namespaces.
                                  "spec": {"securityContext": {"runAsNonRoot": True, "runAsUser": 65535,
                                                               "seccompProfile": {"type": "RuntimeDefault"}},
                                           "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                                           "securityContext": {
                                                               "allowPrivilegeEscalation": False,
                                                               "capabilities": {"drop": ["ALL"]}}}]}}}}


def set_ready(k8s, namespace: str, pod: str, ready: bool) -> None:
    status = "True" if ready else "False"
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    k8s.core.patch_namespaced_pod_status(pod, namespace, {"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": status, "lastTransitionTime": now},
        {"type": "ContainersReady", "status": status, "lastTransitionTime": now}]}})


def evict(k8s, namespace: str, pod: str) -> int:
    from kubernetes.client.exceptions import ApiException
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": namespace}}
    try:
        k8s.core.create_namespaced_pod_eviction(pod, namespace, body)
        return 201
    except ApiException as error:
        return error.status


class TestDisruptionController:
    def test_should_count_the_pods_and_refuse_an_eviction_with_no_disruption_left(self, controllers, namespace, k8s):
        if not controllers:
            skip_for_missing_part("the cluster has no kube-controller-manager (no recently renewed kube-system/"
                        "kube-controller-manager Lease): no ReplicaSet or disruption controller runs")
        objects = render_chart(["agg.yaml"], {"workers": {"worker": {"replicas": 2}}})
        budget = find(objects, "PodDisruptionBudget", "gpt-oss-worker")
        labels = budget["spec"]["selector"]["matchLabels"]
        assert labels == {"nvidia.com/dynamo-graph-deployment-name": "gpt-oss", "nvidia.com/dynamo-component": "TRTLLMWorker"}
        k8s.policy.create_namespaced_pod_disruption_budget(namespace, budget)
        k8s.apps.create_namespaced_deployment(namespace, stand_in_deployment("gpt-oss-trtllmworker", labels, 2))
        selector = ",".join(f"{k}={v}" for k, v in labels.items())
        pods = kube.wait_for("2 worker pods", lambda: (p := k8s.pods(namespace, selector)) and len(p) == 2 and p,
                             timeout=60)
        names = sorted(p["metadata"]["name"] for p in pods)
        for name in names:
            set_ready(k8s, namespace, name, True)

        def status(expected: int, allowed: int):
            live = k8s.get(budget, namespace)["status"]
            return live if (live.get("expectedPods"), live.get("disruptionsAllowed")) == (expected, allowed) else None

        live = kube.wait_for("the budget to count 2 healthy pods, 1 disruption allowed", lambda: status(2, 1), timeout=60)
        assert live["currentHealthy"] == 2 and live["desiredHealthy"] == 1

        set_ready(k8s, namespace, names[1], False)
        kube.wait_for("the budget to allow no disruption", lambda: status(2, 0), timeout=60)
        assert evict(k8s, namespace, names[0]) == 429  # the one healthy pod stays
        assert evict(k8s, namespace, names[1]) == 201  # unhealthyPodEvictionPolicy: AlwaysAllow
