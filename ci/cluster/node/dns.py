"""The cluster DNS: dnsmasq on the bridge address, answering from a hosts file that the `dns` watcher keeps equal to
the cluster's Services."""
from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

from .layout import CLUSTER_DOMAIN, GATEWAY, hosts_file


def dnsmasq_argv(state: Path) -> list[str]:
    """dnsmasq answering <service>.<namespace>.svc.cluster.local from the hosts file, NXDOMAIN for the rest."""
    return [shutil.which("dnsmasq"), "--keep-in-foreground", "--log-facility=-",
            "--conf-file=/dev/null", "--no-resolv", "--no-hosts", f"--addn-hosts={hosts_file(state)}",
            f"--listen-address={GATEWAY}", "--bind-interfaces", "--port=53",
            f"--local=/{CLUSTER_DOMAIN}/", "--domain-needed", "--no-negcache", "--local-ttl=1",
            "--pid-file=", "--user=root"]


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
