"""Offline validation of rendered objects: upstream CRDs (OpenAPI schema and every CEL rule) and Kubernetes' schemas.

The CRDs are never copied into the project. python -m ci.cluster crds pins them (ci/cluster/crds.json) and owns the one lookup
every tier uses, first match wins: <group>/crds under GPT_OSS_SHARED_DIR (default <repo>/../shared), the folders
GPT_OSS_CRDS_DIR lists (os.pathsep-separated), then its cache .cache/crds. A test that needs a CRD none of them
holds is skipped, naming the folders it searched and the fix (`python -m ci.cluster crds`).
"""
from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest

from tests.helpers import k8s_cel
from ci.cluster import crds as crd_lookup
from tools.gptoss.yaml_text import load_yaml_all

# kubernetes-validate reads and parses a schema file and the version's _definitions.json (megabytes of JSON) on
# every validate(); the files never change within a run, and jsonschema does not mutate what it reads.
if not hasattr(kubernetes_validate.utils.schema_contents, "cache_info"):
    kubernetes_validate.utils.schema_contents = functools.lru_cache(maxsize=None)(kubernetes_validate.utils.schema_contents)

REPO_ROOT = Path(__file__).resolve().parents[2]
# Oldest and newest Kubernetes the chart declares: Chart.yaml kubeVersion ">=1.29.0-0", newest tested 1.37.
KUBERNETES_VERSIONS = ["1.29.0", "1.37.0"]
# Each CRD file's documents as JSON, under the sha256 of the file's bytes: YAML-parsing the megabytes of CRDs took
# each pytest-xdist worker seconds of the offline tier's 40; json reads them in a fraction of that. A changed file
# is a new name, never a stale read.
PARSED_CRDS = REPO_ROOT / ".cache" / "crds-parsed"




def crd_dirs() -> tuple[Path, ...]:
    """The folders searched for CRDs, in order (ci.cluster.crds's crd_search_path)."""
    return crd_lookup.crd_search_path()


def crd_file(name: str) -> Path:
    """The upstream CRD file `name` (e.g. keda.sh_scaledobjects.yaml), or a skip naming the folders searched."""
    path = crd_lookup.find_crd_file(name)
    if path is None:
        pytest.skip(crd_lookup.missing_message(name))
    return path


class CrdNotFound(LookupError):
    """No CRD for this group and kind in the folders searched."""


@functools.lru_cache(maxsize=None)
def load_crds(dirs: tuple[Path, ...]) -> dict[tuple[str, str], dict]:
    """Every CustomResourceDefinition in the folders, by (group, kind); the first folder holding one wins."""
    crds = {}
    for folder in dirs:
        for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else ():
            for doc in crd_documents(path):
                if doc.get("kind") == "CustomResourceDefinition":
                    crds.setdefault((doc["spec"]["group"], doc["spec"]["names"]["kind"]), doc)
    return crds


def crd_documents(path: Path) -> list[dict]:
    """The file's YAML documents (empty ones left out), parsed once per content and kept as JSON."""
    data = path.read_bytes()
    parsed = PARSED_CRDS / f"{hashlib.sha256(data).hexdigest()}.json"
    if parsed.is_file():
        return json.loads(parsed.read_text())
    # libyaml's loader: the pure-Python one takes half a minute over these files.
    documents = [doc for doc in load_yaml_all(data) if doc]
    try:
        text = json.dumps(documents)
        if json.loads(text) == documents:  # JSON holds it exactly (no dates, no non-string keys)
            PARSED_CRDS.mkdir(parents=True, exist_ok=True)
            scratch = parsed.with_suffix(f".{os.getpid()}.tmp")
            scratch.write_text(text)
            scratch.replace(parsed)  # atomic: another worker reads a whole file or none
    except (OSError, TypeError, ValueError):  # a read-only checkout, or a document JSON cannot hold
        pass
    return documents


def missing_crd(group: str, kind: str, dirs: tuple[Path, ...]) -> str:
    """Why a test needing this CRD skips: the folders searched and the fix."""
    return crd_lookup.missing_message(f"CRD for {kind}.{group}", dirs)


def find_crd(api_version: str, kind: str, dirs: tuple[Path, ...] | None = None) -> dict:
    """The CRD version (its entry under spec.versions) that serves apiVersion/kind."""
    dirs = crd_dirs() if dirs is None else dirs
    group, _, version = api_version.rpartition("/")
    crd = load_crds(dirs).get((group, kind))
    if crd is None:
        raise CrdNotFound(missing_crd(group, kind, dirs))
    served = {v["name"]: v for v in crd["spec"]["versions"] if v.get("served")}
    if version not in served:
        raise CrdNotFound(f"{crd['metadata']['name']} serves {sorted(served)}, not {version}")
    return served[version]


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


def _list_type(validator, list_type, instance, schema):
    if not isinstance(instance, list) or list_type not in ("map", "set"):
        return
    keys = schema.get("x-kubernetes-list-map-keys") if list_type == "map" else None
    seen = [tuple(item.get(k) for k in keys) if keys else repr(item) for item in instance]
    if len(seen) != len(set(seen)):
        yield jsonschema.ValidationError(f"duplicate entries in a list-type={list_type} list (keys {keys})")


# The CEL rules are evaluated by walk_rules below, which knows each value's path and old value.
_CrdValidator = jsonschema.validators.extend(jsonschema.Draft7Validator, {"x-kubernetes-list-type": _list_type})


@functools.lru_cache(maxsize=None)
def _schema_validator(crd_name: str, version: str, dirs: tuple[Path, ...]):
    crd = next(c for c in load_crds(dirs).values() if c["metadata"]["name"] == crd_name)
    schema = next(v for v in crd["spec"]["versions"] if v["name"] == version)["schema"]["openAPIV3Schema"]
    return _CrdValidator(_strict(copy.deepcopy(schema)))


def _with_defaults(schema: dict, value):
    """The value as the API server stores it: `default`s of absent properties filled in, at every level."""
    if isinstance(value, dict):
        value = dict(value)
        for name, prop in (schema.get("properties") or {}).items():
            if name not in value and "default" in prop:
                value[name] = copy.deepcopy(prop["default"])
        for name in list(value):
            sub = (schema.get("properties") or {}).get(name)
            if sub is None and isinstance(schema.get("additionalProperties"), dict):
                sub = schema["additionalProperties"]
            if sub is not None:
                value[name] = _with_defaults(sub, value[name])
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        value = [_with_defaults(schema["items"], item) for item in value]
    return value


def _to_cel(schema: dict, value):
    """The value as a CEL rule sees it: declared property names escaped, integers of `number` fields as doubles."""
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties") if isinstance(schema.get("additionalProperties"), dict) else {}
        return {(k8s_cel.escape_property(k) if k in props else k): _to_cel(props.get(k, extra), v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_to_cel(schema.get("items") or {}, item) for item in value]
    if schema.get("type") == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


_RULE_KEYS = {"rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf"}


def rule_sites(schema: dict, pointer: str = "") -> list[tuple[str, int, dict]]:
    """(schema pointer, index, rule) of every x-kubernetes-validations rule the API server evaluates."""
    sites = [(pointer, i, rule) for i, rule in enumerate(schema.get("x-kubernetes-validations") or [])]
    for name, sub in (schema.get("properties") or {}).items():
        sites += rule_sites(sub, f"{pointer}/properties/{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            sites += rule_sites(schema[key], f"{pointer}/{key}")
    return sites


_ABSENT = object()


def _correlated(schema: dict, old, key, item=None):
    """The old value at the same place (the API server's ratcheting correlation), or _ABSENT."""
    if old is _ABSENT:
        return _ABSENT
    if isinstance(key, str):
        return old.get(key, _ABSENT) if isinstance(old, dict) else _ABSENT
    # Only items of list-type=map lists correlate, by their keys; set and atomic lists do not.
    keys = schema.get("x-kubernetes-list-map-keys")
    if schema.get("x-kubernetes-list-type") != "map" or not keys or not isinstance(old, list) \
            or not isinstance(item, dict):
        return _ABSENT
    return next((o for o in old if isinstance(o, dict) and all(o.get(k) == item.get(k) for k in keys)), _ABSENT)


def walk_rules(schema: dict, value, old=_ABSENT, path: str = "", pointer: str = "", seen: set | None = None):
    """Errors of every CEL rule at every level of the value, as the API server evaluates them.

    A transition rule (one that references oldSelf) runs only where an old value correlates, i.e. on update;
    with optionalOldSelf it also runs on create, with oldSelf = optional.none(). Those are the only rules skipped,
    and only when they reference oldSelf. `seen` collects (pointer, index) of each rule evaluated.
    """
    errors = []
    rules = schema.get("x-kubernetes-validations") or []
    cel_self = _to_cel(schema, value) if rules else None
    cel_old = None if old is _ABSENT or not rules else _to_cel(schema, old)
    for index, rule in enumerate(rules):
        unknown = set(rule) - _RULE_KEYS
        if unknown:
            raise k8s_cel.CelError(f"{pointer}: rule fields this validator does not know: {sorted(unknown)}")
        transition = bool(k8s_cel.REFERENCES_OLD_SELF.search(rule["rule"]))
        optional = bool(rule.get("optionalOldSelf"))
        if transition and old is _ABSENT and not optional:
            continue
        program = k8s_cel.compile_rule(rule["rule"], optional and transition, old is not _ABSENT)
        if seen is not None:
            seen.add((pointer, index))
        try:
            result = k8s_cel.evaluate(program, cel_self, cel_old)
        except k8s_cel.CelError as error:
            errors.append(f"{path}: rule {rule['rule']!r} failed to evaluate: {error}")
            continue
        if not isinstance(result, bool):
            raise k8s_cel.CelError(f"{pointer}: rule {rule['rule']!r} returned {result!r}, not a bool")
        if not result:
            message = rule.get("message") or f"failed rule: {rule['rule']}"
            if "messageExpression" in rule:
                message = k8s_cel.evaluate(k8s_cel.compile_rule(rule["messageExpression"]), cel_self, cel_old)
            where = path + (rule.get("fieldPath") or "").replace(".", "/")
            errors.append(f"{where}: {message}")
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, sub_value in value.items():
            sub = props.get(key) or (extra if isinstance(extra, dict) and key not in props else None)
            if sub is not None:
                sub_pointer = f"{pointer}/properties/{key}" if key in props else f"{pointer}/additionalProperties"
                errors += walk_rules(sub, sub_value, _correlated(schema, old, key), f"{path}/{key}".lstrip("/"),
                                     sub_pointer, seen)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            errors += walk_rules(schema["items"], item, _correlated(schema, old, i, item), f"{path}/{i}".lstrip("/"),
                                 f"{pointer}/items", seen)
    return errors


def crd_errors(obj: dict, old: dict | None = None, dirs: tuple[Path, ...] | None = None,
               seen: set | None = None) -> list[str]:
    """Schema and CEL errors of a custom resource against the CRD version its apiVersion names (`old`: an update).

    Skips the calling test when no CRD for the object is found (a plain clone without ../shared).
    """
    dirs = crd_dirs() if dirs is None else dirs
    try:
        version = find_crd(obj["apiVersion"], obj["kind"], dirs)
    except CrdNotFound as missing:
        pytest.skip(str(missing))
    crd_name = next(c for c in load_crds(dirs).values()
                    if c["spec"]["names"]["kind"] == obj["kind"]
                    and c["spec"]["group"] == obj["apiVersion"].rpartition("/")[0])["metadata"]["name"]
    schema = version["schema"]["openAPIV3Schema"]
    validator = _schema_validator(crd_name, version["name"], dirs)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(obj)]
    stored = _with_defaults(schema, obj)
    old_stored = _ABSENT if old is None else _with_defaults(schema, old)
    return errors + walk_rules(schema, stored, old_stored, seen=seen)


# API groups whose CRDs the tests read (CRD_SUBDIRS); every rendered object of these groups is checked.
CRD_GROUPS = ("nvidia.com", "keda.sh", "gateway.networking.k8s.io", "inference.networking.k8s.io")


def custom_resources(objects: list[dict]) -> list[dict]:
    """The rendered objects that a CRD under CRD_SUBDIRS defines."""
    return [o for o in objects if o["apiVersion"].rpartition("/")[0] in CRD_GROUPS]


def dgd_errors(dgd: dict) -> list[str]:
    """Schema and CEL errors of a DynamoGraphDeployment against the CRD version its apiVersion names."""
    return crd_errors(dgd)


def kubernetes_errors(obj: dict, kubernetes_version: str) -> list[str]:
    """Errors of a core object against the official schema of that Kubernetes version (strict)."""
    try:
        kubernetes_validate.validate(obj, kubernetes_version, strict=True)
    except kubernetes_validate.ValidationError as error:
        return [f"{'/'.join(map(str, error.path))}: {error.message}"]
    return []
