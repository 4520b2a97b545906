"""The real Dynamo operator's admission webhooks for the cluster tier, without the kubelet node.

tests/cluster/operator.py runs the operator as a pod on the node (node tier). Here the same binary (`manager`, built by
`python -m ci.cluster go-parts build dynamo-operator` from the shared archives) runs as a host process on 127.0.0.1:
  * its configuration is the platform chart's own `operator-config.yaml` (helm-python-sdk render of the operator
    component, as a user with `namespaceRestriction` would install it), with the server section moved to loopback
    ports and `certProvisionMode: manual` (a CA and serving certificate for 127.0.0.1 made here, in its certDir);
  * `namespace.restricted` confines its controllers and caches to one namespace of the group, so it never reconciles
    another test's objects (the group only sends server-side dry-runs: nothing is ever stored for it to reconcile);
  * the DGD's validating and defaulting webhooks are registered with `clientConfig.url` (no Service: no kube-proxy
    here) and a namespaceSelector matching only the group's namespaces (a label with a per-run value). The operator's
    other webhooks (pods, DCDs, DGDRs, models, checkpoints) are not registered: the chart renders none of those, and a
    pod webhook would reach other tests' pods.
The operator's other CRDs (which its controllers watch: it exits without them) are installed with conversion None,
as tests/cluster/test_autoscaling.py installs the scaling adapter's (their conversion webhook names a Service that
does not exist here). stop() removes the webhook configurations first, then ends the process.
"""
from __future__ import annotations

import base64
import copy
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ci.cluster import dynamo_operator as SOURCE
from tests.cluster import kube
from tests.helpers import controllers

# The webhook paths of the platform chart's templates/webhook-configuration.yaml (DGD only).
VALIDATE_DGD = "/validate/nvidia.com/v1beta1/dynamographdeployments"
MUTATE_DGD = "/mutate/nvidia.com/v1beta1/dynamographdeployments"
# The executable's name in the process table: ci/cluster/processes.py SERVER_NAMES, so `control-plane leftovers`
# finds it if a run ever leaves it behind.
PROCESS_NAME = "dynamo-operator"
# sh -c script: $0 the namespace, then the operator's argv.
SERVICE_ACCOUNT_MOUNT = ('mount -t tmpfs gpt-oss-operator /run && mkdir -p /run/secrets/kubernetes.io/serviceaccount && '
                         'printf %s "$0" > /run/secrets/kubernetes.io/serviceaccount/namespace && exec "$@"')


def why_not() -> str | None:
    """None when the operator can run here, else why not."""
    from tests.cluster import operator
    return operator.unbuilt() if SOURCE.built() is None else None


def platform_config(namespace: str) -> dict:
    """The operator's configuration file as the platform chart's operator component renders it for a release
    restricted to `namespace` (upgradeCRD off: a namespaced release installs no CRDs)."""
    import helm_python
    from tests.cluster import operator
    values = {**operator.values(), "namespaceRestriction": {"enabled": True, "targetNamespace": namespace},
              "upgradeCRD": False}
    rendered = helm_python.Chart.load(str(operator.chart_dir())).render(values, name=operator.RELEASE,
                                                                         namespace=namespace, is_install=True)
    config_map = next(doc for template, text in rendered.items() if template.endswith("operator-config.yaml")
                      for doc in yaml.safe_load_all(text) if doc)
    return yaml.safe_load(config_map["data"]["config.yaml"])


ADAPTER_CRD_FILE = "nvidia.com_dynamographdeploymentscalingadapters.yaml"


def adapter_crd() -> dict:
    """The scaling adapter's CRD as tests/cluster/test_autoscaling.py installs it (same document, same lock), so
    pytest-xdist workers installing it at once do not race."""
    from tests.helpers.schemas import crd_file
    from tools.gptoss.yaml_text import load_yaml
    adapter = load_yaml(crd_file(ADAPTER_CRD_FILE).read_text())
    adapter["spec"]["conversion"] = {"strategy": "None"}
    return adapter


def other_crds() -> list[dict]:
    """The operator's CRDs besides the DGD's (the dgd_api fixture owns it) and the scaling adapter's (adapter_crd),
    conversion None."""
    documents = []
    for path in sorted((SOURCE.built() / "crds").glob("*.yaml")):
        if path.name in (kube.DGD_CRD_FILE, ADAPTER_CRD_FILE):
            continue
        crd = yaml.safe_load(path.read_text())
        if crd["spec"].get("conversion", {}).get("strategy") == "Webhook":
            crd["spec"]["conversion"] = {"strategy": "None"}
        documents.append(crd)
    return documents


def webhook_configurations(name: str, port: int, ca: bytes, label: str, value: str) -> list[tuple[str, dict]]:
    """The DGD's validating and mutating webhook configurations, pointing at https://127.0.0.1:<port>."""
    def hook(kind: str, path: str) -> dict:
        return {"name": f"{kind}dynamographdeployment.kb.io", "admissionReviewVersions": ["v1"],
                "clientConfig": {"url": f"https://127.0.0.1:{port}{path}", "caBundle": base64.b64encode(ca).decode()},
                "failurePolicy": "Fail", "sideEffects": "None", "timeoutSeconds": 10,
                "namespaceSelector": {"matchLabels": {label: value}},
                "rules": [{"apiGroups": ["nvidia.com"], "apiVersions": ["v1beta1"],
                           "operations": ["CREATE", "UPDATE"], "resources": ["dynamographdeployments"]}]}
    return [("ValidatingWebhookConfiguration", {"metadata": {"name": f"{name}-validating"},
                                                "webhooks": [hook("v", VALIDATE_DGD)]}),
            ("MutatingWebhookConfiguration", {"metadata": {"name": f"{name}-mutating"},
                                              "webhooks": [hook("m", MUTATE_DGD)]})]


def webhook_answers(k8s: kube.Kube, namespace: str) -> str | None:
    """None when the operator's validating webhook judges a DGD in `namespace` (it refuses an unreadable image tag
    for a reason only it gives: tests/cluster/operator.py's probe), else what happened instead."""
    from kubernetes.client.exceptions import ApiException
    probe = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
             "metadata": {"name": "gpt-oss-webhook-probe"},
             "spec": {"components": [{"name": "Frontend", "type": "frontend", "podTemplate": {"spec": {
                 "containers": [{"name": "main", "image": "example.invalid/dynamo:not-a-version"}]}}}]}}
    try:
        k8s.custom.create_namespaced_custom_object("nvidia.com", "v1beta1", namespace, "dynamographdeployments",
                                                   probe, dry_run="All")
    except ApiException as error:
        body = error.body if isinstance(error.body, str) else ""
        return None if "runtimeVersionOverride" in body else f"{error.status}: {body[:300]}"
    return "the dry-run create was admitted: the operator's webhook did not judge it"


@dataclass
class HostOperator:
    """The operator process and the webhook configurations registered for it."""
    process: controllers.Process
    port: int
    registered: list[tuple[str, str]] = field(default_factory=list)  # (kind, name)
    seconds: float = 0.0

    def tail(self, lines: int = 60) -> str:
        return self.process.tail(lines)

    def stop(self, k8s: kube.Kube) -> None:
        """Remove the webhook configurations (first: a configuration without its server would refuse every DGD of
        its namespaces), then end the process."""
        from kubernetes import client
        api = client.AdmissionregistrationV1Api(k8s.api_client)
        try:
            for kind, name in self.registered:
                try:
                    (api.delete_validating_webhook_configuration if kind.startswith("Validating")
                     else api.delete_mutating_webhook_configuration)(name)
                except client.exceptions.ApiException as error:
                    if not kube.is_not_found(error):
                        raise
        finally:
            self.process.stop()


def start(k8s: kube.Kube, kubeconfig: Path, folder: Path, namespace: str, label: str, value: str,
          timeout: float = 120) -> HostOperator:
    """Run the operator restricted to `namespace`, its DGD webhooks judging the namespaces labelled label=value; wait
    until its validating webhook answers in `namespace`. On failure, whatever was started is stopped."""
    from ci.cluster.control_plane import free_port
    from kubernetes import client
    started = time.monotonic()
    built = SOURCE.built()
    controllers.install_crds(k8s.api_client, kubeconfig, [adapter_crd()], "scaling-crds")
    controllers.install_crds(k8s.api_client, kubeconfig, other_crds(), "dynamo-operator-crds")
    folder.mkdir(parents=True, exist_ok=True)
    pki = controllers.write_serving_pki(folder / "certs", ["127.0.0.1"])
    config = copy.deepcopy(platform_config(namespace))
    port = free_port()
    config["server"] = {
        "metrics": {"bindAddress": "127.0.0.1", "port": free_port(), "secure": False},
        "healthProbe": {"bindAddress": "127.0.0.1", "port": free_port()},
        "webhook": {"host": "127.0.0.1", "port": port, "certDir": str(pki["cert"].parent),
                    "certProvisionMode": "manual", "secretName": "unused-manual-mode",
                    "serviceName": "unused-url-webhooks"},
    }
    config["leaderElection"] = {"enabled": False}  # one process; a Lease would outlive a killed run
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    executable = folder / PROCESS_NAME
    if not executable.exists():
        executable.symlink_to(built / "bin" / "manager")
    argv = [str(executable), f"--config={folder / 'config.yaml'}", f"--operator-version={SOURCE.release()}",
            f"--operator-image={SOURCE.image()}", "--operator-image-pull-policy=Never"]
    # The operator reads its own namespace from the pod's service-account mount, a fixed path
    # (/var/run/secrets/kubernetes.io/serviceaccount/namespace, internal/cert getOperatorNamespace), even in manual
    # certificate mode. A private mount namespace gives it that file on a tmpfs over /run: the host's /run is not
    # touched, and unshare and sh exec, so the recorded pid is the manager's.
    process = controllers.Process(["unshare", "--mount", "--propagation", "private", "sh", "-c", SERVICE_ACCOUNT_MOUNT,
                                   namespace, *argv], folder / "operator.log",
                                  {"KUBECONFIG": str(kubeconfig), "POD_NAMESPACE": namespace})
    operator = HostOperator(process, port)
    try:
        api = client.AdmissionregistrationV1Api(k8s.api_client)
        name = f"gpt-oss-generated-{value}"
        for kind, body in webhook_configurations(name, port, pki["ca"].read_bytes(), label, value):
            body = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, **body}
            (api.create_validating_webhook_configuration if kind.startswith("Validating")
             else api.create_mutating_webhook_configuration)(body)
            operator.registered.append((kind, body["metadata"]["name"]))
        last = {"answer": None}

        def answers():
            if not process.running():
                raise AssertionError(f"the Dynamo operator exited:\n{process.tail()}")
            last["answer"] = webhook_answers(k8s, namespace)
            return last["answer"] is None
        kube.wait_for("the Dynamo operator's webhook (host process) to judge a DGD", answers, timeout=timeout,
                      interval=1, explain=lambda: f"last answer: {last['answer']}\n{process.tail()}")
    except BaseException:
        operator.stop(k8s)
        raise
    operator.seconds = round(time.monotonic() - started, 1)
    return operator


def describe(operator: HostOperator) -> str:
    return json.dumps({"port": operator.port, "registered": operator.registered}) + "\n" + operator.tail()
