"""Graceful shutdown (gracefulShutdown, docs/operations.md): what the chart renders so that an upgrade, a scale-down, a
drain or a deleted pod drops no request in flight. Literal numbers: the issue's defaults (300 s longest request, 15 s
preStop) and terminationGracePeriodSeconds = preStopSeconds + maxRequestSeconds + 30. The node tier proves it on a
real kubelet (tests/cluster/test_node.py, TestNoDroppedRequests)."""
from __future__ import annotations

import pytest

from tests.helpers import (DGD, DYNAMO_OVERLAYS, TRTLLM_SERVE_DEPLOYMENT, TRTLLM_SERVE_OVERLAYS, Refusal,
                           assert_refused, dgd_pods, find, refusal_params, render_chart)

PRESTOP = ["/bin/sh", "-c", "touch /tmp/gpt-oss-draining; sleep 15"]


def readiness(model: str, port: int = 8000) -> str:
    return ("test ! -e /tmp/gpt-oss-draining && exec python3 -c 'import json, urllib.request as u; models = "
            f"json.load(u.build_opener(u.ProxyHandler({{}})).open(\"http://127.0.0.1:{port}/v1/models\", timeout=2))"
            f"[\"data\"]; raise SystemExit(\"{model}\" not in [m[\"id\"] for m in models])'")


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
        assert probe["exec"]["command"] == ["/bin/sh", "-c", readiness("gpt-oss-120b")]
        assert (probe["periodSeconds"], probe["failureThreshold"]) == (2, 2)
        # The drain mark lives on the writable /tmp volume (the root filesystem may be read-only).
        assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
        # Liveness stays lenient: a draining server is not restarted.
        assert container["livenessProbe"]["failureThreshold"] == 5

    def test_should_probe_the_rendered_port(self):
        _, spec = server(render_chart(["trtllm-serve-low-latency.yaml"], {"trtllmServe": {"httpPort": 9001}},
                                      show_only=[TRTLLM_SERVE_DEPLOYMENT]))
        assert spec["containers"][0]["readinessProbe"]["exec"]["command"][2] == readiness("gpt-oss-120b", 9001)

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
        assert frontend["readinessProbe"]["exec"]["command"] == ["/bin/sh", "-c", readiness("openai/gpt-oss-120b")]

    def test_should_give_the_frontend_the_longest_request_of_the_values(self):
        dgd = find(render_chart(["agg.yaml"], {"gracefulShutdown": {"maxRequestSeconds": 900}}, show_only=[DGD]),
                   "DynamoGraphDeployment")
        pods = dgd_pods(dgd)
        env = {e["name"]: e["value"] for e in pods["Frontend"]["spec"]["containers"][0]["env"]}
        assert env["DYN_HTTP_GRACEFUL_SHUTDOWN_TIMEOUT_SECS"] == "900"
        assert pods["Frontend"]["spec"]["terminationGracePeriodSeconds"] == 945


# Refusals (gpt-oss.checkValues.<concern>, templates/validation/_check-*.tpl): one table per concern, one case per
# message; tests/test_check_values.py counts them against the fail calls.
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
