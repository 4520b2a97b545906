"""Release names, namespaces and name overrides that YAML reads as numbers stay strings in every object.

Helm accepts release name `0` and Kubernetes namespace `123`; written unquoted, YAML reads them as numbers, and the
API server refuses the object ("cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type
string"). Found by the generated group (tests/cluster/test_generated_values.py, release name `0` on every overlay).
"""
import pytest

from tests.chart.exposure.test_exposure import INGRESS, POOL, ROUTE
from tests.helpers import deep_merge, render_chart

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
    @pytest.mark.parametrize("override", [{}, {"fullnameOverride": "2"}], ids=["release-name", "fullnameOverride"])
    def test_should_write_numeric_names_as_strings(self, overlay, extra, override):
        objects = render_chart([overlay], deep_merge(extra, override), name="0", namespace="123")
        found = [f"{o['kind']} {o['metadata']['name']}{p}" for o in objects for p in non_strings(o)]
        assert found == []
