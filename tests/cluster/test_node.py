"""Pods that really run: the chart on the kubelet node of python -m ci.cluster node (containerd, runc, CNI, kube-proxy, DNS).

Skips, saying why, unless python -m ci.cluster control-plane started its node (a kubelet binary beside the control-plane
binaries, root, the node's Debian packages, the images of python -m ci.cluster node-images). For this module the node is
untainted and every API-only node cordoned (tests/cluster/node.py Takeover), so every pod the chart makes runs
for real, in namespaces enforcing PodSecurity `restricted`, with the model cache on a `local` PV of the node.

The images are stand-ins built from Debian packages and PyPI (tests/cluster/node.py stand_ins() says what each
is): the Jobs' Python image is Debian's python3 with the Jobs' pinned packages; the TensorRT-LLM and Dynamo
runtime images are Dynamo's own frontend in front of GPU-free mockers. The model is a small tokenizer and config
plus one large file, served by tests/e2e/fake_hub.py on the node's bridge address (ci.cluster.node FAKE_HUB_URL) over
HTTPS with a test CA, as a Hub mirror must be (issue 36): the pods trust the CA through modelCache.caBundle (a
ConfigMap in each namespace) and the release pins the manifest sha256 tools/mirror-model.py prints for a copy
made through the same fake Hub (modelCache.manifestSha256), as a user does before pointing the chart at a mirror.

trtllm-serve: the whole release runs: the download Job (its pod killed mid-download, the kubelet killed too),
the server's check-model init container, its readiness probe, the Service by name (cluster DNS, kube-proxy),
`helm test` (smoke test and AIPerf benchmark), the disruption budget against evictions and a drain.
Dynamo: the real Dynamo operator (tests/cluster/operator.py, a pod on this node) makes the DGD's frontend and worker
Deployments and Services; their pods run the Dynamo runtime stand-in (ai-dynamo 1.6.1's frontend and GPU-free mocker)
behind the operator's probes, and the chat, `helm test` and the no-drop scenarios go through its frontend Service.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.cluster import kube
from tests.cluster import node as real
from tests.cluster.conftest import CACHE_SIZE, Release
from tests.cluster.control import ControlPlane
from tests.helpers import (REPO_ROOT, TRTLLM_SERVE_OVERLAYS, deep_merge, dgd_components, dgd_pods, dgd_workers, find,
                           skip_for_missing_part)
from tests.helpers.cleanup import cleaned_up

if TYPE_CHECKING:
    from tests.e2e.fake_hub import FakeHub

pytestmark = [pytest.mark.cluster, pytest.mark.node]  # one node per host; tests restart its kubelet

NODE = real.NODE
BIG_SIZE = 24 * 1024 * 1024  # large enough that the interruptions below land mid-file at START and SLOW
START = 4 * 1024 * 1024  # bytes/s of the large file until its first piece is on the volume
SLOW = 256 * 1024  # ... while the kubelet is killed and the pod deleted
FAST = 64 * 1024 * 1024
PERMISSION_ERRORS = re.compile(r"Permission denied|Read-only file system|Operation not permitted|EACCES|EROFS")
TRTLLM_SERVE_TARGET = TRTLLM_SERVE_OVERLAYS[0]
# The Dynamo target whose pods run: the disaggregated B200 one, whose workers (4 + 4 GPUs) fit the node's 8 fake GPUs
# and whose node selector (amd64, NVIDIA-B200) the node's labels match.
DYNAMO_TARGET = "8xb200-single-node.yaml"
OPERATOR_FRONTEND = "gpt-oss-frontend"  # the operator's frontend Deployment and Service: <dgd name>-frontend
SERVED_MODEL = "openai/gpt-oss-120b"  # the workers' --served-model-name (model.id)
FRONTEND_PORT = 9000  # frontend.httpPort of the Dynamo run: not the Service's 8000
# What `helm uninstall` leaves in a Dynamo release's namespace under the operator (docs/operations.md, "What uninstall
# leaves behind"): the model cache the chart keeps on purpose, and the planner's ServiceAccount and RoleBinding the
# operator makes in every namespace with a DGD, owned by nothing (its discovery ServiceAccount and Role go with the DGD).
UNINSTALL_LEFTOVERS = ["PersistentVolumeClaim/gpt-oss-model-cache", "RoleBinding/planner-serviceaccount-binding",
                       "ServiceAccount/planner-serviceaccount"]
SERVE_REPLICAS = 2  # two server pods, so the budget (maxUnavailable 1) has one to allow and one to refuse
CA_CONFIGMAP = "gpt-oss-node-hub-ca"  # in each release's namespace: the fake Hub's test CA (modelCache.caBundle)
# No dropped request (TestNoDroppedRequests): streams of LOAD_TOKENS tokens from mockers slowed to SPEEDUP last about
# 6 s, longer than the preStop wait, so a pod gets SIGTERM with requests open; LOAD_CONCURRENCY of them at a time.
# In this order, so that only one pod start is waited for per scenario: a drain and a deleted pod with 2 replicas, the
# scale-down to 1, and the upgrade of that one (the new pod first).
SHUTDOWN = {"preStopSeconds": 5, "maxRequestSeconds": 10}  # the 1.2.1 frontend waits all of it to exit
SPEEDUP = "0.15"
LOAD_TOKENS = 150
LOAD_CONCURRENCY = 4
SCENARIOS = ["drain", "delete", "scale-down", "upgrade"]
FRONTENDS = 2  # frontends of the Dynamo target: one goes, one serves


@dataclass
class NodeContext:
    state: Path
    plane: ControlPlane
    watcher: real.ContainerWatcher
    stand_ins: dict[str, str]


@pytest.fixture(scope="module")
def node(cluster_access, k8s, job_pods, scheduler):
    reason = real.why_no_node(cluster_access.kubeconfig)
    if reason:
        skip_for_missing_part(reason)
    state = real.state_of(cluster_access.kubeconfig)
    live = k8s.core.read_node(NODE.NODE_NAME)
    assert any(c.type == "Ready" and c.status == "True" for c in live.status.conditions), live.status.conditions
    takeover = real.Takeover(k8s)
    takeover.take()
    watcher = real.ContainerWatcher(state)
    with cleaned_up(watcher.stop, takeover.restore):
        yield NodeContext(state, ControlPlane(state), watcher, real.stand_ins())


@dataclass
class HubMirror:
    """The fake Hub as the chart's Hub mirror: its https:// URL, the test CA it is signed by, and the manifest
    sha256 of a copy tools/mirror-model.py made through it (the pin modelCache.manifestSha256 needs)."""
    fake: FakeHub
    url: str
    ca: bytes
    manifest_sha256: str


def pin_by_mirroring(url: str, ca_file: Path, model_id: str, revision: str, copy: Path) -> str:
    """What a user does before pointing the chart at a mirror: tools/mirror-model.py writes a copy through it and
    prints the manifest's sha256."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy", "https_proxy", "http_proxy")}
    mirrored = subprocess.run(
        [sys.executable, str(REPO_ROOT / "tools" / "mirror-model.py"), "--endpoint", url, "--ca-bundle", str(ca_file),
         "--model", model_id, "--revision", revision, "--tiktoken", f"{url}/tiktoken/o200k_base.tiktoken",
         "--tiktoken-sha256", hashlib.sha256(real.VOCABULARY).hexdigest(), "--json", str(copy)],
        capture_output=True, text=True, timeout=300, env=env)
    assert mirrored.returncode == 0, f"tools/mirror-model.py through {url}: {mirrored.stderr}"
    return json.loads(mirrored.stdout)["manifestSha256"]


@pytest.fixture(scope="module")
def hub(node, tmp_path_factory):
    from tests.e2e.fake_hub import FakeHub
    from tests.e2e.test_model_source_hub_mirror import make_test_ca
    from tests.e2e.tokenizer import build_tokenizer
    from tests.helpers import render_chart
    # The model the Job asks for, as rendered: the fake Hub serves that repo at that revision.
    job = next(o for o in render_chart([TRTLLM_SERVE_TARGET]) if o["kind"] == "Job" and "model-download" in
               o["metadata"]["name"])["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in job["env"] if "value" in e}
    model_id, revision = env["MODEL_ID"], env["MODEL_REVISION"]
    tokenizer = build_tokenizer(tmp_path_factory.mktemp("tokenizer"))
    ca_file, tls = make_test_ca(tmp_path_factory.mktemp("hub-ca"), address=NODE.GATEWAY)
    hub = FakeHub(model_id, revision, real.fake_repo(tokenizer, BIG_SIZE),
                  extra={Path(env["TIKTOKEN_URL"]).name: real.VOCABULARY}, rate=FAST)
    url = hub.start(ssl_context=tls, host=NODE.GATEWAY, port=NODE.FAKE_HUB_PORT)
    assert url == NODE.FAKE_HUB_URL, url
    with cleaned_up(hub.stop):
        pinned = pin_by_mirroring(url, ca_file, model_id, revision, tmp_path_factory.mktemp("mirrored") / "copy")
        hub.requests.clear()  # the flows look only at what their pods asked for
        hub.served.clear()
        yield HubMirror(hub, url, ca_file.read_bytes(), pinned)


def node_values(target: str, hub: HubMirror, extra: dict | None = None) -> dict:
    """What a node install adds to the tier's values: the fake Hub as the Hub mirror (https, its CA from the
    namespace's ConfigMap, the manifest pinned) and its vocabulary, images never pulled (they were imported), the
    benchmark's image (the Python image, with AIPerf), and sizes that fit a 2-CPU node."""
    from tests.helpers import RUNTIMES, deep_merge, load_values
    python = real.IMAGES.rendered_images()["download"]
    repository, tag = python.rsplit(":", 1)
    small = {"requests": {"cpu": "50m", "memory": "128Mi"}, "limits": {"memory": "2Gi"}}
    values = {
        "model": {"tiktoken": {"url": f"{hub.url}/tiktoken/o200k_base.tiktoken",
                               "sha256": hashlib.sha256(real.VOCABULARY).hexdigest()}},
        "modelCache": {"huggingface": {"endpoint": hub.url}, "manifestSha256": hub.manifest_sha256,
                       "caBundle": {"configMap": CA_CONFIGMAP},
                       "download": {"image": {"pullPolicy": "Never"}, "resources": small}},
        "smokeTest": {"image": {"pullPolicy": "Never"}, "maxTokens": 16, "readyTimeoutSeconds": 300},
        "benchmark": {"image": {"repository": repository, "tag": tag, "pullPolicy": "Never"}, "concurrency": 2,
                      "requestCount": 8, "inputTokensMean": 64, "outputTokensMean": 16, "readyTimeoutSeconds": 300,
                      "resources": small},
        "frontend": {"readyPollSeconds": 2},
        "gracefulShutdown": SHUTDOWN,
    }
    overlay = load_values([target]).get("benchmark", {})
    if overlay.get("warmupRequestCount"):
        values["benchmark"]["warmupRequestCount"] = 2
    if overlay.get("numDatasetEntries"):
        values["benchmark"]["numDatasetEntries"] = 8
    if RUNTIMES[target] == "trtllm-serve":
        values["trtllmServe"] = {"image": {"pullPolicy": "Never"}, "replicas": SERVE_REPLICAS,
                                 "env": {"GPT_OSS_STAND_IN_SPEEDUP_RATIO": SPEEDUP},
                                 "resources": {"requests": {"cpu": "50m", "memory": "256Mi"},
                                               "limits": {"memory": "3Gi"}},
                                 "sharedMemorySize": "2Gi"}  # within the limit, which counts /dev/shm
    else:
        # The release the runtime stand-in carries (the 1.6 line at 1.6.1), never pulled: it was imported.
        values = deep_merge(values, deep_merge(real.IMAGES.dynamo_stand_in_values(),
                                               {"dynamo": {"image": {"pullPolicy": "Never"}}}))
    return deep_merge(values, extra or {})


@dataclass
class Run:
    """What one release did on the node, recorded as it happened; the tests assert on it."""
    target: str
    namespace: str
    objects: list[dict] = field(default_factory=list)
    values: dict = field(default_factory=dict)  # what was installed: the overlay and every value on top
    seconds: dict[str, float] = field(default_factory=dict)
    facts: dict = field(default_factory=dict)
    logs: dict[str, dict[str, str]] = field(default_factory=dict)  # pod -> container -> log
    pods: dict[str, dict] = field(default_factory=dict)  # every pod seen, as last read
    error: str | None = None
    evidence: str = ""
    started: float = 0.0  # time.monotonic() at the start of the run

    def mark(self, step: str) -> None:
        """Seconds from the run's start to the end of `step`, recorded and printed (a failing test's setup shows them)."""
        self.seconds[step] = round(time.monotonic() - self.started, 1)
        line = f"{self.target} in {self.namespace}: {step} after {self.seconds[step]} s"
        print(line, flush=True)
        # ci/test-tiers.sh keeps every step of a passing run too, with the time of day, beside the other groups' logs.
        if os.environ.get(STEPS_LOG):
            with open(os.environ[STEPS_LOG], "a") as steps:
                steps.write(f"{time.strftime('%H:%M:%S')} {line}\n")


# A file every run step is appended to (ci/test-tiers.sh: .envtest/node-steps.log).
STEPS_LOG = "GPT_OSS_NODE_STEPS_LOG"


def snapshot_pods(k8s: kube.Kube, run: Run) -> None:
    for pod in k8s.core.list_namespaced_pod(run.namespace).items:
        pod = k8s._dict(pod)
        run.pods[pod["metadata"]["name"]] = pod
        if pod["status"].get("phase") in ("Running", "Succeeded", "Failed"):
            run.logs[pod["metadata"]["name"]] = real.pod_logs(k8s, run.namespace, pod)


def download_progress(volume: Path) -> int:
    """Bytes of the large file on the volume so far (the Job's .partial file, or the file itself)."""
    partial = [p.stat().st_size for p in volume.rglob(f"{real.BIG}.partial")]
    done = [p.stat().st_size for p in volume.rglob(real.BIG)]
    return max(partial + done + [0])


def wait_job(k8s: kube.Kube, namespace: str, name: str, timeout: float) -> dict:
    def complete():
        job = k8s.get({"kind": "Job", "metadata": {"name": name}}, namespace)
        status = job.get("status") or {} if job else {}
        if status.get("failed", 0) > 3 or any(c["type"] == "Failed" and c["status"] == "True"
                                               for c in status.get("conditions") or []):
            raise AssertionError(f"Job {name} failed: {status}\n{real.describe(k8s, namespace)}")
        return job if status.get("succeeded") else None
    return kube.wait_for(f"Job {namespace}/{name} to succeed", complete, timeout=timeout,
                         explain=lambda: real.describe(k8s, namespace))


def evict(k8s: kube.Kube, namespace: str, pod: str) -> int:
    from kubernetes.client.exceptions import ApiException
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": namespace}}
    try:
        k8s.core.create_namespaced_pod_eviction(pod, namespace, body)
        return 201
    except ApiException as error:
        return error.status


def http_get(url: str, timeout: float = 10) -> tuple[int | None, str]:
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url, timeout=timeout) as response:
            return response.status, response.read().decode(errors="replace")
    except Exception as error:
        return None, str(error)


def helm_test(release: Release, run: Run, k8s: kube.Kube, only: list[str] | None = None) -> None:
    started = time.monotonic()
    try:
        # Without logs: the SDK reads a hook's logs by its name, which fails for a Job hook (the benchmark).
        release.helm.test(release.name, timeout=900, include_names=only)
        run.facts["helm_test"] = {"ok": True}
    except Exception as error:
        run.facts["helm_test"] = {"ok": False, "error": str(error)}
        run.evidence = real.describe(k8s, run.namespace)  # the test pods' states and events, while they last
    run.seconds["helm test"] = round(time.monotonic() - started, 1)
    snapshot_pods(k8s, run)


def disrupt(k8s: kube.Kube, run: Run) -> None:
    """Evictions against the disruption budget, then a drain of the node; the node is uncordoned whatever happens."""
    # The budget (maxUnavailable 1): one server may go, the second may not while the first is away.
    servers = sorted(p["metadata"]["name"] for p in k8s.pods(
        run.namespace, "app.kubernetes.io/component=trtllm-serve") if not p["metadata"].get("deletionTimestamp"))
    run.facts["evictions"] = [(name, evict(k8s, run.namespace, name)) for name in servers]
    # A drain: cordon, then evict every pod on the node; the budget holds back what it must.
    k8s.core.patch_node(NODE.NODE_NAME, {"spec": {"unschedulable": True}})
    try:
        run.facts["drain"] = {pod.metadata.name: evict(k8s, run.namespace, pod.metadata.name)
                              for pod in k8s.core.list_namespaced_pod(run.namespace).items
                              if not pod.metadata.deletion_timestamp}
        run.facts["pdb"] = k8s._dict(k8s.policy.read_namespaced_pod_disruption_budget(
            find(run.objects, "PodDisruptionBudget")["metadata"]["name"], run.namespace)).get("status")
    finally:
        k8s.core.patch_node(NODE.NODE_NAME, {"spec": {"unschedulable": None}})


# --- no dropped request: load through the Service while pods go ---------------------------------------------


def under_load(run: Run, scenario: str, url: str, model: str, disruption, then=None) -> None:
    """Streaming load through the Service while `disruption` runs (it returns once the pod that goes is gone, drained);
    then the load stops, every request it sent followed to its end, while `then` waits for the replacement to be Ready.
    The counts are recorded under run.facts["no_drop"][scenario]."""
    from tests.cluster.streams import StreamingLoad
    load = StreamingLoad(url, model, concurrency=LOAD_CONCURRENCY, max_tokens=LOAD_TOKENS).start()
    started = time.monotonic()
    detail, counts, done = None, {}, False
    stopper = threading.Thread(target=lambda: counts.update(load.stop()))
    try:
        time.sleep(2)  # requests open on every pod
        detail = disruption()
        done = True
    finally:
        stopper.start()
        try:
            if done and then is not None:
                then()
        finally:
            stopper.join()
            run.facts.setdefault("no_drop", {})[scenario] = {**counts, "detail": detail,
                                                             "seconds": round(time.monotonic() - started, 1)}
            run.mark(f"no-drop {scenario}")


def serving_pods(k8s: kube.Kube, namespace: str, selector: str) -> list[dict]:
    return [p for p in k8s.pods(namespace, selector) if not p["metadata"].get("deletionTimestamp")]


def wait_settled(k8s: kube.Kube, namespace: str, deployment: str, selector: str, replicas: int, what: str) -> None:
    """The Deployment rolled out: `replicas` Ready pods of its current template and no other pod left (a terminating
    pod is gone only once it has drained)."""
    def settled():
        live = k8s.apps.read_namespaced_deployment(deployment, namespace)
        status = live.status
        pods = k8s.pods(namespace, selector)
        return ((status.observed_generation or 0) >= live.metadata.generation
                and (status.updated_replicas or 0) == replicas and (status.ready_replicas or 0) == replicas
                and (status.replicas or 0) == replicas and len(pods) == replicas)
    kube.wait_for(what, settled, timeout=240, interval=1, explain=lambda: real.describe(k8s, namespace))


def drain_under_budget(k8s: kube.Kube, namespace: str, selector: str) -> dict:
    """`kubectl drain` of the one node for the serving pods: cordon, evict each (the budget answers 429 for the one it
    holds), uncordon (the evicted pod's replacement has nowhere else to go), and wait for the evicted pod to drain and
    go. The eviction codes."""
    k8s.core.patch_node(NODE.NODE_NAME, {"spec": {"unschedulable": True}})
    try:
        codes = {p["metadata"]["name"]: evict(k8s, namespace, p["metadata"]["name"])
                 for p in serving_pods(k8s, namespace, selector)}
    finally:
        k8s.core.patch_node(NODE.NODE_NAME, {"spec": {"unschedulable": None}})
    wait_gone(k8s, namespace, selector, [name for name, code in codes.items() if code == 201])
    return codes


def wait_gone(k8s: kube.Kube, namespace: str, selector: str, names: list[str]) -> None:
    kube.wait_for(f"{names} to drain and go", lambda: not [
        p for p in k8s.pods(namespace, selector) if p["metadata"]["name"] in names], timeout=120, interval=0.5)


def delete_one(k8s: kube.Kube, namespace: str, selector: str) -> str:
    """Delete a serving pod (its own terminationGracePeriodSeconds) and wait for it to drain and go."""
    name = sorted(p["metadata"]["name"] for p in serving_pods(k8s, namespace, selector))[0]
    k8s.core.delete_namespaced_pod(name, namespace)
    wait_gone(k8s, namespace, selector, [name])
    return name


# --- trtllm-serve: the whole release ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(node, hub, cluster_access, k8s) -> Run:
    real.set_gpus(k8s, 8 * SERVE_REPLICAS)  # two 8-GPU servers on this one node (a B200 node has 8)
    with on_the_node(node, hub, cluster_access, k8s, TRTLLM_SERVE_TARGET) as (run, release, namespace):
        hub.fake.rate = START
        hub.fake.requests.clear()
        hub.fake.served.clear()
        run.values = release.values(TRTLLM_SERVE_TARGET, node_values(TRTLLM_SERVE_TARGET, hub))
        release.install(TRTLLM_SERVE_TARGET, node_values(TRTLLM_SERVE_TARGET, hub))
        run.objects = release.manifest()
        run.mark("installed")
        job = find(run.objects, "Job")["metadata"]["name"]
        run.facts["job"] = job

        # The kubelet killed mid-download and started again: the container runs on (containerd keeps it).
        kube.wait_for("part of the large file on the volume", lambda: download_progress(namespace.volume) > 0,
                      timeout=180, interval=0.2, explain=lambda: real.describe(k8s, namespace.name))
        hub.fake.rate = SLOW
        before_kill = hub.fake.served.get(real.BIG, 0)
        node.plane.kill("kubelet")
        time.sleep(3)
        during_kill = hub.fake.served.get(real.BIG, 0)
        node.plane.start("kubelet")
        run.mark("kubelet restarted")
        run.facts["kubelet_kill"] = {"served_before": before_kill, "served_while_down": during_kill,
                                     "kubelets": [p for p in real.PROCESSES.running_servers()
                                                  if p.split(" ", 1)[1].endswith("/kubelet")]}

        # The pod deleted mid-download: the Job's next pod resumes from what is on the volume.
        first = kube.wait_for("the download pod", lambda: [p for p in k8s.pods(namespace.name, f"job-name={job}")
                                                          if p["status"].get("phase") == "Running"], timeout=60)[0]
        progress = download_progress(namespace.volume)
        assert progress < BIG_SIZE, "the download finished before its pod could be deleted"
        k8s.core.delete_namespaced_pod(first["metadata"]["name"], namespace.name, grace_period_seconds=1)
        run.facts["deleted_pod"] = {"name": first["metadata"]["name"], "progress": progress}
        # Slow until the kubelet has stopped it: the deleted pod must not finish the file in its grace period.
        kube.wait_for("the deleted download pod to be gone", lambda: not [
            p for p in k8s.pods(namespace.name, f"job-name={job}") if p["metadata"]["name"] == first["metadata"]["name"]],
            timeout=60, interval=0.2)
        run.facts["deleted_pod"]["served"] = hub.fake.served.get(real.BIG, 0)
        hub.fake.rate = FAST
        wait_job(k8s, namespace.name, job, timeout=240)
        run.mark("download")
        run.facts["hub_requests"] = list(hub.fake.requests)

        # The servers: released by check-model, then Ready (readiness probe on /v1/models).
        deployment = find(run.objects, "Deployment")["metadata"]["name"]
        wait_ready(k8s, namespace.name, deployment, SERVE_REPLICAS, f"{SERVE_REPLICAS} Ready trtllm-serve pods")
        run.mark("ready")
        service = k8s.core.read_namespaced_service(find(run.objects, "Service")["metadata"]["name"], namespace.name)
        run.facts["service_from_host"] = http_get(f"http://{service.spec.cluster_ip}:8000/v1/models")
        snapshot_pods(k8s, run)

        helm_test(release, run, k8s)
        run.mark("helm test ended")

        no_drops_trtllm_serve(k8s, run, release, namespace.name, f"http://{service.spec.cluster_ip}:8000", hub)
    yield run
    release.close()
    real.set_gpus(k8s, 8)
    namespace.delete()


def no_drops_trtllm_serve(k8s: kube.Kube, run: Run, release: Release, namespace: str, url: str,
                          hub: HubMirror) -> None:
    """The four ways a server pod goes, each under load through the Service: the evictions and the drain under the
    budget (disrupt), a deleted pod, a scale-down from 2 to 1, a helm upgrade that changes the server's command line
    (the one pod replaced, the new one first)."""
    deployment = find(run.objects, "Deployment")["metadata"]["name"]
    selector = "app.kubernetes.io/component=trtllm-serve"
    model = "gpt-oss-120b"  # trtllm-serve names a local checkpoint by its folder
    started = time.monotonic()
    settle = lambda replicas: wait_settled(k8s, namespace, deployment, selector, replicas,  # noqa: E731
                                           f"{replicas} settled trtllm-serve pods")
    def drain() -> dict:
        disrupt(k8s, run)
        codes = dict(run.facts["evictions"])
        wait_gone(k8s, namespace, selector, [name for name, code in codes.items() if code == 201])
        return codes

    under_load(run, "drain", url, model, drain, then=lambda: settle(SERVE_REPLICAS))
    under_load(run, "delete", url, model, lambda: delete_one(k8s, namespace, selector),
               then=lambda: settle(SERVE_REPLICAS))
    fewer = node_values(TRTLLM_SERVE_TARGET, hub, {"trtllmServe": {"replicas": 1}})
    under_load(run, "scale-down", url, model, lambda: (release.upgrade(TRTLLM_SERVE_TARGET, fewer), settle(1))[1])
    changed = deep_merge(fewer, {"trtllmServe": {"freeGpuMemoryFraction": 0.85}})
    under_load(run, "upgrade", url, model, lambda: (release.upgrade(TRTLLM_SERVE_TARGET, changed), settle(1))[1])
    run.seconds["no_drop"] = round(time.monotonic() - started, 1)


@contextlib.contextmanager
def on_the_node(node: NodeContext, hub: HubMirror, cluster_access, k8s: kube.Kube, target: str):
    """A release of `target` in a restricted namespace of its own, with the fake Hub's CA in the ConfigMap
    node_values names, whose containers the watcher follows. A failing step is recorded in the run, not raised,
    so each test reports the part it is about. Then what the release left is recorded (pods, containers, the
    volume, events) and it is uninstalled: the next run's servers need the node's (fake) GPUs. The namespace
    stays until the tests have read the run."""
    namespace = real.NodeNamespace.create(k8s, CACHE_SIZE)
    namespace.add_ca(CA_CONFIGMAP, hub.ca)
    node.watcher.namespaces.add(namespace.name)
    run = Run(target, namespace.name, started=time.monotonic())
    release = Release(cluster_access.kubeconfig, namespace.name, kube.API_VERSIONS[0])
    try:
        yield run, release, namespace
    except Exception as error:
        run.error = f"{type(error).__name__}: {error}"
        run.evidence = real.describe(k8s, run.namespace)
    run.mark("total")
    snapshot_pods(k8s, run)
    run.facts["containers"] = node.watcher.containers(namespace.name)
    run.facts["volume"] = files_on(namespace.volume)
    run.facts["events"] = k8s.events(namespace.name)
    try:
        release.uninstall()
    except Exception as error:  # the namespace's deletion removes what is left
        print(f"uninstall of {release.namespace}: {error}")
    else:
        run.mark("uninstalled")
        run.facts["leftovers"] = leftovers(k8s, namespace.name)
    run.mark("leftovers listed")


# What an uninstall may leave in a namespace, and what the tier puts there itself (not the release's).
LEFTOVER_KINDS = ("ServiceAccount", "Role", "RoleBinding", "Service", "Deployment", "ConfigMap", "Secret",
                  "PersistentVolumeClaim", "DynamoComponentDeployment", "DynamoGraphDeploymentScalingAdapter",
                  "DynamoWorkerMetadata")
TIER_OWN = {"ServiceAccount/default", "ConfigMap/kube-root-ca.crt", f"ConfigMap/{CA_CONFIGMAP}"}


def storage_version(k8s: kube.Kube, crd: str) -> str | None:
    """The version a CRD stores its objects in, None when the cluster has no such CRD."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException
    try:
        definition = client.ApiextensionsV1Api(k8s.api_client).read_custom_resource_definition(crd)
    except ApiException as error:
        if error.status == 404:
            return None
        raise
    return next(v.name for v in definition.spec.versions if v.storage)


def leftovers(k8s: kube.Kube, namespace: str, settle: float = 60) -> list[str]:
    """Kind/name of what stays in the namespace once an uninstall's owned objects are gone (the garbage collector
    deletes an owner's dependents in the background: wait until the list stops shrinking)."""
    def listing() -> list[str]:
        found = [f"ServiceAccount/{o.metadata.name}" for o in k8s.core.list_namespaced_service_account(namespace).items]
        found += [f"Role/{o.metadata.name}" for o in k8s.rbac.list_namespaced_role(namespace).items]
        found += [f"RoleBinding/{o.metadata.name}" for o in k8s.rbac.list_namespaced_role_binding(namespace).items]
        found += [f"Service/{o.metadata.name}" for o in k8s.core.list_namespaced_service(namespace).items]
        found += [f"Deployment/{o.metadata.name}" for o in k8s.apps.list_namespaced_deployment(namespace).items]
        found += [f"ConfigMap/{o.metadata.name}" for o in k8s.core.list_namespaced_config_map(namespace).items]
        found += [f"Secret/{o.metadata.name}" for o in k8s.core.list_namespaced_secret(namespace).items]
        found += [f"PersistentVolumeClaim/{o.metadata.name}"
                  for o in k8s.core.list_namespaced_persistent_volume_claim(namespace).items]
        for kind, plural in (("DynamoComponentDeployment", "dynamocomponentdeployments"),
                             ("DynamoGraphDeploymentScalingAdapter", "dynamographdeploymentscalingadapters"),
                             ("DynamoWorkerMetadata", "dynamoworkermetadatas")):
            # In the version the CRD stores: another one goes through the operator's conversion webhook, and with
            # the operator gone (an earlier module's) the API server's cache of that version never fills, so each
            # list waited out its 429s (about 90 s, three times a run in CI).
            stored = storage_version(k8s, f"{plural}.nvidia.com")
            items = ([] if stored is None else
                     k8s.custom.list_namespaced_custom_object("nvidia.com", stored, namespace, plural)["items"])
            found += [f"{kind}/{o['metadata']['name']}" for o in items]
        return sorted(set(found) - TIER_OWN)
    deadline, last = time.monotonic() + settle, None
    while time.monotonic() < deadline:
        current = listing()
        if current == last:
            return current
        last = current
        time.sleep(5)
    return listing()


def wait_ready(k8s: kube.Kube, namespace: str, deployment: str, replicas: int, what: str) -> None:
    kube.wait_for(what, lambda: (k8s.apps.read_namespaced_deployment(deployment, namespace).status.ready_replicas
                                 or 0) == replicas, timeout=420, interval=2,
                  explain=lambda: real.describe(k8s, namespace))


def files_on(volume: Path) -> dict[str, tuple[int, int, int]]:
    """path -> (uid, gid, size) of every file on the volume, as the host sees them."""
    return {str(p.relative_to(volume)): (p.stat().st_uid, p.stat().st_gid, p.stat().st_size)
            for p in volume.rglob("*") if p.is_file()}


def require(run: Run, *facts: str) -> None:
    missing = [f for f in facts if f not in run.facts]
    assert not missing, f"the run stopped before {missing}: {run.error}\n{run.evidence}"


class TestTrtllmServeOnTheNode:
    """trtllm-serve target, end to end; the server is the serving stand-in (Dynamo frontend + mocker)."""

    def test_should_write_the_model_cache_as_uid_1000_with_the_marker_last(self, served):
        require(served, "hub_requests")
        env = {e["name"]: e["value"] for e in find(served.objects, "Job")["spec"]["template"]["spec"]["containers"][0][
            "env"] if "value" in e}
        model_dir = Path(env["MODEL_DIR"]).relative_to("/model-cache")
        marker = str(Path(env["MARKER"]).relative_to("/model-cache"))
        files = served.facts["volume"]
        assert marker in files, f"no ready marker {marker} on the volume: {sorted(files)}"
        assert files[str(model_dir / real.BIG)][2] == BIG_SIZE
        assert not [p for p in files if p.startswith((str(model_dir / "original"), str(model_dir / "metal")))]
        vocabulary = str(Path(env["TIKTOKEN_DIR"]).relative_to("/model-cache") / "o200k_base.tiktoken")
        assert vocabulary in files, f"no vocabulary {vocabulary} on the volume: {sorted(files)}"
        owners = {(uid, gid) for path, (uid, gid, _) in files.items() if not path.startswith("benchmark")}
        assert owners == {(1000, 1000)}, f"files not written as uid/gid 1000: {owners}"

    def test_should_trust_the_mirror_by_the_chart_ca_bundle_and_mark_the_pinned_manifest(self, served, hub):
        require(served, "hub_requests")
        downloads = [logs.get("download", "") for name, logs in served.logs.items()
                     if name.startswith(served.facts["job"] + "-")]
        assert any("trusting the CA bundle" in text for text in downloads), downloads
        env = {e["name"]: e["value"] for e in find(served.objects, "Job")["spec"]["template"]["spec"]["containers"][0][
            "env"] if "value" in e}
        marker = real.VOLUMES / served.namespace / Path(env["MARKER"]).relative_to("/model-cache")
        assert hub.manifest_sha256 in marker.read_text(), marker.read_text()

    def test_should_resume_the_download_after_its_pod_is_deleted_and_survive_a_kubelet_restart(self, served):
        require(served, "hub_requests")
        kill = served.facts["kubelet_kill"]
        assert kill["served_while_down"] > kill["served_before"], f"the download stopped with the kubelet: {kill}"
        assert len(kill["kubelets"]) == 1, f"not exactly one kubelet after the restart: {kill['kubelets']}"
        deleted = served.facts["deleted_pod"]
        gets = [r for r in served.facts["hub_requests"] if r["method"] == "GET" and r["path"].endswith("/" + real.BIG)]
        resumed = [r for r in gets if r["range"]]
        assert resumed, f"no request resumed the large file (a Range request): {gets}"
        offset = int(resumed[-1]["range"].removeprefix("bytes=").split("-")[0])
        assert 0 < offset < BIG_SIZE and offset >= deleted["progress"] - 10 * 1024 * 1024, (resumed, deleted)
        job_pods = [p for p in served.pods.values() if p["metadata"]["labels"].get("job-name") == served.facts["job"]]
        assert deleted["name"] not in [p["metadata"]["name"] for p in job_pods if p["status"]["phase"] == "Succeeded"]
        assert any(p["status"]["phase"] == "Succeeded" for p in job_pods), [p["status"]["phase"] for p in job_pods]

    def test_should_release_the_servers_with_check_model_and_pass_their_readiness_probe(self, served):
        require(served, "service_from_host")
        servers = [p for p in served.pods.values() if p["metadata"]["labels"].get("app.kubernetes.io/component")
                   == "trtllm-serve"]
        assert len(servers) >= SERVE_REPLICAS
        for pod in servers[:SERVE_REPLICAS]:
            init = served.logs.get(pod["metadata"]["name"], {}).get("check-model", "")
            assert "model cache ready" in init, f"{pod['metadata']['name']} check-model: {init}"
        assert served.seconds["ready"] > 0

    def test_should_answer_on_the_service_by_cluster_ip(self, served):
        require(served, "service_from_host")
        status, body = served.facts["service_from_host"]
        assert status == 200, body
        assert json.loads(body)["data"][0]["id"] == "gpt-oss-120b", body  # trtllm-serve names it by its folder

    def test_should_pass_helm_test_smoke_test_and_benchmark_through_the_service_name(self, served):
        require(served, "helm_test")
        result = served.facts["helm_test"]
        assert result["ok"], f"helm test failed: {result.get('error')}\n{served.evidence}"
        smoke = [logs for name, logs in served.logs.items() if name.endswith("smoke-test")]
        assert smoke and "PASS:" in smoke[0]["smoke-test"], smoke
        bench = [logs["aiperf"] for name, logs in served.logs.items() if name.startswith("gpt-oss-benchmark-")]
        assert bench and "requests completed: 8 of 8" in bench[-1] and bench[-1].rstrip().endswith("PASS"), bench
        urls = {e["value"] for o in hook_objects(served) for c in (o["spec"].get("template", o)["spec"]["containers"])
                for e in c.get("env", []) if e["name"] == "FRONTEND_URL"}
        assert urls == {f"http://gpt-oss-trtllm-serve.{served.namespace}.svc:8000"}, urls

    def test_should_honour_the_disruption_budget_on_eviction_and_drain(self, served):
        require(served, "drain")
        codes = [code for _, code in served.facts["evictions"]]
        assert codes == [201, 429], f"evictions of the two servers: {served.facts['evictions']}"
        drained = served.facts["drain"]
        refused = [name for name, code in drained.items() if code == 429]
        assert refused and all("trtllm-serve" in name for name in refused), drained
        assert all(code == 201 for name, code in drained.items() if "trtllm-serve" not in name), drained


@pytest.fixture(scope="module")
def served_again(node, hub, cluster_access, k8s) -> Run:
    """The other trtllm-serve target, shorter: one server, no faults, the smoke test alone."""
    if len(TRTLLM_SERVE_OVERLAYS) < 2:
        pytest.skip("one trtllm-serve target only")
    target = TRTLLM_SERVE_OVERLAYS[1]
    with on_the_node(node, hub, cluster_access, k8s, target) as (run, release, namespace):
        hub.fake.rate = FAST
        extra = node_values(target, hub, {"trtllmServe": {"replicas": 1}})
        run.values = release.values(target, extra)
        release.install(target, extra)
        run.objects = release.manifest()
        wait_job(k8s, namespace.name, find(run.objects, "Job")["metadata"]["name"], timeout=180)
        deployment = find(run.objects, "Deployment")
        wait_ready(k8s, namespace.name, deployment["metadata"]["name"], 1, "a Ready trtllm-serve pod")
        run.facts["args"] = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
        helm_test(release, run, k8s, only=[f"{release.name}-smoke-test"])
        run.mark("helm test ended")
    yield run
    release.close()
    namespace.delete()


class TestOtherTrtllmServeTargetOnTheNode:
    """The second trtllm-serve target (values/ order) with its own command line; the server is the stand-in."""

    def test_should_start_the_rendered_server_and_pass_the_smoke_test(self, served_again):
        require(served_again, "helm_test")
        assert served_again.facts["helm_test"]["ok"], f"{served_again.facts['helm_test']}\n{served_again.evidence}"
        smoke = [logs for name, logs in served_again.logs.items() if name.endswith("smoke-test")]
        assert smoke and "PASS:" in smoke[0]["smoke-test"], smoke
        server = [logs for name, logs in served_again.logs.items() if "trtllm-serve" in name]
        # The stand-in read this target's own command line (its GPU flags are named in its log).
        assert server and "stand-in for trtllm-serve" in server[0]["trtllm-serve"], server
        assert "check-model" in server[0] and "model cache ready" in server[0]["check-model"], server


# --- Dynamo without the operator: a frontend stand-in, for test_gateway.py and test_node_policies.py -----------


def frontend_stand_in(objects: list[dict], namespace: str) -> tuple[dict, dict]:
    """A Deployment and Service `<release>-frontend` from the DGD's own frontend pod (tests.helpers.dgd_pods):
    the chart's init container, volumes, securityContext, grace period, preStop and readiness probe as rendered, with
    the DGD's frontend replicas; the main container runs the rendered frontend command through the stand-in, with one
    mocker per worker role in the same container (slowed, so requests are open when a pod goes). Its rollout is
    Kubernetes' default (25% surge, 25% unavailable), as the operator's frontend Deployment does not set one. Its image
    is the trtllm-serve stand-in (ai-dynamo 1.2.1 and the stand-in's `serve`): the name the DGD renders is the 1.6.1
    runtime stand-in the operator's pods run, which has no `serve` of its own."""
    from tests.e2e.plan import mocker_args
    dgd = find(objects, "DynamoGraphDeployment")
    pod = dgd_pods(dgd)["Frontend"]
    main = pod["spec"]["containers"][0]
    mockers = []
    model_path = model_name = None
    for worker in dgd_workers(dgd).values():
        args = mocker_args(worker["args"])
        model_path, model_name = args[args.index("--model-path") + 1], args[args.index("--model-name") + 1]
        mockers += ["--mocker", " ".join(args)] * worker["replicas"]
    main["command"] = ["gpt-oss-stand-in", "serve", "--model-path", model_path, "--model-name", model_name,
                       *mockers, "--", *main["command"], *main.get("args", [])]
    main.pop("args", None)
    main["env"] = main.get("env", []) + [{"name": "HOME", "value": "/tmp"},
                                         {"name": "GPT_OSS_STAND_IN_SPEEDUP_RATIO", "value": SPEEDUP}]
    main["image"] = real.IMAGES.rendered_images()["trtllm-serve"]
    main["imagePullPolicy"] = "Never"
    main["volumeMounts"] = main.get("volumeMounts", []) + [{"name": "tmp", "mountPath": "/tmp"}]
    main.setdefault("readinessProbe", {"httpGet": {"path": "/v1/models", "port": 8000}, "periodSeconds": 2})
    pod["spec"]["volumes"] = pod["spec"].get("volumes", []) + [{"name": "tmp", "emptyDir": {}}]
    for init in pod["spec"].get("initContainers", []):
        init["imagePullPolicy"] = "Never"
    pod["spec"]["automountServiceAccountToken"] = False
    name = f"{dgd['metadata']['name']}-frontend"
    labels = {"nvidia.com/dynamo-component": "Frontend", "nvidia.com/dynamo-graph-deployment-name":
              dgd["metadata"]["name"], "gpt-oss.test/stand-in": "frontend"}
    pod["metadata"] = {"labels": {**pod["metadata"].get("labels", {}), **labels}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
                  "spec": {"replicas": int(dgd_components(dgd)["Frontend"]["replicas"]), "selector": {"matchLabels": labels},
                           "template": {"metadata": pod["metadata"], "spec": pod["spec"]}}}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
               "spec": {"selector": labels, "ports": [{"name": "http", "port": 8000, "targetPort": 8000}]}}
    return deployment, service


@contextlib.contextmanager
def crd_storing(crd: kube.DgdCrd, api_version: str):
    """The DGD CRD storing `api_version` while the block runs, then what it stored before. The tier's other modules
    leave it storing the last version they tested, and an object written in one version is read back in the other
    unconverted (conversion None): the chart's live-object checks on an upgrade would then see no components."""
    live = crd.live()
    before = f"nvidia.com/{kube.storage_version(live)}" if live else None
    reason = crd.prepare(api_version)
    if reason:
        skip_for_missing_part(reason)
    try:
        yield
    finally:
        if before and before != api_version:
            crd.prepare(before)


# --- Dynamo: the DGD served by the real Dynamo operator's objects -------------------------------------------


def dynamo_values(hub: HubMirror, extra: dict | None = None) -> dict:
    """The Dynamo target on the node: two frontends (one goes, one serves), workers small enough for a 2-CPU node and
    slowed (requests are open when a frontend goes), and frontend.httpPort other than 8000 (the operator's Service stays
    on 8000 and forwards to the container port named http)."""
    small = {"requests": {"cpu": "50m", "memory": "256Mi"}, "limits": {"memory": "3Gi"}}
    return node_values(DYNAMO_TARGET, hub, deep_merge({
        "frontend": {"resources": small, "replicas": FRONTENDS, "httpPort": FRONTEND_PORT},
        "workers": {"resources": small, "sharedMemorySize": "1Gi",
                    "env": {"GPT_OSS_STAND_IN_SPEEDUP_RATIO": SPEEDUP}}}, extra or {}))


def dgd_status(k8s: kube.Kube, namespace: str) -> dict:
    return kube.read_json(k8s.custom.get_namespaced_custom_object(
        "nvidia.com", "v1beta1", namespace, "dynamographdeployments", "gpt-oss", _preload_content=False)).get("status", {})


def dgd_ready(status: dict) -> bool:
    conditions = {c["type"]: c["status"] for c in status.get("conditions") or []}
    return status.get("state") == "successful" and conditions.get("Ready") == "True"


def stream_chat(url: str, model: str, max_tokens: int = 16) -> dict:
    """One streaming chat completion: the status, the chunks' content and whether the stream ended with [DONE]."""
    body = json.dumps({"model": model, "stream": True, "max_tokens": max_tokens,
                       "messages": [{"role": "user", "content": "Say hello."}]}).encode()
    request = urllib.request.Request(f"{url}/v1/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    chunks, done = [], False
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=60) as response:
        status = response.status
        for line in response:
            line = line.decode().strip()
            if line == "data: [DONE]":
                done = True
            elif line.startswith("data: "):
                chunks.append(json.loads(line[6:]))
    text = "".join((c["choices"][0].get("delta") or {}).get("content") or "" for c in chunks if c.get("choices"))
    return {"status": status, "chunks": len(chunks), "done": done, "text": text}


@pytest.fixture(scope="module")
def dynamo_run(node, hub, cluster_access, k8s, dynamo_operator) -> Run:
    with on_the_node(node, hub, cluster_access, k8s, DYNAMO_TARGET) as (run, release, namespace):
        hub.fake.rate = FAST
        extra = dynamo_values(hub)
        run.values = release.values(DYNAMO_TARGET, extra)
        release.install(DYNAMO_TARGET, extra)
        run.objects = release.manifest()
        wait_job(k8s, namespace.name, find(run.objects, "Job")["metadata"]["name"], timeout=180)
        run.mark("download")
        # The operator's frontend Deployment and the workers' (hash-named) Deployments, all pods Ready.
        kube.wait_for("the operator's frontend and workers Ready, the DGD successful", lambda: dgd_ready(
            dgd_status(k8s, namespace.name)), timeout=420, interval=2,
            explain=lambda: f"{json.dumps(dgd_status(k8s, namespace.name))[:2000]}\n{real.describe(k8s, namespace.name)}")
        run.mark("ready")
        run.facts["dgd_status"] = dgd_status(k8s, namespace.name)
        run.facts["running"] = [k8s._dict(p) for p in k8s.core.list_namespaced_pod(
            namespace.name, label_selector="nvidia.com/dynamo-graph-deployment-name=gpt-oss").items]
        run.facts["deployments"] = {d.metadata.name: k8s._dict(d) for d in
                                    k8s.apps.list_namespaced_deployment(namespace.name).items}
        service = k8s.core.read_namespaced_service(OPERATOR_FRONTEND, namespace.name)
        run.facts["frontend_service"] = k8s._dict(service)
        run.facts["frontend_url"] = f"http://{service.spec.cluster_ip}:8000"
        # Ready pods come before kube-proxy's rules for them: until then the Service refuses (a CI run met it).
        run.facts["chat"] = chat_when_open(run.facts["frontend_url"], SERVED_MODEL)
        snapshot_pods(k8s, run)
        helm_test(release, run, k8s)
        run.mark("helm test ended")
        no_drops_dynamo(k8s, run, release, namespace.name, extra, f"http://{service.spec.cluster_ip}:8000")
        worker_rollout(k8s, run, release, namespace.name, extra)
    yield run
    release.close()
    namespace.delete()


def no_drops_dynamo(k8s: kube.Kube, run: Run, release: Release, namespace: str, values: dict, url: str) -> None:
    """The four ways a frontend pod goes, each under load through the operator's frontend Service: a drain under the
    budget, a deleted pod, a scale-down from 2 to 1 and a helm upgrade that changes the frontend's command line, both
    carried out by the operator on its frontend Deployment."""
    selector = "nvidia.com/dynamo-component=Frontend"
    started = time.monotonic()
    settle = lambda replicas: wait_settled(k8s, namespace, OPERATOR_FRONTEND, selector, replicas,  # noqa: E731
                                           f"{replicas} settled frontends of the operator")
    under_load(run, "drain", url, SERVED_MODEL, lambda: drain_under_budget(k8s, namespace, selector),
               then=lambda: settle(FRONTENDS))
    under_load(run, "delete", url, SERVED_MODEL, lambda: delete_one(k8s, namespace, selector),
               then=lambda: settle(FRONTENDS))
    one = deep_merge(values, {"frontend": {"replicas": 1}})
    under_load(run, "scale-down", url, SERVED_MODEL, lambda: (release.upgrade(DYNAMO_TARGET, one), settle(1))[1])
    routed = deep_merge(one, {"frontend": {"routerMode": "random"}})
    under_load(run, "upgrade", url, SERVED_MODEL, lambda: (release.upgrade(DYNAMO_TARGET, routed), settle(1))[1])
    run.seconds["no_drop"] = round(time.monotonic() - started, 1)


def worker_hash(k8s: kube.Kube, namespace: str) -> str:
    live = kube.read_json(k8s.custom.get_namespaced_custom_object(
        "nvidia.com", "v1beta1", namespace, "dynamographdeployments", "gpt-oss", _preload_content=False))
    return live["metadata"].get("annotations", {}).get("nvidia.com/current-worker-hash-v2", "")


def deployments_of(k8s: kube.Kube, namespace: str) -> str:
    return "; ".join(f"{d.metadata.name} {d.status.ready_replicas or 0}/{d.spec.replicas}"
                     for d in k8s.apps.list_namespaced_deployment(namespace).items)


def worker_rollout(k8s: kube.Kube, run: Run, release: Release, namespace: str, values: dict) -> None:
    """D3 and D4: an engine-only change of the decode role (its maxBatchSize) changes the workers' pod templates (the
    engine checksum), and the operator's rollout of every worker completes on the node's 8 GPUs, which the two workers
    already fill: no surge pod (the chart's rollout annotations for workers.sameNode)."""
    started = time.monotonic()
    before = worker_hash(k8s, namespace)
    # Exactly this target's 8 GPUs free for it: the node's capacity is what other namespaces' pods hold plus 8 (the
    # trtllm-serve fixture of this module gives the node 16 for its two servers while they run).
    others = gpus_held(k8s, outside=namespace)
    capacity = kube.gpus(k8s._dict(k8s.core.read_node(NODE.NODE_NAME)))
    real.set_gpus(k8s, others + 8)
    try:
        release.upgrade(DYNAMO_TARGET, deep_merge(values, {"frontend": {"replicas": 1, "routerMode": "random"},
                                                           "workers": {"decode": {"maxBatchSize": 64}}}))
        after = worker_generation(k8s, namespace, before)
        free = kube.gpus(k8s._dict(k8s.core.read_node(NODE.NODE_NAME))) - gpus_held(k8s, outside=namespace)
    finally:
        real.set_gpus(k8s, capacity)
    # The frontend is Ready again once the new workers have registered (its probe waits for /v1/models to list them);
    # the Service's rules follow its endpoints a moment later, so the chat may find the port closed that long.
    wait_ready(k8s, namespace, OPERATOR_FRONTEND, 1, "the frontend Ready with the new workers")
    run.facts["rollout"] = {"before": before, "after": after, "seconds": round(time.monotonic() - started, 1),
                            "gpus": free, "chat": chat_when_open(run.facts["frontend_url"], SERVED_MODEL)}


def gpus_held(k8s: kube.Kube, outside: str) -> int:
    """GPUs the node's running pods of other namespaces request."""
    held = 0
    for pod in k8s.core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={NODE.NODE_NAME}").items:
        if pod.metadata.namespace != outside and pod.status.phase not in ("Succeeded", "Failed"):
            held += sum(int(((c.resources and c.resources.requests) or {}).get(kube.GPU, 0))
                        for c in pod.spec.containers)
    return held


def chat_when_open(url: str, model: str, timeout: float = 60) -> dict:
    """stream_chat, tried again while the connection is refused (at most `timeout` seconds)."""
    refused = {}

    def attempt():
        try:
            return stream_chat(url, model)
        except urllib.error.URLError as error:
            refused["last"] = repr(error)
            return None
    return kube.wait_for(f"{url} to accept a chat", attempt, timeout=timeout, interval=2,
                         explain=lambda: refused.get("last", ""))


def worker_generation(k8s: kube.Kube, namespace: str, before: str) -> str:
    """The new worker hash once both worker roles run one Ready pod of it and the DGD is Ready again."""

    def completed():
        after = worker_hash(k8s, namespace)
        workers = [d for d in k8s.apps.list_namespaced_deployment(namespace).items
                   if (d.metadata.labels or {}).get("nvidia.com/dynamo-component") in ("TRTLLMPrefillWorker",
                                                                                   "TRTLLMDecodeWorker")]
        return after if after != before and len(workers) == 2 and all(
            (d.status.ready_replicas or 0) == 1 and after in d.metadata.name for d in workers) and dgd_ready(
            dgd_status(k8s, namespace)) else None

    return kube.wait_for("the workers' rollout to a new generation", completed, timeout=420, interval=2,
                         explain=lambda: f"worker hash {worker_hash(k8s, namespace)} (before: {before}); "
                                         f"{deployments_of(k8s, namespace)}\n{json.dumps(dgd_status(k8s, namespace))}\n"
                                         f"{real.describe(k8s, namespace)}")


class TestDynamoTargetOnTheNodeUnderTheOperator:
    """A Dynamo target served through the real operator's objects: its frontend and workers run as pods (the runtime
    stand-in: ai-dynamo 1.6.1's frontend and GPU-free mocker, answering the operator's probes on its ports)."""

    def test_should_run_the_frontend_and_workers_the_operator_made(self, dynamo_run):
        require(dynamo_run, "running")
        pods = dynamo_run.facts["running"]
        components = sorted(p["metadata"]["labels"]["nvidia.com/dynamo-component"] for p in pods
                            if p["status"].get("phase") == "Running")
        assert components == ["Frontend"] * FRONTENDS + ["TRTLLMDecodeWorker", "TRTLLMPrefillWorker"], components
        owners = {p["metadata"]["ownerReferences"][0]["kind"] for p in pods}
        assert owners == {"ReplicaSet"}, owners  # made by the operator's Deployments
        for pod in pods:
            assert all(s.get("ready") for s in pod["status"]["containerStatuses"]), pod["metadata"]["name"]

    def test_should_report_the_dgd_successful_and_ready(self, dynamo_run):
        require(dynamo_run, "dgd_status")
        status = dynamo_run.facts["dgd_status"]
        assert status["state"] == "successful", status
        assert {c["type"]: c["status"] for c in status["conditions"]}["Ready"] == "True", status

    def test_should_fill_the_model_cache_and_release_the_pods_with_check_model(self, dynamo_run):
        require(dynamo_run, "dgd_status")
        files = dynamo_run.facts["volume"]
        assert any(".download-complete-" in p for p in files), sorted(files)
        started = {p["metadata"]["name"] for p in dynamo_run.facts["running"]}
        released = [logs["check-model"] for name, logs in dynamo_run.logs.items() if name in started]
        assert len(released) == FRONTENDS + 2 and all("model cache ready" in text for text in released), released

    def test_should_stream_a_chat_completion_through_the_operators_frontend_service(self, dynamo_run):
        require(dynamo_run, "chat")
        chat = dynamo_run.facts["chat"]
        assert (chat["status"], chat["done"]) == (200, True) and chat["chunks"] > 1 and chat["text"], chat

    def test_should_serve_on_the_frontend_port_the_values_name_behind_the_services_8000(self, dynamo_run):
        require(dynamo_run, "frontend_service")
        ports = dynamo_run.facts["frontend_service"]["spec"]["ports"]
        assert [(p["port"], p["targetPort"]) for p in ports] == [(8000, "http")], ports
        frontend = dynamo_run.facts["deployments"][OPERATOR_FRONTEND]["spec"]["template"]["spec"]
        main = next(c for c in frontend["containers"] if c["name"] == "main")
        assert [(p["name"], p["containerPort"]) for p in main["ports"]] == [("http", FRONTEND_PORT)]
        assert main["args"][-2:] == ["--http-port", str(FRONTEND_PORT)]

    def test_should_complete_a_worker_rollout_on_exactly_the_nodes_eight_gpus(self, dynamo_run):
        """D4 (and D3: the change was to the decode role's engine YAML alone)."""
        require(dynamo_run, "rollout")
        rollout = dynamo_run.facts["rollout"]
        assert rollout["gpus"] == 8 and rollout["after"] != rollout["before"], rollout
        chat = rollout["chat"]
        assert (chat["status"], chat["done"]) == (200, True), chat

    def test_should_leave_on_uninstall_what_operations_md_lists(self, dynamo_run):
        require(dynamo_run, "leftovers")
        assert dynamo_run.facts["leftovers"] == UNINSTALL_LEFTOVERS, dynamo_run.facts["leftovers"]

    def test_should_pass_helm_test_through_the_operators_frontend_service(self, dynamo_run):
        require(dynamo_run, "helm_test")
        result = dynamo_run.facts["helm_test"]
        assert result["ok"], f"helm test failed: {result.get('error')}\n{dynamo_run.evidence}"
        smoke = [logs for name, logs in dynamo_run.logs.items() if name.endswith("smoke-test")]
        assert smoke and "PASS:" in smoke[0]["smoke-test"], smoke
        bench = [logs["aiperf"] for name, logs in dynamo_run.logs.items() if name.startswith("gpt-oss-benchmark-")]
        assert bench and "requests completed: 8 of 8" in bench[-1] and bench[-1].rstrip().endswith("PASS"), bench
        urls = {e["value"] for o in hook_objects(dynamo_run) for c in (o["spec"].get("template", o)["spec"]["containers"])
                for e in c.get("env", []) if e["name"] == "FRONTEND_URL"}
        assert urls == {f"http://gpt-oss-frontend.{dynamo_run.namespace}.svc:8000"}, urls


# --- no request dropped while pods go -------------------------------------------------------------------------


@pytest.mark.parametrize("flow", ["served", "dynamo_run"])
class TestNoDroppedRequests:
    """Streaming chats at a fixed concurrency through the Service (trtllm-serve's, or the operator's frontend) while a
    pod is deleted, a helm upgrade replaces every pod, the node is drained under the budget and the replicas go from 2
    to 1: every request started completes, none fails, no stream is cut. What makes it true is the chart's
    (gracefulShutdown: the preStop drain mark and wait, readiness failing on it, the grace period, the rollout, the
    frontend's own drain timeout) and the servers' drain on SIGTERM (the stand-in drains as trtllm-serve does:
    ci/cluster/stand_in.py; the Dynamo frontend is ai-dynamo 1.6.1's own)."""

    @pytest.mark.parametrize("scenario", SCENARIOS)
    def test_should_complete_every_request_while_pods_go(self, flow, scenario, request, record_property):
        run: Run = request.getfixturevalue(flow)
        require(run, "no_drop")
        assert scenario in run.facts["no_drop"], f"the run stopped before {scenario}: {run.error}\n{run.evidence}"
        counts = run.facts["no_drop"][scenario]
        record_property(f"{flow} {scenario}", json.dumps(counts))
        assert counts["started"] > 0 and counts["completed"] == counts["started"], json.dumps(counts)
        assert (counts["failed"], counts["cut"]) == (0, 0), json.dumps(counts)

    def test_should_have_held_requests_open_longer_than_the_prestop_wait(self, flow, request):
        """The streams outlast the preStop wait, so a pod that goes gets SIGTERM with requests open: its drain is
        exercised, not only the endpoint removal."""
        run: Run = request.getfixturevalue(flow)
        require(run, "no_drop")
        longest = max(c["longest_seconds"] for c in run.facts["no_drop"].values())
        assert longest > SHUTDOWN["preStopSeconds"], json.dumps(run.facts["no_drop"])

    def test_should_keep_the_drain_within_budget(self, flow, request):
        """The budget refused the second eviction of the drain, so one pod served throughout."""
        run: Run = request.getfixturevalue(flow)
        require(run, "no_drop")
        codes = sorted(run.facts["no_drop"]["drain"]["detail"].values())
        assert codes == [201, 429], json.dumps(run.facts["no_drop"]["drain"])


# --- runtime security, for every pod that ran ------------------------------------------------------------


def rendered_security(objects: list[dict]) -> dict[str, tuple[dict, dict]]:
    """container name -> (pod securityContext, container securityContext) as the chart rendered them."""
    found = {}
    for obj in objects:
        spec = None
        if obj["kind"] in ("Job", "Deployment"):
            spec = obj["spec"]["template"]["spec"]
        elif obj["kind"] == "Pod":
            spec = obj["spec"]
        if obj["kind"] == "DynamoGraphDeployment":  # the operator's pods run every component's containers as rendered
            for pod in dgd_pods(obj).values():
                for container in pod["spec"].get("initContainers", []) + pod["spec"]["containers"]:
                    found[container["name"]] = (pod["spec"].get("securityContext", {}),
                                                container.get("securityContext", {}))
        if spec:
            for container in spec.get("initContainers", []) + spec["containers"]:
                found[container["name"]] = (spec.get("securityContext", {}), container.get("securityContext", {}))
    return found


@pytest.mark.parametrize("flow", ["served", "served_again", "dynamo_run"])
class TestRuntimeSecurity:
    def test_should_run_every_chart_container_as_rendered_under_restricted(self, flow, request, k8s):
        run: Run = request.getfixturevalue(flow)
        require(run, "containers")
        rendered = rendered_security(run.objects + hook_objects(run))
        containers = run.facts["containers"]
        assert containers, "no container of this namespace was seen"
        problems = []
        for c in containers:
            if c.name not in rendered:
                problems.append(f"{c.pod}/{c.name}: not a container the chart renders")
                continue
            pod_context, context = rendered[c.name]
            want_ro = bool(context.get("readOnlyRootFilesystem"))
            if (c.uid, c.gid) != (pod_context.get("runAsUser"), pod_context.get("runAsGroup")):
                problems.append(f"{c.pod}/{c.name}: ran as {c.uid}:{c.gid}")
            if not c.no_new_privileges or c.capabilities or not c.seccomp:
                problems.append(f"{c.pod}/{c.name}: noNewPrivileges={c.no_new_privileges} caps={c.capabilities} "
                                f"seccomp={c.seccomp}")
            if c.read_only_root != want_ro:
                problems.append(f"{c.pod}/{c.name}: read-only root {c.read_only_root}, rendered {want_ro}")
        assert not problems, "\n".join(problems)
        labels = k8s.core.read_namespace(run.namespace).metadata.labels
        assert labels.get("pod-security.kubernetes.io/enforce") == "restricted"
        names = {c.name for c in containers}
        ran = {"download", "check-model", "smoke-test"} | (set() if flow == "served_again" else {"aiperf"})
        assert ran <= names, names

    def test_should_never_fail_for_permissions(self, flow, request):
        run: Run = request.getfixturevalue(flow)
        require(run, "containers")
        hits = {f"{pod}/{container}": [line for line in text.splitlines() if PERMISSION_ERRORS.search(line)][:3]
                for pod, logs in run.logs.items() for container, text in logs.items() if PERMISSION_ERRORS.search(text)}
        assert not hits, f"permission errors in the logs: {hits}"
        failed = {name: [s.get("state") for s in pod["status"].get("containerStatuses") or []]
                  for name, pod in run.pods.items() if pod["status"].get("phase") == "Failed"
                  and name != run.facts.get("deleted_pod", {}).get("name")}
        assert not failed, f"pods that failed: {failed}"


def hook_objects(run: Run) -> list[dict]:
    """The test hooks as rendered for this run (they are not in the release's manifest)."""
    from tests.helpers import render_chart
    objects = render_chart(values=run.values, namespace=run.namespace)
    return [o for o in objects if "helm.sh/hook" in (o["metadata"].get("annotations") or {})]


class TestNodeHost:
    def test_should_keep_the_node_sockets_under_a_short_path_whatever_the_state_folder(self, node, cluster_access):
        state = real.state_of(cluster_access.kubeconfig)
        sockets = [path for folder, _, _ in os.walk(NODE.node_dir(state))
                   for path in map(Path, (entry.path for entry in os.scandir(folder))) if path.is_socket()]
        assert sockets, f"no unix socket under {NODE.node_dir(state)}"
        # sun_path holds 108 bytes with its terminating NUL
        assert max(len(str(path)) for path in sockets) <= 107, sorted(map(str, sockets))
        assert str(NODE.socket(state)).startswith("/run/gpt-oss-node/"), NODE.socket(state)
        if os.environ.get("CI", "").strip().lower() == "true":  # .ci/run puts the state 110+ characters deep
            assert len(str(state)) >= 110, state


@pytest.mark.parametrize("flow", ["served", "dynamo_run"])
class TestImagesBuiltHere:
    def test_should_run_only_stand_in_images_built_here_under_the_rendered_names(self, flow, request, node,
                                                                              record_property):
        run: Run = request.getfixturevalue(flow)
        require(run, "containers")
        rendered = {c["image"] for pod in run.pods.values()
                    for c in pod["spec"].get("initContainers", []) + pod["spec"]["containers"]}
        # Which stand-in each image the pods name is (python -m ci.cluster node-images), in the test report.
        for image in sorted(rendered):
            record_property(image, node.stand_ins.get(image, "NOT BUILT HERE"))
        assert rendered <= set(node.stand_ins), f"pods name images not built here: {rendered - set(node.stand_ins)}"
        ran = {c.image for c in run.facts["containers"]}  # what containerd started them from
        assert ran <= set(node.stand_ins), f"containers of images not built here: {ran - set(node.stand_ins)}"
        pulled = [e for e in run.facts.get("events", []) if e.get("reason") == "Pulling"]
        assert not pulled, f"the kubelet pulled: {pulled}"
