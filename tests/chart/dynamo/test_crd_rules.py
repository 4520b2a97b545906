"""Every x-kubernetes-validations rule of the CRDs whose objects the chart renders, evaluated by a real CEL library.

The CRDs are found by tests/helpers/schemas.py (../shared, GPT_OSS_CRDS_DIR, then .cache/crds);
tests/data/crd-examples.yaml holds a valid object of each kind and served version. A rule using a function the
environment (tests/helpers/k8s_cel.py) lacks fails to compile.
"""
from __future__ import annotations

import copy
import os
import re
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from tests.helpers import REPO_ROOT, k8s_cel, schemas
from tests.helpers import REPO_ROOT
from tests.helpers.schemas import CrdNotFound, crd_dirs, crd_errors, find_crd, load_crds, missing_crd, rule_sites, walk_rules

EXAMPLES = yaml.safe_load((REPO_ROOT / "tests" / "data" / "crd-examples.yaml").read_text())
# Rules per CRD over all its served versions, counted in the upstream files (shared/*/crds).
RULE_COUNTS = {
    ("nvidia.com", "DynamoGraphDeployment"): 31,
    ("nvidia.com", "DynamoGraphDeploymentScalingAdapter"): 0,
    ("keda.sh", "ScaledObject"): 1,
    ("gateway.networking.k8s.io", "HTTPRoute"): 178,
    ("inference.networking.k8s.io", "InferencePool"): 2,
}
KINDS = list(RULE_COUNTS)
KIND_IDS = [kind for _, kind in KINDS]


def _crd(group: str, kind: str) -> dict:
    crd = load_crds(crd_dirs()).get((group, kind))
    if crd is None:
        pytest.skip(missing_crd(group, kind, crd_dirs()))
    return crd


def _all_rules(node) -> list[dict]:
    """Every rule anywhere in the document, wherever it sits (to prove the walker misses none)."""
    if isinstance(node, dict):
        return list(node.get("x-kubernetes-validations") or []) + [
            r for key, value in node.items() if key != "x-kubernetes-validations" for r in _all_rules(value)]
    if isinstance(node, list):
        return [r for item in node for r in _all_rules(item)]
    return []


def _example(api_version: str, kind: str) -> dict:
    return copy.deepcopy(next(e for e in EXAMPLES if e["apiVersion"] == api_version and e["kind"] == kind))


@pytest.mark.parametrize("group,kind", KINDS, ids=KIND_IDS)
class TestRuleInventory:
    def test_should_visit_every_rule_of_the_crd(self, group, kind):
        crd = _crd(group, kind)
        served = [v for v in crd["spec"]["versions"] if v.get("served")]
        walked = sum(len(rule_sites(v["schema"]["openAPIV3Schema"])) for v in served)
        assert len(_all_rules(crd)) == walked == RULE_COUNTS[(group, kind)]

    def test_should_compile_every_rule(self, group, kind):
        for version in _crd(group, kind)["spec"]["versions"]:
            for _, _, rule in rule_sites(version["schema"]["openAPIV3Schema"]):
                k8s_cel.compile_rule(rule["rule"], bool(rule.get("optionalOldSelf")))

    def test_should_evaluate_every_rule_of_every_served_version_on_the_examples(self, group, kind):
        """Create, then a no-op update (old = new), so the rules comparing with oldSelf run too."""
        for version in (v for v in _crd(group, kind)["spec"]["versions"] if v.get("served")):
            example = _example(f"{group}/{version['name']}", kind)
            seen: set = set()
            assert crd_errors(example, seen=seen) == []
            assert crd_errors(example, old=example, seen=seen) == []
            sites = {(pointer, index) for pointer, index, _ in rule_sites(version["schema"]["openAPIV3Schema"])}
            assert sites - seen == set(), version["name"]


def _set(path, value):
    def change(obj):
        *parents, last = path
        node = obj
        for key in parents:
            node = node[key]
        node[last] = value
    return change


DGD1, DGD0 = "nvidia.com/v1beta1", "nvidia.com/v1alpha1"
ROUTE, POOL, SCALED = "gateway.networking.k8s.io/v1", "inference.networking.k8s.io/v1", "keda.sh/v1alpha1"
# (id, apiVersion, kind, change to the valid example, the error the CRD's rule gives, literally)
REFUSALS = [
    ("case-insensitive-duplicate-name", DGD1, "DynamoGraphDeployment",
     _set(["spec", "components", 2, "name"], "Frontend"),
     "spec/components: component names must be unique case-insensitively"),
    ("two-epp-components", DGD1, "DynamoGraphDeployment", _set(["spec", "components", 2, "type"], "epp"),
     "spec/components: at most one component may have type epp"),
    ("epp-config-on-a-worker", DGD1, "DynamoGraphDeployment", _set(["spec", "components", 1, "type"], "worker"),
     "spec/components/1: eppConfig may only be set when type is epp"),
    ("sidecar-without-image", DGD1, "DynamoGraphDeployment",
     _set(["spec", "components", 0, "podTemplate", "spec", "initContainers", 0, "image"], ""),
     "spec/components/0/podTemplate/spec/initContainers/0: init containers must specify a non-empty image"),
    ("unknown-vllm-backend", DGD1, "DynamoGraphDeployment",
     _set(["spec", "components", 0, "podTemplate", "metadata", "annotations",
           "nvidia.com/vllm-distributed-executor-backend"], "TCP"),
     "spec/components/0/podTemplate/metadata/annotations: podTemplate backend annotation must be mp or ray, "
     "case-insensitively"),
    ("label-key-prefix-too-long", DGD1, "DynamoGraphDeployment",
     _set(["spec", "experimental", "kvTransferPolicy", "labelKey"], ".".join(["a" * 63] * 4) + "/rack"),
     "spec/experimental/kvTransferPolicy/labelKey: labelKey prefix must be 253 characters or less"),
    ("restart-on-create", DGD1, "DynamoGraphDeployment", _set(["spec", "restart"], {"id": "1"}),
     "spec: spec.restart must be unset on create; set spec.restart.id after creation to request a restart"),
    ("shared-memory-of-zero", DGD0, "DynamoGraphDeployment",
     _set(["spec", "services", "Worker", "sharedMemory", "size"], "0Gi"),
     "spec/services/Worker/sharedMemory: size is required when disabled is false"),
    ("pvc-without-storage-class", DGD0, "DynamoGraphDeployment",
     lambda obj: obj["spec"]["pvcs"][0].pop("storageClass"),
     "spec/pvcs/0: When create is true, size, storageClass, and volumeAccessMode are required"),
    ("min-replicas-above-max", SCALED, "ScaledObject", _set(["spec", "minReplicaCount"], 5),
     "spec: minReplicaCount must be less than or equal to maxReplicaCount"),
    ("duplicate-target-port", POOL, "InferencePool", _set(["spec", "targetPorts"], [{"number": 8000}] * 2),
     "spec/targetPorts: port number must be unique"),
    ("relative-path", ROUTE, "HTTPRoute", _set(["spec", "rules", 1, "matches", 0, "path", "value"], "old"),
     "spec/rules/1/matches/0/path: value must be an absolute path and start with '/' when type one of "
     "['Exact', 'PathPrefix']"),
    ("backend-timeout-longer", ROUTE, "HTTPRoute", _set(["spec", "rules", 0, "timeouts", "backendRequest"], "90s"),
     "spec/rules/0/timeouts: backendRequest timeout cannot be longer than request timeout"),
    ("same-parent-twice", ROUTE, "HTTPRoute",
     _set(["spec", "parentRefs"], [{"name": "gateway", "namespace": "gateway-system", "sectionName": "http"},
                                   {"name": "gateway", "namespace": "gateway-system"}]),
     "spec/parentRefs: sectionName must be specified when parentRefs includes 2 or more references to the same "
     "parent"),
    ("mirror-percent-and-fraction", ROUTE, "HTTPRoute",
     _set(["spec", "rules", 0, "filters", 3, "requestMirror", "percent"], 10),
     "spec/rules/0/filters/3/requestMirror: Only one of percent or fraction may be specified in "
     "HTTPRequestMirrorFilter"),
]


class TestRefusals:
    @pytest.mark.parametrize("api_version,kind,change,message", [case[1:] for case in REFUSALS],
                             ids=[case[0] for case in REFUSALS])
    def test_should_refuse_by_the_crd_rule(self, api_version, kind, change, message):
        obj = _example(api_version, kind)
        change(obj)
        assert message in crd_errors(obj)

    def test_should_refuse_a_changed_min_available_on_update(self):
        old = _example(DGD1, "DynamoGraphDeployment")
        new = copy.deepcopy(old)
        new["spec"]["components"][2]["minAvailable"] = 2
        assert crd_errors(new) == []
        assert crd_errors(new, old=old) == ["spec/components/2: minAvailable is immutable after creation"]

    def test_should_read_an_escaped_property_name(self):
        """parentRefs' rules read `namespace` as p.__namespace__: two namespaces are two parents."""
        route = _example(ROUTE, "HTTPRoute")
        route["spec"]["parentRefs"] = [{"name": "gateway", "namespace": "a"}, {"name": "gateway", "namespace": "b"}]
        assert crd_errors(route) == []
        route["spec"]["parentRefs"][1]["namespace"] = "a"
        assert crd_errors(route) == ["spec/parentRefs: sectionName must be unique when parentRefs includes 2 or more "
                                     "references to the same parent"]

    def test_should_allow_a_restart_on_update(self):
        old = _example(DGD1, "DynamoGraphDeployment")
        new = copy.deepcopy(old)
        new["spec"]["restart"] = {"id": "1"}
        assert crd_errors(new, old=old) == []


class TestEvaluator:
    def test_should_refuse_a_rule_with_an_unknown_function(self):
        schema = {"type": "object", "x-kubernetes-validations": [{"rule": "self.frobnicate()", "message": "m"}]}
        with pytest.raises(k8s_cel.CelError, match="undeclared reference to 'frobnicate'"):
            walk_rules(schema, {})

    def test_should_refuse_a_rule_field_it_does_not_know(self):
        schema = {"type": "object", "x-kubernetes-validations": [{"rule": "true", "severity": "warn"}]}
        with pytest.raises(k8s_cel.CelError, match="severity"):
            walk_rules(schema, {})

    def test_should_refuse_a_rule_that_is_not_a_bool(self):
        schema = {"type": "object", "x-kubernetes-validations": [{"rule": "1 + 1"}]}
        with pytest.raises(k8s_cel.CelError, match="not a bool"):
            walk_rules(schema, {})

    def test_should_report_a_runtime_error_as_a_refusal(self):
        """The API server refuses an object a rule cannot be evaluated on (here: a field it reads is absent)."""
        schema = {"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-validations": [
            {"rule": "quantity(self.size).isGreaterThan(quantity('0'))", "message": "size must be positive"}]}}}
        assert walk_rules(schema, {"spec": {}}) == [
            "spec: rule \"quantity(self.size).isGreaterThan(quantity('0'))\" failed to evaluate: "
            "NOT_FOUND: Key not found in map : \"size\""]
        assert walk_rules(schema, {"spec": {"size": "0"}}) == ["spec: size must be positive"]
        assert walk_rules(schema, {"spec": {"size": "1m"}}) == []

    @pytest.mark.parametrize("text,value", [("80Gi", 85899345920), ("500m", Fraction(1, 2)), ("1e3", 1000),
                                            ("1.5k", 1500), ("2E", 2 * 10 ** 18), ("+.5Ki", 512)])
    def test_should_parse_a_quantity(self, text, value):
        assert k8s_cel.parse_quantity(text) == value

    @pytest.mark.parametrize("text", ["", "Gi", "1GB", "1 Gi", "--1"])
    def test_should_refuse_a_malformed_quantity(self, text):
        with pytest.raises(ValueError, match="quantities must match"):
            k8s_cel.parse_quantity(text)

    @pytest.mark.parametrize("name,escaped", [("namespace", "__namespace__"), ("x-y.z/w__v", "x__dash__y__dot__z__slash__w__underscores__v"),
                                              ("plain", "plain")])
    def test_should_escape_property_names_like_the_api_server(self, name, escaped):
        assert k8s_cel.escape_property(name) == escaped


class TestCrdSource:
    def test_should_name_the_folders_searched_and_the_fix_when_a_crd_is_missing(self, tmp_path):
        with pytest.raises(CrdNotFound, match=re.escape(
                f"no CRD for ScaledObject.keda.sh in {tmp_path}: run `python -m ci.cluster crds` (downloads the "
                "pinned upstream CRDs into .cache/crds), or set GPT_OSS_SHARED_DIR")):
            find_crd("keda.sh/v1alpha1", "ScaledObject", (tmp_path,))

    def test_should_search_shared_then_the_named_folders_then_the_cache(self, tmp_path, monkeypatch):
        monkeypatch.setenv("GPT_OSS_SHARED_DIR", str(tmp_path / "shared"))
        monkeypatch.setenv("GPT_OSS_CRDS_DIR", os.pathsep.join([str(tmp_path / "a"), str(tmp_path / "b")]))
        assert crd_dirs() == (
            tmp_path / "shared" / "dynamo" / "crds", tmp_path / "shared" / "keda" / "crds",
            tmp_path / "shared" / "gateway-api" / "crds", tmp_path / "shared" / "gateway-api-inference-extension" / "crds",
            tmp_path / "a", tmp_path / "b", REPO_ROOT / ".cache" / "crds")

    def test_should_take_a_crd_from_the_first_folder_that_holds_it(self, tmp_path):
        crd = _crd("keda.sh", "ScaledObject")
        first, second = copy.deepcopy(crd), copy.deepcopy(crd)
        first["metadata"]["labels"] = {"found": "first"}
        for name, doc in (("first", first), ("second", second)):
            (tmp_path / name).mkdir()
            (tmp_path / name / "keda.sh_scaledobjects.yaml").write_text(yaml.safe_dump(doc))
        crds = load_crds((tmp_path / "first", tmp_path / "second"))
        assert crds[("keda.sh", "ScaledObject")]["metadata"]["labels"] == {"found": "first"}

    def test_should_read_a_changed_crd_file_anew_and_keep_only_what_json_holds(self, tmp_path, monkeypatch):
        crd = _crd("keda.sh", "ScaledObject")
        monkeypatch.setattr(schemas, "PARSED_CRDS", tmp_path / "parsed")
        path = tmp_path / "scaledobjects.yaml"
        path.write_text(yaml.safe_dump(crd))
        assert schemas.crd_documents(path) == [crd]
        assert len(list((tmp_path / "parsed").glob("*.json"))) == 1
        crd["metadata"]["labels"] = {"changed": "yes"}
        path.write_text(yaml.safe_dump(crd))
        assert schemas.crd_documents(path) == [crd]  # new bytes, new name: never the earlier parse
        dated = tmp_path / "dated.yaml"
        dated.write_text("kind: CustomResourceDefinition\nreleased: 2026-11-26\n")
        assert str(schemas.crd_documents(dated)[0]["released"]) == "2026-11-26"
        assert len(list((tmp_path / "parsed").glob("*.json"))) == 2  # a date is no JSON: parsed, not kept

    def test_should_read_the_crds_from_the_folder_the_user_names(self, tmp_path, monkeypatch):
        crd = _crd("keda.sh", "ScaledObject")
        (tmp_path / "scaledobjects.yaml").write_text(yaml.safe_dump(crd))
        monkeypatch.setenv("GPT_OSS_CRDS_DIR", str(tmp_path))
        monkeypatch.setenv("GPT_OSS_SHARED_DIR", "/nonexistent")
        assert crd_dirs()[4] == tmp_path
        assert load_crds(crd_dirs())[("keda.sh", "ScaledObject")] == crd
        obj = _example("keda.sh/v1alpha1", "ScaledObject")
        obj["spec"]["minReplicaCount"] = 9
        assert crd_errors(obj) == ["spec: minReplicaCount must be less than or equal to maxReplicaCount"]

    def test_should_keep_no_copy_of_an_upstream_crd(self):
        files = []
        for folder, subfolders, names in os.walk(REPO_ROOT):
            subfolders[:] = [d for d in subfolders if not d.startswith(".")]  # .git, .venv, .venv-checkov
            files += [Path(folder) / n for n in names if n.endswith((".yaml", ".yml", ".json"))]
        assert files and not [p for p in files if "kind: CustomResourceDefinition" in p.read_text(errors="replace")]
