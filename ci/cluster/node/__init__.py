"""A real Kubernetes node for the cluster tier: containerd, runc, CNI, the kubelet, kube-proxy and a cluster DNS.

python -m ci.cluster control-plane calls start() after its API server is up, when a `kubelet` binary sits beside the
control-plane binaries, and stop() first thing in its own stop, so one start/stop pair runs both:

    python -m ci.cluster control-plane start --dir .envtest     ... plus the node, when there is a kubelet
    python -m ci.cluster control-plane stop  --dir .envtest     ... the node first, undoing every host change it made

What runs (each recorded in <dir>/pids.json, so `python -m ci.cluster control-plane restart --component kubelet` works):
  containerd   Debian's, with its own config, root, state and socket under <dir>/node (settings from
               ../shared/NODE-FACTS.md: CRI restrict_oom_score_adj, runc with cgroupfs, the pause image)
  dnsmasq      Debian's, on the bridge address (GATEWAY:53): the cluster DNS. It answers
               <service>.<namespace>.svc.cluster.local from a hosts file and NXDOMAIN for the rest of
               cluster.local; it forwards nothing (pods reach nothing beyond this machine)
  node-dns     this script's `dns` command: watches Services and rewrites that hosts file (SIGHUP to dnsmasq)
  api-relay    this script's `api-relay` command: the `kubernetes` Service's endpoint (GATEWAY:API_RELAY_PORT),
               passing pods' connections to the API server on 127.0.0.1 (node/api_relay.py), for in-cluster
               clients such as the Dynamo operator
  kubelet      failCgroupV1 false, cgroupfs, address 0.0.0.0, node IP GATEWAY, clusterDNS GATEWAY; its client
               certificate (system:node:NODE_NAME) and serving certificate come from the control plane's CA
  kube-proxy   when its binary is there: iptables mode, masqueradeAll (Service replies leave through the host,
               so no bridge netfilter setting is needed); without it the DNS answers with the Services' ready
               endpoints (pod IPs) instead of ClusterIPs
Pods attach to the bridge BRIDGE (POD_CIDR, CNI bridge + host-local + portmap, loopback), with no masquerade to
the outside: they reach each other, the host at GATEWAY, and nothing else.

The node registers as NODE_NAME, labelled like the API-only B200 node of ci/cluster/gpu-node-profiles.json (the fake
nvidia.com/gpu capacity patched into its status), and tainted NODE_TAINT, so the tests that expect API-only nodes
never land on it; the node tests (tests/cluster/test_node.py) lift the taint for their module.

Images: python -m ci.cluster node-images builds them (cached outside the checkout) and start() imports them into containerd.

Host changes, each undone by stop() (recorded before start in <dir>/node/host.json):
  - sysctls the kubelet and the bridge plugin set (SYSCTLS): saved before, restored after;
  - iptables/ip6tables chains named KUBE-* and CNI-* that did not exist before, and the rules jumping to them
    (after `kube-proxy --cleanup`);
  - the bridge link; every mount under <dir>/node, /run/netns and /run/containerd; the cgroups kubepods and
    k8s.io (each controller); /run/netns, /run/containerd, /var/lib/cni and /var/log/containers when they did
    not exist before (else only what this node added to them);
  - every process this node started: containers (tasks killed through containerd), shims (identified by this
    node's socket), then the recorded daemons.
One node per machine: LOCK names the state folder of the running one. Needs root.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

from .. import REPO, processes
from ..binaries import find_binaries
from . import api_relay, containerd, dns, host, kubelet, networking, policies
# The node's names, addresses and paths, for the control plane and the node tests (node.NODE_NAME, node.socket()).
from .layout import (API_RELAY_PORT, BRIDGE, CLUSTER_DOMAIN, CNI_BIN, CNI_NETWORK, FAKE_HUB_PORT, FAKE_HUB_URL, GATEWAY,  # noqa: F401
                     KUBELET_PORT, LOCK, NODE_COMPONENTS, NODE_NAME, NODE_PROFILE, NODE_ROOT, NODE_TAINT, POD_CIDR,
                     SERVICE_CIDR, TOOLS, hosts_file, node_dir, socket)
from .host import mounts_under  # noqa: F401  (the control plane's stop never deletes through a mount)
from .kubelet import label_node  # noqa: F401  (the node tests label it again)

# This package's main (`python -m ci.cluster node`, from the checkout, as the control plane runs): the node-dns
# watcher and the policy tests' test host are started through it.
COMMAND = [sys.executable, "-m", "ci.cluster", "node"]


def why_not(binaries: Path | None) -> str | None:
    """None when a node can start here, else the reason it does not (the node tests print it when they skip)."""
    if os.environ.get("GPT_OSS_NODE", "").strip().lower() in {"0", "false", "no", "off"}:
        return "GPT_OSS_NODE=0 turns the node off"
    if binaries is None or not (binaries / "kubelet").is_file():
        return (f"no kubelet binary beside the control-plane binaries ({binaries}); the node tests need a kubelet "
                "of the control plane's version there")
    if os.geteuid() != 0:
        return "a node needs root (containerd, runc, mounts, iptables)"
    missing = [tool for tool in TOOLS if not shutil.which(tool)]
    missing += [f"{CNI_BIN}/{plugin}" for plugin in ("bridge", "host-local", "portmap", "loopback")
                if not (CNI_BIN / plugin).is_file()]
    if missing:
        return f"missing {', '.join(missing)} (.ci/run installs the node's Debian packages)"
    if LOCK.exists():
        other = Path(LOCK.read_text().strip())
        if (other / "pids.json").exists() and not clear_stale_lock(other, binaries):
            return (f"another node runs on this machine (state {other}; one node per machine: "
                    f"python -m ci.cluster control-plane stop --dir {other})")
    return None


def clear_stale_lock(other: Path, binaries: Path | None) -> bool:
    """Restore the host after a node none of whose recorded processes still runs (its session was killed); True if so."""
    recorded = json.loads((other / "pids.json").read_text())
    if any(processes.alive(entry) for entry in recorded.values()):
        return False
    print(f"node: the node recorded in {other} runs no process any more; restoring the host it left", flush=True)
    problems = stop(other, binaries)
    LOCK.unlink(missing_ok=True)
    return not problems


def write_configs(state: Path, pki: Path, server: str) -> dict[str, Path]:
    """Every configuration file of the node, under node_dir(state)."""
    node = node_dir(state)
    for folder in ("containerd", "cni/net.d", "cni/ipam", "kubelet", "pod-logs", "dns", "runc"):
        (node / folder).mkdir(parents=True, exist_ok=True)
    containerd_config = containerd.write_config(state)
    networking.write_cni_config(state)
    kubelet_config, kubelet_kubeconfig = kubelet.write_config(state, pki, server)
    proxy_config = networking.write_proxy_config(state)
    return {"containerd": containerd_config, "kubelet": kubelet_config, "kubelet-kubeconfig": kubelet_kubeconfig,
            "kube-proxy": proxy_config}


def wait(what: str, check, timeout: float, log: Path | None = None, interval: float = 0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(interval)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:]) if log and log.exists() else ""
    raise SystemExit(f"node: {what} not within {timeout:.0f}s" + (f"; last log lines:\n{tail}" if tail else ""))


def start(state: Path, binaries: Path, pki: Path, server: str, spawn, api) -> str:
    """Start the node; returns a one-line summary. Raises SystemExit on failure (the caller then stops)."""
    from kubernetes import client
    node = node_dir(state)
    node.mkdir(parents=True, exist_ok=True)
    (state / "node").unlink(missing_ok=True)
    (state / "node").symlink_to(node)
    host.record_host(state)
    LOCK.write_text(str(state))
    started = time.monotonic()
    kubelet.write_certs(state, pki)
    configs = write_configs(state, pki, server)
    networking.create_bridge()
    spawn(state, "containerd", [shutil.which("containerd"), "--config", str(configs["containerd"])])
    wait("containerd answering on its socket", lambda: socket(state).exists() and containerd.ctr(
        state, "version", timeout=10).returncode == 0, 60, state / "logs" / "containerd.log")
    missing, image_times = containerd.import_images(state)
    hosts_file(state).write_text("")
    spawn(state, "dnsmasq", dns.dnsmasq_argv(state))
    proxy = (binaries / "kube-proxy").is_file()
    spawn(state, "node-dns", [*COMMAND, "dns", "--dir", str(state)]
          + ([] if proxy else ["--endpoints"]))
    spawn(state, "api-relay", [*COMMAND, "api-relay", "--dir", str(state)])
    api_relay.publish(api)
    spawn(state, "kubelet", [str(binaries / "kubelet"), "--config", str(configs["kubelet"]),
                             "--kubeconfig", str(configs["kubelet-kubeconfig"]), "--root-dir", str(node / "kubelet"),
                             "--hostname-override", NODE_NAME, "--node-ip", GATEWAY, "--v=2"])
    core = client.CoreV1Api(api)

    def ready():
        try:
            status = core.read_node(NODE_NAME).status
        except Exception:
            return False
        return any(c.type == "Ready" and c.status == "True" for c in status.conditions or [])

    wait(f"node {NODE_NAME} Ready", ready, 120, state / "logs" / "kubelet.log")
    kubelet.label_node(api)
    if proxy:
        spawn(state, "kube-proxy", [str(binaries / "kube-proxy"), "--config", str(configs["kube-proxy"]), "--v=2"])
        wait("kube-proxy healthy", lambda: _http_ok("http://127.0.0.1:10256/healthz"), 60,
             state / "logs" / "kube-proxy.log")
    summary = (f"node {NODE_NAME} Ready in {time.monotonic() - started:.0f}s (kubelet, containerd"
               + (", kube-proxy" if proxy else ", no kube-proxy: DNS answers with endpoints") + f", dnsmasq on {GATEWAY}); "
               f"images built/checked in {image_times['build']:.0f}s, imported in {image_times['import']:.0f}s")
    if missing:
        summary += f"; images NOT built: {', '.join(missing)}"
    (node / "summary.json").write_text(json.dumps({"summary": summary, "missing_images": missing,
                                                   "kube_proxy": proxy, **image_times}))
    return summary


def _http_ok(url: str) -> bool:
    import urllib.request
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url, timeout=2) as response:
            return response.status == 200
    except Exception:
        return False


def stop_processes(state: Path, names: list[str]) -> None:
    pids_file = state / "pids.json"
    if not pids_file.exists():
        return
    pids = json.loads(pids_file.read_text())
    for name in names:
        entry = pids.get(name)
        if entry and processes.terminate(entry):
            print(f"stopped {name} (pid {entry['pid']})")


def stop(state: Path, binaries: Path | None = None) -> list[str]:
    """Stop the node and undo its host changes; returns what could not be undone (empty when all was)."""
    node = node_dir(state)
    host_file = node / "host.json"
    if not host_file.exists():
        return []
    recorded = json.loads(host_file.read_text())
    # The policy engine and test host of the policy tests, when a run ended before they stopped them.
    problems = [f"policy engine: {p}" for p in policies.stop(state)]
    policies.stop_test_host(state)
    pids = json.loads((state / "pids.json").read_text()) if (state / "pids.json").exists() else {}
    if "kubelet" in pids:
        kubelet.drain_pods(state)
    stop_processes(state, ["kube-proxy", "node-dns", "dnsmasq", "api-relay", "kubelet"])  # containerd after its containers
    containerd.kill_containers(state, recorded["cgroups"])
    stop_processes(state, ["containerd"])
    containerd.kill_containers(state, recorded["cgroups"])  # shims of containers containerd could not stop
    networking.cleanup_proxy(binaries)
    left = host.unmount_all([str(node), str(containerd.containerd_root()), "/run/netns", "/run/containerd"])
    containerd.remove_cri_folders()
    problems += [f"still mounted: {p}" for p in left]
    removed_chains = host.remove_chains(recorded["chains"])
    problems += [f"cgroup left: {p}" for p in host.remove_cgroups(recorded["cgroups"])]
    networking.delete_bridge(recorded["bridge"])
    host.restore_sysctls(recorded)
    networking.forget_connections()
    host.clean_shared_dirs(recorded, node)
    problems += host.sysctl_problems(recorded)
    if LOCK.exists() and LOCK.read_text().strip() == str(state):
        LOCK.unlink()
    if (state / "pids.json").exists():  # so that no `restart` ever starts them again
        pids = json.loads((state / "pids.json").read_text())
        for name in NODE_COMPONENTS:
            pids.pop(name, None)
        (state / "pids.json").write_text(json.dumps(pids, indent=1))
    if not problems:
        host_file.unlink()
        if not host.mounts_under([str(node)]):
            shutil.rmtree(node, ignore_errors=True)
            (state / "node").unlink(missing_ok=True)
            if NODE_ROOT.is_dir() and not any(NODE_ROOT.iterdir()):
                NODE_ROOT.rmdir()
    print(f"node stopped: host restored (removed chains: {len(removed_chains)}, sysctls restored, bridge "
          f"{'kept (pre-existing)' if recorded['bridge'] else 'deleted'})"
          + (f"; NOT undone: {'; '.join(problems)}" if problems else ""))
    return problems


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["dns", "api-relay", "stop", "status", "check", "listen"])
    parser.add_argument("--dir", type=Path, default=REPO / ".envtest")
    parser.add_argument("--endpoints", action="store_true", help="dns: answer with endpoint addresses")
    args = parser.parse_args(argv)
    state = args.dir.resolve()
    if args.command == "dns":
        return dns.dns(state, args.endpoints)
    if args.command == "api-relay":
        return api_relay.relay(api_relay.upstream_of(state))
    if args.command == "listen":  # the policy tests' test host (policies.start_test_host runs it in a namespace)
        return policies.listen()
    if args.command == "check":
        # Whether a node can start here (before spending minutes on its images): exit 0, else the reason, exit 1.
        reason = why_not(find_binaries()[0])
        print(reason or "a node can start here")
        return 1 if reason else 0
    if args.command == "status":
        summary = node_dir(state) / "summary.json"
        print(summary.read_text() if summary.exists() else f"no node recorded in {state}")
        return 0
    return 1 if stop(state) else 0
