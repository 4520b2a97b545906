"""Offline checks of how the e2e tier turns a render into local processes (no Dynamo needed).

They run with the default tier, so a new flag in a rendered worker command fails here first and
needs a rule in tests/e2e/plan.py (keep, rename or drop for dynamo.mocker).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.plan import (DROPPED_FLAGS, FRONTEND_PORT, MOCKER_FLAGS, RUN_ENV, UnknownWorkerFlag, build_plan,
                            mocker_args, rendered_replicas, scaled_overlay_values, trtllm_serve_stand_in)
from tests.helpers import (DYNAMO_OVERLAYS, OVERLAYS, TRTLLM_SERVE_OVERLAYS, deep_merge, dgd_components, dgd_workers,
                           find, flag_value, load_values, render_chart)

RUN_DIR = Path("/run/e2e")
PYTHON = "/venv/bin/python"


def _render(overlay: str, extra: dict | None = None) -> list[dict]:
    values = scaled_overlay_values(load_values([overlay]), RUN_DIR)
    return render_chart([overlay], deep_merge(values, extra or {}))


@pytest.fixture(scope="module", params=DYNAMO_OVERLAYS)
def rendered(request) -> tuple[str, list[dict]]:
    return request.param, _render(request.param)


@pytest.fixture(scope="module", params=OVERLAYS)
def any_rendered(request) -> tuple[str, list[dict]]:
    return request.param, _render(request.param)


@pytest.fixture(scope="module", params=TRTLLM_SERVE_OVERLAYS)
def trtllm_serve_rendered(request) -> tuple[str, list[dict]]:
    return request.param, _render(request.param)


def _server(objects: list[dict]) -> dict:
    return find(objects, "Deployment", "gpt-oss-trtllm-serve")["spec"]["template"]["spec"]["containers"][0]


class TestMockerArgs:
    def test_should_have_a_rule_for_every_rendered_worker_flag(self, rendered):
        overlay, objects = rendered
        for component, worker in dgd_workers(find(objects, "DynamoGraphDeployment")).items():
            args = mocker_args(worker["args"])  # raises UnknownWorkerFlag on a flag without a rule
            model_flag = "--model" if "--model" in worker["args"] else "--model-path"
            assert flag_value(args, "--model-path") == flag_value(worker["args"], model_flag)
            assert flag_value(args, "--model-name") == flag_value(worker["args"], "--served-model-name")
            if worker["type"] == "worker":
                assert "--disaggregation-mode" not in args, component
            else:
                assert flag_value(args, "--disaggregation-mode") == worker["type"], component
            assert not DROPPED_FLAGS & set(args)
            assert args[-len(MOCKER_FLAGS):] == MOCKER_FLAGS

    def test_should_refuse_a_flag_it_has_no_rule_for(self):
        objects = _render("agg.yaml", {"workers": {"extraArgs": ["--kv-cache-dtype", "fp8"]}})
        worker = dgd_workers(find(objects, "DynamoGraphDeployment"))["TRTLLMWorker"]
        assert "--kv-cache-dtype" in worker["args"]
        with pytest.raises(UnknownWorkerFlag, match="--kv-cache-dtype"):
            mocker_args(worker["args"])


class TestPlan:
    def test_should_run_the_rendered_frontend_command_plus_local_discovery(self, rendered):
        _, objects = rendered
        plan = build_plan(objects, RUN_DIR, PYTHON, Path("/tmp/x"))
        main = dgd_components(find(objects, "DynamoGraphDeployment"))["Frontend"]["main"]
        argv = next(s for s in plan["services"] if s["role"] == "frontend")["argv"]
        assert argv == [PYTHON, *main["command"][1:], *main["args"],
                        "--discovery-backend", "file", "--http-host", "127.0.0.1"]

    def test_should_start_one_mocker_per_rendered_replica(self, rendered):
        overlay, objects = rendered
        # Two pods of every role: on several nodes (a single-node overlay's node holds one of each).
        objects = _render(overlay, {"workers": {"sameNode": False, **{role: {"replicas": 2} for role in ("worker", "prefill", "decode")}}})
        plan = build_plan(objects, RUN_DIR, PYTHON, Path("/tmp/x"))
        workers = dgd_workers(find(objects, "DynamoGraphDeployment"))
        started = [s["component"] for s in plan["services"] if s["role"] != "frontend"]
        assert {c: started.count(c) for c in started} == {c: w["replicas"] for c, w in workers.items()} != {}
        ports = [s["env"]["DYN_SYSTEM_PORT"] for s in plan["services"] if s["role"] != "frontend"]
        assert len(set(ports)) == len(ports)

    def test_should_change_the_scripts_only_by_the_volume_mount(self, any_rendered):
        _, objects = any_rendered
        plan = build_plan(objects, RUN_DIR, PYTHON, Path("/tmp/x"))
        jobs = {job["name"]: job for job in plan["jobs"]}
        smoke = find(objects, "Pod", "gpt-oss-smoke-test")["spec"]["containers"][0]
        benchmark = find(objects, "Job", "gpt-oss-benchmark")["spec"]["template"]["spec"]["containers"][0]
        for name, container in (("smoke-test", smoke), ("benchmark", benchmark)):
            rendered_argv = container["command"] + container.get("args", [])
            assert [arg.replace("/opt/gpt-oss/scripts/", f"{RUN_DIR}/scripts/") for arg in rendered_argv] \
                == jobs[name]["argv"]
            rendered_env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
            overridden = {k for k in rendered_env if jobs[name]["env"][k] != rendered_env[k]}
            # ARTIFACTS_ROOT: the benchmark's artifacts mount, a subPath of the cache claim, mapped to that folder.
            assert overridden <= {"HOME", *(["ARTIFACTS_ROOT"] if name == "benchmark" else [])}, name
            assert jobs[name]["env"][RUN_ENV] == str(RUN_DIR)
        scripts = find(objects, "ConfigMap", "gpt-oss-scripts")["data"]
        assert plan["files"] == {f"{RUN_DIR}/scripts/{name}": text for name, text in scripts.items()}


class TestTrtllmServeStandIn:
    def test_should_read_model_and_port_from_the_rendered_command_line(self, trtllm_serve_rendered):
        _, objects = trtllm_serve_rendered
        server = trtllm_serve_stand_in(_server(objects)["args"])
        assert server == {"model_path": "/run/e2e/cache/openai/gpt-oss-120b", "model_name": "gpt-oss-120b",
                          "port": FRONTEND_PORT}

    def test_should_refuse_a_flag_it_has_no_rule_for(self):
        objects = _render("trtllm-serve-low-latency.yaml", {"trtllmServe": {"extraArgs": ["--log_level", "debug"]}})
        with pytest.raises(UnknownWorkerFlag, match="--log_level"):
            trtllm_serve_stand_in(_server(objects)["args"])

    def test_should_serve_the_name_the_clients_ask_for_on_their_url(self, trtllm_serve_rendered):
        _, objects = trtllm_serve_rendered
        plan = build_plan(objects, RUN_DIR, PYTHON, Path("/tmp/x"))
        frontend = next(s for s in plan["services"] if s["role"] == "frontend")
        assert frontend["argv"] == [PYTHON, "-m", "dynamo.frontend", "--http-port", str(FRONTEND_PORT),
                                    "--discovery-backend", "file", "--http-host", "127.0.0.1"]
        assert plan["frontend_url"] == f"http://127.0.0.1:{FRONTEND_PORT}"
        mockers = [s for s in plan["services"] if s["role"] != "frontend"]
        assert [flag_value(s["argv"], "--model-name") for s in mockers] == [plan["model"]] == ["gpt-oss-120b"]
        # The rendered env reaches the stand-in; the run's own HOME wins over the pod's /tmp.
        assert mockers[0]["env"]["TRTLLM_ENABLE_PDL"] == "1"
        assert mockers[0]["env"]["HOME"] == f"{RUN_DIR}/home"

    def test_should_start_one_stand_in_per_rendered_replica(self):
        objects = _render("trtllm-serve-max-throughput.yaml", {"trtllmServe": {"replicas": 3}})
        plan = build_plan(objects, RUN_DIR, PYTHON, Path("/tmp/x"))
        assert rendered_replicas(objects) == {"trtllm-serve": 3}
        assert [s["name"] for s in plan["services"] if s["role"] != "frontend"] == [
            "trtllm-serve-0", "trtllm-serve-1", "trtllm-serve-2"]
