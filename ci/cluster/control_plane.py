"""Start and stop a Kubernetes control plane on 127.0.0.1 for the cluster tier (envtest style), plus one real node.

    python -m ci.cluster control-plane start [--dir .envtest]   etcd + kube-apiserver (+ kube-scheduler and
                                                 kube-controller-manager when present), GPU nodes, DGD CRD,
                                                 and a kubelet node (python -m ci.cluster node) when a kubelet binary is there
    python -m ci.cluster control-plane stop  [--dir .envtest]   stops the node (undoing its host changes), then only the
                                                 processes `start` recorded, removes the dir
    python -m ci.cluster control-plane env   [--dir .envtest]   prints KUBECONFIG=... of a running control plane
    python -m ci.cluster control-plane reap  [--dir .envtest]   (started by `start`) the kubelet's part in pod deletion
    python -m ci.cluster control-plane leftovers                exits 1 naming any kubelet, containerd, etcd, kube-* or operator
                                                 process still running on this machine (CI's last check)
    python -m ci.cluster control-plane restart --component NAME [--down-seconds S] [--signal KILL|TERM] [--dir .envtest]
                                                 kills one component `start` recorded (etcd, kube-apiserver,
                                                 ...) and starts it again with the same flags, ports and data
                                                 directory; the cluster tier's fault tests use it

Binaries, first found wins: $KUBEBUILDER_ASSETS when set (the envtest convention; `setup-envtest use -p path`),
then the ones `python -m ci.cluster go-parts build kubernetes` built from the modules pinned in ci/cluster/go/kubernetes/go.sum (cached
outside the checkout, keyed by that pin; .ci/run builds them and sets no KUBEBUILDER_ASSETS), then the newest version in
setup-envtest's store (~/.local/share/kubebuilder-envtest/k8s/<version>-<os>-<arch>/). Without etcd and
kube-apiserver `start` exits 3 and says so; with CI=true a control plane that cannot start fails instead.
Everything binds to 127.0.0.1 on free ports.

The DynamoGraphDeployment CRD is the upstream file, found where the tests find CRDs ($GPT_OSS_SHARED_DIR/dynamo/crds,
default <repo>/../shared; then $GPT_OSS_CRDS_DIR; then .cache/crds, which python -m ci.cluster crds fills), installed with
conversion None (no operator serves its webhook). Without it the control plane starts without the CRD and says so;
the tier's tests that need it then skip with that reason.

Nodes are API objects only (no kubelet): one per entry of ci/cluster/gpu-node-profiles.json, with the labels, taint,
`nvidia.com/gpu` capacity/allocatable and Ready condition the GPU Operator and a kubelet would give them.
The node-lifecycle controller is off, since nothing would ever renew those nodes' heartbeats. A pod bound to
such a node is never started; when it is deleted, the `reap` process confirms its termination (grace period 0),
as the node's kubelet would once the containers stopped, so uninstalls and namespace deletions complete.
Beside them, when a `kubelet` binary sits with the others (and this runs as root on Linux), python -m ci.cluster node starts a
real node: containerd, the kubelet, kube-proxy (when present) and a cluster DNS, with images built by
python -m ci.cluster node-images; it is tainted so only the node tests (tests/cluster/test_node.py) use it. Without one, the
reason is written to <dir>/node-absent.txt and the node tests skip with it. GPT_OSS_NODE=0 turns the node off.
Needs requirements-test.txt and requirements-cluster.txt (kubernetes, cryptography, PyYAML).
"""
from __future__ import annotations

import argparse
import datetime
import importlib.util
import ipaddress
import json
import os
import shutil
import signal
import socket
import sys
import time
from pathlib import Path

from . import HERE, REPO, crds, node, processes
from .binaries import REQUIRED, find_binaries  # noqa: F401  (REQUIRED: what `start` cannot do without)

# This module's main (`python -m ci.cluster control-plane`, from the checkout): the pod reaper is started through it.
COMMAND = [sys.executable, "-m", "ci.cluster", "control-plane"]
PROFILES = json.loads((HERE / "gpu-node-profiles.json").read_text())
CRD_FILE = "nvidia.com_dynamographdeployments.yaml"
OPTIONAL = ("kube-scheduler", "kube-controller-manager")
BINARIES_ABSENT = 3
# A component that cannot renew its Lease within the renew deadline exits. 60s rides out an API server or
# etcd restart (`restart`); the Lease is still renewed every 2s, which is how the tier sees them running.
LEADER_ELECTION = ["--leader-elect=true", "--leader-elect-lease-duration=75s", "--leader-elect-renew-deadline=60s",
                   "--leader-elect-retry-period=2s"]
# What a node has unless its profile says (ci/cluster/gpu-node-profiles.json cpu, memory): the GPUs are what placement is about.
NODE_CAPACITY = {"cpu": "64", "memory": "512Gi", "pods": "110", "ephemeral-storage": "500Gi"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_pki(pki: Path) -> None:
    """A CA, the API server's serving cert for 127.0.0.1, an admin client cert, the front proxy's CA and client cert,
    and the service-account key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    pki.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)

    def key():
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def save(name: str, private_key, cert=None):
        (pki / f"{name}.key").write_bytes(private_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()))
        if cert is not None:
            (pki / f"{name}.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))

    def cert(subject, issuer, public_key, signing_key, ca=False, extensions=()):
        builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=2))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        for extension in extensions:
            builder = builder.add_extension(extension, critical=False)
        return builder.sign(signing_key, hashes.SHA256())

    ca_key = key()
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gpt-oss-test-ca")])
    save("ca", ca_key, cert(ca_name, ca_name, ca_key.public_key(), ca_key, ca=True))
    server_key = key()
    names = x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                         x509.IPAddress(ipaddress.ip_address("10.0.0.1"))])
    save("apiserver", server_key, cert(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]), ca_name,
                                       server_key.public_key(), ca_key, extensions=[names]))
    admin_key = key()
    admin = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:masters"),
                       x509.NameAttribute(NameOID.COMMON_NAME, "gpt-oss-test-admin")])
    save("admin", admin_key, cert(admin, ca_name, admin_key.public_key(), ca_key))
    # The API server's client certificate towards kubelets (logs, exec, port-forward).
    kubelet_client_key = key()
    kubelet_client = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:masters"),
                                x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver-kubelet-client")])
    save("apiserver-kubelet-client", kubelet_client_key,
         cert(kubelet_client, ca_name, kubelet_client_key.public_key(), ca_key))
    # The aggregation layer's front proxy (as kubeadm sets it up): the API server proxies to an extension API server
    # (KEDA's metrics server) with this client certificate, and names the user in headers that server trusts.
    proxy_ca_key = key()
    proxy_ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gpt-oss-test-front-proxy-ca")])
    save("front-proxy-ca", proxy_ca_key, cert(proxy_ca_name, proxy_ca_name, proxy_ca_key.public_key(), proxy_ca_key,
                                              ca=True))
    proxy_client_key = key()
    save("front-proxy-client", proxy_client_key, cert(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "front-proxy-client")]), proxy_ca_name,
        proxy_client_key.public_key(), proxy_ca_key))
    sa_key = key()
    save("sa", sa_key)
    (pki / "sa.pub").write_bytes(sa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))


NODE_LIFECYCLE_CONTROLLERS = ("node-lifecycle-controller", "cloud-node-lifecycle-controller")


def disabled_controllers(controller_manager: Path) -> str:
    """--controllers: every default one but the node-lifecycle controllers this release has (1.37 dropped the cloud
    one from kube-controller-manager and refuses to disable a name it does not know)."""
    import re
    import subprocess
    help_text = subprocess.run([str(controller_manager), "--help"], capture_output=True, text=True).stdout
    known = set(re.findall(r"[a-z][a-z-]*-controller", help_text))
    return ",".join(["*", *(f"-{name}" for name in NODE_LIFECYCLE_CONTROLLERS if name in known)])


def write_kubeconfig(path: Path, pki: Path, port: int) -> None:
    import yaml
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "gpt-oss-test",
        "clusters": [{"name": "gpt-oss-test", "cluster": {
            "server": f"https://127.0.0.1:{port}", "certificate-authority": str(pki / "ca.crt")}}],
        "users": [{"name": "admin", "user": {
            "client-certificate": str(pki / "admin.crt"), "client-key": str(pki / "admin.key")}}],
        "contexts": [{"name": "gpt-oss-test", "context": {"cluster": "gpt-oss-test", "user": "admin"}}],
    }))


def spawn(state: Path, name: str, argv: list[str], health: str | None = None) -> None:
    """Start one component and record how (pid and start time, argv, health URL), so `stop` and `restart` find
    exactly that process again."""
    with open(state / "logs" / f"{name}.log", "ab") as log:
        entry = processes.spawn(argv, log)
    pids = json.loads((state / "pids.json").read_text()) if (state / "pids.json").exists() else {}
    pids[name] = {**entry, "argv": argv, "health": health}
    (state / "pids.json").write_text(json.dumps(pids, indent=1))


def wait_healthy(what: str, url: str, state: Path, log: str, timeout: float = 120, cert: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    import ssl
    import urllib.request
    context = ssl.create_default_context(cafile=str(cert)) if cert else None
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=3, context=context) as response:
                if response.status == 200:
                    return
        except Exception:
            pass
        time.sleep(0.5)
    tail = (state / "logs" / log).read_text(errors="replace").splitlines()[-15:]
    raise SystemExit(f"{what} did not become healthy at {url} within {timeout:.0f}s; last log lines:\n" + "\n".join(tail))


def create_nodes(api) -> list[str]:
    from kubernetes import client
    core = client.CoreV1Api(api)
    names = []
    for profile, spec in PROFILES["profiles"].items():
        for index in range(spec["nodes"]):
            name = f"gpt-oss-{profile}-{index}"
            labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                      "kubernetes.io/arch": spec.get("arch", "amd64"), PROFILES["profileLabel"]: profile}
            taints = []
            capacity = {**NODE_CAPACITY, **{key: spec[key] for key in ("cpu", "memory") if key in spec}}
            if spec.get("gpus"):
                labels.update({"nvidia.com/gpu.product": spec["product"], "nvidia.com/gpu.present": "true",
                               "nvidia.com/gpu.count": str(spec["gpus"])})
                taints = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
                capacity["nvidia.com/gpu"] = str(spec["gpus"])
            core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                              "spec": {"taints": taints}})
            # Admission (TaintNodesByCondition) adds node.kubernetes.io/not-ready on create, which only the
            # node-lifecycle controller would lift: set the taints again, exactly.
            core.patch_node(name, [{"op": "replace", "path": "/spec/taints", "value": taints}])
            now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            core.patch_node_status(name, {"status": {
                "capacity": capacity, "allocatable": capacity,
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletLessTestNode",
                                "message": "API object only: no kubelet runs for it",
                                "lastHeartbeatTime": now, "lastTransitionTime": now}],
                "nodeInfo": {"architecture": labels["kubernetes.io/arch"], "operatingSystem": "linux",
                             "kubeletVersion": "v0.0.0-none", "machineID": name, "systemUUID": name, "bootID": name,
                             "kernelVersion": "", "osImage": "", "containerRuntimeVersion": "",
                             "kubeProxyVersion": ""}}})
            names.append(name)
    return names


def crd_path() -> tuple[Path | None, str]:
    """The upstream DGD CRD file, found as the tests find CRDs (python -m ci.cluster crds), or why there is none."""
    path = crds.find_crd_file(CRD_FILE)
    if path is not None:
        return path, str(path)
    return None, crds.missing_message(CRD_FILE)


def install_crd(api, path: Path) -> None:
    from kubernetes import client

    from tools.gptoss.yaml_text import load_yaml
    crd = load_yaml(path.read_text())
    # No operator serves the upstream Webhook conversion: with None each object is stored as written.
    crd["spec"]["conversion"] = {"strategy": "None"}
    crd["metadata"] = {key: crd["metadata"][key] for key in ("name", "labels", "annotations") if key in crd["metadata"]}
    crd.pop("status", None)
    ext = client.ApiextensionsV1Api(api)
    ext.create_custom_resource_definition(crd, _preload_content=False)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        live = ext.read_custom_resource_definition("dynamographdeployments.nvidia.com")
        if any(c.type == "Established" and c.status == "True" for c in (live.status.conditions or [])):
            return
        time.sleep(0.5)
    raise SystemExit("the DynamoGraphDeployment CRD was not Established within 60s")


def start(state: Path) -> int:
    binaries, origin = find_binaries()
    if binaries is None:
        print(f"control plane not started: {origin}")
        return 1 if os.environ.get("CI", "").strip().lower() == "true" else BINARIES_ABSENT
    missing = [name for name in ("cryptography", "kubernetes", "yaml") if importlib.util.find_spec(name) is None]
    if missing:
        print(f"control plane not started: no Python module {', '.join(missing)}; "
              "pip install -r requirements-test.txt -r requirements-cluster.txt")
        return 1
    if (state / "pids.json").exists():
        print(f"{state} holds a running control plane: stop it first (python -m ci.cluster control-plane stop --dir {state})")
        return 1
    state.mkdir(parents=True, exist_ok=True)
    (state / "logs").mkdir(exist_ok=True)
    pki = state / "pki"
    write_pki(pki)
    etcd_port, etcd_peer, api_port = free_port(), free_port(), free_port()
    kubeconfig = state / "kubeconfig"
    write_kubeconfig(kubeconfig, pki, api_port)

    spawn(state, "etcd", [str(binaries / "etcd"), "--data-dir", str(state / "etcd"), "--name", "gpt-oss-test",
                          "--listen-client-urls", f"http://127.0.0.1:{etcd_port}",
                          "--advertise-client-urls", f"http://127.0.0.1:{etcd_port}",
                          "--listen-peer-urls", f"http://127.0.0.1:{etcd_peer}",
                          "--initial-advertise-peer-urls", f"http://127.0.0.1:{etcd_peer}",
                          "--initial-cluster", f"gpt-oss-test=http://127.0.0.1:{etcd_peer}",
                          "--unsafe-no-fsync", "--quota-backend-bytes", str(2 * 1024**3)],
          health=f"http://127.0.0.1:{etcd_port}/health")
    wait_healthy("etcd", f"http://127.0.0.1:{etcd_port}/health", state, "etcd.log")

    spawn(state, "kube-apiserver", [
        str(binaries / "kube-apiserver"), "--etcd-servers", f"http://127.0.0.1:{etcd_port}",
        "--advertise-address", "127.0.0.1", "--bind-address", "127.0.0.1", "--secure-port", str(api_port),
        "--cert-dir", str(pki), "--tls-cert-file", str(pki / "apiserver.crt"),
        "--tls-private-key-file", str(pki / "apiserver.key"), "--client-ca-file", str(pki / "ca.crt"),
        "--service-account-issuer", f"https://127.0.0.1:{api_port}",
        "--service-account-key-file", str(pki / "sa.pub"), "--service-account-signing-key-file", str(pki / "sa.key"),
        "--service-cluster-ip-range", "10.0.0.0/24", "--allow-privileged=true",
        # Node + NodeRestriction: what a kubelet may do, as on kind. RBAC for everyone else.
        "--authorization-mode", "Node,RBAC", "--enable-admission-plugins", "NodeRestriction",
        # Logs, exec and port-forward reach a kubelet (python -m ci.cluster node) at its InternalIP, checked against the CA.
        "--kubelet-client-certificate", str(pki / "apiserver-kubelet-client.crt"),
        "--kubelet-client-key", str(pki / "apiserver-kubelet-client.key"),
        "--kubelet-certificate-authority", str(pki / "ca.crt"), "--kubelet-preferred-address-types", "InternalIP",
        # One local API server: no `kubernetes` Service endpoints to keep in step with other replicas.
        "--endpoint-reconciler-type", "none",
        # The tier binds its model-cache PVCs to static PVs by class name; no default class exists to assign.
        "--disable-admission-plugins", "DefaultStorageClass",
        # The aggregation layer (APIServices such as KEDA's external metrics): the front proxy's client certificate.
        "--requestheader-client-ca-file", str(pki / "front-proxy-ca.crt"),
        "--requestheader-allowed-names", "front-proxy-client", "--requestheader-username-headers", "X-Remote-User",
        "--requestheader-group-headers", "X-Remote-Group", "--requestheader-extra-headers-prefix", "X-Remote-Extra-",
        "--proxy-client-cert-file", str(pki / "front-proxy-client.crt"),
        "--proxy-client-key-file", str(pki / "front-proxy-client.key")],
          health=f"https://127.0.0.1:{api_port}/readyz")
    wait_healthy("kube-apiserver", f"https://127.0.0.1:{api_port}/readyz", state, "kube-apiserver.log",
                 cert=pki / "ca.crt")

    started = ["etcd", "kube-apiserver"]
    component_kubeconfig = str(kubeconfig)
    if (binaries / "kube-scheduler").is_file():
        spawn(state, "kube-scheduler", [
            str(binaries / "kube-scheduler"), "--kubeconfig", component_kubeconfig,
            "--authentication-kubeconfig", component_kubeconfig, "--authorization-kubeconfig", component_kubeconfig,
            "--bind-address", "127.0.0.1", "--secure-port", str(free_port()), *LEADER_ELECTION])
        started.append("kube-scheduler")
    if (binaries / "kube-controller-manager").is_file():
        spawn(state, "kube-controller-manager", [
            str(binaries / "kube-controller-manager"), "--kubeconfig", component_kubeconfig,
            "--authentication-kubeconfig", component_kubeconfig, "--authorization-kubeconfig", component_kubeconfig,
            "--bind-address", "127.0.0.1", "--secure-port", str(free_port()), *LEADER_ELECTION,
            "--service-account-private-key-file", str(pki / "sa.key"), "--root-ca-file", str(pki / "ca.crt"),
            # No kubelet renews the nodes' heartbeats: the node-lifecycle controller would taint and evict.
            "--controllers", disabled_controllers(binaries / "kube-controller-manager"),
            "--use-service-account-credentials=false"])
        started.append("kube-controller-manager")

    api = api_client(kubeconfig)
    from kubernetes import client
    version = client.VersionApi(api).get_code()
    nodes = create_nodes(api)
    crd, crd_origin = crd_path()
    if crd is not None:
        install_crd(api, crd)
    spawn(state, "pod-reaper", [*COMMAND, "reap", "--dir", str(state)])
    started.append("pod-reaper")
    print(f"control plane up: Kubernetes {version.git_version} from {origin} ({binaries}); "
          f"running {', '.join(started)}; nodes {', '.join(nodes)}; "
          + (f"DGD CRD installed from {crd_origin}" if crd else f"DGD CRD NOT installed: {crd_origin}"), flush=True)
    reason = node.why_not(binaries)
    if reason and node_required():
        raise SystemExit(f"no kubelet node, and {NODE_REQUIRED_BECAUSE}: {reason}")
    if reason:
        (state / "node-absent.txt").write_text(reason + "\n")
        print(f"no kubelet node: {reason}")
    else:
        try:
            print(node.start(state, binaries, pki, f"https://127.0.0.1:{api_port}", spawn, api), flush=True)
        except (Exception, SystemExit) as error:
            # The control plane stays up without the node; the node tests skip with this reason.
            # GPT_OSS_NODE=1 or CI=true makes a failed node fail `start` instead.
            node.stop(state, binaries)
            (state / "node-absent.txt").write_text(f"the node failed to start: {error}\n")
            print(f"NODE FAILED TO START (host restored): {error}", flush=True)
            if node_required():
                raise
    print(f"KUBECONFIG={kubeconfig}")
    return 0


NODE_REQUIRED_BECAUSE = "GPT_OSS_NODE=1 or CI=true requires one"


def node_required() -> bool:
    """CI builds and installs every part of the node, so there a node that cannot start fails the run."""
    wanted = os.environ.get("GPT_OSS_NODE", "").strip().lower()
    if wanted in {"0", "false", "no", "off"}:
        return False
    return wanted == "1" or os.environ.get("CI", "").strip().lower() == "true"


def api_client(kubeconfig: Path):
    from kubernetes import client, config
    configuration = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), client_configuration=configuration)
    return client.ApiClient(configuration)


def reap(state: Path) -> int:
    """Finish the deletion of pods bound to this control plane's kubelet-less nodes (what their kubelet would do)."""
    from kubernetes import client
    core = client.CoreV1Api(api_client(state / "kubeconfig"))
    ours = {f"gpt-oss-{profile}-{index}" for profile, spec in PROFILES["profiles"].items() for index in range(spec["nodes"])}
    while (state / "pids.json").exists():
        try:
            for pod in core.list_pod_for_all_namespaces().items:
                if pod.metadata.deletion_timestamp and pod.spec.node_name in ours:
                    core.delete_namespaced_pod(pod.metadata.name, pod.metadata.namespace, grace_period_seconds=0)
        except Exception as error:  # the API server stopping, or a pod already gone: try again
            print(f"reap: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}", flush=True)
        time.sleep(1)
    return 0


def _ours(name: str, entry: dict) -> bool:
    """Whether the process `start` recorded still runs (its pid and start time: a reused pid is not it)."""
    return processes.alive(entry)


def kill_component(state: Path, name: str, sig: int = signal.SIGKILL) -> None:
    """Kill one recorded component of this control plane (never anything else)."""
    pids = json.loads((state / "pids.json").read_text())
    if name not in pids:
        raise SystemExit(f"{state} records no {name} (it records {', '.join(pids)})")
    entry = pids[name]
    if not _ours(name, entry):
        raise SystemExit(f"{name} (pid {entry['pid']}) is not running as started; not killing anything")
    processes.terminate(entry, sig)
    print(f"killed {name} (pid {entry['pid']}, signal {signal.Signals(sig).name})", flush=True)


def start_component(state: Path, name: str, timeout: float = 120) -> None:
    """Start a recorded component again with its recorded flags: same ports, same data directory."""
    entry = json.loads((state / "pids.json").read_text())[name]
    spawn(state, name, entry["argv"], entry.get("health"))
    if entry.get("health"):
        cert = state / "pki" / "ca.crt" if entry["health"].startswith("https") else None
        wait_healthy(name, entry["health"], state, f"{name}.log", timeout=timeout, cert=cert)
    print(f"started {name} again (pid {json.loads((state / 'pids.json').read_text())[name]['pid']})", flush=True)


def revive(state: Path) -> None:
    """Start again any other component that exited meanwhile (a scheduler that lost its Lease, say)."""
    for name, entry in json.loads((state / "pids.json").read_text()).items():
        if not _ours(name, entry):
            print(f"{name} (pid {entry['pid']}) had exited; starting it again", flush=True)
            start_component(state, name)


def restart(state: Path, name: str, down_seconds: float = 0.0, sig: int = signal.SIGKILL) -> int:
    kill_component(state, name, sig)
    time.sleep(down_seconds)
    start_component(state, name)
    revive(state)
    return 0


def stop(state: Path) -> int:
    pids_file = state / "pids.json"
    if not pids_file.exists():
        problems = node.stop(state, find_binaries()[0])  # a start killed before it recorded anything
        print(f"no control plane recorded in {state}")
        return 1 if problems else 0
    problems = node.stop(state, find_binaries()[0])
    pids = json.loads(pids_file.read_text())
    # Reverse start order: controllers first, etcd last.
    for name, entry in reversed(list(pids.items())):
        if processes.terminate(entry):
            print(f"stopped {name} (pid {entry['pid']})")
    mounted = node.mounts_under([str(state)])
    if mounted:  # never delete through a mount (a volume of a pod)
        print(f"{state} NOT removed: still mounted under it: {', '.join(mounted)}")
        return 1
    shutil.rmtree(state, ignore_errors=True)
    return 1 if problems else 0


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["start", "stop", "env", "reap", "restart", "leftovers"])
    parser.add_argument("--dir", type=Path, default=REPO / ".envtest", help="state directory (default .envtest)")
    parser.add_argument("--component", help="restart: the component to kill and start again (e.g. kube-apiserver, etcd)")
    parser.add_argument("--down-seconds", type=float, default=0.0, help="restart: seconds it stays down")
    parser.add_argument("--signal", default="KILL", choices=["KILL", "TERM"], help="restart: how it is killed")
    args = parser.parse_args(argv)
    state = args.dir.resolve()
    if args.command == "start":
        try:
            return start(state)
        except BaseException:
            stop(state)
            raise
    if args.command == "stop":
        return stop(state)
    if args.command == "reap":
        return reap(state)
    if args.command == "leftovers":
        left = processes.running_servers()
        print("still running: " + "; ".join(left) if left else
              f"no {', '.join(processes.SERVER_NAMES)} runs on this machine")
        return 1 if left else 0
    if args.command == "restart":
        if not args.component:
            parser.error("restart needs --component")
        if not (state / "pids.json").exists():
            raise SystemExit(f"no control plane recorded in {state}")
        return restart(state, args.component, args.down_seconds, getattr(signal, f"SIG{args.signal}"))
    print(f"KUBECONFIG={state / 'kubeconfig'}")
    return 0
