"""What the Dynamo operator reads from the chart's DGD to serve, roll and stop its pods, rendered offline.

The real operator (1.5.0-dev, ai-dynamo/dynamo main @ 2a6da14c) proves each of these live in
tests/cluster/test_operator.py; here, that the chart renders them:
- the frontend's container port named `http` is frontend.httpPort: the operator's frontend Service (always port
  8000, consts.DynamoServicePort) and its liveness probe target that name, so the clients' URL keeps 8000 (D2);
- each worker role's pod template carries the sha256 of the engine YAML it reads, so a change to that file alone
  changes the DGD and rolls the workers, which read it only at start (D3);
- with every worker on one node, the operator's rollout annotations leave no surge pod (D4);
- the planner gets the chart's grace period (the operator would give it 60 s).
"""
from __future__ import annotations

import hashlib

import pytest

from tests.helpers import DGD, DYNAMO_OVERLAYS, deep_merge, dgd_components, dgd_workers, find, render_chart

SURGE = "nvidia.com/deployment-rolling-update-max-surge"
UNAVAILABLE = "nvidia.com/deployment-rolling-update-max-unavailable"
ENGINE_SHA = "gpt-oss/engine-config-sha256"
SAME_NODE = ["8xb200-single-node.yaml", "8xb200-single-node-balanced.yaml"]


def dgd(overlay: str, values: dict | None = None) -> dict:
    return find(render_chart([overlay], values or {}, show_only=[DGD]), "DynamoGraphDeployment")


def annotations(view: dict) -> dict:
    return view["fields"]["podTemplate"]["metadata"].get("annotations", {})


class TestFrontendPort:
    @pytest.mark.parametrize("port", [8000, 9000])
    def test_should_name_the_container_port_the_operators_service_targets(self, port):
        frontend = dgd_components(dgd("agg.yaml", {"frontend": {"httpPort": port}}))["Frontend"]["main"]
        assert frontend["ports"] == [{"name": "http", "containerPort": port, "protocol": "TCP"}]
        assert frontend["args"][-2:] == ["--http-port", str(port)]

    def test_should_keep_the_clients_on_the_services_port_8000(self):
        objects = render_chart(["agg.yaml"], {"frontend": {"httpPort": 9000}})
        urls = {e["value"] for o in objects if "helm.sh/hook" in (o["metadata"].get("annotations") or {})
                for c in o["spec"].get("template", o)["spec"]["containers"] for e in c.get("env", [])
                if e["name"] == "FRONTEND_URL"}
        assert urls == {"http://gpt-oss-frontend.llm.svc:8000"}


class TestEngineChecksum:
    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_annotate_each_worker_role_with_its_own_engine_yaml(self, overlay):
        objects = render_chart([overlay])
        engine = find(objects, "ConfigMap", "gpt-oss-engine")["data"]
        workers = dgd_workers(find(objects, "DynamoGraphDeployment"))
        keys = {name: view["pod_spec"]["containers"][0]["args"] for name, view in workers.items()}
        for name, view in workers.items():
            path = keys[name][keys[name].index("--extra-engine-args") + 1]  # /engine/<role>.yaml
            text = engine[path.removeprefix("/engine/")]
            # the file as the worker reads it: `sha256sum /engine/<role>.yaml` in the pod
            assert annotations(view)[ENGINE_SHA] == hashlib.sha256(text.encode()).hexdigest()[:16], name
        assert ENGINE_SHA not in annotations(dgd_components(find(objects, "DynamoGraphDeployment"))["Frontend"])

    def test_should_change_only_the_role_whose_engine_yaml_changes(self):
        before = dgd_workers(dgd("disagg-k8s.yaml"))
        after = dgd_workers(dgd("disagg-k8s.yaml", {"workers": {"decode": {"engine": {"print_iter_log": False}}}}))
        assert annotations(after["TRTLLMDecodeWorker"])[ENGINE_SHA] != annotations(before["TRTLLMDecodeWorker"])[ENGINE_SHA]
        assert annotations(after["TRTLLMPrefillWorker"]) == annotations(before["TRTLLMPrefillWorker"])


class TestRollingUpdate:
    @pytest.mark.parametrize("overlay", SAME_NODE)
    def test_should_leave_no_surge_pod_when_every_worker_shares_one_node(self, overlay):
        for name, view in dgd_workers(dgd(overlay)).items():
            assert {k: v for k, v in annotations(view).items() if k.startswith("nvidia.com/deployment-")} == {
                SURGE: "0", UNAVAILABLE: "1"}, name

    @pytest.mark.parametrize("overlay", sorted(set(DYNAMO_OVERLAYS) - set(SAME_NODE)))
    def test_should_keep_the_operators_default_rollout_elsewhere(self, overlay):
        for view in dgd_components(dgd(overlay)).values():
            assert not {SURGE, UNAVAILABLE} & annotations(view).keys()


class TestPlannerGracePeriod:
    def test_should_give_the_planner_the_charts_grace_period(self):
        values = deep_merge({"planner": {"enabled": True}}, {"gracefulShutdown": {"preStopSeconds": 5,
                                                                                  "maxRequestSeconds": 10}})
        components = dgd_components(dgd("disagg-k8s.yaml", values))
        # 45 = preStopSeconds 5 + maxRequestSeconds 10 + exitSeconds 30 (gpt-oss.gracefulShutdown)
        assert components["Planner"]["pod_spec"]["terminationGracePeriodSeconds"] == 45
        assert components["Frontend"]["pod_spec"]["terminationGracePeriodSeconds"] == 45


class TestNotes:
    def test_should_name_the_operator_the_tests_run_and_its_window(self):
        from tests.helpers import render_notes
        notes = render_notes(["agg.yaml"])
        assert ("Tested with the Dynamo operator 1.5.0-dev (ai-dynamo/dynamo main @ 2a6da14c, Grove off); an operator "
                "supports runtimes\n  from two minors before its own to one after") in notes
        assert "the platform it needs: operator 1.7.x (1.6.x to 1.9.x admit it)" in notes
        assert ("Runtime 1.7.0 is past that operator's window (1.3 to 1.6): no newer operator source could be had to "
                "test it.") in notes
        line_1_6 = render_notes(["agg.yaml"], {"dynamo": {"releaseLine": "1.6"}})
        assert "the platform it needs: operator 1.6.x (1.5.x to 1.8.x admit it)" in line_1_6
        assert "past that operator's window" not in line_1_6
