"""The real Dynamo operator in the cluster, installed the way users install it.

`helm install` (helm-python-sdk) of the platform chart's operator component, `components/operator` of the shared
platform chart archive (the Go part dynamo-operator keeps it beside the binaries it built from the same commit): its
Deployment, RBAC, webhook configurations and Service, the operator's config file, and certificates in `auto` mode
(the operator makes its own CA and serving certificate and injects the CA into its webhooks and the CRDs' conversion
webhooks). The image is ci.cluster.node_images's `dynamo-operator`, the binaries built here, so the operator runs as a pod
on the kubelet node (python -m ci.cluster node) and the API server reaches its webhooks through the Service (kube-proxy). Its
crd-apply init container applies the CRDs from its image, as upstream's does.

Values on top of the component's defaults, each what a user of a small cluster would set:
  controllerManager.manager.image     the image built here (its tag: <appVersion>-dev.<commit>), pullPolicy Never
  discoveryBackend: kubernetes        the platform chart's default (the component refuses to render without one)
  controllerManager.tolerations       the node's taint (ci.cluster.node NODE_TAINT), so it may run there, and
  controllerManager.affinity          that node's hostname (the API-only nodes would bind it and never run it)
Grove, LWS, KAI, Volcano, checkpoints: off (global.* unset: the operator's config says grove/kaiScheduler false;
no LeaderWorkerSet CRD in the cluster, so the operator runs no LWS path).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from ci.cluster import dynamo_operator as SOURCE
from ci.cluster import node as NODE
from tests.cluster import kube

NAMESPACE = "dynamo-system"
RELEASE = "dynamo-operator"  # fullname dynamo-operator: the Service the upstream CRDs' conversion names
WEBHOOK_SERVICE = f"{RELEASE}-webhook-service"
DEPLOYMENT = f"{RELEASE}-controller-manager"
# What the operator's field manager is called in managedFields (controller-runtime: the binary's name).
FIELD_MANAGER = "manager"


def chart_dir() -> Path | None:
    built = SOURCE.built()
    return built / "platform" / "components" / "operator" if built else None


def values() -> dict:
    repository, tag = SOURCE.image().rsplit(":", 1)
    return {
        "discoveryBackend": "kubernetes",
        "controllerManager": {
            "manager": {"image": {"repository": repository, "tag": tag, "pullPolicy": "Never"}},
            "tolerations": [{"key": NODE.NODE_TAINT["key"], "operator": "Equal", "value": NODE.NODE_TAINT["value"],
                             "effect": NODE.NODE_TAINT["effect"]}],
            # the kubelet node: the API-only nodes would bind it and never run it
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                       "values": [NODE.NODE_NAME]}]}]}}},
        },
    }


@dataclass
class Operator:
    """The installed operator: its release, version and image, and where to read what it did."""
    k8s: kube.Kube
    kubeconfig: Path
    version: str  # the --operator-version its Deployment passes (the component's appVersion)
    image: str
    commit: str
    seconds: float  # helm install until its webhooks answered

    def pod(self) -> dict:
        pods = self.k8s.pods(NAMESPACE, "control-plane=controller-manager")
        running = [p for p in pods if p["status"].get("phase") == "Running"]
        assert running, f"no running operator pod in {NAMESPACE}: {[p['status'].get('phase') for p in pods]}"
        return running[0]

    def log(self, tail: int = 400) -> str:
        pod = self.pod()
        return self.k8s.core.read_namespaced_pod_log(pod["metadata"]["name"], NAMESPACE, container="manager",
                                                     tail_lines=tail)


def why_not(kubeconfig: Path) -> str | None:
    """None when the operator can be installed here, else why not."""
    from tests.cluster import node as real
    reason = real.why_no_node(kubeconfig)
    if reason:
        return f"the Dynamo operator runs as a pod on the kubelet node, and there is none: {reason}"
    return unbuilt() if chart_dir() is None else None


def unbuilt() -> str:
    """Why the operator's Go part is not there: its source is missing, or it is not built yet."""
    try:
        SOURCE.read_source()
    except SOURCE.SourceMissing as missing:
        return str(missing)
    return f"the Go part {SOURCE.PART} is not built (python -m ci.cluster go-parts build {SOURCE.PART})"


def webhook_answers(k8s: kube.Kube) -> str | None:
    """None when the operator's validating webhook judges a DGD (a server-side dry-run create it refuses for a reason
    only it gives), else what happened instead."""
    from kubernetes.client.exceptions import ApiException
    probe = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
             "metadata": {"name": "gpt-oss-webhook-probe"},
             "spec": {"components": [{"name": "Frontend", "type": "frontend", "podTemplate": {"spec": {
                 "containers": [{"name": "main", "image": "example.invalid/dynamo:not-a-version"}]}}}]}}
    try:
        k8s.custom.create_namespaced_custom_object("nvidia.com", "v1beta1", "default", "dynamographdeployments",
                                                   probe, dry_run="All")
    except ApiException as error:
        body = error.body if isinstance(error.body, str) else ""
        return None if "runtimeVersionOverride" in body else f"{error.status}: {body[:300]}"
    return "the dry-run create was admitted: the operator's webhook did not judge it"


def install(k8s: kube.Kube, kubeconfig: Path, timeout: float = 300) -> Operator:
    """helm install the operator component and wait until its webhooks answer; returns it."""
    import helm_python
    started = time.monotonic()
    helm = helm_python.Config(namespace=NAMESPACE, kubeconfig_path=str(kubeconfig))
    try:
        try:
            helm.status(RELEASE)
            exists = True
        except Exception:  # not installed (the tier's fresh plane)
            exists = False
        if exists:  # a plane a previous session left it on: the same chart, brought to these values
            helm.upgrade(str(chart_dir()), RELEASE, values(), namespace=NAMESPACE, wait="watcher",
                         timeout=int(timeout))
        else:
            helm.install(str(chart_dir()), RELEASE, values(), namespace=NAMESPACE, create_namespace=True,
                         wait="watcher", timeout=int(timeout))
        deployment = k8s.apps.read_namespaced_deployment(DEPLOYMENT, NAMESPACE)
        args = deployment.spec.template.spec.containers[0].args
        version = next(a.split("=", 1)[1] for a in args if a.startswith("--operator-version="))
        last = {"answer": None}

        def answers():
            last["answer"] = webhook_answers(k8s)
            return last["answer"] is None
        kube.wait_for("the Dynamo operator's webhook to judge a DGD", answers, timeout=timeout, interval=2,
                      explain=lambda: f"last answer: {last['answer']}")
    finally:
        helm.close()
    return Operator(k8s, kubeconfig, version, SOURCE.image(), SOURCE.read_source().commit,
                    round(time.monotonic() - started, 1))


def uninstall(kubeconfig: Path) -> None:
    import helm_python
    helm = helm_python.Config(namespace=NAMESPACE, kubeconfig_path=str(kubeconfig))
    try:
        helm.uninstall(RELEASE, timeout=120, wait="watcher")
    finally:
        helm.close()


def describe(k8s: kube.Kube) -> str:
    """The operator's pod states, events and log tail, for failure messages."""
    from tests.cluster import node as real
    return real.describe(k8s, NAMESPACE)


def status_json(obj: dict) -> str:
    return json.dumps(obj.get("status", {}), indent=1, sort_keys=True)[:3000]
