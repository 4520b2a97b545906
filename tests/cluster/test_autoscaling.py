"""Autoscaling on a real control plane: the API server stores every scaler the chart renders, kube-controller-manager's
horizontal-pod-autoscaler controller can read the scale of what the chart's HPAs target, and upgrades keep the
replica counts the scaling adapters own.

No Dynamo operator runs: the test creates the DynamoGraphDeploymentScalingAdapter the operator would create. The
adapter CRD (../shared/dynamo/crds) names the operator's conversion webhook, which does not exist here, so it is
installed with `conversion: {strategy: None}` (PRODUCTION-FACTS A1), next to KEDA's CRDs from its pinned module
(ci/cluster/go/keda; tests/helpers/controllers.py). KEDA itself reads the ScaledObjects in tests/e2e/test_keda_live.py.
"""
from __future__ import annotations

import copy

import pytest

from tests.helpers import controllers
from tests.cluster import kube
from tests.helpers import skip_for_missing_part
from tests.helpers.schemas import crd_file
from tools.gptoss.yaml_text import load_yaml

# heavy: its seconds in CI's cluster plane (python -m ci.cluster timings), so that pytest-xdist starts it before the
# quick files and it does not run last while the other workers idle (tests/conftest.py)
pytestmark = pytest.mark.heavy(40)

ADAPTER_CRD = "nvidia.com_dynamographdeploymentscalingadapters.yaml"
ADAPTERS = "dynamographdeploymentscalingadapters"
HPA_TIMEOUT = 120  # the HPA controller syncs every 15 s


@pytest.fixture(scope="session")
def scaling_crds(cluster_access):
    """The scaling-adapter CRD (conversion None) and KEDA's CRDs (from its pinned module), established. Left in place:
    pytest-xdist workers share the cluster, and a CRD one worker deleted would vanish under another's test (and the
    HPA controller's discovery would lose the kind)."""
    adapter = copy.deepcopy(load_yaml(crd_file(ADAPTER_CRD).read_text()))
    adapter["spec"]["conversion"] = {"strategy": "None"}
    try:
        keda = controllers.crds(controllers.KEDA)
    except LookupError as error:
        skip_for_missing_part(f"KEDA's CRDs: {error}")
    controllers.install_crds(cluster_access.api_client, cluster_access.kubeconfig, [adapter, *keda], "scaling-crds")


def create_adapter(k8s: kube.Kube, namespace: str, name: str, dgd: str, service: str) -> None:
    """The v1alpha1 adapter the operator creates for a component whose scalingAdapter is on."""
    body = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeploymentScalingAdapter",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": 1, "dgdRef": {"name": dgd, "serviceName": service}}}
    k8s.custom.create_namespaced_custom_object("nvidia.com", "v1alpha1", namespace, ADAPTERS, body)


def hpa_condition(k8s: kube.Kube, namespace: str, name: str, kind: str) -> dict | None:
    from kubernetes import client
    hpa = client.AutoscalingV2Api(k8s.api_client).read_namespaced_horizontal_pod_autoscaler(name, namespace)
    conditions = k8s.api_client.sanitize_for_serialization(hpa).get("status", {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == kind), None)


def wait_condition(k8s, namespace, name, kind, status, reason) -> dict:
    def seen():
        condition = hpa_condition(k8s, namespace, name, kind)
        return condition if condition and (condition["status"], condition["reason"]) == (status, reason) else None
    return kube.wait_for(f"HPA {name} {kind}={status} reason {reason}", seen, timeout=HPA_TIMEOUT,
                         explain=lambda: f"last {kind}: {hpa_condition(k8s, namespace, name, kind)}\n"
                                         + k8s.describe_events(namespace, name))


def stored(k8s: kube.Kube, namespace: str, obj: dict) -> dict:
    """The live copy of a rendered scaler."""
    from kubernetes import client
    name = obj["metadata"]["name"]
    if obj["kind"] == "HorizontalPodAutoscaler":
        live = client.AutoscalingV2Api(k8s.api_client).read_namespaced_horizontal_pod_autoscaler(name, namespace)
        return k8s.api_client.sanitize_for_serialization(live)
    return k8s.custom.get_namespaced_custom_object("keda.sh", "v1alpha1", namespace, "scaledobjects", name)


AGG_SCALED = {"frontend": {"autoscaling": {"enabled": True, "maxReplicas": 2}},
              "workers": {"worker": {"autoscaling": {"enabled": True, "scaler": "hpa", "maxReplicas": 3}}}}


class TestScalers:
    def test_should_store_every_scaler_and_let_the_hpa_controller_scale_the_adapter(
            self, scaling_crds, release, k8s, controllers):
        release.install("agg.yaml", AGG_SCALED)
        scalers = [o for o in release.manifest() if o["kind"] in ("ScaledObject", "HorizontalPodAutoscaler")]
        assert sorted((o["kind"], o["metadata"]["name"]) for o in scalers) == [
            ("HorizontalPodAutoscaler", "gpt-oss-worker"), ("ScaledObject", "gpt-oss-frontend")]
        for obj in scalers:
            assert kube.subset_diff(kube.comparable(obj), stored(k8s, release.namespace, obj)) == []
        if not controllers:
            skip_for_missing_part("no kube-controller-manager runs, so no HPA controller reports conditions")
        create_adapter(k8s, release.namespace, "gpt-oss-trtllmworker", "gpt-oss", "TRTLLMWorker")
        wait_condition(k8s, release.namespace, "gpt-oss-worker", "AbleToScale", "True", "SucceededGetScale")
        # The operator sets the adapter's status.selector; until then the HPA cannot read pod metrics.
        wait_condition(k8s, release.namespace, "gpt-oss-worker", "ScalingActive", "False", "InvalidSelector")
        k8s.custom.patch_namespaced_custom_object_status(
            "nvidia.com", "v1alpha1", release.namespace, ADAPTERS, "gpt-oss-trtllmworker",
            {"status": {"replicas": 1, "selector": "nvidia.com/dynamo-component=TRTLLMWorker"}})
        # No external metrics API here: the controller got as far as asking for the metric.
        wait_condition(k8s, release.namespace, "gpt-oss-worker", "ScalingActive", "False", "FailedGetExternalMetric")

    @pytest.mark.parametrize("target", ["trtllm-serve-low-latency.yaml"])
    def test_should_let_the_hpa_controller_scale_the_trtllm_serve_deployment(
            self, scaling_crds, release, k8s, controllers, target):
        release.install(target, {"trtllmServe": {"autoscaling": {"enabled": True, "scaler": "hpa", "maxReplicas": 2}}})
        [hpa] = [o for o in release.manifest() if o["kind"] == "HorizontalPodAutoscaler"]
        assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                                 "name": "gpt-oss-trtllm-serve"}
        assert kube.subset_diff(kube.comparable(hpa), stored(k8s, release.namespace, hpa)) == []
        if not controllers:
            skip_for_missing_part("no kube-controller-manager runs, so no HPA controller reports conditions")
        wait_condition(k8s, release.namespace, "gpt-oss-trtllm-serve", "AbleToScale", "True", "SucceededGetScale")
        wait_condition(k8s, release.namespace, "gpt-oss-trtllm-serve", "ScalingActive", "False",
                       "FailedGetExternalMetric")


class TestUpgrade:
    def test_should_keep_the_replicas_an_adapter_owns(self, scaling_crds, release, k8s, dgd_api):
        release.install("disagg-k8s.yaml", {"workers": {"decode": {"autoscaling": {"enabled": True, "maxReplicas": 4}}}})
        version = dgd_api.split("/")[1]
        # What the adapter (the HPA through it) does to the DGD: the decode worker now runs 3 replicas.
        live = k8s.custom.get_namespaced_custom_object("nvidia.com", version, release.namespace,
                                                       kube.DGD_PLURAL, "gpt-oss")
        if version == "v1beta1":
            next(c for c in live["spec"]["components"] if c["name"] == "TRTLLMDecodeWorker")["replicas"] = 3
        else:
            live["spec"]["services"]["TRTLLMDecodeWorker"]["replicas"] = 3
        k8s.custom.replace_namespaced_custom_object("nvidia.com", version, release.namespace, kube.DGD_PLURAL,
                                                    "gpt-oss", live)
        # An upgrade that changes an unrelated value, and one that changes the unscaled prefill role.
        release.upgrade("disagg-k8s.yaml", {"workers": {"decode": {"autoscaling": {"enabled": True, "maxReplicas": 4}},
                                                        "prefill": {"replicas": 2}}})
        live = k8s.custom.get_namespaced_custom_object("nvidia.com", version, release.namespace,
                                                       kube.DGD_PLURAL, "gpt-oss")
        if version == "v1beta1":
            replicas = {c["name"]: c["replicas"] for c in live["spec"]["components"]}
        else:
            replicas = {name: s["replicas"] for name, s in live["spec"]["services"].items()}
        assert replicas["TRTLLMDecodeWorker"] == 3  # kept: the adapter owns it
        assert replicas["TRTLLMPrefillWorker"] == 2  # the chart owns it


class TestPlanner:
    def test_should_store_the_planner_component_and_its_rbac(self, release, k8s):
        from kubernetes import client
        release.install("disagg-k8s.yaml", {"planner": {"enabled": True, "rbac": {"create": True}}})
        objects = release.manifest()
        dgd = next(o for o in objects if o["kind"] == "DynamoGraphDeployment")
        # The CRD schema would silently prune a planner field it does not know; CEL rules run on create.
        assert kube.subset_diff(kube.comparable(dgd), k8s.get(dgd, release.namespace)) == []
        rbac = client.RbacAuthorizationV1Api(k8s.api_client)
        role = rbac.read_namespaced_role("gpt-oss-planner", release.namespace)
        assert any("dynamographdeploymentscalingadapters/scale" in rule.resources for rule in role.rules)
        binding = rbac.read_namespaced_role_binding("gpt-oss-planner", release.namespace)
        assert binding.role_ref.name == "gpt-oss-planner"
        # Bound to the account the operator runs the planner pod as (tests/cluster/test_operator.py asks the API server
        # what it may do under the real operator); the chart makes no ServiceAccount of its own for it.
        assert [(s.kind, s.name, s.namespace) for s in binding.subjects] == [
            ("ServiceAccount", "planner-serviceaccount", release.namespace)]
        assert not [a.metadata.name for a in k8s.core.list_namespaced_service_account(release.namespace).items
                    if "planner" in a.metadata.name]
