"""values.schema.json: every overlay is valid, and wrong types and unknown keys are refused by Helm."""
import json

import jsonschema
import pytest

from tests.helpers import CHART_DIR, OVERLAYS, ChartRenderError, deep_merge, load_values, render_chart
from tools.gptoss.yaml_text import load_yaml

SCHEMA = json.loads((CHART_DIR / "values.schema.json").read_text())
DEFAULTS = load_yaml((CHART_DIR / "values.yaml").read_text())


@pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
def test_should_validate_each_overlay_with_the_defaults(overlay):
    jsonschema.validate(deep_merge(DEFAULTS, load_values([overlay])), SCHEMA)


def test_should_validate_the_defaults():
    jsonschema.validate(DEFAULTS, SCHEMA)


@pytest.mark.parametrize("values,message", [
    ({"workers": {"worker": {"tensorParallelSize": "4"}}}, "at '/workers/worker/tensorParallelSize': got string, want integer"),
    ({"workers": {"worker": {"tensorParallelSize": 3}}}, "at '/workers/worker/tensorParallelSize': value must be one of 1, 2, 4, 8"),
    ({"workers": {"worker": {"replicas": 0}}}, "at '/workers/worker/replicas': minimum: got 0, want 1"),
    ({"benchmark": {"concurrencyPerGpu": 0}}, "at '/benchmark/concurrencyPerGpu': minimum: got 0, want 1"),
    ({"gpu": {"type": "A100"}}, "at '/gpu/type': value must be one of 'GB200', 'B200', 'H200', 'H100'"),
    ({"gpu": {"nodeArch": "x86_64"}}, "at '/gpu/nodeArch': value must be one of 'arm64', 'amd64'"),
    ({"workers": {"overrideQuantAlgo": "FP8"}}, "at '/workers/overrideQuantAlgo': value must be one of '', 'W4A16_MXFP4', 'W4A8_MXFP4_MXFP8', 'W4A8_MXFP4_FP8'"),
    ({"frontend": {"routerMode": "fastest"}}, "at '/frontend/routerMode': value must be one of 'round-robin', 'random', 'power-of-two', 'kv', 'direct', 'least-loaded', 'device-aware-weighted'"),
    ({"dynamo": {"apiVersion": "nvidia.com/v2"}}, "at '/dynamo/apiVersion': value must be one of 'nvidia.com/v1beta1', 'nvidia.com/v1alpha1'"),
    ({"dynamo": {"image": {"tag": "latest"}}}, "at '/dynamo/image/tag'"),
    ({"workers": {"worker": {"maxNumTokens": -1}}}, "at '/workers/worker/maxNumTokens': minimum: got -1, want 1"),
    ({"benchmark": {"inputTokensMean": 0}}, "at '/benchmark/inputTokensMean': minimum: got 0, want 1"),
    ({"bogus": 1}, "additional properties 'bogus' not allowed"),
    ({"workers": {"worker": {"tensorParalelSize": 4}}}, "at '/workers/worker': additional properties 'tensorParalelSize' not allowed"),
    ({"benchmark": {"concurency": 10}}, "at '/benchmark': additional properties 'concurency' not allowed"),
    ({"runtime": "vllm"}, "at '/runtime': value must be one of 'dynamo', 'trtllm-serve'"),
    ({"trtllmServe": {"gpus": 2}}, "at '/trtllmServe/gpus': value must be one of 1, 4, 8"),
    ({"trtllmServe": {"moeBackend": {"hopper": "triton"}}}, "at '/trtllmServe/moeBackend/hopper': value must be one of 'CUTLASS', 'TRTLLM', 'TRITON'"),
    ({"trtllmServe": {"image": {"tag": "latest"}}}, "at '/trtllmServe/image/tag'"),
    ({"benchmark": {"concurrencyFrom": "slots"}}, "at '/benchmark/concurrencyFrom': value must be one of 'gpus', 'decodeSlots'"),
])
def test_should_refuse_wrong_values_naming_the_key(values, message):
    with pytest.raises(ChartRenderError) as error:
        render_chart(["agg.yaml"], values)
    assert message in str(error.value)


def _leaves(node, path=""):
    """(path, schema) of every leaf property in the schema."""
    if node.get("type") == "object" and "properties" in node:
        for key, child in node["properties"].items():
            yield from _leaves(child, f"{path}.{key}" if path else key)
    else:
        yield path, node


def test_should_describe_every_leaf():
    missing = [path for path, node in _leaves(SCHEMA) if not node.get("description")]
    assert not missing


def test_should_close_every_object_but_declared_free_form_maps():
    free_form = {"global", "modelCache.download.affinity", "securityContext.pod", "securityContext.container",
                 "workers.worker.engine", "workers.prefill.engine", "workers.decode.engine",
                 "workers.componentFields", "trtllmServe.engine",
                 # Autoscaling: HPA behavior, a KEDA trigger or an HPA metric, passed through whole.
                 *(f"{role}.autoscaling.{key}" for role in ("frontend", "workers.worker", "workers.prefill",
                                                             "workers.decode", "trtllmServe")
                   for key in ("behavior", "trigger", "metric"))}
    def walk(node, path=""):
        if node.get("type") == "object":
            if node.get("additionalProperties") is True:
                yield path
            for key, child in node.get("properties", {}).items():
                yield from walk(child, f"{path}.{key}" if path else key)
    assert set(walk(SCHEMA)) <= free_form
