"""Secure defaults on every pod the chart defines, for every target and both DGD API versions."""
import re

import pytest

from tests.helpers import NETWORK_POLICY_ON, CHART_DIR, DOWNLOAD_JOB, NETWORK_POLICIES, OVERLAYS, dgd_components, render_chart

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
    """What the policy scan asked for and the chart fixed (ci/checkov.py, docs/security.md)."""

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


KUBE_DNS = [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
             "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}]
API_SERVER = NETWORK_POLICY_ON["apiServer"]["to"]
NATS = [{"namespaceSelector": {}, "podSelector": {"matchLabels": {"app.kubernetes.io/name": "nats"}}}]
ETCD = [{"namespaceSelector": {}, "podSelector": {"matchLabels": {"app.kubernetes.io/name": "etcd"}}}]
PROMETHEUS = [{"namespaceSelector": {}, "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}}]
RELEASE = {"app.kubernetes.io/name": "gpt-oss", "app.kubernetes.io/instance": "gpt-oss"}


def tcp(*ports):
    return [{"port": port, "protocol": "TCP"} for port in ports]


class TestNetworkPolicy:
    """Every path the NetworkPolicies allow, as docs/security.md lists them: nothing goes anywhere unnamed."""

    def policies(self, values=None, overlay="disagg-k8s.yaml"):
        values = values or {}
        objects = render_chart([overlay], {**values, "networkPolicy": {**NETWORK_POLICY_ON, **values.get("networkPolicy", {})}},
                               show_only=[NETWORK_POLICIES])
        return {o["metadata"]["name"]: o["spec"] for o in objects if o["kind"] == "NetworkPolicy"}

    def test_should_render_none_by_default(self):
        assert not [o for o in render_chart(["agg.yaml"], show_only=[NETWORK_POLICIES]) if o["kind"] == "NetworkPolicy"]

    def test_should_deny_everything_but_dns_at_kube_dns_for_every_pod_of_the_release(self):
        deny = self.policies()["gpt-oss-default-deny"]
        assert deny["podSelector"] == {"matchLabels": RELEASE}
        assert deny["policyTypes"] == ["Ingress", "Egress"] and "ingress" not in deny
        assert deny["egress"] == [{"to": KUBE_DNS, "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]}]

    def test_should_let_clients_reach_only_the_entry_port(self):
        clients = [{"namespaceSelector": {"matchLabels": {"team": "apps"}}}]
        entry = self.policies({"networkPolicy": {"clients": clients}})["gpt-oss-entry"]
        assert entry == {"podSelector": {"matchLabels": {**RELEASE, "app.kubernetes.io/component": "frontend"}},
                         "policyTypes": ["Ingress"], "ingress": [{"ports": tcp(8000), "from": clients}]}

    def test_should_let_the_dynamo_pods_reach_each_other_and_the_platform_at_its_named_peers_only(self):
        serving = self.policies()["gpt-oss-serving"]
        assert serving["podSelector"] == {"matchLabels": RELEASE, "matchExpressions": [
            {"key": "app.kubernetes.io/component", "operator": "In", "values": ["frontend", "worker", "planner"]}]}
        assert serving["ingress"] == [{"from": [{"podSelector": serving["podSelector"]}]}]
        assert serving["egress"] == [{"to": [{"podSelector": serving["podSelector"]}]},
                                     {"to": API_SERVER, "ports": tcp(443, 6443)},
                                     {"to": NATS, "ports": tcp(4222)},
                                     {"to": ETCD, "ports": tcp(2379)}]

    def test_should_open_no_platform_egress_whose_peers_are_empty(self):
        serving = self.policies({"networkPolicy": {"nats": {"to": [], "ports": [4222]},
                                                   "etcd": {"to": [], "ports": [2379]}}})["gpt-oss-serving"]
        assert serving["egress"][1:] == [{"to": API_SERVER, "ports": tcp(443, 6443)}]

    def test_should_let_prometheus_scrape_the_podmonitor_ports_and_the_planner_read_prometheus(self):
        policies = self.policies({"monitoring": {"podMonitor": {"enabled": True}}, "planner": {"enabled": True}})
        assert policies["gpt-oss-serving"]["ingress"][1] == {"from": PROMETHEUS, "ports": [
            {"port": "http", "protocol": "TCP"}, {"port": "system", "protocol": "TCP"}]}
        assert policies["gpt-oss-planner"] == {
            "podSelector": {"matchLabels": {**RELEASE, "app.kubernetes.io/component": "planner"}}, "policyTypes": ["Egress"],
            "egress": [{"to": PROMETHEUS, "ports": tcp(9090)}]}

    def test_should_let_the_download_reach_https_and_the_tests_only_the_frontend(self):
        policies = self.policies()
        assert policies["gpt-oss-model-download"]["egress"] == [{"ports": tcp(443)}]
        clients = policies["gpt-oss-test-clients"]
        assert clients["egress"] == [{"to": [{"podSelector": {"matchLabels": {**RELEASE, "app.kubernetes.io/component": "frontend"}}}],
                                      "ports": tcp(8000)}]

    def test_should_open_the_port_of_a_proxy_from_a_secret(self):
        values = {"modelCache": {"proxy": {"existingSecret": "corp-proxy", "existingSecretPort": 8080}}}
        assert self.policies(values)["gpt-oss-model-download"]["egress"] == [{"ports": tcp(443, 8080)}]

    def test_should_let_clients_reach_trtllm_serve_and_nothing_reach_the_dynamo_platform(self):
        policies = self.policies(overlay="trtllm-serve-max-throughput.yaml")
        serving = policies["gpt-oss-serving"]
        assert serving["podSelector"]["matchExpressions"][0]["values"] == ["trtllm-serve"]
        assert serving["egress"] == [{"to": [{"podSelector": serving["podSelector"]}]}]
        target = policies["gpt-oss-test-clients"]["egress"][0]["to"][0]["podSelector"]["matchLabels"]
        assert target["app.kubernetes.io/component"] == "trtllm-serve"
        assert policies["gpt-oss-entry"]["podSelector"]["matchLabels"]["app.kubernetes.io/component"] == "trtllm-serve"

    def test_should_need_no_api_server_peer_where_no_pod_calls_the_api(self):
        values = {"runtime": "trtllm-serve", "networkPolicy": {"enabled": True}}
        assert render_chart(["trtllm-serve-max-throughput.yaml"], values, show_only=[NETWORK_POLICIES])

    def test_should_select_pods_by_the_labels_the_chart_puts_on_them(self):
        objects = render_chart(["disagg-k8s.yaml"], {"networkPolicy": NETWORK_POLICY_ON, "planner": {"enabled": True}})
        labels = {name: spec_labels for name, spec_labels in _pod_labels(objects)}
        assert {labels[n]["app.kubernetes.io/component"] for n in labels} >= {"frontend", "worker", "planner", "model-download",
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
