"""The chart's NetworkPolicies, enforced by a real policy engine on the kubelet node (issue 47).

kube-router, with its network-policy controller alone (ci/cluster/node/policies.py), enforces the policies of a
trtllm-serve release and of a Dynamo release, both with networkPolicy.enabled, on the node of ci/cluster/node. Every path
of PATHS is tried from a pod's own network namespace (tests/cluster/netprobe.py: the packets leave the pod's interface
with its address), and each must be open or closed as the table says; every target is first checked to listen (from
the host, which kube-router always lets through), so a closed path is one the policies closed.

The sources are the release's own pods where they run (the trtllm-serve server, the Dynamo frontend stand-in of
test_node.py) and, for the roles whose pods come and go (the download Job, the test hooks) or that the tier has no
pod for (a Dynamo worker, NATS and etcd: the operator and the platform are not here), stand-in pods carrying exactly
the labels the chart renders for that role (a `sleep`, or a Python listener). The download Jobs themselves run
and finish under the policies, from the fake Hub (the chart's Hub mirror on the node's address).

Prometheus is a pod with its labels (app.kubernetes.io/name=prometheus) in the platform namespace, the one the
releases' networkPolicy.prometheus names; the same labels in the releases' own namespaces make impostors, which
must reach neither the worker's system port nor trtllm-serve's port (where its metrics share the API).

Beyond each release's own pods: a pod with no label of the chart, a pod labelled as another release
(app.kubernetes.io/instance: other) in the same namespace, the other release's pods in the other namespace, pods in a
"platform" namespace (NATS and etcd stand-ins, and a client there: the trtllm-serve release names that namespace in
networkPolicy.clients), and the test host (ci/cluster/node/policies.py): an address of the node's own (198.18.0.2)
that no policy names, listening on the ports the policies open somewhere (53, 443, 2379, 4222, 6443, and the fake
Hub's 8780) and on one they open nowhere (8080).

MUTATIONS show that the probes see the policies and nothing else: each removes one rule, or widens one to any address,
in the live NetworkPolicies, and the path that rule decides flips; the rendered policy put back, it flips back.
The last test stops the engine and the test host and checks that the host's iptables and ipsets are as they were found.

The narrower egress rules of issue 44 (DNS, NATS, etcd and the API server at named peers, the entry port on the entry
pods only) get the node's peers here when the chart has those values (policy_values): the node's DNS (dnsmasq on the
node's address), this test's NATS and etcd pods, the node's address as the API server. The rows marked `narrowed` in
PATHS are the paths they closed: open under the rules before them, each other row as it is now.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ci.cluster import control_plane, go_parts
from ci.cluster.node import policies as POLICIES
from tests.cluster import kube
from tests.cluster import node as real
from tests.cluster.conftest import CACHE_SIZE, Release
from tests.cluster.test_node import (CA_CONFIGMAP, DYNAMO_TARGET, NODE, TRTLLM_SERVE_TARGET, crd_storing,
                                     frontend_stand_in, helm_test, hub, node, node_values, wait_job, wait_ready)
from tests.helpers import (CHART_DIR, REPO_ROOT, RELEASE_NAME, controllers, deep_merge, dgd_pods, find,
                           skip_for_missing_part)
from tests.helpers.cleanup import cleaned_up
from tools.gptoss.yaml_text import load_yaml

pytestmark = [pytest.mark.cluster, pytest.mark.node]
__all__ = ["hub", "node"]  # module fixtures of test_node.py, set up again for this module

PROBE_LABEL = "gpt-oss.test/policy-probe"
CLIENT_LABEL = "gpt-oss.test/client"
CLIENTS = [{"podSelector": {"matchLabels": {CLIENT_LABEL: "allowed"}}},
           {"namespaceSelector": {"matchLabels": {CLIENT_LABEL: "allowed"}}}]
WORKER_PORTS = (9090, 8000)  # the worker's system port (DYN_SYSTEM_PORT), and the frontend's port
# The worker's ports by the names the PodMonitor and its NetworkPolicy rule use (monitoring.podMonitor.workerPort).
WORKER_PORT_NAMES = {"system": 9090}
PROMETHEUS_LABELS = {"app.kubernetes.io/name": "prometheus"}
PODMONITOR_CRD = "podmonitors.monitoring.coreos.com"
NATS_PORT, ETCD_PORT = 4222, 2379
ANY_ADDRESS = [{"ipBlock": {"cidr": "0.0.0.0/0"}}]
SYNC_SECONDS = 30  # bound on kube-router applying a changed policy


@dataclass(frozen=True)
class Path_:
    """One path: from a pod of `source` ("<flow>/<role>") to `target` on `port`, and whether the policies leave it
    open. target: "<flow>/<role>" (a pod), "hub" (the fake Hub on the node's address), "test-host", or "dns" (the
    cluster DNS on the node's address, asked for the source's release's entry Service: open means it answered with
    the Service's address). kind "dns" on the test host: a DNS query over UDP."""
    id: str
    source: str
    target: str
    port: int
    open: bool
    why: str
    kind: str = "tcp"
    narrowed: bool = False  # closed by issue 44's narrowing: open under the rules before it


PATHS = [
    # --- what the policies let through -----------------------------------------------------------------------
    Path_("client-by-label-to-server", "serve/client", "serve/server", 8000, True,
          "networkPolicy.clients: a podSelector"),
    Path_("client-by-namespace-to-server", "platform/client", "serve/server", 8000, True,
          "networkPolicy.clients: a namespaceSelector"),
    Path_("smoke-test-to-server", "serve/smoke-test", "serve/server", 8000, True,
          "the test hooks' egress to the entry point, and its ingress from them beside narrowed clients"),
    Path_("download-to-hub", "serve/download", "hub", 8780, True, "the download Job's egress: its source's ports"),
    Path_("server-resolves-its-service", "serve/server", "dns", 53, True, "DNS, for every pod of the release",
          kind="dns"),
    Path_("frontend-to-worker", "dynamo/frontend", "dynamo/worker", 9090, True,
          "serving pods reach each other on any port"),
    Path_("any-pod-to-frontend", "dynamo/unlabelled", "dynamo/frontend", 8000, True,
          "networkPolicy.clients empty: every source reaches the entry port"),
    Path_("smoke-test-to-frontend", "dynamo/smoke-test", "dynamo/frontend", 8000, True,
          "the test hooks' egress to the entry point"),
    Path_("frontend-to-nats", "dynamo/frontend", "platform/nats", NATS_PORT, True, "the Dynamo platform's NATS"),
    Path_("worker-to-etcd", "dynamo/worker", "platform/etcd", ETCD_PORT, True, "the Dynamo platform's etcd"),
    Path_("frontend-resolves-its-service", "dynamo/frontend", "dns", 53, True, "DNS, for every pod of the release",
          kind="dns"),
    Path_("dynamo-download-to-hub", "dynamo/download", "hub", 8780, True, "the download Job's egress: its source's ports"),
    Path_("prometheus-to-worker-system", "platform/prometheus", "dynamo/worker", 9090, True,
          "networkPolicy.prometheus: its peer (Prometheus' labels in the namespace it names) scrapes the system port"),
    Path_("prometheus-to-server-metrics", "platform/prometheus", "serve/server", 8000, True,
          "networkPolicy.prometheus: its peer scrapes trtllm-serve's metrics, which share the API port"),
    # --- what they close -----------------------------------------------------------------------------------
    Path_("unlabelled-to-server", "serve/unlabelled", "serve/server", 8000, False, "not among networkPolicy.clients"),
    Path_("other-release-to-server", "serve/other-release", "serve/server", 8000, False,
          "another release's pod: not a client, not this release's serving pod"),
    Path_("server-to-hub", "serve/server", "hub", 8780, False, "only the download Job reaches the model's source"),
    Path_("server-to-test-host-4222", "serve/server", "test-host", 4222, False,
          "trtllm-serve has no Dynamo platform to reach"),
    Path_("server-to-test-host-8080", "serve/server", "test-host", 8080, False, "no rule names this address or port"),
    Path_("download-to-server", "serve/download", "serve/server", 8000, False, "the download Job reaches its source only"),
    Path_("download-to-test-host-8080", "serve/download", "test-host", 8080, False,
          "the download Job: its source's ports only"),
    Path_("download-to-test-host-443", "serve/download", "test-host", 443, False,
          "its source's ports only: the mirror's, not the Hub's 443"),
    Path_("smoke-test-to-test-host-443", "serve/smoke-test", "test-host", 443, False, "the test hooks reach the entry only"),
    Path_("unlabelled-to-worker", "dynamo/unlabelled", "dynamo/worker", 9090, False,
          "only serving pods reach a worker beyond the entry port"),
    Path_("other-release-to-worker", "dynamo/other-release", "dynamo/worker", 9090, False,
          "another release's pod (app.kubernetes.io/instance: other), same namespace"),
    Path_("other-namespace-to-worker", "serve/server", "dynamo/worker", 9090, False,
          "another release's pod, in another namespace"),
    Path_("prometheus-impostor-to-worker", "serve/prometheus-impostor", "dynamo/worker", 9090, False,
          "Prometheus' labels in a namespace the Prometheus peer does not name"),
    Path_("prometheus-impostor-to-server", "dynamo/prometheus-impostor", "serve/server", 8000, False,
          "Prometheus' labels in a namespace the Prometheus peer does not name: the metrics' port is the API's"),
    Path_("smoke-test-to-worker", "dynamo/smoke-test", "dynamo/worker", 9090, False, "the test hooks reach the entry only"),
    Path_("download-to-worker", "dynamo/download", "dynamo/worker", 9090, False, "the download Job reaches its source only"),
    Path_("download-to-nats", "dynamo/download", "platform/nats", NATS_PORT, False,
          "only the frontend and workers reach the platform"),
    Path_("download-to-etcd", "dynamo/download", "platform/etcd", ETCD_PORT, False,
          "only the frontend and workers reach the platform"),
    Path_("worker-to-test-host-8080", "dynamo/worker", "test-host", 8080, False, "no rule names this address or port"),
    # --- closed since issue 44 named every egress's peers (`narrowed`: open under the rules before it) --------
    Path_("unlabelled-to-worker-entry-port", "dynamo/unlabelled", "dynamo/worker", 8000, False,
          "the entry port on the entry pods only (before the narrowing: every serving pod)", narrowed=True),
    Path_("worker-to-test-host-4222", "dynamo/worker", "test-host", NATS_PORT, False,
          "NATS at the networkPolicy.nats peers only (before: port 4222 at any address)", narrowed=True),
    Path_("worker-to-test-host-2379", "dynamo/worker", "test-host", ETCD_PORT, False,
          "etcd at the networkPolicy.etcd peers only (before: port 2379 at any address)", narrowed=True),
    Path_("worker-to-test-host-6443", "dynamo/worker", "test-host", 6443, False,
          "the API server at the networkPolicy.apiServer peers only (before: 6443 at any address)", narrowed=True),
    Path_("worker-to-test-host-443", "dynamo/worker", "test-host", 443, False,
          "the API server at the networkPolicy.apiServer peers only (before: 443 at any address)", narrowed=True),
    Path_("server-to-test-host-dns", "serve/server", "test-host", 53, False,
          "DNS at the networkPolicy.dns peers only (before: port 53 at any address)", kind="dns", narrowed=True),
    # --- open by design -----------------------------------------------------------------------------------------
    Path_("download-to-test-host-8780", "serve/download", "test-host", NODE.FAKE_HUB_PORT, True,
          "downloadEgressTo empty: its source's port (the mirror's) at any address"),
    Path_("unlabelled-to-nats", "dynamo/unlabelled", "platform/nats", NATS_PORT, True,
          "NATS is the platform's: the chart polices its own pods only"),
]
PATH_BY_ID = {p.id: p for p in PATHS}


# --- the live policies, changed one rule at a time ------------------------------------------------------------


def _is_download(policy: dict) -> bool:
    return (policy["spec"]["podSelector"].get("matchLabels") or {}).get("app.kubernetes.io/component") == "model-download"


def _serving_selector(peer: dict) -> bool:
    values = [v for e in (peer.get("podSelector") or {}).get("matchExpressions") or [] for v in e.get("values", [])]
    return "worker" in values and "frontend" in values and not peer.get("namespaceSelector")


def drop_dns(policies: list[dict]) -> None:
    for policy in policies:
        policy["spec"]["egress"] = [rule for rule in policy["spec"].get("egress") or []
                                    if not any(p.get("port") == 53 for p in rule.get("ports") or [])]


def drop_serving_rules(policies: list[dict]) -> None:
    """The serving pods' rules for each other, in and out. One of the two is not enough to close the path on
    kube-router: it evaluates a policy of both types as one chain for the sender's egress and the receiver's ingress
    alike, so the egress rule `to: serving pods` also admits the worker's ingress from the frontend (and the ingress
    rule the frontend's egress)."""
    for policy in policies:
        for direction, peers in (("ingress", "from"), ("egress", "to")):
            policy["spec"][direction] = [rule for rule in policy["spec"].get(direction) or []
                                         if not any(_serving_selector(peer) for peer in rule.get(peers) or [])]


def drop_download_egress(policies: list[dict]) -> None:
    for policy in policies:
        if _is_download(policy):
            policy["spec"]["egress"] = []


def widen_serving_egress(policies: list[dict]) -> None:
    for policy in policies:
        if any(_serving_selector(peer) for rule in policy["spec"].get("egress") or [] for peer in rule.get("to") or []):
            policy["spec"]["egress"].append({"to": ANY_ADDRESS})


def widen_download_egress(policies: list[dict]) -> None:
    for policy in policies:
        if _is_download(policy):
            policy["spec"]["egress"] = [{"to": ANY_ADDRESS}]


def widen_prometheus_to_any_namespace(policies: list[dict]) -> None:
    """The Prometheus peer as the chart's default was before issue 55: Prometheus' labels in any namespace."""
    for policy in policies:
        for rule in policy["spec"].get("ingress") or []:
            if any((peer.get("podSelector") or {}).get("matchLabels") == PROMETHEUS_LABELS for peer in rule.get("from") or []):
                rule["from"] = [{"namespaceSelector": {}, "podSelector": {"matchLabels": PROMETHEUS_LABELS}}]


def widen_clients(policies: list[dict]) -> None:
    for policy in policies:
        for rule in policy["spec"].get("ingress") or []:
            if rule.get("from") == CLIENTS:
                rule["from"] = ANY_ADDRESS


@dataclass(frozen=True)
class Mutation:
    id: str
    flow: str
    change: object  # callable on the flow's live policies, in place
    path: str  # the row of PATHS that rule decides: the mutation flips it


MUTATIONS = [
    Mutation("dns-rule-removed", "serve", drop_dns, "server-resolves-its-service"),
    Mutation("serving-rules-removed", "dynamo", drop_serving_rules, "frontend-to-worker"),
    Mutation("download-egress-removed", "serve", drop_download_egress, "download-to-hub"),
    Mutation("serving-egress-to-any-address", "dynamo", widen_serving_egress, "worker-to-test-host-8080"),
    Mutation("download-egress-to-any-address", "serve", widen_download_egress, "download-to-test-host-8080"),
    Mutation("clients-any-address", "serve", widen_clients, "unlabelled-to-server"),
    Mutation("prometheus-peer-of-any-namespace", "dynamo", widen_prometheus_to_any_namespace,
             "prometheus-impostor-to-worker"),
]


# --- pods, probes ----------------------------------------------------------------------------------------------


@dataclass
class Pod:
    namespace: str
    name: str
    ip: str = ""


@dataclass
class Flow:
    """One release with its NetworkPolicies, and the pods the paths start from and lead to."""
    name: str  # "serve" or "dynamo"
    target: str
    namespace: real.NodeNamespace | None = None
    release: Release | None = None
    values: dict = field(default_factory=dict)
    objects: list[dict] = field(default_factory=list)
    entry_service: str = ""  # <svc>.<ns>.svc.cluster.local
    entry_ip: str = ""


@dataclass
class Setup:
    state: Path
    flows: dict[str, Flow]
    platform: str
    pods: dict[str, Pod] = field(default_factory=dict)  # "<flow>/<role>" -> pod
    facts: dict = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    closed: bool = False

    def close(self, k8s: kube.Kube) -> None:
        """The releases uninstalled, the namespaces deleted and their pods gone (once)."""
        if self.closed:
            return
        self.closed = True
        for flow in self.flows.values():
            if flow.release:
                try:
                    flow.release.uninstall()
                except Exception as error:  # the namespace's deletion removes what is left
                    print(f"uninstall of {flow.namespace.name}: {error}")
                flow.release.close()
        k8s.core.delete_namespace(self.platform)
        for flow in self.flows.values():
            if flow.namespace:
                flow.namespace.delete()
        kube.wait_for(f"the pods of {self.platform} to be gone",
                      lambda: not k8s.core.list_namespaced_pod(self.platform).items, timeout=120)


RESTRICTED_POD = {"runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 1000, "seccompProfile": {"type": "RuntimeDefault"}}
RESTRICTED_CONTAINER = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": True}
LISTENER = ("import asyncio, sys\n"
            "async def greet(reader, writer):\n"
            "    writer.write(b'listening\\n'); await writer.drain(); writer.close()\n"
            "async def main():\n"
            "    servers = [await asyncio.start_server(greet, '0.0.0.0', int(port)) for port in sys.argv[1:]]\n"
            "    await asyncio.gather(*(server.serve_forever() for server in servers))\n"
            "asyncio.run(main())\n")


def stand_in_pod(name: str, labels: dict, role: str, ports: tuple[int, ...] = (), named: dict | None = None) -> dict:
    """A pod with `labels` (and PROBE_LABEL: role): a Python listener on `ports`, else a `sleep`, under PodSecurity
    restricted, in the download Job's image (the node has it: Debian's python3 and coreutils). `named`: container
    ports by name, for the policy rules that name a port (the PodMonitors' `system`)."""
    image = real.IMAGES.rendered_images()["download"]
    command = (["python3", "-c", LISTENER, *map(str, ports)] if ports else ["sleep", "3600"])
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {**labels, PROBE_LABEL: role}},
            "spec": {"automountServiceAccountToken": False, "enableServiceLinks": False,
                     "terminationGracePeriodSeconds": 1, "securityContext": RESTRICTED_POD,
                     "containers": [{"name": "main", "image": image,
                                     "imagePullPolicy": "Never", "command": command,
                                     "securityContext": RESTRICTED_CONTAINER,
                                     **({"ports": [{"name": n, "containerPort": port} for n, port in named.items()]}
                                        if named else {}),
                                     "resources": {"requests": {"cpu": "10m", "memory": "16Mi"},
                                                   "limits": {"memory": "96Mi"}}}]}}


def pod_netns(state: Path, pod: Pod) -> str:
    """The network namespace of the pod's sandbox, as containerd holds it."""
    ctr = ["ctr", "--address", str(NODE.socket(state)), "--namespace", "k8s.io"]
    filters = (f'labels."io.kubernetes.pod.namespace"=={pod.namespace},labels."io.kubernetes.pod.name"=={pod.name},'
               'labels."io.cri-containerd.kind"==sandbox')
    ids = subprocess.run(ctr + ["containers", "ls", "-q", filters], capture_output=True, text=True, timeout=30).stdout.split()
    for cid in reversed(ids):
        info = json.loads(subprocess.run(ctr + ["containers", "info", cid], capture_output=True, text=True,
                                         timeout=30).stdout or "{}")
        for namespace in ((info.get("Spec") or {}).get("linux") or {}).get("namespaces") or []:
            if namespace.get("type") == "network" and namespace.get("path") and Path(namespace["path"]).exists():
                return namespace["path"]
    raise AssertionError(f"no network namespace for pod {pod.namespace}/{pod.name} in containerd (sandboxes {ids})")


def run_probes(state: Path, source: Pod, checks: list[dict]) -> dict[str, dict]:
    """The checks, from inside the source pod's network namespace (tests/cluster/netprobe.py)."""
    result = subprocess.run(["nsenter", f"--net={pod_netns(state, source)}", "--", sys.executable, "-m",
                             "tests.cluster.netprobe"], input=json.dumps(checks), capture_output=True, text=True,
                            timeout=60, cwd=REPO_ROOT)
    assert result.returncode == 0, f"netprobe in {source.namespace}/{source.name}: {result.stderr}"
    return json.loads(result.stdout)


def check_for(path: Path_, setup: Setup) -> dict:
    check = {"id": path.id, "kind": path.kind, "port": path.port}
    if path.target == "hub":
        check["host"] = NODE.GATEWAY
    elif path.target == "test-host":
        check["host"] = POLICIES.TEST_HOST
        check["name"] = "gpt-oss-test-host.invalid"
    elif path.target == "dns":
        check["host"] = NODE.GATEWAY
        check["name"] = setup.flows[path.source.split("/")[0]].entry_service
    else:
        check["host"] = setup.pods[path.target].ip
    return check


def probe(setup: Setup, paths: list[Path_]) -> dict[str, dict]:
    """Each path tried from its source pod (the sources at once, four at a time); results by path id, each with
    `open` (for dns: answered with the Service's address)."""
    by_source: dict[str, list[Path_]] = {}
    for path in paths:
        by_source.setdefault(path.source, []).append(path)

    def one(source: str) -> dict[str, dict]:
        return run_probes(setup.state, setup.pods[source], [check_for(p, setup) for p in by_source[source]])

    results: dict[str, dict] = {}
    with ThreadPoolExecutor(4) as pool:
        for found in pool.map(one, by_source):
            results.update(found)
    for path in paths:
        outcome = results.setdefault(path.id, {"open": False, "detail": "no answer from netprobe"})
        if path.target == "dns":  # resolving means the right answer, not any answer
            expected = setup.flows[path.source.split("/")[0]].entry_ip
            outcome["open"] = outcome["open"] and expected in outcome.get("answers", [])
    return results


def listening(setup: Setup) -> dict[str, str]:
    """Every target, tried from the host (which kube-router always lets through): target -> what answered."""
    from tests.cluster import netprobe
    found = {}
    for target, port, kind in sorted({(p.target, p.port, p.kind) for p in PATHS if p.target != "dns"}):
        host = {"hub": NODE.GATEWAY, "test-host": POLICIES.TEST_HOST}.get(target) or setup.pods[target].ip
        if kind == "dns":
            found[f"{target}:{port}/udp"] = netprobe.dns(host, port, "gpt-oss-test-host.invalid")["detail"]
        else:
            found[f"{target}:{port}"] = netprobe.tcp(host, port)["detail"]
    return found


def enforced(pods: list[Pod], policy_names: set[str]) -> bool:
    """Whether kube-router's rules name every pod, and every policy has a pod whose chain runs through it."""
    text = subprocess.run(["iptables-save", "-t", "filter"], capture_output=True, text=True).stdout
    return (all(f"POD name:{p.name} namespace: {p.namespace} " in text for p in pods)
            and all(f"run through nw policy {name}" in text for name in policy_names))


# --- values --------------------------------------------------------------------------------------------------


def policy_values(flow: str, platform: str) -> dict:
    """networkPolicy for a flow: on; the trtllm-serve release's clients narrowed to CLIENTS. Where the chart has issue
    44's peer values, the peers of this node: DNS is dnsmasq on the node's address, NATS and etcd are the platform
    namespace's stand-ins, the API server is given the node's address (it listens on 127.0.0.1 here, where no pod
    reaches it)."""
    known = load_yaml((CHART_DIR / "values.yaml").read_text())["networkPolicy"]
    values: dict = {"enabled": True}
    if flow == "serve":
        values["clients"] = CLIENTS
    platform_pods = lambda name: [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": platform}},  # noqa: E731
                                   "podSelector": {"matchLabels": {"app.kubernetes.io/name": name}}}]
    peers = {"dns": [{"ipBlock": {"cidr": f"{NODE.GATEWAY}/32"}}], "nats": platform_pods("nats"),
             "etcd": platform_pods("etcd"), "apiServer": [{"ipBlock": {"cidr": f"{NODE.GATEWAY}/32"}}],
             "prometheus": platform_pods("prometheus")}
    for key, to in peers.items():
        if key in known:
            values[key] = {"to": to}
    # PodMonitors on: the chart lets the Prometheus peer scrape their ports (issue 55: only in the namespace it names).
    return {"networkPolicy": values, "monitoring": {"podMonitor": {"enabled": True}}}


# --- the engine, the platform, the releases ---------------------------------------------------------------


@dataclass
class Engine:
    state: Path
    summary: str
    stopped: bool = False
    problems: list[str] = field(default_factory=list)
    log: str = ""

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        POLICIES.stop_test_host(self.state)
        self.problems = POLICIES.stop(self.state)
        path = self.state / "logs" / f"{POLICIES.ENGINE}.log"
        self.log = path.read_text(errors="replace") if path.exists() else ""


@pytest.fixture(scope="module")
def engine(node) -> Engine:
    binaries = go_parts.built("kube-router")
    reason = POLICIES.why_not(binaries)
    if reason:
        skip_for_missing_part(reason)
    summary = POLICIES.start(node.state, binaries / POLICIES.ENGINE, control_plane.spawn)
    running = Engine(node.state, summary)
    with cleaned_up(running.stop):
        POLICIES.start_test_host(node.state, control_plane.spawn, NODE.COMMAND)
        yield running


def create_namespace(k8s: kube.Kube, prefix: str, labels: dict) -> str:
    import random
    import string
    name = prefix + "".join(random.choices(string.ascii_lowercase + string.digits, k=6))
    k8s.core.create_namespace({"metadata": {"name": name, "labels": {kube.TIER_LABEL: "cluster", **kube.POD_SECURITY,
                                                                    **labels}}})
    return name


def pod_of(k8s: kube.Kube, namespace: str, selector: str) -> Pod:
    pods = [p for p in k8s.core.list_namespaced_pod(namespace, label_selector=selector).items
            if p.status.phase == "Running" and not p.metadata.deletion_timestamp]
    assert pods, f"no running pod {selector} in {namespace}\n{real.describe(k8s, namespace)}"
    return Pod(namespace, pods[0].metadata.name, pods[0].status.pod_ip)


def wait_running(k8s: kube.Kube, pods: list[Pod]) -> None:
    def running():
        for pod in pods:
            live = k8s.core.read_namespaced_pod(pod.name, pod.namespace)
            ready = any(c.type == "Ready" and c.status == "True" for c in live.status.conditions or [])
            if live.status.phase != "Running" or not ready:
                return False
            pod.ip = live.status.pod_ip
        return True
    kube.wait_for("the policy tests' stand-in pods Running", running, timeout=180, interval=1,
                  explain=lambda: "\n".join(real.describe(k8s, ns) for ns in sorted({p.namespace for p in pods})))


@pytest.fixture(scope="module")
def setup(engine, node, hub, cluster_access, k8s, crd_source, operator_present) -> Setup:
    # The releases render PodMonitors (policy_values): their CRD, from prometheus-operator's pinned module, for this
    # module only. Left in place, monitoring.coreos.com/v1 would be served to the node group's next modules, and the
    # Dynamo platform chart renders a ServiceMonitor wherever that group-version is (the operator tests' install failed:
    # no matches for kind "ServiceMonitor").
    try:
        podmonitor = [crd for crd in controllers.crds(controllers.PROMETHEUS_OPERATOR)
                      if crd["metadata"]["name"] == PODMONITOR_CRD]
    except LookupError as error:
        skip_for_missing_part(f"the PodMonitor CRD comes from prometheus-operator's module: {error}")
    from kubernetes.client import ApiextensionsV1Api  # the cluster tier's (docs tests read PATHS without it)
    ext = ApiextensionsV1Api(cluster_access.api_client)
    had_podmonitors = PODMONITOR_CRD in {c.metadata.name for c in ext.list_custom_resource_definition().items}
    controllers.install_crds(cluster_access.api_client, cluster_access.kubeconfig, podmonitor, "monitoring-crds")
    platform = create_namespace(k8s, "gpt-oss-node-platform-", {CLIENT_LABEL: "allowed"})
    made = Setup(node.state, {"serve": Flow("serve", TRTLLM_SERVE_TARGET), "dynamo": Flow("dynamo", DYNAMO_TARGET)},
                 platform)
    crd = kube.DgdCrd(cluster_access.api_client, crd_source, operator_present)

    def remove_podmonitor_crd():
        if had_podmonitors:
            return
        ext.delete_custom_resource_definition(PODMONITOR_CRD)
        kube.wait_for(f"CRD {PODMONITOR_CRD} deleted", lambda: PODMONITOR_CRD not in {
            c.metadata.name for c in ext.list_custom_resource_definition().items}, timeout=120, interval=1)

    with crd_storing(crd, kube.API_VERSIONS[0]), cleaned_up(lambda: made.close(k8s), remove_podmonitor_crd):
        install(k8s, cluster_access, hub, made)
        yield made


def install(k8s: kube.Kube, cluster_access, hub, made: Setup) -> None:
    """Both releases, the stand-ins and the other pods; then every path of PATHS tried, and the smoke test run."""
    started = time.monotonic()
    flows, pods = made.flows, made.pods
    for flow in flows.values():
        flow.namespace = real.NodeNamespace.create(k8s, CACHE_SIZE)
        flow.namespace.add_ca(CA_CONFIGMAP, hub.ca)
        flow.release = Release(cluster_access.kubeconfig, flow.namespace.name, kube.API_VERSIONS[0])
        # One server each; the smoke test runs once the server is Ready, so a minute is plenty.
        one = ({"trtllmServe": {"replicas": 1}, "smokeTest": {"readyTimeoutSeconds": 60}} if flow.name == "serve" else
               {"frontend": {"replicas": 1, "resources": {"requests": {"cpu": "50m", "memory": "256Mi"},
                                                          "limits": {"memory": "3Gi"}}}})
        extra = node_values(flow.target, hub, deep_merge(one, policy_values(flow.name, made.platform)))
        flow.values = flow.release.values(flow.target, extra)
        flow.release.install(flow.target, extra)
        flow.objects = flow.release.manifest()
    serve, dynamo = flows["serve"], flows["dynamo"]
    frontend, frontend_service = frontend_stand_in(dynamo.objects, dynamo.namespace.name)
    k8s.apps.create_namespaced_deployment(dynamo.namespace.name, frontend)
    k8s.core.create_namespaced_service(dynamo.namespace.name, frontend_service)

    # Stand-ins with the labels the chart renders for each role, and pods the chart knows nothing of.
    stand_ins: list[tuple[str, str, dict]] = []  # (key, namespace, pod)
    for flow in flows.values():
        ns = flow.namespace.name
        job = find(flow.objects, "Job")["spec"]["template"]["metadata"]["labels"]
        other = {"app.kubernetes.io/name": "gpt-oss", "app.kubernetes.io/instance": "other",
                 "app.kubernetes.io/component": "trtllm-serve" if flow.name == "serve" else "worker"}
        stand_ins += [(f"{flow.name}/download", ns, stand_in_pod("policy-download", job, "download")),
                      (f"{flow.name}/smoke-test", ns, stand_in_pod("policy-smoke-test", hook_labels(flow, "smoke-test"),
                                                                   "smoke-test")),
                      (f"{flow.name}/unlabelled", ns, stand_in_pod("policy-unlabelled", {}, "unlabelled")),
                      (f"{flow.name}/other-release", ns, stand_in_pod("policy-other-release", other, "other-release"))]
    stand_ins.append(("serve/client", serve.namespace.name,
                      stand_in_pod("policy-client", {CLIENT_LABEL: "allowed"}, "client")))
    worker_labels = next(pod["metadata"]["labels"] for pod in dgd_pods(find(dynamo.objects, "DynamoGraphDeployment"))
                         .values() if pod["metadata"]["labels"].get("app.kubernetes.io/component") == "worker")
    stand_ins += [("dynamo/worker", dynamo.namespace.name,
                   stand_in_pod("policy-worker", worker_labels, "worker", WORKER_PORTS, WORKER_PORT_NAMES)),
                  ("platform/prometheus", made.platform, stand_in_pod("prometheus", PROMETHEUS_LABELS, "prometheus")),
                  ("serve/prometheus-impostor", serve.namespace.name,
                   stand_in_pod("policy-prometheus-impostor", PROMETHEUS_LABELS, "prometheus-impostor")),
                  ("dynamo/prometheus-impostor", dynamo.namespace.name,
                   stand_in_pod("policy-prometheus-impostor", PROMETHEUS_LABELS, "prometheus-impostor")),
                  ("platform/client", made.platform, stand_in_pod("policy-client", {}, "client")),
                  ("platform/nats", made.platform,
                   stand_in_pod("nats", {"app.kubernetes.io/name": "nats"}, "nats", (NATS_PORT,))),
                  ("platform/etcd", made.platform,
                   stand_in_pod("etcd", {"app.kubernetes.io/name": "etcd"}, "etcd", (ETCD_PORT,)))]
    for namespace in {namespace for _, namespace, _ in stand_ins}:  # pods are refused until it exists
        kube.wait_for(f"the default ServiceAccount of {namespace}", lambda: k8s.core.list_namespaced_service_account(
            namespace, field_selector="metadata.name=default").items, timeout=60, interval=0.5)
    for key, namespace, manifest in stand_ins:
        k8s.core.create_namespaced_pod(namespace, manifest)
        pods[key] = Pod(namespace, manifest["metadata"]["name"])

    # The releases' own pods: the download Jobs finish under the policies, then the servers come up.
    for flow in flows.values():
        job = wait_job(k8s, flow.namespace.name, find(flow.objects, "Job")["metadata"]["name"], timeout=240)
        made.facts[f"{flow.name}/download"] = job["status"].get("succeeded")
    made.seconds["downloads"] = round(time.monotonic() - started, 1)
    wait_ready(k8s, serve.namespace.name, find(serve.objects, "Deployment")["metadata"]["name"], 1,
               "the trtllm-serve server Ready under its policies")
    wait_ready(k8s, dynamo.namespace.name, frontend["metadata"]["name"], 1, "the frontend stand-in Ready under its policies")
    pods["serve/server"] = pod_of(k8s, serve.namespace.name, "app.kubernetes.io/component=trtllm-serve")
    pods["dynamo/frontend"] = pod_of(k8s, dynamo.namespace.name, "gpt-oss.test/stand-in=frontend")
    wait_running(k8s, list(pods.values()))
    for flow, service in ((serve, find(serve.objects, "Service")["metadata"]["name"]),
                          (dynamo, frontend_service["metadata"]["name"])):
        flow.entry_service = f"{service}.{flow.namespace.name}.svc.{NODE.CLUSTER_DOMAIN}"
        flow.entry_ip = k8s.core.read_namespaced_service(service, flow.namespace.name).spec.cluster_ip
    made.seconds["ready"] = round(time.monotonic() - started, 1)

    names = {o["metadata"]["name"] for f in flows.values() for o in f.objects if o["kind"] == "NetworkPolicy"}
    kube.wait_for("kube-router's rules for every pod and policy", lambda: enforced(list(pods.values()), names),
                  timeout=60, interval=0.5)
    made.facts["listening"] = listening(made)
    probed = time.monotonic()
    made.facts["paths"] = probe(made, PATHS)
    made.seconds["probes"] = round(time.monotonic() - probed, 1)
    # The real smoke test, through the Service by name, with the clients narrowed.
    run = _HookRun(serve.namespace.name)
    helm_test(serve.release, run, k8s, only=[f"{serve.release.name}-smoke-test"])
    made.facts["smoke_test"] = run.facts["helm_test"]
    made.facts["smoke_test_logs"] = {n: logs for n, logs in run.logs.items() if n.endswith("smoke-test")}
    made.seconds["setup"] = round(time.monotonic() - started, 1)


@dataclass
class _HookRun:
    """What test_node.helm_test records into (the fields of test_node.Run it uses)."""
    namespace: str
    facts: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)
    logs: dict = field(default_factory=dict)
    pods: dict = field(default_factory=dict)
    evidence: str = ""


def hook_labels(flow: Flow, component: str) -> dict:
    """The labels of a test hook's pod (smoke test, benchmark) as rendered for the flow's release."""
    from tests.helpers import render_chart
    for obj in render_chart(values=flow.values, namespace=flow.namespace.name, name=RELEASE_NAME):
        metadata = obj["metadata"] if obj["kind"] == "Pod" else obj["spec"]["template"]["metadata"] \
            if obj["kind"] == "Job" else {}
        if (metadata.get("labels") or {}).get("app.kubernetes.io/component") == component:
            return metadata["labels"]
    raise AssertionError(f"the chart renders no {component} pod")


def describe_path(path: Path_, outcome: dict) -> str:
    return (f"{path.source} -> {path.target}:{path.port}/{'udp' if path.kind == 'dns' else 'tcp'}: "
            f"{'open' if outcome['open'] else 'closed'} ({outcome.get('detail')}); the table says "
            f"{'open' if path.open else 'closed'}: {path.why}")


class TestPolicyEngine:
    def test_should_run_kube_router_from_its_pin_with_only_the_firewall_controller(self, engine, setup):
        argv = json.loads((engine.state / "pids.json").read_text())[POLICIES.ENGINE]["argv"]
        assert {"--run-firewall=true", "--run-router=false", "--run-service-proxy=false",
                "--run-loadbalancer=false", "--health-port=0", "--metrics-port=0"} <= set(argv), argv
        assert Path(argv[0]).parent == go_parts.built("kube-router"), argv[0]
        log = (engine.state / "logs" / f"{POLICIES.ENGINE}.log").read_text(errors="replace")
        assert f"version {go_parts.pinned_versions('kube-router')['github.com/cloudnativelabs/kube-router/v2']}" in log
        assert go_parts.pinned_versions("kube-router")["github.com/cloudnativelabs/kube-router/v2"] == "v2.1.0"
        assert "Starting network policy controller" in log
        # Neither the route controller nor the service proxy ran: neither logged its start or made its link.
        assert not [line for line in ("Starting network route controller", "Starting network services controller")
                    if line in log]
        assert not [link for link in ("kube-bridge", "kube-dummy-if") if Path(f"/sys/class/net/{link}").exists()]

    def test_should_find_every_target_listening_from_the_host(self, setup):
        """The host is always let through: a target that does not answer it is down, not closed by a policy."""
        silent = {target: detail for target, detail in setup.facts["listening"].items()
                  if detail not in ("connected",) and not detail.startswith("answered")}
        assert not silent, silent

    def test_should_download_the_model_under_the_policies(self, setup, record_property):
        record_property("seconds", json.dumps(setup.seconds))
        assert setup.facts["serve/download"] == 1 and setup.facts["dynamo/download"] == 1, setup.facts

    def test_should_pass_the_smoke_test_with_the_clients_narrowed(self, setup):
        result = setup.facts["smoke_test"]
        assert result["ok"], f"helm test failed under the policies: {result.get('error')}"
        logs = list(setup.facts["smoke_test_logs"].values())
        assert logs and "PASS:" in logs[0]["smoke-test"], logs


@pytest.mark.parametrize("path", [p for p in PATHS if p.open], ids=lambda p: p.id)
class TestPathsThePoliciesLeaveOpen:
    def test_should_reach(self, setup, path, record_property):
        outcome = setup.facts["paths"][path.id]
        record_property(path.id, json.dumps(outcome))
        assert outcome["open"], describe_path(path, outcome)


@pytest.mark.parametrize("path", [p for p in PATHS if not p.open], ids=lambda p: p.id)
class TestPathsThePoliciesClose:
    def test_should_not_reach(self, setup, path, record_property):
        outcome = setup.facts["paths"][path.id]
        record_property(path.id, json.dumps(outcome))
        assert not outcome["open"], describe_path(path, outcome)


def live_policies(k8s: kube.Kube, flow: Flow) -> list[dict]:
    """The flow's NetworkPolicies as installed (the release's manifest: the chart's rendering)."""
    return [o for o in flow.objects if o["kind"] == "NetworkPolicy"]


def apply(k8s: kube.Kube, namespace: str, policies: list[dict]) -> None:
    """Each policy's spec written over the live object's (its metadata, Helm's included, kept)."""
    for policy in policies:
        live = k8s._dict(k8s.networking.read_namespaced_network_policy(policy["metadata"]["name"], namespace))
        k8s.networking.replace_namespaced_network_policy(policy["metadata"]["name"], namespace,
                                                         {**live, "spec": policy["spec"]})


def wait_path(setup: Setup, path: Path_, open_: bool) -> tuple[dict, float]:
    """Probe the path until it is open_ (bounded by SYNC_SECONDS); the last outcome and the seconds it took."""
    started = time.monotonic()
    while True:
        outcome = probe(setup, [path])[path.id]
        if outcome["open"] == open_ or time.monotonic() - started > SYNC_SECONDS:
            return outcome, round(time.monotonic() - started, 1)
        time.sleep(0.5)


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.id)
class TestRuleMutations:
    """One rule of the rendered policies removed, or widened to any address: the path it decides flips, and flips back
    when the rendered policy is put back. What the probes see is the policies' doing."""

    def test_should_flip_the_path_the_rule_decides(self, setup, k8s, mutation, record_property):
        import copy
        flow = setup.flows[mutation.flow]
        path = PATH_BY_ID[mutation.path]
        assert setup.facts["paths"][path.id]["open"] == path.open, "the path is not as the table says to begin with"
        rendered = live_policies(k8s, flow)
        changed = copy.deepcopy(rendered)
        mutation.change(changed)
        differing = [new for old, new in zip(rendered, changed) if old != new]
        assert differing, f"{mutation.id} changes none of {[p['metadata']['name'] for p in rendered]}"
        apply(k8s, flow.namespace.name, differing)
        try:
            flipped, seconds = wait_path(setup, path, not path.open)
        finally:
            apply(k8s, flow.namespace.name, [old for old, new in zip(rendered, changed) if old != new])
        back, back_seconds = wait_path(setup, path, path.open)
        record_property(mutation.id, json.dumps({"flipped": flipped, "seconds": seconds, "back": back,
                                                  "back_seconds": back_seconds}))
        assert flipped["open"] != path.open, (f"{mutation.id} left {describe_path(path, flipped)} within "
                                              f"{SYNC_SECONDS}s")
        assert back["open"] == path.open, f"the rendered policy put back, {describe_path(path, back)}"


class TestHostRestored:
    """Last: the releases gone, the engine and the test host stopped, the host's iptables and ipsets as found."""

    def test_should_leave_iptables_and_ipsets_as_found(self, setup, engine, k8s):
        setup.close(k8s)
        engine.stop()
        assert not engine.problems, "\n".join(engine.problems)
        assert not POLICIES.record_file(engine.state).exists()
        left = [line for line in real.PROCESSES.running_servers() if line.split(" ", 1)[1].endswith("/kube-router")]
        assert not left, left
        assert not Path(f"/sys/class/net/{POLICIES.TEST_HOST_LINK}").exists()
        assert not [name for name in POLICIES.ipset_names() if name.startswith(POLICIES.OWN_IPSETS)]
        assert not (POLICIES.chains_in() & {"KUBE-ROUTER-INPUT", "KUBE-ROUTER-FORWARD", "KUBE-ROUTER-OUTPUT"})
        # It did enforce: a sync log line per change, and no failed iptables-restore.
        assert engine.log.count("sync iptables took") >= 2 and "Aborting sync" not in engine.log
