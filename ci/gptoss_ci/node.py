#!/usr/bin/env python3
"""A real Kubernetes node for the cluster tier: containerd, runc, CNI, the kubelet, kube-proxy and a cluster DNS.

ci/control-plane.py calls start() after its API server is up, when a `kubelet` binary sits beside the
control-plane binaries, and stop() first thing in its own stop, so one start/stop pair runs both:

    ci/control-plane.py start --dir .envtest     ... plus the node, when there is a kubelet
    ci/control-plane.py stop  --dir .envtest     ... the node first, undoing every host change it made

What runs (each recorded in <dir>/pids.json, so `ci/control-plane.py restart --component kubelet` works):
  containerd   Debian's, with its own config, root, state and socket under <dir>/node (settings from
               ../shared/NODE-FACTS.md: CRI restrict_oom_score_adj, runc with cgroupfs, the pause image)
  dnsmasq      Debian's, on the bridge address (GATEWAY:53): the cluster DNS. It answers
               <service>.<namespace>.svc.cluster.local from a hosts file and NXDOMAIN for the rest of
               cluster.local; it forwards nothing (pods reach nothing beyond this machine)
  node-dns     this script's `dns` command: watches Services and rewrites that hosts file (SIGHUP to dnsmasq)
  kubelet      failCgroupV1 false, cgroupfs, address 0.0.0.0, node IP GATEWAY, clusterDNS GATEWAY; its client
               certificate (system:node:NODE_NAME) and serving certificate come from the control plane's CA
  kube-proxy   when its binary is there: iptables mode, masqueradeAll (Service replies leave through the host,
               so no bridge netfilter setting is needed); without it the DNS answers with the Services' ready
               endpoints (pod IPs) instead of ClusterIPs
Pods attach to the bridge BRIDGE (POD_CIDR, CNI bridge + host-local + portmap, loopback), with no masquerade to
the outside: they reach each other, the host at GATEWAY, and nothing else.

The node registers as NODE_NAME, labelled like the API-only B200 node of ci/gpu-node-profiles.json (the fake
nvidia.com/gpu capacity patched into its status), and tainted NODE_TAINT, so the tests that expect API-only nodes
never land on it; the node tests (tests/cluster/test_node.py) lift the taint for their module.

Images: ci/node-images.py builds them (cached outside the checkout) and start() imports them into containerd.

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
import datetime
import hashlib
import ipaddress
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # also when loaded by path, not run
import processes  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
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
# HTTPS with a test CA: the chart refuses a plain-HTTP Hub mirror (issue 36).
FAKE_HUB_URL = f"https://{GATEWAY}:{FAKE_HUB_PORT}"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
CNI_NETWORK = "gpt-oss-node"
CNI_BIN = Path("/usr/lib/cni")
NODE_TAINT = {"key": "gpt-oss.test/node", "value": "kubelet", "effect": "NoSchedule"}
NODE_PROFILE = "b200"  # the GPU node it is labelled like (ci/gpu-node-profiles.json)
LOCK = Path("/run/gpt-oss-node.lock")
NODE_COMPONENTS = ["containerd", "dnsmasq", "node-dns", "kubelet", "kube-proxy"]
KUBELET_PORT = 10250
# What the kubelet (vm.*, kernel.*), the bridge plugin (ip_forward) and kube-proxy may set.
SYSCTLS = ["vm.overcommit_memory", "kernel.panic", "kernel.panic_on_oops", "kernel.keys.root_maxkeys",
           "kernel.keys.root_maxbytes", "net.ipv4.ip_forward", "net.ipv4.conf.all.forwarding",
           "net.ipv6.conf.all.forwarding", "net.ipv4.conf.all.route_localnet",
           "net.bridge.bridge-nf-call-iptables", "net.bridge.bridge-nf-call-ip6tables",
           "net.netfilter.nf_conntrack_max", "net.netfilter.nf_conntrack_tcp_timeout_established",
           "net.netfilter.nf_conntrack_tcp_timeout_close_wait", "net.netfilter.nf_conntrack_tcp_be_liberal"]
SHARED_DIRS = ["/run/netns", "/run/containerd", "/var/lib/cni", "/var/log/containers", "/var/log/pods"]
CGROUP_NAMES = ["kubepods", "kubepods.slice", "k8s.io"]
CHAIN_PREFIXES = ("KUBE-", "CNI-")
TOOLS = ["containerd", "containerd-shim-runc-v2", "runc", "ctr", "iptables", "ip6tables", "iptables-save", "ip",
         "dnsmasq", "mount", "umount", "conntrack"]


# --- paths ---------------------------------------------------------------------------------------


def node_dir(state: Path) -> Path:
    return NODE_ROOT / hashlib.sha256(str(state.resolve()).encode()).hexdigest()[:12]


def socket(state: Path) -> Path:
    return node_dir(state) / "containerd" / "containerd.sock"


def hosts_file(state: Path) -> Path:
    return node_dir(state) / "dns" / "hosts"


# --- whether a node can run here ----------------------------------------------------------------


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
        other = LOCK.read_text().strip()
        if Path(other, "pids.json").exists():
            return (f"another node runs on this machine (state {other}; one node per machine: "
                    f"ci/control-plane.py stop --dir {other})")
    return None


# --- host state: record, restore -----------------------------------------------------------------


def read_sysctl(name: str) -> str | None:
    path = Path("/proc/sys") / name.replace(".", "/")
    try:
        return path.read_text().strip()
    except OSError:
        return None


def write_sysctl(name: str, value: str) -> None:
    try:
        (Path("/proc/sys") / name.replace(".", "/")).write_text(value)
    except OSError as error:
        print(f"node: could not restore {name}={value}: {error}")


def chains() -> dict[str, dict[str, list[str]]]:
    """{family: {table: [chains]}} as iptables-save / ip6tables-save list them."""
    found: dict[str, dict[str, list[str]]] = {}
    for family, tool in (("ipv4", "iptables-save"), ("ipv6", "ip6tables-save")):
        output = subprocess.run([tool], capture_output=True, text=True).stdout
        table = None
        for line in output.splitlines():
            if line.startswith("*"):
                table = line[1:]
                found.setdefault(family, {}).setdefault(table, [])
            elif line.startswith(":") and table:
                found[family][table].append(line[1:].split()[0])
    return found


def cgroup_roots() -> list[Path]:
    base = Path("/sys/fs/cgroup")
    if (base / "cgroup.controllers").exists():  # cgroup v2: one hierarchy
        return [base]
    return [p for p in base.iterdir() if p.is_dir() and not p.is_symlink()]


def record_host(state: Path) -> dict:
    host = {
        "sysctls": {name: value for name in SYSCTLS if (value := read_sysctl(name)) is not None},
        "dirs": {path: Path(path).exists() for path in SHARED_DIRS},
        "chains": chains(),
        "cgroups": [str(root / name) for root in cgroup_roots() for name in CGROUP_NAMES if (root / name).exists()],
        "bridge": Path(f"/sys/class/net/{BRIDGE}").exists(),
        "recorded": datetime.datetime.now(datetime.timezone.utc).isoformat(),
    }
    (node_dir(state) / "host.json").write_text(json.dumps(host, indent=1))
    return host


def mounts_under(prefixes: list[str]) -> list[str]:
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if any(point == p or point.startswith(p.rstrip("/") + "/") for p in prefixes):
            found.append(point)
    return found


def unmount_all(prefixes: list[str]) -> list[str]:
    """Unmount everything under the prefixes, deepest first; returns what is still mounted."""
    for _ in range(5):
        points = sorted(set(mounts_under(prefixes)), key=lambda p: p.count("/"), reverse=True)
        if not points:
            return []
        for point in points:
            if subprocess.run(["umount", point], capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", point], capture_output=True)
    return mounts_under(prefixes)


def remove_chains(before: dict) -> list[str]:
    """Delete the KUBE-*/CNI-* chains that were not there before, with every rule that jumps to them."""
    removed = []
    for family, (tool, save) in {"ipv4": ("iptables", "iptables-save"), "ipv6": ("ip6tables", "ip6tables-save")}.items():
        for table, names in chains().get(family, {}).items():
            old = set(before.get(family, {}).get(table, []))
            new = [n for n in names if n.startswith(CHAIN_PREFIXES) and n not in old]
            if not new:
                continue
            rules = subprocess.run([save, "-t", table], capture_output=True, text=True).stdout.splitlines()
            for rule in rules:  # -A CHAIN ... -j NEW in a chain that stays: delete it
                if not rule.startswith("-A "):
                    continue
                args = shlex.split(rule)
                jumps = {args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-j", "-g", "--jump", "--goto")}
                if args[1] not in new and jumps & set(new):
                    subprocess.run([tool, "-w", "-t", table, "-D", *args[1:]], capture_output=True)
            for name in new:
                subprocess.run([tool, "-w", "-t", table, "-F", name], capture_output=True)
            for name in new:
                if subprocess.run([tool, "-w", "-t", table, "-X", name], capture_output=True).returncode == 0:
                    removed.append(f"{family}/{table}/{name}")
    return removed


def remove_cgroups(before: list[str]) -> list[str]:
    left = []
    for root in cgroup_roots():
        for name in CGROUP_NAMES:
            top = root / name
            if not top.exists() or str(top) in before:
                continue
            for _ in range(20):
                for folder in sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: len(p.parts),
                                     reverse=True) + [top]:
                    try:
                        folder.rmdir()
                    except OSError:
                        pass
                if not top.exists():
                    break
                time.sleep(0.25)
            if top.exists():
                left.append(str(top))
    return left


# --- processes -------------------------------------------------------------------------------------


def ctr(state: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(["ctr", "--address", str(socket(state)), "--namespace", "k8s.io", *args],
                          capture_output=True, text=True, timeout=timeout)


def processes_with(text: str) -> list[int]:
    """pids whose command line contains `text` (this node's socket path: its shims)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def kill_containers(state: Path, kept_cgroups: list[str]) -> None:
    """Every task of this node's containerd killed and deleted, then the containers; shims last."""
    if socket(state).exists():
        try:
            tasks = [line.split()[0] for line in ctr(state, "tasks", "ls", timeout=20).stdout.splitlines()[1:] if line]
            for task in tasks:
                ctr(state, "tasks", "kill", "--signal", "SIGKILL", task, timeout=20)
            time.sleep(0.5)
            for task in tasks:
                ctr(state, "tasks", "delete", "--force", task, timeout=20)
            containers = ctr(state, "containers", "ls", "-q", timeout=20).stdout.split()
            if containers:
                ctr(state, "containers", "delete", *containers, timeout=60)
        except (subprocess.TimeoutExpired, OSError) as error:
            print(f"node: containerd did not answer while stopping containers ({error}); killing its shims")
    # Processes left in the pods' cgroups (a shim killed before its container), then the shims themselves.
    # Only in cgroups this node created: a kubepods that was there before belongs to someone else.
    for root in cgroup_roots():
        for name in ("kubepods", "k8s.io"):
            if str(root / name) in kept_cgroups or not (root / name).exists():
                continue
            for procs in (root / name).rglob("cgroup.procs"):
                for pid in procs.read_text().split():
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except (ProcessLookupError, ValueError):
                        pass
    for pid in processes_with(str(socket(state))):
        if pid != os.getpid():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


# --- certificates and configuration -------------------------------------------------------------------


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


def write_configs(state: Path, pki: Path, server: str) -> dict[str, Path]:
    import yaml
    node = node_dir(state)
    for folder in ("containerd", "cni/net.d", "cni/ipam", "kubelet", "pod-logs", "dns", "runc"):
        (node / folder).mkdir(parents=True, exist_ok=True)
    containerd = node / "containerd" / "config.toml"
    containerd.write_text(f"""version = 2
root = "{containerd_root()}"
state = "{node / 'containerd' / 'state'}"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
                    "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "{socket(state)}"
[ttrpc]
  address = "{socket(state)}.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "{node / 'containerd' / 'opt'}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{PAUSE_IMAGE}"
  # This VM drops CAP_SYS_RESOURCE: runc cannot lower oom_score_adj to the pause container's -998 (NODE-FACTS).
  restrict_oom_score_adj = true
  # Pods' network namespaces under this node's state, not /run/netns.
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "{node / 'runc'}"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{CNI_BIN}"
    conf_dir = "{node / 'cni' / 'net.d'}"
    max_conf_num = 1
""")
    (node / "cni" / "net.d" / "10-gpt-oss-node.conflist").write_text(json.dumps({
        "cniVersion": "1.0.0", "name": CNI_NETWORK,
        "plugins": [
            # No ipMasq: pods reach each other and the host, nothing beyond it.
            {"type": "bridge", "bridge": BRIDGE, "isGateway": True, "ipMasq": False, "hairpinMode": True,
             "ipam": {"type": "host-local", "dataDir": str(node / "cni" / "ipam"),
                      "ranges": [[{"subnet": POD_CIDR, "gateway": GATEWAY}]], "routes": [{"dst": "0.0.0.0/0"}]}},
            {"type": "portmap", "capabilities": {"portMappings": True}},
        ]}, indent=1))
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
    return {"containerd": containerd, "kubelet": kubelet, "kubelet-kubeconfig": kubelet_kubeconfig,
            "kube-proxy": proxy_config}


# --- start ----------------------------------------------------------------------------------------------


def wait(what: str, check, timeout: float, log: Path | None = None, interval: float = 0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(interval)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:]) if log and log.exists() else ""
    raise SystemExit(f"node: {what} not within {timeout:.0f}s" + (f"; last log lines:\n{tail}" if tail else ""))


def create_bridge() -> None:
    if not Path(f"/sys/class/net/{BRIDGE}").exists():
        subprocess.run(["ip", "link", "add", BRIDGE, "type", "bridge"], check=True)
    subprocess.run(["ip", "addr", "replace", f"{GATEWAY}/{POD_CIDR.split('/')[1]}", "dev", BRIDGE], check=True)
    subprocess.run(["ip", "link", "set", BRIDGE, "up"], check=True)


def images_module():
    """ci/node-images.py, loaded by path (its name has a dash)."""
    import importlib.util
    if "gpt_oss_node_images" in sys.modules:
        return sys.modules["gpt_oss_node_images"]
    spec = importlib.util.spec_from_file_location("gpt_oss_node_images", Path(__file__).with_name("node-images.py"))
    images = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = images  # dataclasses look their module up
    spec.loader.exec_module(images)
    return images


def containerd_root() -> Path:
    """containerd's root (content and unpacked images) lives with the image cache, outside the checkout: an
    image imported once is there at the next start (unpacking a GiB-sized layer takes about a minute)."""
    return images_module().cache_dir() / "containerd"


def import_images(state: Path) -> tuple[list[str], dict]:
    """Build what the image cache lacks (ci/node-images.py), import every image; (missing, timings)."""
    images = images_module()
    cache = images.cache_dir()
    timings = {}
    started = time.monotonic()
    if images.why_not_buildable() is None:
        try:
            images.build(cache)
        except SystemExit as error:  # an image that cannot be built: the node runs, the tests needing it skip
            print(f"node: images not all built: {error}", flush=True)
    timings["build"] = round(time.monotonic() - started, 1)
    started = time.monotonic()
    missing = images.import_images(cache, str(socket(state)))
    timings["import"] = round(time.monotonic() - started, 1)
    return missing, timings


def start(state: Path, binaries: Path, pki: Path, server: str, spawn, api) -> str:
    """Start the node; returns a one-line summary. Raises SystemExit on failure (the caller then stops)."""
    from kubernetes import client
    node = node_dir(state)
    node.mkdir(parents=True, exist_ok=True)
    (state / "node").unlink(missing_ok=True)
    (state / "node").symlink_to(node)
    record_host(state)
    LOCK.write_text(str(state))
    started = time.monotonic()
    write_certs(state, pki)
    configs = write_configs(state, pki, server)
    create_bridge()
    spawn(state, "containerd", [shutil.which("containerd"), "--config", str(configs["containerd"])])
    wait("containerd answering on its socket", lambda: socket(state).exists() and ctr(
        state, "version", timeout=10).returncode == 0, 60, state / "logs" / "containerd.log")
    missing, image_times = import_images(state)
    hosts_file(state).write_text("")
    spawn(state, "dnsmasq", [shutil.which("dnsmasq"), "--keep-in-foreground", "--log-facility=-",
                             "--conf-file=/dev/null", "--no-resolv", "--no-hosts", f"--addn-hosts={hosts_file(state)}",
                             f"--listen-address={GATEWAY}", "--bind-interfaces", "--port=53",
                             f"--local=/{CLUSTER_DOMAIN}/", "--domain-needed", "--no-negcache", "--local-ttl=1",
                             "--pid-file=", "--user=root"])
    proxy = (binaries / "kube-proxy").is_file()
    spawn(state, "node-dns", [sys.executable, str(Path(__file__).resolve()), "dns", "--dir", str(state)]
          + ([] if proxy else ["--endpoints"]))
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
    label_node(api)
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


def label_node(api) -> None:
    """Labels and fake GPU capacity of the NODE_PROFILE node, as the GPU Operator would give them."""
    from kubernetes import client
    profiles = json.loads((REPO / "ci" / "gpu-node-profiles.json").read_text())
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


# --- stop -------------------------------------------------------------------------------------------------


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
    host = json.loads(host_file.read_text())
    problems = []
    pids = json.loads((state / "pids.json").read_text()) if (state / "pids.json").exists() else {}
    if "kubelet" in pids:
        drain_pods(state)
    stop_processes(state, ["kube-proxy", "node-dns", "dnsmasq", "kubelet"])  # containerd after its containers
    kill_containers(state, host["cgroups"])
    stop_processes(state, ["containerd"])
    kill_containers(state, host["cgroups"])  # shims of containers containerd could not stop
    proxy = binaries / "kube-proxy" if binaries else None
    if proxy and proxy.is_file():
        subprocess.run([str(proxy), "--cleanup", "--v=0"], capture_output=True, timeout=60)
    left = unmount_all([str(node), str(containerd_root()), "/run/netns", "/run/containerd"])
    # The containers are gone from containerd's metadata; CRI's per-container folders in its kept root go too.
    for folder in ("containers", "sandboxes"):
        shutil.rmtree(containerd_root() / "io.containerd.grpc.v1.cri" / folder, ignore_errors=True)
    problems += [f"still mounted: {p}" for p in left]
    removed_chains = remove_chains(host["chains"])
    problems += [f"cgroup left: {p}" for p in remove_cgroups(host["cgroups"])]
    if not host["bridge"] and Path(f"/sys/class/net/{BRIDGE}").exists():
        subprocess.run(["ip", "link", "delete", BRIDGE], capture_output=True)
    for name, value in host["sysctls"].items():
        if read_sysctl(name) != value:
            write_sysctl(name, value)
    for cidr in (POD_CIDR, SERVICE_CIDR):  # connections tracked to and from the pods and Services
        for side in ("--src", "--dst"):
            subprocess.run(["conntrack", "-D", side, cidr], capture_output=True)
    for path, existed in host["dirs"].items():
        folder = Path(path)
        if not folder.exists():
            continue
        if not existed and not mounts_under([path]):
            shutil.rmtree(folder, ignore_errors=True)
        elif path == "/var/lib/cni":
            for cached in (folder / "results").glob(f"{CNI_NETWORK}-*") if (folder / "results").exists() else []:
                cached.unlink()
        elif path == "/var/log/containers":
            for link in folder.iterdir():
                if link.is_symlink() and os.readlink(link).startswith(str(node)):
                    link.unlink()
        elif path == "/run/netns":
            for entry in folder.glob("cni-*"):
                entry.unlink(missing_ok=True)
    changed = {name: (value, read_sysctl(name)) for name, value in host["sysctls"].items() if read_sysctl(name) != value}
    problems += [f"sysctl {n} is {now}, was {was}" for n, (was, now) in changed.items()]
    if LOCK.exists() and LOCK.read_text().strip() == str(state):
        LOCK.unlink()
    if (state / "pids.json").exists():  # so that no `restart` ever starts them again
        pids = json.loads((state / "pids.json").read_text())
        for name in NODE_COMPONENTS:
            pids.pop(name, None)
        (state / "pids.json").write_text(json.dumps(pids, indent=1))
    if not problems:
        host_file.unlink()
        if not mounts_under([str(node)]):
            shutil.rmtree(node, ignore_errors=True)
            (state / "node").unlink(missing_ok=True)
            if NODE_ROOT.is_dir() and not any(NODE_ROOT.iterdir()):
                NODE_ROOT.rmdir()
    print(f"node stopped: host restored (removed chains: {len(removed_chains)}, sysctls restored, bridge "
          f"{'kept (pre-existing)' if host['bridge'] else 'deleted'})"
          + (f"; NOT undone: {'; '.join(problems)}" if problems else ""))
    return problems


# --- the Service DNS watcher -------------------------------------------------------------------------


def dns(state: Path, endpoints: bool) -> int:
    """Keep dnsmasq's hosts file equal to the cluster's Services: <svc>.<ns>.svc.cluster.local -> ClusterIP
    (or, without kube-proxy, -> each ready endpoint address); SIGHUP dnsmasq on every change."""
    from kubernetes import client, config
    configuration = client.Configuration()
    config.load_kube_config(config_file=str(state / "kubeconfig"), client_configuration=configuration)
    api = client.ApiClient(configuration)
    core, discovery = client.CoreV1Api(api), client.DiscoveryV1Api(api)
    written = None
    while (state / "pids.json").exists():
        try:
            lines = []
            if endpoints:
                for item in discovery.list_endpoint_slice_for_all_namespaces(_request_timeout=10).items:
                    service = (item.metadata.labels or {}).get("kubernetes.io/service-name")
                    for endpoint in item.endpoints or []:
                        if service and (endpoint.conditions is None or endpoint.conditions.ready is not False):
                            lines += [f"{address} {service}.{item.metadata.namespace}.svc.{CLUSTER_DOMAIN}"
                                      for address in endpoint.addresses]
            else:
                for service in core.list_service_for_all_namespaces(_request_timeout=10).items:
                    if service.spec.cluster_ip and service.spec.cluster_ip != "None":
                        lines.append(f"{service.spec.cluster_ip} {service.metadata.name}."
                                     f"{service.metadata.namespace}.svc.{CLUSTER_DOMAIN}")
            text = "\n".join(sorted(set(lines))) + "\n"
            if text != written:
                target = hosts_file(state)
                target.with_suffix(".tmp").write_text(text)
                os.replace(target.with_suffix(".tmp"), target)
                pid = json.loads((state / "pids.json").read_text()).get("dnsmasq", {}).get("pid")
                if pid:
                    os.kill(pid, signal.SIGHUP)
                written = text
        except Exception as error:  # the API server restarting, say: try again
            print(f"dns: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}", flush=True)
        time.sleep(0.5)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["dns", "stop", "status", "check"])
    parser.add_argument("--dir", type=Path, default=REPO / ".envtest")
    parser.add_argument("--endpoints", action="store_true", help="dns: answer with endpoint addresses")
    args = parser.parse_args()
    state = args.dir.resolve()
    if args.command == "dns":
        return dns(state, args.endpoints)
    if args.command == "check":
        # Whether a node can start here (before spending minutes on its images): exit 0, else the reason, exit 1.
        import importlib.util
        spec = importlib.util.spec_from_file_location("gpt_oss_control_plane", Path(__file__).with_name("control-plane.py"))
        control_plane = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(control_plane)
        reason = why_not(control_plane.find_binaries()[0])
        print(reason or "a node can start here")
        return 1 if reason else 0
    if args.command == "status":
        summary = node_dir(state) / "summary.json"
        print(summary.read_text() if summary.exists() else f"no node recorded in {state}")
        return 0
    return 1 if stop(state) else 0


if __name__ == "__main__":
    sys.exit(main())
