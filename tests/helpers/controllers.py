"""The controllers that give the chart's objects their meaning, built from their pinned modules (ci/cluster/go/<part>,
ci/cluster/go_parts.py) and run by the tests against a control plane: prometheus-operator (PodMonitor, PrometheusRule) and
KEDA (ScaledObject). Their CRDs come from their own modules at the pinned version, read from the Go module cache
(ci/cluster/go_parts.py module_dir); the shared copies (../shared/keda/crds) stay the offline tier's.
"""
from __future__ import annotations

import copy
import datetime
import hashlib
import ipaddress
import json
import signal
from dataclasses import dataclass
from pathlib import Path

import yaml

from ci.cluster import go_parts, processes


@dataclass(frozen=True)
class Controller:
    part: str  # ci/cluster/go/<part>
    module: str  # the module whose release runs, and whose CRDs the tests install
    crd_folder: str  # inside that module
    crd_files: tuple[str, ...]  # the CRDs to install (all of the folder's, when empty)


PROMETHEUS_OPERATOR = Controller("prometheus-operator", "github.com/prometheus-operator/prometheus-operator",
                                 "example/prometheus-operator-crd", ())
# The ScaledObject and what the operator's informers watch beside it.
KEDA = Controller("keda", "github.com/kedacore/keda/v2", "config/crd/bases", (
    "keda.sh_scaledobjects.yaml", "keda.sh_scaledjobs.yaml", "keda.sh_triggerauthentications.yaml",
    "keda.sh_clustertriggerauthentications.yaml", "eventing.keda.sh_cloudeventsources.yaml",
    "eventing.keda.sh_clustercloudeventsources.yaml"))


def binary(controller: Controller, name: str) -> Path | None:
    folder = go_parts.built(controller.part)
    return folder / name if folder else None


def missing(controller: Controller) -> str:
    return f"{controller.part} is not built: python -m ci.cluster go-parts build {controller.part}"


def crd_paths(controller: Controller) -> list[Path]:
    """The CRD files of the pinned release, from the module cache (go mod download: needs the Go proxy or a filled
    cache); LookupError when the module cannot be had."""
    folder = go_parts.module_dir(controller.part, controller.module) / controller.crd_folder
    names = controller.crd_files or tuple(sorted(p.name for p in folder.glob("*.yaml")))
    return [folder / name for name in names]


class _CrdLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """YAML 1.1 reads a bare `=` as its value tag, which PyYAML has no constructor for; in these CRDs it is a string
    (prometheus-operator's relabel actions enumerate `=` beside `replace`)."""


_CrdLoader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))


def crds(controller: Controller) -> list[dict]:
    return [yaml.load(path.read_text(), Loader=_CrdLoader) for path in crd_paths(controller)]


SOURCE_HASH = "gpt-oss.test/source-sha256"


def install_crds(api_client, kubeconfig: Path, documents: list[dict], lock: str) -> None:
    """Create or replace the CRDs, then wait until each is established. Cluster-wide and left in place: pytest-xdist
    workers share the cluster, and a CRD one deleted would vanish under another's test."""
    from kubernetes import client

    from tests.cluster import kube
    ext = client.ApiextensionsV1Api(api_client)
    with kube.cluster_lock(kubeconfig, lock):
        for crd in copy.deepcopy(documents):
            name = crd["metadata"]["name"]
            crd.pop("status", None)
            # The document's hash on the CRD: the next worker finds it there and leaves the CRD alone (these CRDs are
            # megabytes; replacing them costs the API server seconds on a loaded machine).
            digest = hashlib.sha256(json.dumps(crd, sort_keys=True).encode()).hexdigest()
            crd["metadata"].setdefault("annotations", {})[SOURCE_HASH] = digest
            try:
                live = ext.read_custom_resource_definition(name)
            except client.exceptions.ApiException as error:
                if not kube.is_not_found(error):
                    raise
                ext.create_custom_resource_definition(crd, _preload_content=False)
                continue
            if (live.metadata.annotations or {}).get(SOURCE_HASH) == digest:
                continue
            crd["metadata"]["resourceVersion"] = live.metadata.resource_version
            ext.replace_custom_resource_definition(name, crd, _preload_content=False)
    for crd in documents:
        name = crd["metadata"]["name"]
        kube.wait_for(f"CRD {name} established", lambda: kube.crd_established(api_client.sanitize_for_serialization(
            ext.read_custom_resource_definition(name))), timeout=60, interval=0.5)


@dataclass
class Access:
    """How a process outside the cluster reaches the API server: its address and the client's files."""
    server: str
    ca: Path
    cert: Path
    key: Path

    @classmethod
    def of(cls, kubeconfig: Path) -> "Access":
        """From a kubeconfig naming files (python -m ci.cluster control-plane writes one)."""
        config = yaml.safe_load(Path(kubeconfig).read_text())
        context = next(c["context"] for c in config["contexts"] if c["name"] == config["current-context"])
        cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
        user = next(u["user"] for u in config["users"] if u["name"] == context["user"])
        missing_files = [key for key, holder in (("certificate-authority", cluster), ("client-certificate", user),
                                                 ("client-key", user)) if key not in holder]
        if missing_files:
            raise ValueError(f"{kubeconfig} names no file for {', '.join(missing_files)} (inline data is not read "
                             "here): the controllers run against ci.cluster.control_plane's control plane")
        return cls(cluster["server"], Path(cluster["certificate-authority"]), Path(user["client-certificate"]),
                   Path(user["client-key"]))

    @property
    def port(self) -> int:
        return int(self.server.rsplit(":", 1)[1])

    def kubeconfig(self, path: Path, server: str | None = None) -> Path:
        """A kubeconfig with these credentials, at `server` (a bridge's address) or the API server's own."""
        path.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "test",
            "clusters": [{"name": "test", "cluster": {"server": server or self.server,
                                                      "certificate-authority": str(self.ca)}}],
            "users": [{"name": "test", "user": {"client-certificate": str(self.cert), "client-key": str(self.key)}}],
            "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}]}))
        return path


class Process:
    """A controller process started by a test, recorded by pid and start time (ci/cluster/processes.py), stopped
    by its test whatever happens."""

    def __init__(self, argv: list[str], log: Path, env: dict[str, str] | None = None):
        self.argv, self.log = argv, log
        with open(log, "ab") as handle:
            self.entry = processes.spawn(argv, handle, env)

    def running(self) -> bool:
        return processes.alive(self.entry)

    def stop(self) -> None:
        processes.terminate(self.entry, signal.SIGTERM, grace=10)

    def tail(self, lines: int = 60) -> str:
        text = self.log.read_text(errors="replace").splitlines() if self.log.exists() else []
        return f"===== {self.log}\n" + "\n".join(text[-lines:])


def start_prometheus_operator(access: Access, namespaces: list[str], log: Path) -> Process:
    """prometheus-operator, watching only `namespaces` (so operators of tests running beside it never meet), its web
    endpoint on a free loopback port."""
    from ci.cluster.control_plane import free_port
    return Process([str(binary(PROMETHEUS_OPERATOR, "prometheus-operator")), f"--apiserver={access.server}",
                    f"--ca-file={access.ca}", f"--cert-file={access.cert}", f"--key-file={access.key}",
                    f"--namespaces={','.join(namespaces)}", f"--web.listen-address=127.0.0.1:{free_port()}",
                    "--log-level=info"], log)


def write_serving_pki(folder: Path, names: list[str]) -> dict[str, Path]:
    """A CA and one certificate for both ends of KEDA's own TLS (what its cert rotation makes in a cluster): the
    metrics server's HTTPS towards the API server, and the mutual TLS of the gRPC link between metrics server and
    operator. Files as KEDA reads them from its cert dir: ca.crt, tls.crt, tls.key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gpt-oss-test-keda-ca")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=2))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(ca_key, hashes.SHA256()))
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    alt = [x509.IPAddress(ipaddress.ip_address(name)) if name.replace(".", "").isdigit() else x509.DNSName(name)
           for name in names]
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    files = {"ca": folder / "ca.crt", "cert": folder / "tls.crt", "key": folder / "tls.key"}
    files["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files["cert"].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    files["key"].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                               serialization.NoEncryption()))
    return files


KEDA_GRPC_PORT, KEDA_METRICS_SERVER_PORT = 9666, 6443  # in the stack's network namespace
EXTERNAL_METRICS = "v1beta1.external.metrics.k8s.io"
KEDA_SERVICE = "keda-metrics-apiserver"


def keda_services(folder: Path, kubeconfig: Path, watched: list[str], namespace: str, env: dict[str, str]) -> list[dict]:
    """KEDA's operator and metrics server as stack.py services (in the stack's network namespace, where the chart's
    Prometheus answers at the address the ScaledObjects name), reaching the API server through `kubeconfig` (a
    bridge), watching only `watched`. Every port they open is in that namespace. Their TLS: write_serving_pki's files
    in `folder` (the metrics server's serving certificate is also its gRPC client certificate, as in KEDA's cert dir)."""
    keda_env = {**env, "KUBECONFIG": str(kubeconfig), "WATCH_NAMESPACE": ",".join(watched), "POD_NAMESPACE": namespace,
                "KEDA_CLUSTER_OBJECT_NAMESPACE": namespace}
    operator = [str(binary(KEDA, "keda")), f"--cert-dir={folder}", "--zap-log-level=info", "--zap-encoder=console",
                "--metrics-bind-address=127.0.0.1:8080", "--health-probe-bind-address=127.0.0.1:8081",
                f"--metrics-service-bind-address=127.0.0.1:{KEDA_GRPC_PORT}", f"--ca-dir={folder}"]
    server = [str(binary(KEDA, "keda-adapter")), f"--secure-port={KEDA_METRICS_SERVER_PORT}", "--bind-address=127.0.0.1",
              f"--cert-dir={folder}", f"--tls-cert-file={folder / 'tls.crt'}", f"--tls-private-key-file={folder / 'tls.key'}",
              f"--metrics-service-address=127.0.0.1:{KEDA_GRPC_PORT}", "--port=8082",
              f"--authentication-kubeconfig={kubeconfig}", f"--authorization-kubeconfig={kubeconfig}",
              f"--lister-kubeconfig={kubeconfig}", "--zap-log-level=info"]
    # No `listens` wait: on a loaded machine KEDA may take longer to start than the stack waits; the test's watcher
    # registers the metrics server once it answers, and the probe sends bursts until the HPAs have scaled.
    return [{"name": "keda-operator", "role": "keda", "env": keda_env, "argv": operator},
            {"name": "keda-metrics-server", "role": "keda", "env": keda_env, "argv": server}]


def keda_registration(namespace: str, port: int, ca: Path) -> list[dict]:
    """The Service and APIService through which the API server reaches KEDA's metrics server for the external metrics
    the HPAs ask for: an ExternalName Service naming the host's loopback (the API server resolves it to
    https://localhost:<port>, the host's end of the bridge), and the APIService trusting KEDA's CA for
    <service>.<namespace>.svc."""
    import base64
    return [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": KEDA_SERVICE, "namespace": namespace},
             "spec": {"type": "ExternalName", "externalName": "localhost",
                      "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}},
            {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": EXTERNAL_METRICS},
             "spec": {"service": {"name": KEDA_SERVICE, "namespace": namespace, "port": port},
                      "group": "external.metrics.k8s.io", "version": "v1beta1",
                      "caBundle": base64.b64encode(ca.read_bytes()).decode(),
                      "groupPriorityMinimum": 100, "versionPriority": 100}}]
