"""Dynamo 1.7's backend admission gate as the chart sets it (dynamo.admissionGate), on the real 1.7 frontend and a
dynamo.mocker worker of the installable 1.7 nightly, launched from the chart's rendered command lines and environment
(tests/e2e/plan.py) in a private network namespace.

The chart renders the limits per attention-DP rank as the worker's DYN_BACKEND_ADMISSION_* variables
(RELEASE-1.7-FACTS.md section 2c): with one request admitted and no queue, two more sent at once are rejected with
HTTP 529 (the overload the frontend returns, not queued); with a queue of two they wait and are served. The mocker
runs at real speed here (--speedup-ratio 1), so the three requests overlap.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.e2e import conftest as e2e
from tests.e2e import plan as e2e_plan
from tests.helpers import deep_merge, dynamo_line_values, load_values, render_chart

# heavy: its seconds in CI's cluster plane (python -m ci.cluster timings), so that pytest-xdist starts it before the
# quick files and it does not run last while the other workers idle (tests/conftest.py)
pytestmark = pytest.mark.heavy(20)

PROBE = Path(__file__).with_name("gate_probe.py")
LINE = "1.7"  # the line whose workers have the gate
REQUESTS, MAX_TOKENS = 3, 600


def run_probe(gate: dict, python: str, tokenizer: Path, run_dir: Path) -> tuple[dict, e2e.StackRun]:
    values = deep_merge(e2e_plan.scaled_overlay_values(load_values(["agg.yaml"]), run_dir),
                        deep_merge(dynamo_line_values(LINE), {"dynamo": {"admissionGate": gate}}))
    objects = render_chart(["agg.yaml"], values)
    tmp_dir = Path(tempfile.mkdtemp(prefix="gpt-oss-gate-"))
    try:
        plan = e2e_plan.build_plan(objects, run_dir, python, tmp_dir)
        [worker] = [s for s in plan["services"] if s["role"] == "worker"]
        worker["argv"][worker["argv"].index("--speedup-ratio") + 1] = "1"
        model = worker["argv"][worker["argv"].index("--model-name") + 1]
        plan["jobs"] = [{"name": "gate-probe", "timeout": 300, "env": dict(worker["env"]),
                         "argv": [python, str(PROBE), plan["frontend_url"].rstrip("/"), model, str(REQUESTS),
                                  str(MAX_TOKENS)]}]
        run = e2e._run_plan(f"admission gate {gate}", objects, plan, python, tokenizer, run_dir)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    return run.probe_result("gate-probe"), run


@pytest.fixture(scope="module")
def line_python(e2e_python) -> str:
    return e2e.line_python(LINE, e2e_python)


@pytest.mark.e2e
class TestAdmissionGate:
    def test_should_reject_what_the_gate_cannot_admit_with_529(self, line_python, tokenizer_dir, tmp_path):
        result, run = run_probe({"engineRequestLimit": 1, "requestQueueLimit": 0}, line_python, tokenizer_dir, tmp_path)
        assert sorted(result["statuses"]) == [200, 529, 529], f"{result}\n{run.logs()}"
        assert result["errors"].count("Overloaded") == 2, f"{result}\n{run.logs()}"

    def test_should_queue_what_the_gate_queue_holds(self, line_python, tokenizer_dir, tmp_path):
        result, run = run_probe({"engineRequestLimit": 1, "requestQueueLimit": 2}, line_python, tokenizer_dir, tmp_path)
        assert result["statuses"] == [200, 200, 200], f"{result}\n{run.logs()}"
