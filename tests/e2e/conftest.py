"""Fixtures of the e2e tier (`pytest -m e2e`): the chart's own commands, run for real on 127.0.0.1.

Each case renders one target with values that shrink it to a CPU run (tests/e2e/plan.py), then runs
the frontend, one dynamo.mocker per rendered worker replica, the smoke-test script and the benchmark
script inside a private network namespace (`unshare --net`, only `lo` in it) through tests/e2e/stack.py.
The stack runs once per case; the tests assert on what it recorded. A failed test shows every
process log. Needs ai-dynamo and aiperf (`pip install -r requirements-e2e.txt`) and the right to create
a network namespace (`unshare --net`: root or CAP_SYS_ADMIN); otherwise the tier skips and says why.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.e2e import plan as e2e_plan
from tests.e2e import prometheus as prom
from tests.e2e.stack import kill_leftovers
from tests.helpers import (DYNAMO_LINE_RELEASES, OVERLAYS, REPO_ROOT, RUNTIMES, deep_merge, dynamo_line_values,
                           load_values, render_chart, skip_for_missing_part)

STACK = Path(__file__).with_name("stack.py")
RUN_TIMEOUT = 600  # seconds for one whole case; a healthy one takes well under a minute
LOG_TAIL_LINES = 150
REQUIRED_MODULES = {
    "dynamo.frontend": "ai-dynamo",
    "dynamo.mocker": "ai-dynamo",
    "aiperf": "aiperf",
    "tokenizers": "tokenizers (a dependency of ai-dynamo)",
}
# The Dynamo release lines the tier runs (test ids dynamo-<line>): the 1.2 line on the main venv's ai-dynamo 1.2.1
# (requirements-e2e.txt), each other line on its ai-dynamo in a venv of its own, .venv-dynamo-<line> (bash
# ci/dynamo-venv.sh .venv-dynamo-<line>; or the interpreter named by GPT_OSS_DYNAMO_<16|17>_PYTHON): 1.6.1, and the
# 1.7.0.dev nightly for the 1.7 line. aiperf always runs from the main venv.
DYNAMO_LINES = tuple(DYNAMO_LINE_RELEASES)
line_values = dynamo_line_values  # the values that select a line (tests/helpers/__init__.py)


def line_python_env(line: str) -> str:
    """The variable that may name another interpreter for a line's Dynamo: GPT_OSS_DYNAMO_16_PYTHON for "1.6"."""
    return f"GPT_OSS_DYNAMO_{line.replace('.', '')}_PYTHON"


def line_venv(line: str) -> Path:
    return REPO_ROOT / f".venv-dynamo-{line}"


# (id, overlay, extra values, line): every Dynamo target as rendered on each line; the trtllm-serve targets (no Dynamo
# process of the chart's: their stand-in's Dynamo is the test's) and one with a replica count changed by values (the
# plan's replica handling, the same on every line) on the 1.2 line.
CASES = [(f"dynamo-{line}-{overlay}", overlay, {}, line) for line in DYNAMO_LINES for overlay in OVERLAYS
         if line == "1.2" or RUNTIMES[overlay] == "dynamo"] + [
    ("dynamo-1.2-disagg-k8s.yaml+2-prefill-replicas", "disagg-k8s.yaml", {"workers": {"prefill": {"replicas": 2}}},
     "1.2")]


@dataclass
class StackRun:
    """One case's run: the plan it followed and the result stack.py recorded."""
    case: str
    objects: list[dict]  # the rendered chart
    plan: dict
    result: dict
    returncode: int | None
    runner_log: Path
    seconds: float
    host_leftovers: dict = field(default_factory=dict)

    @property
    def services(self) -> dict[str, dict]:
        return self.result.get("services", {})

    def job(self, name: str) -> dict:
        return self.result.get("jobs", {}).get(name) or {}

    def probe_result(self, name: str) -> dict:
        """The JSON object a probe job printed as its last line; fails with every log when it printed none."""
        output = self.job(name).get("output", "").strip()
        last = output.splitlines()[-1] if output else ""
        assert last.startswith("{"), f"{name} printed no result\n{self.logs()}"
        return json.loads(last)

    def logs(self) -> str:
        """The tail of every process log of this run, the runner's own output first."""
        log_dir = Path(self.plan["run_dir"]) / "logs"
        paths = [self.runner_log, *sorted(log_dir.glob("*.log"))]
        parts = []
        for path in paths:
            lines = path.read_text(errors="replace").splitlines() if path.exists() else ["(no log)"]
            cut = f" (last {LOG_TAIL_LINES} of {len(lines)} lines)" if len(lines) > LOG_TAIL_LINES else ""
            parts.append(f"===== {path}{cut}\n" + "\n".join(lines[-LOG_TAIL_LINES:]))
        return "\n".join(parts)

    def evidence(self) -> str:
        """The result summary (without the long job outputs), for assertion messages."""
        brief = {k: v for k, v in self.result.items() if k != "jobs"}
        brief["jobs"] = {name: {k: v for k, v in job.items() if k != "output"}
                         for name, job in self.result.get("jobs", {}).items()}
        return json.dumps({"case": self.case, "runner_returncode": self.returncode, "seconds": self.seconds,
                           "host_leftovers": self.host_leftovers, **brief}, indent=1)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Attach every process log of the case to a failed e2e test's report."""
    report = yield
    run = getattr(item, "funcargs", {}).get("e2e_run")
    if report.failed and isinstance(run, StackRun):
        report.sections.append((f"e2e run {run.case}: result", run.evidence()))
        report.sections.append((f"e2e run {run.case}: process logs", run.logs()))
    return report


@pytest.fixture(scope="session")
def e2e_python() -> str:
    """The interpreter that runs Dynamo and whose bin folder (with `aiperf`) goes first on PATH."""
    for module, package in REQUIRED_MODULES.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            pytest.skip(f"e2e tier: {module} is not importable; install {package} "
                        "(pip install -r requirements-e2e.txt)")
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "aiperf").exists():
        pytest.skip(f"e2e tier: no aiperf executable next to {sys.executable}")
    for tool in ("unshare", "ip"):
        if not shutil.which(tool):
            pytest.skip(f"e2e tier: `{tool}` not found (util-linux, iproute2)")
    probe = subprocess.run(["unshare", "--net", "--", "ip", "link", "set", "lo", "up"],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip("e2e tier: cannot create a private network namespace "
                    f"(`unshare --net` exit {probe.returncode}: {probe.stderr.strip()}); it needs root or CAP_SYS_ADMIN")
    return sys.executable


def line_python(line: str, main_python: str) -> str:
    """The interpreter that runs a line's Dynamo processes; another line's than 1.2 must hold its ai-dynamo (a missing
    one skips, and fails under CI=true: .ci/run installs it)."""
    if line == "1.2":
        return main_python
    python = os.environ.get(line_python_env(line)) or str(line_venv(line) / "bin" / "python")
    problem = _line_python_problem(line, python)
    if problem:
        skip_for_missing_part(problem)
    return python


@functools.lru_cache(maxsize=None)
def _line_python_problem(line: str, python: str) -> str | None:
    """Why python cannot run the line's Dynamo, or None; checked once per session (the import takes seconds)."""
    if not Path(python).exists():
        return (f"e2e tier, dynamo-{line}: no {python}; install it with `bash ci/dynamo-venv.sh {line_venv(line).name}` "
                f"(or name an interpreter with ai-dynamo {DYNAMO_LINE_RELEASES[line]} in {line_python_env(line)})")
    probe = subprocess.run([python, "-c", "import dynamo.frontend, dynamo.mocker; from importlib.metadata import "
                            "version; print(version('ai-dynamo'))"], capture_output=True, text=True, timeout=120)
    found = probe.stdout.strip()
    if probe.returncode != 0 or found != DYNAMO_LINE_RELEASES[line]:
        return (f"e2e tier, dynamo-{line}: {python} has ai-dynamo {found or '(none)'}, needs "
                f"{DYNAMO_LINE_RELEASES[line]} with its frontend and mocker (bash ci/dynamo-venv.sh {line_venv(line).name}): "
                f"{probe.stderr.strip()[-500:]}")
    return None


@pytest.fixture(scope="session", params=DYNAMO_LINES, ids=[f"dynamo-{line}" for line in DYNAMO_LINES])
def dynamo_line(request) -> str:
    """Each Dynamo release line the live checks run on ("1.2", "1.6", "1.7"); render with line_values(dynamo_line)."""
    return request.param


@pytest.fixture(scope="session")
def dynamo_python(dynamo_line, e2e_python) -> str:
    """The interpreter of the line's Dynamo (frontend, mocker, router, planner); aiperf stays e2e_python's."""
    return line_python(dynamo_line, e2e_python)


@pytest.fixture(scope="module", params=prom.RELEASES, ids=[f"prometheus-{r}" for r in prom.RELEASES])
def prometheus_release(request) -> str:
    """Each Prometheus the monitoring checks run on (Prometheus 3, built from its module: tests/e2e/prometheus.py)."""
    if not prom.prometheus_binary(request.param):
        skip_for_missing_part(f"e2e tier: {prom.missing_binary(request.param)}")
    return request.param


@dataclass
class MonitoringCluster:
    """The control plane the monitoring checks put their objects in, and how a process outside it reaches it."""
    api_client: object
    kubeconfig: Path
    access: object  # tests.controllers.Access


@pytest.fixture(scope="session")
def monitoring_cluster(pytestconfig) -> MonitoringCluster:
    """The control plane KUBECONFIG names (ci/test-tiers.sh starts one for every group), with prometheus-operator's
    CRDs installed from its pinned module, and the operator built: the monitoring checks run Prometheus on the
    configuration the real operator writes, which needs both."""
    from tests.helpers import controllers
    from tests.cluster import kube
    try:
        import kubernetes  # noqa: F401
    except ImportError:
        skip_for_missing_part("e2e monitoring: prometheus-operator needs a control plane and the kubernetes client "
                              "(pip install -r requirements-cluster.txt)")
    path = kube.kubeconfig_path(pytestconfig)
    answer = kube.probe(path)
    if isinstance(answer, str):
        skip_for_missing_part(f"e2e monitoring: prometheus-operator needs a control plane (python -m "
                              f"ci.cluster.control_plane start; KUBECONFIG=...); none answers at {path}: {answer}")
    if controllers.binary(controllers.PROMETHEUS_OPERATOR, "prometheus-operator") is None:
        skip_for_missing_part(f"e2e monitoring: {controllers.missing(controllers.PROMETHEUS_OPERATOR)}")
    try:
        access = controllers.Access.of(path)
        crds = controllers.crds(controllers.PROMETHEUS_OPERATOR)
    except (ValueError, LookupError) as error:
        skip_for_missing_part(f"e2e monitoring: {error}")
    controllers.install_crds(answer, path, crds, "prometheus-operator-crds")
    return MonitoringCluster(answer, path, access)


@pytest.fixture(scope="session")
def tokenizer_dir(e2e_python, tmp_path_factory) -> Path:
    from tests.e2e.tokenizer import build_tokenizer

    return build_tokenizer(tmp_path_factory.mktemp("tokenizer"))


def _run_stack(case: str, overlay: str, extra: dict, python: str, tokenizer: Path, run_dir: Path,
               line: str = "1.2", tools_python: str | None = None) -> StackRun:
    values = deep_merge(deep_merge(e2e_plan.scaled_overlay_values(load_values([overlay]), run_dir), line_values(line)),
                        extra)
    objects = render_chart([overlay], values)
    # Under /tmp, not the (long) pytest folder: AIPerf's ipc:// socket paths must stay under 108 characters.
    tmp_dir = Path(tempfile.mkdtemp(prefix="gpt-oss-e2e-"))
    try:
        plan = e2e_plan.build_plan(objects, run_dir, python, tmp_dir, tools_python=tools_python)
        return _run_plan(case, objects, plan, python, tokenizer, run_dir)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)


def _run_plan(case: str, objects: list[dict], plan: dict, python: str, tokenizer: Path, run_dir: Path) -> StackRun:
    e2e_plan.prepare_model_files(plan, tokenizer)
    plan_path = e2e_plan.write_plan(plan, run_dir / "plan.json")
    result_path = run_dir / "result.json"
    runner_log = run_dir / "stack-runner.log"
    started = time.monotonic()
    with open(runner_log, "wb") as log:
        runner = subprocess.Popen(["unshare", "--net", "--", python, str(STACK), str(plan_path), str(result_path)],
                                  stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        try:
            returncode = runner.wait(RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            runner.send_signal(signal.SIGTERM)  # the runner stops its services on SIGTERM
            try:
                returncode = runner.wait(60)
            except subprocess.TimeoutExpired:
                runner.kill()
                returncode = runner.wait()
    # Anything still carrying the run's marker escaped the runner: record it, then kill it.
    leftovers = kill_leftovers(plan["run_env"], plan["run_dir"])
    result = json.loads(result_path.read_text()) if result_path.exists() and result_path.stat().st_size else {}
    return StackRun(case=case, objects=objects, plan=plan, result=result, returncode=returncode,
                    runner_log=runner_log, seconds=round(time.monotonic() - started, 1),
                    host_leftovers={str(pid): cmd for pid, cmd in leftovers.items()})


@pytest.fixture(scope="module", params=CASES, ids=[case[0] for case in CASES])
def e2e_run(request, e2e_python, tokenizer_dir, tmp_path_factory) -> StackRun:
    case, overlay, extra, line = request.param
    python = line_python(line, e2e_python)
    run_dir = tmp_path_factory.mktemp(f"e2e-{case}".replace("+", "-"), numbered=True)
    run = _run_stack(case, overlay, extra, python, tokenizer_dir, run_dir, line, tools_python=e2e_python)
    if not run.result:
        pytest.fail(f"stack.py wrote no result (exit {run.returncode})\n{run.logs()}", pytrace=False)
    return run
