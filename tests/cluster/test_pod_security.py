"""PodSecurity `restricted`: every namespace the tier installs into enforces it, and every chart pod is admitted.

The chart's pods are checked by the API server's own PodSecurity admission with server-side dry-run creates
(admission runs, nothing is stored), so no kubelet or controller is needed: the download Job's and the
trtllm-serve Deployment's pod templates as stored, and the `helm test` hook pods (smoke test, benchmark Job) as
rendered. The DGD's pods are made by the real Dynamo operator on the node tests' plane, under the same admission
(tests/cluster/test_operator.py).
"""
from __future__ import annotations

import json

import pytest

from tests.cluster import kube
from tests.helpers import RUNTIMES, render_chart

pytestmark = pytest.mark.cluster

HOOK = "helm.sh/hook"


def admission_error(k8s: kube.Kube, namespace: str, pod: dict) -> str | None:
    """The API server's refusal of `pod` in `namespace` (dry run), or None when admitted."""
    from kubernetes.client.exceptions import ApiException
    try:
        k8s.core.create_namespaced_pod(namespace, pod, dry_run="All")
    except ApiException as error:
        try:
            return f"{error.status}: {json.loads(error.body)['message']}"
        except (ValueError, KeyError, TypeError):
            return f"{error.status}: {error.body}"
    return None


def as_pod(name: str, template: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": (template.get("metadata") or {}).get("labels", {})},
            "spec": template["spec"]}


def chart_pods(k8s: kube.Kube, release) -> dict[str, dict]:
    """Every pod the release makes, by a name saying where it comes from."""
    pods = {}
    for obj in release.manifest():
        if obj["kind"] in ("Job", "Deployment"):
            live = k8s.get(obj, release.namespace)
            pods[f"{obj['kind']}/{obj['metadata']['name']}"] = as_pod(obj["metadata"]["name"], live["spec"]["template"])
    return pods


def hook_pods(values: dict) -> dict[str, dict]:
    pods = {}
    for obj in render_chart(values=values):
        if HOOK not in (obj["metadata"].get("annotations") or {}):
            continue
        if obj["kind"] == "Pod":
            pods[f"hook Pod/{obj['metadata']['name']}"] = obj
        elif obj["kind"] == "Job":
            pods[f"hook Job/{obj['metadata']['name']}"] = as_pod(obj["metadata"]["name"], obj["spec"]["template"])
    return pods


class TestPodSecurity:
    def test_should_enforce_restricted_in_the_namespace(self, k8s, namespace):
        labels = k8s.core.read_namespace(namespace).metadata.labels
        assert labels.get("pod-security.kubernetes.io/enforce") == "restricted", labels

    def test_should_refuse_a_pod_that_breaks_restricted(self, k8s, namespace):
        # The control: PodSecurity admission is on in this API server (it is by default) and enforces the label.
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "not-restricted"},
               "spec": {"containers": [{"name": "c", "image": "docker.io/library/busybox:1.37.0",
                                        "securityContext": {"privileged": True}}]}}

        error = admission_error(k8s, namespace, pod)

        assert error is not None and 'violates PodSecurity "restricted:latest"' in error, error

    def test_should_admit_every_pod_of_the_chart(self, release, k8s, target):
        release.install(target)
        pods = chart_pods(k8s, release)
        assert any(name.startswith("Job/") for name in pods), pods.keys()
        if RUNTIMES[target] == "trtllm-serve":
            assert any(name.startswith("Deployment/") for name in pods), pods.keys()
        pods.update(hook_pods(release.values(target)))
        assert sum(name.startswith("hook ") for name in pods) == 2, pods.keys()

        refused = {name: error for name, pod in pods.items()
                   if (error := admission_error(k8s, release.namespace, pod)) is not None}

        assert not refused, "pods PodSecurity `restricted` refuses:\n" + "\n".join(f"{n}: {e}" for n, e in refused.items())
