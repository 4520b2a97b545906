"""The policy-scan set-up (python -m ci.release scan, .checkov.yaml): waivers with reasons, and what the scanner is shown."""
import re

import pytest
import yaml

from ci.release import checkov
from tests.helpers import (NETWORK_POLICY_ON, DGD, DYNAMO_OVERLAYS, PICKER_DEPLOYMENT, REPO_ROOT, TRTLLM_SERVE_OVERLAYS, dgd_pods,
                           render_chart)
from tools.gptoss.yaml_text import load_yaml_all
from tests.helpers.schemas import kubernetes_errors

CONFIG = REPO_ROOT / ".checkov.yaml"


def load_scan_script():
    return checkov


GLOBAL_WAIVERS = ["CKV_K8S_21", "CKV_K8S_43", "CKV_K8S_15"]
SKIP_KEY = re.compile(r"^checkov\.io/skip(\d+)$")
# Checkov 3.3.30 (checkov/kubernetes/kubernetes_utils.py) reads "<id>=<reason>" and splits on "=": one only.
SKIP_VALUE = re.compile(r"^(CKV2?_K8S_\d+)=([^=]{20,})$")
DGD_POD_WAIVERS = {"CKV_K8S_11", "CKV_K8S_40", "CKV_K8S_22", "CKV_K8S_38", "CKV_K8S_8", "CKV_K8S_9", "CKV2_K8S_6"}
# What each object waives, by kind and name (the DGD's pods: by component).
OBJECT_WAIVERS = {
    ("Job", "gpt-oss-model-download"): {"CKV_K8S_11", "CKV_K8S_40", "CKV2_K8S_6"},
    ("Job", "gpt-oss-benchmark"): {"CKV_K8S_11", "CKV_K8S_40", "CKV2_K8S_6"},
    ("Pod", "gpt-oss-smoke-test"): {"CKV_K8S_11", "CKV_K8S_40", "CKV_K8S_8", "CKV_K8S_9", "CKV2_K8S_6"},
    ("Deployment", "gpt-oss-trtllm-serve"): {"CKV_K8S_11", "CKV_K8S_40", "CKV_K8S_22", "CKV2_K8S_6"},
}


def skips(metadata: dict) -> dict[str, str]:
    """{check id: reason} of an object's checkov.io/skip<N> annotations, checking their numbering and format."""
    entries = {int(SKIP_KEY.match(k).group(1)): v for k, v in (metadata.get("annotations") or {}).items()
               if SKIP_KEY.match(k)}
    assert sorted(entries) == list(range(1, len(entries) + 1)), entries
    parsed = [SKIP_VALUE.match(v) for v in entries.values()]
    assert all(parsed), entries
    ids = [m.group(1) for m in parsed]
    assert len(ids) == len(set(ids)), ids
    return {m.group(1): m.group(2) for m in parsed}


def waivers_by_object(objects) -> dict[tuple[str, str], set]:
    found = {}
    for obj in objects:
        name = re.sub(r"-[0-9a-f]{8}$", "", obj["metadata"]["name"])  # the download Job's name carries a hash
        found[(obj["kind"], name)] = set(skips(obj["metadata"]))
        if obj["kind"] == "DynamoGraphDeployment":
            for component, pod in dgd_pods(obj).items():
                found[("DGD pod", component)] = set(skips(pod["metadata"]))
    return {key: ids for key, ids in found.items() if ids}


class TestWaivers:
    def test_should_waive_at_most_three_checks_globally_each_with_a_reason(self):
        lines = CONFIG.read_text().splitlines()
        entries = [(i, line.strip()[2:]) for i, line in enumerate(lines) if re.match(r"^\s+- CKV2?_K8S_\d+$", line)]
        assert [check for _, check in entries] == yaml.safe_load(CONFIG.read_text())["skip-check"] == GLOBAL_WAIVERS
        for index, check in entries:
            assert lines[index - 1].strip().startswith("#") and len(lines[index - 1].strip()) > 20, check

    def test_should_keep_the_fixed_checks_active(self):
        config = yaml.safe_load(CONFIG.read_text())
        # Fixed in the chart, so never waived: secrets as files, and the kubernetes framework only.
        assert "CKV_K8S_35" not in config["skip-check"]
        assert config["framework"] == ["kubernetes"]

    def test_should_pin_checkov_3_3_30(self):
        pins = [line for line in (REPO_ROOT / "requirements-checkov.txt").read_text().splitlines()
                if line and not line.startswith("#")]
        assert pins == ["checkov==3.3.30"]


class TestObjectWaivers:
    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    @pytest.mark.parametrize("api_version", ["nvidia.com/v1beta1"])
    def test_should_scope_each_waiver_to_the_objects_it_concerns(self, overlay, api_version):
        found = waivers_by_object(render_chart([overlay], {"dynamo": {"apiVersion": api_version}}))
        pods = {key for key in found if key[0] == "DGD pod"}
        assert ("DGD pod", "Frontend") in pods and len(pods) >= 2
        assert found == {**{k: v for k, v in OBJECT_WAIVERS.items() if k[0] != "Deployment"},
                         **{pod: DGD_POD_WAIVERS for pod in pods}}

    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS, ids=TRTLLM_SERVE_OVERLAYS)
    def test_should_waive_on_the_trtllm_serve_objects(self, overlay):
        assert waivers_by_object(render_chart([overlay])) == OBJECT_WAIVERS

    def test_should_never_waive_an_object_for_a_globally_waived_check(self):
        for overlay in ("disagg-k8s.yaml", "trtllm-serve-low-latency.yaml"):
            for ids in waivers_by_object(render_chart([overlay])).values():
                assert not ids & set(GLOBAL_WAIVERS)

    def test_should_give_the_reasons_of_the_helper(self):
        dgd = next(o for o in render_chart(["agg.yaml"], show_only=[DGD]) if o["kind"] == "DynamoGraphDeployment")
        reasons = skips(dgd_pods(dgd)["Frontend"]["metadata"])
        assert reasons["CKV_K8S_38"] == ("Dynamo's frontend and workers register and discover each other through "
                                         "the Kubernetes API")
        assert reasons["CKV_K8S_8"] == "The Dynamo operator gives every component its liveness probe"

    def test_should_waive_on_the_planner_pod_as_on_the_other_dgd_pods(self):
        found = waivers_by_object(render_chart(["disagg-k8s.yaml"], {"planner": {"enabled": True}}))
        assert found[("DGD pod", "Planner")] == DGD_POD_WAIVERS

    def test_should_waive_on_the_endpoint_picker_with_its_own_reasons(self):
        objects = render_chart(["trtllm-serve-low-latency.yaml"], {"inferencePool": {"enabled": True},
                                                                   "trtllmServe": {"image": {"tag": "1.3.0rc29"}}},
                               show_only=[PICKER_DEPLOYMENT])
        picker = next(o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "gpt-oss-trtllm-serve-epp")
        reasons = skips(picker["metadata"])
        assert set(reasons) == {"CKV_K8S_11", "CKV_K8S_38", "CKV_K8S_40", "CKV2_K8S_6"}
        assert reasons["CKV_K8S_38"] == ("The endpoint picker watches the pool's pods and its InferencePool through "
                                         "the Kubernetes API (its Role)")

    def test_should_scan_one_render_per_runtime_with_every_optional_component(self):
        targets = load_scan_script().SCAN_TARGETS
        assert [t for t in targets if "optional components" in t] == [
            "agg.yaml + optional components", "trtllm-serve-low-latency.yaml + optional components"]
        assert targets["agg.yaml + optional components"]["planner"]["enabled"] is True
        assert targets["trtllm-serve-low-latency.yaml + optional components"]["inferencePool"]["enabled"] is True

    def test_should_render_every_scan_target_with_the_chart_s_rules(self, tmp_path):
        # CI's scan renders these values: a rule the chart gains must not leave them behind (the Prometheus peer did).
        script = load_scan_script()
        combined = [target for target in script.SCAN_TARGETS if " + " in target]
        assert len(combined) == 5
        for index, target in enumerate(combined):
            script.write_scan_input(target, tmp_path / str(index))
            assert (tmp_path / str(index) / "chart.yaml").stat().st_size > 10_000, target

    def test_should_scan_the_pods_each_model_source_changes(self):
        targets = load_scan_script().SCAN_TARGETS
        sources = {t: v["modelCache"] for t, v in targets.items() if "modelCache" in v}
        assert {(v["source"], v.get("oci", {}).get("mount", "imageVolume" if v["source"] == "oci" else None))
                for v in sources.values()} == {("oci", "imageVolume"), ("s3", None), ("oci", "pull")}
        image_volume = render_chart(["agg.yaml"], targets["agg.yaml + model from an OCI image volume"], show_only=[DGD])
        pods = [p for o in image_volume if o["kind"] == "DynamoGraphDeployment" for p in dgd_pods(o).values()]
        assert all(p["spec"]["initContainers"][0]["name"] == "check-model" for p in pods)

    @pytest.mark.parametrize("overlay", ["agg.yaml", "trtllm-serve-low-latency.yaml"])
    def test_should_not_waive_the_network_policy_check_with_network_policies_on(self, overlay):
        found = waivers_by_object(render_chart([overlay], {"networkPolicy": NETWORK_POLICY_ON}))
        assert found and not any("CKV2_K8S_6" in ids for ids in found.values())
        assert all("CKV_K8S_11" in ids for ids in found.values())


class TestScanInput:
    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_show_the_scanner_every_dgd_pod_as_a_valid_pod(self, overlay, tmp_path):
        load_scan_script().write_scan_input(overlay, tmp_path / "scan")
        pods = {}
        for api in ("v1beta1",):
            docs = load_yaml_all((tmp_path / "scan" / f"dgd-pods-{api}.yaml").read_text())
            pods[api] = sorted(d["metadata"]["name"].removesuffix(f"-{api}") for d in docs)
            for pod in docs:
                assert kubernetes_errors(pod, "1.29.0") == [], pod["metadata"]["name"]
                assert pod["spec"]["containers"][0]["name"] == "main"
        assert "gpt-oss-frontend" in pods["v1beta1"] and len(pods["v1beta1"]) >= 2
        chart = load_yaml_all((tmp_path / "scan" / "chart.yaml").read_text())
        assert {"Job", "Pod", "ConfigMap", "PersistentVolumeClaim"} <= {o["kind"] for o in chart}

    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS, ids=TRTLLM_SERVE_OVERLAYS)
    def test_should_show_the_scanner_the_trtllm_serve_deployment(self, overlay, tmp_path):
        load_scan_script().write_scan_input(overlay, tmp_path / "scan")
        assert sorted(p.name for p in (tmp_path / "scan").iterdir()) == ["chart.yaml"]
        chart = load_yaml_all((tmp_path / "scan" / "chart.yaml").read_text())
        assert {"Deployment", "Service", "Job", "Pod"} <= {o["kind"] for o in chart}
