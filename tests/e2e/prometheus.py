"""A real Prometheus (Debian's 2.42) for the e2e tier, scraping the e2e's processes as a cluster's Prometheus would.

podmonitor_scrape_configs() turns a PodMonitor into the scrape configs prometheus-operator would generate for it, over
stand-in pods: a pod's labels become the __meta_kubernetes_pod_label_* target labels a kubernetes_sd_config would give
it (static_configs carry them here), so the PodMonitor's own relabelings act on them as in a cluster; the selector,
namespace selector and port are applied as the operator's keep rules would; job, namespace, pod, container and endpoint
are set as the operator sets them. PLATFORM_PODMONITORS are the Dynamo platform chart's own PodMonitors.
prometheus_service() is a stack.py service running Prometheus on those configs.
"""
from __future__ import annotations

import copy
import re
import shutil
from pathlib import Path

import yaml

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


def _sanitize(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_]", "_", name)


def _selected(selector: dict, labels: dict[str, str]) -> bool:
    if any(labels.get(key) != value for key, value in (selector.get("matchLabels") or {}).items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and labels.get(key) in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


def _relabeling(rule: dict) -> dict:
    """A PodMonitor relabeling (camelCase) as a Prometheus relabel_config (snake_case)."""
    names = {"sourceLabels": "source_labels", "targetLabel": "target_label", "action": "action", "regex": "regex",
             "replacement": "replacement", "separator": "separator", "modulus": "modulus"}
    return {names[key]: value for key, value in rule.items()}


def podmonitor_scrape_configs(monitor: dict, pods: list[dict], interval: str | None = None) -> list[dict]:
    """prometheus-operator's scrape configs of one PodMonitor over stand-in pods.

    pods: [{"namespace", "name", "labels": {...}, "ports": {port name: "host:port"}}]. One scrape config per
    podMetricsEndpoint (job_name podMonitor/<namespace>/<name>/<i>), as the operator writes them; interval, when
    given, replaces every endpoint's.
    """
    spec, meta = monitor["spec"], monitor["metadata"]
    monitor_namespace = meta.get("namespace", "default")
    namespaces = spec.get("namespaceSelector") or {}
    configs = []
    for index, endpoint in enumerate(spec["podMetricsEndpoints"]):
        port = endpoint["port"]
        static = []
        for pod in pods:
            in_namespace = namespaces.get("any") or pod["namespace"] in namespaces.get("matchNames", [monitor_namespace])
            if not (in_namespace and _selected(spec["selector"], pod["labels"]) and port in pod["ports"]):
                continue
            labels = {"__meta_kubernetes_namespace": pod["namespace"], "__meta_kubernetes_pod_name": pod["name"],
                      "__meta_kubernetes_pod_container_name": "main",
                      "__meta_kubernetes_pod_container_port_name": port}
            for key, value in pod["labels"].items():
                labels[f"__meta_kubernetes_pod_label_{_sanitize(key)}"] = value
                labels[f"__meta_kubernetes_pod_labelpresent_{_sanitize(key)}"] = "true"
            static.append({"targets": [pod["ports"][port]], "labels": labels})
        if not static:
            continue
        relabel = [
            {"target_label": "job", "replacement": f"{monitor_namespace}/{meta['name']}"},
            {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
            {"source_labels": ["__meta_kubernetes_pod_container_name"], "target_label": "container"},
            {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
            {"target_label": "endpoint", "replacement": port},
            *[_relabeling(rule) for rule in endpoint.get("relabelings") or []],
        ]
        scrape_interval = interval or endpoint.get("interval", "30s")
        config = {"job_name": f"podMonitor/{monitor_namespace}/{meta['name']}/{index}",
                  "honor_labels": bool(endpoint.get("honorLabels", False)),
                  "scrape_interval": scrape_interval,
                  "scrape_timeout": interval or endpoint.get("scrapeTimeout", scrape_interval),
                  "metrics_path": endpoint.get("path", "/metrics"),
                  "static_configs": static, "relabel_configs": relabel}
        configs.append(config)
    return configs


def rendered_podmonitors(objects: list[dict], namespace: str) -> list[dict]:
    """The chart's PodMonitors of one render, placed in the namespace it was rendered for."""
    monitors = copy.deepcopy([o for o in objects if o["kind"] == "PodMonitor"])
    for monitor in monitors:
        monitor["metadata"]["namespace"] = namespace
    return monitors


def rule_groups(objects: list[dict]) -> list[dict]:
    return [group for o in objects if o["kind"] == "PrometheusRule" for group in o["spec"]["groups"]]


# The Prometheus releases the monitoring checks run on: Debian's package (2.42, with promtool) and Prometheus 3 as
# users run it today, built from its pinned module (ci/go/prometheus).
RELEASES = ["2.42", "3.16"]


def prometheus_binary(release: str = "2.42") -> str | None:
    if release == "2.42":
        return shutil.which("prometheus")
    from ci.gptoss_ci import go_parts
    folder = go_parts.built("prometheus")
    return str(folder / "prometheus") if folder else None


def missing_binary(release: str) -> str:
    return {"2.42": "prometheus not found; install Debian's prometheus package (apt-get install prometheus)"}.get(
        release, f"Prometheus {release} is not built: python -m ci.gptoss_ci.go_parts build prometheus")


def prometheus_service(name: str, folder: Path, port: int, scrape_configs: list[dict], groups: list[dict],
                       env: dict[str, str], interval: str = "1s", release: str = "2.42") -> dict:
    """A stack.py service: Prometheus on 127.0.0.1:port with these scrape configs and alert rule groups."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rules.yaml").write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    config = {"global": {"scrape_interval": interval, "evaluation_interval": interval},
              "rule_files": [str(folder / "rules.yaml")], "scrape_configs": scrape_configs}
    (folder / "prometheus.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    return {"name": name, "role": "prometheus", "env": env,
            "argv": [prometheus_binary(release), f"--config.file={folder / 'prometheus.yml'}",
                     f"--storage.tsdb.path={folder / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
                     "--storage.tsdb.retention.time=1h", "--web.enable-lifecycle"],
            "url": f"http://127.0.0.1:{port}"}


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
