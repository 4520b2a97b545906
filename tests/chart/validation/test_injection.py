"""No value can change the structure of a rendered document (issue 44): every string value reaches YAML quoted, or the
schema or a rule refuses it naming its key.

The string leaves come from walking the values schema (charts/gpt-oss/values.schema.json) over the values of each
case: every key the schema types as a string, every string of a list the schema types, a probe entry in every map of
strings, and every string inside a free-form object (annotations, tolerations, NetworkPolicy peers). A new value is
covered without editing this file. Each case is the chart's defaults with every optional component on, for one runtime
and one model source, so each leaf reaches the templates that write it.

Every leaf gets a newline-and-key suffix (`\\n<marker>: true`) at once, each its own marker, in one render. Helm's
schema names every leaf it refuses at once; a cross-field rule names one, and the render repeats without it. What
renders must have exactly the structure of a render of the same values without the suffixes (same documents, keys,
list lengths, non-string scalars; embedded YAML and JSON documents of ConfigMaps too), no marker key anywhere, and each
leaf's suffixed value whole (newline kept) in every scalar its marker reaches. Two or three renders per case instead
of one per leaf: the suite's 40-second budget (docs/testing.md).
"""
from __future__ import annotations

import json
import pickle
import re

import pytest
import yaml

from tests.helpers import CHART_DIR, ChartRenderError, deep_merge, parse_manifests, render_manifests
from tools.gptoss.yaml_text import load_yaml

SCHEMA = json.loads((CHART_DIR / "values.schema.json").read_text())
DEFAULTS = load_yaml((CHART_DIR / "values.yaml").read_text())
MARKER = "gptOssInjected"
PROBE_KEY = "gpt-oss-probe"
SCHEMA_ERROR = re.compile(r"^\s*- at '(/[^']*)': (?!validation failed)", re.MULTILINE)
DIGEST = "sha256:" + "5" * 64

# Every optional component on, with a value in every optional string the component reads (so the string reaches its
# template): one set per runtime, and per model source what that source reads.
API_SERVER = [{"ipBlock": {"cidr": "10.0.0.10/32"}}]
COMPONENTS = {
    "networkPolicy": {"enabled": True, "clients": [{"namespaceSelector": {"matchLabels": {"team": "apps"}}}],
                      "apiServer": {"to": API_SERVER}, "downloadEgressTo": [{"ipBlock": {"cidr": "192.0.2.0/24"}}],
                      "prometheus": {"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}]}},
    "monitoring": {"podMonitor": {"enabled": True, "labels": {"release": "kube-prometheus"}},
                   "prometheusRule": {"enabled": True, "labels": {"release": "kube-prometheus"}}},
    "ingress": {"enabled": True, "className": "nginx", "annotations": {"nginx.ingress.kubernetes.io/proxy-read-timeout": "3600"},
                "hosts": [{"host": "gpt-oss.example.com", "paths": [{"path": "/v1", "pathType": "Prefix"}]}],
                "tls": [{"secretName": "gpt-oss-tls", "hosts": ["gpt-oss.example.com"]}]},
    "httpRoute": {"enabled": True, "parentRefs": [{"name": "inference-gateway", "namespace": "gateway-system"}],
                  "hostnames": ["gpt-oss.example.com"], "annotations": {"team": "llm"}, "labels": {"team": "llm"}},
    "smokeTest": {"prompt": "Say ready."},
    "benchmark": {"extraArgs": ["--verbose"], "image": {"repository": "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime",
                                                        "tag": "1.7.0"}},
    "dynamo": {"imagePullSecrets": [{"name": "registry-credentials"}]},
    "huggingface": {"tokenSecret": {"name": "hf-token-secret"}},
}
RUNTIMES = {
    "dynamo": {"frontend": {"autoscaling": {"enabled": True}},
               "monitoring": {"dashboard": {"enabled": True, "namespace": "grafana", "allowedNamespaces": ["grafana"],
                                            "annotations": {"folder": "llm"}},
                              "cost": {"enabled": True, "gpuHourPrice": {"GB200": 5.5}}},
               "planner": {"enabled": True, "rbac": {"create": True}, "image": {"tag": "1.7.0"}},
               "workers": {"extraArgs": ["--log-level", "info"], "nodeSelector": {"pool": "gpu"},
                           "worker": {"attentionDP": False, "env": {"NCCL_DEBUG": "WARN"}}},
               "dynamo": {"runtimeVersionOverride": "1.7.0", "topologyConstraint": {"clusterTopologyName": "gb200-racks",
                                                                                    "packDomain": "rack"}}},
    "trtllm-serve": {"runtime": "trtllm-serve", "gpu": {"type": "B200"}, "inferencePool": {"enabled": True},
                     "trtllmServe": {"autoscaling": {"enabled": True}, "env": {"NCCL_DEBUG": "WARN"},
                                     "nodeSelector": {"pool": "gpu"}}},
}
SOURCES = {
    "huggingface": {"manifestSha256": "5" * 64, "existingClaim": "shared-models", "storageClassName": "fast",
                    "huggingface": {"endpoint": "https://hf-mirror.example.com", "sendTokenToMirror": True},
                    "proxy": {"httpsProxy": "http://proxy.example.com:3128", "noProxy": "10.0.0.0/8"},
                    "caBundle": {"configMap": "corp-ca"}, "download": {"pipInstall": ["tqdm==4.67.1"],
                                                                      "nodeSelector": {"pool": "cpu"}}},
    # The Secret of keys would conflict with the workload identity; its names and keys have patterns, which the
    # schema checks in every case.
    "s3": {"source": "s3", "manifestSha256": "5" * 64, "storageClassName": "fast",
           "s3": {"endpoint": "https://minio.example.com", "bucket": "models", "prefix": "gpt-oss/120b",
                  "serviceAccount": {"create": True, "name": "model-reader",
                                     "annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/reader"}}},
           "proxy": {"existingSecret": "corp-proxy"}, "caBundle": {"secret": "corp-ca"}},
    "oci-image-volume": {"source": "oci", "manifestSha256": "5" * 64,
                         "oci": {"repository": "registry.example.com/models/gpt-oss-120b", "digest": DIGEST}},
}
# Each model source that renders strings of its own once, with either runtime: the download Job, the init containers
# and the benchmark are the same helpers in both runtimes, and each runtime renders every component of its own. (Sources
# pvc and oci with mount pull render only values with a pattern, which the schema checks in every case.)
CASES = [("dynamo", "huggingface"), ("dynamo", "oci-image-volume"), ("trtllm-serve", "s3")]


def case_values(runtime: str, source: str) -> dict:
    values = deep_merge(COMPONENTS, RUNTIMES[runtime])
    return deep_merge(values, {"modelCache": SOURCES[source]})


# --- the leaves -------------------------------------------------------------------------------------------------------

def types(node: dict) -> list[str]:
    kind = node.get("type", [])
    return [kind] if isinstance(kind, str) else kind


def free_form_leaves(value, path: tuple):
    """Every string inside a value the schema leaves free-form."""
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from free_form_leaves(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from free_form_leaves(item, path + (index,))


def schema_leaves(node: dict, value, path: tuple = ()):
    """(path, value) of every string leaf of `value` under schema `node`; a probe entry (path ending in PROBE_KEY, or
    an index one past the end) where a map or list of strings would be empty of them."""
    if "string" in types(node) and (value is None or isinstance(value, str)):
        yield path
        return
    if isinstance(value, dict):
        properties = node.get("properties", {})
        extra = node.get("additionalProperties")
        for key, item in value.items():
            if key in properties:
                yield from schema_leaves(properties[key], item, path + (key,))
            elif isinstance(extra, dict):
                yield from schema_leaves(extra, item, path + (key,))
            else:
                yield from free_form_leaves(item, path + (key,))
        if isinstance(extra, dict) and "string" in types(extra) and "properties" not in node:
            yield path + (PROBE_KEY,)
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        items = node["items"]
        for index, item in enumerate(value):
            yield from schema_leaves(items, item, path + (index,))
        if "string" in types(items) and not value:
            yield path + (0,)


def get_path(values, path):
    for part in path:
        if isinstance(values, dict):
            values = values.get(part)
        elif isinstance(values, list) and part < len(values):
            values = values[part]
        else:
            return None
    return values


def set_path(values, path, leaf):
    for part in path[:-1]:
        values = values[part]
    if isinstance(values, list) and path[-1] == len(values):
        values.append(leaf)
    else:
        values[path[-1]] = leaf


def dotted(path) -> str:
    return ".".join(str(part) for part in path)


def names(path) -> list[str]:
    """How a refusal may name the leaf: its key, or the key of the list or map that holds it."""
    keys = [part for part in path if isinstance(part, str)]
    candidates = [".".join(keys)]
    if any(isinstance(part, int) for part in path) or path[-1] == PROBE_KEY:
        parent = list(path[:next((i for i, p in enumerate(path) if isinstance(p, int)), len(path) - 1)])
        candidates.append(".".join(parent))
    return candidates


def pointer(path) -> str:
    return "/" + "/".join(str(part).replace("~", "~0").replace("/", "~1") for part in path)


# --- renders and their shape ------------------------------------------------------------------------------------------

def embedded(text: str):
    """A ConfigMap's data value as the document it holds (YAML or JSON), or None."""
    try:
        document = json.loads(text) if text.lstrip()[:1] in ("{", "[") else load_yaml(text)
    except (ValueError, yaml.YAMLError):
        return None
    return document if isinstance(document, (dict, list)) else None


def shape(node):
    """The structure of a rendered tree: keys, list lengths and non-string scalars; every string as "str"."""
    if isinstance(node, dict):
        return {key: shape(item) for key, item in node.items()}
    if isinstance(node, list):
        return [shape(item) for item in node]
    return "str" if isinstance(node, str) else node


def documents(objects: list[dict]) -> list:
    """The rendered objects, and the documents their ConfigMaps embed."""
    found = list(objects)
    for obj in objects:
        if obj.get("kind") == "ConfigMap":
            for key in sorted(obj.get("data") or {}):
                inner = embedded(obj["data"][key])
                if inner is not None:
                    found.append({"embedded": f"{obj['metadata']['name']}/{key}", "document": inner})
    return found


def strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, item in node.items():
            yield key
            yield from strings(item)
    elif isinstance(node, list):
        for item in node:
            yield from strings(item)


def markers(node, path=""):
    """Keys that carry an injection marker, where they are."""
    if isinstance(node, dict):
        for key, item in node.items():
            if isinstance(key, str) and key.startswith(MARKER):
                yield f"{path}/{key}"
            yield from markers(item, f"{path}/{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from markers(item, f"{path}/{index}")


def render(values: dict) -> list[dict]:
    manifests = render_manifests(values=values)
    try:
        return parse_manifests(manifests)
    except yaml.YAMLError as error:
        pytest.fail(f"a suffixed value broke a rendered document (its YAML no longer parses): {error}")


# --- the test ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("runtime,source", CASES, ids=[f"{runtime}-{source}" for runtime, source in CASES])
def test_should_keep_every_string_value_one_scalar_or_refuse_it(runtime, source):
    base = case_values(runtime, source)
    full = deep_merge(DEFAULTS, base)
    leaves = list(dict.fromkeys(schema_leaves(SCHEMA, full)))
    assert len(leaves) > 100, leaves
    plain, hostile = {}, {}
    for index, path in enumerate(leaves):
        current = get_path(full, path)
        plain[path] = current if isinstance(current, str) and current else f"probe{index}"
        hostile[path] = f"{plain[path]}\n{MARKER}{index}: true"

    frozen = pickle.dumps(full, protocol=pickle.HIGHEST_PROTOCOL)

    def values_with(text: dict, paths) -> dict:
        values = pickle.loads(frozen)  # a deep copy, in C
        for path in paths:
            set_path(values, path, text[path])
        return values

    accepted, refused = list(leaves), {}
    for _ in range(len(leaves)):
        try:
            injected = render(values_with(hostile, accepted))
            break
        except ChartRenderError as error:
            message = str(error)
        at = {match.group(1) for match in SCHEMA_ERROR.finditer(message)}
        if at:
            named = [path for path in accepted if pointer(path) in at]
            unknown = at - {pointer(path) for path in named}
            assert not unknown, f"the schema refused values no leaf set: {sorted(unknown)}\n{message}"
        else:
            named = [path for path in accepted if any(name in message and re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", message)
                                                      for name in names(path))]
            # A rule that prints the value it refuses: the leaves whose suffix it shows, not the keys it merely mentions.
            shown = [path for path in named if f"{MARKER}{leaves.index(path)}: true" in message]
            named = shown or named
            assert named, f"a refusal that names none of the suffixed values:\n{message}"
        for path in named:
            refused[path] = message
            accepted.remove(path)
    else:
        pytest.fail("the chart kept refusing")
    reference = render(values_with(plain, accepted))

    injected_docs, reference_docs = documents(injected), documents(reference)
    assert list(markers(injected_docs)) == [], f"values became keys: {list(markers(injected_docs))}"
    assert len(injected_docs) == len(reference_docs)
    for got, want in zip(injected_docs, reference_docs):
        assert shape(got) == shape(want), f"a value changed the structure of {want.get('kind', want.get('embedded'))}"
    carriers: dict[int, list[str]] = {}
    for text in strings(injected_docs):
        if MARKER in text:
            for index in set(re.findall(rf"{MARKER}(\d+): true", text)):
                carriers.setdefault(int(index), []).append(text)
    for index, path in enumerate(leaves):
        if path in accepted:
            whole = (hostile[path], json.dumps(hostile[path])[1:-1])
            assert all(any(form in text for form in whole) for text in carriers.get(index, [])), \
                f"{dotted(path)}: its value reached a scalar split or folded: {carriers[index]}"
    # The render exercised what it claims: the suffixed values that render reached the templates, whole.
    # Since issue 55 the schema refuses a line feed in every string but an annotation's value and a free-form map's;
    # since issue 53 tolerations, NetworkPolicy peers, security contexts and label values are Kubernetes types, no
    # longer free-form maps, so what reaches the templates is mostly annotations, Gateway API fields and scripts' text.
    reached = [path for index, path in enumerate(leaves) if path in accepted and index in carriers]
    assert len(reached) > 8, sorted(dotted(path) for path in reached)
