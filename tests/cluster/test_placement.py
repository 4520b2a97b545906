"""Where the GPU pods land on the fake GPU nodes (needs a kube-scheduler; skips without one).

trtllm-serve targets: the Deployment controller makes the pods. Dynamo targets: the real Dynamo operator makes
their worker pods, on the node tests' plane (tests/cluster/test_operator.py, which checks their placement), or here
on a cluster that runs an operator of its own (kind with --operator-chart: GPT_OSS_DYNAMO_OPERATOR=1).
Fake nodes run no GPU workload, so only binding (spec.nodeName) and scheduler events are asserted.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

import pytest

from tests.cluster import kube
from tests.helpers import (OVERLAYS, RUNTIMES, TRTLLM_SERVE_OVERLAYS, deep_merge, dgd_pods, dgd_workers, find, render_chart,
                           skip_for_missing_part)

pytestmark = [pytest.mark.cluster, pytest.mark.serial]  # the fake GPU nodes' capacity: other tests' pods would hold it

# The component label of the GPU pods, by runtime.
GPU_COMPONENT = {"dynamo": "worker", "trtllm-serve": "trtllm-serve"}
# DGD component name -> the workers.<key> values of that role.
ROLE_KEYS = {"TRTLLMWorker": "worker", "TRTLLMPrefillWorker": "prefill", "TRTLLMDecodeWorker": "decode"}


@dataclass
class GpuRole:
    """One kind of GPU pod of a release: how many, GPUs each, the node labels it selects, and the values
    that would give it N replicas."""
    name: str
    replicas: int
    gpus: int
    node_selector: dict
    values_for_replicas: Callable[[int], dict]


def gpu_roles(objects: list[dict], runtime: str) -> list[GpuRole]:
    if runtime == "trtllm-serve":
        deployment = find(objects, "Deployment")
        pod = deployment["spec"]["template"]["spec"]
        return [GpuRole(deployment["metadata"]["name"], deployment["spec"]["replicas"], kube.pod_gpus({"spec": pod}),
                        pod["nodeSelector"], lambda n: {"trtllmServe": {"replicas": n}})]
    return [GpuRole(name, worker["replicas"], worker["gpus"], worker["pod_spec"]["nodeSelector"],
                    lambda n, key=ROLE_KEYS[name]: {"workers": {key: {"replicas": n}}})
            for name, worker in dgd_workers(find(objects, "DynamoGraphDeployment")).items()]


def pod_selector(release, target) -> str:
    return f"app.kubernetes.io/instance={release.name},app.kubernetes.io/component={GPU_COMPONENT[RUNTIMES[target]]}"


# The Dynamo targets only where the cluster runs its own operator (kind): on the tier's planes they run under the real
# operator on the node's plane instead (tests/cluster/test_operator.py).
PLACED = OVERLAYS if os.environ.get("GPT_OSS_DYNAMO_OPERATOR", "").strip().lower() in {"1", "true", "yes", "on"} \
    else TRTLLM_SERVE_OVERLAYS


@pytest.fixture(params=PLACED, ids=[o.removesuffix(".yaml") for o in PLACED])
def target(request) -> str:
    return request.param


@pytest.fixture
def gpu_pods(scheduler, controllers, target):
    """start(release): the GPU pods of the installed release exist, made by their controller (the Deployment
    controller, or the cluster's Dynamo operator)."""
    if not controllers:
        skip_for_missing_part("the cluster has no kube-controller-manager, so the Deployment makes no pods")

    def start(release) -> None:
        return None
    return start


class TestGpuPlacement:
    def test_should_bind_gpu_pods_to_matching_gpu_nodes(self, gpu_pods, release, k8s, target):
        release.install(target)
        gpu_pods(release)
        roles = gpu_roles(release.manifest(), RUNTIMES[target])
        expected = sum(role.replicas for role in roles)
        selector = roles[0].node_selector

        pods = kube.wait_for(
            f"{expected} GPU pods bound to nodes",
            lambda: (lambda ps: ps if len(ps) == expected and all(p["spec"].get("nodeName") for p in ps)
                     else None)(k8s.pods(release.namespace, pod_selector(release, target))),
            timeout=300, explain=lambda: k8s.describe_events(release.namespace))

        nodes = {n["metadata"]["name"]: n for n in k8s.nodes()}
        wanted_gpus = sorted(role.gpus for role in roles for _ in range(role.replicas))
        assert sorted(kube.pod_gpus(p) for p in pods) == wanted_gpus, {role.name: role.gpus for role in roles}
        for pod in pods:
            node = nodes[pod["spec"]["nodeName"]]
            assert kube.matches_selector(node, selector), (
                f"{pod['metadata']['name']} is on {node['metadata']['name']}, whose labels do not match {selector}")
            assert kube.gpus(node) >= kube.pod_gpus(pod)
        if release.values(target).get("workers", {}).get("sameNode"):
            assert len({p["spec"]["nodeName"] for p in pods}) == 1, "workers.sameNode spread the workers"

    def test_should_leave_gpu_pods_that_cannot_fit_pending(self, gpu_pods, release, k8s, target, nodes):
        roles = gpu_roles(render_chart(values=release.values(target)), RUNTIMES[target])
        role = max(roles, key=lambda r: r.gpus)
        capacity = sum(kube.gpus(n) for n in nodes if kube.matches_selector(n, role.node_selector))
        assert capacity, f"the cluster has no fake GPU node labelled {role.node_selector} (ci/cluster/gpu-node-profiles.json)"
        # One replica more than every matching GPU can hold, so at least one pod cannot be placed. A single-node target
        # (workers.sameNode) is refused that many GPUs on its one node by the chart itself: spread, the scheduler decides.
        values = role.values_for_replicas(capacity // role.gpus + 1)
        if release.values(target).get("workers", {}).get("sameNode"):
            values = deep_merge(values, {"workers": {"sameNode": False}})
        release.install(target, values)
        gpu_pods(release)

        def unschedulable():
            for pod in k8s.pods(release.namespace, pod_selector(release, target)):
                conditions = {c["type"]: c for c in pod["status"].get("conditions") or []}
                scheduled = conditions.get("PodScheduled", {})
                if not pod["spec"].get("nodeName") and scheduled.get("reason") == "Unschedulable":
                    return pod
            return None

        pod = kube.wait_for("a GPU pod the scheduler marks Unschedulable", unschedulable, timeout=300,
                            explain=lambda: k8s.describe_events(release.namespace))
        # The scheduler may first fail the pod for its model-cache claim, until the PV controller binds it (a
        # few seconds): wait for the attempt that got as far as the GPUs.
        def failed_scheduling():
            events = [e for e in k8s.events(release.namespace, pod["metadata"]["name"])
                      if e.get("reason") == "FailedScheduling"]
            return events if any(kube.GPU in (e.get("message") or "") for e in events) else None

        events = kube.wait_for(
            f"a FailedScheduling event for {pod['metadata']['name']} naming {kube.GPU}", failed_scheduling,
            timeout=120, explain=lambda: k8s.describe_events(release.namespace))
        assert any(kube.GPU in (e.get("message") or "") for e in events), [e.get("message") for e in events]
        assert pod["status"]["phase"] == "Pending"
