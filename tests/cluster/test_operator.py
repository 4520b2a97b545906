"""Every Dynamo target under the real Dynamo operator (1.5.0-dev, ai-dynamo/dynamo main @ 2a6da14c).

The operator is built from the shared source archives and installed by `helm install` of its platform chart
component, running as a pod on the kubelet node (tests/cluster/operator.py, the fixture dynamo_operator).
Each Dynamo overlay of values/ is installed by `helm install`, all at once, each in a namespace of its own enforcing
PodSecurity `restricted`, with its own resources (the API-only GPU nodes of ci/cluster/gpu-node-profiles.json hold every
overlay at once). Then, for each: the operator's webhooks admitted the DGD, and the operator made one
DynamoComponentDeployment, Deployment and Service per component, whose pods ReplicaSets created under `restricted` and
the scheduler bound to nodes of the target's GPU. The pod templates carry what the chart meant (literal values below,
from ../shared/FACTS.md and the chart's defaults) and what the operator adds that the chart relies on.

The pods are bound to API-only nodes and never run; the node tests (tests/cluster/test_node.py) run one target's
pods for real. Runs on the control plane with the node (marker `node`: one process, one node per host).
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ci.cluster import node_images
from tests.helpers import controllers as CONTROLLERS
from tests.cluster import kube
from tests.cluster import operator as OPERATOR
from tests.cluster.conftest import Release, create_namespace, delete_namespace
from tests.helpers import (DYNAMO_OVERLAYS, deep_merge, find, load_chart, load_values, planner_grant_in_docs,
                           skip_for_missing_part)

pytestmark = [pytest.mark.cluster, pytest.mark.node]  # the operator runs as a pod on the kubelet node

# The runtime these installs render: the 1.6 line at 1.6.1, the stand-in's (the default 1.7 line's 1.7.0 is outside
# this operator's window: TestOperatorWindow).
IMAGE = "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.6.1"
MODEL_PATH = "/model-cache/openai/gpt-oss-120b"
SERVED = "openai/gpt-oss-120b"  # FACTS.md: model id / served name
GRACE = 345  # the chart's default: preStopSeconds 15 + maxRequestSeconds 300 + exitSeconds 30
GUIDE_ENV = {"TRTLLM_ENABLE_PDL": "1", "TRT_LLM_DISABLE_LOAD_WEIGHTS_IN_PARALLEL": "True"}  # FACTS.md: worker env
DISAGG_ENV = {"OVERRIDE_QUANT_ALGO": "W4A8_MXFP4_MXFP8", "NCCL_GRAPH_REGISTER": "0", "OMPI_MCA_coll_ucc_enable": "0"}
# Per overlay, per DGD component: (replicas, GPUs per pod, the GPU product its nodes carry, env beyond the guide's,
# --disaggregation-mode or None). FACTS.md's targets; the *-balanced siblings split the same GPUs into 1-GPU workers.
TARGETS = {
    "agg.yaml": {"TRTLLMWorker": (1, 4, "NVIDIA-GB200", {}, None)},
    "disagg-k8s.yaml": {"TRTLLMPrefillWorker": (1, 1, "NVIDIA-GB200", DISAGG_ENV, "prefill"),
                        "TRTLLMDecodeWorker": (1, 4, "NVIDIA-GB200", DISAGG_ENV, "decode")},
    "disagg-k8s-balanced.yaml": {"TRTLLMPrefillWorker": (2, 1, "NVIDIA-GB200", DISAGG_ENV, "prefill"),
                                 "TRTLLMDecodeWorker": (3, 1, "NVIDIA-GB200", DISAGG_ENV, "decode")},
    "8xb200-single-node.yaml": {"TRTLLMPrefillWorker": (1, 4, "NVIDIA-B200", {}, "prefill"),
                                "TRTLLMDecodeWorker": (1, 4, "NVIDIA-B200", {}, "decode")},
    "8xb200-single-node-balanced.yaml": {"TRTLLMWorker": (8, 1, "NVIDIA-B200", {}, None)},
    "2xh100-truss.yaml": {"TRTLLMWorker": (1, 2, "NVIDIA-H100-80GB-HBM3", {}, None)},
}
ROLE_FILES = {"TRTLLMWorker": "worker", "TRTLLMPrefillWorker": "prefill", "TRTLLMDecodeWorker": "decode"}
SAME_NODE = {"8xb200-single-node.yaml", "8xb200-single-node-balanced.yaml"}
POD_SECURITY = {"fsGroup": 1000, "runAsGroup": 1000, "runAsNonRoot": True, "runAsUser": 1000,
                "seccompProfile": {"type": "RuntimeDefault"}}
CONTAINER_SECURITY = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
# What every install here adds to the overlay: the static model-cache volume of the tier (the download Job's pod is
# bound and never runs: API-only nodes), the operator's namespace for the chart's version check, and the release the
# node's runtime stand-in carries (the 1.6 line at 1.6.1: ci/cluster/node_images.py).
OPERATOR_VALUES = deep_merge({"modelCache": kube.KIND_VALUES["modelCache"],
                              "dynamo": {"operator": {"namespace": OPERATOR.NAMESPACE}}},
                             node_images.dynamo_stand_in_values())


def test_should_cover_every_dynamo_overlay():
    assert sorted(TARGETS) == sorted(DYNAMO_OVERLAYS)


@dataclass
class Reconciled:
    """What the operator made of one overlay's release, read once it settled."""
    overlay: str
    namespace: str
    release: Release
    dgd: dict = field(default_factory=dict)
    dcds: dict[str, dict] = field(default_factory=dict)  # by component name
    deployments: dict[str, dict] = field(default_factory=dict)  # by component name
    services: dict[str, dict] = field(default_factory=dict)  # by name
    pods: dict[str, list[dict]] = field(default_factory=dict)  # by component name
    events: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""


def component_of(obj: dict) -> str:
    return obj["metadata"].get("labels", {}).get("nvidia.com/dynamo-component", "")


def read(k8s: kube.Kube, r: Reconciled) -> None:
    name = "gpt-oss"
    r.dgd = kube.read_json(k8s.custom.get_namespaced_custom_object(
        "nvidia.com", "v1beta1", r.namespace, "dynamographdeployments", name, _preload_content=False))
    dcds = kube.read_json(k8s.custom.list_namespaced_custom_object(
        "nvidia.com", "v1beta1", r.namespace, "dynamocomponentdeployments", _preload_content=False))["items"]
    r.dcds = {d["spec"].get("componentName") or component_of(d): d for d in dcds}
    r.deployments = {component_of(d): d for d in map(k8s._dict, k8s.apps.list_namespaced_deployment(r.namespace).items)
                     if component_of(d)}
    r.services = {s["metadata"]["name"]: s for s in map(k8s._dict, k8s.core.list_namespaced_service(r.namespace).items)}
    pods = k8s.pods(r.namespace, "nvidia.com/dynamo-graph-deployment-name=gpt-oss")
    r.pods = {}
    for pod in pods:
        r.pods.setdefault(component_of(pod), []).append(pod)
    r.events = k8s.events(r.namespace)


def settled(r: Reconciled) -> bool:
    """Every component has its Deployment with the replicas the DGD asks for, all its pods bound to a node."""
    components = {c["name"]: c for c in r.dgd.get("spec", {}).get("components", [])}
    if not components or set(r.deployments) != set(components):
        return False
    for name, component in components.items():
        pods = r.pods.get(name, [])
        if len(pods) != component.get("replicas", 1) or not all(p["spec"].get("nodeName") for p in pods):
            return False
    return True


@pytest.fixture(scope="module")
def reconciled(dynamo_operator, cluster_access, k8s, scheduler, controllers) -> dict[str, Reconciled]:
    """Every Dynamo overlay installed at once, each in its own namespace, read once the operator settled it."""
    if not controllers:
        pytest.fail("the operator's Deployments need kube-controller-manager to make pods")
    runs = {}
    for overlay in DYNAMO_OVERLAYS:
        namespace = create_namespace(k8s)
        runs[overlay] = Reconciled(overlay, namespace, Release(cluster_access.kubeconfig, namespace, kube.API_VERSIONS[0]))
    started = time.monotonic()

    def install(r: Reconciled) -> None:
        r.release.helm.install(load_chart(), r.release.name, load_values([r.overlay], OPERATOR_VALUES),
                               namespace=r.namespace, timeout=180, wait="hookOnly")

    # Two waves: the targets with multi-GPU workers first, then those of 1-GPU workers. The scheduler spreads pods over
    # the least allocated nodes, so 1-GPU workers bound first would leave no node with 4 free GPUs for agg's worker.
    waves = [[r for r in runs.values() if max(t[1] for t in TARGETS[r.overlay].values()) > 1],
             [r for r in runs.values() if max(t[1] for t in TARGETS[r.overlay].values()) == 1]]
    waiting = []
    for wave in waves:
        with concurrent.futures.ThreadPoolExecutor(len(wave)) as pool:
            for r, future in [(r, pool.submit(install, r)) for r in wave]:
                try:
                    future.result()
                except Exception as error:
                    r.error = f"helm install: {error}"
        waiting = [r for r in wave if not r.error]
        deadline = time.monotonic() + 180
        while waiting and time.monotonic() < deadline:
            for r in list(waiting):
                read(k8s, r)
                if settled(r):
                    r.seconds = round(time.monotonic() - started, 1)
                    waiting.remove(r)
            time.sleep(2)
        if waiting:
            for later in waves[waves.index(wave) + 1:]:
                for r in later:
                    r.error = "not installed: the wave before it did not settle"
            break
    for r in waiting:
        r.error = (f"not settled within 180 s: deployments {sorted(r.deployments)}, pods "
                   f"{ {c: [p['spec'].get('nodeName') for p in ps] for c, ps in r.pods.items()} }\n"
                   f"{k8s.describe_events(r.namespace)}\n{OPERATOR.status_json(r.dgd)}")
    yield runs
    for r in runs.values():
        r.release.close()
        delete_namespace(k8s, r.namespace)


@pytest.fixture(params=DYNAMO_OVERLAYS, ids=[o.removesuffix(".yaml") for o in DYNAMO_OVERLAYS])
def target(request, reconciled) -> Reconciled:
    r = reconciled[request.param]
    assert not r.error, r.error
    return r


def main_container(pod_spec: dict) -> dict:
    return next(c for c in pod_spec["containers"] if c["name"] == "main")


def env_of(container: dict) -> dict:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env") or []}


class TestAdmittedAndReconciled:
    def test_should_admit_the_dgd_and_stamp_what_the_defaulting_webhook_adds(self, target):
        annotations = target.dgd["metadata"].get("annotations", {})
        assert annotations.get("nvidia.com/workload-provider"), annotations  # the defaulting webhook's stamp
        assert target.dgd["metadata"]["generation"] >= 1

    def test_should_make_one_dcd_deployment_and_service_per_component(self, target):
        components = sorted(c["name"] for c in target.dgd["spec"]["components"])
        assert components == sorted(["Frontend", *TARGETS[target.overlay]])
        assert sorted(target.dcds) == components
        assert sorted(target.deployments) == components
        hash_ = target.dgd["metadata"]["annotations"]["nvidia.com/current-worker-hash-v2"]
        for name, deployment in target.deployments.items():
            expected = f"gpt-oss-{name.lower()}" + ("" if name == "Frontend" else f"-{hash_}")
            assert deployment["metadata"]["name"] == expected, name
        # The frontend Service the chart's clients use: <dgd>-frontend, port 8000 (FACTS.md: service name).
        frontend = target.services["gpt-oss-frontend"]
        assert [(p["port"], p["targetPort"]) for p in frontend["spec"]["ports"]] == [(8000, "http")]

    def test_should_bind_every_worker_to_a_node_of_its_gpu(self, target, nodes):
        by_name = {n["metadata"]["name"]: n for n in nodes}
        used = set()
        for name, (replicas, gpus, product, _, _) in TARGETS[target.overlay].items():
            pods = target.pods[name]
            assert len(pods) == replicas, name
            for pod in pods:
                node = by_name[pod["spec"]["nodeName"]]
                assert node["metadata"]["labels"].get("nvidia.com/gpu.product") == product, pod["spec"]["nodeName"]
                assert kube.pod_gpus(pod) == gpus, name
                used.add(pod["spec"]["nodeName"])
        if target.overlay in SAME_NODE:
            assert len(used) == 1, f"workers.sameNode spread the workers over {sorted(used)}"

    def test_should_create_every_pod_under_restricted_pod_security(self, target, k8s):
        assert k8s.core.read_namespace(target.namespace).metadata.labels["pod-security.kubernetes.io/enforce"] == \
            "restricted"
        refused = [e for e in target.events if e.get("reason") == "FailedCreate"]
        assert not refused, [e.get("message") for e in refused]
        assert sum(map(len, target.pods.values())) == 1 + sum(t[0] for t in TARGETS[target.overlay].values())


class TestPodTemplates:
    """What the chart renders, as the operator's Deployments carry it into the pods."""

    def test_should_carry_the_workers_command_image_env_gpus_and_mounts(self, target):
        for name, (_, gpus, product, extra_env, mode) in TARGETS[target.overlay].items():
            spec = target.deployments[name]["spec"]["template"]["spec"]
            main = main_container(spec)
            assert main["image"] == IMAGE
            assert main["command"] == ["python3", "-m", "dynamo.trtllm"]
            assert main["args"][:10] == ["--model", MODEL_PATH, "--served-model-name", SERVED, "--extra-engine-args",
                                         f"/engine/{ROLE_FILES[name]}.yaml", "--dyn-reasoning-parser", "gpt_oss",
                                         "--dyn-tool-call-parser", "harmony"]
            assert main["args"][10:12] == (["--disaggregation-mode", mode] if mode else [])
            env = env_of(main)
            assert {k: env.get(k) for k in {**GUIDE_ENV, **extra_env}} == {**GUIDE_ENV, **extra_env}, name
            if not extra_env:
                assert "OVERRIDE_QUANT_ALGO" not in env, f"{name}: the checkpoint default runs (FACTS.md)"
            assert env["HF_HUB_OFFLINE"] == "1"
            assert main["resources"]["limits"]["nvidia.com/gpu"] == str(gpus)
            assert main["resources"]["requests"]["nvidia.com/gpu"] == str(gpus)
            mounts = {m["mountPath"]: (m["name"], m.get("readOnly", False)) for m in main["volumeMounts"]}
            assert mounts["/engine"] == ("engine-config", True) and mounts["/model-cache"] == ("model-cache", True)
            volumes = {v["name"]: v for v in spec["volumes"]}
            assert volumes["engine-config"]["configMap"]["name"] == "gpt-oss-engine"
            assert volumes["model-cache"]["persistentVolumeClaim"]["claimName"] == "gpt-oss-model-cache"
            assert spec["nodeSelector"]["nvidia.com/gpu.product"] == product
            assert [c["name"] for c in spec["initContainers"]] == ["check-model"]
            assert spec["terminationGracePeriodSeconds"] == GRACE
            assert spec["securityContext"] == POD_SECURITY and main["securityContext"] == CONTAINER_SECURITY

    def test_should_carry_the_frontends_command_drain_and_grace_period(self, target):
        spec = target.deployments["Frontend"]["spec"]["template"]["spec"]
        main = main_container(spec)
        assert main["image"] == IMAGE
        assert main["command"] == ["python3", "-m", "dynamo.frontend"]
        assert main["args"] == ["--router-mode", "round-robin", "--http-port", "8000"]  # FACTS.md: frontend
        assert main["lifecycle"]["preStop"]["exec"]["command"] == ["/bin/sh", "-c",
                                                                   "touch /tmp/gpt-oss-draining; sleep 15"]
        assert env_of(main)["DYN_HTTP_GRACEFUL_SHUTDOWN_TIMEOUT_SECS"] == "300"
        # The chart's drain-aware probe wins over the operator's /health.
        assert main["readinessProbe"]["exec"]["command"] == ["python3", "/opt/gpt-oss/scripts/readiness_probe.py",
                                                             "/tmp/gpt-oss-draining", "8000", "openai/gpt-oss-120b"]
        assert spec["terminationGracePeriodSeconds"] == GRACE
        assert spec["securityContext"] == POD_SECURITY and main["securityContext"] == CONTAINER_SECURITY

    def test_should_add_the_operators_ports_probes_env_and_labels_the_chart_relies_on(self, target):
        frontend = target.deployments["Frontend"]["spec"]["template"]
        main = main_container(frontend["spec"])
        assert {p["name"]: p["containerPort"] for p in main["ports"]} == {"http": 8000}
        assert main["livenessProbe"]["httpGet"] == {"path": "/live", "port": "http", "scheme": "HTTP"}
        assert frontend["metadata"]["labels"]["nvidia.com/dynamo-graph-deployment-name"] == "gpt-oss"  # FACTS.md
        assert frontend["metadata"]["labels"]["nvidia.com/dynamo-component-type"] == "frontend"
        for name in TARGETS[target.overlay]:
            template = target.deployments[name]["spec"]["template"]
            main = main_container(template["spec"])
            ports = {p["name"]: p["containerPort"] for p in main["ports"]}
            assert ports["system"] == 9090, ports  # the port the workers' metrics and probes use
            assert main["livenessProbe"]["httpGet"]["path"] == "/live"
            assert main["readinessProbe"]["httpGet"] == {"path": "/health", "port": "system", "scheme": "HTTP"}
            env = env_of(main)
            assert (env["DYN_SYSTEM_ENABLED"], env["DYN_SYSTEM_PORT"], env["DYN_DISCOVERY_BACKEND"]) == (
                "true", "9090", "kubernetes")
            labels = template["metadata"]["labels"]
            # the chart's disruption budgets and PodMonitors select on these
            assert labels["nvidia.com/dynamo-component"] == name
            assert labels["nvidia.com/dynamo-graph-deployment-name"] == "gpt-oss"
            shm = [v for v in template["spec"]["volumes"] if v.get("emptyDir", {}).get("medium") == "Memory"]
            assert shm, f"{name}: no memory /dev/shm volume"


# --- D1 and scaling through the operator: an HPA scales the adapter the operator made ----------------------------


def dgd(k8s: kube.Kube, namespace: str) -> dict:
    return kube.read_json(k8s.custom.get_namespaced_custom_object(
        "nvidia.com", "v1beta1", namespace, "dynamographdeployments", "gpt-oss", _preload_content=False))


def component(live: dict, name: str) -> dict:
    return next(c for c in live["spec"]["components"] if c["name"] == name)


def adapter(k8s: kube.Kube, namespace: str, name: str) -> dict | None:
    from kubernetes.client.exceptions import ApiException
    try:
        return kube.read_json(k8s.custom.get_namespaced_custom_object(
            "nvidia.com", "v1alpha1", namespace, "dynamographdeploymentscalingadapters", name,
            _preload_content=False))
    except ApiException as error:
        if kube.is_not_found(error):
            return None
        raise


def worker_pods(k8s: kube.Kube, namespace: str) -> list[dict]:
    return [p for p in k8s.pods(namespace, "nvidia.com/dynamo-component=TRTLLMWorker")
            if not p["metadata"].get("deletionTimestamp")]


# The autoscalers that drive an adapter in this test, each with the HPA that ends up scaling it: the chart's own, or
# the one KEDA makes of the chart's ScaledObject (keda-hpa-<name>); the operator's side is the same for both. KEDA's
# trigger names a Prometheus that does not answer (nothing listens on port 1): the floor needs no metric, and KEDA,
# its query failing, marks the ScaledObject Ready=False (TriggerError) and leaves the count to its HPA.
SCALERS = {"hpa": {"scaler": "hpa"}, "keda": {"scaler": "keda", "prometheusAddress": "http://127.0.0.1:1"}}
SCALER_HPAS = {"hpa": "gpt-oss-worker", "keda": "keda-hpa-gpt-oss-worker"}  # the chart's HPA: <release>-<role key>


def keda_crds() -> list[dict]:
    """KEDA's CRDs from its pinned module, once KEDA is built; a skip (a failure under CI=true) saying what is
    missing."""
    if CONTROLLERS.binary(CONTROLLERS.KEDA, "keda") is None:
        skip_for_missing_part(f"the keda row: {CONTROLLERS.missing(CONTROLLERS.KEDA)}")
    try:
        return CONTROLLERS.crds(CONTROLLERS.KEDA)
    except LookupError as error:
        skip_for_missing_part(f"the keda row: {error}")


@contextlib.contextmanager
def keda_operator(cluster_access, namespace: str, folder: Path, crds: list[dict]):
    """KEDA's operator (ci/cluster/go/keda) as a process on this host, against the plane's API server, watching `namespace`
    only; KEDA's CRDs installed first. No metrics server: nothing here reads a metric (the HPA raises a count below
    its floor without one). Stopped by its pid whatever happens, then KEDA's finalizer taken off any ScaledObject
    left (KEDA no longer runs to remove it, and it would hold the namespace's deletion forever)."""
    from ci.cluster.control_plane import free_port
    CONTROLLERS.install_crds(cluster_access.api_client, cluster_access.kubeconfig, crds, "keda-crds")
    access = CONTROLLERS.Access.of(cluster_access.kubeconfig)
    certs = folder / "certs"  # its gRPC metrics service serves TLS from --cert-dir
    CONTROLLERS.write_serving_pki(certs, ["localhost", "127.0.0.1"])
    env = {"KUBECONFIG": str(access.kubeconfig(folder / "kubeconfig")), "WATCH_NAMESPACE": namespace,
           "POD_NAMESPACE": namespace, "KEDA_CLUSTER_OBJECT_NAMESPACE": namespace}
    process = CONTROLLERS.Process([
        str(CONTROLLERS.binary(CONTROLLERS.KEDA, "keda")), f"--cert-dir={certs}", f"--ca-dir={certs}",
        "--zap-log-level=info", "--zap-encoder=console", f"--metrics-bind-address=127.0.0.1:{free_port()}",
        f"--health-probe-bind-address=127.0.0.1:{free_port()}",
        f"--metrics-service-bind-address=127.0.0.1:{free_port()}"], folder / "keda-operator.log", env)
    try:
        yield process
    finally:
        process.stop()
        from kubernetes import client
        custom = client.CustomObjectsApi(cluster_access.api_client)
        for so in custom.list_namespaced_custom_object("keda.sh", "v1alpha1", namespace, "scaledobjects")["items"]:
            custom.patch_namespaced_custom_object("keda.sh", "v1alpha1", namespace, "scaledobjects",
                                                  so["metadata"]["name"], {"metadata": {"finalizers": None}})


@dataclass
class ScalingRun:
    namespace: str
    scaler: str  # a key of SCALERS
    steps: dict[str, dict] = field(default_factory=dict)  # step -> what was seen after it
    error: str = ""


@pytest.fixture(scope="module", params=sorted(SCALERS))
def scaling(request, dynamo_operator, cluster_access, k8s, controllers, tmp_path_factory) -> ScalingRun:
    """agg with its worker autoscaled: the HPA (the chart's, or KEDA's of the chart's ScaledObject) raises the adapter
    the operator made to its new minimum, the operator scales the component; then autoscaling goes off and on again,
    each one `helm upgrade` (D1)."""
    crds = keda_crds() if request.param == "keda" else []
    namespace = create_namespace(k8s)
    run = ScalingRun(namespace, request.param)
    release = Release(cluster_access.kubeconfig, namespace, kube.API_VERSIONS[0])
    name = "gpt-oss-trtllmworker"  # the adapter the operator makes: <dgd>-<lowercase component>
    hpa_name = SCALER_HPAS[request.param]

    def values(autoscaling: dict | None, replicas: int = 1) -> dict:
        worker = {"replicas": replicas}
        if autoscaling is not None:
            worker["autoscaling"] = {"enabled": True, **SCALERS[request.param], **autoscaling}
        return load_values(["agg.yaml"], deep_merge(OPERATOR_VALUES, {"workers": {"worker": worker}}))

    def upgrade(step: str, vals: dict) -> None:
        result = release.helm.upgrade(load_chart(), release.name, vals, namespace=namespace, timeout=180,
                                      wait="hookOnly")
        run.steps[step] = {"notes": result.get("notes", "")}

    def seen(step: str, replicas: int, with_adapter: bool) -> None:
        def check():
            live = dgd(k8s, namespace)
            found = adapter(k8s, namespace, name)
            pods = worker_pods(k8s, namespace)
            deployment = [d for d in k8s.apps.list_namespaced_deployment(namespace).items
                          if (d.metadata.labels or {}).get("nvidia.com/dynamo-component") == "TRTLLMWorker"]
            ok = (component(live, "TRTLLMWorker").get("replicas") == replicas and (found is not None) == with_adapter
                  and len(pods) == replicas and deployment and deployment[0].spec.replicas == replicas)
            return {"dgd": live, "adapter": found, "pods": len(pods)} if ok else None
        run.steps.setdefault(step, {}).update(kube.wait_for(
            f"{step}: {replicas} worker replicas, adapter {'present' if with_adapter else 'gone'}", check,
            timeout=180, interval=2, explain=lambda: k8s.describe_events(namespace)))

    def hpa(minimum: int, acted: bool) -> dict:
        """The HPA scaling the adapter, once its floor is `minimum` (and, if `acted`, it asked for that many: with no
        metric it asks for nothing until the count is below its floor)."""
        from kubernetes.client.exceptions import ApiException

        def check():
            try:
                found = k8s._dict(client_autoscaling(k8s).read_namespaced_horizontal_pod_autoscaler(
                    hpa_name, namespace))
            except ApiException as error:
                if kube.is_not_found(error):
                    return None
                raise
            return found if (found["spec"]["minReplicas"] == minimum and (
                not acted or (found.get("status") or {}).get("desiredReplicas") == minimum)) else None
        return kube.wait_for(f"the HPA {hpa_name} at minReplicas {minimum}", check, timeout=120, interval=2,
                             explain=lambda: k8s.describe_events(namespace))

    with contextlib.ExitStack() as stack:
        keda = (stack.enter_context(keda_operator(cluster_access, namespace, tmp_path_factory.mktemp("keda"), crds))
                if crds else None)
        try:
            started = time.monotonic()
            release.helm.install(load_chart(), release.name, values({"minReplicas": 1, "maxReplicas": 3}),
                                 namespace=namespace, timeout=180, wait="hookOnly")
            seen("install", 1, True)
            run.steps["install"]["hpa"] = hpa(1, acted=False)
            # The HPA's floor above the adapter's count: the HPA controller scales the adapter (no metric needed for
            # that), the operator's adapter controller writes the DGD's replicas, and its DCD the Deployment's. The
            # floor is patched in the cluster: a `helm upgrade` that moves it past the live count races the HPA (Helm
            # applies the HPA before the DGD, the HPA rescales at once, and the DGD's apply then conflicts with the
            # operator's field manager; docs/operations.md says to run the upgrade again).
            if request.param == "keda":
                # On the ScaledObject: KEDA owns its HPA and watches the HPA's spec, so a patch of the HPA is put
                # back within seconds (keda v2.21.0 controllers/keda: Owns(HPA) with HPASpecChangedPredicate, then
                # updateHPAIfNeeded; seen here: minReplicas 2 back to 1 within 2 s, the adapter raised or not
                # depending on whether the HPA controller synced in between). KEDA copies the ScaledObject's
                # minReplicaCount into its HPA, and keeps it there.
                k8s.custom.patch_namespaced_custom_object("keda.sh", "v1alpha1", namespace, "scaledobjects",
                                                          "gpt-oss-worker", {"spec": {"minReplicaCount": 2}})
            else:
                client_autoscaling(k8s).patch_namespaced_horizontal_pod_autoscaler(
                    hpa_name, namespace, {"spec": {"minReplicas": 2}})
            run.steps["raise-min"] = {}
            seen("raise-min", 2, True)
            run.steps["raise-min"]["hpa"] = hpa(2, acted=True)
            if keda is not None:
                # What KEDA made of a trigger whose Prometheus does not answer, once its scale loop has run (a
                # reconcile, as after the patch above, marks it Ready again until the next loop).
                run.steps["raise-min"]["scaledobject"] = kube.wait_for(
                    "the ScaledObject's Ready condition after a scale loop", lambda: next(
                        (so for so in [kube.read_json(k8s.custom.get_namespaced_custom_object(
                            "keda.sh", "v1alpha1", namespace, "scaledobjects", "gpt-oss-worker",
                            _preload_content=False))]
                         if any(c["type"] == "Ready" and c["status"] == "False"
                                for c in so.get("status", {}).get("conditions", []))), None),
                    timeout=60, interval=2)
            upgrade("off", values(None, replicas=1))  # D1: off, with values asking for 1 replica
            seen("off", 2, False)
            upgrade("on", values({"minReplicas": 1, "maxReplicas": 3}))
            seen("on", 2, True)
            # Off again, then the count the values ask for: Helm's server-side apply conflicts with the operator's
            # field manager, and `helm upgrade --force-conflicts` (the CLI, Helm 4) takes the field over
            # (docs/operations.md).
            upgrade("off-again", values(None, replicas=1))
            seen("off-again", 2, False)
            try:
                upgrade("conflict", values(None, replicas=3))
            except Exception as error:
                run.steps["conflict"] = {"error": str(error)}
            run.steps["forced"] = {"cli": helm_cli_upgrade(cluster_access.kubeconfig, namespace,
                                                           values(None, replicas=3), "--force-conflicts")}
            seen("forced", 3, False)
            run.steps["seconds"] = {"total": round(time.monotonic() - started, 1)}
        except Exception as error:
            run.error = f"after {list(run.steps)}: {type(error).__name__}: {error}" + (
                f"\n{keda.tail()}" if keda is not None else "")
        yield run
        release.close()
    delete_namespace(k8s, namespace)


def helm_cli_upgrade(kubeconfig, namespace: str, values: dict, *flags: str) -> dict:
    """`helm upgrade` of the chart with the helm CLI the tiers build (python -m ci.cluster go-parts, part helm): what the SDK does
    not offer (--force-conflicts). Returns the exit code and output."""
    import json as json_
    import subprocess
    import tempfile
    from ci.cluster import go_parts
    from tests.helpers import CHART_DIR, skip_for_missing_part
    folder = go_parts.built("helm")
    if folder is None:
        skip_for_missing_part("the helm CLI is not built: python -m ci.cluster go-parts build helm")
    with tempfile.NamedTemporaryFile("w", suffix=".json") as file:
        json_.dump(values, file)
        file.flush()
        done = subprocess.run([str(folder / "helm"), "upgrade", "gpt-oss", str(CHART_DIR), "-n", namespace, "-f",
                               file.name, "--kubeconfig", str(kubeconfig), *flags], capture_output=True, text=True,
                              timeout=180)
    return {"code": done.returncode, "output": (done.stdout + done.stderr)[-3000:]}


def client_autoscaling(k8s: kube.Kube):
    from kubernetes import client
    return client.AutoscalingV2Api(k8s.api_client)


class TestScalingThroughTheOperator:
    def test_should_scale_the_component_through_the_adapter_the_hpa_scales(self, scaling):
        assert not scaling.error, scaling.error
        raised = scaling.steps["raise-min"]
        assert raised["adapter"]["spec"]["replicas"] == 2 and raised["pods"] == 2
        hpa = raised["hpa"]
        assert hpa["spec"]["scaleTargetRef"]["kind"] == "DynamoGraphDeploymentScalingAdapter"
        assert hpa["status"]["desiredReplicas"] == 2, hpa["status"]
        if scaling.scaler == "keda":
            # KEDA made the HPA and scaled nothing itself: its trigger's Prometheus does not answer and the
            # ScaledObject has no fallback, so its scale loop marks it not Ready (TriggerError) and leaves the count to
            # the HPA, which the floor drives without a metric.
            so = raised["scaledobject"]
            assert so["status"]["hpaName"] == "keda-hpa-gpt-oss-worker", so["status"]
            conditions = {c["type"]: c for c in so["status"]["conditions"]}
            ready = conditions["Ready"]
            assert (ready["status"], ready["reason"]) == ("False", "TriggerError"), conditions
            assert conditions["Active"]["status"] == "False", conditions

    def test_should_make_the_hpa_of_the_charts_range_on_the_adapter(self, scaling):
        """The chart's HPA, or the one KEDA made of the chart's ScaledObject: the values' range, the operator's
        adapter as its target."""
        assert not scaling.error, scaling.error
        hpa = scaling.steps["install"]["hpa"]
        assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (1, 3), hpa["spec"]
        assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "nvidia.com/v1alpha1",
                                                 "kind": "DynamoGraphDeploymentScalingAdapter",
                                                 "name": "gpt-oss-trtllmworker"}, hpa["spec"]

    def test_should_turn_autoscaling_off_in_one_upgrade_keeping_the_live_count(self, scaling):
        """D1: the upgrade succeeds (no field-manager conflict, no webhook refusal), the operator drops the adapter,
        and the count the adapter last set stays (the values asked for 1); NOTES says so and how to change it."""
        assert not scaling.error, scaling.error
        off = scaling.steps["off"]
        assert component(off["dgd"], "TRTLLMWorker")["replicas"] == 2
        assert "scalingAdapter" not in component(off["dgd"], "TRTLLMWorker")
        assert ("workers.worker: scaling turned off while its scaling adapter still owns the count, so this upgrade "
                "keeps the live 2 replicas") in off["notes"], off["notes"]

    def test_should_turn_autoscaling_on_again_in_one_upgrade(self, scaling):
        assert not scaling.error, scaling.error
        on = scaling.steps["on"]
        assert on["adapter"]["spec"]["replicas"] == 2 and component(on["dgd"], "TRTLLMWorker")["replicas"] == 2

    def test_should_take_the_count_over_with_force_conflicts_as_notes_say(self, scaling):
        assert not scaling.error, scaling.error
        assert "conflict" in scaling.steps["conflict"].get("error", ""), scaling.steps["conflict"]
        assert scaling.steps["forced"]["cli"]["code"] == 0, scaling.steps["forced"]["cli"]["output"]
        assert component(scaling.steps["forced"]["dgd"], "TRTLLMWorker")["replicas"] == 3


# --- D3 on the real operator: an engine-only change makes a new worker generation ---------------------------------


@pytest.fixture(scope="module")
def engine_change(dynamo_operator, cluster_access, k8s, controllers) -> dict:
    """disagg-k8s installed, then upgraded with a change to the decode role's engine YAML alone."""
    namespace = create_namespace(k8s)
    release = Release(cluster_access.kubeconfig, namespace, kube.API_VERSIONS[0])
    seen: dict = {}

    def generation() -> dict:
        live = dgd(k8s, namespace)
        deployments = {d.metadata.name: k8s._dict(d) for d in k8s.apps.list_namespaced_deployment(namespace).items}
        return {"hash": live["metadata"].get("annotations", {}).get("nvidia.com/current-worker-hash-v2"),
                "dgd": live, "deployments": deployments}

    try:
        release.helm.install(load_chart(), release.name, load_values(["disagg-k8s.yaml"], OPERATOR_VALUES),
                             namespace=namespace, timeout=180, wait="hookOnly")
        seen["before"] = kube.wait_for("the first worker generation", lambda: (lambda g: g if g["hash"] and len(
            g["deployments"]) == 3 else None)(generation()), timeout=120)
        changed = deep_merge(OPERATOR_VALUES, {"workers": {"decode": {"maxBatchSize": 1024}}})
        release.helm.upgrade(load_chart(), release.name, load_values(["disagg-k8s.yaml"], changed), namespace=namespace,
                             timeout=180, wait="hookOnly")
        seen["after"] = kube.wait_for("a second worker generation's Deployments", lambda: (
            lambda g: g if len(g["deployments"]) == 5 else None)(generation()), timeout=120,
            explain=lambda: str(sorted(generation()["deployments"])))
    except Exception as error:
        seen["error"] = f"{type(error).__name__}: {error}"
    yield seen
    release.close()
    delete_namespace(k8s, namespace)


class TestEngineOnlyChange:
    def test_should_start_a_new_worker_generation_for_a_change_to_one_roles_engine_yaml(self, engine_change):
        """D3: the decode role's engine YAML alone changed; its pod template's checksum annotation changed the DGD,
        so the operator rolls the workers. It rolls both roles (one worker hash covers every worker: docs/operations.md),
        while only decode's template changed."""
        assert "error" not in engine_change, engine_change.get("error")
        before, after = engine_change["before"], engine_change["after"]
        old = before["hash"]
        new = {d["metadata"]["labels"].get("nvidia.com/dynamo-worker-hash") for d in after["deployments"].values()} - {
            None, old}
        assert len(new) == 1, sorted(after["deployments"])
        new_hash = new.pop()
        for role in ("prefill", "decode"):
            assert f"gpt-oss-trtllm{role}worker-{new_hash}" in after["deployments"], sorted(after["deployments"])

        def sha(generation: dict, role: str, hash_: str) -> str:
            deployment = generation["deployments"][f"gpt-oss-trtllm{role}worker-{hash_}"]
            return deployment["spec"]["template"]["metadata"]["annotations"]["gpt-oss/engine-config-sha256"]
        assert sha(after, "decode", new_hash) != sha(before, "decode", old)
        assert sha(after, "prefill", new_hash) == sha(before, "prefill", old)


class TestOperatorWindow:
    @pytest.mark.parametrize("line,runtime", [("1.2", "1.2.1"), ("1.7", "1.7.0")])
    def test_should_refuse_a_line_outside_this_operator_naming_it(self, dynamo_operator, cluster_access, k8s, line,
                                                                  runtime):
        """The operator admits a 1.2-line DGD (its runtime 1.2.1 is three minors behind it), and a 1.7-line one (one
        minor past its window); the chart reads the operator's version from its Deployment and refuses both, naming
        the line that fits."""
        namespace = create_namespace(k8s)
        release = Release(cluster_access.kubeconfig, namespace, kube.API_VERSIONS[0])
        without_line = {key: value for key, value in OPERATOR_VALUES.items() if key != "dynamo"}
        try:
            with pytest.raises(Exception) as refused:
                release.helm.install(load_chart(), release.name, load_values(["agg.yaml"], deep_merge(
                    without_line, {"dynamo": {"releaseLine": line, "operator": {"namespace": OPERATOR.NAMESPACE}}})),
                    namespace=namespace, timeout=60, wait="hookOnly")
        finally:
            release.close()
            delete_namespace(k8s, namespace)
        assert dynamo_operator.version == "1.5.0"
        assert ("the Dynamo operator in the cluster is 1.5.0 (Deployment dynamo-system/"
                "dynamo-operator-controller-manager), and an operator supports runtimes from two minors before its own "
                f"to one after it (1.3 to 1.6 here), but this release renders the runtime {runtime} "
                f"(dynamo.releaseLine={line}); allowed: dynamo.releaseLine=1.6") in str(refused.value)


# What the planner may do, as docs/security.md ("The planner's account") states it row by row: (API group, resource,
# verbs, which objects, granted by). The operator's rows: its platform chart's planner ClusterRole, which it binds to
# planner-serviceaccount in the DGD's namespace; the chart's: Role gpt-oss-planner (planner.rbac.create).
PLANNER_GRANT = [
    ("nvidia.com", "dynamographdeployments", ("get", "list", "create", "update", "patch"), "every", "the operator"),
    ("nvidia.com", "dynamographdeploymentscalingadapters/scale", ("patch",), "every", "the operator"),
    ("nvidia.com", "dynamographdeploymentscalingadapters/scale", ("get",), "named", "the chart"),
    ("nvidia.com", "dynamographdeploymentscalingadapters", ("get",), "named", "the chart"),
    ("nvidia.com", "dynamoworkermetadatas", ("get", "list", "watch", "create", "update", "patch", "delete"), "every",
     "the operator"),
    ("discovery.k8s.io", "endpointslices", ("get", "list", "watch"), "every", "the operator"),
    ("", "pods", ("list",), "every", "the chart"),
]
# What that account may not do (docs/security.md: "Nothing else"), each asked as it.
PLANNER_DENIED = [
    ("nvidia.com", "dynamographdeployments", "delete", "gpt-oss"),
    ("nvidia.com", "dynamographdeployments", "watch", ""),
    ("nvidia.com", "dynamographdeploymentscalingadapters", "patch", "gpt-oss-trtllmdecodeworker"),
    ("nvidia.com", "dynamographdeploymentscalingadapters/scale", "update", "gpt-oss-trtllmdecodeworker"),
    ("nvidia.com", "dynamocomponentdeployments", "patch", "gpt-oss-frontend"),
    ("", "pods", "get", "gpt-oss-frontend"),
    ("", "pods", "patch", "gpt-oss-frontend"),
    ("", "pods", "create", ""),
    ("", "secrets", "get", "gpt-oss-token"),
    ("", "serviceaccounts", "create", ""),
    ("rbac.authorization.k8s.io", "rolebindings", "create", ""),
]
PLANNER_ADAPTERS = ["gpt-oss-trtllmprefillworker", "gpt-oss-trtllmdecodeworker"]  # disagg-k8s's roles the planner scales


def access_review(k8s: kube.Kube, namespace: str, account: str, group: str, resource: str, verb: str,
                  name: str) -> bool:
    """What the API server answers for `account` of `namespace` (a SubjectAccessReview, as for its token)."""
    from kubernetes import client
    resource, _, subresource = resource.partition("/")
    review = client.V1SubjectAccessReview(spec=client.V1SubjectAccessReviewSpec(
        user=f"system:serviceaccount:{namespace}:{account}",
        groups=["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"],
        resource_attributes=client.V1ResourceAttributes(namespace=namespace, verb=verb, group=group,
                                                        resource=resource, subresource=subresource or None,
                                                        name=name or None)))
    return bool(client.AuthorizationV1Api(k8s.api_client).create_subject_access_review(review).status.allowed)


@pytest.fixture(scope="module")
def planner_release(dynamo_operator, cluster_access, k8s, controllers) -> dict:
    """disagg-k8s with the SLA planner and planner.rbac.create under the real operator: the planner Deployment and pod
    the operator made, its account's bindings, and what the API server answers for that account."""
    if not controllers:
        pytest.fail("the planner pod needs kube-controller-manager to be made from the operator's Deployment")
    namespace = create_namespace(k8s)
    release = Release(cluster_access.kubeconfig, namespace, kube.API_VERSIONS[0])
    seen: dict = {"namespace": namespace}
    try:
        release.helm.install(load_chart(), release.name, load_values(["disagg-k8s.yaml"], deep_merge(
            OPERATOR_VALUES, {"planner": {"enabled": True, "rbac": {"create": True}}})), namespace=namespace,
            timeout=180, wait="hookOnly")
        seen["deployment"] = kube.wait_for("the operator's planner Deployment", lambda: next(
            (k8s._dict(d) for d in k8s.apps.list_namespaced_deployment(namespace).items
             if (d.metadata.labels or {}).get("nvidia.com/dynamo-component") == "Planner"), None), timeout=120,
            explain=lambda: k8s.describe_events(namespace))
        seen["pod"] = kube.wait_for("the planner pod", lambda: next(iter(
            k8s.pods(namespace, "nvidia.com/dynamo-component=Planner")), None), timeout=120,
            explain=lambda: k8s.describe_events(namespace))
        account = seen["pod"]["spec"]["serviceAccountName"]
        bindings = {b.metadata.name: k8s._dict(b) for b in k8s.rbac.list_namespaced_role_binding(namespace).items}
        seen["bindings"] = {name: b for name, b in bindings.items() if any(
            s.get("kind") == "ServiceAccount" and s.get("name") == account for s in b.get("subjects") or [])}
        answers = {}
        for group, resource, verbs, which, _ in PLANNER_GRANT:
            for verb in verbs:
                names = (PLANNER_ADAPTERS[1], "another-release-adapter") if which == "named" else (
                    ("",) if verb in ("list", "watch", "create") else ("another-release",))
                for name in names:
                    answers[(group, resource, verb, name)] = access_review(k8s, namespace, account, group, resource,
                                                                           verb, name)
        for group, resource, verb, name in PLANNER_DENIED:
            answers[(group, resource, verb, name)] = access_review(k8s, namespace, account, group, resource, verb, name)
        seen["answers"] = answers
    except Exception as error:
        seen["error"] = f"{type(error).__name__}: {error}"
    yield seen
    release.close()
    delete_namespace(k8s, namespace)


class TestPlannerUnderTheOperator:
    def test_should_give_the_planner_pod_the_charts_grace_period(self, planner_release):
        """The operator gives a planner component 60 s unless the DGD says otherwise; the chart's grace period wins."""
        assert "error" not in planner_release, planner_release.get("error")
        spec = planner_release["deployment"]["spec"]["template"]["spec"]
        assert spec["terminationGracePeriodSeconds"] == GRACE

    def test_should_run_the_planner_as_the_operators_account_with_the_charts_role_bound_to_it(self, planner_release):
        """The operator sets planner-serviceaccount on the planner pod (the chart sets none) and binds it to its own
        planner ClusterRole; the chart's Role is bound to that same account, so it is what the planner really gets."""
        assert "error" not in planner_release, planner_release.get("error")
        assert planner_release["pod"]["spec"]["serviceAccountName"] == "planner-serviceaccount"
        refs = {name: (b["roleRef"]["kind"], b["roleRef"]["name"]) for name, b in planner_release["bindings"].items()}
        assert refs == {"planner-serviceaccount-binding": ("ClusterRole", "dynamo-operator-planner"),
                        "gpt-oss-planner": ("Role", "gpt-oss-planner")}, refs

    def test_should_state_in_the_docs_what_the_api_server_allows_the_planners_account(self, planner_release):
        """docs/security.md's table is PLANNER_GRANT, and the API server answers each row for the planner pod's real
        account: allowed on every object (another release's DGD too) or on the named adapters only; and nothing of
        PLANNER_DENIED."""
        assert planner_grant_in_docs() == PLANNER_GRANT
        assert "error" not in planner_release, planner_release.get("error")
        answers = planner_release["answers"]
        wrong = {}
        for group, resource, verbs, which, _ in PLANNER_GRANT:
            for verb in verbs:
                if which == "named":
                    expected = {PLANNER_ADAPTERS[1]: True, "another-release-adapter": False}
                else:
                    expected = {"" if verb in ("list", "watch", "create") else "another-release": True}
                for name, allowed in expected.items():
                    if answers[(group, resource, verb, name)] != allowed:
                        wrong[(group, resource, verb, name)] = answers[(group, resource, verb, name)]
        for key in PLANNER_DENIED:
            if answers[key]:
                wrong[key] = True
        assert not wrong, f"the API server answers otherwise than docs/security.md states: {wrong}"
