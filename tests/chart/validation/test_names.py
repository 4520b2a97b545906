"""Names within Kubernetes' limits (gpt-oss.checkValues.names, _check-names.tpl; issue 53 item 2): at the longest
release name the chart admits, every name it renders, every label value and every name the Dynamo operator derives
from the DGD fits its limit; one character more is refused, naming the longest object and the longest release name."""
import pytest

from tests.helpers import (DGD, OVERLAYS, PROMETHEUS_PEERS, RUNTIMES, TRTLLM_SERVE_OVERLAYS, ChartRenderError, Refusal,
                           assert_refused, refusal_params, render_chart)

# Kubernetes' limits: a DNS-1123 label (Service names, label values; a Job's name is its pods' job-name label, a Pod's
# its hostname, a Deployment's its pods' name prefix, a ScaledObject's the app.kubernetes.io/part-of label of KEDA's
# HPA (kedacore/keda controllers/keda/hpa.go), a DGD's the nvidia.com/dynamo-graph-deployment-name label of its pods) and a DNS-1123 subdomain (the rest).
LABEL = 63
SUBDOMAIN = 253
LABEL_KINDS = {"Service", "Job", "Pod", "Deployment", "ScaledObject", "DynamoGraphDeployment"}

# The longest release name each overlay admits, from its longest name (the chart appends "-gpt-oss"):
# - the download Job, <release>-gpt-oss-model-download-<8 hex>: release + 32 <= 63, so 31;
# - disaggregated, the operator's prefill worker Service, <release>-gpt-oss-trtllmprefillworker-<8 hex worker hash>
#   (Dynamo operator 2a6da14c: internal/dynamo/graph.go:745, hash.go:86; ../shared/dynamo/operator): release + 37 <= 63,
#   so 26. Aggregated its <release>-gpt-oss-trtllmworker-<hash> is release + 30: the Job binds first.
LONGEST_RELEASE = {"agg.yaml": 31, "2xh100-truss.yaml": 31, "8xb200-single-node-balanced.yaml": 31,
                   "disagg-k8s.yaml": 26, "disagg-k8s-balanced.yaml": 26, "8xb200-single-node.yaml": 26,
                   "trtllm-serve-low-latency.yaml": 31, "trtllm-serve-max-throughput.yaml": 31}
# A namespace Kubernetes allows at its longest (a DNS-1123 label).
LONGEST_NAMESPACE = "n" * 63
# The objects the overlays leave off, on: every name that could be longer (PodMonitors, NetworkPolicies, ScaledObjects,
# the planner's Role, the endpoint picker's Deployment, Service, ServiceAccount, Role, ConfigMap and InferencePool).
NETWORK_POLICIES = {"enabled": True, "apiServer": {"to": [{"ipBlock": {"cidr": "10.0.0.10/32"}}]},
                    "prometheus": {"to": PROMETHEUS_PEERS}}
EVERYTHING = {
    "dynamo": {"networkPolicy": NETWORK_POLICIES, "planner": {"enabled": True, "rbac": {"create": True}},
               "monitoring": {"podMonitor": {"enabled": True}, "dashboard": {"enabled": True},
                              "prometheusRule": {"enabled": True}},
               "frontend": {"autoscaling": {"enabled": True}},
               "ingress": {"enabled": True, "hosts": [{"host": "gpt.example.com",
                                                       "paths": [{"path": "/", "pathType": "Prefix"}]}]}},
    "trtllm-serve": {"networkPolicy": NETWORK_POLICIES, "inferencePool": {"enabled": True},
                     "trtllmServe": {"autoscaling": {"enabled": True}}, "monitoring": {"podMonitor": {"enabled": True}},
                     "httpRoute": {"enabled": True, "parentRefs": [{"name": "gateway"}]}},
}


def label_values(node, path=""):
    """(path, value) of every label and label selector in an object."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("labels", "matchLabels") and isinstance(value, dict):
                yield from ((f"{path}.{key}.{label}", str(text)) for label, text in value.items())
            else:
                yield from label_values(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from label_values(value, f"{path}[{index}]")


def operator_names(dgd: dict, namespace: str) -> list[tuple[str, str]]:
    """What the Dynamo operator (2a6da14c) names after a DGD: per component a Service <dgd>-<lower-case component>, a
    worker's with -<8 hex worker hash> (internal/dynamo/graph.go:745, hash.go:86,
    internal/controller/dynamocomponentdeployment_renderer.go:314); and the label
    nvidia.com/dynamo-namespace=<namespace>-<dgd, dots made dashes> on every pod (graph.go:2891)."""
    name = dgd["metadata"]["name"]
    names = [("label nvidia.com/dynamo-namespace", f"{namespace}-{name.replace('.', '-')}")]
    for component in dgd["spec"]["components"]:
        hash_suffix = "-0123abcd" if component["type"] in ("worker", "prefill", "decode") else ""
        names.append(("Service", f"{name}-{component['name'].lower()}{hash_suffix}"))
    return names


def too_long(objects: list[dict], namespace: str) -> list[str]:
    """Every name and label value over its limit, and every operator name over 63."""
    problems = []
    for obj in objects:
        name = obj["metadata"]["name"]
        limit = LABEL if obj["kind"] in LABEL_KINDS else SUBDOMAIN
        if len(name) > limit:
            problems.append(f"{obj['kind']} {name}: {len(name)} > {limit}")
        problems += [f"{obj['kind']} {name} {path}={value}: {len(value)} > {LABEL}"
                     for path, value in label_values(obj) if len(value) > LABEL]
        if obj["kind"] == "DynamoGraphDeployment":
            problems += [f"{kind} {derived}: {len(derived)} > {LABEL}"
                         for kind, derived in operator_names(obj, namespace) if len(derived) > LABEL]
    return problems


def release(overlay: str, extra: int = 0) -> str:
    return "r" * (LONGEST_RELEASE[overlay] + extra)


# One case per fail call of gpt-oss.checkValues.names (tests/chart/validation/test_check_values.py counts them).
REFUSALS = {"names": [
    Refusal("release-name-a-service-cannot-carry", "agg.yaml", {},
            "the release name 1st-team makes the name prefix 1st-team-gpt-oss, but Services are named after it "
            "(1st-team-gpt-oss-frontend or 1st-team-gpt-oss-trtllm-serve) and a Service name is a DNS-1035 label: it "
            "starts with a letter and has no dots; allowed: a release name (or fullnameOverride) of lower-case letters, "
            "digits and '-', starting with a letter", release="1st-team"),
    Refusal("release-name-with-a-dot", "trtllm-serve-low-latency.yaml", {},
            "the release name team.a makes the name prefix team.a-gpt-oss, but Services are named after it",
            release="team.a", extra=True),
    Refusal("no-room-beside-the-namespace", "agg.yaml", {},
            f"the release name gpt-oss makes label nvidia.com/dynamo-namespace {LONGEST_NAMESPACE}-gpt-oss (71 characters), "
            "over its limit of 63 (the operator labels every pod of the DGD with <namespace>-<DGD name>, and a label value "
            f"is at most 63 characters); no name prefix fits beside namespace {LONGEST_NAMESPACE} (63 characters); allowed: "
            "a namespace of at most 61 characters", namespace=LONGEST_NAMESPACE),
    # The issue's example: on agg its download Job would be 64 characters, so it is refused (at most 31).
    Refusal("the-issue-example-on-agg", "agg.yaml", {},
            "the release name llm-inference-production-east-01 makes Job llm-inference-production-east-01-gpt-oss-model-"
            "download-", release="llm-inference-production-east-01"),
    Refusal("fullname-override-too-long-for-the-operator", "disagg-k8s.yaml", {"fullnameOverride": "f" * 35},
            f"fullnameOverride={'f' * 35} makes the operator's Service {'f' * 35}-trtllmprefillworker-<worker hash> (64 "
            "characters), over its limit of 63 (a DNS-1123 label; the operator names each component's <DGD>-<lower-case "
            "component>, a worker's with -<8-hex worker hash>); with this configuration the name prefix "
            f"{'f' * 35} (35 characters) may have at most 34; allowed: fullnameOverride up to 34 characters", extra=True),
    Refusal("namespace-and-release-too-long-together", "agg.yaml", {},
            "with this configuration the name prefix gpt-oss (7 characters) may have at most 6; allowed: fullnameOverride up "
            "to 6 characters, or a namespace of at most 55 characters", namespace="n" * 56, extra=True),
]}


@pytest.mark.parametrize("case", refusal_params(REFUSALS))
def test_should_refuse_with_a_message_naming_the_keys(case):
    assert_refused(case)


class TestNames:
    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_fit_every_name_at_the_longest_release_name_admitted(self, overlay):
        objects = render_chart([overlay], name=release(overlay))
        assert too_long(objects, "llm") == []
        # And no shorter maximum: the longest name (the chart's or the operator's) is exactly at its limit.
        dgds = [o for o in objects if o["kind"] == "DynamoGraphDeployment"]
        lengths = [len(o["metadata"]["name"]) for o in objects] + [len(derived) for dgd in dgds
                                                                   for _, derived in operator_names(dgd, "llm")]
        assert max(lengths) == LABEL

    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_refuse_one_character_more_naming_the_longest_release_name(self, overlay):
        with pytest.raises(ChartRenderError) as refused:
            render_chart([overlay], name=release(overlay, 1), show_only=[DGD])
        assert ("over its limit of 63" in str(refused.value)
                and f"allowed: release names up to {LONGEST_RELEASE[overlay]} characters with this configuration"
                in str(refused.value)), str(refused.value)

    def test_should_refuse_the_issue_example_on_agg_rather_than_truncate_it(self):
        # llm-inference-production-east-01 is 32 characters: its download Job would be 64 (it was, before: trunc 40).
        with pytest.raises(ChartRenderError) as refused:
            render_chart(["agg.yaml"], name="llm-inference-production-east-01", show_only=[DGD])
        assert "-model-download-" in str(refused.value) and "(64 characters), over its limit of 63" in str(refused.value)
        assert "allowed: release names up to 31 characters" in str(refused.value)

    @pytest.mark.parametrize("runtime", ["dynamo", "trtllm-serve"])
    def test_should_fit_every_name_with_every_optional_object_on(self, runtime):
        overlay = "disagg-k8s.yaml" if runtime == "dynamo" else "trtllm-serve-low-latency.yaml"
        objects = render_chart([overlay], EVERYTHING[runtime], name=release(overlay))
        kinds = {o["kind"] for o in objects}
        assert {"NetworkPolicy", "PodMonitor", "ScaledObject"} <= kinds
        assert too_long(objects, "llm") == []

    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS, ids=TRTLLM_SERVE_OVERLAYS)
    def test_should_fit_every_name_in_a_namespace_of_63_characters_without_dynamo(self, overlay):
        objects = render_chart([overlay], name=release(overlay), namespace=LONGEST_NAMESPACE)
        assert too_long(objects, LONGEST_NAMESPACE) == []

    def test_should_fit_the_operator_label_in_the_longest_namespace_dynamo_allows(self):
        # nvidia.com/dynamo-namespace=<namespace>-<DGD>: a 55-character namespace leaves 7 for the DGD, "gpt-oss".
        namespace = "n" * 55
        objects = render_chart(["agg.yaml"], name="gpt-oss", namespace=namespace)
        assert too_long(objects, namespace) == []
        assert RUNTIMES["agg.yaml"] == "dynamo"

    def test_should_count_no_worker_hash_on_grove(self):
        # On Grove the operator's Services are <dgd>-<lower-case component> (dgd_grove_stable_resources_reconciler.go:141):
        # <release>-gpt-oss-trtllmprefillworker is release + 28, so the download Job (release + 32) binds: 31.
        render_chart(["disagg-k8s.yaml"], {"dynamo": {"grove": True}}, name="r" * 31, show_only=[DGD])
        with pytest.raises(ChartRenderError, match="allowed: release names up to 31 characters"):
            render_chart(["disagg-k8s.yaml"], {"dynamo": {"grove": True}}, name="r" * 32, show_only=[DGD])
