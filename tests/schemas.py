"""Offline validation against the upstream Dynamo CRD and the official Kubernetes JSON schemas."""
from __future__ import annotations

import copy
import functools
import re
from pathlib import Path

import jsonschema
import kubernetes_validate
import yaml

# The repo's description-free copy of the upstream CRD (ci/sync-dgd-crd.py), so a plain clone validates too.
DGD_CRD = Path(__file__).resolve().parent.parent / "ci" / "crds" / "nvidia.com_dynamographdeployments.yaml"
# Oldest and newest Kubernetes the chart declares: Chart.yaml kubeVersion ">=1.29.0-0", newest tested 1.37.
KUBERNETES_VERSIONS = ["1.29.0", "1.37.0"]


def _strict(node):
    """An API server drops unknown fields; here they are errors, so a misspelt field cannot hide."""
    if isinstance(node, dict):
        if "properties" in node and "additionalProperties" not in node \
                and not node.get("x-kubernetes-preserve-unknown-fields"):
            node["additionalProperties"] = False
        for child in node.values():
            _strict(child)
    elif isinstance(node, list):
        for child in node:
            _strict(child)
    return node


def _quantity_positive(value) -> bool:
    match = re.match(r"^\+?(\d+(\.\d*)?|\.\d+)", str(value))
    return bool(match) and float(match.group(1)) > 0


# CEL rules on the component path, by exact rule text, with create-time meaning (oldSelf-only rules pass).
_CEL = {
    "self.filter(c, has(c.type) && c.type == 'epp').size() <= 1":
        lambda s: sum(c.get("type") == "epp" for c in s) <= 1,
    "self.all(c1, !has(c1.name) || self.filter(c2, has(c2.name) && c2.name.lowerAscii() == c1.name.lowerAscii()).size() == 1)":
        lambda s: len({c["name"].lower() for c in s if "name" in c}) == sum("name" in c for c in s),
    "!has(self.eppConfig) || (has(self.type) && self.type == 'epp')":
        lambda s: "eppConfig" not in s or s.get("type") == "epp",
    "!has(self.minAvailable) || (has(self.replicas) && self.replicas == 0) || self.minAvailable <= (has(self.replicas) ? self.replicas : 1)":
        lambda s: "minAvailable" not in s or s.get("replicas") == 0 or s["minAvailable"] <= s.get("replicas", 1),
    'self.name == "main" || (has(self.image) && self.image != "")':
        lambda s: s.get("name") == "main" or bool(s.get("image")),
    'has(self.image) && self.image != ""': lambda s: bool(s.get("image")),
    "(has(self.disabled) && self.disabled) || (has(self.size) && quantity(self.size).isGreaterThan(quantity('0')))":
        lambda s: bool(s.get("disabled")) or ("size" in s and _quantity_positive(s["size"])),
    "!has(self.create) || self.create == false || (has(self.size) && has(self.storageClass) && has(self.volumeAccessMode))":
        lambda s: not s.get("create") or all(k in s for k in ("size", "storageClass", "volumeAccessMode")),
    "oldSelf.hasValue() || !has(self.restart)": lambda s: "restart" not in s,
}


def _cel(validator, rules, instance, schema):
    for rule in rules:
        check = _CEL.get(rule["rule"])
        if check and not check(instance):
            yield jsonschema.ValidationError(f"CEL: {rule.get('message', rule['rule'])}")


def _list_type(validator, list_type, instance, schema):
    if not isinstance(instance, list) or list_type not in ("map", "set"):
        return
    keys = schema.get("x-kubernetes-list-map-keys") if list_type == "map" else None
    seen = [tuple(item.get(k) for k in keys) if keys else repr(item) for item in instance]
    if len(seen) != len(set(seen)):
        yield jsonschema.ValidationError(f"duplicate entries in a list-type={list_type} list (keys {keys})")


_CrdValidator = jsonschema.validators.extend(
    jsonschema.Draft7Validator, {"x-kubernetes-validations": _cel, "x-kubernetes-list-type": _list_type})


@functools.lru_cache(maxsize=None)
def _crd_validator(crd_path: str, version: str):
    crd = yaml.safe_load(Path(crd_path).read_text())
    versions = {v["name"]: v for v in crd["spec"]["versions"]}
    return _CrdValidator(_strict(copy.deepcopy(versions[version]["schema"]["openAPIV3Schema"])))


def dgd_errors(dgd: dict, crd_path: Path = DGD_CRD) -> list[str]:
    """Schema and CEL errors of a DynamoGraphDeployment against the CRD version its apiVersion names."""
    validator = _crd_validator(str(crd_path), dgd["apiVersion"].split("/")[1])
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(dgd)]


def kubernetes_errors(obj: dict, kubernetes_version: str) -> list[str]:
    """Errors of a core object against the official schema of that Kubernetes version (strict)."""
    try:
        kubernetes_validate.validate(obj, kubernetes_version, strict=True)
    except kubernetes_validate.ValidationError as error:
        return [f"{'/'.join(map(str, error.path))}: {error.message}"]
    return []
