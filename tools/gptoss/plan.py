"""Render the chart and print what `helm install` would deploy, or the manifests `helm template` would print.

usage: python tools/plan.py [RELEASE] -f values/agg.yaml [-f more.yaml] [--set k=v] [--set-string k=v]
       [--set-json '{"benchmark": {"concurrency": null}}'] [-n NAMESPACE] [--api-version nvidia.com/v1beta1]
       [--predict | --manifests]
       tools/plan.py --search --gpu H200 --isl 1000 --osl 1000 --rate 100000tok/s [--ttft 2000] [--itl 20]
       [--max-gpus N] [--write values/my-target.yaml]   (search.py: how many GPUs for a traffic, as an overlay)

Values merge as Helm merges them: -f files in order, then every --set-json, every --set, every --set-string
(docs/tools.md). RELEASE defaults to gpt-oss and -n to llm, as in the README's `helm install`.
--predict adds aiconfigurator's predicted throughput and latency and its speed of light (predict.py; needs
the optional requirements-predict.txt). --manifests prints the rendered manifests instead of the plan, in
`helm template`'s order.

Everything the plan prints is read back from the rendered manifests (not from the values), so it shows exactly
what `helm install` would create. Exit codes: 0 done; 1 the chart refused the values (its message); 2 a bad
command line or values file (one line on stderr); 3 a bug (one line; GPT_OSS_DEBUG=1 for the traceback).
"""
from __future__ import annotations

import json

from .cli import (HelmLikeParser, UsageError, add_values_options, escape_controls, one_line, refuse, release_and_values,
                  with_set_form_hint, write)
from .manifests import template_output
from .objects import dgd_components, dgd_workers, find, plan_document, plan_quantization
from .render import NAMESPACE, RELEASE_NAME, ChartRenderError, parse_manifests, render_manifests
from .values import ValuesError, deep_merge
from .yaml_text import load_yaml


def plan(values_files=(), values: dict | None = None, name: str = RELEASE_NAME, namespace: str = NAMESPACE,
         predicted: bool = False) -> str:
    """The plan of one release: each part a function of the rendered objects (the plan document among them).

    predicted: a prediction follows (--predict); the warnings leave their table-read figures to it."""
    objects = parse_manifests(render_manifests(values_files, values, name=name, namespace=namespace))
    lines = runtime_lines(objects)
    lines += engine_key_lines(objects)
    lines += model_source_lines(objects)
    lines += exposure_lines(objects, namespace)
    lines += scaling_lines(objects)
    lines += monitoring_lines(objects)
    lines += benchmark_lines(objects, name, namespace)
    lines += warning_lines(objects, predicted)
    # One line each: a control character a value brought in (a line feed among them) is shown escaped, so no value
    # can hide or forge a line, such as a WARNING.
    return "\n".join(escape_controls(line) for line in lines)


def runtime_lines(objects: list[dict]) -> list[str]:
    """The serving pods: trtllm-serve's Deployment, or the DynamoGraphDeployment's workers."""
    quantization = plan_quantization(objects)
    deployments = [o for o in objects if o["kind"] == "Deployment"
                   and o["metadata"]["labels"].get("app.kubernetes.io/component") == "trtllm-serve"]
    return (trtllm_serve_lines(objects, deployments[0], quantization) if deployments
            else dynamo_lines(objects, quantization))


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
        f"    engine ({engine_file}): " + json.dumps(load_yaml(engine["data"][engine_file]), sort_keys=True),
    ]


# The worker variables of Dynamo 1.7's backend admission gate (dynamo.admissionGate), per attention-DP rank.
ADMISSION_GATE_PREFIX = "DYN_BACKEND_ADMISSION_"


def dynamo_lines(objects: list[dict], quantization: dict[str, str]) -> list[str]:
    """The Dynamo runtime: the DynamoGraphDeployment's worker roles, their engine YAMLs and admission gates."""
    dgd = find(objects, "DynamoGraphDeployment")
    engine = find(objects, "ConfigMap", f"{dgd['metadata']['name']}-engine")["data"]
    admits = {role["component"]: role["gateAdmitsPerReplica"] for role in plan_document(objects)["roles"]}
    lines = [f"DynamoGraphDeployment {dgd['metadata']['name']} ({dgd['apiVersion']}), "
             f"{dgd['metadata']['annotations']['gpt-oss/total-gpus']} GPUs in total"]
    for name, worker in dgd_workers(dgd).items():
        selector = ", ".join(f"{k}={v}" for k, v in worker["pod_spec"].get("nodeSelector", {}).items())
        same_node = " (all workers on one node)" if "podAffinity" in worker["pod_spec"].get("affinity", {}) else ""
        engine_file = worker["args"][worker["args"].index("--extra-engine-args") + 1].rsplit("/", 1)[-1]
        lines += [
            f"  {name} [{worker['type']}]: {worker['replicas']} pod(s) x {worker['gpus']} GPU(s) on nodes {selector}{same_node}",
            f"    image {worker['main']['image']}, quantization {quantization[name]}",
            f"    engine ({engine_file}): " + json.dumps(load_yaml(engine[engine_file]), sort_keys=True),
        ]
        gate = [f"{e['name'].removeprefix(ADMISSION_GATE_PREFIX)}={e['value']}" for e in worker["main"].get("env", [])
                if e["name"].startswith(ADMISSION_GATE_PREFIX)]
        if gate:
            bound = (f"a pod takes {admits[name]} requests, then answers HTTP 529" if admits[name]
                     else "no engine request limit: no count of requests bounds a pod")
            lines.append(f"    admission gate ({ADMISSION_GATE_PREFIX}*, per attention-DP rank): {', '.join(gate)}; {bound}")
    return lines


def engine_key_lines(objects: list[dict]) -> list[str]:
    """Which TensorRT-LLM release's key list checked the engine YAML, as the plan document says."""
    return [f"  Engine YAML: {plan_document(objects)['engineKeys']['summary']}"]


# Model sources (modelCache.source): read from the rendered objects only, without the test helpers.
def _model_pods(objects: list[dict]) -> dict[str, dict]:
    """{where: pod spec} of every pod that mounts the model-cache volume (hooks left out)."""
    found = {}
    for obj in objects:
        name, kind = obj["metadata"]["name"], obj["kind"]
        if "helm.sh/hook" in (obj["metadata"].get("annotations") or {}):
            continue
        if kind in ("Job", "Deployment"):
            found[f"{kind} {name}"] = obj["spec"]["template"]["spec"]
        elif kind == "DynamoGraphDeployment":
            for component in obj["spec"]["components"]:
                found[f"{name}/{component['name']}"] = component["podTemplate"]["spec"]
    return {where: spec for where, spec in found.items()
            if any(v["name"] == "model-cache" for v in spec.get("volumes", []))}


def model_source_lines(objects: list[dict]) -> list[str]:
    """Where the weights come from, how every copy is checked before it is served, and the disk each pod needs."""
    pods = _model_pods(objects)
    volumes = {where: next(v for v in spec["volumes"] if v["name"] == "model-cache") for where, spec in pods.items()}
    jobs = [o for o in objects if o["kind"] == "Job"
            and o["metadata"]["labels"].get("app.kubernetes.io/component") == "model-download"]
    job_env = {e["name"]: e.get("value", "") for e in jobs[0]["spec"]["template"]["spec"]["containers"][0]["env"]} \
        if jobs else {}
    images = {v["image"]["reference"] for v in volumes.values() if "image" in v}
    check = next((c for spec in pods.values() for c in spec.get("initContainers", []) if c["name"] == "check-model"),
                 None)
    env = job_env or {e["name"]: e.get("value", "") for e in (check or {}).get("env", [])}
    model = f"{env.get('MODEL_ID', '?')}@{env.get('MODEL_REVISION', '?')}"
    pinned = env.get("MANIFEST_SHA256", "")
    source = job_env.get("SOURCE") or ("oci" if images else "?")
    origin = {
        "huggingface": f"the Hugging Face Hub at {job_env.get('HF_ENDPOINT', 'https://huggingface.co')}",
        "s3": f"s3://{job_env.get('S3_BUCKET')}/{job_env.get('S3_PREFIX', '')} at {job_env.get('S3_ENDPOINT') or 'AWS'}",
        "oci": f"the OCI image {job_env.get('OCI_REPOSITORY')}@{job_env.get('OCI_DIGEST')}" if job_env
        else f"the OCI image {', '.join(sorted(images))}",
        "pvc": f"the copy already on the claim {job_env.get('CLAIM_NAME')}",
    }.get(source, "an unknown source")
    lines = [f"  Model {model} ({source}): from {origin}"]
    if "HTTPS_PROXY" in job_env or "CA_BUNDLE_FILE" in job_env:
        lines[-1] += (f", through {job_env.get('HTTPS_PROXY', 'no proxy')}"
                      + (f", trusting {job_env['CA_BUNDLE_FILE']}" if "CA_BUNDLE_FILE" in job_env else ""))
    manifest = f"manifest sha256 {pinned}" if pinned else ""
    if images:
        lines.append(f"    checked: check-model init containers check every file against {manifest} before "
                     f"the containers of {', '.join(sorted(w for w in pods if '/' in w or w.startswith('Deployment')))} start")
        lines.append("    disk: each node running them holds the image in its container runtime's image store; no PVC")
    else:
        against = " and ".join(x for x in ("the Hub's sizes and hashes" if source == "huggingface" else "", manifest) if x)
        job = f"Job {jobs[0]['metadata']['name']}" if jobs else "no Job (modelCache.download.enabled=false)"
        lines.append(f"    checked: {job} checks every file against {against}, then writes the ready marker the "
                     "pods' check-model init containers wait for")
        claims = sorted({v["persistentVolumeClaim"]["claimName"] for v in volumes.values()
                         if "persistentVolumeClaim" in v})
        for claim in claims:
            pvc = next((o for o in objects if o["kind"] == "PersistentVolumeClaim" and o["metadata"]["name"] == claim), None)
            size = (f"{pvc['spec']['resources']['requests']['storage']} {', '.join(pvc['spec']['accessModes'])}, "
                    "kept on uninstall") if pvc else "an existing claim"
            lines.append(f"    disk: PVC {claim} ({size}) shared by {len(pods)} pod template(s); pods need no local "
                         "disk for the model")
    offline = [c for spec in pods.values() for c in spec["containers"]
               if any(e["name"] == "HF_HUB_OFFLINE" and e.get("value") == "1" for e in c.get("env") or [])]
    if offline:
        lines.append("    the servers start offline (HF_HUB_OFFLINE=1): they never reach the Hub")
    return lines


# Exposure, disruption budgets and routing.
def exposure_lines(objects: list[dict], namespace: str = NAMESPACE) -> list[str]:
    """How clients reach the release, which PodDisruptionBudgets guard which pods, and how requests are routed."""
    lines = []
    for ingress in (o for o in objects if o["kind"] == "Ingress"):
        tls = ingress["spec"].get("tls") or []
        for rule in ingress["spec"]["rules"]:
            # A TLS entry without hosts covers every host of the Ingress.
            scheme = "https" if any(rule.get("host") in (t.get("hosts") or [rule.get("host")]) for t in tls) else "http"
            for path in rule["http"]["paths"]:
                service = path["backend"]["service"]
                lines.append(f"  Reach: Ingress {ingress['metadata']['name']} {scheme}://{rule['host']}{path['path']} "
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
        lines.append(f"  Reach: kubectl port-forward -n {namespace} svc/{name} 8000:8000 (no Ingress or HTTPRoute)")
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
            identity = plan_document(objects).get("planner") or {}
            if identity:
                lines.append(f"    runs as ServiceAccount {identity['account']} (the operator sets it on every planner pod of "
                             f"the namespace), with the operator's grant, which the chart cannot narrow: "
                             f"{identity['operatorGrant']}" + (f"; and the chart's Role {identity['role']} (planner.rbac.create)"
                                                               if identity["role"] else ""))
    return lines


def benchmark_lines(objects: list[dict], name: str = RELEASE_NAME, namespace: str = NAMESPACE) -> list[str]:
    """The AIPerf benchmark Job: its numbers, the command that runs it and its command line."""
    jobs = [o for o in objects if o["kind"] == "Job" and o["metadata"]["name"].endswith("-benchmark")]
    if not jobs:
        return []
    args = jobs[0]["spec"]["template"]["spec"]["containers"][0]["args"]
    annotations = jobs[0]["metadata"]["annotations"]
    return [f"  Benchmark ({annotations['gpt-oss/benchmark-gpus']} GPUs counted): concurrency "
            f"{annotations['gpt-oss/benchmark-concurrency']}, {annotations['gpt-oss/benchmark-request-count']} "
            f"requests; runs only with `helm test {name} -n {namespace} --filter name={jobs[0]['metadata']['name']}`",
            "    " + " ".join(args)]


# The chart's prefill-bound warning reads per-GPU tables; --predict models the rendered engines. One output states
# one set of figures: with a prediction, the warning keeps its verdict and reason and leaves the figures to it.
PREFILL_BOUND = "prefill-bound: "
PREDICTED_PREFILL_BOUND = ("prefill-bound by the chart's per-GPU tables: the prediction below models the rendered "
                           "engines, and its prefill and decode requests/s stand for the tables' figures")


def warning_lines(objects: list[dict], predicted: bool = False) -> list[str]:
    """The plan document's sizing warnings (the chart's gpt-oss.warnings, which NOTES.txt lists too), one line each;
    predicted: the prefill-bound one without its table-read figures (the prediction follows)."""
    warnings = plan_document(objects)["warnings"]
    if predicted:
        warnings = [PREDICTED_PREFILL_BOUND + (f"; expected: {w.split('; expected: ', 1)[1]}" if "; expected: " in w else "")
                    if w.startswith(PREFILL_BOUND) else w for w in warnings]
    return [f"  WARNING: {w}" for w in warnings] or ["  No sizing warnings."]


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
        rules = [r for group in rule["spec"]["groups"] for r in group["rules"]]
        alerts = [f"{r['alert']} ({r['labels']['severity']}, for {r['for']})" for r in rules if "alert" in r]
        records = sorted({r["record"] for r in rules if "record" in r})
        lines.append(f"  Alerts ({rule['metadata']['name']}): {', '.join(alerts) or 'none'}"
                     + (f"; recording rules: {', '.join(records)}" if records else ""))
    return lines


def main(argv=None) -> int:
    parser = HelmLikeParser(description=__doc__.splitlines()[0])
    add_values_options(parser)
    parser.add_argument("--api-version", help="dynamo.apiVersion to render (runtime dynamo), after every --set")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--predict", action="store_true",
                        help="add aiconfigurator's prediction, speed of light and best configuration "
                             "(requirements-predict.txt)")
    output.add_argument("--manifests", action="store_true",
                        help="print the rendered manifests as `helm template` does, instead of the plan")
    from .search import add_search_options
    add_search_options(parser)
    try:
        args = parser.parse_intermixed_args(argv)
        if args.search:
            from .search import run
            return run(args, argv)
        name, namespace, values = release_and_values(args)
        if args.api_version:
            values = deep_merge(values, {"dynamo": {"apiVersion": args.api_version}})
    except (UsageError, ValuesError) as error:
        return refuse(one_line(error), 2)
    try:
        if args.manifests:
            write(escape_controls(template_output(render_manifests([], values, name=name, namespace=namespace)), "\t\n"))
            return 0
        write(plan([], values, name=name, namespace=namespace, predicted=args.predict) + "\n")
        if args.predict:
            from .predict import PredictionError, format_prediction, predict
            try:
                write(escape_controls(format_prediction(predict([], values, name=name, namespace=namespace)), "\n") + "\n")
            except PredictionError as error:
                return refuse(one_line(error), 2)
    except ChartRenderError as error:
        return refuse(with_set_form_hint(str(error)), 1)
    return 0
