#!/usr/bin/env python3
"""Render one target with the chart and print what it would deploy.

usage: python tools/plan.py values/agg.yaml [more values files] [--set-json '{"benchmark": {"concurrency": null}}']
       [--api-version nvidia.com/v1alpha1] [--predict]

--predict adds aiconfigurator's predicted throughput and latency (tools/predict.py; needs the optional
requirements-predict.txt).

Everything printed is read back from the rendered manifests (not from the values), so the plan
shows exactly what `helm install` would create.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.helpers import ChartRenderError, dgd_components, dgd_workers, find, render_manifests  # noqa: E402


def plan(values_files: list[str], values: dict) -> str:
    manifests = render_manifests(values_files, values)
    objects = [doc for path, text in sorted(manifests.items()) if path.endswith(".yaml")
               for doc in yaml.safe_load_all(text) if doc]
    deployments = [o for o in objects if o["kind"] == "Deployment"
                   and o["metadata"]["labels"].get("app.kubernetes.io/component") == "trtllm-serve"]
    notes = manifests.get("gpt-oss/templates/NOTES.txt", "")
    quantization = notes_quantization(notes)
    lines = (trtllm_serve_lines(objects, deployments[0], quantization) if deployments
             else dynamo_lines(objects, quantization))
    lines += exposure_lines(objects)
    lines += scaling_lines(objects)
    lines += monitoring_lines(objects)
    jobs = [o for o in objects if o["kind"] == "Job" and o["metadata"]["name"].endswith("-benchmark")]
    if jobs:
        args = jobs[0]["spec"]["template"]["spec"]["containers"][0]["args"]
        annotations = jobs[0]["metadata"]["annotations"]
        lines.append(f"  Benchmark ({annotations['gpt-oss/benchmark-gpus']} GPUs counted): concurrency "
                     f"{annotations['gpt-oss/benchmark-concurrency']}, {annotations['gpt-oss/benchmark-request-count']} "
                     f"requests; runs only with `helm test --filter name={jobs[0]['metadata']['name']}`")
        lines.append("    " + " ".join(args))
    warnings = [line.strip()[2:] for line in notes.split("WARNINGS", 1)[-1].splitlines()
                if line.strip().startswith("- ")] if "WARNINGS" in notes else []
    lines += [f"  WARNING: {w}" for w in warnings] or ["  No sizing warnings."]
    return "\n".join(lines)


def notes_quantization(notes: str) -> dict[str, str]:
    """Role (Dynamo component name, or trtllm-serve) -> "<algo>: <reason>", as NOTES.txt states it.

    The chart computes it (gpt-oss.quantization): OVERRIDE_QUANT_ALGO when set, else TensorRT-LLM's rule by
    GPU family and MoE backend.
    """
    return dict(re.findall(r"^  ([\w-]+): .*\n    quantization (\S+: .*)$", notes, re.MULTILINE))


def trtllm_serve_lines(objects: list[dict], deployment: dict, quantization: dict[str, str]) -> list[str]:
    """The trtllm-serve runtime: its Deployment's pods, command line and engine YAML."""
    name = deployment["metadata"]["name"]
    pod = deployment["spec"]["template"]["spec"]
    main = pod["containers"][0]
    selector = ", ".join(f"{k}={v}" for k, v in pod.get("nodeSelector", {}).items())
    engine_file = main["args"][main["args"].index("--extra_llm_api_options") + 1].rsplit("/", 1)[-1]
    engine = find(objects, "ConfigMap", next(v["configMap"]["name"] for v in pod["volumes"] if "configMap" in v))
    annotations = deployment["metadata"]["annotations"]
    return [
        f"Deployment {name} (trtllm-serve, no Dynamo), {annotations['gpt-oss/total-gpus']} GPUs in total, "
        f"{annotations['gpt-oss/decode-slots']} decode slots",
        f"  trtllm-serve: {deployment['spec'].get('replicas', 'autoscaled')} pod(s) x {main['resources']['limits']['nvidia.com/gpu']} "
        f"GPU(s) on nodes {selector}, Service {name}",
        f"    image {main['image']}, quantization {quantization['trtllm-serve']}",
        "    " + " ".join(main["command"] + main["args"]),
        f"    engine ({engine_file}): " + json.dumps(yaml.safe_load(engine["data"][engine_file]), sort_keys=True),
    ]


def dynamo_lines(objects: list[dict], quantization: dict[str, str]) -> list[str]:
    """The Dynamo runtime: the DynamoGraphDeployment's worker roles and their engine YAMLs."""
    dgd = find(objects, "DynamoGraphDeployment")
    engine = find(objects, "ConfigMap", f"{dgd['metadata']['name']}-engine")["data"]
    lines = [f"DynamoGraphDeployment {dgd['metadata']['name']} ({dgd['apiVersion']}), "
             f"{dgd['metadata']['annotations']['gpt-oss/total-gpus']} GPUs in total"]
    for name, worker in dgd_workers(dgd).items():
        selector = ", ".join(f"{k}={v}" for k, v in worker["pod_spec"].get("nodeSelector", {}).items())
        same_node = " (all workers on one node)" if "podAffinity" in worker["pod_spec"].get("affinity", {}) else ""
        engine_file = worker["args"][worker["args"].index("--extra-engine-args") + 1].rsplit("/", 1)[-1]
        lines += [
            f"  {name} [{worker['type']}]: {worker['replicas']} pod(s) x {worker['gpus']} GPU(s) on nodes {selector}{same_node}",
            f"    image {worker['main']['image']}, quantization {quantization[name]}",
            f"    engine ({engine_file}): " + json.dumps(yaml.safe_load(engine[engine_file]), sort_keys=True),
        ]
    return lines


# Exposure, disruption budgets and routing.
def exposure_lines(objects: list[dict]) -> list[str]:
    """How clients reach the release, which PodDisruptionBudgets guard which pods, and how requests are routed."""
    lines = []
    for ingress in (o for o in objects if o["kind"] == "Ingress"):
        for rule in ingress["spec"]["rules"]:
            for path in rule["http"]["paths"]:
                service = path["backend"]["service"]
                lines.append(f"  Reach: Ingress {ingress['metadata']['name']} http(s)://{rule['host']}{path['path']} "
                             f"-> Service {service['name']}:{service['port']['number']}")
    for route in (o for o in objects if o["kind"] == "HTTPRoute"):
        backend = route["spec"]["rules"][0]["backendRefs"][0]
        target = f"{backend['kind']} {backend['name']}" + (f":{backend['port']}" if "port" in backend else "")
        gateways = ", ".join(ref["name"] for ref in route["spec"]["parentRefs"])
        hosts = ", ".join(route["spec"].get("hostnames", [])) or "the Gateway's hosts"
        lines.append(f"  Reach: HTTPRoute {route['metadata']['name']} on Gateway {gateways} ({hosts}) -> {target}")
    if not lines:
        service = next((o for o in objects if o["kind"] == "Service"
                        and o["metadata"]["labels"].get("app.kubernetes.io/component") == "trtllm-serve"), None)
        name = service["metadata"]["name"] if service else \
            f"{find(objects, 'DynamoGraphDeployment')['metadata']['name']}-frontend"
        lines.append(f"  Reach: kubectl port-forward svc/{name} 8000:8000 (no Ingress or HTTPRoute)")
    budgets = [o for o in objects if o["kind"] == "PodDisruptionBudget"]
    for pdb in budgets:
        limit = ("maxUnavailable", pdb["spec"]["maxUnavailable"]) if "maxUnavailable" in pdb["spec"] \
            else ("minAvailable", pdb["spec"]["minAvailable"])
        selector = ", ".join(f"{k}={v}" for k, v in pdb["spec"]["selector"]["matchLabels"].items())
        lines.append(f"  PodDisruptionBudget {pdb['metadata']['name']} ({limit[0]} {limit[1]}): pods {selector}")
    if not budgets:
        lines.append("  No PodDisruptionBudgets: a node drain may evict every pod of a role at once.")
    dgds = [o for o in objects if o["kind"] == "DynamoGraphDeployment"]
    if dgds:
        frontend = next(view for view in dgd_components(dgds[0]).values() if view["type"] == "frontend")
        lines.append("  Router: " + " ".join(frontend["args"][:frontend["args"].index("--http-port")]))
    for pool in (o for o in objects if o["kind"] == "InferencePool"):
        lines.append(f"  Router: InferencePool {pool['metadata']['name']}, endpoint picker "
                     f"{pool['spec']['endpointPickerRef']['name']}")
    return lines


# Autoscaling and the SLA planner.
def scaling_lines(objects: list[dict]) -> list[str]:
    """Autoscalers (KEDA ScaledObjects, HPAs) and the SLA planner: replica range, GPUs, metric, targets."""
    lines = []
    for scaler in [o for o in objects if o["kind"] in ("ScaledObject", "HorizontalPodAutoscaler")]:
        spec, annotations = scaler["spec"], scaler["metadata"]["annotations"]
        target = spec["scaleTargetRef"]
        if scaler["kind"] == "ScaledObject":
            low, high = spec["minReplicaCount"], spec["maxReplicaCount"]
            trigger = spec["triggers"][0]
            metadata = trigger.get("metadata", {})
            metric = (f"{trigger['type']} {metadata['query']} (threshold {metadata['threshold']} per replica)"
                      if "query" in metadata else f"{trigger['type']} trigger")
        else:
            low, high = spec["minReplicas"], spec["maxReplicas"]
            metric_spec = spec["metrics"][0]
            body = metric_spec.get(metric_spec["type"].lower(), {})
            metric = f"{metric_spec['type']} {body.get('metric', {}).get('name', '')} {json.dumps(body.get('target', {}), sort_keys=True)}"
        lines.append(f"  Autoscaling {annotations['gpt-oss/scales']}: {low}-{high} replicas, "
                     f"{annotations['gpt-oss/gpus-at-min-replicas']}-{annotations['gpt-oss/gpus-at-max-replicas']} GPUs, "
                     f"{scaler['kind']} {scaler['metadata']['name']} -> {target['kind']} {target['name']}; metric {metric}")
    dgds = [o for o in objects if o["kind"] == "DynamoGraphDeployment"]
    for name, component in (dgd_components(dgds[0]).items() if dgds else []):
        if component["type"] == "planner":
            config = json.loads(component["args"][component["args"].index("--config") + 1])
            aic = config.get("aic_interpolation") or {}
            lines.append(f"  SLA planner (component {name}, {config['mode']}, {config['optimization_target']}): TTFT {config['ttft_ms']} ms, "
                         f"ITL {config['itl_ms']} ms, GPU budget {config['min_gpu_budget']}..{config['max_gpu_budget']}, "
                         f"min {config['min_endpoint']} replica(s) per worker role"
                         + (f", aiconfigurator {aic['system']} ISL {aic['isl']} / OSL {aic['osl']}" if aic else ""))
    return lines


# What the scalers, dashboard and alerts read from Prometheus (issue 24).
def monitoring_lines(objects: list[dict]) -> list[str]:
    """Each scaler's PromQL and the scrape setups its series come from; the PodMonitors, dashboard and alerts."""
    lines = []
    for scaler in [o for o in objects if o["kind"] in ("ScaledObject", "HorizontalPodAutoscaler")]:
        annotations = scaler["metadata"]["annotations"]
        if "gpt-oss/query" not in annotations:
            lines.append(f"  Query of {scaler['kind']} {scaler['metadata']['name']}: your own trigger or metric")
            continue
        who = "KEDA" if scaler["kind"] == "ScaledObject" else "prometheus-adapter (rules: docs/monitoring.md)"
        lines.append(f"  Query of {scaler['kind']} {scaler['metadata']['name']} ({who}): {annotations['gpt-oss/query']}")
        lines.append(f"    scrape: {annotations['gpt-oss/scrape']}")
    monitors = [o["metadata"]["name"] for o in objects if o["kind"] == "PodMonitor"]
    if monitors:
        lines.append(f"  PodMonitors: {', '.join(monitors)} (the Dynamo platform's relabelings; queries count each pod once)")
    for rule in (o for o in objects if o["kind"] == "PrometheusRule"):
        alerts = [f"{r['alert']} ({r['labels']['severity']}, for {r['for']})"
                  for group in rule["spec"]["groups"] for r in group["rules"]]
        lines.append(f"  Alerts ({rule['metadata']['name']}): {', '.join(alerts)}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("values_files", nargs="+")
    parser.add_argument("--set-json", default="{}", help="extra values as JSON (null removes a key)")
    parser.add_argument("--api-version", help="dynamo.apiVersion to render (runtime dynamo)")
    parser.add_argument("--predict", action="store_true",
                        help="add aiconfigurator's prediction and best configuration (requirements-predict.txt)")
    args = parser.parse_args(argv)
    values = json.loads(args.set_json)
    if args.api_version:
        values.setdefault("dynamo", {})["apiVersion"] = args.api_version
    try:
        print(plan(args.values_files, values))
        if args.predict:
            from tools.predict import format_prediction, predict
            try:
                print(format_prediction(predict(args.values_files, values)))
            except ImportError as error:
                print(f"--predict needs aiconfigurator: pip install -r requirements-predict.txt ({error})",
                      file=sys.stderr)
                return 2
    except ChartRenderError as error:
        print(f"refused: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
