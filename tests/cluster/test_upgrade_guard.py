"""Upgrades the Dynamo operator would refuse are refused by the chart first, against the live DGD.

The chart reads the live DynamoGraphDeployment with `lookup` (gpt-oss.liveDGD): here a real API server answers
it, as it does for `helm install` / `helm upgrade`. A refusal happens while rendering, so nothing reaches the
API server: the DGD keeps its resourceVersion and the release records no new revision. The rules and their
upstream sources are in tests/chart/dynamo/test_operator_admission.py.
"""
from __future__ import annotations

import json

import pytest

from tests.helpers import dgd_components, find
from tests.chart.dynamo.test_operator_admission import TOPOLOGY, UPGRADE_MESSAGES

pytestmark = pytest.mark.cluster


def live_dgd(release, k8s) -> dict:
    return k8s.get(find(release.manifest(), "DynamoGraphDeployment"), release.namespace)


def as_json(obj: dict) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def refused(release, overlay: str, extra: dict | None = None) -> str:
    import helm_python
    with pytest.raises(helm_python.HelmError) as error:
        release.upgrade(overlay, extra)
    return str(error.value)


class TestTopologySwitch:
    @pytest.mark.parametrize(("from_target", "to_target", "live", "rendered"), [
        ("agg.yaml", "disagg-k8s.yaml", "Frontend, TRTLLMWorker", "Frontend, TRTLLMDecodeWorker, TRTLLMPrefillWorker"),
        ("8xb200-single-node.yaml", "2xh100-truss.yaml", "Frontend, TRTLLMDecodeWorker, TRTLLMPrefillWorker",
         "Frontend, TRTLLMWorker"),
    ], ids=["agg-to-disagg", "disagg-to-agg"])
    def test_should_refuse_switching_topology_before_the_api_server(self, release, k8s, from_target, to_target,
                                                                     live, rendered):
        release.install(from_target)
        before = live_dgd(release, k8s)

        message = refused(release, to_target)

        assert (f"the live DynamoGraphDeployment {release.namespace}/{before['metadata']['name']} has the components "
                f"{live}, but this release renders {rendered}: ") in message
        assert UPGRADE_MESSAGES["topology-switch"].format(release=release.name) in message
        after = live_dgd(release, k8s)
        assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
        assert sorted(dgd_components(after)) == sorted(live.split(", "))
        assert release.helm.status(release.name)["revision"] == 1

    def test_should_upgrade_within_the_same_topology(self, release, k8s):
        release.install("disagg-k8s.yaml")

        upgraded = release.upgrade("disagg-k8s-balanced.yaml")

        assert upgraded["revision"] == 2 and upgraded["status"] == "deployed", upgraded
        workers = {name: c["replicas"] for name, c in dgd_components(live_dgd(release, k8s)).items()
                   if c["type"] != "frontend"}
        assert set(workers) == {"TRTLLMPrefillWorker", "TRTLLMDecodeWorker"}


class TestTopologyConstraintChange:
    @pytest.mark.parametrize(("change", "worker_constraint"), [
        ({"dynamo": {"topologyConstraint": dict(TOPOLOGY, packDomain="zone")}}, {}),
        ({"workers": {"componentFields": {"topologyConstraint": {"packDomain": "host"}}}}, {"packDomain": "host"}),
    ], ids=["deployment-level", "worker-level"])
    def test_should_refuse_changing_a_topology_constraint(self, release, k8s, dgd_api, change, worker_constraint):
        release.install("agg.yaml", {"dynamo": {"topologyConstraint": TOPOLOGY}})
        before = live_dgd(release, k8s)
        name_key = "clusterTopologyName" if dgd_api == "nvidia.com/v1beta1" else "topologyProfile"
        assert before["spec"]["topologyConstraint"] == {name_key: "gb200-nvl72", "packDomain": "rack"}

        message = refused(release, "agg.yaml", {"dynamo": {"topologyConstraint": TOPOLOGY}} | change)

        live = {"Frontend": {}, "TRTLLMWorker": {}, "spec": {name_key: "gb200-nvl72", "packDomain": "rack"}}
        rendered = {"Frontend": {}, "TRTLLMWorker": worker_constraint,
                    "spec": {name_key: "gb200-nvl72", "packDomain": change.get("dynamo", {}).get(
                        "topologyConstraint", TOPOLOGY)["packDomain"]}}
        assert (f"the topology constraints render {as_json(rendered)}, but the live DynamoGraphDeployment "
                f"{release.namespace}/{before['metadata']['name']} has {as_json(live)} ") in message
        assert UPGRADE_MESSAGES["constraint-change"].format(release=release.name) in message
        assert live_dgd(release, k8s)["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
        assert release.helm.status(release.name)["revision"] == 1
