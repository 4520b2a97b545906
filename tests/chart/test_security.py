"""Secure defaults on every pod the chart defines, for every target and both DGD API versions; values that could give
pods more (issue 44): privileges, unpinned images, credentials in URLs, NetworkPolicy paths and Roles beyond their need."""
import ast
import importlib.util
import os
import re
from pathlib import Path

import pytest
import yaml

from tests.helpers import (CHART_DIR, DOWNLOAD_JOB, DYNAMO_LINE_RELEASES, NETWORK_POLICIES, NETWORK_POLICY_ON, OVERLAYS,
                           PROMETHEUS_PEERS, REPO_ROOT, TRTLLM_SERVE_OVERLAYS, Refusal, assert_refused, dgd_components, find,
                           plan_document,
                           planner_grant_in_docs, refusal_params, render_chart, render_error, render_notes,
                           skip_for_missing_part)

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
    """What the policy scan asked for and the chart fixed (python -m ci.release scan, docs/security.md)."""

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
        assert checked == 6  # download, smoke test, benchmark + check-model in frontend, prefill, decode

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
PROMETHEUS = PROMETHEUS_PEERS
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
        policies = self.policies({"monitoring": {"podMonitor": {"enabled": True}}, "planner": {"enabled": True},
                                  "networkPolicy": {"prometheus": {"to": PROMETHEUS}}})
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
        objects = render_chart(["disagg-k8s.yaml"], {"networkPolicy": {**NETWORK_POLICY_ON, "prometheus": {"to": PROMETHEUS}},
                                                     "planner": {"enabled": True}})
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


# --- least privilege: every Role the chart renders, against what its component's source calls -------------------------

VERBS = {"get": "get", "list": "list", "create": "create", "patch": "patch", "replace": "update", "delete": "delete"}
CLIENT_CALL = re.compile(r"^(get|list|create|patch|replace|delete)_namespaced_(custom_object(?:_scale)?|pod)$")
# What the Dynamo runtime in the planner's pod calls: its Kubernetes discovery (ai-dynamo's Rust runtime, which the
# wheel carries compiled; lib/runtime/src/discovery/kube/crd.rs apply_cr: server-side apply of the pod's
# DynamoWorkerMetadata, a PATCH that creates it when absent; kube/daemon.rs: a watcher, list and watch, of every
# DynamoWorkerMetadata and, in the default pod mode, of the EndpointSlices of ready pods).
RUNTIME_CALLS = {("nvidia.com", "dynamoworkermetadatas", verb) for verb in ("list", "watch", "create", "patch")} | {
    ("discovery.k8s.io", "endpointslices", verb) for verb in ("list", "watch")}
# Calls in the planner's source the chart's planner never makes, each with the reason.
PLANNER_UNUSED = {
    ("nvidia.com", "dynamographdeployments", "list"):
        "list_graph_deployments: only the global planner (dynamo/global_planner) calls it, not python -m dynamo.planner",
    ("nvidia.com", "dynamographdeployments", "patch"):
        "the DGD fallback when a component has no scaling adapter (404); every role the planner scales has one "
        "(gpt-oss.replicaOwners turns scalingAdapter on)",
    ("nvidia.com", "dynamographdeploymentscalingadapters", "patch"):
        "patch_scaling_adapter_writer_fence (1.7): batch scheduling's writer fence, and the chart's planner config "
        "turns no batch_scheduling on",
}
# The endpoint picker (gateway-api-inference-extension v1.5.0) reads its pool's pods and its pool through
# controller-runtime caches, which get, list and watch, and nothing else (the upstream chart's
# config/charts/inferencepool/templates/rbac.yaml grants exactly these).
PICKER_CALLS = {(group, resource, verb) for group, resource in (
    ("", "pods"), ("inference.networking.k8s.io", "inferencepools"),
    ("inference.networking.x-k8s.io", "inferenceobjectives"), ("inference.networking.x-k8s.io", "inferencemodelrewrites"))
    for verb in ("get", "watch", "list")}
RBAC_VALUES = {"planner": {"enabled": True, "rbac": {"create": True}}, "inferencePool": {"enabled": True}}


def planner_sources() -> dict[str, Path]:
    """The dynamo/planner folders of the ai-dynamo releases on this machine: 1.2.1 (this interpreter's), 1.6.1 and
    1.7.0.dev20261026 (.venv-dynamo-1.6 and .venv-dynamo-1.7, or the interpreters GPT_OSS_DYNAMO_16_PYTHON and
    GPT_OSS_DYNAMO_17_PYTHON name)."""
    found = {}
    spec = importlib.util.find_spec("dynamo")
    if spec and spec.submodule_search_locations:
        folder = Path(list(spec.submodule_search_locations)[0]) / "planner"
        if folder.is_dir():
            found["1.2.1"] = folder
    for line in ("1.6", "1.7"):
        python = os.environ.get(f"GPT_OSS_DYNAMO_{line.replace('.', '')}_PYTHON")
        venv = Path(python).parent.parent if python else REPO_ROOT / f".venv-dynamo-{line}"
        for folder in sorted(venv.glob("lib/python3*/site-packages/dynamo/planner")):
            found[DYNAMO_LINE_RELEASES[line]] = folder
    return found


def planner_calls(folder: Path) -> dict[tuple, str]:
    """(API group, resource, verb) of every Kubernetes API call in the planner's Python source -> where it is: the
    kubernetes client's *_namespaced_custom_object[_scale] and *_namespaced_pod methods, and raw call_api requests."""
    # Only files that call the API can hold a call (parsing the whole package costs more than the test's budget).
    texts = {path: path.read_text() for path in sorted(folder.rglob("*.py")) if "tests" not in path.parts}
    trees = {path: ast.parse(text) for path, text in texts.items() if "_namespaced_" in text or "call_api" in text}
    constants = {name: value for text in texts.values()
                 for name, value in re.findall(r'^([A-Z][A-Z0-9_]*)\s*=\s*"([^"\n]*)"\s*$', text, re.MULTILINE)}

    def text(node):
        if isinstance(node, ast.Constant):
            return node.value
        return constants.get(node.id) if isinstance(node, ast.Name) else None

    calls = {}
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            where = f"{path.relative_to(folder.parent.parent)}:{node.lineno}"
            keywords = {k.arg: k.value for k in node.keywords}
            match = CLIENT_CALL.match(node.func.attr)
            if match and match.group(2) == "pod":
                calls[("", "pods", VERBS[match.group(1)])] = where
            elif match:
                resource = text(keywords["plural"]) + ("/scale" if match.group(2).endswith("_scale") else "")
                calls[(text(keywords["group"]), resource, VERBS[match.group(1)])] = where
            elif node.func.attr == "call_api" and isinstance(node.args[2], ast.Dict):
                fields = {text(k): text(v) for k, v in zip(node.args[2].keys, node.args[2].values)}
                calls[(fields["group"], fields["plural"], text(node.args[1]).lower())] = where
    return calls


def operator_planner_grant() -> set[tuple]:
    """(API group, resource, verb) of the planner ClusterRole of the operator's platform chart (the shared archive,
    components/operator/templates/planner.yaml; cluster-wide mode, planner.powerAwareness off as by default), which the
    operator binds to planner-serviceaccount in every namespace with a DGD (internal/rbac/manager.go)."""
    import tarfile
    from ci.cluster import dynamo_operator as OPERATOR
    try:
        source = OPERATOR.read_source()
    except OPERATOR.SourceMissing as missing:
        skip_for_missing_part(str(missing))
    with tarfile.open(OPERATOR.source_dir() / source.archive(OPERATOR.PLATFORM_ARCHIVE)) as archive:
        text = archive.extractfile(f"{OPERATOR.PLATFORM_CHART}/components/operator/templates/planner.yaml").read().decode()
    cluster_wide = text[text.index("{{- else }}"):]
    cluster_wide = cluster_wide[:cluster_wide.index("{{- if .Values.planner.powerAwareness.enabled }}")]
    documents = yaml.safe_load_all("\n".join(line for line in cluster_wide.splitlines() if "{{" not in line))
    [role] = [d for d in documents if d and d.get("kind") == "ClusterRole"]
    return granted(role)


def granted(role: dict) -> set[tuple]:
    return {(group, resource, verb) for rule in role["rules"] for group in rule["apiGroups"]
            for resource in rule["resources"] for verb in rule["verbs"]}


class TestLeastPrivilege:
    """Each Role grants what its component's source calls, no more; each RoleBinding gives it to that component."""

    def rbac(self, overlay):
        objects = render_chart([overlay], {"inferencePool": RBAC_VALUES["inferencePool"]} if overlay in TRTLLM_SERVE_OVERLAYS
                               else {"planner": RBAC_VALUES["planner"]})
        return objects, {o["metadata"]["name"]: o for o in objects if o["kind"] == "Role"}

    @pytest.mark.extras  # reads the planner of each ai-dynamo installed
    def test_should_grant_the_planner_what_its_source_calls(self):
        sources = planner_sources()
        if "1.2.1" not in sources:
            pytest.skip("ai-dynamo is not installed (requirements-e2e.txt): no planner source to read")
        _, roles = self.rbac("disagg-k8s.yaml")
        role = granted(roles["gpt-oss-planner"])
        needed = set(RUNTIME_CALLS)
        for release, folder in sources.items():
            calls = planner_calls(folder)
            assert ("nvidia.com", "dynamographdeploymentscalingadapters/scale", "patch") in calls, (release, calls)
            missing = {call: where for call, where in calls.items() if call not in PLANNER_UNUSED and call not in role}
            assert not missing, f"the {release} planner calls what its Role does not grant: {missing}"
            needed |= set(calls) - set(PLANNER_UNUSED)
        for line in ("1.6", "1.7"):
            if DYNAMO_LINE_RELEASES[line] not in sources:
                pytest.skip(f"no ai-dynamo {DYNAMO_LINE_RELEASES[line]} (bash ci/dynamo-venv.sh .venv-dynamo-{line}): "
                            f"the Role's {line} verbs are unchecked")
        assert role == needed, f"granted beyond what any planner calls: {sorted(role - needed)}"

    def test_should_name_the_planners_own_deployment_and_adapters(self):
        objects, roles = self.rbac("disagg-k8s.yaml")
        dgd = find(objects, "DynamoGraphDeployment")
        names = {(rule["resources"][0], tuple(rule.get("resourceNames", ()))) for rule in roles["gpt-oss-planner"]["rules"]}
        # The adapters' names are the planner's: f"{graph_deployment_name}-{service_name.lower()}".
        workers = sorted(c["name"] for c in dgd["spec"]["components"] if c["type"] in ("prefill", "decode"))
        assert ("dynamographdeployments", (dgd["metadata"]["name"],)) in names
        assert {tuple(sorted(n)) for r, n in names if r.endswith("/scale")} == {
            tuple(sorted(f"gpt-oss-{w.lower()}" for w in workers))}
        assert all(n for r, n in names if r.startswith("dynamograph"))  # by name, never every DGD of the namespace

    def test_should_state_the_planner_accounts_grant_as_the_operator_and_the_chart_give_it(self):
        """docs/security.md's table of what planner-serviceaccount may do: the operator's rows are its platform chart's
        planner ClusterRole (the shared archive: what the operator binds to that account), the chart's rows what its Role
        adds; NOTES' and the plan's statement of the operator's grant is the same (tests/cluster/test_operator.py asks
        the API server each row under the real operator)."""
        rows = planner_grant_in_docs()
        by = {who: {(group, resource, verb) for group, resource, verbs, _, w in rows if w == who for verb in verbs}
              for who in ("the operator", "the chart")}
        operator = operator_planner_grant()
        assert by["the operator"] == operator
        objects, roles = self.rbac("disagg-k8s.yaml")
        assert by["the chart"] == granted(roles["gpt-oss-planner"]) - operator
        assert {resource for _, resource, _, which, _ in rows if which == "named"} == {
            "dynamographdeploymentscalingadapters/scale", "dynamographdeploymentscalingadapters"}
        stated = plan_document(objects)["planner"]
        assert (stated["account"], stated["role"]) == ("planner-serviceaccount", "gpt-oss-planner")
        in_plan = set()
        for part in stated["operatorGrant"].split("; "):
            resource, verbs = re.sub(r" \(.*\)$", "", part).split(" ", 1)
            group = "discovery.k8s.io" if resource == "endpointslices" else "nvidia.com"
            in_plan |= {(group, resource, verb) for verb in verbs.split(", ")}
        assert in_plan == operator

    def test_should_grant_the_endpoint_picker_reads_only(self):
        _, roles = self.rbac("trtllm-serve-low-latency.yaml")
        assert granted(roles["gpt-oss-trtllm-serve-epp"]) == PICKER_CALLS

    @pytest.mark.parametrize("overlay", ["disagg-k8s.yaml", "trtllm-serve-low-latency.yaml"])
    def test_should_bind_each_role_to_the_account_of_its_own_pods_only(self, overlay):
        objects, roles = self.rbac(overlay)
        bindings = [o for o in objects if o["kind"] == "RoleBinding"]
        assert bindings and {b["roleRef"]["name"] for b in bindings} == set(roles)
        accounts = {}
        for name, spec, _ in pod_specs(objects):
            accounts.setdefault(spec.get("serviceAccountName"), []).append(name)
        for binding in bindings:
            assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                          "name": binding["metadata"]["name"]}
            [subject] = binding["subjects"]
            if binding["metadata"]["name"] == "gpt-oss-planner":
                # The account the operator runs every planner pod as, whatever the DGD says (operator 1.5.0-dev
                # internal/dynamo/graph.go): the chart sets none on the planner and makes none.
                assert subject == {"kind": "ServiceAccount", "name": "planner-serviceaccount", "namespace": "llm"}
                assert "gpt-oss/Planner" in accounts.get(None, []), accounts
                assert not [o for o in objects if o["kind"] == "ServiceAccount" and "planner" in o["metadata"]["name"]]
                continue
            assert subject == {"kind": "ServiceAccount", "name": binding["metadata"]["name"], "namespace": "llm"}
            assert find(objects, "ServiceAccount", subject["name"])
            # One component's pods run as that account: the endpoint picker.
            assert len(accounts[subject["name"]]) == 1, accounts


# --- refusals (gpt-oss.checkValues.security, .paths, .placement) ---------------------------------------------------------

DIGEST = "sha256:" + "5" * 64
PRIVILEGE_ALLOWED = ("; allowed: the defaults (UID 1000, runAsNonRoot, allowPrivilegeEscalation=false, capabilities.drop=[ALL], "
                     "RuntimeDefault seccomp), or security.allowPrivileged=true to render them anyway (NOTES and tools/plan.py "
                     "then warn)")
API_PEERS = ("the chart opens that egress only to the peers you name (the API server's endpoints are no pods: kubectl get "
             "endpointslices -n default -l kubernetes.io/service-name=kubernetes); allowed: NetworkPolicyPeers, e.g. "
             "[{ipBlock: {cidr: 10.0.0.10/32}}]")
MOUNT_TAKEN = ("which the chart's containers mount themselves (scratch space, scripts, engine files, secrets, the benchmark's "
               "artifacts) or the system needs, so the kubelet would mount one over the other or make folders in the cache; "
               "allowed: a folder of its own, e.g. /model-cache (the default)")
ARTIFACTS = ("overlaps the model's folder openai/gpt-oss-120b on the cache (/model-cache/openai/gpt-oss-120b): the benchmark "
             "mounts its folder writable, so it could change the weights and the ready marker every worker trusts; allowed: a "
             "folder beside it, e.g. perf (the default)")
MULTI_ATTACH = ", so pods would wait in ContainerCreating (Multi-Attach error); allowed: modelCache.accessMode=ReadWriteMany, or "
PROMETHEUS_PEERS = ("allowed: NetworkPolicyPeers such as [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: "
                    "monitoring}}, podSelector: {matchLabels: {app.kubernetes.io/name: prometheus}}}]")
SECURITY_REFUSALS = [
    Refusal("privileged-container", "agg.yaml", {"securityContext": {"container": {"privileged": True}}},
            "securityContext gives every pod the chart defines more than the restricted Pod Security profile allows: "
            "securityContext.container.privileged=true" + PRIVILEGE_ALLOWED),
    Refusal("root", "agg.yaml", {"securityContext": {"pod": {"runAsUser": 0, "runAsNonRoot": False}}},
            "allows: securityContext.pod.runAsNonRoot=false, securityContext.pod.runAsUser=0" + PRIVILEGE_ALLOWED, extra=True),
    Refusal("added-capability", "trtllm-serve-low-latency.yaml",
            {"securityContext": {"container": {"capabilities": {"add": ["NET_ADMIN"]}}}},
            'allows: securityContext.container.capabilities.add=["NET_ADMIN"]' + PRIVILEGE_ALLOWED, extra=True),
    Refusal("unpinned-images", "agg.yaml", {"security": {"requireImageDigests": True}},
            "security.requireImageDigests=true, but these images are not pinned by digest: dynamo.image "
            "(nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.7.0), modelCache.download.image "
            "(ghcr.io/gpt-oss-chart/model-fetch:0.9.0), smokeTest.image "
            "(docker.io/library/python:3.12.8-slim-bookworm); allowed: a tag of the form <tag>@sha256:<64 hex> or "
            'sha256:<64 hex> in each (docs/security.md, "Pinning images"), or security.requireImageDigests=false'),
    Refusal("proxy-two-ways", "agg.yaml",
            {"modelCache": {"proxy": {"existingSecret": "corp-proxy", "httpsProxy": "http://proxy.example.com:3128"}}},
            'modelCache.proxy.existingSecret=corp-proxy and modelCache.proxy.httpsProxy="http://proxy.example.com:3128" / '
            'httpProxy="" are both set: the Job would get HTTPS_PROXY and HTTP_PROXY twice; keep one: the Secret (its keys '
            'HTTPS_PROXY and HTTP_PROXY), or the values and modelCache.proxy.existingSecret=""'),
    Refusal("network-policy-without-api-peers", "agg.yaml", {"networkPolicy": {"enabled": True}},
            "networkPolicy.enabled=true needs networkPolicy.apiServer.to, the Kubernetes API's peers: the Dynamo frontend, "
            "workers and planner call it (discovery, scaling), and " + API_PEERS),
    Refusal("network-policy-without-api-peers-picker", "trtllm-serve-low-latency.yaml",
            {"networkPolicy": {"enabled": True}, "inferencePool": {"enabled": True}},
            "networkPolicy.enabled=true needs networkPolicy.apiServer.to, the Kubernetes API's peers: the endpoint picker "
            "calls it, and " + API_PEERS, extra=True),
    Refusal("network-policy-without-prometheus-peers", "agg.yaml",
            {"networkPolicy": NETWORK_POLICY_ON, "monitoring": {"podMonitor": {"enabled": True}}},
            "networkPolicy.enabled=true with monitoring.podMonitor.enabled=true (it scrapes the serving pods) needs "
            "networkPolicy.prometheus.to, Prometheus' peers, each naming its namespace; " + PROMETHEUS_PEERS),
    Refusal("network-policy-without-prometheus-peers-planner", "disagg-k8s.yaml",
            {"networkPolicy": NETWORK_POLICY_ON, "planner": {"enabled": True}},
            "networkPolicy.enabled=true with planner.enabled=true (the planner reads it) needs networkPolicy.prometheus.to, "
            "Prometheus' peers, each naming its namespace; " + PROMETHEUS_PEERS, extra=True),
    Refusal("prometheus-peer-of-any-namespace", "trtllm-serve-low-latency.yaml",
            {"networkPolicy": {**NETWORK_POLICY_ON, "prometheus": {"to": [
                {"namespaceSelector": {}, "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}}]}}},
            'networkPolicy.prometheus.to[0] names no namespace: {"namespaceSelector":{},"podSelector":{"matchLabels":'
            '{"app.kubernetes.io/name":"prometheus"}}}; a pod of any namespace that carries these labels would reach the '
            "metrics ports, and the frontend's and trtllm-serve's metrics share their API port; allowed: a "
            "namespaceSelector with matchLabels kubernetes.io/metadata.name: <Prometheus' namespace> (beside a "
            "podSelector), a podSelector alone (the release's namespace), or an ipBlock"),
]
PATH_REFUSALS = [
    Refusal("model-the-revision-is-not-of", "agg.yaml", {"model": {"id": "openai/gpt-oss-20b"}},
            "model.id=openai/gpt-oss-20b is not a model this chart knows: its sizes, engine settings, download checks and "
            "pinned revisions are those of the models in gpt-oss.knownModels (templates/model-cache/_model-cache.tpl); "
            "allowed: openai/gpt-oss-120b"),
    Refusal("unknown-revision", "agg.yaml", {"model": {"revision": "0" * 40}},
            "model.revision=0000000000000000000000000000000000000000 is not a revision of openai/gpt-oss-120b the chart "
            "knows, so the download would fetch another model's files under this model's name, or files nobody checked; "
            "allowed: b5c939de8f754692c1647ca79fbf85e8c1e70f8a (a new revision goes into gpt-oss.knownModels)"),
    Refusal("cache-at-tmp", "agg.yaml", {"modelCache": {"mountPath": "/tmp"}},
            "modelCache.mountPath=/tmp is at or above /tmp, " + MOUNT_TAKEN),
    Refusal("cache-above-the-scripts", "agg.yaml", {"modelCache": {"mountPath": "/opt"}},
            "modelCache.mountPath=/opt is at or above /opt/gpt-oss/scripts, " + MOUNT_TAKEN, extra=True),
    Refusal("artifacts-above-the-model", "agg.yaml", {"benchmark": {"artifactsDir": "openai"}},
            "benchmark.artifactsDir=openai " + ARTIFACTS),
    Refusal("artifacts-in-the-model", "agg.yaml", {"benchmark": {"artifactsDir": "openai/gpt-oss-120b"}},
            "benchmark.artifactsDir=openai/gpt-oss-120b " + ARTIFACTS, extra=True),
]
PLACEMENT_REFUSALS = [
    Refusal("single-node-with-two-prefill-pods", "8xb200-single-node.yaml", {"workers": {"prefill": {"replicas": 2}}},
            "workers.sameNode=true puts every worker pod on one node, but they would hold 12 GPUs (workers.prefill: 2 x 4; "
            "workers.decode: 1 x 4) and a B200 node has 8 (gpu.perNode); allowed: at most 8 GPUs in all (fewer replicas or "
            "GPUs per pod), or workers.sameNode=false"),
    Refusal("single-node-of-four-gpus", "8xb200-single-node.yaml", {"gpu": {"perNode": 4}},
            "but they would hold 8 GPUs (workers.prefill: 1 x 4; workers.decode: 1 x 4) and a B200 node has 4 (gpu.perNode)",
            extra=True),
    Refusal("same-node-on-gb200", "agg.yaml", {"workers": {"sameNode": True, "worker": {"replicas": 3}}},
            "but they would hold 12 GPUs (workers.worker: 3 x 4) and a GB200 node has 4 (gpu.perNode)", extra=True),
    # The issue's case: the scaler may run 16 one-GPU workers on the one 8-GPU node.
    Refusal("single-node-scaler-max-replicas", "8xb200-single-node-balanced.yaml",
            {"workers": {"worker": {"autoscaling": {"enabled": True, "maxReplicas": 16}}}},
            "workers.sameNode=true puts every worker pod on one node, but at the most pods their scalers and the planner may "
            "run they would hold 16 GPUs (workers.worker: 16 (workers.worker.autoscaling.maxReplicas) x 1) and a B200 node "
            "has 8 (gpu.perNode): the pods beyond it would stay Pending; allowed: at most 8 GPUs in all (a lower "
            "autoscaling.maxReplicas or planner.maxGpuBudget), or workers.sameNode=false"),
    Refusal("single-node-planner-budget", "8xb200-single-node.yaml", {"planner": {"enabled": True, "maxGpuBudget": 12}},
            "they would hold 12 GPUs (workers.prefill and workers.decode: up to 12 GPUs (planner.maxGpuBudget)) and a B200 "
            "node has 8 (gpu.perNode)", extra=True),
    Refusal("single-node-one-scaled-role", "8xb200-single-node.yaml",
            {"workers": {"decode": {"autoscaling": {"enabled": True, "maxReplicas": 2}}}},
            "they would hold 12 GPUs (workers.prefill: 1 (workers.prefill.replicas) x 4; workers.decode: 2 "
            "(workers.decode.autoscaling.maxReplicas) x 4) and a B200 node has 8 (gpu.perNode)", extra=True),
    Refusal("read-write-once-across-nodes", "disagg-k8s.yaml", {"modelCache": {"accessMode": "ReadWriteOnce"}},
            "modelCache.accessMode=ReadWriteOnce lets one node mount the model cache at a time, but the worker pods can land "
            "on different nodes (workers.sameNode=false) (it is mounted by the download Job, the worker pods (workers.prefill: "
            "1 pod(s), workers.decode: 1 pod(s)), the frontend, the benchmark)" + MULTI_ATTACH
            + "ReadWriteOnce with workers.sameNode=true and every pod on that node"),
    Refusal("read-write-once-trtllm-serve-replicas", "trtllm-serve-low-latency.yaml",
            {"modelCache": {"accessMode": "ReadWriteOnce"}, "trtllmServe": {"replicas": 2}},
            "but the trtllm-serve pods can land on different nodes (each replica is a pod of its own) (it is mounted by the "
            "download Job, the trtllm-serve pods (trtllmServe: 2 pod(s)), the benchmark)" + MULTI_ATTACH
            + "ReadWriteOnce with trtllmServe.replicas=1 (no autoscaling) and every pod on that node", extra=True),
]
REFUSALS = {"security": SECURITY_REFUSALS, "paths": PATH_REFUSALS, "placement": PLACEMENT_REFUSALS}


@pytest.mark.parametrize("case", refusal_params(REFUSALS))
def test_should_refuse(case):
    assert_refused(case)


# The cases of issue 44 the schema refuses before any rule, naming the key.
SCHEMA_REFUSALS = [
    ("download-tag-with-a-space", "agg.yaml", {"modelCache": {"download": {"image": {"tag": "0.5 .2"}}}},
     "at '/modelCache/download/image/tag': '0.5 .2' does not match pattern"),
    ("trtllm-serve-tag-with-a-space", "trtllm-serve-low-latency.yaml", {"trtllmServe": {"image": {"tag": "1.3.0 rc29"}}},
     "at '/trtllmServe/image/tag': '1.3.0 rc29' does not match pattern"),
    ("model-id-dot-dot", "agg.yaml", {"model": {"id": "team-b/.."}}, "at '/model/id': 'team-b/..' does not match pattern"),
    ("artifacts-dir-dot", "agg.yaml", {"benchmark": {"artifactsDir": "."}},
     "at '/benchmark/artifactsDir': '.' does not match pattern"),
    ("replicas-beyond-any-cluster", "agg.yaml", {"workers": {"worker": {"replicas": 999999999999}}},
     "at '/workers/worker/replicas': maximum: got 9.99999999999×10¹¹, want 5,000"),
]


@pytest.mark.parametrize("overlay,values,message", [case[1:] for case in SCHEMA_REFUSALS], ids=[c[0] for c in SCHEMA_REFUSALS])
def test_should_refuse_in_the_schema(overlay, values, message):
    assert message in render_error(overlay, values)


class TestAllowed:
    """What the rules let through, and what they say about it."""

    def test_should_render_privileges_only_when_allowed_and_warn(self):
        values = {"security": {"allowPrivileged": True}, "securityContext": {"container": {"privileged": True}}}
        for name, spec, containers in pod_specs(render_chart(["agg.yaml"], values)):
            assert all(c["securityContext"]["privileged"] is True for c in containers), name
        assert ("security.allowPrivileged=true: every pod the chart defines runs with more than the restricted Pod Security "
                "profile allows (securityContext.container.privileged=true)") in render_notes(["agg.yaml"], values)
        assert "security.allowPrivileged" not in render_notes(["agg.yaml"], {"security": {"allowPrivileged": True}})

    def test_should_check_every_image_the_release_runs(self):
        # The rule's list (gpt-oss.images) is every image of the rendered pods: none slips past requireImageDigests.
        for overlay, values in (("disagg-k8s.yaml", {"planner": {"enabled": True}, "modelCache": {
                                    "source": "oci", "manifestSha256": "5" * 64,
                                    "oci": {"repository": "registry.example.com/models/gpt-oss-120b", "digest": DIGEST}}}),
                                ("trtllm-serve-low-latency.yaml", {"inferencePool": {"enabled": True}})):
            rendered = {c["image"] for _, spec, containers in pod_specs(render_chart([overlay], values))
                        for c in all_containers(spec, containers)}
            error = render_error(overlay, {**values, "security": {"requireImageDigests": True}})
            listed = set(re.findall(r"[\w.]+ \(([^()]+)\)", error.split("not pinned by digest: ")[1].split("; allowed")[0]))
            assert listed == rendered, overlay

    def test_should_render_images_pinned_by_digest(self):
        pinned = {"image": {"tag": f"1.0@{DIGEST}"}}
        values = {"security": {"requireImageDigests": True}, "dynamo": {"image": {"tag": DIGEST}, "runtimeVersionOverride": "1.7.0"},
                  "modelCache": {"download": pinned}, "smokeTest": pinned}
        images = {c["image"] for _, spec, containers in pod_specs(render_chart(["agg.yaml"], values))
                  for c in all_containers(spec, containers)}
        assert images and all(image.endswith("@" + DIGEST) for image in images), images

    def test_should_take_proxy_credentials_from_a_secret_only(self):
        [job] = render_chart(["agg.yaml"], {"modelCache": {"proxy": {"existingSecret": "corp-proxy"}}}, show_only=[DOWNLOAD_JOB])
        env = {e["name"]: e for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
        for name in ("HTTPS_PROXY", "HTTP_PROXY"):
            assert env[name] == {"name": name, "valueFrom": {"secretKeyRef": {"name": "corp-proxy", "key": name, "optional": True}}}

    def test_should_warn_about_a_read_write_once_cache_kept_on_one_node(self):
        notes = render_notes(["8xb200-single-node.yaml"], {"modelCache": {"accessMode": "ReadWriteOnce"}})
        assert ("modelCache.accessMode=ReadWriteOnce: one node mounts the cache at a time, so every pod that mounts it (the "
                "download Job, the worker pods (workers.prefill: 1 pod(s), workers.decode: 1 pod(s)), the frontend, the "
                "benchmark) must run on the node that mounted it first; workers.sameNode=true keeps the serving pods together") in notes

    @pytest.mark.parametrize("overlay", ["8xb200-single-node.yaml", "8xb200-single-node-balanced.yaml"])
    def test_should_fit_the_single_node_targets_on_their_node(self, overlay):
        # 8 GPUs of one B200 node: the targets as published (FACTS.md).
        dgd = find(render_chart([overlay]), "DynamoGraphDeployment")
        assert dgd["metadata"]["annotations"]["gpt-oss/total-gpus"] == "8"

    def test_should_take_replica_counts_a_cluster_can_hold(self):
        # 5000: Kubernetes supports clusters of up to 5000 nodes (the schema's maximum; 5001 is refused).
        assert render_error("disagg-k8s.yaml", {"workers": {"decode": {"replicas": 5000}}}) == ""


class TestNetworkPolicyTestHooks:
    """networkPolicy.clients narrows who reaches the entry point, never the release's own test hooks: on the node,
    kube-router refused the smoke test until they had an ingress rule of their own (tests/cluster/test_node_policies.py,
    smoke-test-to-server)."""

    def policies(self, overlay, clients):
        objects = render_chart([overlay], {"networkPolicy": {"enabled": True, "clients": clients}},
                               show_only=[NETWORK_POLICIES])
        return {o["metadata"]["name"]: o["spec"] for o in objects if o["kind"] == "NetworkPolicy"}

    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS)
    def test_should_let_the_test_hooks_reach_the_entry_port_beside_narrowed_clients(self, overlay):
        release = {"app.kubernetes.io/name": "gpt-oss", "app.kubernetes.io/instance": "gpt-oss"}
        hooks = self.policies(overlay, [{"namespaceSelector": {"matchLabels": {"team": "apps"}}}])[
            "gpt-oss-test-clients-ingress"]
        assert hooks == {
            "podSelector": {"matchLabels": {**release, "app.kubernetes.io/component": "trtllm-serve"}},
            "policyTypes": ["Ingress"],
            "ingress": [{"from": [{"podSelector": {"matchLabels": release, "matchExpressions": [
                {"key": "app.kubernetes.io/component", "operator": "In", "values": ["smoke-test", "benchmark"]}]}}],
                "ports": [{"port": 8000, "protocol": "TCP"}]}]}

    def test_should_add_no_rule_while_every_client_may_come(self):
        assert "gpt-oss-test-clients-ingress" not in self.policies(TRTLLM_SERVE_OVERLAYS[0], [])
