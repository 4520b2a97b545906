"""Where the node lives and what it is called: names, addresses, taint and paths, shared by its concerns."""
from __future__ import annotations

import hashlib
from pathlib import Path

# The node's sockets and state: a unix socket path may not exceed 107 bytes (containerd's ttrpc socket, the
# kubelet's plugin sockets), so they live under a short folder named by a hash of the state folder, however long
# the checkout's path is; <state>/node links to it.
NODE_ROOT = Path("/run/gpt-oss-node")
NODE_NAME = "gpt-oss-node"
BRIDGE = "gptoss0"
POD_CIDR = "10.244.0.0/24"
GATEWAY = "10.244.0.1"
SERVICE_CIDR = "10.0.0.0/24"
CLUSTER_DOMAIN = "cluster.local"
FAKE_HUB_PORT = 8780
# Where pods reach the API server: the `kubernetes` Service's endpoint, a relay to 127.0.0.1 (node/api_relay.py).
API_RELAY_PORT = 6443
# HTTPS with a test CA: the chart refuses a plain-HTTP Hub mirror (issue 36).
FAKE_HUB_URL = f"https://{GATEWAY}:{FAKE_HUB_PORT}"
CNI_NETWORK = "gpt-oss-node"
CNI_BIN = Path("/usr/lib/cni")
NODE_TAINT = {"key": "gpt-oss.test/node", "value": "kubelet", "effect": "NoSchedule"}
NODE_PROFILE = "b200"  # the GPU node it is labelled like (ci/cluster/gpu-node-profiles.json)
LOCK = Path("/run/gpt-oss-node.lock")
NODE_COMPONENTS = ["containerd", "dnsmasq", "node-dns", "api-relay", "kubelet", "kube-proxy"]
KUBELET_PORT = 10250
TOOLS = ["containerd", "containerd-shim-runc-v2", "runc", "ctr", "iptables", "ip6tables", "iptables-save", "ip",
         "dnsmasq", "mount", "umount", "conntrack"]


def node_dir(state: Path) -> Path:
    return NODE_ROOT / hashlib.sha256(str(state.resolve()).encode()).hexdigest()[:12]


def socket(state: Path) -> Path:
    return node_dir(state) / "containerd" / "containerd.sock"


def hosts_file(state: Path) -> Path:
    return node_dir(state) / "dns" / "hosts"
