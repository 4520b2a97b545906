"""Graceful shutdown (gracefulShutdown, docs/operations.md): what the chart renders so that an upgrade, a scale-down, a
drain or a deleted pod drops no request in flight. Literal numbers: the issue's defaults (300 s longest request, 15 s
preStop) and terminationGracePeriodSeconds = preStopSeconds + maxRequestSeconds + 30. The node tier proves it on a
real kubelet (tests/cluster/test_node.py, TestNoDroppedRequests)."""
from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading

import pytest

from tests.helpers import (CHART_DIR, DGD, DYNAMO_OVERLAYS, TRTLLM_SERVE_DEPLOYMENT, TRTLLM_SERVE_OVERLAYS, Refusal,
                           assert_refused, dgd_pods, find, refusal_params, render_chart)

PRESTOP = ["/bin/sh", "-c", "touch /tmp/gpt-oss-draining; sleep 15"]


PROBE = CHART_DIR / "files" / "readiness_probe.py"
SCRIPTS_MOUNT = {"name": "scripts", "mountPath": "/opt/gpt-oss/scripts", "readOnly": True}


def readiness(model: str, port: int = 8000) -> list[str]:
    return ["python3", "/opt/gpt-oss/scripts/readiness_probe.py", "/tmp/gpt-oss-draining", str(port), model]


def server(objects: list[dict]) -> tuple[dict, dict]:
    deployment = find(objects, "Deployment", "gpt-oss-trtllm-serve")
    return deployment, deployment["spec"]["template"]["spec"]


class TestTrtllmServeShutdown:
    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS)
    def test_should_wait_for_the_longest_request_with_the_formula_in_the_manifest(self, overlay):
        deployment, spec = server(render_chart([overlay], show_only=[TRTLLM_SERVE_DEPLOYMENT]))
        assert spec["terminationGracePeriodSeconds"] == 345
        assert deployment["metadata"]["annotations"]["gpt-oss/termination-grace-period"] == (
            "345 = preStopSeconds 15 + maxRequestSeconds 300 + exitSeconds 30")

    def test_should_follow_the_values(self):
        deployment, spec = server(render_chart(["trtllm-serve-low-latency.yaml"], {
            "gracefulShutdown": {"maxRequestSeconds": 1800, "preStopSeconds": 20}},
                                               show_only=[TRTLLM_SERVE_DEPLOYMENT]))
        assert spec["terminationGracePeriodSeconds"] == 1850
        container = spec["containers"][0]
        assert container["lifecycle"]["preStop"]["exec"]["command"] == [
            "/bin/sh", "-c", "touch /tmp/gpt-oss-draining; sleep 20"]

    def test_should_mark_the_pod_draining_before_sigterm_and_fail_readiness_on_it(self):
        _, spec = server(render_chart(["trtllm-serve-low-latency.yaml"], {"trtllmServe": {"httpPort": 8000}},
                                      show_only=[TRTLLM_SERVE_DEPLOYMENT]))
        container = spec["containers"][0]
        assert container["lifecycle"]["preStop"]["exec"]["command"] == PRESTOP
        probe = container["readinessProbe"]
        # Ready once the server lists the model trtllm-serve names by its folder.
        assert probe["exec"]["command"] == readiness("gpt-oss-120b")
        assert (probe["periodSeconds"], probe["failureThreshold"]) == (2, 2)
        # The probe is a script of the scripts ConfigMap.
        assert SCRIPTS_MOUNT in container["volumeMounts"]
        assert {"name": "scripts", "configMap": {"name": "gpt-oss-scripts"}} in spec["volumes"]
        # The drain mark lives on the writable /tmp volume (the root filesystem may be read-only).
        assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
        # Liveness stays lenient: a draining server is not restarted.
        assert container["livenessProbe"]["failureThreshold"] == 5

    def test_should_probe_the_rendered_port(self):
        _, spec = server(render_chart(["trtllm-serve-low-latency.yaml"], {"trtllmServe": {"httpPort": 9001}},
                                      show_only=[TRTLLM_SERVE_DEPLOYMENT]))
        assert spec["containers"][0]["readinessProbe"]["exec"]["command"] == readiness("gpt-oss-120b", 9001)

    @pytest.mark.parametrize("values,surge,unavailable", [
        ({"trtllmServe": {"replicas": 1}}, 1, 0),
        ({"trtllmServe": {"replicas": 2}}, 0, 1),
        ({"trtllmServe": {"replicas": 3}}, 0, 1),
        ({"trtllmServe": {"replicas": 1, "autoscaling": {"enabled": True, "minReplicas": 2, "maxReplicas": 4}}}, 0, 1),
        ({"trtllmServe": {"replicas": 3, "autoscaling": {"enabled": True, "minReplicas": 1, "maxReplicas": 4}}}, 1, 0),
    ], ids=["one", "two", "three", "scaled-from-two", "scaled-from-one"])
    def test_should_keep_serving_capacity_through_a_rolling_update(self, values, surge, unavailable):
        deployment, _ = server(render_chart(["trtllm-serve-low-latency.yaml"], values,
                                            show_only=[TRTLLM_SERVE_DEPLOYMENT]))
        assert deployment["spec"]["strategy"] == {
            "type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}


class ModelsServer(http.server.ThreadingHTTPServer):
    """/v1/models on 127.0.0.1 answering `body` (bytes), as a frontend or trtllm-serve would."""

    def __init__(self, body: bytes):
        self.body = body

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(handler):  # noqa: N805
                status = 200 if handler.path == "/v1/models" else 404
                handler.send_response(status)
                handler.end_headers()
                handler.wfile.write(self.body if status == 200 else b"")

            def log_message(handler, *args):  # noqa: N805
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()


def models(*names: str) -> bytes:
    return json.dumps({"object": "list", "data": [{"id": name, "object": "model"} for name in names]}).encode()


class TestReadinessProbe:
    """files/readiness_probe.py, run as the kubelet runs the rendered probe: its exit code is the verdict."""

    @pytest.fixture
    def probe(self, tmp_path):
        servers = []

        def run(body: bytes | None, model: str = "openai/gpt-oss-120b", draining: bool = False, **env) -> int:
            port = 9  # discard: nothing listens
            if body is not None:
                servers.append(ModelsServer(body))
                port = servers[-1].server_address[1]
            mark = tmp_path / "gpt-oss-draining"
            if draining:
                mark.touch()
            result = subprocess.run([sys.executable, str(PROBE), str(mark), str(port), model], timeout=30,
                                    env={"PATH": "/usr/bin:/bin", **env})
            return result.returncode

        yield run
        for server in servers:
            server.shutdown()
            server.server_close()

    def test_should_be_ready_once_the_model_is_listed(self, probe):
        assert probe(models("openai/gpt-oss-120b")) == 0

    def test_should_not_be_ready_while_another_model_or_none_is_listed(self, probe):
        # The 1.2.1 frontend answers /health before any worker registered: the model list is what counts.
        assert probe(models("gpt-oss-120b")) == 1
        assert probe(models()) == 1

    def test_should_not_be_ready_while_draining_even_when_the_model_is_listed(self, probe):
        assert probe(models("openai/gpt-oss-120b"), draining=True) == 1

    def test_should_not_be_ready_when_nothing_answers_or_the_answer_is_not_a_list(self, probe):
        assert probe(None) == 1
        assert probe(b"<html>starting</html>") == 1
        assert probe(b'["openai/gpt-oss-120b"]') == 1

    def test_should_ignore_a_proxy_for_the_loopback_probe(self, probe):
        # A cluster-wide proxy (HTTP_PROXY on every container) must not carry the probe: nothing listens on port 9.
        assert probe(models("openai/gpt-oss-120b"), http_proxy="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9") == 0


class TestDynamoShutdown:
    @pytest.mark.parametrize("api", ["nvidia.com/v1beta1"])
    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS)
    def test_should_drain_the_frontend_and_give_every_pod_the_grace_period(self, overlay, api):
        dgd = find(render_chart([overlay], {"dynamo": {"apiVersion": api}}, show_only=[DGD]), "DynamoGraphDeployment")
        assert dgd["metadata"]["annotations"]["gpt-oss/termination-grace-period"] == (
            "345 = preStopSeconds 15 + maxRequestSeconds 300 + exitSeconds 30")
        pods = dgd_pods(dgd)
        assert {name: pod["spec"]["terminationGracePeriodSeconds"] for name, pod in pods.items()} == {
            name: 345 for name in pods}
        frontend = pods["Frontend"]["spec"]["containers"][0]
        env = {e["name"]: e["value"] for e in frontend["env"]}
        # The frontend's own graceful shutdown gets the longest request (Dynamo's default is 5 s).
        assert env["DYN_HTTP_GRACEFUL_SHUTDOWN_TIMEOUT_SECS"] == "300"
        assert frontend["lifecycle"]["preStop"]["exec"]["command"] == PRESTOP
        # Ready once the frontend lists the model: its /health says healthy before any worker registered.
        assert frontend["readinessProbe"]["exec"]["command"] == readiness("openai/gpt-oss-120b")
        assert SCRIPTS_MOUNT in frontend["volumeMounts"]
        assert {"name": "scripts", "configMap": {"name": "gpt-oss-scripts"}} in pods["Frontend"]["spec"]["volumes"]

    def test_should_give_the_frontend_the_longest_request_of_the_values(self):
        dgd = find(render_chart(["agg.yaml"], {"gracefulShutdown": {"maxRequestSeconds": 900}}, show_only=[DGD]),
                   "DynamoGraphDeployment")
        pods = dgd_pods(dgd)
        env = {e["name"]: e["value"] for e in pods["Frontend"]["spec"]["containers"][0]["env"]}
        assert env["DYN_HTTP_GRACEFUL_SHUTDOWN_TIMEOUT_SECS"] == "900"
        assert pods["Frontend"]["spec"]["terminationGracePeriodSeconds"] == 945


# Refusals (gpt-oss.checkValues.<concern>, templates/validation/_check-*.tpl): one table per concern, one case per
# message; tests/chart/validation/test_check_values.py counts them against the fail calls.
# gpt-oss.checkValues.gracefulShutdown (_check-graceful-shutdown.tpl).
GRACEFUL_SHUTDOWN_REFUSALS = [
    Refusal("prestop-shorter-than-readiness", "agg.yaml", {"gracefulShutdown": {"preStopSeconds": 4}},
            "gracefulShutdown.preStopSeconds=4 is shorter than the readiness probe needs to report the pod draining (two "
            "tries, 2 s apart) plus a moment for the endpoints to follow, so requests could still arrive after SIGTERM; "
            "allowed: 5 or more (15 by default; longer than your ingress controller's or gateway's endpoint refresh)"),
]
REFUSALS = {"gracefulShutdown": GRACEFUL_SHUTDOWN_REFUSALS}


@pytest.mark.parametrize("case", refusal_params(REFUSALS))
def test_should_refuse_with_a_message_naming_the_keys(case):
    assert_refused(case)
