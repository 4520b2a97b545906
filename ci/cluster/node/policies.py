"""The node's NetworkPolicy engine, and a test host of the node's own that pods must not reach: the node tests of the
chart's NetworkPolicies (tests/cluster/test_node_policies.py) start and stop both.

The node's bridge CNI ignores NetworkPolicy. kube-router (`python -m ci.cluster go-parts build kube-router`, from the module pinned in
ci/cluster/go/kube-router) enforces it with iptables and ipsets when it runs with its firewall (network-policy) controller
alone: no routing (--run-router=false: no BGP, routes or CNI configuration), no service proxy (--run-service-proxy=false:
kube-proxy keeps the Services), no load-balancer allocator, and no health, metrics or pprof listener. It reads the
cluster through the control plane's kubeconfig and polices the pods whose hostIP is the node's (GATEWAY): traffic from
and to each such pod passes a chain of its own (KUBE-POD-FW-*), jumped to from INPUT (pod to the host: DNS, the fake
Hub), FORWARD (pod to pod, bridged too: this kernel's br_netfilter has bridge-nf-call-iptables on) and OUTPUT. Traffic
the host itself sends to a pod is always let through (kube-router's rule for the kubelet's probes), so the tests send
from pods' network namespaces.

What it changes on the host, recorded before it starts (<node>/policy-engine.json) and undone by stop():
  - filter-table chains KUBE-ROUTER-INPUT/FORWARD/OUTPUT, KUBE-NWPLCY-* and KUBE-POD-FW-* (OWN_CHAINS), and the rules
    that jump to them from INPUT, FORWARD and OUTPUT;
  - ipsets KUBE-SRC-* and KUBE-DST-* (and TMP-* while it swaps them: OWN_IPSETS).
stop() then compares the host's iptables (every table of both families) and ipsets with the record and returns each
difference: none when the host is as it was found, except the chains kube-proxy rewrites whenever a Service comes or
goes (KUBE_PROXY_SERVICE_CHAINS), which follow the cluster's Services, not the policy engine.

The test host: a network namespace of its own joined to the host by a veth pair, at TEST_HOST (198.18.0.2, of the
range RFC 2544 reserves for benchmarking; never an address this machine has or routes elsewhere: start_test_host checks),
so nothing a pod sends there leaves this machine. Pods reach it through the host (routed, as to any address off the
node; ip_forward is on while the node runs); it answers on TEST_HOST_TCP_PORTS and UDP 53. An address no policy names:
a pod that reaches it could reach any address.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from .. import processes
from . import host
from .layout import FAKE_HUB_PORT, NODE_NAME, POD_CIDR, SERVICE_CIDR, node_dir

ENGINE = "kube-router"
OWN_CHAINS = ("KUBE-ROUTER-", "KUBE-NWPLCY-", "KUBE-POD-FW-")
OWN_IPSETS = ("KUBE-SRC-", "KUBE-DST-", "TMP-")
# kube-proxy's chains that list the Services (and their endpoints): they change whenever a Service does.
KUBE_PROXY_SERVICE_CHAINS = ("KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES", "KUBE-NODEPORTS", "KUBE-PROXY-FIREWALL",
                             "KUBE-SVC-", "KUBE-SEP-", "KUBE-EXT-", "KUBE-SVL-", "KUBE-FW-")
TEST_HOST_LINK = "gptoss-th0"  # the host's end of the veth pair; gptoss-th1 is the test host's
TEST_HOST_PEER = "gptoss-th1"
# 198.18.0.0/15 is reserved for benchmarking networks (RFC 2544); start_test_host refuses when this machine already has
# an address or a route in the /30 (TEST-NET-1, 192.0.2.0/24, is this VM's own network).
TEST_HOST_NETWORK = "198.18.0.0/30"
TEST_HOST_GATEWAY = "198.18.0.1"
TEST_HOST = "198.18.0.2"
TEST_HOST_TCP_PORTS = (53, 443, 2379, 4222, 6443, FAKE_HUB_PORT, 8080)  # the ports some policy opens; 8080 none
BANNER = b"gpt-oss test host\n"


def record_file(state: Path) -> Path:
    return node_dir(state) / "policy-engine.json"


def why_not(binaries: Path | None) -> str | None:
    """None when the policy engine can start here, else why not."""
    if binaries is None or not (binaries / ENGINE).is_file():
        return f"no {ENGINE} binary (python -m ci.cluster go-parts build kube-router; .ci/run builds it)"
    missing = [tool for tool in ("ipset", "iptables-save", "iptables-restore", "ip", "nsenter") if not shutil.which(tool)]
    if missing:
        return f"missing {', '.join(missing)} (.ci/run installs the node's Debian packages, ipset among them)"
    return None


# --- the host's iptables and ipsets, as a record and as a comparison -----------------------------------------


def parse_save(text: str) -> dict[str, dict[str, dict]]:
    """iptables-save output as {table: {chain: {"policy": ..., "rules": [...]}}}, counters dropped."""
    tables: dict[str, dict[str, dict]] = {}
    table = None
    for line in text.splitlines():
        if line.startswith("*"):
            table = tables.setdefault(line[1:], {})
        elif line.startswith(":") and table is not None:
            name, policy = line[1:].split()[:2]
            table.setdefault(name, {"policy": policy, "rules": []})["policy"] = policy
        elif line.startswith("-A ") and table is not None:
            chain = line.split()[1]
            table.setdefault(chain, {"policy": "-", "rules": []})["rules"].append(re.sub(r"^\[\d+:\d+\] ", "", line))
    return tables


def snapshot() -> dict:
    """Every iptables table of both families (chains and rules) and every ipset, as iptables-save and ipset save
    print them."""
    found = {"iptables": {}, "ipsets": []}
    for family, save in (("ipv4", "iptables-save"), ("ipv6", "ip6tables-save")):
        found["iptables"][family] = parse_save(subprocess.run([save], capture_output=True, text=True).stdout)
    if shutil.which("ipset"):
        found["ipsets"] = sorted(subprocess.run(["ipset", "save"], capture_output=True, text=True).stdout.splitlines())
    return found


def differences(before: dict, after: dict) -> list[str]:
    """What differs between two snapshots, but for kube-proxy's Service chains. A built-in chain that accepts and
    holds no rule counts as absent (iptables-save lists a table once anything loaded it)."""
    found = []
    empty = {"policy": "ACCEPT", "rules": []}
    for family in sorted(set(before["iptables"]) | set(after["iptables"])):
        old_tables, new_tables = before["iptables"].get(family, {}), after["iptables"].get(family, {})
        for table in sorted(set(old_tables) | set(new_tables)):
            old, new = old_tables.get(table, {}), new_tables.get(table, {})
            for chain in sorted(set(old) | set(new)):
                if chain.startswith(KUBE_PROXY_SERVICE_CHAINS):
                    continue
                was, now = old.get(chain), new.get(chain)
                if was is None and now == empty or now is None and was == empty:
                    continue
                if was is None or now is None:
                    found.append(f"{family} {table}: chain {chain} {'added' if was is None else 'removed'}")
                    continue
                if was["policy"] != now["policy"]:
                    found.append(f"{family} {table} {chain}: policy {was['policy']} -> {now['policy']}")
                if was["rules"] != now["rules"]:
                    added = [r for r in now["rules"] if r not in was["rules"]]
                    gone = [r for r in was["rules"] if r not in now["rules"]]
                    found.append(f"{family} {table} {chain}: rules changed (added {added}, removed {gone}"
                                 + (", reordered" if not added and not gone else "") + ")")
    if before["ipsets"] != after["ipsets"]:
        found.append(f"ipsets: added {sorted(set(after['ipsets']) - set(before['ipsets']))}, "
                     f"removed {sorted(set(before['ipsets']) - set(after['ipsets']))}")
    return found


def ipset_names() -> list[str]:
    return subprocess.run(["ipset", "list", "-n"], capture_output=True, text=True).stdout.split()


# --- kube-router -----------------------------------------------------------------------------------------


def argv(binary: Path, kubeconfig: Path) -> list[str]:
    return [str(binary), "--kubeconfig", str(kubeconfig), "--hostname-override", NODE_NAME,
            "--run-firewall=true", "--run-router=false", "--run-service-proxy=false", "--run-loadbalancer=false",
            "--enable-ipv4=true", "--enable-ipv6=false", f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--health-port=0", "--metrics-port=0", "--v=1"]


def chains_in(table: str = "filter") -> set[str]:
    return set(parse_save(subprocess.run(["iptables-save", "-t", table], capture_output=True, text=True).stdout)
               .get(table, {}))


def start(state: Path, binary: Path, spawn) -> str:
    """Record the host, start kube-router (spawn: ci.cluster.control_plane.spawn, which records it in pids.json),
    and return once it has written its first full sync. Raises SystemExit when it does not."""
    if record_file(state).exists():
        raise SystemExit(f"{record_file(state)} exists: a policy engine of this node was not stopped "
                         f"(python -m ci.cluster control-plane stop --dir {state} undoes it)")
    record = {"snapshot": snapshot(), "chains": host.chains(), "ipsets": ipset_names()}
    record_file(state).write_text(json.dumps(record, indent=1))
    log = state / "logs" / f"{ENGINE}.log"
    offset = log.stat().st_size if log.exists() else 0
    started = time.monotonic()
    spawn(state, ENGINE, argv(binary, state / "kubeconfig"))
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")[offset:] if log.exists() else ""
        if "sync iptables took" in text and "KUBE-ROUTER-FORWARD" in chains_in():
            return f"{ENGINE} enforcing NetworkPolicies on {NODE_NAME} ({time.monotonic() - started:.1f}s to its first sync)"
        entry = json.loads((state / "pids.json").read_text()).get(ENGINE)
        if entry and not processes.alive(entry):
            break
        time.sleep(0.3)
    tail = "\n".join((log.read_text(errors="replace")[offset:] if log.exists() else "").splitlines()[-20:])
    raise SystemExit(f"{ENGINE} did not sync its firewall within 90s; last log lines:\n{tail}")


def stop(state: Path) -> list[str]:
    """Stop kube-router, remove what it wrote (its chains and the jumps to them, its ipsets) and compare the host
    with the record: returns each difference (empty when the host is as it was found). A no-op without a record."""
    path = record_file(state)
    if not path.exists():
        return []
    record = json.loads(path.read_text())
    pids_file = state / "pids.json"
    if pids_file.exists():
        pids = json.loads(pids_file.read_text())
        entry = pids.pop(ENGINE, None)
        if entry and processes.terminate(entry):
            print(f"stopped {ENGINE} (pid {entry['pid']})")
        pids_file.write_text(json.dumps(pids, indent=1))  # no `restart`/`revive` starts it again
    host.remove_chains(record["chains"], OWN_CHAINS)
    for _ in range(5):  # a set still referenced by a rule being deleted refuses to go: try again
        left = [name for name in ipset_names() if name.startswith(OWN_IPSETS) and name not in record["ipsets"]]
        for name in left:
            subprocess.run(["ipset", "destroy", name], capture_output=True)
        if not left:
            break
        time.sleep(0.2)
    problems = differences(record["snapshot"], snapshot())
    if not problems:
        path.unlink()
    return problems


# --- the test host ---------------------------------------------------------------------------------------


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True)


def start_test_host(state: Path, spawn, command: list[str]) -> None:
    """The test host: its listeners (`command` + listen) started in a network namespace of their own (`unshare --net`,
    recorded as `policy-test-host` in pids.json: the namespace lives exactly as long as they do, and no mount names
    it), joined to the host by a veth pair, with its address and its route back to the pods."""
    if Path(f"/sys/class/net/{TEST_HOST_LINK}").exists():
        raise SystemExit(f"link {TEST_HOST_LINK} exists already: another test host runs, or one was left behind")
    taken = taken_by_this_machine(TEST_HOST_NETWORK)
    if taken:
        raise SystemExit(f"the test host's network {TEST_HOST_NETWORK} is this machine's already: {'; '.join(taken)}")
    spawn(state, "policy-test-host", ["unshare", "--net", "--", *command, "listen"])
    pid = str(json.loads((state / "pids.json").read_text())["policy-test-host"]["pid"])
    own = os.readlink("/proc/self/ns/net")
    deadline = time.monotonic() + 10
    while os.readlink(f"/proc/{pid}/ns/net") == own:  # unshare has not made its namespace yet
        if time.monotonic() > deadline:
            stop_test_host(state)
            raise SystemExit("test host: its listeners never got a network namespace of their own")
        time.sleep(0.05)
    inside = ("nsenter", f"--net=/proc/{pid}/ns/net", "--", "ip")
    steps = [("ip", "link", "add", TEST_HOST_LINK, "type", "veth", "peer", "name", TEST_HOST_PEER, "netns", pid),
             ("ip", "addr", "add", f"{TEST_HOST_GATEWAY}/30", "dev", TEST_HOST_LINK),
             ("ip", "link", "set", TEST_HOST_LINK, "up"),
             (*inside, "addr", "add", f"{TEST_HOST}/30", "dev", TEST_HOST_PEER),
             (*inside, "link", "set", TEST_HOST_PEER, "up"),
             (*inside, "link", "set", "lo", "up"),
             (*inside, "route", "add", POD_CIDR, "via", TEST_HOST_GATEWAY)]
    for step in steps:
        result = _run(*step)
        if result.returncode != 0:
            stop_test_host(state)
            raise SystemExit(f"test host: {' '.join(step)}: {result.stderr.strip()}")
    import socket
    deadline = time.monotonic() + 30
    while True:  # its listeners bind once the address is there
        try:
            socket.create_connection((TEST_HOST, TEST_HOST_TCP_PORTS[-1]), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                stop_test_host(state)
                raise SystemExit(f"test host: nothing listens on {TEST_HOST}:{TEST_HOST_TCP_PORTS[-1]} within 30s") from None
            time.sleep(0.1)


def taken_by_this_machine(network: str) -> list[str]:
    """This machine's addresses and routes (any table, default routes aside) that overlap `network`."""
    import ipaddress
    wanted = ipaddress.ip_network(network)
    found = []
    for line in _run("ip", "-o", "-4", "addr").stdout.splitlines():
        address = line.split()[3]
        if ipaddress.ip_interface(address).network.overlaps(wanted):
            found.append(f"address {address} on {line.split()[1]}")
    for line in _run("ip", "-4", "route", "show", "table", "all").stdout.splitlines():
        words = line.split()
        kinds = ("unicast", "local", "broadcast", "multicast", "anycast", "throw", "unreachable", "prohibit", "blackhole", "nat")
        target = words[1] if words[0] in kinds else words[0]
        if target != "default" and ipaddress.ip_network(target, strict=False).overlaps(wanted):
            found.append(f"route {line.strip()}")
    return found


def stop_test_host(state: Path) -> None:
    """Its listeners stopped: their namespace goes with them, and the veth pair with it."""
    pids_file = state / "pids.json"
    if pids_file.exists():
        pids = json.loads(pids_file.read_text())
        entry = pids.pop("policy-test-host", None)
        if entry:
            processes.terminate(entry)
            pids_file.write_text(json.dumps(pids, indent=1))
    if Path(f"/sys/class/net/{TEST_HOST_LINK}").exists():
        _run("ip", "link", "delete", TEST_HOST_LINK)


def listen() -> int:
    """The test host's listeners, on TEST_HOST once start_test_host has given it (waited for, 30 s at most): TCP on
    TEST_HOST_TCP_PORTS (a banner, then close) and UDP 53 (each datagram answered with itself, its DNS response bit
    set), until killed."""
    import asyncio
    import socket

    async def greet(reader, writer):
        writer.write(BANNER)
        await writer.drain()
        writer.close()

    class Echo(asyncio.DatagramProtocol):
        def connection_made(self, transport):
            self.transport = transport

        def datagram_received(self, data, address):
            if len(data) > 2:
                self.transport.sendto(data[:2] + bytes([data[2] | 0x80]) + data[3:], address)

    async def main():
        deadline = time.monotonic() + 30
        while True:
            try:
                servers = [await asyncio.start_server(greet, TEST_HOST, port, family=socket.AF_INET)
                           for port in TEST_HOST_TCP_PORTS]
                break
            except OSError:  # the address is not there yet
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.1)
        await asyncio.get_running_loop().create_datagram_endpoint(Echo, local_addr=(TEST_HOST, 53))
        print(f"test host {TEST_HOST}: tcp {', '.join(map(str, TEST_HOST_TCP_PORTS))}, udp 53", flush=True)
        await asyncio.gather(*(server.serve_forever() for server in servers))

    asyncio.run(main())
    return 0
