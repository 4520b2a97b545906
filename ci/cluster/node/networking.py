"""The node's network: the bridge and CNI configuration pods attach with, kube-proxy's configuration and clean-up,
and the connections tracked to pods and Services."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from .layout import BRIDGE, CNI_NETWORK, GATEWAY, NODE_NAME, POD_CIDR, SERVICE_CIDR, node_dir


def write_cni_config(state: Path) -> None:
    """The CNI conflist: bridge + host-local + portmap on BRIDGE, no masquerade."""
    node = node_dir(state)
    (node / "cni" / "net.d" / "10-gpt-oss-node.conflist").write_text(json.dumps({
        "cniVersion": "1.0.0", "name": CNI_NETWORK,
        "plugins": [
            # No ipMasq: pods reach each other and the host, nothing beyond it.
            {"type": "bridge", "bridge": BRIDGE, "isGateway": True, "ipMasq": False, "hairpinMode": True,
             "ipam": {"type": "host-local", "dataDir": str(node / "cni" / "ipam"),
                      "ranges": [[{"subnet": POD_CIDR, "gateway": GATEWAY}]], "routes": [{"dst": "0.0.0.0/0"}]}},
            {"type": "portmap", "capabilities": {"portMappings": True}},
        ]}, indent=1))


def write_proxy_config(state: Path) -> Path:
    """kube-proxy's configuration: iptables mode, masqueradeAll, node ports on the bridge address only."""
    import yaml
    node = node_dir(state)
    proxy_config = node / "kube-proxy.yaml"
    proxy_config.write_text(yaml.safe_dump({
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1", "kind": "KubeProxyConfiguration",
        "clientConnection": {"kubeconfig": str(state / "kubeconfig")},
        "hostnameOverride": NODE_NAME, "mode": "iptables", "clusterCIDR": POD_CIDR,
        "healthzBindAddress": "127.0.0.1:10256", "metricsBindAddress": "127.0.0.1:10249",
        # Replies to Service traffic come back through the host (no br_netfilter setting needed); no node
        # ports on the host's own addresses or on localhost (no route_localnet).
        "iptables": {"masqueradeAll": True, "localhostNodePorts": False, "syncPeriod": "10s", "minSyncPeriod": "1s"},
        "nodePortAddresses": [f"{GATEWAY}/32"],
        # 0: leave the host's conntrack sysctls alone.
        "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
    }))
    return proxy_config


def create_bridge() -> None:
    if not Path(f"/sys/class/net/{BRIDGE}").exists():
        subprocess.run(["ip", "link", "add", BRIDGE, "type", "bridge"], check=True)
    subprocess.run(["ip", "addr", "replace", f"{GATEWAY}/{POD_CIDR.split('/')[1]}", "dev", BRIDGE], check=True)
    subprocess.run(["ip", "link", "set", BRIDGE, "up"], check=True)


def delete_bridge(existed: bool) -> None:
    """The bridge deleted, unless it was there before the node."""
    if not existed and Path(f"/sys/class/net/{BRIDGE}").exists():
        subprocess.run(["ip", "link", "delete", BRIDGE], capture_output=True)


def cleanup_proxy(binaries: Path | None) -> None:
    """`kube-proxy --cleanup`: its iptables rules gone (when its binary is there)."""
    proxy = binaries / "kube-proxy" if binaries else None
    if proxy and proxy.is_file():
        subprocess.run([str(proxy), "--cleanup", "--v=0"], capture_output=True, timeout=60)


def forget_connections() -> None:
    """Connections tracked to and from the pods and Services deleted."""
    for cidr in (POD_CIDR, SERVICE_CIDR):
        for side in ("--src", "--dst"):
            subprocess.run(["conntrack", "-D", side, cidr], capture_output=True)
