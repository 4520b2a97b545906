"""The chart's alert rules, checked by Prometheus's own promtool (Debian's prometheus package, 2.42): the rendered
PrometheusRule's groups pass `promtool check rules`, and `promtool test rules` runs tests/data/alerts-test.yaml on them.
Skips, saying why, without promtool. Live data: tests/e2e/test_monitoring_live.py.
"""
from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from tests.helpers import PROMETHEUS_RULE, REPO_ROOT, deep_merge, find, render_chart

UNIT_TESTS = REPO_ROOT / "tests" / "data" / "alerts-test.yaml"
# What the unit tests expect: KV-aware routing with KV events, so the workers publish the KV-cache gauge.
VALUES = {"monitoring": {"prometheusRule": {"enabled": True}}, "frontend": {"routerMode": "kv"},
          "workers": {"worker": {"engine": {"kv_cache_config": {"enable_block_reuse": True}}}}}


@pytest.fixture(scope="module")
def promtool() -> str:
    path = shutil.which("promtool")
    if not path:
        pytest.skip("promtool not found: install Debian's prometheus package (apt-get install prometheus)")
    return path


def write_rules(folder, overlay: str, values: dict) -> tuple:
    # The series in tests/data carry the 1.2 line's names (the 1.6 line's: tests/chart/monitoring/test_dynamo_metrics.py, tests/e2e).
    objects = render_chart([overlay], deep_merge(values, {"dynamo": {"releaseLine": "1.2"}}))
    rules = folder / "alerts.rules.yaml"
    rules.write_text(yaml.safe_dump({"groups": find(objects, "PrometheusRule")["spec"]["groups"]}, sort_keys=False))
    return rules, objects


class TestPromtool:
    @pytest.mark.parametrize("overlay", ["agg.yaml", "disagg-k8s.yaml", "trtllm-serve-low-latency.yaml"])
    def test_should_pass_promtool_check_rules(self, promtool, tmp_path, overlay):
        rules, _ = write_rules(tmp_path, overlay, VALUES if overlay == "agg.yaml" else VALUES | {
            "frontend": {}, "workers": {}})
        result = subprocess.run([promtool, "check", "rules", str(rules)], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "SUCCESS" in result.stdout

    def test_should_pass_the_unit_tests(self, promtool, tmp_path):
        _, objects = write_rules(tmp_path, "agg.yaml", VALUES)
        job = next(o["metadata"]["name"] for o in objects
                   if o["kind"] == "Job" and o["metadata"]["name"].startswith("gpt-oss-model-download-"))
        (tmp_path / "alerts-test.yaml").write_text(UNIT_TESTS.read_text().replace("${DOWNLOAD_JOB}", job))
        result = subprocess.run([promtool, "test", "rules", str(tmp_path / "alerts-test.yaml")],
                                capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "SUCCESS" in result.stdout

    def test_should_fail_the_unit_tests_without_the_once_per_pod_count(self, promtool, tmp_path):
        """The tests can fail: a queue rule that sums both scrape jobs fires by minute 8 and is caught."""
        rules, objects = write_rules(tmp_path, "agg.yaml", VALUES)
        text = rules.read_text().replace("sum(max by (namespace, pod, model) (dynamo_frontend_queued_requests",
                                         "sum(sum by (namespace, pod, model, job) (dynamo_frontend_queued_requests")
        assert text != rules.read_text()
        rules.write_text(text)
        job = next(o["metadata"]["name"] for o in objects
                   if o["kind"] == "Job" and o["metadata"]["name"].startswith("gpt-oss-model-download-"))
        (tmp_path / "alerts-test.yaml").write_text(UNIT_TESTS.read_text().replace("${DOWNLOAD_JOB}", job))
        result = subprocess.run([promtool, "test", "rules", str(tmp_path / "alerts-test.yaml")],
                                capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert result.returncode != 0 and "GptOssRequestsQueuing" in result.stdout + result.stderr


COST_TESTS = REPO_ROOT / "tests" / "data" / "cost-test.yaml"
COST = {"monitoring": {"prometheusRule": {"enabled": True, "alerts": {"GptOssTokenCostHigh": {
    "enabled": True, "for": "1m", "severity": "warning"}}},
    "cost": {"enabled": True, "gpuHourPrice": {"GB200": 3.0}, "window": "15m", "maxCostPerMillionTokens": 250}}}


class TestCostRules:
    """What a token costs, worked by hand in tests/data/cost-test.yaml: 4 GPUs x 3 per GPU-hour over 15 minutes and
    10000 tokens => 300 per million, 100 requests => 0.03 each."""

    def run(self, promtool, tmp_path, edit=None):
        objects = render_chart(["agg.yaml"], deep_merge(COST, {"dynamo": {"releaseLine": "1.2"}}), show_only=[PROMETHEUS_RULE])
        groups = find(objects, "PrometheusRule")["spec"]["groups"]
        text = yaml.safe_dump({"groups": groups}, sort_keys=False, width=1 << 20)
        (tmp_path / "cost.rules.yaml").write_text(edit(text) if edit else text)
        (tmp_path / "cost-test.yaml").write_text(COST_TESTS.read_text())
        return subprocess.run([promtool, "test", "rules", str(tmp_path / "cost-test.yaml")],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path)

    def test_should_record_the_cost_worked_by_hand(self, promtool, tmp_path):
        result = self.run(promtool, tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "SUCCESS" in result.stdout

    def test_should_fail_the_unit_tests_with_a_rate_that_extrapolates(self, promtool, tmp_path):
        """The tests can fail: increase() extrapolates to the window's edges and misses 300."""
        result = self.run(promtool, tmp_path, lambda text: text.replace(
            "max_over_time(dynamo_frontend_output_tokens_total", "increase(dynamo_frontend_output_tokens_total").replace(
            " - min_over_time(dynamo_frontend_output_tokens_total{dynamo_namespace=\"llm-gpt-oss\"}[15m])", ""))
        assert result.returncode != 0 and "gpt_oss:cost_per_million_output_tokens" in result.stdout + result.stderr
