"""The real Dynamo operator's webhooks judge the chart's port of their rules (tests/chart/dynamo/test_operator_admission.py).

Every case of that file is sent to the real validating and defaulting webhooks of the operator the node tier runs
(1.5.0-dev, main @ 2a6da14c, Grove and LWS off: tests/cluster/operator.py) as a server-side dry-run: a create for
the refusal tables and the admitted renders, an update of a live DGD for the upgrade rules. A refusal case's DGD is
what the chart would render if it did not refuse: the chart without its check-values template (nothing else of it
refuses these values). The answers must agree: where the chart refuses, the webhook refuses too, with the reason the
chart quotes; where the chart admits, so does the webhook. A case whose rule belongs to another operator release or
platform setting than this one (WEBHOOK_ANSWERS says which, and why) must get the answer this operator gives; a
disagreement fails naming both answers.
"""
from __future__ import annotations

import json
import re
import shutil
import time
from dataclasses import dataclass

import pytest

from tests.cluster import kube
from tests.cluster.conftest import create_namespace, delete_namespace
from tests.helpers import CHART_DIR, DYNAMO_OVERLAYS, find, load_values, render_chart
from tests.chart.dynamo.test_operator_admission import (GROVE_13, REFUSALS, TOPOLOGY, UNREADABLE_TAGS, UPGRADE_MESSAGES)

pytestmark = [pytest.mark.cluster, pytest.mark.node]  # the operator runs as a pod on the kubelet node

ADMITTED = "admitted"


@dataclass(frozen=True)
class Answer:
    """What this operator answers a case: ADMITTED, or refused with a message containing `says`. `why`: for a case the
    chart decides by another release or platform setting than this operator's, the reason the answers differ."""
    says: str
    why: str = ""


# The chart's refusal quotes the operator's own message in double quotes: the webhook must refuse with it.
QUOTED = re.compile(r'"([^"]+)"')
# Cases whose chart refusal does not quote this operator (another release's rule, or the runtime the chart assumes the
# platform runs): what this operator answers instead. The rest must be refused with the message the chart quotes.
WEBHOOK_ANSWERS = {
    "component-field-owned": Answer(ADMITTED, "sharedMemorySize through componentFields is the chart's own rule: "
                                              "the field is valid for the operator, the chart sets it itself"),
    "component-field-unknown": Answer(ADMITTED, "the API server prunes a field the CRD does not know (envFromSecret is "
                                                "not a v1beta1 component field): the chart refuses it so that it is not "
                                                "dropped silently"),
    "min-available-before-1.3": Answer("is currently supported only for Grove-backed",
                                       "the chart refuses it for the 1.2.1 runtime; this operator runs without Grove"),
    "component-constraint-without-pack-domain": Answer(
        "topologyConstraint.packDomain", "this operator's CRD refuses the empty packDomain (its pattern) before its "
                                         "webhook's rule runs"),
    "provider-override-before-1.5-nvidia.com/v1beta1": Answer(
        "providerOverride.apiVersion", "the chart refuses the field for the 1.4.0 runtime it assumes the platform runs; "
                                       "this 1.5.0-dev operator has it, and its CRD refuses the case's empty override"),
    "pack-domain-without-cluster-topology": Answer(
        ADMITTED, "without clusterTopologyName the chart renders no spec.topologyConstraint, so the packDomain would be "
                  "dropped silently: the chart's own rule"),
}


def webhook_answer(k8s: kube.Kube, namespace: str, dgd: dict, update: bool = False) -> str:
    """ADMITTED, or the API server's refusal message, of a server-side dry-run create (or update) of `dgd`."""
    from kubernetes.client.exceptions import ApiException
    body = json.loads(json.dumps(dgd))
    body["metadata"].pop("namespace", None)
    # An update races the operator, which writes the live DGD's status and finalizer: a conflict (409) on the
    # resourceVersion just read is no answer of the webhook, so the update is sent again (bounded).
    for _ in range(10):
        try:
            if update:
                live = k8s.custom.get_namespaced_custom_object("nvidia.com", "v1beta1", namespace,
                                                               "dynamographdeployments", body["metadata"]["name"])
                body["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"]
                k8s.custom.replace_namespaced_custom_object("nvidia.com", "v1beta1", namespace,
                                                            "dynamographdeployments", body["metadata"]["name"], body,
                                                            dry_run="All")
            else:
                k8s.custom.create_namespaced_custom_object("nvidia.com", "v1beta1", namespace,
                                                           "dynamographdeployments", body, dry_run="All")
        except ApiException as error:
            if update and error.status == 409:
                time.sleep(0.5)
                continue
            try:
                return json.loads(error.body)["message"]
            except (ValueError, KeyError, TypeError):
                return str(error.body)
        return ADMITTED
    raise AssertionError(f"the dry-run update of {body['metadata']['name']} conflicted with the live DGD 10 times")


@pytest.fixture(scope="module")
def unchecked_chart(tmp_path_factory):
    """The chart without templates/validation/check-values.yaml: what it renders for values it would refuse."""
    import helm_python
    folder = tmp_path_factory.mktemp("unchecked") / "gpt-oss"
    shutil.copytree(CHART_DIR, folder)
    (folder / "templates" / "validation" / "check-values.yaml").unlink()
    return helm_python.Chart.load(folder)


def unchecked_dgd(chart, overlay: str, values: dict, namespace: str) -> dict:
    import yaml
    rendered = chart.render(load_values([overlay], values), name="gpt-oss", namespace=namespace, is_install=True)
    docs = [d for template, text in rendered.items() if template.endswith(".yaml")
            for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    return find(docs, "DynamoGraphDeployment")


@pytest.fixture(scope="module")
def judged(dynamo_operator, k8s):
    namespace = create_namespace(k8s)
    yield namespace
    delete_namespace(k8s, namespace)


def expected_refusal(case) -> Answer:
    if case.id in WEBHOOK_ANSWERS:
        return WEBHOOK_ANSWERS[case.id]
    quoted = QUOTED.findall(case.message)
    assert quoted, f"{case.id}: the chart's message quotes no operator message, and WEBHOOK_ANSWERS has no answer"
    return Answer(quoted[0])  # the newest release's message comes first where the chart quotes several


def agree(case_id: str, chart: str, expected: Answer, webhook: str) -> None:
    if expected.says == ADMITTED:
        ok = webhook == ADMITTED
    else:
        ok = webhook != ADMITTED and expected.says in webhook
    assert ok, (f"{case_id}: the chart answers {chart!r}; the real webhook answers {webhook!r}; expected from the "
                f"webhook: {expected.says!r}" + (f" ({expected.why})" if expected.why else ""))


class TestRefusalsAgainstTheRealWebhook:
    @pytest.mark.parametrize("case", [pytest.param(c, id=f"{k}:{c.id}") for k, cs in REFUSALS.items() for c in cs])
    def test_should_refuse_what_the_chart_refuses(self, case, judged, k8s, unchecked_chart):
        from tests.helpers import render_error
        chart_answer = render_error(case.overlay, case.values)
        assert case.message in chart_answer, chart_answer  # the offline test's answer, again
        dgd = unchecked_dgd(unchecked_chart, case.overlay, case.values, judged)
        agree(case.id, chart_answer, expected_refusal(case), webhook_answer(k8s, judged, dgd))


# What the offline file's admitting tests render, and what this operator answers each (with why, where it differs).
ADMITTED_CASES = {
    **{f"overlay-{o}": (o, {}, Answer(ADMITTED)) for o in DYNAMO_OVERLAYS},  # the default 1.7 line
    **{f"line-1.6-{o}": (o, {"dynamo": {"releaseLine": "1.6"}}, Answer(ADMITTED)) for o in ("agg.yaml", "disagg-k8s.yaml")},
    **{f"readable-tag-{t}": ("agg.yaml", {"dynamo": {"releaseLine": "1.2", "image": {"tag": t}}}, Answer(ADMITTED))
       for t in ["1.2.1", "v1.2.1", "1.3.0-dev.1", "1.2.1@sha256:" + "0" * 64]},
    "runtime-version-override": ("disagg-k8s.yaml", {"dynamo": {"releaseLine": "1.2", "image": {"tag": "sha256:0123abcd"},
                                                                "runtimeVersionOverride": "1.2.1"}}, Answer(ADMITTED)),
    "min-available-with-grove-1.3": (
        "disagg-k8s.yaml", {"dynamo": GROVE_13, "workers": {"componentFields": {"minAvailable": 1}}},
        Answer("is currently supported only for Grove-backed",
               "dynamo.grove=true tells the chart the platform runs Grove; this operator runs without it")),
    "topology-constraint": (
        "agg.yaml", {"dynamo": {"topologyConstraint": TOPOLOGY},
                     "workers": {"componentFields": {"topologyConstraint": {"packDomain": "host"}}}}, Answer(ADMITTED)),
}


class TestAdmittedRendersAgainstTheRealWebhook:
    @pytest.mark.parametrize("case", sorted(ADMITTED_CASES))
    def test_should_admit_what_the_chart_renders(self, case, judged, k8s):
        overlay, values, expected = ADMITTED_CASES[case]
        dgd = find(render_chart([overlay], values, namespace=judged), "DynamoGraphDeployment")
        agree(case, ADMITTED, expected, webhook_answer(k8s, judged, dgd))

    def test_should_refuse_every_tag_the_operator_cannot_read(self, judged, k8s, unchecked_chart):
        # the same tags as the refusal table's unreadable-tag cases, judged with the override the chart would need
        for tag in UNREADABLE_TAGS:
            dgd = unchecked_dgd(unchecked_chart, "agg.yaml", {"dynamo": {"image": {"tag": tag}}}, judged)
            assert "runtimeVersionOverride" in webhook_answer(k8s, judged, dgd), tag


class TestUpgradeRulesAgainstTheRealWebhook:
    """The two rules the chart checks against the live DGD (gpt-oss.checkValues.liveState): a dry-run update of a live
    DGD, as `helm upgrade` would send it without the chart's refusal."""

    @pytest.fixture(scope="class")
    def live(self, judged, k8s):
        dgd = find(render_chart(["agg.yaml"], namespace=judged), "DynamoGraphDeployment")
        for component in dgd["spec"]["components"]:  # no pods: the GPU nodes are the overlays' (test_operator.py)
            component["replicas"] = 0
        k8s.custom.create_namespaced_custom_object("nvidia.com", "v1beta1", judged, "dynamographdeployments", dgd)
        return dgd

    @pytest.mark.parametrize("rule,overlay,values", [
        ("topology-switch", "disagg-k8s.yaml", {}),
        ("constraint-change", "agg.yaml", {"dynamo": {"topologyConstraint": TOPOLOGY}}),
    ])
    def test_should_refuse_what_the_chart_refuses_on_upgrade(self, rule, overlay, values, live, judged, k8s,
                                                             unchecked_chart):
        dgd = unchecked_dgd(unchecked_chart, overlay, values, judged)
        quoted = max(QUOTED.findall(UPGRADE_MESSAGES[rule]), key=len)
        agree(rule, UPGRADE_MESSAGES[rule], Answer(quoted), webhook_answer(k8s, judged, dgd, update=True))


PROVIDER = "nvidia.com/workload-provider"  # the operator materializes it on a DGD it admitted


class TestLineUpgradeAgainstTheRealWebhook:
    """The upgrade path's last step, 1.6 line (1.6.2) to 1.7 line (1.7.0), as a dry-run update of a live DGD: the real
    operator's update rules (component set, backendFramework, topology immutable) admit it. The operator here is
    1.5.0-dev, whose window ends at 1.6 (the chart refuses the 1.7 line against it when it can see it:
    tests/cluster/test_operator.py); its webhook judges the DGD's shape, which 1.7 keeps."""

    @pytest.mark.parametrize("overlay", ["agg.yaml", "disagg-k8s.yaml"])
    def test_should_admit_the_step_from_1_6_to_1_7(self, overlay, judged, k8s):
        name = f"line-{overlay.removesuffix('.yaml')}"
        live = find(render_chart([overlay], {"dynamo": {"releaseLine": "1.6"}}, name=name, namespace=judged),
                    "DynamoGraphDeployment")
        for component in live["spec"]["components"]:  # no pods: the GPU nodes are the overlays' (test_operator.py)
            component["replicas"] = 0
        k8s.custom.create_namespaced_custom_object("nvidia.com", "v1beta1", judged, "dynamographdeployments", live)
        try:
            upgraded = find(render_chart([overlay], name=name, namespace=judged), "DynamoGraphDeployment")
            assert upgraded["metadata"]["annotations"]["gpt-oss/dynamo-runtime-version"] == "1.7.0"
            for component in upgraded["spec"]["components"]:
                component["replicas"] = 0
            # What helm upgrade's three-way merge keeps: the labels and annotations the operator added to the live
            # DGD (nvidia.com/workload-provider, which may not change once set), read once the operator wrote it.
            def read():
                return k8s.custom.get_namespaced_custom_object("nvidia.com", "v1beta1", judged, "dynamographdeployments",
                                                               live["metadata"]["name"])
            kube.wait_for("the operator's workload-provider annotation on the live DGD",
                          lambda: PROVIDER in read()["metadata"].get("annotations", {}), timeout=120, interval=1)
            now = read()
            for field in ("labels", "annotations"):
                upgraded["metadata"][field] = {**now["metadata"].get(field, {}), **upgraded["metadata"].get(field, {})}
            agree(f"1.6-to-1.7-{overlay}", ADMITTED, Answer(ADMITTED), webhook_answer(k8s, judged, upgraded, update=True))
        finally:
            k8s.custom.delete_namespaced_custom_object("nvidia.com", "v1beta1", judged, "dynamographdeployments",
                                                       live["metadata"]["name"])
