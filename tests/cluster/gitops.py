"""What tests/cluster/test_argocd_sync.py needs around a live Argo CD: the chart's repository served as git, the
examples' Applications pointed at it, a record of what the API server saw, and the stand-ins for what does not run on
API-only nodes (a kubelet finishing the download Job's pod, the Dynamo operator's writes on the DGD)."""
from __future__ import annotations

import copy
import datetime
import json
import subprocess
import threading
import time
from collections.abc import Iterable
from pathlib import Path

import yaml

from tests.cluster import kube
from tests.helpers import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples" / "argocd"
APP_GROUP, APP_VERSION, APP_PLURAL = "argoproj.io", "v1alpha1", "applications"
BRANCH = "main"  # the examples' targetRevision, and the scratch repository's branch
# The chart's own instance label (its release name, which is the Application's name): Argo CD v3 tracks by annotation
# and leaves labels as the chart rendered them.
INSTANCE = "app.kubernetes.io/instance"
# Argo CD v3's default resource tracking (application.resourceTrackingMethod: annotation): the annotation it sets on
# every object it applies, "<application>:<group>/<kind>:<namespace>/<name>" (util/argo/resource_tracking.go).
TRACKING_ID = "argocd.argoproj.io/tracking-id"
WAVE = "argocd.argoproj.io/sync-wave"
REFRESH = "argocd.argoproj.io/refresh"


def tracking_id(application: str, obj: dict, namespace: str) -> str:
    """The tracking-id Argo CD v3 writes on `obj` when `application` applies it into `namespace`."""
    group = obj["apiVersion"].rpartition("/")[0]
    return f"{application}:{group}/{obj['kind']}:{obj['metadata'].get('namespace', namespace)}/{obj['metadata']['name']}"


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "gpt-oss test", "GIT_AUTHOR_EMAIL": "test@gpt-oss.invalid",
                               "GIT_COMMITTER_NAME": "gpt-oss test", "GIT_COMMITTER_EMAIL": "test@gpt-oss.invalid",
                               "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(folder)}).stdout.strip()


class ScratchRepo:
    """A bare repository on this machine whose `main` is the checkout under test (HEAD, plus uncommitted changes to
    tracked files, as `git stash create` records them without touching the checkout), served to Argo CD as file://;
    day-two commits go to a clone of it, never to the checkout."""

    def __init__(self, folder: Path):
        self.bare, self.work = folder / "gpt-oss.git", folder / "work"
        under_test = git(REPO_ROOT, "stash", "create") or git(REPO_ROOT, "rev-parse", "HEAD")
        subprocess.run(["git", "init", "--quiet", "--bare", str(self.bare)], check=True)
        git(REPO_ROOT, "push", "--quiet", str(self.bare), f"{under_test}:refs/heads/{BRANCH}")
        subprocess.run(["git", "clone", "--quiet", "--branch", BRANCH, str(self.bare), str(self.work)], check=True)
        self.url = f"file://{self.bare}"

    def head(self) -> str:
        return git(self.work, "rev-parse", "HEAD")

    def commit(self, path: str, edit, message: str) -> str:
        """Rewrites one file with edit(text) -> text, commits and pushes; returns the new commit."""
        file = self.work / path
        file.write_text(edit(file.read_text()))
        git(self.work, "commit", "--quiet", "-am", message)
        git(self.work, "push", "--quiet", "origin", BRANCH)
        return self.head()

    def revert(self) -> str:
        git(self.work, "revert", "--quiet", "--no-edit", "HEAD")
        git(self.work, "push", "--quiet", "origin", BRANCH)
        return self.head()


# The examples' AppProject (the one file of examples/argocd that is not an Application) and the repository the shipped
# files name, which the local override replaces.
PROJECT = "appproject.yaml"
SHIPPED_REPO = "https://github.com/your-org/gpt-oss.git"


def load_example(name: str) -> dict:
    return yaml.safe_load((EXAMPLES / name).read_text())


def application_files() -> list[str]:
    """The examples' Application files, by name (every YAML file of examples/argocd but the AppProject)."""
    return sorted(path.name for path in EXAMPLES.glob("*.yaml") if load_example(path.name)["kind"] == "Application")


def local_project(repo_url: str) -> dict:
    """The examples' AppProject as shipped, but for the one repository it allows: the override's repoURL."""
    project = copy.deepcopy(load_example(PROJECT))
    project["spec"]["sourceRepos"] = [repo_url if url == SHIPPED_REPO else url for url in project["spec"]["sourceRepos"]]
    return project


def local_application(name: str, repo_url: str, revision: str = BRANCH) -> dict:
    """The example as shipped, but for the override the examples' README documents: spec.source.repoURL and
    spec.source.targetRevision, nothing else."""
    app = copy.deepcopy(load_example(name))
    app["spec"]["source"]["repoURL"] = repo_url
    app["spec"]["source"]["targetRevision"] = revision
    return app


def now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def timestamp(value: str | None) -> datetime.datetime | None:
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def namespace_set(namespaces: str | Iterable[str]) -> frozenset[str]:
    return frozenset([namespaces] if isinstance(namespaces, str) else namespaces)


class Recorder:
    """Every event the API server sends for the watched kinds in the given namespaces (one watch per kind across the
    cluster, the others' events dropped), with its resourceVersion: on one etcd that is the store's revision, one
    counter for every object, so it orders creations and status changes of different kinds."""

    def __init__(self, api_client, namespaces: str | Iterable[str], kinds: list[tuple[str, str]]):
        from kubernetes.dynamic import DynamicClient
        self.client = DynamicClient(api_client)
        self.namespaces = namespace_set(namespaces)
        self.events: list[dict] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = []
        for api_version, kind in kinds:
            resource = self.client.resources.get(api_version=api_version, kind=kind)
            start = resource.get().metadata.resourceVersion
            thread = threading.Thread(target=self._watch, args=(resource, start), daemon=True)
            thread.start()
            self.threads.append(thread)

    def _watch(self, resource, version: str) -> None:
        while not self.stopping.is_set():
            try:
                for event in self.client.watch(resource, resource_version=version, timeout=5):
                    obj = event["raw_object"]
                    version = obj["metadata"]["resourceVersion"]
                    if obj["metadata"].get("namespace") not in self.namespaces:
                        continue
                    with self.lock:
                        self.events.append({"type": event["type"], "kind": obj["kind"], "object": obj,
                                            "rv": int(version), "name": obj["metadata"]["name"],
                                            "namespace": obj["metadata"]["namespace"]})
                    if self.stopping.is_set():
                        return
            except Exception as error:  # a watch that expired (410) restarts from the newest state it saw
                if getattr(error, "status", None) == 410:
                    version = resource.get().metadata.resourceVersion
                time.sleep(0.2)

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(10)

    def snapshot(self) -> list[dict]:
        with self.lock:
            return sorted(self.events, key=lambda e: e["rv"])

    def created(self, kind: str, name: str, namespace: str) -> int | None:
        """The resourceVersion the object was first created at."""
        return next((e["rv"] for e in self.snapshot() if e["type"] == "ADDED"
                     and (e["kind"], e["name"], e["namespace"]) == (kind, name, namespace)), None)

    def first(self, kind: str, name: str, namespace: str, check) -> int | None:
        """The resourceVersion at which the object first satisfied check(object)."""
        return next((e["rv"] for e in self.snapshot()
                     if (e["kind"], e["name"], e["namespace"]) == (kind, name, namespace)
                     and e["type"] != "DELETED" and check(e["object"])), None)


def job_complete(job: dict) -> bool:
    return any(c["type"] == "Complete" and c["status"] == "True" for c in job.get("status", {}).get("conditions") or [])


def pvc_bound(pvc: dict) -> bool:
    return pvc.get("status", {}).get("phase") == "Bound"


class Loop:
    """A function run every `interval` seconds in a thread until stopped; the stand-ins below run in one."""

    def __init__(self, step, interval: float = 0.5):
        self.step, self.interval = step, interval
        self.stopping = threading.Event()
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stopping.wait(self.interval):
            try:
                self.step()
            except Exception as error:  # reported by the test that reads .errors; the loop goes on
                self.errors.append(f"{type(error).__name__}: {error}"[:300])

    def stop(self):
        self.stopping.set()
        self.thread.join(10)


# The API-only nodes python -m ci.cluster control-plane makes: its reaper finishes the deletion of their pods.
REAPED = {f"gpt-oss-{profile}-{index}" for profile, spec in json.loads(
    (REPO_ROOT / "ci" / "cluster" / "gpu-node-profiles.json").read_text())["profiles"].items() for index in range(spec["nodes"])}


def act_as_kubelet(k8s: kube.Kube, namespaces: str | Iterable[str]) -> list[str]:
    """The kubelet's part on API-only nodes, for every pod the scheduler bound: a Job's pod is reported as run to
    completion (exit 0), so the real Job controller completes the Job; any other pod as running and Ready, so the real
    Deployment controller counts it available. Nothing runs: the download and the servers are the node tier's
    (tests/cluster/test_node.py); here only how Argo CD and the controllers handle these objects is under test.
    Returns the pods acted on."""
    acted = []
    watched = namespace_set(namespaces)
    for pod in k8s.core.list_pod_for_all_namespaces().items:
        if pod.metadata.namespace not in watched:
            continue
        try:
            if act_on_pod(k8s, pod.metadata.namespace, pod):
                acted.append(pod.metadata.name)
        except Exception as error:  # a pod deleted since the list (a cascade, the reaper) is no kubelet's error
            if not kube.is_not_found(error):
                raise
    return acted


def act_on_pod(k8s: kube.Kube, namespace: str, pod) -> bool:
    """act_as_kubelet's step for one pod; True when it reported the pod run."""
    if pod.metadata.deletion_timestamp and pod.spec.node_name not in REAPED:
        # ci.cluster.control_plane's reaper confirms deletions on the nodes it made; this does it on the others
        k8s.core.delete_namespaced_pod(pod.metadata.name, namespace, grace_period_seconds=0)
        return False
    if not pod.spec.node_name or pod.status.phase != "Pending" or pod.metadata.deletion_timestamp:
        return False
    stamp = now().isoformat()
    job = "batch.kubernetes.io/job-name" in (pod.metadata.labels or {})

    def statuses(containers, done):
        state = ({"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": stamp, "finishedAt": stamp}}
                 if done else {"running": {"startedAt": stamp}})
        return [{"name": c.name, "image": c.image, "imageID": "", "ready": not done, "restartCount": 0,
                 "started": not done, "state": state} for c in containers or []]
    ready = "False" if job else "True"
    conditions = [{"type": kind, "status": status, "lastTransitionTime": stamp} for kind, status in (
        ("PodScheduled", "True"), ("Initialized", "True"), ("ContainersReady", ready), ("Ready", ready))]
    k8s.core.patch_namespaced_pod_status(pod.metadata.name, namespace, {"status": {
        "phase": "Succeeded" if job else "Running", "startTime": stamp, "conditions": conditions,
        "containerStatuses": statuses(pod.spec.containers, job),
        "initContainerStatuses": statuses(pod.spec.init_containers, True)}})
    return True


# What the Dynamo operator writes on a DGD it admits and reconciles (v1beta1; its source in ../shared/dynamo/operator:
# internal/webhook/defaulting/dynamographdeployment_handler.go, internal/controller_common/finalizer.go,
# api/v1beta1/dynamographdeployment_types.go). The stand-in writes them under its own field manager after Argo CD
# created the DGD; the real webhook writes the annotations inside Argo CD's own create request.
OPERATOR_ANNOTATIONS = {"nvidia.com/dynamo-operator-origin-version": "1.5.0",
                        "nvidia.com/workload-provider": "component"}
OPERATOR_FINALIZER = "nvidia.com/finalizer"
STAND_IN_OPERATOR = "dynamo-operator-stand-in"


def act_as_operator(k8s: kube.Kube, namespace: str, dgd: dict) -> None:
    """Stamps the webhook's annotations and the controller's finalizer and status on one DGD."""
    group, version = dgd["apiVersion"].split("/")
    name = dgd["metadata"]["name"]
    k8s.custom.patch_namespaced_custom_object(
        group, version, namespace, kube.DGD_PLURAL, name,
        {"metadata": {"annotations": OPERATOR_ANNOTATIONS, "finalizers": [OPERATOR_FINALIZER]}},
        field_manager=STAND_IN_OPERATOR)
    stamp = now().strftime("%Y-%m-%dT%H:%M:%SZ")
    generation = k8s.custom.get_namespaced_custom_object(group, version, namespace, kube.DGD_PLURAL, name)[
        "metadata"]["generation"]
    k8s.custom.patch_namespaced_custom_object_status(
        group, version, namespace, kube.DGD_PLURAL, name,
        {"status": {"state": "successful", "observedGeneration": generation, "conditions": [
            {"type": "Ready", "status": "True", "reason": "AllResourcesAreReady", "message": "stand-in operator",
             "lastTransitionTime": stamp, "observedGeneration": generation}]}},
        field_manager=STAND_IN_OPERATOR)


def release_finalizer(k8s: kube.Kube, namespace: str, dgd: dict) -> None:
    """The operator's cleanup on delete: it removes its finalizer once it has deleted what it made."""
    group, version = dgd["apiVersion"].split("/")
    try:
        k8s.custom.patch_namespaced_custom_object(group, version, namespace, kube.DGD_PLURAL, dgd["metadata"]["name"],
                                                  {"metadata": {"finalizers": None}})
    except Exception as error:
        if not kube.is_not_found(error):
            raise
