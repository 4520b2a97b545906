"""The kubelet: its certificates (from the control plane's CA), kubeconfig and configuration; the node's labels,
taint and fake GPU capacity; and draining its pods through the API before it stops."""
from __future__ import annotations

import datetime
import ipaddress
import json
import time
from pathlib import Path

from .. import HERE
from .containerd import ctr
from .layout import (CLUSTER_DOMAIN, GATEWAY, KUBELET_PORT, NODE_NAME, NODE_PROFILE, NODE_TAINT, node_dir,
                     socket)


def write_certs(state: Path, pki: Path) -> None:
    """The kubelet's client (system:node:NODE_NAME) and serving certificates, from the control plane's CA."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    ca_key = serialization.load_pem_private_key((pki / "ca.key").read_bytes(), None)
    ca = x509.load_pem_x509_certificate((pki / "ca.crt").read_bytes())
    now = datetime.datetime.now(datetime.timezone.utc)
    out = node_dir(state) / "pki"
    out.mkdir(parents=True, exist_ok=True)

    def issue(name: str, subject: list, usage, sans=None) -> None:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        builder = (x509.CertificateBuilder().subject_name(x509.Name(subject)).issuer_name(ca.subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=2))
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        (out / f"{name}.key").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                            serialization.PrivateFormat.TraditionalOpenSSL,
                                                            serialization.NoEncryption()))
        (out / f"{name}.crt").write_bytes(builder.sign(ca_key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM))

    issue("kubelet-client", [x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:nodes"),
                             x509.NameAttribute(NameOID.COMMON_NAME, f"system:node:{NODE_NAME}")],
          ExtendedKeyUsageOID.CLIENT_AUTH)
    issue("kubelet-serving", [x509.NameAttribute(NameOID.COMMON_NAME, NODE_NAME)], ExtendedKeyUsageOID.SERVER_AUTH,
          [x509.DNSName(NODE_NAME), x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address(GATEWAY)),
           x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])


def kubeconfig_for(path: Path, server: str, ca: Path, cert: Path, key: Path) -> None:
    import yaml
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "node",
        "clusters": [{"name": "gpt-oss-test", "cluster": {"server": server, "certificate-authority": str(ca)}}],
        "users": [{"name": "node", "user": {"client-certificate": str(cert), "client-key": str(key)}}],
        "contexts": [{"name": "node", "context": {"cluster": "gpt-oss-test", "user": "node"}}]}))


def write_config(state: Path, pki: Path, server: str) -> tuple[Path, Path]:
    """The kubelet's kubeconfig and KubeletConfiguration; (config, kubeconfig)."""
    import yaml
    node = node_dir(state)
    out = node / "pki"
    kubelet_kubeconfig = node / "kubelet" / "kubeconfig"
    kubeconfig_for(kubelet_kubeconfig, server, pki / "ca.crt", out / "kubelet-client.crt", out / "kubelet-client.key")
    kubelet = node / "kubelet" / "config.yaml"
    kubelet.write_text(yaml.safe_dump({
        "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
        # The host name resolves to 127.0.0.1 here: listen everywhere so logs/exec reach it (NODE-FACTS).
        "address": "0.0.0.0", "port": KUBELET_PORT, "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1", "healthzPort": 10248,
        "authentication": {"anonymous": {"enabled": False}, "webhook": {"enabled": False},
                           "x509": {"clientCAFile": str(pki / "ca.crt")}},
        "authorization": {"mode": "AlwaysAllow"},  # only holders of a certificate from the tier's CA get in
        "tlsCertFile": str(out / "kubelet-serving.crt"), "tlsPrivateKeyFile": str(out / "kubelet-serving.key"),
        # 1.36 and 1.37 refuse cgroup v1 by default; this VM has it. containerd 1.6 reports no cgroup driver: cgroupfs.
        "failCgroupV1": False, "cgroupDriver": "cgroupfs", "failSwapOn": False,
        "containerRuntimeEndpoint": f"unix://{socket(state)}",
        "clusterDNS": [GATEWAY], "clusterDomain": CLUSTER_DOMAIN,
        "podLogsDir": str(node / "pod-logs"),
        "registerWithTaints": [NODE_TAINT],
        # Imported images cannot be pulled again: never garbage-collect them.
        "imageGCHighThresholdPercent": 100, "imageGCLowThresholdPercent": 99,
        "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%",
                         "nodefs.inodesFree": "1%"},
        "serializeImagePulls": False, "protectKernelDefaults": False,
        "nodeStatusUpdateFrequency": "10s", "syncFrequency": "10s", "rotateCertificates": False,
    }))
    return kubelet, kubelet_kubeconfig


def label_node(api) -> None:
    """Labels and fake GPU capacity of the NODE_PROFILE node, as the GPU Operator would give them."""
    from kubernetes import client
    profiles = json.loads((HERE / "gpu-node-profiles.json").read_text())
    spec = profiles["profiles"][NODE_PROFILE]
    core = client.CoreV1Api(api)
    # Exactly NODE_TAINT: admission added node.kubernetes.io/not-ready at registration, which only the
    # node-lifecycle controller (off in this control plane) would lift.
    core.patch_node(NODE_NAME, {"spec": {"taints": [NODE_TAINT]}})
    core.patch_node(NODE_NAME, {"metadata": {"labels": {
        profiles["profileLabel"]: "kubelet", "nvidia.com/gpu.product": spec["product"],
        "nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": str(spec["gpus"])}}})
    gpus = str(spec["gpus"])
    core.patch_node_status(NODE_NAME, {"status": {"capacity": {"nvidia.com/gpu": gpus},
                                                  "allocatable": {"nvidia.com/gpu": gpus}}})


def drain_pods(state: Path) -> None:
    """Delete this node's pods while the kubelet runs, so it tears their sandboxes down (CNI DEL) itself."""
    try:
        from kubernetes import client, config
        configuration = client.Configuration()
        config.load_kube_config(config_file=str(state / "kubeconfig"), client_configuration=configuration)
        core = client.CoreV1Api(client.ApiClient(configuration))
        pods = core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={NODE_NAME}",
                                                _request_timeout=5).items
        for pod in pods:
            core.delete_namespaced_pod(pod.metadata.name, pod.metadata.namespace, grace_period_seconds=0,
                                       _request_timeout=5)
    except Exception as error:  # no API server or no kubelet: the brute-force part below does it all
        print(f"node: pods not drained through the API ({type(error).__name__}); removing them directly")
        return
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and socket(state).exists():
        result = ctr(state, "containers", "ls", "-q", timeout=10)
        if result.returncode != 0 or not result.stdout.split():
            return
        time.sleep(0.5)
