"""Write ci/generate/kubernetes-definitions.json (the Kubernetes types the chart passes through) and the patterns.

usage: python -m ci.generate kubernetes-schema [--check]
The chart's passthrough values (tolerations, affinity, securityContext, resources, NetworkPolicy peers, Ingress TLS,
HPA behavior and metrics) go into objects unchanged, so their schema is Kubernetes' own: the OpenAPI v3 of the
k8s.io/kubernetes module ci/cluster/go/kubernetes/go.mod pins (api/openapi-spec/v3), read from the Go module cache
(`go mod download` against that go.mod and its go.sum). Only the definitions the chart uses and what they refer to,
as draft-07 JSON schema Helm's validator reads: $refs to #/definitions, descriptions cut to their first sentence,
objects closed (an API server drops an unknown field; here a misspelt one is refused), int-or-string and quantities
as anyOf [integer or number, string] with the quantity pattern (Helm's validator knows no OpenAPI extension).
OpenAPI does not carry what the API server's validation code checks; RULES adds the rules the chart needs, their
patterns built from the constants of the pinned k8s.io/apimachinery (DNS-1123 names, label keys and values, env var
names), the rest (CIDRs, IDs, non-negative resources) from the validation functions named beside each.
ci/generate/schema.py merges the file into values.schema.json's definitions; values.schema.yaml refers to them.
The same patterns, with CIDR_PATTERN and QUANTITY_PATTERN, go to templates/validation/_kubernetes-patterns.tpl for the
rules a schema cannot word with the key named (map keys: Helm's validator reports a bad property name at '', not at its
map) or cannot hold (requests at most limits, a CIDR's host bits): templates/validation/_check-passthroughs.tpl.
--check writes nothing and exits 1 when the file is stale (python -m ci.generate --check runs it).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from . import REPO, check_only, write_generated

TARGET = REPO / "ci" / "generate" / "kubernetes-definitions.json"
PATTERNS = REPO / "charts" / "gpt-oss" / "templates" / "validation" / "_kubernetes-patterns.tpl"
# The Go part whose go.mod pins the Kubernetes the cluster tier builds (read as data: this room imports no other).
PART = REPO / "ci" / "cluster" / "go" / "kubernetes"
SPECS = ("api__v1_openapi.json", "apis__networking.k8s.io__v1_openapi.json", "apis__autoscaling__v2_openapi.json")
# The types values.schema.yaml refers to; what they refer to comes along.
ROOTS = (
    "io.k8s.api.core.v1.Toleration", "io.k8s.api.core.v1.Affinity", "io.k8s.api.core.v1.PodSecurityContext",
    "io.k8s.api.core.v1.SecurityContext", "io.k8s.api.networking.v1.NetworkPolicyPeer",
    "io.k8s.api.networking.v1.NetworkPolicyEgressRule", "io.k8s.api.networking.v1.IngressTLS",
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerBehavior", "io.k8s.api.autoscaling.v2.MetricSpec",
)
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
# resource.Quantity's grammar (apimachinery's quantity.go; the pattern controller-gen writes into CRDs).
QUANTITY_PATTERN = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)"
                    r"|(\.[0-9]+))))?$")
INT32 = {"minimum": -2147483648, "maximum": 2147483647}
# IsValidUserID / IsValidGroupID (apimachinery validation.go): 0 to math.MaxInt32.
ID = {"minimum": 0, "maximum": 2147483647}
# IPBlock.cidr under StrictIPCIDRValidation (apimachinery ip.go, parseCIDR strict): no leading zeros, no IPv4-mapped
# IPv6; and canonical as IsValidCIDR wants it: lower-case hexadecimal, no leading zero in a group.
_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_GROUP = r"(0|[1-9a-f][0-9a-f]{0,3})"
_IPV6 = "|".join([
    rf"({_GROUP}:){{7}}{_GROUP}", rf"({_GROUP}:){{1,7}}:", rf"({_GROUP}:){{1,6}}:{_GROUP}",
    *(rf"({_GROUP}:){{1,{5 - n}}}(:{_GROUP}){{1,{n + 2}}}" for n in range(5)), rf":((:{_GROUP}){{1,7}}|:)"])
CIDR_PATTERN = (rf"^({_OCTET}\.){{3}}{_OCTET}/(3[0-2]|[12]?[0-9])$|^({_IPV6})/(12[0-8]|1[01][0-9]|[1-9]?[0-9])$")


class SourceMissing(LookupError):
    """The pinned module is not in the Go module cache and cannot be downloaded."""


def module_dir(module: str) -> Path:
    """Where the Go module cache holds `module` at the version PART's go.mod pins (checked against its go.sum)."""
    try:
        result = subprocess.run(["go", "mod", "download", "-json", module], cwd=PART, capture_output=True, text=True,
                                timeout=600, env={**os.environ, "GOFLAGS": "-mod=readonly"})
    except FileNotFoundError:
        raise SourceMissing(f"{module}: no go command on PATH") from None
    info = json.loads(result.stdout or "{}")
    if result.returncode or info.get("Error") or not info.get("Dir"):
        raise SourceMissing(f"{module}: {info.get('Error') or result.stderr.strip()}")
    return Path(info["Dir"])


def go_constants(*files: Path) -> dict[str, str | int]:
    """The string and int constants of Go files (`const name [type] = "a" + other + `b``), evaluated."""
    found: dict[str, str | int] = {}
    for path in files:
        for name, expr in re.findall(r"^const (\w+)(?: \w+)? *= *(.+?)\s*$", path.read_text(), re.M):
            parts = re.findall(r'"(?:[^"\\]|\\.)*"|`[^`]*`|[\w.]+', expr)
            if len(parts) == 1 and parts[0].isdigit():
                found[name] = int(parts[0])
                continue
            value = ""
            for part in parts:
                if part.startswith('"'):
                    value += json.loads(part)
                elif part.startswith("`"):
                    value += part[1:-1]
                elif part in found and isinstance(found[part], str):
                    value += found[part]
                else:
                    break
            else:
                found[name] = value
    return found


def api_server_patterns(apimachinery: Path) -> dict[str, dict]:
    """The API server's name rules the chart applies, from apimachinery's constants (validate/content, validation)."""
    c = go_constants(apimachinery / "pkg/api/validate/content/dns.go",
                     apimachinery / "pkg/api/validate/content/kube.go",
                     apimachinery / "pkg/util/validation/validation.go")
    # A qualified name's name part: at most labelKeyMaxLength characters, the pattern with the length spelt out.
    name = (f"({c['labelKeyCharFmt']}{c['labelKeyExtCharFmt']}{{0,{c['labelKeyMaxLength'] - 2}}})?"
            f"{c['labelKeyCharFmt']}")
    subdomain = c["dns1123SubdomainFmt"]
    return {
        # IsDNS1123Subdomain: an Ingress rule's host, a TLS host, an HTTPRoute hostname (no scheme, port or upper case).
        "k8s.hostname": {"type": "string", "maxLength": c["DNS1123SubdomainMaxLength"], "pattern": f"^{subdomain}$"},
        # IsWildcardDNS1123Subdomain beside it: a wildcard only as the whole first label (*.example.com).
        "k8s.wildcardHostname": {"type": "string", "maxLength": c["DNS1123SubdomainMaxLength"],
                                 "pattern": f"^(\\*\\.)?{subdomain}$"},
        # IsQualifiedName: a label, annotation or resource name key: [prefix/]name.
        "k8s.qualifiedName": {"type": "string", "maxLength": c["DNS1123SubdomainMaxLength"] + 1 + c["labelKeyMaxLength"],
                              "pattern": f"^({subdomain}/)?{name}$"},
        # IsDNS1123Label (ValidateNamespaceName): a namespace a pod affinity term names.
        "k8s.namespace": {"type": "string", "maxLength": c["DNS1123LabelMaxLength"],
                          "pattern": f"^{c['dns1123LabelFmt']}$"},
        # IsValidLabelValue: empty, or a name part.
        "k8s.labelValue": {"type": "string", "maxLength": c["LabelValueMaxLength"], "pattern": f"^({name})?$"},
        # IsEnvVarName (the pod's env[].name).
        "k8s.envVarName": {"type": "string", "pattern": f"^{c['envVarNameFmt']}$"},
        # ValidateResourceQuantityValue: a resource request or limit is a quantity, never negative.
        "k8s.resourceQuantity": {"anyOf": [{"type": "string", "pattern": QUANTITY_PATTERN.replace(r"^(\+|-)?", r"^\+?")},
                                           {"type": "number", "minimum": 0}]},
    }


# Rules of the API server's validation (k8s.io/kubernetes pkg/apis/core/validation, networking/validation) added to
# the OpenAPI types: definition -> property -> keywords (a $ref replaces the property's schema).
RULES = {
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector": {
        "matchLabels": {"propertyNames": {"$ref": "#/definitions/k8s.qualifiedName"},
                        "additionalProperties": {"$ref": "#/definitions/k8s.labelValue"}}},
    "io.k8s.api.core.v1.Toleration": {"effect": {"enum": ["", "NoSchedule", "PreferNoSchedule", "NoExecute"]},
                                      "operator": {"enum": ["", "Exists", "Equal", "Lt", "Gt"]}},
    "io.k8s.api.core.v1.NodeSelectorRequirement": {"operator": {"enum": ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]},
                                                   "key": {"$ref": "#/definitions/k8s.qualifiedName"},
                                                   "values": {"items": {"$ref": "#/definitions/k8s.labelValue"}}},
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement": {
        "key": {"$ref": "#/definitions/k8s.qualifiedName"}, "operator": {"enum": ["In", "NotIn", "Exists", "DoesNotExist"]},
        "values": {"items": {"$ref": "#/definitions/k8s.labelValue"}}},
    # validatePreferredSchedulingTerms, validateWeightedPodAffinityTerms: "must be in the range 1-100".
    "io.k8s.api.core.v1.PreferredSchedulingTerm": {"weight": {"minimum": 1, "maximum": 100}},
    "io.k8s.api.core.v1.WeightedPodAffinityTerm": {"weight": {"minimum": 1, "maximum": 100}},
    # Pod Security "restricted" (the level the chart's pods meet, and its examples' namespaces enforce) takes
    # RuntimeDefault or Localhost only, for seccomp and AppArmor alike; SELinux without user or role, of four types.
    "io.k8s.api.core.v1.SeccompProfile": {"type": {"enum": ["RuntimeDefault", "Localhost"]}},
    "io.k8s.api.core.v1.SELinuxOptions": {"type": {"enum": ["container_t", "container_init_t", "container_kvm_t",
                                                            "container_engine_t"]}},
    # validatePodSecurityContext's value lists (the OpenAPI states them in prose only).
    "io.k8s.api.core.v1.PodSecurityContext": {"runAsUser": ID, "runAsGroup": ID, "fsGroup": ID,
                                              "supplementalGroups": {"items": ID},
                                              "fsGroupChangePolicy": {"enum": ["OnRootMismatch", "Always"]},
                                              "seLinuxChangePolicy": {"enum": ["MountOption", "Recursive"]},
                                              "supplementalGroupsPolicy": {"enum": ["Merge", "Strict"]}},
    # validateProcMountType; Unmasked needs the pod's hostUsers false, which the chart's pods do not set.
    "io.k8s.api.core.v1.SecurityContext": {"runAsUser": ID, "runAsGroup": ID, "procMount": {"enum": ["Default"]}},
    # Pod Security restricted (baseline's sysctls check) admits only the safe sysctls, and validateSysctls a value.
    "io.k8s.api.core.v1.Sysctl": {"name": {"enum": [
        "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"]}},
    # ValidateNodeSelector: "must have at least one node selector term".
    "io.k8s.api.core.v1.NodeSelector": {"nodeSelectorTerms": {"minItems": 1}},
    # validatePodAffinityTerm: a qualified name.
    "io.k8s.api.core.v1.PodAffinityTerm": {"topologyKey": {"$ref": "#/definitions/k8s.qualifiedName"},
                                           "namespaces": {"items": {"$ref": "#/definitions/k8s.namespace"}}},
    # ValidateIngressTLS: secretName a Secret's name (a DNS-1123 subdomain) when set.
    "io.k8s.api.networking.v1.IngressTLS": {"hosts": {"items": {"$ref": "#/definitions/k8s.wildcardHostname"}},
                                            "secretName": {"$ref": "#/definitions/k8s.hostname"}},
    # ValidateMetricSpec, validateMetricTarget: their type lists.
    "io.k8s.api.autoscaling.v2.MetricSpec": {"type": {"enum": ["ContainerResource", "External", "Object", "Pods",
                                                               "Resource"]}},
    "io.k8s.api.autoscaling.v2.MetricTarget": {"type": {"enum": ["Utilization", "Value", "AverageValue"]}},
    # validateAppArmorProfileField, and Pod Security restricted (above).
    "io.k8s.api.core.v1.AppArmorProfile": {"type": {"enum": ["RuntimeDefault", "Localhost"]}},
    # validateScalingRules, validateScalingPolicy (autoscaling validation: MaxStabilizationWindowSeconds, MaxPeriodSeconds).
    "io.k8s.api.autoscaling.v2.HPAScalingRules": {"stabilizationWindowSeconds": {"minimum": 0, "maximum": 3600},
                                                  "selectPolicy": {"enum": ["Max", "Min", "Disabled"]}},
    "io.k8s.api.autoscaling.v2.HPAScalingPolicy": {"type": {"enum": ["Pods", "Percent"]}, "value": {"minimum": 1},
                                                   "periodSeconds": {"minimum": 1, "maximum": 1800}},
    # ValidateNetworkPolicyPort: a protocol of three, ports 1-65535.
    "io.k8s.api.networking.v1.NetworkPolicyPort": {"protocol": {"enum": ["TCP", "UDP", "SCTP"]},
                                                   "endPort": {"minimum": 1, "maximum": 65535}},
}


# validateSeccompProfileField, validateAppArmorProfileField: localhostProfile is required (not empty) with type
# Localhost and forbidden with any other type.
LOCALHOST_PROFILE = {"if": {"properties": {"type": {"const": "Localhost"}}},
                     "then": {"required": ["localhostProfile"], "properties": {"localhostProfile": {"minLength": 1}}},
                     "else": {"not": {"required": ["localhostProfile"]}}}
# Properties left out of the chart's types (a closed object then refuses them): the chart's images are Linux images on
# Linux nodes, and the API server checks Windows options it cannot honour there (an empty gmsaCredentialSpec, ...).
LEFT_OUT = {"io.k8s.api.core.v1.PodSecurityContext": ("windowsOptions",),
            "io.k8s.api.core.v1.SecurityContext": ("windowsOptions",),
            "io.k8s.api.core.v1.SELinuxOptions": ("user", "role"),  # Pod Security restricted forbids both
            # ValidateMatchLabelKeysAndMismatchLabelKeys: a key in both lists, or in both a list and the term's
            # labelSelector, is refused, which a schema cannot state; the chart's pods carry its own labels, which
            # such a key would name, so the two lists are left out rather than accepted unchecked.
            "io.k8s.api.core.v1.PodAffinityTerm": ("matchLabelKeys", "mismatchLabelKeys")}
# Rules of the API server across a definition's properties: definition -> keywords.
# validateNodeSelectorRequirement, ValidateLabelSelectorRequirement: In and NotIn need values, Exists and
# DoesNotExist take none, Gt and Lt one integer.
def operator_values(operators: list[str], then: dict) -> dict:
    return {"if": {"required": ["operator"], "properties": {"operator": {"enum": operators}}}, "then": then}


NEEDS_VALUES = operator_values(["In", "NotIn"], {"required": ["values"], "properties": {"values": {"minItems": 1}}})
NO_VALUES = operator_values(["Exists", "DoesNotExist"], {"properties": {"values": {"maxItems": 0}}})
ONE_INTEGER = operator_values(["Gt", "Lt"], {"required": ["values"], "properties": {"values": {
    "minItems": 1, "maxItems": 1, "items": {"pattern": "^-?[0-9]+$"}}}})
DEFINITION_RULES = {"io.k8s.api.core.v1.SeccompProfile": LOCALHOST_PROFILE,
                    "io.k8s.api.core.v1.AppArmorProfile": LOCALHOST_PROFILE,
                    "io.k8s.api.core.v1.NodeSelectorRequirement": {"allOf": [NEEDS_VALUES, NO_VALUES, ONE_INTEGER]},
                    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement": {"allOf": [NEEDS_VALUES, NO_VALUES]}}


def required_not_empty(definition: dict) -> None:
    """The API server answers "Required value" for a required string that is empty: such a property gets minLength 1."""
    for name in definition.get("required", []):
        prop = definition.get("properties", {}).get(name, {})
        if prop.get("type") == "string" and "enum" not in prop:
            prop.setdefault("minLength", 1)


def first_sentence(text: str) -> str:
    sentence = re.split(r"(?<=\.)\s+(?=[A-Z])", " ".join(text.split()), maxsplit=1)[0]
    return sentence if len(sentence) <= 160 else sentence[:157].rstrip() + "..."


def ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[1]


def convert(node, refs: set[str]):
    """One OpenAPI v3 schema node as draft-07 JSON schema (see the module's docstring); refs collects the names."""
    if isinstance(node, list):
        return [convert(item, refs) for item in node]
    if not isinstance(node, dict):
        return node
    if "allOf" in node and len(node["allOf"]) == 1 and set(node["allOf"][0]) == {"$ref"}:
        node = {**{k: v for k, v in node.items() if k != "allOf"}, **node["allOf"][0]}
    if "$ref" in node:
        refs.add(ref_name(node["$ref"]))
        return {"$ref": f"#/definitions/{ref_name(node['$ref'])}"}
    out = {}
    for key, value in node.items():
        if key.startswith("x-kubernetes-") or key in ("default", "format"):
            continue
        if key == "description":
            out[key] = first_sentence(value)
        elif key == "oneOf":
            out["anyOf"] = convert(value, refs)  # int-or-string: Helm's validator reads anyOf, no extension
        elif key == "properties":
            out[key] = {name: convert(child, refs) for name, child in value.items()}
        else:
            out[key] = convert(value, refs)
    if node.get("format") == "int32":
        out.update(INT32)
    if "properties" in out:
        out["additionalProperties"] = False
    return out


def definitions(openapi: Path, apimachinery: Path) -> dict[str, dict]:
    """ROOTS and every definition they refer to, converted, with RULES applied, by name."""
    schemas: dict[str, dict] = {}
    for spec in SPECS:
        schemas.update(json.loads((openapi / spec).read_text())["components"]["schemas"])
    out: dict[str, dict] = {}
    pending = list(ROOTS)
    while pending:
        name = pending.pop()
        if name in out:
            continue
        refs: set[str] = set()
        if name == QUANTITY:
            out[name] = {"description": first_sentence(schemas[name]["description"]),
                         "anyOf": [{"type": "string", "pattern": QUANTITY_PATTERN}, {"type": "number"}]}
        else:
            out[name] = convert(schemas[name], refs)
        pending += sorted(refs - set(out))
    for name, rules in RULES.items():
        for prop, keywords in rules.items():
            target = out[name]["properties"][prop]
            if "$ref" in keywords:
                out[name]["properties"][prop] = {"description": target.get("description", ""), **keywords}
            elif "items" in keywords:
                target["items"] = {**{k: v for k, v in target["items"].items() if "$ref" not in keywords["items"]},
                                   **keywords["items"]}
            else:
                target.update(keywords)
    for name, properties in LEFT_OUT.items():
        for prop in properties:
            del out[name]["properties"][prop]
    out.pop("io.k8s.api.core.v1.WindowsSecurityContextOptions", None)
    for name, keywords in DEFINITION_RULES.items():
        out[name].update(keywords)
    for definition in out.values():
        required_not_empty(definition)
    out.update(api_server_patterns(apimachinery))
    return dict(sorted(out.items()))


def template(apimachinery: Path) -> str:
    """_kubernetes-patterns.tpl: the same patterns for the rules a schema cannot word (map keys, CIDRs, quantities)."""
    patterns = {name.removeprefix("k8s."): node["pattern"] for name, node in api_server_patterns(apimachinery).items()
                if "pattern" in node}
    patterns["quantity"] = QUANTITY_PATTERN
    patterns["cidr"] = CIDR_PATTERN
    return "\n".join([
        "{{/*",
        "The API server's patterns (names, label values, env var names, quantities, CIDRs) as JSON, for the rules of",
        "_check-passthroughs.tpl, from the pinned k8s.io/apimachinery.",
        "Generated by python -m ci.generate kubernetes-schema; do not edit.",
        'Usage: {{ $patterns := include "gpt-oss.kubernetesPatterns" . | fromJson }}',
        "*/}}",
        '{{- define "gpt-oss.kubernetesPatterns" -}}',
        json.dumps(patterns, indent=1, sort_keys=True).replace("{{", "{{`{{`}}"),
        "{{- end }}",
    ]) + "\n"


def render() -> tuple[str, str]:
    kubernetes, apimachinery = module_dir("k8s.io/kubernetes"), module_dir("k8s.io/apimachinery")
    document = {
        "$comment": (f"Generated by python -m ci.generate kubernetes-schema from {kubernetes.name} "
                     f"(api/openapi-spec/v3) and {apimachinery.name}; do not edit."),
        "definitions": definitions(kubernetes / "api" / "openapi-spec" / "v3", apimachinery),
    }
    return json.dumps(document, indent=1) + "\n", template(apimachinery)


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    check = check_only(argv, prog, __doc__)
    try:
        definitions_text, patterns_text = render()
    except SourceMissing as missing:
        print(f"error: the pinned Kubernetes OpenAPI: {missing}", file=sys.stderr)
        return 2
    return (write_generated(TARGET, definitions_text, check, "kubernetes-schema", "the pinned Kubernetes OpenAPI",
                            "the Kubernetes types of the chart's passthrough values")
            | write_generated(PATTERNS, patterns_text, check, "kubernetes-schema", "the pinned k8s.io/apimachinery",
                              "the API server's patterns for the chart's rules"))
