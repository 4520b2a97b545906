"""What the generated group (tests/cluster/test_generated_values.py) found the API server refusing in renders the chart
accepted, fixed in the chart; each an offline regression case.

Release names, namespaces and name overrides that YAML reads as numbers stay strings in every object: Helm accepts
release name `0` and Kubernetes namespace `123`; written unquoted, YAML reads them as numbers, and the API server
refuses the object ("cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type
string"). Found by the generated group (tests/cluster/test_generated_values.py, release name `0` on every overlay).
"""
import pytest

from tests.chart.exposure.test_exposure import INGRESS, POOL, ROUTE
from tests.helpers import DOWNLOAD_JOB, PDBS, SCALED_OBJECT, ChartRenderError, deep_merge, render_chart

FEATURES = deep_merge(deep_merge(INGRESS, ROUTE), {"monitoring": {"podMonitor": {"enabled": True},
                                                                  "prometheusRule": {"enabled": True}}})
# Keys whose values Kubernetes types as strings (names, namespaces, label and annotation values).
STRING_KEYS = {"name", "namespace"}
STRING_MAPS = {"labels", "annotations", "matchLabels"}


def non_strings(node, path=""):
    """Paths under STRING_KEYS, STRING_MAPS and matchNames whose value is not a string."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            here = f"{path}.{key}"
            if key in STRING_KEYS and not isinstance(value, (str, dict, list)):
                found.append(f"{here}={value!r}")
            elif key in STRING_MAPS and isinstance(value, dict):
                found.extend(f"{here}.{k}={v!r}" for k, v in value.items() if not isinstance(v, str))
            elif key == "matchNames" and isinstance(value, list):
                found.extend(f"{here}={v!r}" for v in value if not isinstance(v, str))
            else:
                found.extend(non_strings(value, here))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(non_strings(value, f"{path}[{index}]"))
    return found


class TestNumericNames:
    @pytest.mark.parametrize("overlay,extra", [("agg.yaml", FEATURES), ("trtllm-serve-low-latency.yaml", POOL)],
                             ids=["agg.yaml", "trtllm-serve-low-latency.yaml"])
    @pytest.mark.parametrize("override", [{}, {"fullnameOverride": "null"}], ids=["release-name", "fullnameOverride"])
    def test_should_write_numeric_names_as_strings(self, overlay, extra, override):
        # A name starts with a letter (gpt-oss.checkValues.names), but true, null and no are names YAML reads as
        # other types; a namespace may be all digits.
        objects = render_chart([overlay], deep_merge(extra, override), name="true", namespace="123")
        found = [f"{o['kind']} {o['metadata']['name']}{p}" for o in objects for p in non_strings(o)]
        assert found == []


INT32_MAX = 2147483647  # batch/v1 JobSpec backoffLimit and ttlSecondsAfterFinished are int32


class TestJobIntegerFields:
    """modelCache.download's Job integers: a large one was written as a float (2147483647.0, or 1e+06 as a string),
    and one above int32 reached the API server ("cannot unmarshal number ... of type int32")."""

    @pytest.mark.parametrize("key", ["backoffLimit", "ttlSecondsAfterFinished", "activeDeadlineSeconds"])
    def test_should_write_the_largest_value_as_an_integer(self, key):
        job = render_chart(["agg.yaml"], {"modelCache": {"download": {key: INT32_MAX}}}, show_only=[DOWNLOAD_JOB])[0]
        assert job["spec"][key] == INT32_MAX and isinstance(job["spec"][key], int)

    @pytest.mark.parametrize("key", ["backoffLimit", "ttlSecondsAfterFinished"])
    def test_should_refuse_a_value_beyond_int32(self, key):
        with pytest.raises(ChartRenderError, match=f"at '/modelCache/download/{key}'"):
            render_chart(["agg.yaml"], {"modelCache": {"download": {key: INT32_MAX + 1}}}, show_only=[DOWNLOAD_JOB])


class TestDisruptionBudgetIntegers:
    """podDisruptionBudget.maxUnavailable=9007199254740992 reached the API server ("cannot unmarshal number ... of type
    int32"): the schema bounds both counts by int32."""

    @pytest.mark.parametrize("key,values", [
        ("maxUnavailable", {"maxUnavailable": INT32_MAX + 1}),
        ("minAvailable", {"maxUnavailable": None, "minAvailable": INT32_MAX + 1}),
    ])
    def test_should_refuse_a_count_beyond_int32(self, key, values):
        with pytest.raises(ChartRenderError, match=f"at '/podDisruptionBudget/{key}'"):
            render_chart(["agg.yaml"], {"podDisruptionBudget": values}, show_only=[PDBS])


class TestScaledObjectIntegers:
    """workers.worker.autoscaling.pollingInterval=9007199254740992 reached the API server (the ScaledObject CRD's
    int32): the schema bounds pollingInterval and cooldownPeriod by int32, for every role."""

    @pytest.mark.parametrize("key", ["pollingInterval", "cooldownPeriod"])
    def test_should_refuse_an_interval_beyond_int32(self, key):
        with pytest.raises(ChartRenderError, match=f"at '/workers/worker/autoscaling/{key}'"):
            render_chart(["agg.yaml"], {"workers": {"worker": {"autoscaling": {"enabled": True, key: INT32_MAX + 1}}}},
                         show_only=[SCALED_OBJECT])

    def test_should_write_the_largest_interval_as_an_integer(self):
        scaled = render_chart(["agg.yaml"], {"workers": {"worker": {"autoscaling": {
            "enabled": True, "pollingInterval": INT32_MAX, "cooldownPeriod": INT32_MAX}}}}, show_only=[SCALED_OBJECT])
        assert [(o["spec"]["pollingInterval"], o["spec"]["cooldownPeriod"]) for o in scaled] == [(INT32_MAX, INT32_MAX)]
