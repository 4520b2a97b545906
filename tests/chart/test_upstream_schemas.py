"""Rendered objects against the upstream Dynamo CRD (both API versions, read from ../shared) and Kubernetes' schemas."""
import copy

import pytest
import yaml

from tests.helpers import CHART_DIR, DGD, DYNAMO_OVERLAYS, OVERLAYS, RUNTIMES, find, render_chart
from tests.helpers.schemas import KUBERNETES_VERSIONS, crd_errors, custom_resources, dgd_errors, kubernetes_errors

API_VERSIONS = ["nvidia.com/v1beta1"]


@pytest.mark.parametrize("api_version", API_VERSIONS)
@pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
class TestDynamoGraphDeploymentCrd:
    def test_should_match_the_crd_of_its_api_version(self, overlay, api_version):
        dgd = find(render_chart([overlay], {"dynamo": {"apiVersion": api_version}},
                                show_only=[DGD]), "DynamoGraphDeployment")
        assert dgd_errors(dgd) == []

    def test_should_be_refused_under_the_other_api_version(self, overlay, api_version):
        """The two versions differ in shape; a DGD relabelled to the retired v1alpha1 must not pass."""
        dgd = copy.deepcopy(find(render_chart([overlay], {"dynamo": {"apiVersion": api_version}},
                                              show_only=[DGD]), "DynamoGraphDeployment"))
        dgd["apiVersion"] = "nvidia.com/v1alpha1"
        assert dgd_errors(dgd)


class TestCrdValidator:
    def test_should_catch_a_misspelt_field(self):
        dgd = copy.deepcopy(find(render_chart(["agg.yaml"], show_only=[DGD]), "DynamoGraphDeployment"))
        dgd["spec"]["components"][1]["sharedMemory"] = {"size": "80Gi"}
        assert any("sharedMemory" in e for e in dgd_errors(dgd))

    def test_should_catch_a_broken_cel_rule(self):
        dgd = copy.deepcopy(find(render_chart(["agg.yaml"], show_only=[DGD]), "DynamoGraphDeployment"))
        dgd["spec"]["components"][1]["name"] = "frontend"
        assert "spec/components: component names must be unique case-insensitively" in dgd_errors(dgd)


@pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
def test_should_render_custom_resources_their_crds_accept(overlay):
    """Every rendered object of a CRD group (Dynamo, KEDA, Gateway API, InferencePool): schema and every CEL rule."""
    objects = custom_resources(render_chart([overlay]))
    assert {o["kind"] for o in objects} == {"dynamo": {"DynamoGraphDeployment"}, "trtllm-serve": set()}[RUNTIMES[overlay]]
    assert {f"{o['kind']}/{o['metadata']['name']}": crd_errors(o) for o in objects} == {
        f"{o['kind']}/{o['metadata']['name']}": [] for o in objects}


@pytest.mark.parametrize("kubernetes_version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
def test_should_render_core_objects_valid_for_kubernetes(overlay, kubernetes_version):
    core = [o for o in render_chart([overlay])
            if "/" not in o["apiVersion"] or o["apiVersion"].startswith(("batch/", "apps/"))]
    # trtllm-serve: its Deployment and Service instead of a DynamoGraphDeployment.
    workload = {"dynamo": set(), "trtllm-serve": {"Deployment", "Service"}}[RUNTIMES[overlay]]
    assert {o["kind"] for o in core} == {"ConfigMap", "PersistentVolumeClaim", "Job", "Pod"} | workload
    errors = {f"{o['kind']}/{o['metadata']['name']}": kubernetes_errors(o, kubernetes_version) for o in core}
    assert not {k: v for k, v in errors.items() if v}


def test_should_declare_the_kubernetes_range_it_validates():
    chart = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
    assert chart["kubeVersion"] == f">={KUBERNETES_VERSIONS[0]}-0"
    assert chart["annotations"]["gpt-oss/tested-kube-versions"] == ",".join(KUBERNETES_VERSIONS)
