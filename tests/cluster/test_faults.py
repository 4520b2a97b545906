"""Faults a release must survive, on a real API server (each test's name says fault, restart or rollback).

(a) kube-apiserver killed in the middle of `helm install` and started again: the retried install completes.
(b) etcd killed and started again on its data directory: every object and the release survive.
(c) an upgrade the chart's checks refuse changes nothing; one the API server refuses fails and `rollback`
    restores the previous revision; the model-cache PVC is never touched.
(d) uninstall while the download Job runs: the PVC survives and a reinstall downloads again (the script's
    resume and marker are proven by tests/e2e/test_download_resume.py).
(e) every target installed at once, each into its own namespace.
(a) and (b) kill processes, so they need the control plane of python -m ci.cluster control-plane (`control_plane` skips
elsewhere, saying why); the others run on any cluster.
"""
from __future__ import annotations

import json
import threading
import time

import pytest

from tests.cluster import kube
from tests.cluster.conftest import Release, create_namespace, delete_namespace
from tests.cluster.control import SlowProxy
from tests.cluster.test_release import CHANGED, CHANGED_TRTLLM_SERVE, SERVING_KINDS, bound_download_pod, download_job
from tests.helpers import DYNAMO_OVERLAYS, OVERLAYS, RUNTIMES, TRTLLM_SERVE_OVERLAYS, deep_merge

# heavy: its seconds in CI's cluster plane (python -m ci.cluster timings), so that pytest-xdist starts it first
pytestmark = [pytest.mark.cluster, pytest.mark.heavy(160)]

HELM_RELEASE = "meta.helm.sh/release-name"
# One target of each runtime for the faults that restart a component (each restart costs ~10s).
RESTART_TARGETS = [DYNAMO_OVERLAYS[0], TRTLLM_SERVE_OVERLAYS[0]]
RESTART_IDS = [t.removesuffix(".yaml") for t in RESTART_TARGETS]
# _check-gpu.tpl refuses this on every target (tests/chart/dynamo/test_topology.py: gb200-on-amd64).
CHART_REFUSES = {"gpu": {"type": "GB200", "nodeArch": "amd64"}}
CHART_REFUSAL = "gpu.type=GB200 runs only on ARM64 (Grace) nodes, but gpu.nodeArch=amd64; allowed: gpu.nodeArch=arm64"
# Values the chart renders but the API server refuses, and the server's words. Dynamo: a CEL rule of the
# DGD CRD (x-kubernetes-validations on each component); trtllm-serve: the cluster's own admission policy (the chart
# now refuses every pod field the API server would, so the refusal comes from a ValidatingAdmissionPolicy the test
# binds to the release's namespace: refused_by_policy).
REFUSED_LABEL = "gpt-oss.test/refused"
API_REFUSES = {
    # minAvailable passes the chart's admission rules only on a Grove-backed platform from Dynamo 1.3.0 (the
    # default 1.7 line's runtime is 1.7.0; an override to 1.3.0 would also skip minors from the installed 1.7.0).
    "dynamo": ({"dynamo": {"grove": True},
                "workers": {"componentFields": {"minAvailable": 99}}},
               "minAvailable must be less than or equal to replicas unless replicas is 0"),
    "trtllm-serve": ({"trtllmServe": {"nodeSelector": {REFUSED_LABEL: "yes"}}},
                     f"{REFUSED_LABEL}: this cluster's admission policy refuses the Deployment"),
}


def refused_by_policy(k8s: kube.Kube, namespace: str):
    """A ValidatingAdmissionPolicy, bound to `namespace` only, that refuses a Deployment whose pods select
    REFUSED_LABEL; returns its removal."""
    from kubernetes import client
    api = client.AdmissionregistrationV1Api(k8s.api_client)
    name = f"gpt-oss-refuse-{namespace}"
    selector = "object.spec.template.spec.nodeSelector"
    api.create_validating_admission_policy({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name},
        "spec": {"failurePolicy": "Fail",
                 "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                                         "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]},
                 "validations": [{"expression": f"!has({selector}) || !('{REFUSED_LABEL}' in {selector})",
                                  "message": API_REFUSES["trtllm-serve"][1]}]}})
    api.create_validating_admission_policy_binding({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": name, "validationActions": ["Deny"],
                 "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}}}})

    def remove():
        api.delete_validating_admission_policy_binding(name)
        api.delete_validating_admission_policy(name)

    # The API server compiles a new policy in the background: wait (bounded) until a dry run shows it refusing.
    from kubernetes.client.exceptions import ApiException
    probe = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "policy-probe"},
             "spec": {"selector": {"matchLabels": {"app": "probe"}},
                      "template": {"metadata": {"labels": {"app": "probe"}},
                                   "spec": {"nodeSelector": {REFUSED_LABEL: "yes"},
                                            "containers": [{"name": "c", "image": "registry.invalid/probe:1"}]}}}}
    deadline = time.monotonic() + 60
    while True:
        try:
            k8s.apps.create_namespaced_deployment(namespace, probe, dry_run="All")
        except ApiException as error:
            if REFUSED_LABEL in str(error.body):
                return remove
            raise
        if time.monotonic() > deadline:
            remove()
            raise AssertionError(f"the admission policy {name} did not refuse a Deployment within 60 s")
        time.sleep(0.5)


def stored(k8s: kube.Kube, namespace: str, instance: str) -> dict[tuple[str, str], dict]:
    """(kind, name) -> every object of the release the server holds (pods excepted: controllers own them), not
    being deleted."""
    selector = f"app.kubernetes.io/instance={instance}"
    lists = {
        "ConfigMap": k8s.core.list_namespaced_config_map, "Service": k8s.core.list_namespaced_service,
        "PersistentVolumeClaim": k8s.core.list_namespaced_persistent_volume_claim,
        "Job": k8s.batch.list_namespaced_job, "Deployment": k8s.apps.list_namespaced_deployment,
        "NetworkPolicy": k8s.networking.list_namespaced_network_policy,
        "PodDisruptionBudget": k8s.policy.list_namespaced_pod_disruption_budget,
    }
    found = {}
    for kind, list_call in lists.items():
        for item in list_call(namespace, label_selector=selector).items:
            if not item.metadata.deletion_timestamp:
                found[(kind, item.metadata.name)] = k8s.api_client.sanitize_for_serialization(item)
    for version in kube.API_VERSIONS:  # conversion None: whichever version is served lists every DGD
        try:
            listed = kube.read_json(k8s.custom.list_namespaced_custom_object(
                kube.GROUP, version.split("/")[1], namespace, kube.DGD_PLURAL, label_selector=selector,
                _preload_content=False))
        except Exception:
            continue
        found.update({("DynamoGraphDeployment", o["metadata"]["name"]): o for o in listed["items"]
                      if not o["metadata"].get("deletionTimestamp")})
        break
    return found


def assert_consistent(release: Release, k8s: kube.Kube) -> None:
    """One deployed revision and nothing pending; the server holds exactly the deployed manifest's objects
    (none missing, no duplicate or orphan), each recorded as this release's."""
    history = release.history()
    assert history and history[-1][1] == "deployed", history
    assert not [h for h in history if h[1].startswith("pending")], f"a revision is stuck pending: {history}"
    assert [h for h in history if h[1] == "deployed"] == [history[-1]], f"more than one deployed revision: {history}"
    wanted = {(o["kind"], o["metadata"]["name"]) for o in release.manifest()}
    live = stored(k8s, release.namespace, release.name)
    assert set(live) == wanted, (f"missing {sorted(wanted - set(live))}, not in the release "
                                 f"(duplicates or orphans) {sorted(set(live) - wanted)}")
    unowned = [key for key, obj in live.items()
               if (obj["metadata"].get("annotations") or {}).get(HELM_RELEASE) != release.name]
    assert not unowned, f"objects not recorded as release {release.name}'s: {unowned}"


def uids(objects: dict[tuple[str, str], dict]) -> dict[tuple[str, str], str]:
    return {key: obj["metadata"]["uid"] for key, obj in objects.items()}


def contents(objects: dict[tuple[str, str], dict]) -> dict[tuple[str, str], dict]:
    """What a release sets on each object (uid, labels, annotations, spec or data), not what controllers report."""
    return {key: {"uid": obj["metadata"]["uid"], "labels": obj["metadata"].get("labels"),
                  "annotations": obj["metadata"].get("annotations"),
                  **{k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}}
            for key, obj in objects.items()}


def wait_api(k8s: kube.Kube, timeout: float = 120) -> None:
    def answers():
        try:
            k8s.core.list_namespace(limit=1, _request_timeout=5)
            return True
        except Exception:
            return False
    kube.wait_for("the API server to answer again", answers, timeout=timeout, interval=1)


def pvc_state(k8s: kube.Kube, namespace: str) -> dict:
    """What a client could change on the model-cache PVC: not its resourceVersion, which kube-controller-manager
    moves on its own from 1.37 (the status condition Unused flips when the last pod using the claim goes)."""
    pvc = k8s.core.read_namespaced_persistent_volume_claim(f"{Release.NAME}-model-cache", namespace)
    metadata = pvc.metadata
    return {"uid": metadata.uid, "spec": k8s.core.api_client.sanitize_for_serialization(pvc.spec),
            "labels": metadata.labels, "annotations": metadata.annotations, "finalizers": metadata.finalizers,
            "owners": metadata.owner_references, "deleting": metadata.deletion_timestamp is not None,
            "writers": sorted((entry.manager, entry.operation, str(entry.time)) for entry in metadata.managed_fields
                              if entry.subresource != "status")}


def settle_cache(k8s: kube.Kube, namespace: str, controllers: bool) -> None:
    """Where kube-controller-manager runs it binds the model-cache PVC to its PV; wait for that, so a later
    comparison sees no binding it did not cause."""
    if controllers:
        kube.wait_for("the model-cache PVC to be bound", lambda: k8s.core.read_namespaced_persistent_volume_claim(
            f"{Release.NAME}-model-cache", namespace).status.phase == "Bound", timeout=60, interval=0.5)


@pytest.mark.serial  # kills the kube-apiserver every other test talks to
class TestApiServerFault:
    @pytest.mark.parametrize("target", RESTART_TARGETS, ids=RESTART_IDS)
    def test_should_complete_the_retried_install_after_an_apiserver_restart_mid_install(
            self, control_plane, cluster_access, release, k8s, target):
        # Helm behind a slow proxy: its requests trickle in, so the kill lands between two of its objects.
        port = int(cluster_access.kubeconfig.read_text().split("server: https://127.0.0.1:")[1].split()[0])
        proxy = SlowProxy(port)
        slow = Release(None, release.namespace, release.api_version,
                       kubeconfig_content=proxy.kubeconfig(cluster_access.kubeconfig))
        outcome = {}

        def install():
            try:
                outcome["release"] = slow.install(target)
            except Exception as error:  # the kill may or may not fail it; both are followed by the retry
                outcome["error"] = error

        thread = threading.Thread(target=install, daemon=True)
        thread.start()
        selector = f"owner=helm,name={release.name}"

        def midway():
            records = k8s.core.list_namespaced_secret(release.namespace, label_selector=selector).items
            if [r for r in records if r.metadata.labels.get("status") == "pending-install"]:
                return stored(k8s, release.namespace, release.name)  # once the first object exists
            return None

        # 300 s: behind the node's tests (niceness 10, ci/test-tiers.sh) on a loaded CI machine, trtllm-serve's install
        # took more than 120 s to reach its first object through the proxy.
        created = kube.wait_for("helm's release record pending-install and its first object created", midway,
                                timeout=300, interval=0.05)
        assert thread.is_alive(), "the install was over before the API server could be killed"
        control_plane.kill("kube-apiserver")
        time.sleep(3)
        control_plane.start("kube-apiserver")
        thread.join(300)
        assert not thread.is_alive(), "helm install hung after the API server came back"
        slow.close()
        proxy.close()
        wait_api(k8s)

        # The retry a user runs (docs/cluster-tests.md): a release left pending-install or failed cannot be
        # upgraded, so it is uninstalled (the model-cache PVC is kept) and installed again.
        history = release.history()
        if history and history[-1][1] != "deployed":
            release.uninstall()
            release.install(target)
        assert_consistent(release, k8s)
        assert release.history() == [(1, "deployed")], (release.history(), outcome)
        assert len(created) < len(release.manifest()), f"the kill came after every object was created: {list(created)}"


@pytest.mark.serial  # kills the etcd every other test's objects live in
class TestEtcdFault:
    @pytest.mark.parametrize("target", RESTART_TARGETS, ids=RESTART_IDS)
    def test_should_keep_every_object_and_the_release_across_an_etcd_restart(self, control_plane, release, k8s,
                                                                              target):
        release.install(target)
        before = stored(k8s, release.namespace, release.name)
        manifest = release.manifest()

        control_plane.restart("etcd", down_seconds=3)
        wait_api(k8s)

        assert uids(stored(k8s, release.namespace, release.name)) == uids(before)
        assert release.history() == [(1, "deployed")]
        assert release.manifest() == manifest
        assert_consistent(release, k8s)
        # Still a working release: the next upgrade goes through.
        upgraded = release.upgrade(target, CHANGED_TRTLLM_SERVE if RUNTIMES[target] == "trtllm-serve" else CHANGED)
        assert upgraded["revision"] == 2 and upgraded["status"] == "deployed", upgraded


class TestUpgradeFault:
    def test_should_leave_the_previous_revision_untouched_on_a_chart_refused_upgrade_fault(self, release, k8s,
                                                                                          target, controllers):
        import helm_python
        release.install(target)
        settle_cache(k8s, release.namespace, controllers)
        before = stored(k8s, release.namespace, release.name)

        with pytest.raises(helm_python.HelmError) as error:
            release.upgrade(target, CHART_REFUSES)

        assert CHART_REFUSAL in str(error.value)
        assert release.history() == [(1, "deployed")]
        assert contents(stored(k8s, release.namespace, release.name)) == contents(before)

    def test_should_rollback_to_the_previous_revision_after_an_api_refused_upgrade(self, release, k8s, target,
                                                                                   controllers):
        import helm_python
        runtime = RUNTIMES[target]
        release.install(target)
        settle_cache(k8s, release.namespace, controllers)
        first = {(o["kind"], o["metadata"]["name"]): o for o in release.manifest()}
        pvc = pvc_state(k8s, release.namespace)
        refusing, refusal = API_REFUSES[runtime]
        # A new download Job (changed pod template) comes before the refused object in Helm's order.
        changed = CHANGED_TRTLLM_SERVE if runtime == "trtllm-serve" else CHANGED

        remove_policy = refused_by_policy(k8s, release.namespace) if runtime == "trtllm-serve" else (lambda: None)
        try:
            with pytest.raises(helm_python.HelmError) as error:
                release.upgrade(target, deep_merge(changed, refusing))
        finally:
            remove_policy()

        assert refusal in str(error.value), str(error.value)
        assert release.history() == [(1, "deployed"), (2, "failed")]
        assert pvc_state(k8s, release.namespace) == pvc

        release.helm.rollback(release.name, version=1, timeout=180, wait="hookOnly")

        assert release.history() == [(1, "superseded"), (2, "failed"), (3, "deployed")]
        assert {(o["kind"], o["metadata"]["name"]) for o in release.manifest()} == set(first)
        assert_consistent(release, k8s)
        serving = next(o for key, o in first.items() if key[0] in SERVING_KINDS[runtime])
        problems = kube.subset_diff(kube.comparable(serving), k8s.get(serving, release.namespace))
        assert not problems, f"{serving['kind']} is not back at revision 1: {problems}"
        assert pvc_state(k8s, release.namespace) == pvc


class TestUninstallFault:
    def test_should_download_again_after_an_uninstall_fault_during_the_download(self, job_pods, scheduler, release,
                                                                              k8s, target):
        release.install(target)
        job = download_job(release.manifest())
        bound_download_pod(k8s, release.namespace, job["metadata"]["name"])  # the Job runs: its pod has a node
        settle_cache(k8s, release.namespace, True)
        pvc = pvc_state(k8s, release.namespace)
        marker = next(e["value"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"] if e["name"] == "MARKER")

        release.uninstall()
        kube.wait_for("the download Job and its pod to be gone",
                      lambda: not k8s.pods(release.namespace, f"job-name={job['metadata']['name']}") and
                      k8s.get(job, release.namespace) is None, timeout=120)

        assert pvc_state(k8s, release.namespace) == pvc, "the uninstall touched the model-cache PVC"
        release.install(target)

        # The reinstall starts the download again (the script resumes what is on the volume and writes the
        # marker only when complete), and what serves the model still waits for that marker.
        again = k8s.get(job, release.namespace)
        assert again is not None, "the reinstall did not start the download Job again"
        assert not (again.get("status") or {}).get("succeeded")
        assert pvc_state(k8s, release.namespace)["uid"] == pvc["uid"]
        for obj in release.manifest():
            if obj["kind"] in SERVING_KINDS[RUNTIMES[target]] - {"Service"}:
                assert marker in json.dumps(k8s.get(obj, release.namespace)), (
                    f"{obj['kind']}/{obj['metadata']['name']} does not wait for {marker}")


class TestConcurrentInstalls:
    def test_should_install_every_target_at_once_without_a_fault(self, cluster_access, dgd_api, k8s):
        namespaces = {target: create_namespace(k8s) for target in OVERLAYS}
        releases = {target: Release(cluster_access.kubeconfig, ns, dgd_api) for target, ns in namespaces.items()}
        results = {}

        def install(target):
            try:
                results[target] = releases[target].install(target)
            except Exception as error:
                results[target] = error

        threads = [threading.Thread(target=install, args=(t,), daemon=True) for t in OVERLAYS]
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(600)
            failed = {t: str(r) for t, r in results.items() if isinstance(r, Exception)}
            assert not failed and len(results) == len(OVERLAYS), f"installs that failed: {failed}; done: {list(results)}"
            for target, release in releases.items():
                assert results[target]["status"] == "deployed", (target, results[target]["status"])
                assert_consistent(release, k8s)
        finally:
            for release in releases.values():
                release.close()
            for namespace in namespaces.values():
                delete_namespace(k8s, namespace)
