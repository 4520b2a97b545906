"""e2e tier: each target's rendered frontend, workers (as dynamo.mocker), smoke test and benchmark, for real.

The stack runs once per case (fixture e2e_run in conftest.py); a failed test shows every process log.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.plan import rendered_replicas
from tests.helpers import find, flag_value

# heavy: its seconds in CI's cluster plane (python -m ci.cluster timings), so that pytest-xdist starts it first
pytestmark = [pytest.mark.e2e, pytest.mark.heavy(830)]


def _served(run) -> dict[str, dict[str, float]]:
    """{role type: {mocker: requests its `generate` endpoint served}} (roles: worker, prefill, decode)."""
    served: dict[str, dict[str, float]] = {}
    for name, service in run.services.items():
        if service["role"] != "frontend":
            served.setdefault(service["role"], {})[name] = sum((service.get("requests") or {}).values())
    return served


class TestFrontend:
    def test_should_list_the_model(self, e2e_run):
        status, body = e2e_run.result.get("models") or (None, "no /v1/models answer recorded")
        assert status == 200, f"/v1/models answered {status}: {body}"
        listed = [entry.get("id") for entry in json.loads(body).get("data", [])]
        assert e2e_run.plan["model"] in listed, f"/v1/models lists {listed}"


class TestWorkers:
    def test_should_run_the_rendered_replicas_of_every_role(self, e2e_run):
        rendered = rendered_replicas(e2e_run.objects)
        started = {}
        for service in e2e_run.services.values():
            if service["role"] != "frontend":
                started[service["component"]] = started.get(service["component"], 0) + 1
        assert started == rendered
        unanswered = {name: s.get("metrics_status") for name, s in e2e_run.services.items()
                      if s.get("metrics_url") and s.get("metrics_status") != 200}
        assert not unanswered, f"mockers whose metrics did not answer after the benchmark: {unanswered}"

    def test_should_serve_requests_on_every_replica(self, e2e_run):
        served = _served(e2e_run)
        idle = [name for replicas in served.values() for name, count in replicas.items() if not count > 0]
        assert not idle, f"replicas that served no request: {idle} (requests per replica: {served})"


class TestOperatorEnvironment:
    def test_should_run_every_worker_in_the_dynamo_namespace_the_operator_gives_it(self, e2e_run):
        """DYN_NAMESPACE=<namespace>-<dgd> (not Dynamo's default, dynamo); the runtime labels its series with it,
        dashes as underscores (PRODUCTION-FACTS.md G)."""
        if any(s.get("component") == "trtllm-serve" for s in e2e_run.services.values()):
            pytest.skip(f"{e2e_run.case}: trtllm-serve runs without the Dynamo operator")
        for name, service in e2e_run.services.items():
            if service["role"] != "frontend":
                assert service.get("dynamo_namespaces") == ["llm_gpt_oss"], (name, service.get("dynamo_namespaces"))


class TestSmokeTest:
    def test_should_pass(self, e2e_run):
        job = e2e_run.job("smoke-test")
        assert job, "the smoke test did not run"
        assert job["aborted"] is None, job["aborted"]
        assert job["returncode"] == 0, f"smoke test exited {job['returncode']}:\n{job['output']}"
        assert re.search(rf"^PASS: {re.escape(e2e_run.plan['model'])} answered: ", job["output"], re.M), job["output"]


class TestBenchmark:
    REQUESTS = 20

    def test_should_complete_the_requested_requests_without_errors(self, e2e_run):
        assert e2e_run.plan["expected_requests"] == self.REQUESTS, "the benchmark Job did not get the scaled count"
        job = e2e_run.job("benchmark")
        assert job, "the benchmark did not run"
        assert job["aborted"] is None, job["aborted"]
        output = job["output"]
        assert job["returncode"] == 0, f"benchmark exited {job['returncode']}:\n{output}"
        assert f"requests completed: {self.REQUESTS} of {self.REQUESTS}" in output, output
        assert re.search(r"requests failed:\s+0$", output, re.M), output
        assert re.search(r"^PASS$", output, re.M), output

        run_dirs = [path for path in Path(e2e_run.plan["artifacts_root"]).iterdir() if path.is_dir()]
        assert len(run_dirs) == 1, f"expected one artifact folder under {e2e_run.plan['artifacts_root']}: {run_dirs}"
        # The whole run's summary; with warm-up AIPerf also writes one per phase under phases/.
        summary = json.loads((run_dirs[0] / "profile_export_aiperf.json").read_text())
        assert summary["request_count"]["avg"] == self.REQUESTS, summary["request_count"]
        # AIPerf leaves the key out when no request failed.
        assert summary.get("error_request_count", {}).get("avg", 0) == 0, summary.get("error_summary")


class TestDisaggregation:
    # Requests sent before the benchmark: one readiness probe per script, the smoke test's chat. Only
    # these can skip prefill: while a decode worker is registered and no prefill worker yet, Dynamo
    # serves a request on the decode worker alone.
    EARLY_REQUESTS = 3

    def test_should_send_requests_through_both_prefill_and_decode(self, e2e_run):
        served = _served(e2e_run)
        if "prefill" not in served:
            pytest.skip(f"{e2e_run.case} is aggregated")
        prefill, decode = sum(served["prefill"].values()), sum(served["decode"].values())
        args = find(e2e_run.objects, "Job", "gpt-oss-benchmark")["spec"]["template"]["spec"]["containers"][0]["args"]
        benchmark = int(flag_value(args, "--request-count")) + (
            int(flag_value(args, "--warmup-request-count")) if "--warmup-request-count" in args else 0)
        assert prefill >= benchmark, f"prefill served {prefill} requests, the benchmark sent {benchmark}: {served}"
        assert 0 <= decode - prefill <= self.EARLY_REQUESTS, f"prefill served {prefill}, decode {decode}: {served}"


class TestShutdown:
    def test_should_stop_every_process(self, e2e_run):
        services = e2e_run.services
        crashed = {n: s.get("returncode") for n, s in services.items() if s.get("exited_before_stop")}
        assert not crashed, f"services that exited before the end of the run: {crashed}"
        not_stopped = {n: s for n, s in services.items() if s.get("returncode") is None or s.get("killed")}
        assert not not_stopped, f"services that needed SIGKILL or never stopped: {not_stopped}"
        strays = {name: job.get("strays") for name, job in e2e_run.result.get("jobs", {}).items() if job.get("strays")}
        assert not strays, f"processes a job left running after it exited: {strays}"
        assert not e2e_run.result.get("leftovers"), f"processes left in the namespace: {e2e_run.result['leftovers']}"
        assert not e2e_run.host_leftovers, f"processes left on the host: {e2e_run.host_leftovers}"
        assert e2e_run.returncode == 0, f"stack.py exited {e2e_run.returncode}"
