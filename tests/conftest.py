from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from tests import passed_elsewhere
from tests.helpers import REPO_ROOT, marks_may_select, marks_may_select_without


def pytest_addoption(parser):
    parser.addoption(
        "--shared-dir",
        default=os.environ.get("GPT_OSS_SHARED_DIR", str(REPO_ROOT.parent / "shared")),
        help="folder with dynamo/crds, keda/crds, gateway-api/crds, gateway-api-inference-extension/crds and "
             "trtllm/llmargs-fields.json (env GPT_OSS_SHARED_DIR; default ../shared); write --shared-dir=PATH: pytest "
             "takes a separate PATH for a test path when it looks for its configuration, and never reads this option",
    )
    parser.addoption("--crd-source", default=None,
                     help="cluster tier: folder with the Dynamo CRDs, or 'none' to rewrite the cluster's own "
                          "(env GPT_OSS_CRD_SOURCE; default <shared-dir>/dynamo/crds)")
    parser.addoption("--dynamo-operator", action="store_true", default=None,
                     help="cluster tier: the Dynamo operator runs in the cluster (env GPT_OSS_DYNAMO_OPERATOR)")


TESTS = Path(__file__).parent
CLUSTER_TESTS = TESTS / "cluster"
# The marks of the groups that run alone, each on its control plane (ci/test-tiers.sh), and the only folders whose
# modules carry them (tests/ci/test_workflows.py checks).
ALONE_MARKS = ("serial", "node", "argocd")
ALONE_FOLDERS = (CLUSTER_TESTS, TESTS / "e2e")


def pytest_ignore_collect(collection_path, config):
    # Everything under tests/cluster is of the cluster tier (its conftest marks it so): when -m selects none of it
    # (the offline tier), each worker would import the folder's modules only to deselect them (~0.8 s).
    markexpr = config.option.markexpr
    if collection_path == CLUSTER_TESTS and not marks_may_select(markexpr, "cluster"):
        return True
    # A group that runs alone (-m serial, node or argocd) collects its two folders only, not the 3000 tests it would
    # deselect: on CI's loaded cores each group's collection of them took seconds of CPU at the tiers' start.
    if (collection_path.parent == TESTS and collection_path.is_dir() and collection_path not in ALONE_FOLDERS
            and not marks_may_select_without(markexpr, ALONE_MARKS)):
        return True
    return None


def pytest_collection_modifyitems(config, items):
    # In a pytest-xdist worker, the longest files first: the controller hands them out in this order (--dist=loadfile
    # --no-loadscope-reorder, pyproject.toml), so no file of minutes starts last on one worker while the others idle.
    # A heavy module gives its seconds in CI's cluster plane (@pytest.mark.heavy(seconds)); the others follow by their
    # number of tests, the order pytest-xdist would give them itself. A run without workers keeps its order.
    if not hasattr(config, "workerinput"):
        return
    tests_per_file = Counter(item.nodeid.split("::")[0] for item in items)

    def longest_first(item) -> tuple[int, int]:
        heavy = item.get_closest_marker("heavy")
        return -(heavy.args[0] if heavy else 0), -tests_per_file[item.nodeid.split("::")[0]]
    items.sort(key=longest_first)


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    # --dist=loadfile hands a worker its next file while two of its tests are still pending: behind a file of one or two
    # long tests (the generated values: minutes) the next file then waits while other workers idle. Here it goes when
    # one test is left, the least a worker needs (it runs a test once it knows the next).
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class NextFileAtTheLastTest(LoadFileScheduling):
        def _reschedule(self, node):
            if not node.shutting_down and self.workqueue and self._pending_of(self.assigned_work[node]) > 1:
                return
            super()._reschedule(node)
    return NextFileAtTheLastTest(config, log)


def pytest_runtest_setup(item):
    # A serial test restarts the API server or etcd under every other worker's test, and a node test needs the one
    # node of its host to itself: neither runs in a pytest-xdist worker.
    if not hasattr(item.config, "workerinput"):
        return
    for marker in ("serial", "node", "argocd"):
        if item.get_closest_marker(marker):
            pytest.fail(f"a {marker} test cannot run in a pytest-xdist worker: run `-n N -m 'not serial and not node "
                        f"and not argocd'`, "
                        f"then `-m {marker}` without -n (bash ci/test-tiers.sh runs them all)", pytrace=False)


# Helm's Go runtime (helm-python-sdk's library) reads GOGC once, from the environment its process was started with,
# and a render's garbage all dies when it ends: at 800 instead of Go's 100 a render takes a third less CPU (55 -> 35
# ms here, 150 MB instead of 90 at most), the offline tier about 6 s less. Only pytest-xdist's workers get it, at
# their start. In a run that can select cluster or e2e tests each drops it from its environment, so the servers and
# controllers its tests start keep Go's default; in the offline tier's, what its tests start (the helm CLI, the tools
# in a process of their own, promtool) renders or reads once and exits, and keeps it (a `helm template`: 190 -> 125 ms).
HELM_GOGC = "800"
HELM_GOGC_MARK = "GPT_OSS_HELM_GOGC"


@pytest.hookimpl(hookwrapper=True)
def pytest_sessionstart(session):
    # A pytest-xdist worker keeps its process title. xdist renames it after each test (setproctitle, which aiperf
    # needs installed); Helm's Go SDK reads its server-side-apply field manager from that same memory, NUL-padded when
    # the new name is shorter than the interpreter's path, and the API server refuses such a field manager.
    for plugin in session.config.pluginmanager.get_plugins():
        if type(plugin).__name__ == "WorkerInteractor":  # the worker's copy of xdist.remote, run by execnet
            type(plugin).run_one_test.__globals__["setproctitle"] = lambda title: None
    # xdist starts its workers in its own pytest_sessionstart: they inherit the environment of that moment.
    ours = "GOGC" not in os.environ and not hasattr(session.config, "workerinput")
    if ours:
        os.environ.update({"GOGC": HELM_GOGC, HELM_GOGC_MARK: HELM_GOGC})
    try:
        yield
    finally:
        if ours:
            del os.environ["GOGC"], os.environ[HELM_GOGC_MARK]


def children_keep_gogc(markexpr: str) -> bool:
    """Whether a worker's children keep its GOGC: in a run that selects no cluster and no e2e test."""
    return not marks_may_select(markexpr, "cluster") and not marks_may_select(markexpr, "e2e")


def pytest_configure(config):
    # tests/helpers/schemas.py finds the upstream CRDs through the environment; --shared-dir says the same thing.
    os.environ["GPT_OSS_SHARED_DIR"] = config.getoption("--shared-dir")
    # CI's second run of the offline tests leaves out those its first passed (tests/passed_elsewhere.py).
    config.pluginmanager.register(passed_elsewhere, "gpt-oss-passed-elsewhere")
    if os.environ.get(HELM_GOGC_MARK) is not None and os.environ.get("GOGC") == os.environ[HELM_GOGC_MARK]:
        # a worker, its Helm library loaded with tests.helpers above
        del os.environ[HELM_GOGC_MARK]
        if not children_keep_gogc(config.option.markexpr):
            del os.environ["GOGC"]


@pytest.fixture(scope="session")
def shared_dir(request) -> Path:
    path = Path(request.config.getoption("--shared-dir"))
    if not (path / "dynamo" / "crds").is_dir():
        pytest.skip(f"upstream reference files not found at {path} (set --shared-dir=PATH or GPT_OSS_SHARED_DIR); "
                    "a plain clone has none, CI has them")
    return path


# The OCI registry and the packaged chart of the release tests (tests/helpers/registry.py), for both tiers.
from tests.helpers.registry import chart_archive, oci_registry, release_tool  # noqa: E402,F401
