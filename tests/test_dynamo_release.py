"""Dynamo releases the chart renders for: the DGD API it writes (nvidia.com/v1beta1 only) and the runtime versions.

Sources (../shared/DYNAMO-RELEASES-FACTS.md, section 3a): Dynamo 1.2.0 promoted the DGD to served v1beta1; 1.5.0
made v1beta1 the storage version and removed the v1alpha1 admission webhooks (validation only at v1beta1 paths).
"""
from __future__ import annotations

import re

import pytest

from tests.helpers import CHART_DIR, ChartRenderError, find, render_chart

# (id, overlay, values, the exact text the user must see): one per fail call of templates/validation/_check-dynamo-release.tpl.
RELEASE_REFUSALS = [
    ("v1alpha1-retired", "agg.yaml", {"dynamo": {"apiVersion": "nvidia.com/v1alpha1"}},
     "dynamo.apiVersion=nvidia.com/v1alpha1 was retired: every Dynamo release this chart renders for serves "
     "nvidia.com/v1beta1 (from 1.2.0), and from 1.5.0 the operator validates DGDs at v1beta1 only and stores them as "
     "v1beta1; an installed v1alpha1 DGD is the same object, so helm upgrade converts it in place; set "
     "dynamo.apiVersion=nvidia.com/v1beta1 (the default), or remove the key"),
    ("runtime-before-1.2", "agg.yaml", {"dynamo": {"image": {"tag": "1.1.1"}}},
     "the Dynamo runtime is 1.1.1 (dynamo.runtimeVersionOverride, else dynamo.image.tag), but nvidia.com/v1beta1, the "
     "only DGD API this chart writes, is served from Dynamo 1.2.0; allowed: a runtime of Dynamo 1.2.0 or newer"),
]

CHECK_FILE = CHART_DIR / "templates" / "validation" / "_check-dynamo-release.tpl"


class TestReleaseRefusals:
    @pytest.mark.parametrize("overlay,values,message", [r[1:] for r in RELEASE_REFUSALS],
                             ids=[r[0] for r in RELEASE_REFUSALS])
    def test_should_refuse_with_a_message_naming_the_keys(self, overlay, values, message):
        with pytest.raises(ChartRenderError) as error:
            render_chart([overlay], values)
        assert message in str(error.value)
        assert "templates/validation/check-values.yaml" in str(error.value)

    def test_should_cover_every_fail_call_once(self):
        assert CHECK_FILE.read_text().count("{{- fail ") == len(RELEASE_REFUSALS)

    def test_should_state_each_rule_beside_its_check(self):
        lines = CHECK_FILE.read_text().splitlines()
        for number, line in enumerate(lines):
            if line.startswith("{{- if ") and "fail" in lines[number + 1]:
                assert re.match(r"\{\{- /\* Rule: ", lines[number - 1]), lines[number - 1]


class TestApiVersion:
    def test_should_write_v1beta1_by_default(self):
        dgd = find(render_chart(["agg.yaml"]), "DynamoGraphDeployment")
        assert dgd["apiVersion"] == "nvidia.com/v1beta1" and "components" in dgd["spec"] and "services" not in dgd["spec"]

    def test_should_leave_trtllm_serve_alone(self):
        # No DGD there: the key is ignored, as before.
        objects = render_chart(["trtllm-serve-low-latency.yaml"], {"dynamo": {"apiVersion": "nvidia.com/v1alpha1"}})
        assert find(objects, "Deployment")
