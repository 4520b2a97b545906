"""Prometheus for the e2e tier as a cluster runs it: prometheus-operator turns PodMonitors and PrometheusRules into
the configuration, Prometheus discovers the pods from the API server and scrapes them.

The e2e's processes (tests/e2e/stack.py, in a network namespace of their own) stand in for pods. OperatorRun puts
what a cluster would hold into the control plane the tests run against: one Pod object per process, with the Dynamo
operator's labels and named container ports, its status saying it runs at 127.0.0.1 (so a target's address is the
process's in the stack's namespace); the chart's rendered PodMonitors and PrometheusRules; the Dynamo platform
chart's PodMonitors (PLATFORM_PODMONITORS) beside them; and one `Prometheus` object per setup, selecting them. The
real prometheus-operator (ci/cluster/go/prometheus-operator) writes each setup's configuration into its Secret and the rules
into ConfigMaps; prometheus_service() runs Prometheus on exactly that, its rule files put where the configuration
names them (the pod's /etc/prometheus/ is a local folder here) and its $(SHARD) expanded as the pod's config reloader
expands it. Prometheus runs outside a pod, so each `Prometheus`
gives the operator the API server's address for the discovery (apiserverConfig, the operator's setting for that
case): a bridge's end in the stack's network namespace (tests/e2e/bridge.py), with the test's client certificate.
"""
from __future__ import annotations

import contextlib
import copy
import gzip
import random
import re
import string
import time
from pathlib import Path

import yaml

from tests.helpers import controllers

# The Dynamo platform chart's PodMonitors (deploy/helm/charts/platform/components/operator/templates/prometheus.yaml
# @14947dfa985a93c2fba3a6e3a1abcc667163422c, namespaceRestriction off), as that template renders them. Their
# interval (5s) is shortened by the caller, as the chart's are, to keep the tier fast.
PLATFORM_PODMONITORS = [
    {"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor",
     "metadata": {"name": "dynamo-frontend", "namespace": "dynamo-system"},
     "spec": {"namespaceSelector": {"any": True},
              "podMetricsEndpoints": [{"interval": "5s", "path": "/metrics", "port": "http", "honorLabels": True,
                                       "relabelings": [{"action": "replace", "targetLabel": "dynamo_namespace",
                                                        "sourceLabels": ["__meta_kubernetes_pod_label_nvidia_com_dynamo_namespace"]}]}],
              "selector": {"matchLabels": {"nvidia.com/dynamo-component-type": "frontend",
                                           "nvidia.com/metrics-enabled": "true"}}}},
    {"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor",
     "metadata": {"name": "dynamo-worker", "namespace": "dynamo-system"},
     "spec": {"namespaceSelector": {"any": True},
              "podMetricsEndpoints": [
                  {"interval": "5s", "path": "/metrics", "port": "system",
                   "relabelings": [{"action": "replace", "targetLabel": "dynamo_component_type",
                                    "sourceLabels": ["__meta_kubernetes_pod_label_nvidia_com_dynamo_component_type"]}]},
                  *[{"interval": "5s", "path": "/metrics", "port": port,
                     "relabelings": [{"action": "replace", "targetLabel": "dynamo_component_type",
                                      "sourceLabels": ["__meta_kubernetes_pod_label_nvidia_com_dynamo_component_type"]},
                                     {"action": "replace", "targetLabel": "dynamo_graph_deployment",
                                      "sourceLabels": ["__meta_kubernetes_pod_label_nvidia_com_dynamo_graph_deployment_name"]}]}
                    for port in ("system-0", "system-1")],
                  {"interval": "5s", "path": "/metrics", "port": "http", "honorLabels": True,
                   "relabelings": [{"action": "replace", "targetLabel": "dynamo_namespace",
                                    "sourceLabels": ["__meta_kubernetes_pod_label_nvidia_com_dynamo_namespace"]},
                                   {"action": "replace", "targetLabel": "dynamo_component_type",
                                    "sourceLabels": ["__meta_kubernetes_pod_label_nvidia_com_dynamo_component_type"]}]}],
              "selector": {"matchExpressions": [
                  {"key": "nvidia.com/dynamo-component-type", "operator": "In", "values": ["worker", "decode", "prefill"]},
                  {"key": "nvidia.com/metrics-enabled", "operator": "In", "values": ["true"]}]}}},
]


def operator_pod_labels(dgd_name: str, namespace: str, component: str, component_type: str) -> dict[str, str]:
    """The labels the Dynamo operator puts on a component's pods (deploy/operator/internal/consts/consts.go @0367e404:
    dynamo-graph-deployment-name, dynamo-component, dynamo-component-type, dynamo-namespace = ComputeDynamoNamespace,
    metrics-enabled unless the DGD opts out)."""
    return {"nvidia.com/dynamo-graph-deployment-name": dgd_name, "nvidia.com/dynamo-component": component,
            "nvidia.com/dynamo-component-type": component_type,
            "nvidia.com/dynamo-namespace": f"{namespace}-{dgd_name.replace('.', '-')}",
            "nvidia.com/metrics-enabled": "true"}


ETC = "/etc/prometheus/"  # where the operator's configuration expects its files in the Prometheus pod
RUN_LABEL = "gpt-oss.test/monitoring-run"


def platform_podmonitors(namespace: str, watched: list[str], interval: str) -> list[dict]:
    """The platform's PodMonitors in `namespace`, with their interval shortened as the chart's are in these tests, and
    their namespace selector naming the run's namespaces (the platform chart's `any: true` would also match the
    stand-in pods of other tests sharing the control plane, which carry the same operator labels)."""
    monitors = copy.deepcopy(PLATFORM_PODMONITORS)
    for monitor in monitors:
        monitor["metadata"]["namespace"] = namespace
        monitor["spec"]["namespaceSelector"] = {"matchNames": sorted(watched)}
        for endpoint in monitor["spec"]["podMetricsEndpoints"]:
            endpoint["interval"] = interval
    return monitors


def stand_in_pod(namespace: str, name: str, labels: dict[str, str], ports: dict[str, int]) -> dict:
    """The Pod object of one e2e process: its labels, its container `main` with the named ports it serves."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"automountServiceAccountToken": False, "containers": [{
                "name": "main", "image": "gpt-oss.test/e2e-process:stand-in",
                "ports": [{"name": port_name, "containerPort": port} for port_name, port in sorted(ports.items())],
                "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "allowPrivilegeEscalation": False,
                                    "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}}]}}


def short_id() -> str:
    return "".join(random.choices(string.ascii_lowercase + string.digits, k=5))


class OperatorRun:
    """The cluster side of one monitoring run: its namespaces and objects, prometheus-operator, the configurations it
    wrote. close() deletes the namespaces (with everything in them) and stops the operator."""

    def __init__(self, api_client, kubeconfig: Path, folder: Path):
        from kubernetes import client
        self.api, self.kubeconfig, self.folder = api_client, kubeconfig, folder
        self.core, self.custom = client.CoreV1Api(api_client), client.CustomObjectsApi(api_client)
        self.run = short_id()
        self.namespaces: list[str] = []
        self.prometheuses: dict[str, dict] = {}
        self.objects: list[dict] = []
        self.operator: controllers.Process | None = None
        folder.mkdir(parents=True, exist_ok=True)

    def namespace(self, name: str) -> str:
        self.core.create_namespace({"metadata": {"name": name, "labels": {RUN_LABEL: self.run}}})
        self.namespaces.append(name)
        try:  # what the service-account controller does, ahead of the pods
            self.core.create_namespaced_service_account(name, {"metadata": {"name": "default"}})
        except Exception as error:
            if getattr(error, "status", None) != 409:
                raise
        return name

    def node(self) -> str:
        """An API-only node (no kubelet) the stand-in pods are bound to: nothing runs them, nothing changes them."""
        nodes = self.core.list_node().items
        api_only = [n.metadata.name for n in nodes if (n.status.node_info.kubelet_version or "") == "v0.0.0-none"]
        assert api_only, (f"no API-only node in {[n.metadata.name for n in nodes]} "
                          "(python -m ci.cluster control-plane makes them)")
        return api_only[0]

    def pods(self, pods: list[dict]) -> None:
        """Create each stand-in pod on an API-only node and mark it running at 127.0.0.1, as a kubelet would."""
        node = self.node()
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        for pod in pods:
            body = copy.deepcopy(pod)
            body["spec"]["nodeName"] = node
            self.core.create_namespaced_pod(pod["metadata"]["namespace"], body)
            self.core.patch_namespaced_pod_status(pod["metadata"]["name"], pod["metadata"]["namespace"], {"status": {
                "phase": "Running", "podIP": "127.0.0.1", "podIPs": [{"ip": "127.0.0.1"}], "hostIP": "127.0.0.1",
                "startTime": now, "conditions": [{"type": t, "status": "True", "lastTransitionTime": now}
                                                 for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
                "containerStatuses": [{"name": "main", "ready": True, "restartCount": 0, "started": True,
                                       "image": body["spec"]["containers"][0]["image"], "imageID": "",
                                       "state": {"running": {"startedAt": now}}}]}})

    def create(self, obj: dict, namespace: str) -> None:
        """A custom object (PodMonitor, PrometheusRule, Prometheus, ScaledObject, scaling adapter), as rendered, in
        `namespace`."""
        body = copy.deepcopy(obj)
        body["metadata"]["namespace"] = namespace
        plural = {"PodMonitor": "podmonitors", "PrometheusRule": "prometheusrules", "Prometheus": "prometheuses",
                  "ScaledObject": "scaledobjects", "DynamoGraphDeploymentScalingAdapter":
                      "dynamographdeploymentscalingadapters"}
        group, version = body["apiVersion"].split("/")
        self.custom.create_namespaced_custom_object(group, version, namespace, plural[body["kind"]], body)
        self.objects.append(body)

    def chart_objects(self, objects: list[dict], namespace: str) -> None:
        """The PodMonitors and PrometheusRules of a render, as Helm would install them into `namespace`."""
        for obj in objects:
            if obj["kind"] in ("PodMonitor", "PrometheusRule"):
                self.create(obj, namespace)

    def created(self, kind: str) -> list[dict]:
        return [o for o in self.objects if o["kind"] == kind]

    def prometheus(self, name: str, namespace: str, release: str, monitors: list[str], rules: list[str],
                   interval: str) -> None:
        """A `Prometheus` of the release under test that selects every PodMonitor of the `monitors` namespaces and
        every PrometheusRule of the `rules` namespaces. No replicas: the test runs Prometheus on its configuration,
        outside a pod, so the discovery is told the API server's address (the bridge's end in the stack) and the
        client's files (the operator's apiserverConfig, for a Prometheus outside the cluster)."""
        version = {"3.16": "v3.16.0"}[release]
        access = controllers.Access.of(self.kubeconfig)
        spec = {"version": version, "replicas": 0, "scrapeInterval": interval, "scrapeTimeout": interval,
                "apiserverConfig": {"host": f"https://127.0.0.1:{API_PORT}", "tlsConfig": {
                    "caFile": str(access.ca), "certFile": str(access.cert), "keyFile": str(access.key)}},
                "evaluationInterval": interval, "replicaExternalLabelName": "", "prometheusExternalLabelName": "",
                "podMonitorSelector": {}, "podMonitorNamespaceSelector": {"matchExpressions": [
                    {"key": "kubernetes.io/metadata.name", "operator": "In", "values": sorted(monitors)}]},
                "ruleSelector": {}, "ruleNamespaceSelector": {"matchExpressions": [
                    {"key": "kubernetes.io/metadata.name", "operator": "In", "values": sorted(rules)}]}}
        self.create({"apiVersion": "monitoring.coreos.com/v1", "kind": "Prometheus", "metadata": {"name": name},
                     "spec": spec}, namespace)
        self.prometheuses[name] = {"namespace": namespace, "monitors": monitors, "rules": rules}

    def configurations(self, jobs: dict[str, int], rule_files: dict[str, int], timeout: float = 90) -> dict[str, dict]:
        """Start the operator, wait until it wrote each Prometheus' configuration with `jobs[name]` scrape jobs and
        `rule_files[name]` rule files, read them, stop it. {name: {"config": {...}, "rules": {file name: text}}}."""
        from tests.cluster import kube
        self.operator = controllers.start_prometheus_operator(
            controllers.Access.of(self.kubeconfig), self.namespaces, self.folder / "prometheus-operator.log")
        found: dict[str, dict] = {}

        def written() -> bool:
            assert self.operator.running(), f"prometheus-operator exited\n{self.operator.tail()}"
            for name, where in self.prometheuses.items():
                generated = self.generated(name, where["namespace"])
                if generated and (len(generated["config"].get("scrape_configs") or []), len(generated["rules"])) == (
                        jobs[name], rule_files[name]):
                    found[name] = generated
            return len(found) == len(self.prometheuses)

        kube.wait_for("prometheus-operator's configurations", written, timeout=timeout, interval=1,
                      explain=lambda: f"written: {sorted(found)}\n{self.operator.tail()}")
        self.operator.stop()
        return found

    def generated(self, name: str, namespace: str) -> dict | None:
        """The configuration the operator wrote for Prometheus `name` (Secret prometheus-<name>, prometheus.yaml.gz)
        and its rule files (ConfigMaps prometheus-<name>-rulefiles-<n>), or None before it wrote them."""
        import base64
        from kubernetes.client.exceptions import ApiException
        try:
            secret = self.core.read_namespaced_secret(f"prometheus-{name}", namespace)
        except ApiException as error:
            if error.status == 404:
                return None
            raise
        if not (secret.data or {}).get("prometheus.yaml.gz"):
            return None
        config = yaml.safe_load(gzip.decompress(base64.b64decode(secret.data["prometheus.yaml.gz"])))
        rules = {}
        for config_map in self.core.list_namespaced_config_map(namespace).items:
            if config_map.metadata.name.startswith(f"prometheus-{name}-rulefiles-"):
                for file, text in (config_map.data or {}).items():
                    rules[f"{config_map.metadata.name}/{file}"] = text
        return {"config": config, "rules": rules}

    def close(self) -> None:
        if self.operator is not None:
            self.operator.stop()
        for name in self.namespaces:
            try:
                self.core.delete_namespace(name)
            except Exception as error:
                if getattr(error, "status", None) != 404:
                    raise

    def __enter__(self) -> "OperatorRun":
        return self

    def __exit__(self, *_):
        self.close()


# The Prometheus the monitoring checks run on: Prometheus 3 as users run it today, built from its pinned module
# (ci/cluster/go/prometheus). Debian's 2.42 (promtool's package, tests/chart/monitoring/test_alerts.py) is built without Kubernetes discovery
# ("field kubernetes_sd_configs not found in type config.ScrapeConfig"), which the operator's configuration uses.
RELEASES = ["3.16"]


def prometheus_binary(release: str = "3.16") -> str | None:
    from ci.cluster import go_parts
    folder = go_parts.built("prometheus") if release == "3.16" else None
    return str(folder / "prometheus") if folder else None


def missing_binary(release: str) -> str:
    return f"Prometheus {release} is not built: python -m ci.cluster go-parts build prometheus"


def prometheus_service(name: str, folder: Path, port: int, generated: dict, env: dict[str, str],
                       release: str = "3.16") -> dict:
    """A stack.py service: Prometheus on 127.0.0.1:port with the operator's configuration, its rule files where the
    configuration names them (their folder in the pod, /etc/prometheus/, is a local one here)."""
    folder.mkdir(parents=True, exist_ok=True)
    config = copy.deepcopy(generated["config"])
    local = folder / "etc-prometheus"
    for file, text in generated["rules"].items():
        (local / "rules" / file).parent.mkdir(parents=True, exist_ok=True)
        (local / "rules" / file).write_text(text)
    config["rule_files"] = [str(local) + "/" + path.removeprefix(ETC) for path in config.get("rule_files") or []]
    text = yaml.safe_dump(config, sort_keys=False)
    assert ETC not in text, f"the operator's configuration names other files of its pod: {text}"
    # What prometheus-config-reloader does in the pod before Prometheus reads the file: $(VAR) from the container's
    # environment, which the operator's StatefulSet sets (SHARD: the shard's index; one shard here).
    text = re.sub(r"\$\((\w+)\)", lambda m: {"SHARD": "0"}[m.group(1)], text)
    (folder / "prometheus.yml").write_text(text)
    return {"name": name, "role": "prometheus", "env": env,
            "argv": [prometheus_binary(release), f"--config.file={folder / 'prometheus.yml'}",
                     f"--storage.tsdb.path={folder / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
                     "--storage.tsdb.retention.time=1h", "--web.enable-lifecycle"],
            "url": f"http://127.0.0.1:{port}"}


API_PORT = 16443  # the API server's address in the stack's network namespace: the bridge's end there
BRIDGE = Path(__file__).with_name("bridge.py")


def api_bridge_service(python: str, socket_path: Path, env: dict[str, str], rules: tuple[str, ...] = ()) -> dict:
    """The stack's end of the bridge to the API server (first of the stack's services): 127.0.0.1:API_PORT there,
    `socket_path` on the host, where host_api_bridge() listens; with further tests/e2e/bridge.py rules."""
    return {"name": "api-bridge", "role": "bridge", "env": env, "listens": f"127.0.0.1:{API_PORT}",
            "argv": [python, str(BRIDGE), f"tcp:{API_PORT}=unix:{socket_path}", *rules]}


@contextlib.contextmanager
def host_api_bridge(socket_path: Path, access: controllers.Access):
    """The host's end of the bridge: the socket, passed to the API server's port."""
    from tests.e2e.bridge import Bridge
    bridge = Bridge(f"unix:{socket_path}=tcp:{access.port}")
    try:
        yield bridge
    finally:
        bridge.close()


def operator_configurations(cluster: OperatorRun, namespace: str, setups: dict[str, list[str]], release: str,
                            interval: str) -> dict[str, dict]:
    """One `Prometheus` per setup in `namespace`, each selecting the PodMonitors of its namespaces and the
    PrometheusRules of every namespace of the run but `namespace`; what the operator wrote for each (see
    OperatorRun.configurations). Call once every PodMonitor and PrometheusRule is in place."""
    rules = [n for n in cluster.namespaces if n != namespace]
    jobs, rule_files = {}, {}
    for name, monitors in setups.items():
        cluster.prometheus(name, namespace, release, monitors, rules, interval)
        jobs[name] = sum(len(m["spec"]["podMetricsEndpoints"]) for m in cluster.created("PodMonitor")
                         if m["metadata"]["namespace"] in monitors)
        rule_files[name] = sum(1 for r in cluster.created("PrometheusRule") if r["metadata"]["namespace"] in rules)
    return cluster.configurations(jobs, rule_files)


def adapter_rules(doc: str) -> list[dict]:
    """prometheus-adapter's external rules as docs/monitoring.md gives them (the YAML block under its heading)."""
    section = doc.split("### prometheus-adapter rules", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    return yaml.safe_load(block)


def adapter_query(rules: list[dict], metric: str, labels: dict[str, str], namespace: str) -> str:
    """The PromQL prometheus-adapter runs for an HPA's External metric: the rule whose seriesQuery names it, with
    <<.Series>> the metric and <<.LabelMatchers>> the HPA's namespace and selector (sorted, as the chart's annotation)."""
    for rule in rules:
        names = re.search(r'__name__=~"([^"]+)"', rule["seriesQuery"]).group(1)
        exposed = rule.get("name", {}).get("as")
        if re.fullmatch(names, metric) or exposed == metric:
            matchers = [f'namespace="{namespace}"'] + [f'{k}="{labels[k]}"' for k in sorted(labels)]
            return rule["metricsQuery"].replace("<<.Series>>", metric).replace("<<.LabelMatchers>>", ",".join(matchers))
    raise AssertionError(f"no prometheus-adapter rule in docs/monitoring.md serves {metric}")
