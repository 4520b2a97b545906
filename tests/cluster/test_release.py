"""Install, upgrade, uninstall and reinstall every target in a live cluster, for both DGD API versions.

Each test owns a fresh namespace. No test waits for a Running pod or a finished Job: it asserts what
the API server stored and where the scheduler bound pods.
"""
from __future__ import annotations

import pytest

from tests.cluster import kube
from tests.helpers import OVERLAYS, RUNTIMES, dgd_components, dgd_workers, find

# heavy: its seconds in CI's cluster plane (python -m ci.cluster timings), so that pytest-xdist starts it first
pytestmark = [pytest.mark.cluster, pytest.mark.heavy(390)]

# The value an upgrade changes in the download Job's immutable pod template, and one in the serving objects.
CHANGED = {"modelCache": {"download": {"transfer": "xet"}}, "frontend": {"replicas": 2}}
CHANGED_TRTLLM_SERVE = {"modelCache": CHANGED["modelCache"], "trtllmServe": {"replicas": 2}}
# What serves the model, by runtime: the kinds an install must create and an uninstall remove.
SERVING_KINDS = {"dynamo": {"DynamoGraphDeployment"}, "trtllm-serve": {"Deployment", "Service"}}
# Each target upgraded to the next one: every target is once the source and once the destination.
SWITCHES = [(OVERLAYS[i], OVERLAYS[(i + 1) % len(OVERLAYS)]) for i in range(len(OVERLAYS))]
SWITCH_IDS = [(a.removesuffix(".yaml"), b.removesuffix(".yaml")) for a, b in SWITCHES]


def release_objects(k8s: kube.Kube, namespace: str, release: str) -> dict[str, list[str]]:
    """What of the release's labelled objects still exists in the namespace, by kind."""
    selector = f"app.kubernetes.io/instance={release}"
    found = {
        "ConfigMap": [c.metadata.name for c in k8s.core.list_namespaced_config_map(namespace, label_selector=selector).items],
        "Job": [j.metadata.name for j in k8s.batch.list_namespaced_job(namespace, label_selector=selector).items],
        "Pod": [p.metadata.name for p in k8s.core.list_namespaced_pod(namespace, label_selector=selector).items],
        "Deployment": [d.metadata.name for d in k8s.apps.list_namespaced_deployment(namespace, label_selector=selector).items],
        "Service": [s.metadata.name for s in k8s.core.list_namespaced_service(namespace, label_selector=selector).items],
        "PersistentVolumeClaim": [p.metadata.name for p in k8s.core.list_namespaced_persistent_volume_claim(
            namespace, label_selector=selector).items if not p.metadata.deletion_timestamp],
    }
    for version in kube.API_VERSIONS:  # whichever is served; conversion None lists every object in each
        try:
            listed = kube.read_json(k8s.custom.list_namespaced_custom_object(
                kube.GROUP, version.split("/")[1], namespace, kube.DGD_PLURAL, _preload_content=False))
        except Exception:
            continue
        found["DynamoGraphDeployment"] = [o["metadata"]["name"] for o in listed["items"]]
        break
    return {kind: names for kind, names in found.items() if names}


def download_job(objects: list[dict]) -> dict:
    return find(objects, "Job")


def bound_download_pod(k8s: kube.Kube, namespace: str, job_name: str) -> dict:
    def bound():
        pods = [p for p in k8s.pods(namespace, f"job-name={job_name}") if p["spec"].get("nodeName")]
        return pods[0] if pods else None

    return kube.wait_for(f"a pod of Job {namespace}/{job_name} bound to a node", bound, timeout=180,
                         explain=lambda: k8s.describe_events(namespace))


class TestInstall:
    def test_should_store_every_rendered_object_unchanged(self, release, k8s, target):
        release.install(target)

        objects = release.manifest()
        assert {o["kind"] for o in objects} >= {"PersistentVolumeClaim", "ConfigMap", "Job"} | SERVING_KINDS[RUNTIMES[target]]
        problems = []
        for obj in objects:
            live = k8s.get(obj, release.namespace)
            if live is None:
                problems.append(f"{obj['kind']}/{obj['metadata']['name']}: missing")
                continue
            # The schema prunes unknown fields silently; a dropped field means the CRD does not know it.
            problems += [f"{obj['kind']}/{obj['metadata']['name']}{p}"
                         for p in kube.subset_diff(kube.comparable(obj), live)]
        assert not problems, "the API server did not keep what the chart rendered:\n" + "\n".join(problems)

    def test_should_store_the_dgd_in_the_api_version_under_test(self, release, k8s, target, dgd_api):
        if RUNTIMES[target] != "dynamo":
            pytest.skip(f"{target} renders no DynamoGraphDeployment")
        release.install(target)

        dgd = find(release.manifest(), "DynamoGraphDeployment")
        live = k8s.get(dgd, release.namespace)
        assert live is not None and live["apiVersion"] == dgd_api
        assert dgd_workers(live) == dgd_workers(dgd)

    def test_should_bind_the_download_pod_to_a_node_without_gpus(self, job_pods, scheduler, release, k8s, target,
                                                                  nodes):
        assert any(kube.gpus(n) == 0 and kube.is_schedulable_without_tolerations(n) for n in nodes), (
            "the cluster has no untainted node without GPUs for the download Job (ci/cluster/kind-setup.sh makes one)")
        release.install(target)

        job = download_job(release.manifest())
        pod = bound_download_pod(k8s, release.namespace, job["metadata"]["name"])
        node = next(n for n in k8s.nodes() if n["metadata"]["name"] == pod["spec"]["nodeName"])
        labels = node["metadata"].get("labels", {})
        assert kube.gpus(node) == 0 and labels.get(kube.GPU_PRESENT) != "true", (
            f"download pod {pod['metadata']['name']} is on {node['metadata']['name']}, a GPU node "
            f"({kube.GPU}={kube.gpus(node)}, {kube.GPU_PRESENT}={labels.get(kube.GPU_PRESENT)})")


class TestUpgrade:
    def test_should_replace_the_download_job_when_its_pod_template_changes(self, release, k8s, target):
        release.install(target)
        old_job = download_job(release.manifest())["metadata"]["name"]

        # A patched pod template would be rejected (immutable); the chart renames the Job instead.
        upgraded = release.upgrade(target, CHANGED_TRTLLM_SERVE if RUNTIMES[target] == "trtllm-serve" else CHANGED)

        assert upgraded["revision"] == 2 and upgraded["status"] == "deployed", upgraded
        objects = release.manifest()
        new_job = download_job(objects)["metadata"]["name"]
        assert new_job != old_job
        assert k8s.get({"kind": "Job", "metadata": {"name": new_job}}, release.namespace) is not None
        kube.wait_for(f"old Job {old_job} to be deleted",
                      lambda: k8s.get({"kind": "Job", "metadata": {"name": old_job}}, release.namespace) is None,
                      timeout=120)

    def test_should_apply_a_changed_value_to_the_serving_objects(self, release, k8s, target):
        release.install(target)

        if RUNTIMES[target] == "trtllm-serve":
            release.upgrade(target, CHANGED_TRTLLM_SERVE)
            live = k8s.get(find(release.manifest(), "Deployment"), release.namespace)
            assert live["spec"]["replicas"] == 2
            return
        release.upgrade(target, CHANGED)

        dgd = find(release.manifest(), "DynamoGraphDeployment")
        live = k8s.get(dgd, release.namespace)
        assert dgd_components(live)["Frontend"]["replicas"] == 2

    @pytest.mark.parametrize(("from_target", "to_target"), SWITCHES, ids=[f"{a}-to-{b}" for a, b in SWITCH_IDS])
    def test_should_switch_to_another_target_or_say_why_not(self, release, k8s, from_target, to_target):
        import helm_python
        release.install(from_target)

        try:
            release.upgrade(to_target)
        except helm_python.HelmError as error:
            message = str(error)
            # Acceptable only as the API server's verdict on a named object, not a timeout or a crash.
            assert release.name in message and ("invalid" in message.lower() or "immutable" in message.lower()), (
                f"upgrade {from_target} -> {to_target} failed without a clear reason: {message}")
            assert "deadline" not in message and "timed out" not in message, message
            return
        left = release_objects(k8s, release.namespace, release.name)
        for kind in SERVING_KINDS[RUNTIMES[from_target]] - SERVING_KINDS[RUNTIMES[to_target]]:
            assert kind not in left, f"upgrade {from_target} -> {to_target} left the old runtime's {kind}: {left}"
        if RUNTIMES[to_target] == "trtllm-serve":
            deployment = find(release.manifest(), "Deployment")
            live = k8s.get(deployment, release.namespace)
            assert live["spec"]["template"]["spec"]["containers"][0]["args"] == \
                deployment["spec"]["template"]["spec"]["containers"][0]["args"]
            return
        dgd = find(release.manifest(), "DynamoGraphDeployment")
        live = k8s.get(dgd, release.namespace)
        assert dgd_workers(live) == dgd_workers(dgd), f"upgrade {from_target} -> {to_target} left the old workers"


class TestUninstall:
    def test_should_remove_everything_but_the_model_cache(self, release, k8s, target):
        release.install(target)
        claim = find(release.manifest(), "PersistentVolumeClaim")["metadata"]["name"]
        assert set(release_objects(k8s, release.namespace, release.name)) >= {"ConfigMap", "Job"} | SERVING_KINDS[
            RUNTIMES[target]]

        release.uninstall()

        # Pods go with their Job (garbage collector), workers with the DGD (operator), so wait for them.
        left = kube.wait_for(
            "the release's objects other than the model-cache PVC to be deleted",
            lambda: (lambda found: found if set(found) == {"PersistentVolumeClaim"} else None)(
                release_objects(k8s, release.namespace, release.name)),
            timeout=180, explain=lambda: str(release_objects(k8s, release.namespace, release.name)))
        assert left == {"PersistentVolumeClaim": [claim]}

    def test_should_reuse_the_kept_cache_on_reinstall(self, release, k8s, target):
        release.install(target)
        pvc = find(release.manifest(), "PersistentVolumeClaim")
        before = k8s.get(pvc, release.namespace)
        release.uninstall()
        kube.wait_for("the release's Jobs to be deleted",
                      lambda: "Job" not in release_objects(k8s, release.namespace, release.name), timeout=120)

        release.install(target)

        after = k8s.get(pvc, release.namespace)
        assert after["metadata"]["uid"] == before["metadata"]["uid"], "reinstall replaced the model-cache PVC"
        assert after["spec"].get("volumeName") == before["spec"].get("volumeName")
        assert any(o["kind"] == "PersistentVolumeClaim" for o in release.manifest()), "the release did not adopt the PVC"
        job = download_job(release.manifest())
        claims = [v["persistentVolumeClaim"]["claimName"] for v in job["spec"]["template"]["spec"]["volumes"]
                  if "persistentVolumeClaim" in v]
        assert claims == [pvc["metadata"]["name"]]
