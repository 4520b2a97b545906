"""Secure defaults on every pod the chart defines, for every target and both DGD API versions."""
import re

import pytest

from tests.helpers import CHART_DIR, DOWNLOAD_JOB, NETWORK_POLICIES, OVERLAYS, dgd_components, render_chart

API_VERSIONS = ["nvidia.com/v1beta1"]


def pod_specs(objects):
    """(name, pod spec, its containers) for every pod the chart defines, DGD components included."""
    for obj in objects:
        kind, name = obj["kind"], obj["metadata"]["name"]
        if kind == "Pod":
            yield name, obj["spec"], obj["spec"]["containers"]
        elif kind in ("Job", "Deployment"):
            spec = obj["spec"]["template"]["spec"]
            yield name, spec, spec["containers"]
        elif kind == "DynamoGraphDeployment":
            for component_name, component in dgd_components(obj).items():
                sidecars = [c for c in component["pod_spec"].get("containers", []) if c.get("name") != "main"]
                yield f"{name}/{component_name}", component["pod_spec"], [component["main"], *sidecars]


def all_containers(spec, containers):
    return list(containers) + list(spec.get("initContainers", []))


@pytest.mark.parametrize("api_version", API_VERSIONS)
@pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
class TestSecureDefaults:
    def objects(self, overlay, api_version):
        return render_chart([overlay], {"dynamo": {"apiVersion": api_version}})

    def test_should_run_every_pod_as_non_root(self, overlay, api_version):
        for name, spec, _ in pod_specs(self.objects(overlay, api_version)):
            assert spec["securityContext"]["runAsNonRoot"] is True, name
            assert spec["securityContext"]["runAsUser"] != 0, name

    def test_should_forbid_privilege_escalation_in_every_container(self, overlay, api_version):
        for name, spec, containers in pod_specs(self.objects(overlay, api_version)):
            for container in all_containers(spec, containers):
                context = container["securityContext"]
                assert context["allowPrivilegeEscalation"] is False, (name, container.get("name"))
                assert not context.get("privileged"), name
                assert context.get("runAsUser", 1) != 0, name

    def test_should_use_no_host_paths_or_host_namespaces(self, overlay, api_version):
        for name, spec, _ in pod_specs(self.objects(overlay, api_version)):
            assert not any("hostPath" in v for v in spec.get("volumes", [])), name
            assert not any(spec.get(k) for k in ("hostNetwork", "hostPID", "hostIPC")), name

    def test_should_request_resources_in_every_container(self, overlay, api_version):
        for name, spec, containers in pod_specs(self.objects(overlay, api_version)):
            for container in all_containers(spec, containers):
                requests = (container.get("resources") or {}).get("requests", {})
                assert {"cpu", "memory"} <= requests.keys(), (name, container.get("name"))

    def test_should_pin_every_image(self, overlay, api_version):
        for name, spec, containers in pod_specs(self.objects(overlay, api_version)):
            for container in all_containers(spec, containers):
                image = container["image"]
                assert re.search(r"(:\d+\.\d+(\.\d+)?[^:/]*|@sha256:[0-9a-f]+)$", image), (name, image)
                assert not image.endswith(":latest"), (name, image)


class TestSecrets:
    def test_should_reference_the_token_secret_and_never_render_a_secret(self):
        objects = render_chart(["agg.yaml"])
        assert not [o for o in objects if o["kind"] == "Secret"]

    def test_should_keep_secret_values_out_of_the_templates(self):
        for template in (CHART_DIR / "templates").rglob("*"):
            if template.is_file():
                assert "kind: Secret" not in template.read_text(), template.name


class TestHardening:
    """What the policy scan asked for and the chart fixed (python -m ci.gptoss_ci.checkov, docs/security.md)."""

    UTILITY_PODS = {"gpt-oss-smoke-test", "gpt-oss-benchmark"}

    def utility_pods(self, objects):
        return [(name, spec, containers) for name, spec, containers in pod_specs(objects)
                if name in self.UTILITY_PODS or name.startswith("gpt-oss-model-download-")]

    def test_should_mount_no_service_account_token_where_no_api_is_called(self):
        pods = self.utility_pods(render_chart(["agg.yaml"]))
        assert len(pods) == 3
        for name, spec, _ in pods:
            assert spec["automountServiceAccountToken"] is False, name

    def test_should_run_the_charts_own_containers_read_only(self):
        objects = render_chart(["disagg-k8s.yaml"])
        checked = 0
        for name, spec, containers in self.utility_pods(objects):
            for container in containers:
                assert container["securityContext"]["readOnlyRootFilesystem"] is True, name
                checked += 1
        for name, spec, _ in pod_specs(objects):
            for init in spec.get("initContainers", []):
                assert init["securityContext"]["readOnlyRootFilesystem"] is True, (name, init["name"])
                checked += 1
        assert checked == 6  # download, smoke test, benchmark + wait-for-model in frontend, prefill, decode

    def test_should_give_the_download_job_writable_mounts_for_what_it_writes(self):
        [job] = render_chart(["agg.yaml"], show_only=[DOWNLOAD_JOB])
        assert job["metadata"]["name"].startswith("gpt-oss-model-download-")
        container = job["spec"]["template"]["spec"]["containers"][0]
        env = {e["name"]: e.get("value") for e in container["env"]}
        mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
        # pip --user lands in $HOME/.local, the hub's cache in HF_HOME: both on the /tmp emptyDir.
        assert env["HOME"] == "/tmp" and env["HF_HOME"].startswith("/tmp/") and not mounts["/tmp"].get("readOnly")
        assert not mounts["/model-cache"].get("readOnly")


class TestNetworkPolicy:
    def policies(self, values=None, overlay="disagg-k8s.yaml"):
        objects = render_chart([overlay], {"networkPolicy": {"enabled": True, **(values or {})}},
                               show_only=[NETWORK_POLICIES])
        return {o["metadata"]["name"]: o["spec"] for o in objects if o["kind"] == "NetworkPolicy"}

    def test_should_render_none_by_default(self):
        assert not [o for o in render_chart(["agg.yaml"], show_only=[NETWORK_POLICIES]) if o["kind"] == "NetworkPolicy"]

    def test_should_deny_everything_but_dns_for_every_pod_of_the_release(self):
        deny = self.policies()["gpt-oss-default-deny"]
        assert deny["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": "gpt-oss", "app.kubernetes.io/instance": "gpt-oss"}}
        assert deny["policyTypes"] == ["Ingress", "Egress"] and "ingress" not in deny
        assert deny["egress"] == [{"ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]}]

    def test_should_let_clients_reach_the_frontend_port_and_serving_pods_each_other(self):
        serving = self.policies({"clients": [{"namespaceSelector": {"matchLabels": {"team": "apps"}}}]})["gpt-oss-serving"]
        assert serving["podSelector"]["matchExpressions"] == [
            {"key": "app.kubernetes.io/component", "operator": "In", "values": ["frontend", "worker"]}]
        clients, peers = serving["ingress"]
        assert clients == {"ports": [{"port": 8000, "protocol": "TCP"}],
                           "from": [{"namespaceSelector": {"matchLabels": {"team": "apps"}}}]}
        assert peers == {"from": [{"podSelector": serving["podSelector"]}]}
        assert serving["egress"][0] == {"to": [{"podSelector": serving["podSelector"]}]}
        assert {p["port"] for p in serving["egress"][1]["ports"]} == {443, 6443, 2379, 4222}

    def test_should_let_the_download_reach_https_and_the_tests_only_the_frontend(self):
        policies = self.policies()
        assert policies["gpt-oss-model-download"]["egress"] == [{"ports": [{"port": 443, "protocol": "TCP"}]}]
        clients = policies["gpt-oss-test-clients"]
        assert clients["egress"][0]["to"][0]["podSelector"]["matchLabels"]["app.kubernetes.io/component"] == "frontend"
        assert clients["egress"][0]["ports"] == [{"port": 8000, "protocol": "TCP"}]

    def test_should_let_clients_reach_trtllm_serve_and_nothing_reach_the_dynamo_platform(self):
        policies = self.policies(overlay="trtllm-serve-max-throughput.yaml")
        serving = policies["gpt-oss-serving"]
        assert serving["podSelector"]["matchExpressions"][0]["values"] == ["trtllm-serve"]
        assert serving["egress"] == [{"to": [{"podSelector": serving["podSelector"]}]}]
        target = policies["gpt-oss-test-clients"]["egress"][0]["to"][0]["podSelector"]["matchLabels"]
        assert target["app.kubernetes.io/component"] == "trtllm-serve"

    def test_should_select_pods_by_the_labels_the_chart_puts_on_them(self):
        objects = render_chart(["disagg-k8s.yaml"], {"networkPolicy": {"enabled": True}})
        labels = {name: spec_labels for name, spec_labels in _pod_labels(objects)}
        assert {labels[n]["app.kubernetes.io/component"] for n in labels} >= {"frontend", "worker", "model-download",
                                                                          "smoke-test", "benchmark"}


def _pod_labels(objects):
    for obj in objects:
        if obj["kind"] == "Pod":
            yield obj["metadata"]["name"], obj["metadata"]["labels"]
        elif obj["kind"] == "Job":
            yield obj["metadata"]["name"], obj["spec"]["template"]["metadata"]["labels"]
        elif obj["kind"] == "DynamoGraphDeployment":
            for component in obj["spec"]["components"]:
                yield component["name"], component["podTemplate"]["metadata"]["labels"]
