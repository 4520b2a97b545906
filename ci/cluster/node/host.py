"""The host state a node changes, recorded before it starts and restored when it stops: sysctls, iptables chains,
cgroups, mounts and the shared folders (/run/netns, /run/containerd, /var/lib/cni, /var/log/containers)."""
from __future__ import annotations

import datetime
import json
import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

from .layout import BRIDGE, CNI_NETWORK, node_dir

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


def remove_chains(before: dict, prefixes: tuple[str, ...] = CHAIN_PREFIXES) -> list[str]:
    """Delete the chains named with `prefixes` (KUBE-*/CNI-*) that were not there before, with every rule that jumps
    to them."""
    removed = []
    for family, (tool, save) in {"ipv4": ("iptables", "iptables-save"), "ipv6": ("ip6tables", "ip6tables-save")}.items():
        for table, names in chains().get(family, {}).items():
            old = set(before.get(family, {}).get(table, []))
            new = [n for n in names if n.startswith(prefixes) and n not in old]
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


def restore_sysctls(host: dict) -> None:
    """The sysctls as record_host found them."""
    for name, value in host["sysctls"].items():
        if read_sysctl(name) != value:
            write_sysctl(name, value)


def clean_shared_dirs(host: dict, node: Path) -> None:
    """The shared folders this node created removed; in those that were there, only what it added."""
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


def sysctl_problems(host: dict) -> list[str]:
    """The recorded sysctls that still differ."""
    changed = {name: (value, read_sysctl(name)) for name, value in host["sysctls"].items() if read_sysctl(name) != value}
    return [f"sysctl {n} is {now}, was {was}" for n, (was, now) in changed.items()]
