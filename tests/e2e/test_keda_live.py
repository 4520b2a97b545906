"""KEDA reads the chart's ScaledObjects, makes their HPAs, and scales what they target under real traffic.

One run of tests/e2e/test_monitoring_live.py's two releases, every role scaled by KEDA (agg: frontend and worker;
disagg-k8s: frontend, prefill and decode), on the chart's default Dynamo line and Prometheus 3, with the operator's
Prometheus configuration (tests/e2e/prometheus.py); beside them values/trtllm-serve-low-latency.yaml's release: its
Deployment and ScaledObject in the control plane, and the node images' trtllm-serve stand-in (ci/cluster/stand_in.py)
as its pod, serving trtllm-serve's gauges at /prometheus/metrics, scraped through the chart's PodMonitor. The
rendered ScaledObjects go into the control plane unchanged (their serverAddress is the chart's value
`autoscaling.prometheusAddress`, set to where the chart's Prometheus answers), each Dynamo one beside the
DynamoGraphDeploymentScalingAdapter it targets, made as the Dynamo operator makes one (no Dynamo operator runs here).
KEDA v2.21 (ci/cluster/go/keda: its operator and its metrics server) runs in the stack's network namespace, where it queries
that Prometheus; it reaches the API server, and the API server reaches its metrics server (registered as the
v1beta1.external.metrics.k8s.io APIService), through bridges (tests/e2e/bridge.py). kube-controller-manager's HPA
controller reads the metric through the API server and scales the adapters and the Deployment.

While the probe sends bursts (to the Dynamo frontends and to trtllm-serve), a watcher reads every HPA KEDA made, each
target's replicas and what the external metrics API answers, until every HPA has asked for more replicas and every
target got them (or the probe's bounded load ends). Serial: the cluster has one external metrics APIService, which
every HPA reads (ci/test-tiers.sh runs serial tests on a control plane of their own).
"""
from __future__ import annotations

import copy
import json
import shutil
import ssl
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tests.helpers import controllers
from tests.e2e import conftest as e2e
from tests.e2e import plan as e2e_plan
from tests.e2e import prometheus as prom
from tests.e2e.bridge import Bridge
from tests.e2e.test_monitoring_live import INTERVAL, PROMETHEUS_PORTS, build, single
from tests.helpers import REPO_ROOT, dgd_components, find, render_chart, skip_for_missing_part
from tests.helpers.schemas import crd_file
from tools.gptoss.yaml_text import load_yaml

pytestmark = [pytest.mark.e2e, pytest.mark.serial]
LINE, RELEASE = "1.7", "3.16"  # the chart's default Dynamo line (its 1.7.0.dev nightly); Prometheus as users run it
TRTLLM_SERVE = "trtllm-serve-low-latency.yaml"
ADAPTER_CRD = "nvidia.com_dynamographdeploymentscalingadapters.yaml"
ADAPTERS = "dynamographdeploymentscalingadapters"
LOAD_TIMEOUT = 240  # seconds of bursts at most; the HPA controller reads its metrics every 15 s
SCALED = "every HPA asked for more replicas and every target has them"
STAND_IN = REPO_ROOT / "ci" / "cluster" / "stand_in.py"  # the trtllm-serve the node images run
# trtllm-serve's engine batches 2 sequences (the rendered --max_batch_size), so a burst of 36 leaves up to 34 waiting;
# its mocker, slowed, finishes about one and a half requests a second here: the queue stays above 10 for about 15 s
# of each burst (an HPA sync is 15 s), and the bursts go on until every target has scaled.
SERVE_REQUESTS, SERVE_SPEEDUP = 36, "0.3"
SERVE_POD = "gpt-oss-trtllm-serve-7d4b9c6f58-e2e00"  # named as the Deployment's pods are, which the query selects
SERVE_QUERY = "trtllm-serve: the ScaledObject's query"
SERVE_SERIES = "trtllm-serve: the gauge's series"


@pytest.fixture(scope="module")
def keda_cluster(monitoring_cluster):
    """KEDA's CRDs from its pinned module, the scaling adapter's (conversion None: no Dynamo operator serves its
    webhook), and KEDA built."""
    for name in ("keda", "keda-adapter"):
        if controllers.binary(controllers.KEDA, name) is None:
            skip_for_missing_part(f"e2e KEDA: {controllers.missing(controllers.KEDA)}")
    try:
        keda_crds = controllers.crds(controllers.KEDA)
    except LookupError as error:
        skip_for_missing_part(f"e2e KEDA: {error}")
    adapter = copy.deepcopy(load_yaml(crd_file(ADAPTER_CRD).read_text()))
    adapter["spec"]["conversion"] = {"strategy": "None"}
    controllers.install_crds(monitoring_cluster.api_client, monitoring_cluster.kubeconfig, [adapter, *keda_crds],
                             "scaling-crds")
    return monitoring_cluster


def scaled_entry(so: dict, namespace: str) -> dict:
    """What the test knows of one rendered ScaledObject."""
    target = so["spec"]["scaleTargetRef"]
    return {"namespace": namespace, "name": so["metadata"]["name"], "target": target["name"], "kind": target["kind"],
            "rendered": so, "min": so["spec"]["minReplicaCount"], "max": so["spec"]["maxReplicaCount"],
            "threshold": float(so["spec"]["triggers"][0]["metadata"]["threshold"])}


def adapter_object(objects: list[dict], name: str, namespace: str) -> dict:
    """The scaling adapter the Dynamo operator makes for the component whose adapter `name` is (<dgd>-<component in
    lower case>), with the status it keeps (replicas, and the selector of the component's pods)."""
    dgd = find(objects, "DynamoGraphDeployment")
    dgd_name = dgd["metadata"]["name"]
    component = next(c for c in dgd_components(dgd) if f"{dgd_name}-{c.lower()}" == name)
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeploymentScalingAdapter",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": 1, "dgdRef": {"name": dgd_name, "serviceName": component}},
            "status": {"replicas": 1, "selector": f"nvidia.com/dynamo-graph-deployment-name={dgd_name},"
                                                  f"nvidia.com/dynamo-component={component}"}}


def trtllm_serve_part(cluster: prom.OperatorRun, python: str, folder: Path) -> dict:
    """trtllm-serve as values/trtllm-serve-low-latency.yaml renders it with autoscaling and the PodMonitor on and a
    batch of 2 sequences, for build(beside=...): the rendered PodMonitor in a namespace of its own; the node images'
    stand-in (ci/cluster/stand_in.py) run with the rendered arguments, each volume mounted as a local folder (the
    model cache holds the e2e tokenizer as the checkpoint; the engine YAML is the rendered ConfigMap's, which turns
    /prometheus/metrics on); one Pod object with the Deployment's pod labels and named port, which that PodMonitor
    selects; the probe's load on it, and the ScaledObject's query, read on the chart's Prometheus."""
    namespace = cluster.namespace(f"llm3-{cluster.run}")
    objects = render_chart([TRTLLM_SERVE], {
        "trtllmServe": {"maxBatchSize": 2, "autoscaling": {
            "enabled": True, "prometheusAddress": f"http://127.0.0.1:{PROMETHEUS_PORTS['chart']}"}},
        "monitoring": {"podMonitor": {"enabled": True, "interval": INTERVAL, "scrapeTimeout": INTERVAL}}},
        namespace=namespace)
    cluster.chart_objects(objects, namespace)
    deployment = find(objects, "Deployment")
    pod_spec = deployment["spec"]["template"]["spec"]
    container = e2e_plan.main_container(pod_spec, "trtllm-serve")
    assert container["command"] == ["trtllm-serve"], container["command"]
    mounts = {m["mountPath"].rstrip("/") + "/": folder / m["name"] for m in container["volumeMounts"]}
    args = [next((str(local / arg[len(mount):]) for mount, local in mounts.items() if arg.startswith(mount)), arg)
            for arg in container["args"]]
    volumes = {v["name"]: v for v in pod_spec["volumes"]}
    for mount in container["volumeMounts"]:
        config_map = volumes[mount["name"]].get("configMap")
        if config_map:  # the engine YAML, the scripts
            for file, text in find(objects, "ConfigMap", config_map["name"])["data"].items():
                (folder / mount["name"]).mkdir(parents=True, exist_ok=True)
                (folder / mount["name"] / file).write_text(text)
    port = next(p["containerPort"] for p in container["ports"] if p["name"] == "http")
    for sub in ("home", "tmp"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    env = {"PATH": f"{Path(python).parent}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
           "HOME": str(folder / "home"), "TMPDIR": str(folder / "tmp"),
           "GPT_OSS_STAND_IN_SPEEDUP_RATIO": SERVE_SPEEDUP}
    pod = prom.stand_in_pod(namespace, SERVE_POD, deployment["spec"]["template"]["metadata"]["labels"], {"http": port})
    return {"namespace": namespace, "objects": objects, "pods": [pod], "targets": 1, "model_paths": [args[0]],
            "services": [{"name": "trtllm-serve", "role": "trtllm-serve", "env": env,
                          "argv": [python, str(STAND_IN), "trtllm-serve", *args]}],
            "frontends": [{"url": f"http://127.0.0.1:{port}", "model": Path(args[0]).name,
                           "requests": SERVE_REQUESTS, "words": 800, "max_tokens": 32}],
            "queries": {SERVE_QUERY: find(objects, "ScaledObject")["spec"]["triggers"][0]["metadata"]["query"],
                        SERVE_SERIES: f'trtllm_num_requests_waiting{{namespace="{namespace}"}}'}}


class Watch(threading.Thread):
    """Registers KEDA's metrics server once it answers, then every 2 s records each ScaledObject's HPA, its target's
    replicas and what the external metrics API answers; writes SCALED to `marker` once all have scaled."""

    def __init__(self, api_client, scaled: list[dict], registration: list[dict], health: str, marker: Path):
        super().__init__(daemon=True)
        from kubernetes import client
        self.api, self.scaled, self.registration, self.health, self.marker = (api_client, scaled, registration,
                                                                              health, marker)
        self.custom, self.core = client.CustomObjectsApi(api_client), client.CoreV1Api(api_client)
        self.hpas, self.registrar = client.AutoscalingV2Api(api_client), client.ApiregistrationV1Api(api_client)
        self.apps = client.AppsV1Api(api_client)
        self.done = threading.Event()
        self.registered_at: float | None = None
        self.samples: list[dict] = []
        self.final: dict = {}
        self.errors: list[str] = []

    def answers(self) -> bool:
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE  # a readiness check only
        try:
            with urllib.request.urlopen(self.health, timeout=3, context=context) as response:
                return response.status == 200
        except OSError:
            return False

    def register(self) -> None:
        service, api_service = self.registration
        self.core.create_namespaced_service(service["metadata"]["namespace"], service)
        try:
            self.registrar.delete_api_service(api_service["metadata"]["name"])
        except Exception as error:  # none left over by an earlier run: the usual case
            if getattr(error, "status", None) != 404:
                raise
        self.registrar.create_api_service(api_service)
        self.registered_at = time.time()

    def unregister(self) -> None:
        service, api_service = self.registration
        for delete in (lambda: self.registrar.delete_api_service(api_service["metadata"]["name"]),
                       lambda: self.core.delete_namespaced_service(service["metadata"]["name"],
                                                                   service["metadata"]["namespace"])):
            try:
                delete()
            except Exception as error:
                if getattr(error, "status", None) != 404:
                    raise

    def external_metric(self, namespace: str, metric: dict) -> float | None:
        selector = ",".join(f"{k}={v}" for k, v in sorted(metric.get("selector", {}).get("matchLabels", {}).items()))
        try:
            response = self.api.call_api(
                f"/apis/external.metrics.k8s.io/v1beta1/namespaces/{namespace}/{metric['name']}", "GET",
                query_params=[("labelSelector", selector)], auth_settings=["BearerToken"], _preload_content=False,
                _request_timeout=10)
        except Exception as error:
            self.errors.append(f"external metric {namespace}/{metric['name']}: {str(error)[:300]}")
            return None
        items = json.loads(response[0].data).get("items") or []
        from kubernetes.utils import parse_quantity
        return float(parse_quantity(items[0]["value"])) if items else None

    def sample(self) -> dict:
        found = {}
        for entry in self.scaled:
            namespace, name = entry["namespace"], entry["name"]
            record: dict = {}
            try:
                hpa = self.api.sanitize_for_serialization(
                    self.hpas.read_namespaced_horizontal_pod_autoscaler(f"keda-hpa-{name}", namespace))
                record["hpa"] = hpa
                record["desired"] = (hpa.get("status") or {}).get("desiredReplicas")
                metric = hpa["spec"]["metrics"][0]["external"]["metric"]
                if self.registered_at:
                    record["metric"] = self.external_metric(namespace, metric)
            except Exception as error:
                if getattr(error, "status", None) != 404:
                    self.errors.append(f"HPA of {namespace}/{name}: {str(error)[:300]}")
            if entry["kind"] == "Deployment":
                target = self.apps.read_namespaced_deployment(entry["target"], namespace).spec.replicas
            else:
                target = self.custom.get_namespaced_custom_object("nvidia.com", "v1alpha1", namespace, ADAPTERS,
                                                                  entry["target"])["spec"]["replicas"]
            record["target_replicas"] = target
            found[f"{namespace}/{name}"] = record
        return found

    def scaled_all(self, found: dict) -> bool:
        return all((found[f"{e['namespace']}/{e['name']}"].get("desired") or 0) > e["min"]
                   and found[f"{e['namespace']}/{e['name']}"]["target_replicas"] > e["min"]
                   for e in self.scaled)

    def run(self) -> None:
        while not self.done.wait(2):
            try:
                if self.registered_at is None and self.answers():
                    self.register()
                found = self.sample()
                self.samples.append({"at": time.time(), "found": {k: {x: y for x, y in v.items() if x != "hpa"}
                                                                  for k, v in found.items()}})
                self.final = found
                if self.scaled_all(found) and not self.marker.exists():
                    self.marker.write_text(SCALED + "\n")
            except Exception as error:  # recorded; the test says what went wrong
                self.errors.append(f"{type(error).__name__}: {str(error)[:500]}")

    def stop(self) -> None:
        """Stop watching, keep each ScaledObject as KEDA left it, and take KEDA's finalizer off it (KEDA no longer
        runs to remove it, and it would hold the namespace's deletion forever)."""
        self.done.set()
        self.join(timeout=30)
        try:
            for entry in self.scaled:
                entry["object"] = self.custom.get_namespaced_custom_object(
                    "keda.sh", "v1alpha1", entry["namespace"], "scaledobjects", entry["name"])
                self.custom.patch_namespaced_custom_object("keda.sh", "v1alpha1", entry["namespace"], "scaledobjects",
                                                           entry["name"], {"metadata": {"finalizers": None}})
        finally:
            self.unregister()


@pytest.fixture(scope="module")
def keda_run(e2e_python, tokenizer_dir, tmp_path_factory, keda_cluster):
    python = e2e.line_python(LINE, e2e_python)  # the line's venv, or a skip (a failure under CI=true)
    if not prom.prometheus_binary(RELEASE):
        skip_for_missing_part(f"e2e KEDA: {prom.missing_binary(RELEASE)}")
    run_dir = tmp_path_factory.mktemp("keda-live")
    tmp_dir = Path(tempfile.mkdtemp(prefix="gpt-oss-keda-"))
    access = keda_cluster.access
    watch = None
    try:
        with prom.OperatorRun(keda_cluster.api_client, keda_cluster.kubeconfig, run_dir / "cluster") as cluster:
            serve_part = {}

            def beside(cluster):
                serve_part.update(trtllm_serve_part(cluster, e2e_python, run_dir / "trtllm-serve"))
                return serve_part

            plan, expected = build(python, tokenizer_dir, run_dir, tmp_dir, RELEASE, cluster, LINE, e2e_python,
                                   beside=beside)
            monitoring = expected["namespaces"]["monitoring"]
            scaled = []
            for release_id, objects in expected["renders"].items():
                namespace = expected["namespaces"][release_id]
                for so in (o for o in objects if o["kind"] == "ScaledObject"):
                    target = so["spec"]["scaleTargetRef"]["name"]
                    cluster.create(adapter_object(objects, target, namespace), namespace)
                    cluster.custom.patch_namespaced_custom_object_status(
                        "nvidia.com", "v1alpha1", namespace, ADAPTERS, target,
                        {"status": adapter_object(objects, target, namespace)["status"]})
                    cluster.create(so, namespace)
                    scaled.append(scaled_entry(so, namespace))
            # trtllm-serve: its rendered Deployment (its own pods wait for the model cache's claim, which is not made
            # here, so none is bound; the stand-in process is its pod) and its ScaledObject.
            serve_namespace = serve_part["namespace"]
            from kubernetes import client
            client.AppsV1Api(keda_cluster.api_client).create_namespaced_deployment(
                serve_namespace, find(serve_part["objects"], "Deployment"))
            so = find(serve_part["objects"], "ScaledObject")
            cluster.create(so, serve_namespace)
            scaled.append(scaled_entry(so, serve_namespace))
            certs = controllers.write_serving_pki(tmp_dir / "keda-certs", [
                f"{controllers.KEDA_SERVICE}.{monitoring}.svc", "localhost", "127.0.0.1"])
            kubeconfig = access.kubeconfig(tmp_dir / "keda-kubeconfig", f"https://127.0.0.1:{prom.API_PORT}")
            env = dict(plan["services"][0]["env"])
            keda = controllers.keda_services(tmp_dir / "keda-certs", kubeconfig, sorted({e["namespace"] for e in scaled}),
                                             monitoring, env)
            adapter_socket = tmp_dir / "keda.sock"
            plan["services"][0] = prom.api_bridge_service(
                python, tmp_dir / "api.sock", env, (f"unix:{adapter_socket}=tcp:{controllers.KEDA_METRICS_SERVER_PORT}",))
            plan["services"] += keda
            marker = run_dir / "keda-scaled.txt"
            spec = json.loads(expected["spec_path"].read_text())
            spec.update(until_log={"path": str(marker), "pattern": SCALED}, load_timeout=LOAD_TIMEOUT)
            expected["spec_path"].write_text(json.dumps(spec, indent=1))
            plan["jobs"][0]["timeout"] = LOAD_TIMEOUT + 240
            with prom.host_api_bridge(tmp_dir / "api.sock", access):
                host_end = Bridge(f"tcp:0=unix:{adapter_socket}")
                try:
                    watch = Watch(keda_cluster.api_client, scaled,
                                  controllers.keda_registration(monitoring, host_end.port, certs["ca"]),
                                  f"https://127.0.0.1:{host_end.port}/healthz", marker)
                    watch.start()
                    run = e2e._run_plan("keda dynamo-1.6", [], plan, python, tokenizer_dir, run_dir)
                finally:
                    if watch is not None:
                        watch.stop()
                        (run_dir / "keda-watch.json").write_text(json.dumps(
                            {"samples": watch.samples, "errors": watch.errors}, indent=1))
                    host_end.close()
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    output = run.job("monitoring-probe").get("output", "")
    last = output.strip().splitlines()[-1] if output.strip() else ""
    if not last.startswith("{") or "error" in json.loads(last):
        pytest.fail(f"the probe recorded nothing usable: {last}\n{run.logs()}", pytrace=False)
    return json.loads(last), scaled, watch, run


def evidence(watch: Watch, run) -> str:
    return (f"watch errors: {watch.errors[-10:]}\nlast sample: {json.dumps(watch.samples[-1:], indent=1)}\n"
            f"{run.logs()}")


class TestKeda:
    def test_should_read_every_scaledobject_the_chart_renders(self, keda_run):
        _, scaled, watch, run = keda_run
        # agg: frontend and worker; disagg-k8s: frontend, prefill and decode; trtllm-serve's server.
        assert sorted(e["name"] for e in scaled) == sorted(["gpt-oss-frontend", "gpt-oss-worker", "gpt-oss-frontend",
                                                            "gpt-oss-prefill", "gpt-oss-decode",
                                                            "gpt-oss-trtllm-serve"])
        for entry in scaled:
            conditions = {c["type"]: c["status"] for c in entry["object"].get("status", {}).get("conditions", [])}
            assert conditions.get("Ready") == "True", (entry["name"], entry["object"].get("status"), evidence(watch, run))
            # KEDA stored the HPA it made, and the target it scales, in the ScaledObject's status.
            assert entry["object"]["status"]["hpaName"] == f"keda-hpa-{entry['name']}", entry["object"]["status"]

    def test_should_make_an_hpa_of_the_scaledobjects_target_range_and_metric(self, keda_run):
        _, scaled, watch, run = keda_run
        for entry in scaled:
            hpa = watch.final[f"{entry['namespace']}/{entry['name']}"].get("hpa")
            assert hpa, (entry["name"], evidence(watch, run))
            # The adapter of the role (Dynamo), or the trtllm-serve Deployment.
            assert hpa["spec"]["scaleTargetRef"] == entry["rendered"]["spec"]["scaleTargetRef"], hpa["spec"]
            assert entry["rendered"]["spec"]["scaleTargetRef"]["kind"] == (
                "Deployment" if entry["name"] == "gpt-oss-trtllm-serve" else "DynamoGraphDeploymentScalingAdapter")
            assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (entry["min"], entry["max"])
            [metric] = hpa["spec"]["metrics"]
            # KEDA's metric for trigger 0 of type prometheus, selected by the ScaledObject's name, its threshold per
            # replica.
            assert metric["type"] == "External" and metric["external"]["metric"] == {
                "name": "s0-prometheus", "selector": {"matchLabels": {"scaledobject.keda.sh/name": entry["name"]}}}
            assert metric["external"]["target"]["type"] == "AverageValue"
            from kubernetes.utils import parse_quantity
            assert float(parse_quantity(metric["external"]["target"]["averageValue"])) == entry["threshold"]

    def test_should_answer_the_charts_query_above_its_threshold_under_load(self, keda_run):
        """What the HPA reads through the API server: KEDA's metrics server, which ran the chart's query."""
        _, scaled, watch, run = keda_run
        for entry in scaled:
            values = [s["found"][f"{entry['namespace']}/{entry['name']}"].get("metric") for s in watch.samples]
            peak = max((v for v in values if v is not None), default=None)
            assert peak is not None and peak > entry["threshold"], (entry["name"], values, evidence(watch, run))

    def test_should_raise_desired_replicas_and_scale_the_target(self, keda_run):
        _, scaled, watch, run = keda_run
        for entry in scaled:
            key = f"{entry['namespace']}/{entry['name']}"
            desired = max((s["found"][key].get("desired") or 0) for s in watch.samples)
            replicas = max(s["found"][key]["target_replicas"] for s in watch.samples)
            # Up to the ScaledObject's maxReplicaCount (2 here): the load is far above one replica's threshold.
            assert desired == entry["max"] and replicas == entry["max"], (entry["name"], desired, replicas,
                                                                           evidence(watch, run))

    def test_should_scale_trtllm_serve_on_its_waiting_gauge(self, keda_run):
        """The stand-in serves trtllm_num_requests_waiting at the chart's path; the operator's configuration from the
        chart's PodMonitor scrapes it into the chart's Prometheus. Idle, the chart's query reads 0; under the burst it
        reads more than the threshold (each reading evaluated at one instant), and the HPA KEDA made for the
        gpt-oss-trtllm-serve Deployment raises desiredReplicas from the minimum to the maximum and the Deployment's
        replicas follow."""
        data, scaled, watch, run = keda_run
        [entry] = [e for e in scaled if e["name"] == "gpt-oss-trtllm-serve"]
        # values.yaml: trtllmServe.autoscaling threshold "10", minReplicas 1, maxReplicas 2.
        assert (entry["threshold"], entry["min"], entry["max"]) == (10.0, 1, 2), entry
        # One series, scraped from the stand-in's pod by the job prometheus-operator made of the chart's PodMonitor.
        [series] = data["idle"][SERVE_SERIES]["chart"]
        assert {k: series["labels"].get(k) for k in ("job", "pod", "model_name")} == {
            "job": f"{entry['namespace']}/gpt-oss-trtllm-serve", "pod": SERVE_POD, "model_name": "gpt-oss-120b"}, series
        assert single(data["idle"][SERVE_QUERY]["chart"]) == 0.0, data["idle"][SERVE_QUERY]
        readings = [single(s["results"][SERVE_QUERY]["chart"]) for s in data["load"]]
        assert max((r for r in readings if r is not None), default=0.0) > 10, (readings, evidence(watch, run))
        key = f"{entry['namespace']}/{entry['name']}"
        desired = [s["found"][key].get("desired") for s in watch.samples]
        replicas = [s["found"][key]["target_replicas"] for s in watch.samples]
        # The Deployment starts at its minimum (1) and ends at its maximum (2), as the HPA asked.
        assert max(d or 0 for d in desired) == 2, (desired, evidence(watch, run))
        assert replicas[0] == 1 and max(replicas) == 2, (replicas, evidence(watch, run))

    def test_should_serve_the_whole_burst(self, keda_run):
        data, _, _, run = keda_run
        requests = data["requests"]
        assert requests["ok"] == requests["sent"] and not requests["errors"], (requests, run.logs())
