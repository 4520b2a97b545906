"""The API server as pods see it: the `kubernetes` Service (10.0.0.1:443) leads to a relay on the bridge address.

The control plane's API server listens on 127.0.0.1 only, which a pod's network namespace cannot reach. In-cluster
clients (the Dynamo operator, and the Dynamo components whose discovery reads the API) dial the `kubernetes`
Service, as the kubelet tells them (KUBERNETES_SERVICE_HOST/PORT). The API server runs with
--endpoint-reconciler-type none, so this module gives that Service one endpoint, GATEWAY:API_RELAY_PORT (an
EndpointSlice kube-proxy reads), where the `api-relay` process passes every TCP connection to 127.0.0.1:<port> of the
API server. TLS passes through untouched: the serving certificate names 10.0.0.1, the ClusterIP the clients dial.
"""
from __future__ import annotations

import asyncio
from pathlib import Path

from .layout import API_RELAY_PORT, GATEWAY


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(1 << 16):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def _serve(upstream_host: str, upstream_port: int) -> None:
    async def handle(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            reader, writer = await asyncio.open_connection(upstream_host, upstream_port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(_pipe(client_reader, writer), _pipe(reader, client_writer))

    server = await asyncio.start_server(handle, GATEWAY, API_RELAY_PORT)
    async with server:
        await server.serve_forever()


def relay(upstream: str) -> int:
    """Run the relay (the `api-relay` component) until killed."""
    host, _, port = upstream.rpartition(":")
    asyncio.run(_serve(host, int(port)))
    return 0


def endpoint_slice() -> dict:
    """The `kubernetes` Service's one endpoint: the relay. A slice managed by this node, not by the API server."""
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "kubernetes-gpt-oss-node", "namespace": "default",
                         "labels": {"kubernetes.io/service-name": "kubernetes",
                                    "endpointslice.kubernetes.io/managed-by": "gpt-oss-node"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": [GATEWAY], "conditions": {"ready": True}}],
            "ports": [{"name": "https", "port": API_RELAY_PORT, "protocol": "TCP"}]}


def publish(api) -> None:
    """Create (or replace) the endpoint slice of the `kubernetes` Service."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException
    discovery = client.DiscoveryV1Api(api)
    body = endpoint_slice()
    try:
        discovery.create_namespaced_endpoint_slice("default", body)
    except ApiException as error:
        if error.status != 409:
            raise
        discovery.replace_namespaced_endpoint_slice(body["metadata"]["name"], "default", body)


def upstream_of(state: Path) -> str:
    """127.0.0.1:<port> of the control plane's API server, from its kubeconfig."""
    import yaml
    server = yaml.safe_load((state / "kubeconfig").read_text())["clusters"][0]["cluster"]["server"]
    return server.removeprefix("https://")
