"""The controllers that consume the chart's routes, run for real beside the node (tests/cluster/test_gateway.py):
Traefik (ci/cluster/go/traefik) programming the Ingress and HTTPRoute, and the endpoint picker (ci/cluster/go/epp) reading the
InferencePool; their CRDs from their own Go modules, a test CA and certificate for the Ingress's TLS entry, and a
client that plays the gateway towards the picker's ext-proc service (Envoy's messages, PyPI xds-protos).

Traefik runs on the host, its entry points on 127.0.0.1. The picker binds its ports on every address of its network
(the chart sets no address), so it runs in a network namespace of its own, joined to the host by a veth pair
(PICKER_NET): it reaches the server pods through the host, which routes to the node's bridge, and the API server
(which listens on 127.0.0.1) through a relay the test runs on the host's end of the pair. It runs chrooted in a
folder laid out as its container would be: the binary at /epp (the image's entrypoint), the chart's ConfigMap at
/config, so the rendered arguments are passed unchanged.
"""
from __future__ import annotations

import contextlib
import datetime
import http.client
import json
import os
import secrets
import shutil
import socket
import ssl
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ci.cluster import go_parts, processes
from tests.helpers import controllers
from tests.cluster import kube
from tests.helpers.relays import TlsClientRelay
from tools.gptoss.yaml_text import load_yaml_all

INGRESS_CLASS = GATEWAY_CLASS = "gpt-oss-traefik"
TRAEFIK_INGRESS_CONTROLLER = "traefik.io/ingress-controller"
TRAEFIK_GATEWAY_CONTROLLER = "traefik.io/gateway-controller"
# The picker's network: the host's end of the veth pair and the picker's (a /30 of its own, outside the pod and
# Service ranges, so nothing else answers there).
PICKER_HOST, PICKER_ADDRESS = "10.245.0.1", "10.245.0.2"
EXT_PROC_PORT, PICKER_METRICS_PORT = 9002, 9090  # the picker's defaults; the chart's Service names them


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- CRDs from the controllers' own modules ------------------------------------------------------------------


def controller_crds() -> list[Path]:
    """The Gateway API CRDs (standard channel) of the sigs.k8s.io/gateway-api release ci/cluster/go/traefik is built with, and
    the Inference Extension's CRDs of the release ci/cluster/go/epp pins, from the Go module cache. LookupError without Go."""
    gateway_api = go_parts.module_dir("traefik", "sigs.k8s.io/gateway-api") / "config/crd/standard"
    inference = go_parts.module_dir("epp", "sigs.k8s.io/gateway-api-inference-extension") / "config/crd/bases"
    return sorted(gateway_api.glob("*.yaml")) + sorted(inference.glob("*.yaml"))


def install_crds(k8s: kube.Kube, kubeconfig: Path, paths: list[Path]) -> list[str]:
    """Create or replace each CRD of `paths`, under the lock the tier's other CRD installs take; wait until each is
    established. Their names."""
    crds = [d for path in paths for d in load_yaml_all(path.read_text())
            if d and d.get("kind") == "CustomResourceDefinition"]
    controllers.install_crds(k8s.api_client, kubeconfig, crds, "exposure-crds")
    return [crd["metadata"]["name"] for crd in crds]


# --- TLS: a test CA and a server certificate for DNS names ----------------------------------------------------


def tls_pair(hosts: list[str]) -> tuple[bytes, bytes, bytes]:
    """(CA PEM, certificate PEM, key PEM): a test CA and a server certificate it signs for `hosts`."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gpt-oss gateway test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    server = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]))
              .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
              .add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in hosts]), critical=False)
              .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    return (ca.public_bytes(pem), server.public_bytes(pem),
            key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


# --- streaming chats, as a client of the gateway --------------------------------------------------------------


def stream_chat(port: int, host: str, model: str, ca: bytes | None = None, max_tokens: int = 24,
                address: str = "127.0.0.1", timeout: float = 60) -> dict:
    """One streaming chat completion sent to address:port with `host` as its Host (and, with `ca`, over TLS with
    `host` as SNI, verified against `ca`). {status, chunks (data: lines), finished, done, text, error, peer}."""
    body = json.dumps({"model": model, "stream": True, "max_tokens": max_tokens, "ignore_eos": True,
                       "messages": [{"role": "user", "content": f"through the gateway {secrets.token_hex(4)}"}]})
    connection = http.client.HTTPConnection(address, port, timeout=timeout)
    result = {"status": None, "chunks": 0, "finished": False, "done": False, "text": "", "error": None, "peer": None}
    try:
        sock = socket.create_connection((address, port), timeout=timeout)
        if ca is not None:
            context = ssl.create_default_context(cadata=ca.decode())
            sock = context.wrap_socket(sock, server_hostname=host)
            result["peer"] = sock.getpeercert()["subject"]
        connection.sock = sock
        connection.request("POST", "/v1/chat/completions", body, {"Host": host, "Content-Type": "application/json"})
        response = connection.getresponse()
        result["status"] = response.status
        if response.status != 200:
            result["error"] = response.read()[:300].decode(errors="replace")
            return result
        for line in response:
            if line.startswith(b"data: [DONE]"):
                result["done"] = True
            elif line.startswith(b"data:"):
                result["chunks"] += 1
                choice = (json.loads(line[5:]).get("choices") or [{}])[0]
                result["text"] += (choice.get("delta") or {}).get("content") or ""
                result["finished"] |= bool(choice.get("finish_reason"))
    except (OSError, http.client.HTTPException, ValueError) as error:
        result["error"] = f"{type(error).__name__}: {error}"
    finally:
        connection.close()
    return result


# --- Traefik ------------------------------------------------------------------------------------------------


@dataclass
class Traefik:
    """Traefik with its Kubernetes Ingress and Gateway API providers, entry points on 127.0.0.1."""
    binary: Path
    kubeconfig: Path
    log: Path
    web: int = field(default_factory=free_port)
    websecure: int = field(default_factory=free_port)
    admin: int = field(default_factory=free_port)
    entry: dict | None = None

    def argv(self) -> list[str]:
        return [str(self.binary), "--global.checkNewVersion=false", "--global.sendAnonymousUsage=false",
                "--log.level=INFO", "--accessLog=true",
                f"--entryPoints.web.address=127.0.0.1:{self.web}",
                f"--entryPoints.websecure.address=127.0.0.1:{self.websecure}", "--entryPoints.websecure.http.tls=true",
                f"--entryPoints.traefik.address=127.0.0.1:{self.admin}", "--ping=true",
                "--providers.kubernetesIngress=true", f"--providers.kubernetesIngress.ingressClass={INGRESS_CLASS}",
                "--providers.kubernetesGateway=true"]

    def start(self) -> "Traefik":
        with open(self.log, "ab") as log:
            self.entry = processes.spawn(self.argv(), log, {"KUBECONFIG": str(self.kubeconfig)})
        kube.wait_for("Traefik to answer its ping", self.pinged, timeout=60, interval=0.5, explain=self.tail)
        return self

    def pinged(self) -> bool:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.admin, timeout=2)
            connection.request("GET", "/ping")
            return connection.getresponse().status == 200
        except OSError:
            assert self.entry and processes.alive(self.entry), f"Traefik exited:\n{self.tail()}"
            return False

    def tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-40:]) if self.log.exists() else ""

    def stop(self) -> None:
        if self.entry:
            processes.terminate(self.entry, grace=10)


def traefik_classes(k8s: kube.Kube) -> None:
    """The IngressClass and GatewayClass naming Traefik's controllers (cluster-wide; remove_traefik_classes)."""
    from kubernetes.client.exceptions import ApiException
    try:
        k8s.networking.create_ingress_class({"metadata": {"name": INGRESS_CLASS},
                                             "spec": {"controller": TRAEFIK_INGRESS_CONTROLLER}})
    except ApiException as error:
        if error.status != 409:
            raise
    try:
        k8s.custom.create_cluster_custom_object("gateway.networking.k8s.io", "v1", "gatewayclasses", {
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass", "metadata": {"name": GATEWAY_CLASS},
            "spec": {"controllerName": TRAEFIK_GATEWAY_CONTROLLER}})
    except ApiException as error:
        if error.status != 409:
            raise


def remove_traefik_classes(k8s: kube.Kube) -> None:
    from kubernetes.client.exceptions import ApiException
    for delete in (lambda: k8s.networking.delete_ingress_class(INGRESS_CLASS),
                   lambda: k8s.custom.delete_cluster_custom_object("gateway.networking.k8s.io", "v1", "gatewayclasses",
                                                                   GATEWAY_CLASS)):
        with contextlib.suppress(ApiException):
            delete()


def gateway(name: str, port: int) -> dict:
    """A Gateway of Traefik's class with one HTTP listener on the port of Traefik's `web` entry point (Traefik maps a
    listener to the entry point of the same port), taking routes of its own namespace."""
    return {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": {"name": name},
            "spec": {"gatewayClassName": GATEWAY_CLASS, "listeners": [
                {"name": "web", "protocol": "HTTP", "port": port, "allowedRoutes": {"namespaces": {"from": "Same"}}}]}}


def route_conditions(route: dict, controller: str = TRAEFIK_GATEWAY_CONTROLLER) -> dict[str, tuple[str, str]]:
    """type -> (status, reason) of the HTTPRoute's conditions that `controller` wrote."""
    for parent in (route.get("status") or {}).get("parents") or []:
        if parent.get("controllerName") == controller:
            return {c["type"]: (c["status"], c.get("reason", "")) for c in parent.get("conditions") or []}
    return {}


# --- the endpoint picker ------------------------------------------------------------------------------------


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@contextlib.contextmanager
def picker_network():
    """A network namespace joined to the host by a veth pair (PICKER_HOST on the host's end, PICKER_ADDRESS in it,
    routed through the host); deleted afterwards. Its name."""
    tag = secrets.token_hex(3)
    name, host_end = f"gpt-oss-epp-{tag}", f"gpepp{tag}"
    _ip("netns", "add", name)
    try:
        _ip("link", "add", host_end, "type", "veth", "peer", "name", "eth0", "netns", name)
        _ip("addr", "add", f"{PICKER_HOST}/30", "dev", host_end)
        _ip("link", "set", host_end, "up")
        _ip("-n", name, "addr", "add", f"{PICKER_ADDRESS}/30", "dev", "eth0")
        _ip("-n", name, "link", "set", "eth0", "up")
        _ip("-n", name, "link", "set", "lo", "up")
        _ip("-n", name, "route", "add", "default", "via", PICKER_HOST)
        yield name
    finally:
        subprocess.run(["ip", "link", "delete", host_end], capture_output=True, timeout=30)
        subprocess.run(["ip", "netns", "delete", name], capture_output=True, timeout=30)


def picker_kubeconfig(cluster_kubeconfig: Path, relay_port: int, token: str) -> str:
    """A kubeconfig for the picker: the API server through the relay (its certificate names localhost), the chart's
    ServiceAccount's token, so the chart's Role is all it may use."""
    config = yaml.safe_load(cluster_kubeconfig.read_text())
    cluster = config["clusters"][0]["cluster"]
    ca = cluster.get("certificate-authority-data")
    if ca is None:
        import base64
        ca = base64.b64encode(Path(cluster["certificate-authority"]).read_bytes()).decode()
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "epp",
        "clusters": [{"name": "relay", "cluster": {"server": f"https://{PICKER_HOST}:{relay_port}",
                                                    "certificate-authority-data": ca, "tls-server-name": "localhost"}}],
        "users": [{"name": "epp", "user": {"token": token}}],
        "contexts": [{"name": "epp", "context": {"cluster": "relay", "user": "epp"}}]})


@dataclass
class EndpointPicker:
    """The picker as the chart's Deployment runs it: its container's args and env, the ConfigMap's files at /config,
    as the pod's user; the files it is given are readable, not writable, by that user (a read-only root)."""
    binary: Path
    root: Path
    log: Path
    netns: str
    args: list[str]
    env: dict[str, str]
    config: dict[str, str]
    kubeconfig: str
    user: str = "0:0"  # uid:gid, the pod's runAsUser and runAsGroup
    entry: dict | None = None

    def start(self) -> "EndpointPicker":
        gid = int(self.user.split(":")[1])
        (self.root / "config").mkdir(parents=True, exist_ok=True)
        for name, text in self.config.items():
            (self.root / "config" / name).write_text(text)
        (self.root / "tmp").mkdir(exist_ok=True)
        (self.root / "tmp").chmod(0o1777)
        (self.root / "kubeconfig").write_text(self.kubeconfig)  # the ServiceAccount's token: its group only
        os.chown(self.root / "kubeconfig", 0, gid)
        (self.root / "kubeconfig").chmod(0o640)
        shutil.copy(self.binary, self.root / "epp")
        for path in (self.root, self.root / "config", *(self.root / "config").iterdir(), self.root / "epp"):
            path.chmod(0o755 if path.is_dir() or path.name == "epp" else 0o644)
        argv = ["nsenter", f"--net=/run/netns/{self.netns}", "--", "chroot", f"--userspec={self.user}",
                str(self.root), "/epp", *self.args]
        with open(self.log, "ab") as log:
            self.entry = processes.spawn(argv, log, {"KUBECONFIG": "/kubeconfig", **self.env})
        return self

    def alive(self) -> bool:
        return bool(self.entry) and processes.alive(self.entry)

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:]) if self.log.exists() else ""

    def stop(self) -> None:
        if self.entry:
            processes.terminate(self.entry, grace=10)


class ExtProcGateway:
    """The gateway's side of the picker's ext-proc service, as Envoy plays it: one HTTP/2 connection to the picker,
    over TLS (--secure-serving, its default; through a TlsClientRelay, which skips verification as Envoy's cluster
    does), and one bidirectional stream per request carrying the request's headers, then its body."""

    def __init__(self, address: str = PICKER_ADDRESS, port: int = EXT_PROC_PORT):
        import grpc
        from envoy.service.ext_proc.v3 import external_processor_pb2_grpc as ext_proc_grpc
        self.relay = TlsClientRelay((address, port))
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.relay.port}")
        self.stub = ext_proc_grpc.ExternalProcessorStub(self.channel)

    def pick(self, body: dict, authority: str, timeout: float = 20) -> dict:
        """One request: its headers and body to the picker; the endpoint it names (x-gateway-destination-endpoint,
        in the header mutation and the envoy.lb metadata) and the immediate response when it refuses.
        {endpoint, metadata_endpoint, immediate}."""
        from envoy.config.core.v3 import base_pb2
        from envoy.service.ext_proc.v3 import external_processor_pb2 as ext_proc

        raw = json.dumps(body).encode()
        headers = [(":method", "POST"), (":path", "/v1/chat/completions"), (":authority", authority),
                   (":scheme", "http"), ("content-type", "application/json"), ("content-length", str(len(raw))),
                   ("x-request-id", secrets.token_hex(8))]
        requests = [
            ext_proc.ProcessingRequest(request_headers=ext_proc.HttpHeaders(headers=base_pb2.HeaderMap(headers=[
                base_pb2.HeaderValue(key=k, raw_value=v.encode()) for k, v in headers]), end_of_stream=False)),
            ext_proc.ProcessingRequest(request_body=ext_proc.HttpBody(body=raw, end_of_stream=True))]
        result = {"endpoint": None, "metadata_endpoint": None, "immediate": None}
        # The picker answers once the body has come (headers response, then the body's), and ends the stream when
        # the gateway has sent all it has.
        for response in self.stub.Process(iter(requests), timeout=timeout):
            if response.HasField("immediate_response"):
                result["immediate"] = {"status": response.immediate_response.status.code,
                                       "body": response.immediate_response.body[:300]}
            if response.HasField("request_headers"):
                mutation = response.request_headers.response.header_mutation
                for header in mutation.set_headers:
                    if header.header.key == "x-gateway-destination-endpoint":
                        result["endpoint"] = (header.header.raw_value or header.header.value.encode()).decode()
                lb = response.dynamic_metadata.fields.get("envoy.lb")
                if lb is not None:
                    result["metadata_endpoint"] = lb.struct_value.fields["x-gateway-destination-endpoint"].string_value
        return result

    def close(self) -> None:
        self.channel.close()
        self.relay.close()


def picker_metrics(timeout: float = 5) -> str:
    """The picker's own Prometheus text (its metrics port, in its namespace)."""
    return picker_get("/metrics", timeout)[1]


def picker_get(path: str, timeout: float = 5) -> tuple[int, str]:
    """(status, body) of a GET on the picker's metrics port (9090: /metrics, and /debug/pprof/ where profiling is on)."""
    connection = http.client.HTTPConnection(PICKER_ADDRESS, PICKER_METRICS_PORT, timeout=timeout)
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        return answer.status, answer.read().decode(errors="replace")
    finally:
        connection.close()


def pod_ips(k8s: kube.Kube, namespace: str, selector: str) -> dict[str, str]:
    """pod IP -> pod name of the running, not terminating, pods `selector` selects."""
    return {p["status"]["podIP"]: p["metadata"]["name"] for p in k8s.pods(namespace, selector)
            if p["status"].get("podIP") and not p["metadata"].get("deletionTimestamp")}
