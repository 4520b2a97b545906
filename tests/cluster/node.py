"""The kubelet node of python -m ci.cluster node, as the node tests (tests/cluster/test_node.py) use it.

python -m ci.cluster control-plane starts the node beside its control plane when a kubelet binary is there; it registers
tainted (ci.cluster.node NODE_TAINT), so the rest of the tier, written for API-only nodes, never lands on it. The
node tests take it over for their module (Takeover): the taint lifted and every API-only node cordoned, so each
pod the chart makes runs on the real node, as on a kind cluster whose GPU workers are fakes.
"""
from __future__ import annotations

import hashlib
import json
import random
import shutil
import string
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ci.cluster import node as NODE
from ci.cluster import node_images as IMAGES
from ci.cluster import processes as PROCESSES
from tests.cluster import kube
from tests.helpers import RELEASE_NAME

# Each model-cache PV of a node test is a `local` volume in a folder here (the kubelet applies fsGroup to it).
VOLUMES = Path("/var/tmp/gpt-oss-node-test")
VOCABULARY = b"fake harmony vocabulary for the node tier\n"
BIG = "model-00001-of-00001.safetensors"


def state_of(kubeconfig: Path) -> Path | None:
    state = kubeconfig.resolve().parent
    return state if (state / "pids.json").is_file() else None


def why_no_node(kubeconfig: Path) -> str | None:
    """None when python -m ci.cluster control-plane started a node beside this kubeconfig with all its images, else why not."""
    state = state_of(kubeconfig)
    if state is None:
        return (f"the cluster at {kubeconfig} was not started by python -m ci.cluster control-plane (no pids.json beside it), "
                "so it has no node of python -m ci.cluster node")
    if (state / "node-absent.txt").exists():
        return "python -m ci.cluster control-plane started no kubelet node: " + (state / "node-absent.txt").read_text().strip()
    summary = state / "node" / "summary.json"
    if not summary.exists():
        return f"no node recorded in {state} (python -m ci.cluster control-plane of this checkout starts one when a kubelet is there)"
    missing = json.loads(summary.read_text()).get("missing_images")
    if missing:
        return f"the node lacks images python -m ci.cluster node-images could not build: {', '.join(missing)}"
    return None


def stand_ins() -> dict[str, str]:
    """Image name -> what the built image really is, for every image the node tests run: the rendered names,
    and each build's own content name (containerd may report either for a container)."""
    found = {}
    for planned in IMAGES.plan(IMAGES.cache_dir()):
        found.update({name: planned.image.stand_in for name in planned.names})
        found[planned.content_ref] = planned.image.stand_in
    return found


@dataclass
class Takeover:
    """The node untainted and the API-only nodes cordoned, for one test module; restore() puts both back."""
    k8s: kube.Kube
    cordoned: list[str] = field(default_factory=list)

    def take(self) -> None:
        self.k8s.core.patch_node(NODE.NODE_NAME, {"spec": {"taints": None}})
        for node in self.k8s.core.list_node().items:
            if node.metadata.name != NODE.NODE_NAME and not node.spec.unschedulable:
                self.k8s.core.patch_node(node.metadata.name, {"spec": {"unschedulable": True}})
                self.cordoned.append(node.metadata.name)

    def restore(self) -> None:
        self.k8s.core.patch_node(NODE.NODE_NAME, {"spec": {"taints": [NODE.NODE_TAINT], "unschedulable": None}})
        for name in self.cordoned:
            self.k8s.core.patch_node(name, {"spec": {"unschedulable": None}})
        NODE.label_node(self.k8s.api_client)  # the GPU capacity a test may have changed


def set_gpus(k8s: kube.Kube, count: int) -> None:
    gpus = str(count)
    k8s.core.patch_node_status(NODE.NODE_NAME, {"status": {"capacity": {kube.GPU: gpus},
                                                           "allocatable": {kube.GPU: gpus}}})


# --- a namespace with its model cache on the node ---------------------------------------------------------


def local_volume(namespace: str, claim: str, size: str, path: Path) -> dict:
    return {
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": f"{namespace}-model-cache", "labels": {kube.TIER_LABEL: "cluster"}},
        "spec": {
            "capacity": {"storage": size}, "accessModes": ["ReadWriteMany", "ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain", "storageClassName": kube.CACHE_STORAGE_CLASS,
            "claimRef": {"namespace": namespace, "name": claim},
            "local": {"path": str(path)},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": [NODE.NODE_NAME]}]}]}},
        },
    }


@dataclass
class NodeNamespace:
    """A namespace enforcing PodSecurity `restricted`, its model-cache PV a local folder on the node."""
    k8s: kube.Kube
    name: str
    volume: Path

    @classmethod
    def create(cls, k8s: kube.Kube, size: str) -> "NodeNamespace":
        name = "gpt-oss-node-" + "".join(random.choices(string.ascii_lowercase + string.digits, k=6))
        k8s.core.create_namespace({"metadata": {"name": name, "labels": {kube.TIER_LABEL: "cluster",
                                                                        **kube.POD_SECURITY}}})
        volume = VOLUMES / name
        volume.mkdir(parents=True, mode=0o755)  # root's, as a fresh disk: fsGroup must make it writable
        k8s.core.create_persistent_volume(local_volume(name, f"{RELEASE_NAME}-model-cache", size, volume))
        return cls(k8s, name, volume)

    def add_ca(self, config_map: str, pem: bytes) -> None:
        """The fake Hub's test CA as a ConfigMap (key ca.crt), for the chart's modelCache.caBundle.configMap."""
        self.k8s.core.create_namespaced_config_map(self.name, {
            "metadata": {"name": config_map, "labels": {kube.TIER_LABEL: "cluster"}},
            "data": {"ca.crt": pem.decode()}})

    def delete(self) -> None:
        self.k8s.core.delete_namespace(self.name)
        # Wait for the kubelet to stop the pods and unmount their volumes before the folder goes.
        kube.wait_for(f"the pods of {self.name} to be gone",
                      lambda: not self.k8s.core.list_namespaced_pod(self.name).items, timeout=120)
        self.k8s.core.delete_persistent_volume(f"{self.name}-model-cache")
        if not NODE.mounts_under([str(self.volume)]):
            shutil.rmtree(self.volume, ignore_errors=True)
        try:
            VOLUMES.rmdir()  # the last namespace's folder gone: the parent too
        except OSError:
            pass


# --- the fake Hub, where pods reach it ------------------------------------------------------------------


def fake_repo(tokenizer_dir: Path, big_size: int) -> list:
    """The model repo the fake Hub serves: a small tokenizer and config (what the stand-ins and AIPerf read), one
    large LFS file (to interrupt), and the copies IGNORE_PATTERNS skips."""
    from tests.e2e.fake_hub import RepoFile
    files = [RepoFile(path.name, path.read_bytes(), lfs=False) for path in sorted(tokenizer_dir.iterdir())]
    return files + [RepoFile(BIG, hashlib.sha256(b"node").digest() * (big_size // 32), lfs=True),
                    RepoFile("original/model.safetensors", b"x" * 1000, lfs=True),
                    RepoFile("metal/model.bin", b"y" * 1000, lfs=True)]


# --- what ran: containers as containerd started them -------------------------------------------------------


@dataclass
class Container:
    namespace: str
    pod: str
    name: str
    image: str
    uid: int
    gid: int
    no_new_privileges: bool
    capabilities: list[str]
    read_only_root: bool
    seccomp: bool


class ContainerWatcher:
    """Records every container containerd creates for pods of the watched namespaces (the OCI spec runc got)."""

    def __init__(self, state: Path):
        self.state = state
        self.namespaces: set[str] = set()
        self.seen: dict[str, Container] = {}
        self.stopped = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _ctr(self, *args: str) -> str:
        return subprocess.run(["ctr", "--address", str(NODE.socket(self.state)), "--namespace", "k8s.io", *args],
                              capture_output=True, text=True, timeout=30).stdout

    def _run(self) -> None:
        while not self.stopped:
            try:
                self.poll()
            except Exception:  # containerd busy or restarting: next round
                pass
            time.sleep(0.5)

    def poll(self) -> None:
        for cid in self._ctr("containers", "ls", "-q").split():
            if cid in self.seen:
                continue
            info = json.loads(self._ctr("containers", "info", cid) or "{}")
            labels = info.get("Labels") or {}
            if labels.get("io.cri-containerd.kind") != "container":
                self.seen[cid] = None
                continue
            if labels.get("io.kubernetes.pod.namespace") not in self.namespaces:
                continue  # another namespace's, or not yet watched: looked at again next round
            spec = info.get("Spec") or {}
            process = spec.get("process") or {}
            caps = process.get("capabilities") or {}
            self.seen[cid] = Container(
                labels["io.kubernetes.pod.namespace"], labels["io.kubernetes.pod.name"],
                labels["io.kubernetes.container.name"], info.get("Image", ""),
                process.get("user", {}).get("uid", -1), process.get("user", {}).get("gid", -1),
                bool(process.get("noNewPrivileges")),
                sorted(set(caps.get("bounding") or []) | set(caps.get("effective") or [])),
                bool((spec.get("root") or {}).get("readonly")),
                bool((spec.get("linux") or {}).get("seccomp")))

    def containers(self, namespace: str) -> list[Container]:
        self.poll()
        return [c for c in self.seen.values() if c is not None and c.namespace == namespace]

    def stop(self) -> None:
        self.stopped = True


# --- pods -------------------------------------------------------------------------------------------------


def pod_logs(k8s: kube.Kube, namespace: str, pod: dict) -> dict[str, str]:
    """container -> its log (through the kubelet), init containers included; '' when there is none yet."""
    logs = {}
    spec = pod["spec"]
    for container in spec.get("initContainers", []) + spec["containers"]:
        try:
            logs[container["name"]] = k8s.core.read_namespaced_pod_log(pod["metadata"]["name"], namespace,
                                                                        container=container["name"])
        except Exception as error:
            logs[container["name"]] = f"(no log: {getattr(error, 'status', '')} {getattr(error, 'reason', error)})"
    return logs


def describe(k8s: kube.Kube, namespace: str) -> str:
    """Pods (phase, container states), recent events and log tails of a namespace, for failure messages."""
    lines = []
    for pod in k8s.core.list_namespaced_pod(namespace).items:
        pod = k8s._dict(pod)
        states = {s["name"]: next(iter(s.get("state", {})), "?") for s in
                  (pod["status"].get("initContainerStatuses") or []) + (pod["status"].get("containerStatuses") or [])}
        lines.append(f"pod {pod['metadata']['name']} on {pod['spec'].get('nodeName')}: {pod['status'].get('phase')} "
                     f"{states}")
        for name, text in pod_logs(k8s, namespace, pod).items():
            tail = "\n      ".join(text.splitlines()[-8:])
            lines.append(f"    [{name}] {tail}")
    return "\n".join(lines) + "\nevents:\n" + k8s.describe_events(namespace)
