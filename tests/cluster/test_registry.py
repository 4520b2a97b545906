"""Install the chart from a real OCI registry (oci://127.0.0.1:<port>/...) by version, and upgrade to it.

The archive is ci.release.chart's, pushed to Debian's docker-registry (tests/helpers/registry.py); Helm pulls it
from there (plain HTTP on 127.0.0.1) as `helm install oci://... --version` does.
"""
from __future__ import annotations

import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

from tests.cluster import kube
from tests.helpers import CHART_DIR, REPO_ROOT, find, render_chart

pytestmark = pytest.mark.cluster

VERSION = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())["version"]
HOOK = "helm.sh/hook"


# Session-scoped: pytest may run this module's tests in several groups (per DGD API version); one push.
@pytest.fixture(scope="session")
def published(oci_registry, release_tool, chart_archive) -> dict:
    # Its own repository path: the offline tier's module pushes the same version under charts/.
    return release_tool.push(chart_archive, oci_registry.remote("cluster/charts"), plain_http=True,
                             credentials_file=oci_registry.credentials_file)


def previous_chart(tmp_path: Path) -> Path:
    """charts/gpt-oss as it was just before Chart.yaml took the current version (the previous release)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True,
                              check=True).stdout

    try:
        commits = git("log", "--format=%H", "--", "charts/gpt-oss/Chart.yaml").split()
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"no git history to take the previous chart version from: {error}")
    bump = None
    for commit in commits:  # newest first: the oldest commit that already has the current version
        shown = yaml.safe_load(git("show", f"{commit}:charts/gpt-oss/Chart.yaml"))
        if shown["version"] != VERSION:
            break
        bump = commit
    if bump is None or bump == commits[-1]:
        pytest.skip(f"no earlier chart version than {VERSION} in this clone's history (a shallow clone?)")
    archive = tmp_path / "previous.tar"
    subprocess.run(["git", "-C", str(REPO_ROOT), "archive", "--format=tar", "-o", str(archive), f"{bump}^",
                    "charts/gpt-oss"], check=True, capture_output=True)
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / "charts" / "gpt-oss"


def served(objects: list[dict]) -> list[dict]:
    return sorted((o for o in objects if HOOK not in o["metadata"].get("annotations", {})),
                  key=lambda o: (o["kind"], o["metadata"]["name"]))


class TestInstallFromRegistry:
    def test_should_install_the_pinned_version_from_the_registry(self, release, k8s, published):
        values = release.values("agg.yaml")

        installed = release.helm.install(published["ref"], release.name, values, namespace=release.namespace,
                                         chart_version=VERSION, plain_http=True, timeout=180, wait="hookOnly")

        assert installed["status"] == "deployed", installed
        assert installed["chart_version"] == VERSION
        objects = release.manifest()
        # What the registry served renders what the chart folder renders.
        assert served(objects) == served(render_chart(values=values, namespace=release.namespace))
        dgd = find(objects, "DynamoGraphDeployment")
        live = k8s.get(dgd, release.namespace)
        assert live is not None and live["metadata"]["labels"]["helm.sh/chart"] == f"gpt-oss-{VERSION}"

    def test_should_refuse_a_version_the_registry_lacks(self, release, published):
        import helm_python
        with pytest.raises(helm_python.HelmError, match=r"gpt-oss:9\.9\.9: not found"):
            release.helm.install(published["ref"], release.name, release.values("agg.yaml"),
                                 namespace=release.namespace, chart_version="9.9.9", plain_http=True, timeout=60,
                                 wait="hookOnly")

    def test_should_upgrade_from_the_previous_version_to_the_registry_one(self, release, k8s, published, tmp_path):
        import helm_python
        values = release.values("agg.yaml")
        values["dynamo"].pop("operator", None)  # the previous chart has no dynamo.operator (its strict schema refuses it)
        before = release.helm.install(helm_python.Chart.load(previous_chart(tmp_path)), release.name, values,
                                      namespace=release.namespace, timeout=180, wait="hookOnly")
        assert before["chart_version"] != VERSION
        old_job = find(release.manifest(), "Job")["metadata"]["name"]

        # The download Job outlives its run (no ttlSecondsAfterFinished): the upgrade must not patch its
        # immutable pod template, whose helm.sh/chart label changes. The previous version ran Dynamo 1.2.1, and
        # an upgrade moves one minor at most: it keeps the line the previous chart deployed (1.2 before the lines).
        previous = find(release.manifest(), "DynamoGraphDeployment")["metadata"].get("annotations") or {}
        values = release.values("agg.yaml", {"dynamo": {"releaseLine": previous.get("gpt-oss/dynamo-release-line", "1.2")}})
        upgraded = release.helm.upgrade(published["ref"], release.name, values, namespace=release.namespace,
                                        chart_version=VERSION, plain_http=True, timeout=180, wait="hookOnly")

        assert upgraded["status"] == "deployed" and upgraded["revision"] == 2 and upgraded["chart_version"] == VERSION, upgraded
        new_job = find(release.manifest(), "Job")["metadata"]["name"]
        assert new_job != old_job
        assert k8s.get({"kind": "Job", "metadata": {"name": new_job}}, release.namespace) is not None
        kube.wait_for(f"old Job {old_job} to be deleted",
                      lambda: k8s.get({"kind": "Job", "metadata": {"name": old_job}}, release.namespace) is None,
                      timeout=120)
