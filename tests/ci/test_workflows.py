"""The GitHub workflows run what .ci/run runs, tier by tier, each job installing what its tier needs."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.helpers import REPO_ROOT, marks_may_select

WORKFLOWS = sorted((REPO_ROOT / ".github" / "workflows").glob("*.yaml"))
CI_RUN = (REPO_ROOT / ".ci" / "run").read_text()
TEST_TIERS = (REPO_ROOT / "ci" / "test-tiers.sh").read_text()


def jobs() -> list[tuple[str, list[str]]]:
    """(workflow/job, the shell of each `run` step in order) of every job."""
    found = []
    for path in WORKFLOWS:
        for name, job in yaml.safe_load(path.read_text())["jobs"].items():
            found.append((f"{path.stem}/{name}", [step["run"] for step in job["steps"] if "run" in step]))
    return found


JOBS = jobs()
JOB_IDS = [name for name, _ in JOBS]


def installed(runs: list[str]) -> set[str]:
    return {name for run in runs for name in re.findall(r"-r (requirements-[a-z0-9]+\.txt)", run)}


def tiers(runs: list[str]) -> set[str]:
    """The test tiers a job runs: pytest's -m expression, or ci/lint.sh's offline tests."""
    selected = set()
    for run in runs:
        selected |= {m.group(1) for m in re.finditer(r'pytest[^\n]* -m "?([a-z0-9 ]+?)"?(?: -v)?$', run, re.M)}
        if "ci/lint.sh" in run and "SKIP_TESTS=1" not in run:
            selected.add("not e2e and not cluster")
    return selected


class TestWorkflows:
    def test_should_cover_every_tier_that_ci_runs(self):
        # .ci/run runs ci/test-tiers.sh: every tier in parallel workers, the serial, node and Argo CD tests, at once,
        # each group on a control plane of its own (README, docs/testing.md).
        assert "bash ci/test-tiers.sh" in CI_RUN
        assert '"$PYTHON" -m pytest -n 3 --dist loadfile -m "not serial and not node and not argocd"' in TEST_TIERS
        assert '"$PYTHON" -m pytest -m serial' in TEST_TIERS
        assert '"$PYTHON" -m pytest -m node' in TEST_TIERS
        assert '"$PYTHON" -m pytest -m argocd' in TEST_TIERS
        assert set().union(*(tiers(runs) for _, runs in JOBS)) == {"not e2e and not cluster", "e2e", "cluster"}

    def test_should_run_the_node_group_ahead_of_the_others(self):
        # The node's group waits on pods and is the longest: the others, and their planes, run behind it (nice).
        assert re.search(r'^start_plane "\$node_plane" 0$', TEST_TIERS, re.M)
        assert re.search(r'^KUBECONFIG="\$node_plane/kubeconfig" "\$PYTHON" -m pytest', TEST_TIERS, re.M)
        behind = int(re.search(r"^behind=(\d+)$", TEST_TIERS, re.M).group(1))
        assert behind >= 10
        for plane in ("cluster", "serial", "gitops"):
            assert re.search(rf'^start_plane "\${plane}_plane" "\$behind" ', TEST_TIERS, re.M), plane
            assert re.search(rf'^KUBECONFIG="\${plane}_plane/kubeconfig" nice -n "\$behind" "\$PYTHON" -m pytest',
                             TEST_TIERS, re.M), plane

    def test_should_install_what_ci_installs_across_the_jobs(self):
        ci_files = set(re.findall(r"-r (requirements-[a-z0-9]+\.txt)", CI_RUN))
        assert ci_files == {"requirements-test.txt", "requirements-cluster.txt", "requirements-e2e.txt",
                            "requirements-checkov.txt"}
        assert set().union(*(installed(runs) for _, runs in JOBS)) >= ci_files - {"requirements-checkov.txt"}

    @pytest.mark.parametrize("name,runs", JOBS, ids=JOB_IDS)
    def test_should_install_each_tiers_requirements(self, name, runs):
        wanted = {"requirements-test.txt"}
        wanted |= {"requirements-e2e.txt"} if "e2e" in tiers(runs) else set()
        wanted |= {"requirements-cluster.txt"} if "cluster" in tiers(runs) else set()
        assert wanted <= installed(runs)
        assert all((REPO_ROOT / name).is_file() for name in installed(runs))

    @pytest.mark.parametrize("name,runs", JOBS, ids=JOB_IDS)
    def test_should_fetch_the_pinned_crds_before_the_tests(self, name, runs):
        tests_at = [i for i, run in enumerate(runs) if tiers([run])]
        fetch_at = [i for i, run in enumerate(runs) if "python -m ci.cluster crds" in run]
        if tests_at:
            assert fetch_at and fetch_at[0] < tests_at[0], f"{name} runs tests without python -m ci.cluster crds first"

    def test_should_see_a_tier_in_a_pytest_command(self):
        # The parser above can fail: it reads the -m expression of each form the workflows use.
        assert tiers(['python -m pytest -m "not e2e and not cluster"']) == {"not e2e and not cluster"}
        assert tiers(["python -m pytest -m cluster -v", "SKIP_TESTS=1 PYTHON=python bash ci/lint.sh"]) == {"cluster"}
        assert tiers(["bash ci/lint.sh"]) == {"not e2e and not cluster"}


def test_should_keep_the_process_title_in_a_pytest_xdist_worker(worker_id):
    """Helm's Go SDK reads its server-side-apply field manager from the process title (tests/conftest.py)."""
    if worker_id == "master":
        pytest.skip("not in a pytest-xdist worker")
    title = (Path("/proc/self/cmdline")).read_bytes()
    assert b"pytest-xdist" not in title, title


def test_should_start_the_workers_helm_at_gogc_800_and_their_children_at_gos_default(worker_id):
    """Helm's Go runtime reads GOGC from the environment its process started with (tests/conftest.py): a worker's
    starts with GOGC=800, and what its tests start does not inherit it."""
    if worker_id == "master":
        pytest.skip("not in a pytest-xdist worker")
    started_with = Path("/proc/self/environ").read_bytes().split(b"\0")
    if b"GPT_OSS_HELM_GOGC=800" not in started_with and any(entry.startswith(b"GOGC=") for entry in started_with):
        pytest.skip("GOGC was set for the whole run: the workers keep it")
    assert b"GOGC=800" in started_with, "the worker's Helm started at Go's default GOGC"
    child = subprocess.run(["env"], capture_output=True, text=True, check=True).stdout.splitlines()
    assert [line for line in child if line.startswith(("GOGC=", "GPT_OSS_HELM_GOGC="))] == []


@pytest.mark.parametrize("markexpr, selectable", [
    ("not e2e and not cluster", False), ("not cluster", False), ("e2e and not cluster", False),
    ("", True), ("cluster", True), ("serial", True), ("node or argocd", True),
    ("not serial and not node and not argocd", True), ("not (e2e or serial)", True)])
def test_should_tell_whether_m_can_select_a_cluster_test(markexpr, selectable):
    assert marks_may_select(markexpr, "cluster") is selectable


def test_should_not_collect_the_cluster_tier_when_m_selects_none_of_it(request):
    if marks_may_select(request.config.option.markexpr, "cluster"):
        pytest.skip("this run's -m can select cluster tests")
    # collecting a folder registers its conftest as a plugin (a test importing one of its modules does not)
    cluster = str(REPO_ROOT / "tests" / "cluster")
    assert [plugin.__name__ for plugin in request.config.pluginmanager.get_plugins()
            if str(getattr(plugin, "__file__", "")).startswith(cluster)] == []


def test_should_collect_every_offline_test_module(request):
    """A pytest plugin of an installed package (ai-dynamo's dynamo.trtllm ignores test_trtllm_*.py) must not drop
    a module silently: a whole-suite run collects every offline test module (every tests/**/test_*.py outside the
    cluster and e2e tiers' folders)."""
    config = request.config
    whole_suite = [str(arg).rstrip("/") for arg in config.args] in (["tests"], [str(REPO_ROOT / "tests")])
    if not whole_suite or config.option.keyword or config.option.deselect:
        pytest.skip("runs only when the whole suite is collected (python -m pytest, or pytest tests)")
    collected = {item.path for item in request.session.items}
    tiers = {REPO_ROOT / "tests" / "cluster", REPO_ROOT / "tests" / "e2e"}
    offline = [p for p in (REPO_ROOT / "tests").rglob("test_*.py") if not tiers & set(p.parents)]
    assert len(offline) >= 40
    assert sorted(p.relative_to(REPO_ROOT).as_posix() for p in offline if p not in collected) == []
