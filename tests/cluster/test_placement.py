"""Where the worker pods land on the fake GPU nodes (needs a kube-scheduler; skips without one).

With the Dynamo operator in the cluster, it makes the worker pods from the DGD. Without it, the `workers` fixture
stands in: it creates, from the DGD the API server stored, the pods the operator would (tests.helpers.dgd_pods),
one per replica. Fake nodes run no GPU workload, so only binding (spec.nodeName) and scheduler events are asserted.
"""
from __future__ import annotations

import pytest

from tests.cluster import kube
from tests.helpers import dgd_pods, dgd_workers, find, render_chart

pytestmark = pytest.mark.cluster

WORKERS = "app.kubernetes.io/component=worker"
# DGD component name -> the workers.<key> values of that role.
ROLE_KEYS = {"TRTLLMWorker": "worker", "TRTLLMPrefillWorker": "prefill", "TRTLLMDecodeWorker": "decode"}


def worker_selector(release) -> str:
    return f"app.kubernetes.io/instance={release.name},{WORKERS}"


def node_selector(dgd: dict) -> dict[str, str]:
    return next(iter(dgd_workers(dgd).values()))["pod_spec"]["nodeSelector"]


def expected_pods(dgd: dict) -> int:
    return sum(worker["replicas"] for worker in dgd_workers(dgd).values())


@pytest.fixture
def workers(scheduler, operator_present, k8s):
    """start(release): the worker pods of the installed release exist, made by the operator or by this stand-in."""
    def start(release) -> None:
        if operator_present:
            return
        dgd = k8s.get(find(release.manifest(), "DynamoGraphDeployment"), release.namespace)
        for name, pod in dgd_pods(dgd).items():
            if dgd_workers(dgd).get(name) is None:
                continue
            for replica in range(dgd_workers(dgd)[name]["replicas"]):
                body = dict(pod, metadata=dict(pod["metadata"], name=f"{pod['metadata']['name']}-{replica}"))
                k8s.core.create_namespaced_pod(release.namespace, body)
    return start


class TestWorkerPlacement:
    def test_should_bind_worker_pods_to_matching_gpu_nodes(self, workers, release, k8s, target):
        release.install(target)
        workers(release)
        dgd = find(release.manifest(), "DynamoGraphDeployment")
        workers = dgd_workers(dgd)
        selector = node_selector(dgd)

        pods = kube.wait_for(
            f"{expected_pods(dgd)} worker pods bound to nodes",
            lambda: (lambda ps: ps if len(ps) == expected_pods(dgd) and all(p["spec"].get("nodeName") for p in ps)
                     else None)(k8s.pods(release.namespace, worker_selector(release))),
            timeout=300, explain=lambda: k8s.describe_events(release.namespace))

        nodes = {n["metadata"]["name"]: n for n in k8s.nodes()}
        wanted_gpus = sorted(w["gpus"] for w in workers.values() for _ in range(w["replicas"]))
        assert sorted(kube.pod_gpus(p) for p in pods) == wanted_gpus, {n: w["gpus"] for n, w in workers.items()}
        for pod in pods:
            node = nodes[pod["spec"]["nodeName"]]
            assert kube.matches_selector(node, selector), (
                f"{pod['metadata']['name']} is on {node['metadata']['name']}, whose labels do not match {selector}")
            assert kube.gpus(node) >= kube.pod_gpus(pod)
        if release.values(target)["workers"].get("sameNode"):
            assert len({p["spec"]["nodeName"] for p in pods}) == 1, "workers.sameNode spread the workers"

    def test_should_leave_workers_that_cannot_fit_pending(self, workers, release, k8s, target, nodes):
        plan = dgd_workers(find(render_chart(values=release.values(target)), "DynamoGraphDeployment"))
        role, worker = max(plan.items(), key=lambda item: item[1]["gpus"])
        selector = worker["pod_spec"]["nodeSelector"]
        capacity = sum(kube.gpus(n) for n in nodes if kube.matches_selector(n, selector))
        assert capacity, f"the cluster has no fake GPU node labelled {selector} (run ci/kind-setup.sh)"
        # One replica more than every matching GPU can hold, so at least one pod cannot be placed.
        replicas = capacity // worker["gpus"] + 1
        release.install(target, {"workers": {ROLE_KEYS[role]: {"replicas": replicas}}})
        workers(release)

        def unschedulable():
            for pod in k8s.pods(release.namespace, worker_selector(release)):
                conditions = {c["type"]: c for c in pod["status"].get("conditions") or []}
                scheduled = conditions.get("PodScheduled", {})
                if not pod["spec"].get("nodeName") and scheduled.get("reason") == "Unschedulable":
                    return pod
            return None

        pod = kube.wait_for("a worker pod the scheduler marks Unschedulable", unschedulable, timeout=300,
                            explain=lambda: k8s.describe_events(release.namespace))
        events = kube.wait_for(
            f"a FailedScheduling event for {pod['metadata']['name']}",
            lambda: [e for e in k8s.events(release.namespace, pod["metadata"]["name"])
                     if e.get("reason") == "FailedScheduling"],
            timeout=60)
        assert any(kube.GPU in (e.get("message") or "") for e in events), [e.get("message") for e in events]
        assert pod["status"]["phase"] == "Pending"
