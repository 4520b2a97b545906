"""Dynamo release lines against a real API server: upgrades move one Dynamo minor at a time, and a release line
outside the live operator's window is refused (templates/validation/_check-dynamo-release.tpl).

The chart reads the live DGD and the operator's Deployment with `lookup`; here a real API server answers. A
refusal happens while rendering, so nothing reaches the API server. The operator is not running (it cannot be
built here): its Deployment is an object like the platform chart's (the --operator-version argument), which is all
the chart reads.
"""
from __future__ import annotations

import pytest

from tests.helpers import find
from tests.chart.dynamo.test_dynamo_release import LIVE_MESSAGES

pytestmark = pytest.mark.cluster

RUNTIME = "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime"
LINE_1_2 = {"dynamo": {"releaseLine": "1.2"}}
# The steps from 1.2.1 to the 1.7 line, as the facts give them (one minor at a time; RELEASE-1.7-FACTS.md section 6:
# 1.6.x -> 1.7.x is one step).
STEPS_FROM_1_2 = ("dynamo.releaseLine=1.2 dynamo.image.tag=1.3.1, then dynamo.releaseLine=1.2 dynamo.image.tag=1.4.1, "
                  "then dynamo.releaseLine=1.6 dynamo.image.tag=1.5.1, then dynamo.releaseLine=1.6 dynamo.image.tag=1.6.2, "
                  "then dynamo.releaseLine=1.7 dynamo.image.tag=1.7.0")


def live_dgd(release, k8s) -> dict:
    return k8s.get(find(release.manifest(), "DynamoGraphDeployment"), release.namespace)


def refused(release, overlay: str, extra: dict | None = None) -> str:
    import helm_python
    with pytest.raises(helm_python.HelmError) as error:
        release.upgrade(overlay, extra)
    return str(error.value)


@pytest.fixture
def operator_deployment(k8s, namespace):
    """A Deployment shaped like the Dynamo platform chart's operator (args --operator-version=<version>)."""
    created = []

    def create(version: str) -> str:
        name = "dynamo-operator-controller-manager"
        body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
                "spec": {"replicas": 0, "selector": {"matchLabels": {"app": name}},
                         "template": {"metadata": {"labels": {"app": name}},
                                      "spec": {"containers": [{
                                          "name": "manager",
                                          "image": f"nvcr.io/nvidia/ai-dynamo/kubernetes-operator:{version}",
                                          "args": ["--config=/etc/dynamo-operator/config.yaml",
                                                   f"--operator-version={version}"]}]}}}}
        k8s.apps.create_namespaced_deployment(namespace, body)
        created.append(name)
        return f"{namespace}/{name}"

    yield create
    for name in created:
        k8s.apps.delete_namespaced_deployment(name, namespace)


class TestMinorSteps:
    def test_should_refuse_skipping_from_1_2_to_1_7(self, release, k8s):
        release.install("agg.yaml", LINE_1_2)
        before = live_dgd(release, k8s)
        assert before["metadata"]["annotations"]["gpt-oss/dynamo-runtime-version"] == "1.2.1"

        message = refused(release, "agg.yaml")

        assert LIVE_MESSAGES["minor-skipped"].format(
            namespace=release.namespace, installed="1.2.1", source="its gpt-oss/dynamo-runtime-version annotation",
            runtime="1.7.0", path="1.2 -> 1.3 -> 1.4 -> 1.5 -> 1.6 -> 1.7", steps=STEPS_FROM_1_2) in message
        after = live_dgd(release, k8s)
        assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
        assert release.helm.status(release.name)["revision"] == 1

    def test_should_upgrade_one_minor(self, release, k8s):
        release.install("agg.yaml", LINE_1_2)

        upgraded = release.upgrade("agg.yaml", {"dynamo": {"releaseLine": "1.2", "image": {"tag": "1.3.1"}}})

        assert upgraded["revision"] == 2 and upgraded["status"] == "deployed", upgraded
        live = live_dgd(release, k8s)
        assert live["metadata"]["annotations"]["gpt-oss/dynamo-runtime-version"] == "1.3.1"
        images = {c["podTemplate"]["spec"]["containers"][0]["image"] for c in live["spec"]["components"]}
        assert images == {f"{RUNTIME}:1.3.1"}

    def test_should_read_the_version_from_the_image_of_a_dgd_without_the_annotation(self, release, k8s):
        # A DGD an older chart wrote has no gpt-oss/dynamo-runtime-version: the main image's tag says it.
        release.install("agg.yaml", LINE_1_2)
        name = find(release.manifest(), "DynamoGraphDeployment")["metadata"]["name"]
        k8s.custom.patch_namespaced_custom_object(
            "nvidia.com", "v1beta1", release.namespace, "dynamographdeployments", name,
            {"metadata": {"annotations": {"gpt-oss/dynamo-runtime-version": None}}})  # a merge patch removes it
        assert "gpt-oss/dynamo-runtime-version" not in live_dgd(release, k8s)["metadata"]["annotations"]

        message = refused(release, "agg.yaml")

        assert LIVE_MESSAGES["minor-skipped"].format(
            namespace=release.namespace, installed="1.2.1",
            source=f"the image of component Frontend, {RUNTIME}:1.2.1", runtime="1.7.0",
            path="1.2 -> 1.3 -> 1.4 -> 1.5 -> 1.6 -> 1.7", steps=STEPS_FROM_1_2) in message

    def test_should_refuse_skipping_down_too(self, release, k8s):
        release.install("agg.yaml")

        message = refused(release, "agg.yaml", {"dynamo": {"releaseLine": "1.2", "image": {"tag": "1.4.1"}}})

        assert LIVE_MESSAGES["minor-skipped"].format(
            namespace=release.namespace, installed="1.7.0", source="its gpt-oss/dynamo-runtime-version annotation",
            runtime="1.4.1", path="1.7 -> 1.6 -> 1.5 -> 1.4",
            steps="dynamo.releaseLine=1.6 dynamo.image.tag=1.6.2, then dynamo.releaseLine=1.6 dynamo.image.tag=1.5.1, "
                  "then dynamo.releaseLine=1.2 dynamo.image.tag=1.4.1") in message

    def test_should_upgrade_the_1_6_line_to_1_7(self, release, k8s):
        release.install("agg.yaml", {"dynamo": {"releaseLine": "1.6"}})
        assert live_dgd(release, k8s)["metadata"]["annotations"]["gpt-oss/dynamo-runtime-version"] == "1.6.2"

        upgraded = release.upgrade("agg.yaml")

        assert upgraded["revision"] == 2 and upgraded["status"] == "deployed", upgraded
        live = live_dgd(release, k8s)
        assert live["metadata"]["annotations"]["gpt-oss/dynamo-runtime-version"] == "1.7.0"
        assert live["metadata"]["annotations"]["gpt-oss/dynamo-release-line"] == "1.7"
        assert {c["podTemplate"]["spec"]["containers"][0]["image"] for c in live["spec"]["components"]} == {
            f"{RUNTIME}:1.7.0"}


class TestOperatorWindow:
    def test_should_refuse_a_line_the_live_operator_does_not_support(self, release, operator_deployment):
        where = operator_deployment("1.6.1")
        scoped = {"dynamo": {"releaseLine": "1.2", "operator": {"namespace": release.namespace}}}

        import helm_python
        with pytest.raises(helm_python.HelmError) as error:
            release.install("agg.yaml", scoped)

        assert LIVE_MESSAGES["operator-window"].format(
            operator="1.6.1", where=where, window="1.4 to 1.7", runtime="1.2.1", line="1.2",
            allowed="dynamo.releaseLine=1.6 or dynamo.releaseLine=1.7") in str(error.value)

    def test_should_install_the_line_it_supports_and_say_so(self, release, operator_deployment):
        where = operator_deployment("1.6.1")

        installed = release.install("agg.yaml", {"dynamo": {"operator": {"namespace": release.namespace}}})

        assert installed["status"] == "deployed", installed
        notes = release.helm.status(release.name).get("notes") or installed.get("notes", "")
        assert f"The cluster runs the Dynamo operator 1.6.1 ({where}), which supports this runtime." in notes
