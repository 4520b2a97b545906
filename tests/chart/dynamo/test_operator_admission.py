"""The Dynamo operator's admission rules for DynamoGraphDeployments, mirrored at render time.

Sources: ai-dynamo/dynamo, `deploy/operator/` (read in the fork wxsms/dynamo, whose main mirrors upstream's
history commit for commit; the upstream file index holds the same paths):

- 1.2-era main: 788d3ccdca6c5a1a4995cade8e33dbcd83e1ee31 (2026-05-29), the last main commit at version 1.2.0
  (the next one, 5b4bc1dd, "chore: bump version to 1.3.0 (#9592)", follows the 1.2 branch cut). The chart's
  image, tensorrtllm-runtime 1.2.1, is of this release.
- newest main read: 2a6da14c83617f5412caba5777dbf0e2399e9c5f (2026-08-21, version 1.5.0 on main), the commit
  of the CRDs in ../shared/dynamo/crds.

Field paths below are of the v1beta1 DGD; the operator reports v1alpha1 requests with their own paths.
Each Test class names the rule it mirrors; this docstring lists them all with file, commit and line.
"""
import copy
import json
import re

import pytest

from tests.helpers import (CHART_DIR, DGD, DYNAMO_OVERLAYS, ChartRenderError, Refusal, assert_refused, dgd_components, dgd_workers,
                           fail_messages, find, refusal_params, render_chart, template_defines)
from tests.helpers.schemas import dgd_errors

API_VERSIONS = ["nvidia.com/v1beta1"]

# Copied from runtimeversion.go:17 @ 2a6da14 (imageTagPattern): the only image tags the operator reads a
# version from. Python's re reads this pattern as Go's RE2 does.
OPERATOR_IMAGE_TAG = re.compile(
    r"^[vV]?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-((?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
    r"(?:\.(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$")

RUNTIME_VERSION_MESSAGE = (
    "gives no version the Dynamo operator can parse (MAJOR.MINOR.PATCH, then only -prerelease or +build), and "
    "operators from 1.4.0 refuse the DGD: \"runtimeVersionOverride: Required value: is required when the specified "
    "main container image has no parseable semantic-version tag\"; set dynamo.runtimeVersionOverride to the Dynamo "
    "version the image runs, e.g. 1.2.1")
TOPOLOGY = {"clusterTopologyName": "gb200-nvl72", "packDomain": "rack"}
GROVE_13 = {"grove": True, "releaseLine": "1.2", "image": {"tag": "1.3.0"}}

# Image tags the operator reads no version from (runtimeversion.go imageTagPattern).
UNREADABLE_TAGS = ["1.2.1.post1", "01.2.1", "1.2.1-01", "1.2", "latest-1.2.1", "sha256:0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd"]
# gpt-oss.checkValues.componentFields (_check-component-fields.tpl): the fields of a v1beta1 DGD component.
COMPONENT_FIELD_REFUSALS = [
    Refusal("component-field-owned", "agg.yaml", {"workers": {"componentFields": {"sharedMemorySize": "1Gi"}}},
            "workers.componentFields.sharedMemorySize is set by the chart for nvidia.com/v1beta1 components; "
            "use the chart's own values instead"),
    Refusal("component-field-unknown", "agg.yaml", {"workers": {"componentFields": {"envFromSecret": "hf"}}},
            "workers.componentFields.envFromSecret is not a nvidia.com/v1beta1 component field this chart passes through; "
            "allowed: minAvailable, compilationCache,"),
]
# gpt-oss.checkValues.dynamoAdmission (_check-dynamo-admission.tpl): one case per fail call, then extra cases.
ADMISSION_REFUSALS = [
    Refusal("tag-without-version", "agg.yaml", {"dynamo": {"image": {"tag": "sha256:0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd"}}},
            "dynamo.image.tag=sha256:0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd " + RUNTIME_VERSION_MESSAGE),
    Refusal("min-available-before-1.3", "disagg-k8s.yaml",
            {"dynamo": {"grove": True, "releaseLine": "1.2"}, "workers": {"componentFields": {"minAvailable": 1}}},
            "workers.componentFields.minAvailable exists in DynamoGraphDeployments from Dynamo 1.3.0, but the runtime is "
            "1.2.1 (dynamo.image.tag) and the chart assumes the platform runs that release; use a 1.3.0 or later image, "
            "or leave minAvailable out"),
    Refusal("min-available-without-grove", "agg.yaml",
            {"dynamo": {"releaseLine": "1.2", "image": {"tag": "1.4.0"}}, "workers": {"componentFields": {"minAvailable": 1}}},
            "workers.componentFields.minAvailable is set, but dynamo.grove=false: the Dynamo operator refuses it on DGDs "
            "that Grove does not place (\"minAvailable: Forbidden: is currently supported only for Grove-backed "
            "DynamoGraphDeployment components\"); set dynamo.grove=true when the platform runs Grove "
            "(global.grove.enabled), or leave minAvailable out"),
    Refusal("component-constraint-without-deployment-constraint", "disagg-k8s.yaml",
            {"workers": {"componentFields": {"topologyConstraint": {"packDomain": "rack"}}}},
            "workers.componentFields.topologyConstraint is set, but dynamo.topologyConstraint.clusterTopologyName is "
            "empty: the Dynamo operator refuses a component topology constraint without a deployment-level one "
            "(\"spec.topologyConstraint: Required value: is required when any component topology constraint is set\"); "
            "set dynamo.topologyConstraint.clusterTopologyName and dynamo.topologyConstraint.packDomain"),
    Refusal("component-constraint-without-pack-domain", "agg.yaml",
            {"dynamo": {"topologyConstraint": TOPOLOGY}, "workers": {"componentFields": {"topologyConstraint": {}}}},
            "workers.componentFields.topologyConstraint has no packDomain: the Dynamo operator requires one on every "
            "component constraint (\"topologyConstraint.packDomain is required\"); set "
            "workers.componentFields.topologyConstraint.packDomain to a domain of the ClusterTopology, e.g. rack"),
    Refusal("pack-domain-without-cluster-topology", "agg.yaml",
            {"dynamo": {"topologyConstraint": {"packDomain": "rack"}}},
            "dynamo.topologyConstraint.packDomain=rack needs dynamo.topologyConstraint.clusterTopologyName: "
            "spec.topologyConstraint names the ClusterTopology its domains come from; set it, or empty packDomain"),
    Refusal("cluster-topology-without-pack-domain", "agg.yaml",
            {"dynamo": {"topologyConstraint": {"clusterTopologyName": "gb200-nvl72"}}},
            "dynamo.topologyConstraint.clusterTopologyName=gb200-nvl72 is set without dynamo.topologyConstraint.packDomain, "
            "and the Frontend carries no constraint of its own: the Dynamo operator then refuses the DGD (1.5: "
            "\"spec.topologyConstraint.packDomain: Required value: is required when no component topologyConstraint is "
            "set\"; 1.2: \"spec.services[Frontend].topologyConstraint is required because "
            "spec.topologyConstraint.packDomain is not set\"); set dynamo.topologyConstraint.packDomain, e.g. rack"),
    # providerOverride: df7deed0d (2026-08-20, #13273, "add provider-native workload overrides"), 1.5.0 line.
    *(Refusal(f"provider-override-before-1.5-{api_version}", "agg.yaml",
              {"dynamo": {"apiVersion": api_version, "image": {"tag": "1.4.0"}},
               "workers": {"componentFields": {"providerOverride": {}}}},
              "workers.componentFields.providerOverride exists in DynamoGraphDeployments from Dynamo 1.5.0, but the "
              "runtime is 1.4.0 (dynamo.image.tag) and the chart assumes the platform runs that release; use a 1.5.0 "
              "or later image, or leave providerOverride out", extra=True) for api_version in API_VERSIONS),
    # Tags the operator reads no version from (TestRuntimeVersion).
    *(Refusal(f"unreadable-tag-{tag}", "agg.yaml", {"dynamo": {"image": {"tag": tag}}},
              f"dynamo.image.tag={tag} " + RUNTIME_VERSION_MESSAGE, extra=True) for tag in UNREADABLE_TAGS),
]
# The two upgrade refusals read the live DGD (lookup): tests/cluster/test_upgrade_guard.py asserts them.
UPGRADE_MESSAGES = {
    "topology-switch": "the Dynamo operator refuses renaming components after creation (\"component topology is "
                       "immutable and cannot be modified after creation\"), so a release cannot switch between the "
                       "aggregated (workers.worker) and disaggregated (workers.prefill + workers.decode) topologies; "
                       "install the new topology as a new release, or helm uninstall {release} first (the model "
                       "cache PVC is kept)",
    "constraint-change": "(spec: dynamo.topologyConstraint, workers: workers.componentFields.topologyConstraint): "
                         "the Dynamo operator refuses adding, removing or changing topology constraints after "
                         "creation (\"delete and recreate the DynamoGraphDeployment to change topology "
                         "constraints\"); keep the live values, or helm uninstall {release} and install again",
}
# One table per concern: tests/chart/validation/test_check_values.py counts them against the fail calls (the upgrade rules by
# UPGRADE_MESSAGES: they need a live DGD).
REFUSALS = {"componentFields": COMPONENT_FIELD_REFUSALS, "dynamoAdmission": ADMISSION_REFUSALS}


_rendered: dict[str, dict] = {}


def render_dgd(overlay: str, values: dict) -> dict:
    """The DGD of one render, memoized: several rules are checked on the same render of each overlay."""
    key = json.dumps([overlay, values], sort_keys=True)
    if key not in _rendered:
        _rendered[key] = find(render_chart([overlay], values, show_only=[DGD]), "DynamoGraphDeployment")
    return copy.deepcopy(_rendered[key])


def block() -> str:
    """The admission rules and the upgrade rules against the live DGD."""
    defines = template_defines("_check-*.tpl")
    return defines["gpt-oss.checkValues.dynamoAdmission"] + defines["gpt-oss.checkValues.liveState"]


class TestRefusals:
    @pytest.mark.parametrize("case", refusal_params(REFUSALS))
    def test_should_refuse_with_the_operators_reason(self, case):
        assert_refused(case)

    @pytest.mark.parametrize("api_version", API_VERSIONS)
    def test_should_refuse_component_fields_newer_than_the_runtime(self, api_version):
        # providerOverride: df7deed0d (2026-08-20, #13273, "add provider-native workload overrides"), 1.5.0 line.
        values = {"dynamo": {"apiVersion": api_version, "releaseLine": "1.2", "image": {"tag": "1.4.0"}},
                  "workers": {"componentFields": {"providerOverride": {}}}}
        with pytest.raises(ChartRenderError) as error:
            render_chart(["agg.yaml"], values)
        assert ("workers.componentFields.providerOverride exists in DynamoGraphDeployments from Dynamo 1.5.0, but the "
                "runtime is 1.4.0 (dynamo.image.tag) and the chart assumes the platform runs that release; use a 1.5.0 "
                "or later image, or leave providerOverride out") in str(error.value)

    def test_should_state_the_upgrade_messages_of_the_block(self):
        messages = fail_messages(block())
        for message in UPGRADE_MESSAGES.values():
            assert any(message.format(release="%s") in text for text in messages), message


class TestRuntimeVersion:
    """runtimeVersionOverride is required when the main image has no parseable semantic-version tag.

    - newest main @ 2a6da14: webhook/validation/shared_v1beta1.go:172-184 (requests in v1beta1) and
      shared_v1alpha1.go:80-92 (requests in v1alpha1: the field exists on v1alpha1 services too), the message at
      shared_helpers.go:45, the test at shared_helpers.go:116-123: an override, else
      runtimeversion.ParseImageVersion(image) (internal/runtimeversion/runtimeversion.go:51-65), which cuts the
      digest and reads the tag after the last ':' behind the last '/' (:80-91) and accepts only imageTagPattern
      (:17): MAJOR.MINOR.PATCH without leading zeros, then only -prerelease and +build.
    - Added by d7bb84ef0 (2026-07-30, #10494, "add runtimeVersionOverride to DGD components") on the 1.4.0 line
      (main bumped to 1.4.0 at f0c4516c, 2026-07-23, and to 1.5.0 after the 1.4.0 cut at c13fdcec, 2026-08-15).
      1.2-era main @ 788d3cc has neither the field (in either DGD version of the CRD) nor the rule
      (webhook/validation/shared.go): set the override only for platforms from 1.4.0, where the chart renders it
      on every component in both API versions.
    - The override itself must be strict MAJOR.MINOR.PATCH (CRD pattern, runtimeversion.Parse :42-48): the
      values schema's pattern for dynamo.runtimeVersionOverride.
    """

    @pytest.mark.parametrize("tag", UNREADABLE_TAGS)
    def test_should_refuse_tags_the_operator_cannot_read(self, tag):
        # The chart's refusal of each is a case of REFUSALS (unreadable-tag-...).
        assert not OPERATOR_IMAGE_TAG.match(tag)

    @pytest.mark.parametrize("tag", ["1.2.1", "v1.2.1", "1.3.0-dev.1", "1.2.1@sha256:0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd"])
    def test_should_accept_tags_the_operator_reads(self, tag):
        assert OPERATOR_IMAGE_TAG.match(tag.split("@")[0])
        dgd = render_dgd("agg.yaml", {"dynamo": {"releaseLine": "1.2", "image": {"tag": tag}}})
        assert all("runtimeVersionOverride" not in c["fields"] for c in dgd_components(dgd).values())

    @pytest.mark.parametrize("api_version", API_VERSIONS)
    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_give_every_component_a_readable_version(self, overlay, api_version):
        dgd = render_dgd(overlay, {"dynamo": {"apiVersion": api_version}})
        for component in dgd_components(dgd).values():
            image = component["main"]["image"].split("@")[0]
            tag = image.rsplit(":", 1)[1] if ":" in image.rsplit("/", 1)[-1] else ""
            assert OPERATOR_IMAGE_TAG.match(tag) or component["fields"].get("runtimeVersionOverride"), image

    @pytest.mark.parametrize("api_version", API_VERSIONS)
    def test_should_render_the_override_on_every_component_in_both_api_versions(self, api_version):
        values = {"dynamo": {"apiVersion": api_version, "releaseLine": "1.2", "image": {"tag": "sha256:0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd"},
                             "runtimeVersionOverride": "1.2.1"}}
        dgd = render_dgd("disagg-k8s.yaml", values)
        components = dgd_components(dgd)
        assert {name: c["fields"]["runtimeVersionOverride"] for name, c in components.items()} == {
            "Frontend": "1.2.1", "TRTLLMPrefillWorker": "1.2.1", "TRTLLMDecodeWorker": "1.2.1"}
        assert dgd_errors(dgd) == []


class TestMinAvailable:
    """minAvailable is accepted only on DGDs that Grove places.

    - newest main @ 2a6da14: webhook/validation/shared_v1beta1.go:89-95 (Forbidden "is currently supported only
      for Grove-backed DynamoGraphDeployment components"), with the pathway from
      dynamographdeployment_helpers.go:136-170 (the nvidia.com/workload-provider annotation the defaulting webhook
      stamps, webhook/defaulting/dynamographdeployment_handler.go:152-178; else Grove on in the operator and no
      nvidia.com/enable-grove=false). The CRD's CEL rules add minAvailable <= replicas and immutability.
    - Added by 5d3bb78df (2026-06-24, #10532) on the 1.3.0 line (release notes: 2a6da14
      docs/fern/pages/reference/general/releases/dynamo-v1-3-0.mdx:208); 1.2-era main @ 788d3cc has no
      minAvailable field in either DGD version (config/crd/bases/nvidia.com_dynamographdeployments.yaml).
      runtimeVersionOverride reached release/1.4.0 as a backport (#12427, dynamo-v1-4-0.mdx:201).
    """

    @pytest.mark.parametrize("api_version", API_VERSIONS)
    def test_should_pass_min_available_with_grove_from_1_3(self, api_version):
        values = {"dynamo": dict(GROVE_13, apiVersion=api_version), "workers": {"componentFields": {"minAvailable": 1}}}
        dgd = render_dgd("disagg-k8s.yaml", values)
        assert {w["fields"]["minAvailable"] for w in dgd_workers(dgd).values()} == {1}
        assert dgd_errors(dgd) == []

    @pytest.mark.parametrize("api_version", API_VERSIONS)
    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_set_no_min_available_by_default(self, overlay, api_version):
        dgd = render_dgd(overlay, {"dynamo": {"apiVersion": api_version}})
        assert all("minAvailable" not in c["fields"] for c in dgd_components(dgd).values())


class TestTopologyConstraint:
    """A component topologyConstraint needs the deployment-level spec.topologyConstraint.

    - 1.2-era main @ 788d3cc, webhook/validation/dynamographdeployment.go validateTopologyConstraints (:608-687):
      a component constraint needs packDomain (:638-639); any constraint needs spec.topologyConstraint (:654-656)
      with topologyProfile (:659-661); without a spec-level packDomain every service, the frontend included, needs
      its own constraint (:666-672).
    - newest main @ 2a6da14, dynamographdeployment.go:318-345: spec.topologyConstraint "is required when any
      component topology constraint is set" (:334-338); its packDomain "is required when no component
      topologyConstraint is set" (:340-344). The CRD requires clusterTopologyName (v1alpha1: topologyProfile)
      and a component's packDomain.
    - Rendering spec.topologyConstraint with both fields satisfies both releases; the chart refuses the rest.
    """

    @pytest.mark.parametrize("api_version", API_VERSIONS)
    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_render_the_deployment_level_constraint_components_need(self, overlay, api_version):
        values = {"dynamo": {"apiVersion": api_version, "topologyConstraint": TOPOLOGY},
                  "workers": {"componentFields": {"topologyConstraint": {"packDomain": "host"}}}}
        dgd = render_dgd(overlay, values)
        name_key = "clusterTopologyName" if api_version == "nvidia.com/v1beta1" else "topologyProfile"
        assert dgd["spec"]["topologyConstraint"] == {name_key: "gb200-nvl72", "packDomain": "rack"}
        assert {w["fields"]["topologyConstraint"]["packDomain"] for w in dgd_workers(dgd).values()} == {"host"}
        assert dgd_errors(dgd) == []

    @pytest.mark.parametrize("api_version", API_VERSIONS)
    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_render_no_constraint_by_default(self, overlay, api_version):
        dgd = render_dgd(overlay, {"dynamo": {"apiVersion": api_version}})
        assert "topologyConstraint" not in dgd["spec"]
        assert all("topologyConstraint" not in c["fields"] for c in dgd_components(dgd).values())


class TestUpgradeRules:
    """What the operator refuses on UPDATE; the chart refuses it against the live DGD (gpt-oss.liveDGD, lookup).

    - Renamed, added or removed components: 1.2-era main @ 788d3cc dynamographdeployment.go:240-277
      (validateServiceTopology, "service topology is immutable and cannot be modified after creation", called
      from ValidateUpdate :145); newest main @ 2a6da14 dynamographdeployment.go:687-705 ("component topology is
      immutable ..."). The aggregated topology has TRTLLMWorker, the disaggregated one TRTLLMPrefillWorker and
      TRTLLMDecodeWorker, so switching between them is a rename.
    - Topology constraints, deployment- and component-level: 788d3cc :788-798 (spec) and :800-829 (services, the
      message at :823); 2a6da14 :740-753 (spec, "delete and recreate the DynamoGraphDeployment to change topology
      constraints") and shared_v1beta1.go:672-686 (components).
    - The upstream file index's later version of dynamographdeployment.go (003d1ee5) keeps the rename, topology
      and constraint rules (validateDynamoGraphDeploymentSpec, validateDynamoGraphDeploymentSpecUpdate).
    - Replicas of a component with a scaling adapter: 788d3cc :282-326; 2a6da14 shared_v1beta1.go:668 (kept at the
      live value by the autoscaling helpers, not here).
    - nvidia.com/workload-provider: stamped by the defaulting webhook (2a6da14
      webhook/defaulting/dynamographdeployment_handler.go:152-178), immutable afterwards (validateObjectMetaUpdate,
      dynamographdeployment.go:635-); the chart never renders it, and examples/argocd ignore it
      (tests/examples/test_argocd.py).
    Asserted live in tests/cluster/test_upgrade_guard.py; offline, lookup finds nothing and nothing is refused.
    """

    @pytest.mark.parametrize("api_version", API_VERSIONS)
    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_never_render_operator_owned_annotations(self, overlay, api_version):
        dgd = render_dgd(overlay, {"dynamo": {"apiVersion": api_version}})
        assert not {"nvidia.com/workload-provider", "nvidia.com/dynamo-operator-origin-version"} \
            & dgd["metadata"].get("annotations", {}).keys()


class TestApiVersions:
    """nvidia.com/v1beta1 DGDs are served from Dynamo 1.2.0, not 1.5.0.

    - f9b6ab689 (2026-05-05, #8647) turned v1beta1 served in config/crd/bases/nvidia.com_dynamographdeployments.yaml
      on the 1.2.0 line (main at 1.2.0 from 3e3b3b18, 2026-04-24, to the 1.3.0 bump 5b4bc1dd, 2026-05-29); at
      788d3cc the file serves v1alpha1 (storage, :11949-11950) and v1beta1 (:21107-21108).
    - docs/fern/pages/reference/general/releases/dynamo-v1-2-0.mdx:16 @ 2a6da14: v1.2.0 (Jun 2, 2026) "promotes
      the DynamoGraphDeployment (DGD) Kubernetes API to served v1beta1".
    - 1e0d8ef5d (2026-08-06, #11904) made v1beta1 the storage version; v1alpha1 stays served (deprecated).
    - The chart writes v1beta1 only (v1alpha1 retired), so it refuses a runtime before 1.2.0
      (tests/chart/dynamo/test_dynamo_release.py, RELEASE_REFUSALS, runtime-before-1.2).
    """

    def test_should_say_v1beta1_is_served_from_1_2(self):
        values = (CHART_DIR / "values.yaml").read_text()
        assert "nvidia.com/v1beta1 (served from Dynamo 1.2.0)" in values
        assert "1.5+" not in values


class TestRenderedShape:
    """Rules every rendered DGD meets by construction, in both API versions.

    - A main container image on every component: 2a6da14 shared_v1beta1.go:174-176 and shared_v1alpha1.go:82-84
      (Required "is required" at podTemplate.spec.containers[main].image / extraPodSpec.mainContainer.image).
    - v1alpha1 volumeMounts carry a mountPoint unless useAsCompilationCache: 788d3cc
      webhook/validation/shared.go:179-183.
    - v1alpha1 sharedMemory has a size unless disabled: 788d3cc shared.go:254-258.
    - The Frontend is one of the components (the topology rules above count it): both releases validate every
      component, the frontend included.
    """

    @pytest.mark.parametrize("api_version", API_VERSIONS)
    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_meet_the_shape_rules(self, overlay, api_version):
        dgd = render_dgd(overlay, {"dynamo": {"apiVersion": api_version}})
        components = dgd_components(dgd)
        assert "Frontend" in components
        assert all(c["main"].get("image") for c in components.values())
