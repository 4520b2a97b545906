"""Fixtures of the live-cluster tier (`pytest -m cluster`).

The cluster is whatever --kubeconfig (an option of pytest-helm-charts) or KUBECONFIG points at.
When none answers, every test skips with the one reason `cluster_access` gives. Settings that
tests/conftest.py may register as options fall back to environment variables:
  --crd-source / GPT_OSS_CRD_SOURCE          folder with the Dynamo CRDs; "none" rewrites the CRD the
                                             cluster has; default: the upstream file where tests/helpers/schemas.py
                                             finds CRDs (<shared>/dynamo/crds, GPT_OSS_CRDS_DIR, .cache/crds);
                                             when none has it, every test that needs the DGD CRD skips, saying so
  --shared-dir / GPT_OSS_SHARED_DIR          the shared reference folder (default <repo>/../shared)
  --dynamo-operator / GPT_OSS_DYNAMO_OPERATOR the Dynamo operator runs in the cluster (enables the
                                             worker-placement checks, leaves the CRDs alone)
"""
from __future__ import annotations

import random
import string
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.cluster import kube
from tests.cluster.control import ControlPlane
from tests.helpers import (CHART_DIR, OVERLAYS, RELEASE_NAME, RUNTIMES, deep_merge, load_chart, load_values,
                           skip_for_missing_part)
from tests.helpers.schemas import crd_file
from tools.gptoss.yaml_text import load_yaml

CACHE_SIZE = load_yaml((CHART_DIR / "values.yaml").read_text())["modelCache"]["size"]


@pytest.hookimpl(tryfirst=True)  # before -m deselects anything
def pytest_collection_modifyitems(config, items):
    # Everything under tests/cluster belongs to the tier, whatever each module says.
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.cluster)


NO_CLUSTER = "no Kubernetes cluster answers"


@dataclass
class ClusterAccess:
    kubeconfig: Path
    api_client: object


@pytest.fixture(scope="session")
def cluster_access(pytestconfig) -> ClusterAccess:  # PROBE_LINE
    """The cluster, or one skip reason for the whole tier."""
    try:
        import kubernetes  # noqa: F401
    except ImportError:
        skip_for_missing_part("the cluster tier needs `pip install -r requirements-cluster.txt`")
    path = kube.kubeconfig_path(pytestconfig)
    answer = kube.probe(path)
    if isinstance(answer, str):
        skip_for_missing_part(f"{NO_CLUSTER} at {path}: {answer}")
    return ClusterAccess(path, answer)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    # pytest reports a fixture's skip at each test; report the no-cluster skip once, at the probe.
    report = yield
    if report.skipped and isinstance(report.longrepr, tuple) and NO_CLUSTER in report.longrepr[2]:
        report.longrepr = (__file__, PROBE_LINE, report.longrepr[2])
    return report


@pytest.fixture(scope="session")
def k8s(cluster_access) -> kube.Kube:
    return kube.Kube(cluster_access.api_client)


@pytest.fixture(scope="session")
def operator_present(pytestconfig) -> bool:
    value = kube.option(pytestconfig, "dynamo_operator", "GPT_OSS_DYNAMO_OPERATOR")
    return value.strip().lower() in {"1", "true", "yes", "on"}


@pytest.fixture(scope="module")
def dynamo_operator(cluster_access, k8s):
    """The real Dynamo operator (1.5.0-dev, built from the shared archives), installed by `helm install` of its
    platform chart component, running as a pod on the kubelet node (tests/cluster/operator.py). Per module, and
    uninstalled at its end: the node group's other modules (test_gateway.py, test_node_policies.py) store DGDs that no
    operator may reconcile, since they run the frontend stand-in under the operator's names. Skips, saying why, where
    there is no node or no built operator."""
    from tests.cluster import operator
    reason = operator.why_not(cluster_access.kubeconfig)
    if reason:
        skip_for_missing_part(reason)
    try:
        installed = operator.install(k8s, cluster_access.kubeconfig)
    except Exception as error:
        pytest.fail(f"the Dynamo operator did not come up: {error}\n{operator.describe(k8s)}", pytrace=False)
    yield installed
    operator.uninstall(cluster_access.kubeconfig)


@pytest.fixture(scope="session")
def crd_source(pytestconfig) -> Path | None:
    value = kube.option(pytestconfig, "crd_source", "GPT_OSS_CRD_SOURCE")
    if value.lower() == "none":
        return None
    if value:
        path = Path(value)
        if not path.is_dir():
            pytest.fail(f"--crd-source / GPT_OSS_CRD_SOURCE={value} is not a folder")
        return path
    # The upstream CRD, found where every tier finds CRDs (../shared, GPT_OSS_CRDS_DIR, .cache/crds): no copy here.
    return crd_file(kube.DGD_CRD_FILE).parent


@pytest.fixture(scope="session", params=kube.API_VERSIONS, ids=[v.split("/")[1] for v in kube.API_VERSIONS])
def dgd_api(request, cluster_access, crd_source, operator_present) -> str:
    """The DGD apiVersion under test, with the CRD storing it (session-scoped: pytest runs every test of one
    version before switching, so the CRD's storage version changes at most once per version)."""
    crd = kube.DgdCrd(cluster_access.api_client, crd_source, operator_present)
    with kube.cluster_lock(cluster_access.kubeconfig, "dgd-crd"):  # pytest-xdist workers prepare it one at a time
        reason = crd.prepare(request.param)
    if reason:
        skip_for_missing_part(reason)
    return request.param


@pytest.fixture(scope="session")
def nodes(k8s) -> list[dict]:
    return k8s.nodes()


@pytest.fixture(params=OVERLAYS, ids=[o.removesuffix(".yaml") for o in OVERLAYS])
def target(request) -> str:
    return request.param


class Release:
    """One release of the chart in its own namespace, driven through helm-python-sdk."""

    NAME = RELEASE_NAME

    def __init__(self, kubeconfig: Path | None, namespace: str, api_version: str, **client: object):
        """client: further helm_python.Config settings (kubeconfig_content instead of a kubeconfig file)."""
        import helm_python
        if kubeconfig is not None:
            client["kubeconfig_path"] = str(kubeconfig)
        self.helm = helm_python.Config(namespace=namespace, **client)
        self.namespace = namespace
        self.name = RELEASE_NAME
        self.api_version = api_version

    def values(self, overlay: str, extra: dict | None = None) -> dict:
        if RUNTIMES[overlay] == "trtllm-serve":
            base = kube.KIND_VALUES_TRTLLM_SERVE
        else:
            # The operator lookup sees only this test's namespace: a stand-in operator Deployment of a test running
            # beside it (pytest-xdist) must not decide another test's window.
            base = deep_merge(kube.KIND_VALUES, {"dynamo": {"apiVersion": self.api_version,
                                                            "operator": {"namespace": self.namespace}}})
        return load_values([overlay], deep_merge(base, extra or {}))

    # wait="hookOnly": waiting on workloads would need kubelets and GPUs; the chart has no install hooks.
    def install(self, overlay: str, extra: dict | None = None) -> dict:
        return self.helm.install(load_chart(), self.name, self.values(overlay, extra), namespace=self.namespace,
                                 timeout=180, wait="hookOnly")

    def upgrade(self, overlay: str, extra: dict | None = None) -> dict:
        return self.helm.upgrade(load_chart(), self.name, self.values(overlay, extra), namespace=self.namespace,
                                 timeout=180, wait="hookOnly")

    def uninstall(self) -> dict:
        return self.helm.uninstall(self.name, timeout=180)

    def history(self) -> list[tuple[int, str]]:
        """(revision, status) of every stored revision, oldest first."""
        return sorted((entry["revision"], entry["status"]) for entry in self.helm.history(self.name))

    def manifest(self) -> list[dict]:
        """The objects of the deployed revision (hooks are not in it)."""
        return [doc for doc in yaml.safe_load_all(self.helm.status(self.name)["manifest"]) if doc]

    def close(self) -> None:
        self.helm.close()


@pytest.fixture(scope="session")
def scheduler(cluster_access) -> None:
    """For checks of where pods are bound: skips where no kube-scheduler runs (an API server alone)."""
    if not kube.component_running(cluster_access.api_client, "kube-scheduler"):
        skip_for_missing_part("the cluster has no kube-scheduler (no recently renewed kube-system/kube-scheduler Lease), "
                    "so no pod is ever bound to a node")


@pytest.fixture(scope="session")
def controllers(cluster_access) -> bool:
    """Whether kube-controller-manager runs (Jobs make pods, the garbage collector and namespace controller work)."""
    return kube.component_running(cluster_access.api_client, "kube-controller-manager")


@pytest.fixture(scope="session")
def job_pods(controllers) -> None:
    if not controllers:
        skip_for_missing_part("the cluster has no kube-controller-manager (no recently renewed kube-system/"
                    "kube-controller-manager Lease), so no Job ever creates a pod")


def create_namespace(k8s: kube.Kube) -> str:
    """A fresh namespace enforcing PodSecurity `restricted`, and the model-cache PV reserved for it."""
    suffix = "".join(random.choices(string.ascii_lowercase + string.digits, k=6))
    name = f"gpt-oss-{suffix}"
    k8s.core.create_namespace({"metadata": {"name": name, "labels": {kube.TIER_LABEL: "cluster", **kube.POD_SECURITY}}})
    # What kube-controller-manager's service-account controller does; without one, pods are refused for lack of it.
    try:
        k8s.core.create_namespaced_service_account(name, {"metadata": {"name": "default"}})
    except Exception as error:
        if getattr(error, "status", None) != 409:
            raise
    claim = f"{RELEASE_NAME}-model-cache"
    k8s.core.create_persistent_volume(kube.model_cache_volume(name, claim, CACHE_SIZE))
    return name


def delete_namespace(k8s: kube.Kube, name: str) -> None:
    # The PV first: pv-protection keeps it until the namespace's PVC is gone.
    k8s.core.delete_persistent_volume(kube.model_cache_volume(name, "", CACHE_SIZE)["metadata"]["name"])
    # Not waited for: each test has its own namespace, and the namespace controller (when one runs) takes
    # seconds per namespace to empty it, which the tier would otherwise spend once per test.
    k8s.core.delete_namespace(name)


@pytest.fixture
def namespace(k8s) -> str:
    """A fresh namespace (create_namespace), deleted after the test."""
    name = create_namespace(k8s)
    yield name
    delete_namespace(k8s, name)


@pytest.fixture
def release(cluster_access, namespace, dgd_api, request) -> Release:
    target = getattr(request.node, "callspec", None) and request.node.callspec.params.get("target")
    if target and RUNTIMES[target] == "trtllm-serve" and dgd_api != kube.API_VERSIONS[0]:
        pytest.skip(f"{target} renders no DynamoGraphDeployment: it runs once, with {kube.API_VERSIONS[0]}")
    release = Release(cluster_access.kubeconfig, namespace, dgd_api)
    yield release
    release.close()


@pytest.fixture(scope="session")
def control_plane(cluster_access) -> ControlPlane:
    """The python -m ci.cluster control-plane control plane behind KUBECONFIG, whose components a fault test may restart."""
    plane = ControlPlane.beside(cluster_access.kubeconfig)
    if plane is None:
        skip_for_missing_part(f"the cluster at {cluster_access.kubeconfig} was not started by python -m ci.cluster control-plane (no pids.json "
                    "beside the kubeconfig), so this test cannot kill and restart its kube-apiserver or etcd")
    return plane


PROBE_LINE = next(number for number, line in enumerate(Path(__file__).read_text().splitlines(), 1)
                  if line.endswith("# PROBE_LINE"))
