"""Live-cluster helpers: settings, the Dynamo CRD installer, reads of rendered objects, and waits.

Everything here talks to a real API server through the `kubernetes` client. Nothing waits for a
Running pod or a finished Job: fake GPU nodes have no GPUs (and on kind the download never runs),
so the tier asserts on what the API server and the scheduler decide, i.e. objects and bindings.
"""
from __future__ import annotations

import contextlib
import copy
import fcntl
import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from tools.gptoss.yaml_text import load_yaml

GROUP = "nvidia.com"
DGD_PLURAL = "dynamographdeployments"
DGD_CRD = f"{DGD_PLURAL}.{GROUP}"
DGD_CRD_FILE = f"{GROUP}_{DGD_PLURAL}.yaml"
API_VERSIONS = ("nvidia.com/v1beta1",)
GPU = "nvidia.com/gpu"
GPU_PRESENT = "nvidia.com/gpu.present"
GPU_PRODUCT = "nvidia.com/gpu.product"
ARCH = "kubernetes.io/arch"
# Namespaces this tier creates carry this label, so a storage-version switch may clear their DGDs.
TIER_LABEL = "gpt-oss.test/tier"
# Static volumes for the model cache: the class needs no StorageClass object (static binding).
CACHE_STORAGE_CLASS = "gpt-oss-cluster-test"
CACHE_HOST_DIR = "/var/tmp/gpt-oss-cluster-test"
# Every namespace the tier installs into: the strictest Pod Security Standard, enforced by admission.
POD_SECURITY = {"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"}

# Values every install of this tier adds on top of a target overlay, and why:
KIND_VALUES: dict[str, Any] = {
    "modelCache": {
        # A pre-bound hostPath PV (see model_cache_volume): ReadWriteMany as the chart's default, and not
        # pinned to one node the way a WaitForFirstConsumer local-path volume would pin every worker.
        "storageClassName": CACHE_STORAGE_CLASS,
        "download": {
            # kind nodes have kubelets: never pull the image and start a 65 GB download on a CI runner.
            # Binding (spec.nodeName) happens before any pull, and binding is all the tier asserts.
            "image": {"pullPolicy": "Never"},
            # Small enough for any kind node; the scheduler still has to pick a node without GPUs.
            "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
        },
    },
    # Fake GPU nodes are kind containers with the runner's few CPUs; the GPU requests are what matter. /dev/shm
    # counts against the memory limit, and the chart refuses a limit that cannot hold it (gpt-oss.checkValues.sizes).
    "workers": {"resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
                "sharedMemorySize": "64Mi"},
    "frontend": {"resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}}},
}
# The same for runtime trtllm-serve, which refuses Dynamo-only values (workers, frontend).
KIND_VALUES_TRTLLM_SERVE: dict[str, Any] = {
    "modelCache": KIND_VALUES["modelCache"],
    "trtllmServe": {"resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
                    "sharedMemorySize": "64Mi"},
}


def option(config, name: str, env: str, default: str = "") -> str:
    """A command-line option when tests/conftest.py registers it, else the environment variable."""
    try:
        value = config.getoption(name)
    except ValueError:  # option not registered
        value = None
    if value not in (None, ""):
        return str(value)
    return os.environ.get(env, default)


def kubeconfig_path(config) -> Path:
    """--kubeconfig (registered by pytest-helm-charts), else KUBECONFIG (first entry), else ~/.kube/config."""
    value = option(config, "kubeconfig", "KUBECONFIG")
    if value:
        return Path(value.split(os.pathsep)[0]).expanduser()
    return Path("~/.kube/config").expanduser()


def probe(kubeconfig: Path, timeout: float = 5.0):
    """An ApiClient for the cluster, or the reason none answers (str)."""
    from kubernetes import client, config as kube_config

    if not kubeconfig.is_file():
        return f"no kubeconfig file ({kubeconfig} does not exist; set --kubeconfig or KUBECONFIG)"
    try:
        configuration = client.Configuration()
        kube_config.load_kube_config(config_file=str(kubeconfig), client_configuration=configuration)
        api_client = client.ApiClient(configuration)
        version = client.VersionApi(api_client).get_code(_request_timeout=timeout)
    except Exception as error:  # any failure means "does not answer"; say which
        return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}".strip()
    api_client.server_version = f"{version.major}.{version.minor}"
    return api_client


def component_running(api_client, name: str, fresh_seconds: float = 60.0) -> bool:
    """Whether a control-plane component (kube-scheduler, kube-controller-manager) runs: its leader-election
    Lease in kube-system was renewed lately. Works the same on kind, a real cluster and python -m ci.cluster control-plane."""
    import datetime

    from kubernetes import client
    from kubernetes.client.exceptions import ApiException
    try:
        lease = client.CoordinationV1Api(api_client).read_namespaced_lease(name, "kube-system")
    except ApiException:
        return False
    renewed = lease.spec.renew_time
    if renewed is None:
        return False
    return (datetime.datetime.now(datetime.timezone.utc) - renewed).total_seconds() < fresh_seconds


def read_json(response) -> dict:
    return json.loads(response.data)


@contextlib.contextmanager
def cluster_lock(kubeconfig: Path, what: str):
    """Held by one process at a time per cluster (the kubeconfig's path) and concern: pytest-xdist workers
    share one cluster, and its cluster-wide objects (the DGD CRD) change under a lock."""
    key = hashlib.sha256(f"{Path(kubeconfig).resolve()}:{what}".encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"gpt-oss-{key}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def wait_for(what: str, check: Callable[[], Any], timeout: float, interval: float = 2.0,
              explain: Callable[[], str] | None = None):
    """check() until it returns something truthy; on timeout fail with `what` and an explanation."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            detail = explain() if explain else ""
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}" + (f"\n{detail}" if detail else ""))
        time.sleep(interval)


def is_not_found(error: Exception) -> bool:
    return getattr(error, "status", None) == 404


# --- the DynamoGraphDeployment CRD ------------------------------------------------------------


def rewrite_crd(crd: dict, storage_version: str) -> dict:
    """The CRD as this tier installs it without an operator: `storage_version` stores, conversion None.

    Without the operator the Webhook conversion has no server, so any request that needs a
    conversion fails; with None both versions are served and each object is stored as written.
    """
    crd = copy.deepcopy(crd)
    names = [version["name"] for version in crd["spec"]["versions"]]
    assert storage_version in names, f"{crd['metadata']['name']} has no version {storage_version}: {names}"
    for version in crd["spec"]["versions"]:
        version["served"] = True
        version["storage"] = version["name"] == storage_version
    crd["spec"]["conversion"] = {"strategy": "None"}
    crd["metadata"] = {key: crd["metadata"][key] for key in ("name", "labels", "annotations") if key in crd["metadata"]}
    crd.pop("status", None)
    return crd


def storage_version(crd: dict) -> str:
    return next(version["name"] for version in crd["spec"]["versions"] if version.get("storage"))


def crd_established(crd: dict) -> bool:
    conditions = {c["type"]: c["status"] for c in crd.get("status", {}).get("conditions", [])}
    return conditions.get("Established") == "True" and conditions.get("NamesAccepted") == "True"


@dataclass
class DgdCrd:
    """Puts the DGD CRD in the state a test of one API version needs, or says why it cannot.

    source: a directory with nvidia.com_dynamographdeployments.yaml, or None to rewrite the CRD
    the cluster already has (e.g. from the Dynamo platform chart). operator: the Dynamo operator
    runs, so its conversion webhook is real and the CRD is left exactly as the operator installed it.
    """

    api_client: Any
    source: Path | None
    operator: bool

    def _ext(self):
        from kubernetes import client
        return client.ApiextensionsV1Api(self.api_client)

    def live(self) -> dict | None:
        from kubernetes.client.exceptions import ApiException
        try:
            return read_json(self._ext().read_custom_resource_definition(DGD_CRD, _preload_content=False))
        except ApiException as error:
            if is_not_found(error):
                return None
            raise

    def prepare(self, api_version: str) -> str | None:
        """Make `api_version` usable; returns a skip reason when it cannot be."""
        version = api_version.split("/")[1]
        live = self.live()
        if self.operator:
            if live is None:
                return "the Dynamo operator is enabled but the cluster has no DynamoGraphDeployment CRD"
            served = [v["name"] for v in live["spec"]["versions"] if v.get("served")]
            return None if version in served else f"the operator's CRD does not serve {version} (serves {served})"
        if self.source is not None:
            path = self.source / DGD_CRD_FILE
            if not path.is_file():
                return f"no {DGD_CRD_FILE} in the CRD source {self.source}"
            wanted = rewrite_crd(load_yaml(path.read_text()), version)
        elif live is not None:
            wanted = rewrite_crd(live, version)
        else:
            return ("no DynamoGraphDeployment CRD in the cluster and no CRD source: set --crd-source / "
                    "GPT_OSS_CRD_SOURCE (a folder with the Dynamo CRDs) or --shared-dir, or run ci/cluster/kind-setup.sh")
        if live is not None and storage_version(live) == version and live["spec"].get("conversion", {}).get(
                "strategy") == "None" and self.source is None:
            return None
        self._clear_tier_objects(live, version)
        self._apply(wanted, live)
        return None

    def _clear_tier_objects(self, live: dict | None, version: str) -> None:
        """Objects written under the old storage version would be read back as the new one unconverted. Only a change
        of storage version strands them: otherwise another xdist worker's DGDs stay."""
        if live is None or storage_version(live) == version:
            return
        from kubernetes import client
        custom = client.CustomObjectsApi(self.api_client)
        core = client.CoreV1Api(self.api_client)
        tier = {ns.metadata.name for ns in core.list_namespace(label_selector=TIER_LABEL).items}
        listed = read_json(custom.list_cluster_custom_object(GROUP, storage_version(live), DGD_PLURAL,
                                                             _preload_content=False))["items"]
        foreign = [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in listed
                   if o["metadata"]["namespace"] not in tier]
        assert not foreign, (f"DynamoGraphDeployments outside this tier's namespaces exist ({foreign}); "
                             "refusing to change the CRD's storage version under them: use a dedicated cluster")
        for obj in listed:
            try:
                custom.delete_namespaced_custom_object(GROUP, storage_version(live), obj["metadata"]["namespace"],
                                                       DGD_PLURAL, obj["metadata"]["name"])
            except Exception as error:  # its test's namespace went meanwhile
                if not is_not_found(error):
                    raise

    def _apply(self, wanted: dict, live: dict | None) -> None:
        ext = self._ext()
        if live is None:
            ext.create_custom_resource_definition(wanted, _preload_content=False)
        else:
            wanted["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"]
            ext.replace_custom_resource_definition(DGD_CRD, wanted, _preload_content=False)
        version = storage_version(wanted)
        from kubernetes import client
        custom = client.CustomObjectsApi(self.api_client)

        def ready():
            crd = self.live()
            if not (crd and crd_established(crd) and storage_version(crd) == version):
                return False
            try:  # the API server swaps its handler for the new CRD asynchronously
                custom.list_cluster_custom_object(GROUP, version, DGD_PLURAL, _preload_content=False)
            except Exception:
                return False
            return True

        wait_for(f"CRD {DGD_CRD} with storage version {version} to be served", ready, timeout=60)
        time.sleep(2)  # every API server replica picks the new storage version up, not only the one that answered


# --- objects of a release -----------------------------------------------------------------------


class Kube:
    """Typed reads of the kinds the chart renders, plus nodes, pods and events."""

    def __init__(self, api_client):
        from kubernetes import client
        self.core = client.CoreV1Api(api_client)
        self.batch = client.BatchV1Api(api_client)
        self.apps = client.AppsV1Api(api_client)
        self.networking = client.NetworkingV1Api(api_client)
        self.custom = client.CustomObjectsApi(api_client)
        self.policy = client.PolicyV1Api(api_client)
        self.rbac = client.RbacAuthorizationV1Api(api_client)
        self.api_client = api_client

    def _dict(self, model) -> dict:
        return self.api_client.sanitize_for_serialization(model)

    def get(self, obj: dict, namespace: str) -> dict | None:
        """The live object for a rendered one, as a dict; None when it does not exist."""
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException
        kind, name = obj["kind"], obj["metadata"]["name"]
        readers = {
            "ConfigMap": lambda: self._dict(self.core.read_namespaced_config_map(name, namespace)),
            "PersistentVolumeClaim": lambda: self._dict(
                self.core.read_namespaced_persistent_volume_claim(name, namespace)),
            "Job": lambda: self._dict(self.batch.read_namespaced_job(name, namespace)),
            "Deployment": lambda: self._dict(self.apps.read_namespaced_deployment(name, namespace)),
            "Service": lambda: self._dict(self.core.read_namespaced_service(name, namespace)),
            "NetworkPolicy": lambda: self._dict(self.networking.read_namespaced_network_policy(name, namespace)),
            # Exposure, disruption budgets and routing.
            "PodDisruptionBudget": lambda: self._dict(self.policy.read_namespaced_pod_disruption_budget(name, namespace)),
            "Ingress": lambda: self._dict(self.networking.read_namespaced_ingress(name, namespace)),
            "ServiceAccount": lambda: self._dict(self.core.read_namespaced_service_account(name, namespace)),
            "Role": lambda: self._dict(self.rbac.read_namespaced_role(name, namespace)),
            "RoleBinding": lambda: self._dict(self.rbac.read_namespaced_role_binding(name, namespace)),
            "HorizontalPodAutoscaler": lambda: self._dict(client.AutoscalingV2Api(
                self.api_client).read_namespaced_horizontal_pod_autoscaler(name, namespace)),
            "HTTPRoute": lambda: self.custom.get_namespaced_custom_object(
                "gateway.networking.k8s.io", "v1", namespace, "httproutes", name),
            "InferencePool": lambda: self.custom.get_namespaced_custom_object(
                "inference.networking.k8s.io", "v1", namespace, "inferencepools", name),
            "DynamoGraphDeployment": lambda: read_json(self.custom.get_namespaced_custom_object(
                GROUP, obj["apiVersion"].split("/")[1], namespace, DGD_PLURAL, name, _preload_content=False)),
        }
        assert kind in readers, f"the chart now renders a {kind}: teach tests/cluster/kube.py to read it"
        try:
            return readers[kind]()
        except ApiException as error:
            if is_not_found(error):
                return None
            raise

    def nodes(self) -> list[dict]:
        return [self._dict(node) for node in self.core.list_node().items]

    def pods(self, namespace: str, selector: str) -> list[dict]:
        return [self._dict(p) for p in self.core.list_namespaced_pod(namespace, label_selector=selector).items]

    def events(self, namespace: str, name: str | None = None) -> list[dict]:
        selector = f"involvedObject.name={name}" if name else None
        return [self._dict(e) for e in self.core.list_namespaced_event(namespace, field_selector=selector).items]

    def describe_events(self, namespace: str, name: str | None = None) -> str:
        return "\n".join(f"  {e.get('reason')}: {e['involvedObject']['kind']}/{e['involvedObject']['name']}: "
                         f"{e.get('message', '')}" for e in self.events(namespace, name)[-20:])


def gpus(node: dict) -> int:
    return int(node["status"].get("allocatable", {}).get(GPU, "0"))


def matches_selector(node: dict, selector: dict[str, str]) -> bool:
    labels = node["metadata"].get("labels", {})
    return all(labels.get(key) == value for key, value in selector.items())


def is_schedulable_without_tolerations(node: dict) -> bool:
    taints = node.get("spec", {}).get("taints") or []
    return not node.get("spec", {}).get("unschedulable") and not any(
        t["effect"] in ("NoSchedule", "NoExecute") for t in taints)


def pod_gpus(pod: dict) -> int:
    """GPUs a pod requests: the sum over its app containers' limits (extended resources need limits)."""
    return sum(int((c.get("resources") or {}).get("limits", {}).get(GPU, "0")) for c in pod["spec"]["containers"])


def subset_diff(rendered: Any, live: Any, path: str = "") -> list[str]:
    """Where `live` lacks or changes something `rendered` has (server defaults may add, never drop)."""
    if isinstance(rendered, dict):
        if not isinstance(live, dict):
            return [f"{path or '.'}: {type(live).__name__} instead of a map"]
        problems = []
        for key, value in rendered.items():
            if key not in live:
                problems.append(f"{path}.{key}: dropped (pruned by the schema?)")
            else:
                problems.extend(subset_diff(value, live[key], f"{path}.{key}"))
        return problems
    if isinstance(rendered, list):
        if not isinstance(live, list) or len(live) != len(rendered):
            return [f"{path}: {len(rendered)} items rendered, live has {live!r:.200}"]
        return [p for index, (r, l) in enumerate(zip(rendered, live)) for p in subset_diff(r, l, f"{path}[{index}]")]
    if rendered != live and str(rendered) != str(live):
        return [f"{path}: rendered {rendered!r:.100}, live {live!r:.100}"]
    return []


def comparable(obj: dict) -> dict:
    """The parts of a rendered object the server must keep: everything but status and server metadata."""
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "status", "metadata")}
    body["metadata"] = {k: obj["metadata"][k] for k in ("name", "labels", "annotations") if k in obj["metadata"]}
    return body


def model_cache_volume(namespace: str, claim: str, size: str) -> dict:
    """A hostPath PV reserved for the chart's PVC in `namespace` (claimRef), never deleted with it."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": f"{namespace}-model-cache", "labels": {TIER_LABEL: "cluster"}},
        "spec": {
            "capacity": {"storage": size},
            "accessModes": ["ReadWriteMany", "ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": CACHE_STORAGE_CLASS,
            "claimRef": {"namespace": namespace, "name": claim},
            "hostPath": {"path": f"{CACHE_HOST_DIR}/{namespace}", "type": "DirectoryOrCreate"},
        },
    }
