"""What a token costs (monitoring.cost), read from a real Prometheus evaluating the rendered recording rules over the real
Dynamo 1.2.1 frontend's token and request counters and the mocker worker reporting in.

values/agg.yaml runs as the operator would run it on 127.0.0.1 (tests/e2e/plan.py): one frontend and one aggregated
worker of TP4, so 4 GPUs. Prometheus 3 (built from its module) scrapes them on the configuration
prometheus-operator writes from the rendered PodMonitors and PrometheusRule (tests/e2e/prometheus.py) and evaluates the
rules every second. The probe (tests/e2e/cost_probe.py) sends a warm-up request, then a burst of known size, adds up
the completion tokens the responses report, and reads the recorded series. Worked by hand: price 3.00 per GPU-hour x
4 GPUs x a 30-second window = 0.10; 12 requests of 20 tokens = 240 tokens => 0.10 / 240 x 1000000 = 416.67 per
million output tokens, 0.10 / 12 = 0.008333 per request.
"""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.e2e import conftest as e2e
from tests.e2e import plan as e2e_plan
from tests.e2e import prometheus as prom
from tests.e2e.test_monitoring_live import stand_in_pods
from tests.helpers import deep_merge, load_values, render_chart, worker_port

# heavy: its seconds in CI's cluster plane (python -m ci.cluster timings), so that pytest-xdist starts it first
pytestmark = [pytest.mark.e2e, pytest.mark.heavy(45)]
PROBE = Path(__file__).with_name("cost_probe.py")
OVERLAY = "agg.yaml"
PORT = worker_port(18300)
INTERVAL = "1s"
REQUESTS, MAX_TOKENS, CONCURRENCY = 12, 20, 4
# The bound below the 416.67 the burst costs, so GptOssTokenCostHigh fires (for: 1s, to see it on one burst).
VALUES = {"monitoring": {"podMonitor": {"enabled": True, "interval": INTERVAL, "scrapeTimeout": INTERVAL},
                         "prometheusRule": {"enabled": True, "alerts": {"GptOssTokenCostHigh": {
                             "enabled": True, "for": "1s", "severity": "warning"}}},
                         "cost": {"enabled": True, "gpuHourPrice": {"GB200": 3.00}, "window": "30s",
                                  "maxCostPerMillionTokens": 400}}}
RECORDS = ("gpt_oss:role_gpus", "gpt_oss:cost_per_million_output_tokens", "gpt_oss:cost_per_request")


@pytest.fixture(scope="module")
def cost(prometheus_release, e2e_python, tokenizer_dir, tmp_path_factory, monitoring_cluster):
    release = prometheus_release
    run_dir = tmp_path_factory.mktemp(f"token-cost-{release}")
    tmp_dir = Path(tempfile.mkdtemp(prefix="gpt-oss-cost-"))
    try:
        with prom.OperatorRun(monitoring_cluster.api_client, monitoring_cluster.kubeconfig,
                              run_dir / "cluster") as cluster:
            namespace = cluster.namespace(f"llm-{cluster.run}")
            monitoring = cluster.namespace(f"monitoring-{cluster.run}")
            base = e2e_plan.scaled_overlay_values(load_values([OVERLAY]), run_dir)
            base["frontend"].update({"httpPort": PORT, "urlOverride": f"http://127.0.0.1:{PORT}"})
            # The components here are the main venv's ai-dynamo 1.2.1: the 1.2 line's worker component names.
            objects = render_chart([OVERLAY], deep_merge(deep_merge(base, VALUES), {"dynamo": {"releaseLine": "1.2"}}),
                                   namespace=namespace)
            plan = e2e_plan.build_plan(objects, run_dir, e2e_python, tmp_dir, namespace=namespace)
            plan["jobs"] = []
            cluster.chart_objects(objects, namespace)
            cluster.pods(stand_in_pods(plan, "gpt-oss", namespace))
            configuration = prom.operator_configurations(cluster, monitoring, {"prometheus": [namespace]}, release,
                                                         INTERVAL)["prometheus"]
            for service in plan["services"]:
                service["env"][e2e_plan.RUN_ENV] = plan["run_dir"]
            env = dict(plan["services"][0]["env"])
            server = prom.prometheus_service("prometheus", run_dir / "prometheus", 19095, configuration, env, release)
            plan["services"] = [prom.api_bridge_service(e2e_python, tmp_dir / "api.sock", env), *plan["services"],
                                server]
            # values/agg.yaml: one frontend and one aggregated worker, each scraped once.
            spec = {"url": f"http://127.0.0.1:{PORT}", "model": plan["model"], "prometheus": server["url"],
                    "targets": 2, "ready_timeout": 150, "settle": 4, "quiet": 32, "requests": REQUESTS,
                    "max_tokens": MAX_TOKENS, "concurrency": CONCURRENCY,
                    "records": {name: f'{name}{{namespace="{namespace}",deployment="gpt-oss"}}' for name in RECORDS},
                    "counters": {"tokens": "dynamo_frontend_output_tokens_total",
                                 "requests": 'dynamo_frontend_requests_total{status="success"}'}}
            spec_path = run_dir / "cost-spec.json"
            spec_path.write_text(json.dumps(spec, indent=1))
            plan["jobs"] = [{"name": "cost-probe", "timeout": 300, "env": env,
                             "argv": [e2e_python, str(PROBE), str(spec_path)]}]
            with prom.host_api_bridge(tmp_dir / "api.sock", monitoring_cluster.access):
                run = e2e._run_plan("token-cost", objects, plan, e2e_python, tokenizer_dir, run_dir)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    output = run.job("cost-probe").get("output", "")
    last = output.strip().splitlines()[-1] if output.strip() else ""
    if not last.startswith("{") or "error" in json.loads(last):
        pytest.fail(f"the probe recorded nothing usable: {last}\n{run.logs()}", pytrace=False)
    return json.loads(last), run


def by_role(results: list[dict] | None) -> dict[str, float]:
    return {r["labels"]["role"]: r["value"] for r in results or []}


class TestTokenCostLive:
    def test_should_finish_the_burst_with_the_tokens_asked_for(self, cost):
        data, run = cost
        # The test's own counts: 12 requests of 20 tokens each, every one answered.
        assert data["burst"] == {**data["burst"], "requests": 12, "tokens": 240, "errors": []}, run.logs()

    def test_should_count_the_gpus_of_the_worker_pod(self, cost):
        data, _ = cost
        # values/agg.yaml: one aggregated worker pod of TP4.
        assert by_role(data["records"]["gpt_oss:role_gpus"]) == {"worker": 4, "all": 4}

    def test_should_record_the_cost_per_million_output_tokens_worked_by_hand(self, cost):
        data, _ = cost
        # 3.00 per GPU-hour x 4 GPUs x 30 s = 0.10; 0.10 / 240 tokens x 1000000 = 416.67.
        found = by_role(data["records"]["gpt_oss:cost_per_million_output_tokens"])
        assert found.keys() == {"worker", "all"}, data["records"]
        assert all(value == pytest.approx(416.6667, abs=1e-3) for value in found.values()), (found, data["counters"])

    def test_should_record_the_cost_per_request_worked_by_hand(self, cost):
        data, _ = cost
        # 0.10 / 12 requests = 0.008333.
        found = by_role(data["records"]["gpt_oss:cost_per_request"])
        assert found.keys() == {"worker", "all"}, data["records"]
        assert all(value == pytest.approx(0.0083333, abs=1e-6) for value in found.values()), (found, data["counters"])

    def test_should_fire_the_cost_alert_above_the_bound(self, cost):
        data, _ = cost
        # 416.67 per million output tokens is above monitoring.cost.maxCostPerMillionTokens=400.
        fired = [a for a in data["alerts"] or [] if a["name"] == "GptOssTokenCostHigh"]
        assert [(a["state"], a["labels"]["role"]) for a in fired] == [("firing", "all")], data["alerts"]
