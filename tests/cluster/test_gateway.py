"""The chart's routes meet the controllers that consume them, on the kubelet node (tests/cluster/gateway.py runs them).

Traefik (ci/cluster/go/traefik, v3.6.12) programs the chart's Ingress (with its TLS entry) and HTTPRoute, and a streaming chat
sent to Traefik's port on 127.0.0.1 reaches the server pods and streams back: for the trtllm-serve target (the
serving stand-in) and for the Dynamo target (its frontend Service, served by the frontend stand-in of
tests/cluster/test_node.py: no Dynamo operator runs in this tier). The endpoint picker (ci/cluster/go/epp, v1.5.0, the
release the chart's EPP image names) runs with the arguments, environment and config file the chart renders, reads
the chart's InferencePool and its pods, scrapes their /prometheus/metrics (the stand-in serves trtllm-serve's gauge
names), and the test, playing the gateway (no Envoy here), asks it over ext-proc which pod takes each request: the
pick moves away from the pod whose queue and KV-cache gauges are high. What Traefik does not implement of what the
chart renders is read from Traefik itself: the features its GatewayClass reports, and its verdict on an HTTPRoute to
the InferencePool.

One release per target: trtllm-serve's is installed with the pool (the picker, the Ingress, Traefik's verdict on
the route to the pool), then upgraded without it (the HTTPRoute to the Service); the Dynamo target's runs on a thread
of its own meanwhile. Traefik and the picker start once. The CRDs come from the controllers' own modules at their
pinned versions (the Go module cache); the Gateway, the GatewayClass and the IngressClass are the platform's part,
made here.
"""
from __future__ import annotations

import base64
import concurrent.futures
import contextlib
import json
import re
import time
import urllib.parse
from dataclasses import dataclass

import pytest

from ci.cluster import go_parts
from tests.cluster import gateway as gw
from tests.cluster import kube
from tests.cluster import node as real
from tests.cluster.streams import StreamingLoad
# node and hub: the node module's fixtures (the node taken over, the fake Hub), for this module too.
from tests.cluster.test_node import (DYNAMO_TARGET, TRTLLM_SERVE_TARGET, Run, crd_storing, frontend_stand_in,  # noqa: F401
                                     hub, node, node_values, on_the_node, require, wait_job, wait_ready)
from tests.helpers import find, skip_for_missing_part
from tests.helpers.relays import TcpRelay
from tests.helpers.cleanup import cleaned_up

pytestmark = [pytest.mark.cluster, pytest.mark.node]

GATEWAY_NAME = "gpt-oss-gateway"  # the platform's Gateway, in the release's namespace
TLS_SECRET = "gpt-oss-ingress-tls"
SERVE_MODEL = "gpt-oss-120b"  # trtllm-serve names a local checkpoint by its folder
DYNAMO_MODEL = "openai/gpt-oss-120b"  # the workers' --served-model-name (model.id)
SLOTS = 2  # trtllmServe.maxBatchSize: the stand-in's engine runs 2 sequences, the rest wait
LOAD = 4  # streams held open on one pod: 2 running, 2 waiting, its KV-cache gauge full
SERVER_SELECTOR = "app.kubernetes.io/component=trtllm-serve"


@pytest.fixture(scope="module")
def gateway_crds(node, cluster_access, k8s) -> list[str]:
    try:
        paths = gw.controller_crds()
    except LookupError as error:
        skip_for_missing_part(f"the controllers' CRDs come from their Go modules: {error}")
    return gw.install_crds(k8s, cluster_access.kubeconfig, paths)


@pytest.fixture(scope="module")
def traefik(gateway_crds, cluster_access, k8s, tmp_path_factory):
    binaries = go_parts.built("traefik")
    if binaries is None:
        skip_for_missing_part("Traefik is not built: python -m ci.cluster go-parts build traefik")
    gw.traefik_classes(k8s)
    proxy = gw.Traefik(binaries / "traefik", cluster_access.kubeconfig,
                       tmp_path_factory.mktemp("traefik") / "traefik.log")
    with cleaned_up(proxy.stop, lambda: gw.remove_traefik_classes(k8s)):
        yield proxy.start()


def exposure(flow: str, traefik: gw.Traefik) -> tuple[dict, dict]:
    """The values routing `flow` through Traefik (an Ingress of its class with a TLS entry, an HTTPRoute to the
    Gateway), and the host names they answer."""
    hosts = {"ingress": f"{flow}.ingress.gpt-oss.test", "route": f"{flow}.route.gpt-oss.test"}
    return {"ingress": {"enabled": True, "className": gw.INGRESS_CLASS,
                        "hosts": [{"host": hosts["ingress"], "paths": [{"path": "/", "pathType": "Prefix"}]}],
                        "tls": [{"secretName": TLS_SECRET, "hosts": [hosts["ingress"]]}]},
            "httpRoute": {"enabled": True, "parentRefs": [{"name": GATEWAY_NAME}], "hostnames": [hosts["route"]]}}, hosts


def platform_objects(k8s: kube.Kube, namespace: str, traefik: gw.Traefik, hosts: dict) -> bytes:
    """The Gateway the HTTPRoute attaches to and the Secret the Ingress's TLS entry names (the chart references
    both, never creates them). The test CA's PEM."""
    ca, cert, key = gw.tls_pair([hosts["ingress"]])
    k8s.core.create_namespaced_secret(namespace, {"metadata": {"name": TLS_SECRET}, "type": "kubernetes.io/tls",
                                                  "data": {"tls.crt": base64.b64encode(cert).decode(),
                                                           "tls.key": base64.b64encode(key).decode()}})
    k8s.custom.create_namespaced_custom_object("gateway.networking.k8s.io", "v1", namespace, "gateways",
                                               gw.gateway(GATEWAY_NAME, traefik.web))
    return ca


def until_routed(traefik: gw.Traefik, what: str, send) -> dict:
    """send()'s answer once it is a 200 with a body (Traefik has programmed the route), within 90 s. A 200 whose
    stream ended before its first chunk without an error is sent again: on a loaded CI machine one route answered so
    once, while its backend had just become ready (the tests then assert the whole stream)."""
    return kube.wait_for(f"Traefik to route {what}", lambda: (r := send()) and r["status"] == 200 and (
        r["chunks"] or r["error"]) and r, timeout=90, interval=1, explain=lambda: f"{send()}\n{traefik.tail()}")


def through_traefik(run: Run, traefik: gw.Traefik, hosts: dict, ca: bytes, model: str, route: bool) -> None:
    """A streaming chat through the Ingress (plain, then TLS with the Ingress's certificate) and, when `route`,
    through the HTTPRoute, each once Traefik has programmed it; recorded in run.facts."""
    run.facts["ingress"] = until_routed(traefik, "the Ingress", lambda: gw.stream_chat(traefik.web, hosts["ingress"],
                                                                                       model))
    run.facts["ingress_tls"] = until_routed(traefik, "the Ingress over TLS", lambda: gw.stream_chat(
        traefik.websecure, hosts["ingress"], model, ca=ca))
    if route:
        run.facts["route"] = until_routed(traefik, "the HTTPRoute", lambda: gw.stream_chat(traefik.web, hosts["route"],
                                                                                           model))


def route_status(k8s: kube.Kube, namespace: str, name: str) -> dict:
    return k8s.custom.get_namespaced_custom_object("gateway.networking.k8s.io", "v1", namespace, "httproutes", name)


# --- the trtllm-serve target: the endpoint picker and Traefik --------------------------------------------------


@dataclass
class Picks:
    """Endpoints the picker named, by pod."""
    idle: list[str]
    loaded: dict[str, list[str]]  # loaded pod -> the pods picked meanwhile
    queue_seen: dict[str, dict[str, float]]  # loaded pod -> the picker's inference_pool_per_pod_queue_size by pod


@pytest.fixture(scope="module")
def served_through(node, hub, traefik, cluster_access, k8s, dynamo_started, tmp_path_factory) -> Run:
    """Two servers in the inference pool behind the picker, and behind Traefik's Ingress; then the pool turned off,
    the HTTPRoute to the Service. The Dynamo target's flow runs meanwhile (dynamo_started): both wait on the node
    more than they compute."""
    real.set_gpus(k8s, 8 * 3)  # two servers, and the rollout's third when the pool goes
    with on_the_node(node, hub, cluster_access, k8s, TRTLLM_SERVE_TARGET) as (run, release, namespace):
        routes, hosts = exposure("trtllm-serve", traefik)
        ca = platform_objects(k8s, namespace.name, traefik, hosts)
        pooled = node_values(TRTLLM_SERVE_TARGET, hub, {**routes, "trtllmServe": {"replicas": 2, "maxBatchSize": SLOTS},
                                                        "inferencePool": {"enabled": True, "endpointPicker": {
                                                            "image": {"pullPolicy": "Never"}}}})
        run.values = release.values(TRTLLM_SERVE_TARGET, pooled)
        release.install(TRTLLM_SERVE_TARGET, pooled)
        run.objects = release.manifest()
        server = next(o["metadata"]["name"] for o in run.objects if o["kind"] == "Deployment" and
                      o["metadata"]["labels"]["app.kubernetes.io/component"] == "trtllm-serve")
        picker = find(run.objects, "Deployment", f"{server}-epp")
        # Its pod cannot reach the API server (127.0.0.1 of the host) from the node: the test runs the picker.
        k8s.apps.patch_namespaced_deployment_scale(picker["metadata"]["name"], namespace.name, {"spec": {"replicas": 0}})
        with the_picker(run, k8s, namespace.name, picker, cluster_access.kubeconfig,
                        tmp_path_factory.mktemp("epp")) as (epp, gateway):  # it starts while the servers do
            wait_job(k8s, namespace.name, find(run.objects, "Job")["metadata"]["name"], timeout=180)
            wait_ready(k8s, namespace.name, server, 2, "two Ready trtllm-serve pods")
            run.seconds["ready"] = round(time.monotonic() - run.started, 1)
            through_traefik(run, traefik, hosts, ca, SERVE_MODEL, route=False)
            route = find(run.objects, "HTTPRoute")["metadata"]["name"]
            run.facts["route_to_pool"] = kube.wait_for(
                "Traefik's verdict on the HTTPRoute to the InferencePool", lambda: (r := route_status(
                    k8s, namespace.name, route)) and gw.route_conditions(r).get("ResolvedRefs") == ("False", "InvalidKind")
                and r, timeout=60, interval=1)
            run.seconds["traefik"] = round(time.monotonic() - run.started, 1)
            run.facts["picks"] = pick_under_load(run, k8s, namespace.name, epp, gateway)
            run.seconds["picker"] = round(time.monotonic() - run.started, 1)
            # What its metrics port serves, as the chart runs it (--enable-pprof=false, no metrics authentication).
            run.facts["picker_port"] = {path: gw.picker_get(path)[0]
                                        for path in ("/metrics", "/debug/pprof/", "/debug/pprof/goroutine")}

        # No pool: the HTTPRoute names the Service. The rollout this starts (the servers stop serving their metrics)
        # keeps a Ready server throughout, so nothing waits for it.
        release.upgrade(TRTLLM_SERVE_TARGET, node_values(TRTLLM_SERVE_TARGET, hub, {
            **routes, "trtllmServe": {"replicas": 2, "maxBatchSize": SLOTS}}))
        run.facts["route"] = until_routed(traefik, "the HTTPRoute", lambda: gw.stream_chat(
            traefik.web, hosts["route"], SERVE_MODEL))
        run.seconds["route"] = round(time.monotonic() - run.started, 1)
    yield run
    release.close()
    real.set_gpus(k8s, 8)
    namespace.delete()


@contextlib.contextmanager
def the_picker(run: Run, k8s: kube.Kube, namespace: str, picker: dict, kubeconfig, folder):
    """The picker started as the chart's Deployment would run it, and the gateway's ext-proc connection to it; its
    log's tail joins any error raised meanwhile."""
    container = picker["spec"]["template"]["spec"]["containers"][0]
    # The one volume, the ConfigMap, at /config (EndpointPicker lays it out there).
    assert container["volumeMounts"][0]["mountPath"] == "/config", container["volumeMounts"]
    config_map = find(run.objects, "ConfigMap", picker["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"])
    env = {e["name"]: {"metadata.namespace": namespace, "metadata.name": f"{picker['metadata']['name']}-on-host"}[
        e["valueFrom"]["fieldRef"]["fieldPath"]] for e in container["env"]}
    account = picker["spec"]["template"]["spec"]["serviceAccountName"]
    token = k8s.core.create_namespaced_service_account_token(account, namespace, {"spec": {"expirationSeconds": 3600}})
    api = urllib.parse.urlparse(kube_server(kubeconfig))
    run.facts["picker_args"] = list(container["args"])
    binaries = go_parts.built("epp")
    if binaries is None:
        skip_for_missing_part("the endpoint picker is not built: python -m ci.cluster go-parts build epp")
    with contextlib.ExitStack() as stack:
        netns = stack.enter_context(gw.picker_network())
        assert api.hostname == "127.0.0.1", api  # ci.cluster.control_plane's API server
        relay = TcpRelay(api.port, listen=gw.PICKER_HOST)  # the API server, for the picker's network namespace
        stack.callback(relay.close)
        pod = picker["spec"]["template"]["spec"]["securityContext"]
        epp = gw.EndpointPicker(binaries / "epp", folder / "root", folder / "epp.log", netns, container["args"], env,
                                config_map["data"], gw.picker_kubeconfig(kubeconfig, relay.port, token.status.token),
                                user=f"{pod['runAsUser']}:{pod['runAsGroup']}")
        stack.callback(epp.stop)
        epp.start()
        gateway = gw.ExtProcGateway()
        stack.callback(gateway.close)
        try:
            yield epp, gateway
        except Exception as error:
            raise AssertionError(f"{type(error).__name__}: {error}\nthe picker's log:\n{epp.tail()}\n"
                                 f"its TLS relay: {gateway.relay.failures[-5:]}") from error


def pick_under_load(run: Run, k8s: kube.Kube, namespace: str, epp: gw.EndpointPicker,
                    gateway: gw.ExtProcGateway) -> Picks:
    """Picks with both servers idle, then with streams held open on one, then on the other."""
    servers = gw.pod_ips(k8s, namespace, SERVER_SELECTOR)
    endpoints = {f"{ip}:8000": name for ip, name in servers.items()}

    def pick() -> str | None:
        answer = gateway.pick({"model": SERVE_MODEL, "stream": True, "max_tokens": 8, "messages": [
            {"role": "user", "content": f"pick {time.monotonic_ns()}"}]}, authority="trtllm-serve.route.gpt-oss.test")
        assert answer["immediate"] is None, answer
        assert answer["endpoint"] == answer["metadata_endpoint"], answer
        return endpoints.get(answer["endpoint"], answer["endpoint"])

    def first_pick():
        assert epp.alive(), f"the endpoint picker exited:\n{epp.tail()}"
        with contextlib.suppress(Exception):
            return pick()

    def idle(sizes: dict[str, float]) -> bool:
        return sizes.keys() == set(servers.values()) and not any(sizes.values())
    kube.wait_for("the endpoint picker to pick a server pod", first_pick, timeout=120, interval=1, explain=epp.tail)
    kube.wait_for("the picker to read both servers' queues, empty", lambda: idle(queue_sizes()), timeout=60,
                  interval=0.5, explain=lambda: f"{queue_sizes()}\n{epp.tail()}")
    log = epp.log.read_text(errors="replace")
    run.facts["picker_started"] = {"config_loaded": "loaded configuration from file/text successfully" in log,
                                   "refused": [line for line in log.splitlines() if "cannot be used" in line]}
    picks = Picks(idle=[pick() for _ in range(4)], loaded={}, queue_seen={})
    for ip, name in sorted(servers.items(), key=lambda item: item[1]):
        load = StreamingLoad(f"http://{ip}:8000", SERVE_MODEL, concurrency=LOAD, max_tokens=150).start()
        try:
            picks.queue_seen[name] = kube.wait_for(f"the picker to see {name}'s queue", lambda n=name: (
                q := queue_sizes()) and q.get(n, 0) >= 1 and q, timeout=60, interval=0.2, explain=epp.tail)
            picks.loaded[name] = [pick() for _ in range(6)]
        finally:
            run.facts.setdefault("loads", {})[name] = load.stop()
        kube.wait_for("the picker to see the queues empty again", lambda: idle(queue_sizes()), timeout=60,
                      interval=0.5, explain=lambda: f"{queue_sizes()}\n{epp.tail()}")
    return picks


def queue_sizes() -> dict[str, float]:
    """The picker's inference_pool_per_pod_queue_size, by pod: what it read from each pod's queue gauge. The picker
    names an endpoint `<pod>-rank-<i>`, i the index of the pool's target port (one here)."""
    sizes = {}
    try:
        text = gw.picker_metrics()
    except OSError:  # not listening yet
        return sizes
    for line in text.splitlines():
        match = re.match(r'inference_pool_per_pod_queue_size\{[^}]*model_server_pod="([^"]+)-rank-0"[^}]*\} (\S+)',
                         line)
        if match:
            sizes[match.group(1)] = float(match.group(2))
    return sizes


def kube_server(kubeconfig) -> str:
    import yaml
    return yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]


class TestTraefikRoutesTrtllmServe:
    """The trtllm-serve target behind Traefik: its Ingress (plain and TLS) and its HTTPRoute to the Service."""

    @pytest.mark.parametrize("way", ["ingress", "ingress_tls", "route"])
    def test_should_stream_a_chat_through_traefik(self, served_through, way):
        require(served_through, way)
        answer = served_through.facts[way]
        assert answer["status"] == 200 and answer["error"] is None, answer
        assert answer["finished"] and answer["done"] and answer["chunks"] >= 2, answer

    def test_should_serve_the_certificate_of_the_secret_the_ingress_names(self, served_through):
        require(served_through, "ingress_tls")
        assert served_through.facts["ingress_tls"]["peer"] == ((("commonName", "trtllm-serve.ingress.gpt-oss.test"),),)

    def test_should_refuse_the_route_to_the_inference_pool_as_traefik_implements_no_pool(self, served_through):
        """Traefik 3.6 routes to Services only: the chart's HTTPRoute to an InferencePool needs a gateway that
        implements the Inference Extension (docs/exposure.md says so)."""
        require(served_through, "route_to_pool")
        conditions = gw.route_conditions(served_through.facts["route_to_pool"])
        assert conditions["ResolvedRefs"] == ("False", "InvalidKind"), conditions


class TestEndpointPicker:
    """The upstream endpoint picker, as the chart configures it, reading the chart's pool and the servers' gauges."""

    def test_should_pick_only_pods_of_the_pool_on_the_pool_target_port(self, served_through):
        require(served_through, "picks")
        picks: Picks = served_through.facts["picks"]
        pods = set(picks.queue_seen)
        assert len(pods) == 2, picks
        chosen = set(picks.idle) | {p for got in picks.loaded.values() for p in got}
        assert chosen <= pods, f"picked endpoints that are not the pool's pods on port 8000: {chosen - pods}"

    def test_should_read_each_pods_queue_from_the_gauge_the_chart_names(self, served_through):
        """The picker's own per-pod queue size is what it read from trtllm_num_requests_waiting at
        /prometheus/metrics: the loaded pod's waiting streams (LOAD open on SLOTS slots), the other's none."""
        require(served_through, "picks")
        picks: Picks = served_through.facts["picks"]
        for loaded, sizes in picks.queue_seen.items():
            other = next(p for p in sizes if p != loaded)
            assert 1 <= sizes[loaded] <= LOAD - SLOTS and sizes[other] == 0, (loaded, sizes)

    def test_should_move_the_pick_away_from_the_pod_with_a_high_queue_and_kv_cache(self, served_through):
        require(served_through, "picks")
        picks: Picks = served_through.facts["picks"]
        for loaded, got in picks.loaded.items():
            assert got and loaded not in got, f"picked {got} while {loaded} was loaded"
        assert picks.loaded.keys() == picks.queue_seen.keys() and len(set(
            p for got in picks.loaded.values() for p in got)) == 2, picks

    def test_should_serve_its_metrics_and_no_profiles_on_its_metrics_port(self, served_through):
        """v1.5.0 serves /debug/pprof/ on 9090 by default, without authentication (issue 55); the chart's
        --enable-pprof=false leaves /metrics alone there."""
        require(served_through, "picker_port")
        assert served_through.facts["picker_port"] == {"/metrics": 200, "/debug/pprof/": 404,
                                                      "/debug/pprof/goroutine": 404}

    def test_should_accept_the_rendered_arguments_and_config_file(self, served_through, record_property):
        """v1.5.0 exits on the metric flags the upstream chart passes for trtllm-serve; the chart's arguments and
        default-plugins.yaml start it."""
        require(served_through, "picker_started")
        record_property("seconds", json.dumps(served_through.seconds))
        args = served_through.facts["picker_args"]
        assert args[args.index("--config-file") + 1] == "/config/default-plugins.yaml"
        assert served_through.facts["picker_started"] == {"config_loaded": True, "refused": []}


# --- the Dynamo target: Traefik to its frontend Service ---------------------------------------------------------


@pytest.fixture(scope="module")
def dynamo_started(node, hub, traefik, cluster_access, k8s, crd_source, operator_present):
    """The Dynamo target's flow, started first and run on a thread of its own while the trtllm-serve target's runs
    (served_through): its pods start, its Job downloads, while the other's do. The future of its Run."""
    crd = kube.DgdCrd(cluster_access.api_client, crd_source, operator_present)
    with crd_storing(crd, kube.API_VERSIONS[0]), concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(dynamo_flow, node, hub, traefik, cluster_access, k8s)
        try:
            yield future
        finally:
            run, release, namespace = flow_result(future)
            release.close()
            namespace.delete()


DYNAMO_FLOW_SECONDS = 420


def flow_result(future: concurrent.futures.Future) -> tuple[Run, object, object]:
    """The Dynamo flow's (run, release, namespace), or its own failure; a flow still running names itself."""
    try:
        return future.result(timeout=DYNAMO_FLOW_SECONDS)
    except concurrent.futures.TimeoutError:
        raise AssertionError(f"timed out after {DYNAMO_FLOW_SECONDS}s waiting for the Dynamo target's flow "
                             "(dynamo_flow: install, download Job, frontend Ready, requests through Traefik)") from None


def dynamo_flow(node, hub, traefik, cluster_access, k8s) -> tuple[Run, object, object]:
    with on_the_node(node, hub, cluster_access, k8s, DYNAMO_TARGET) as (run, release, namespace):
        routes, hosts = exposure("dynamo", traefik)
        ca = platform_objects(k8s, namespace.name, traefik, hosts)
        small = {"requests": {"cpu": "50m", "memory": "256Mi"}, "limits": {"memory": "3Gi"}}
        values = node_values(DYNAMO_TARGET, hub, {**routes, "frontend": {"resources": small, "replicas": 1}})
        run.values = release.values(DYNAMO_TARGET, values)
        release.install(DYNAMO_TARGET, values)
        run.objects = release.manifest()
        deployment, service = frontend_stand_in(run.objects, namespace.name)
        k8s.apps.create_namespaced_deployment(namespace.name, deployment)
        k8s.core.create_namespaced_service(namespace.name, service)
        wait_job(k8s, namespace.name, find(run.objects, "Job")["metadata"]["name"], timeout=180)
        wait_ready(k8s, namespace.name, deployment["metadata"]["name"], 1, "the frontend stand-in Ready")
        run.seconds["ready"] = round(time.monotonic() - run.started, 1)
        through_traefik(run, traefik, hosts, ca, DYNAMO_MODEL, route=True)
        run.facts["route_status"] = route_status(k8s, namespace.name, find(run.objects, "HTTPRoute")["metadata"]["name"])
        run.facts["gateway_class"] = k8s.custom.get_cluster_custom_object(
            "gateway.networking.k8s.io", "v1", "gatewayclasses", gw.GATEWAY_CLASS)
        run.seconds["traefik"] = round(time.monotonic() - run.started, 1)
    return run, release, namespace


@pytest.fixture(scope="module")
def dynamo_through(dynamo_started) -> Run:
    return flow_result(dynamo_started)[0]


class TestTraefikRoutesTheDynamoFrontend:
    """The Dynamo target behind Traefik: its Ingress (plain and TLS) and HTTPRoute to `<release>-frontend`."""

    @pytest.mark.parametrize("way", ["ingress", "ingress_tls", "route"])
    def test_should_stream_a_chat_through_traefik(self, dynamo_through, way):
        require(dynamo_through, way)
        answer = dynamo_through.facts[way]
        assert answer["status"] == 200 and answer["error"] is None, answer
        assert answer["finished"] and answer["done"] and answer["chunks"] >= 2, answer

    def test_should_accept_the_route_and_resolve_its_service(self, dynamo_through, record_property):
        require(dynamo_through, "route_status")
        record_property("seconds", json.dumps(dynamo_through.seconds))
        conditions = gw.route_conditions(dynamo_through.facts["route_status"])
        assert conditions.get("Accepted") == ("True", "Accepted"), conditions
        assert conditions.get("ResolvedRefs") == ("True", "ResolvedRefs"), conditions

    def test_should_name_the_route_fields_traefik_ignores(self, dynamo_through):
        """The chart renders timeouts.request (Gateway API's HTTPRouteRequestTimeout, an extended feature); Traefik
        3.6 does not list it among the features it supports and ignores it: docs/exposure.md says so, and this test
        fails when a Traefik that implements it comes."""
        require(dynamo_through, "gateway_class")
        route = find(dynamo_through.objects, "HTTPRoute")
        assert route["spec"]["rules"][0]["timeouts"] == {"request": "300s"}
        supported = {f["name"] for f in dynamo_through.facts["gateway_class"]["status"]["supportedFeatures"]}
        assert "HTTPRoute" in supported
        assert "HTTPRouteRequestTimeout" not in supported, sorted(supported)
