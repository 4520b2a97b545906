"""Dynamo releases the chart renders for: the DGD API it writes (nvidia.com/v1beta1 only) and the runtime versions.

Sources (../shared/DYNAMO-RELEASES-FACTS.md, section 3a): Dynamo 1.2.0 promoted the DGD to served v1beta1; 1.5.0
made v1beta1 the storage version and removed the v1alpha1 admission webhooks (validation only at v1beta1 paths).
"""
from __future__ import annotations

import pytest

from tests.helpers import CHART_DIR, ChartRenderError, find, render_chart

# (id, overlay, values, the exact text the user must see): one per fail call of templates/validation/_check-dynamo-release.tpl.
RELEASE_REFUSALS = [
    ("v1alpha1-retired", "agg.yaml", {"dynamo": {"apiVersion": "nvidia.com/v1alpha1"}},
     "dynamo.apiVersion=nvidia.com/v1alpha1 was retired: every Dynamo release this chart renders for serves "
     "nvidia.com/v1beta1 (from 1.2.0), and from 1.5.0 the operator validates DGDs at v1beta1 only and stores them as "
     "v1beta1; set dynamo.apiVersion=nvidia.com/v1beta1 (the default), or remove the key"),
    ("runtime-outside-the-line", "agg.yaml", {"dynamo": {"releaseLine": "1.2", "image": {"tag": "1.1.1"}}},
     "dynamo.releaseLine=1.2 renders for Dynamo 1.2.0 up to (not including) 1.5.0, but the runtime is 1.1.1 "
     "(dynamo.runtimeVersionOverride, else dynamo.image.tag); allowed: dynamo.releaseLine=1.2 for runtimes 1.2.0 to "
     "1.4.x, 1.6 for 1.5.0 to 1.6.x, and dynamo.image.tag empty for the line's own 1.2.1"),
    ("operator-env-in-workers", "disagg-k8s.yaml", {"workers": {"decode": {"env": {"DYN_SYSTEM_PORT": "8081"}}}},
     "workers.decode.env.DYN_SYSTEM_PORT is set, but the Dynamo operator sets DYN_SYSTEM_PORT on every worker (9090) "
     "and points the probes it adds at it, so the pods would never be ready; remove it (the operator's variables: "
     "DYN_SYSTEM_PORT)"),
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
        # One "Rule:" comment per check, each before its fail.
        source = CHECK_FILE.read_text()
        assert source.count("{{- /* Rule: ") == len(RELEASE_REFUSALS)
        chunks = source.split("{{- fail ")[:-1]
        assert all(chunk.rfind("{{- /* Rule: ") > chunk.rfind("{{- end }}\n{{- /* Rule") - 1 for chunk in chunks)
        assert all("{{- /* Rule: " in chunk.split("{{- end }}\n{{- end }}")[-1] for chunk in chunks)


class TestApiVersion:
    def test_should_write_v1beta1_by_default(self):
        dgd = find(render_chart(["agg.yaml"]), "DynamoGraphDeployment")
        assert dgd["apiVersion"] == "nvidia.com/v1beta1" and "components" in dgd["spec"] and "services" not in dgd["spec"]

    def test_should_leave_trtllm_serve_alone(self):
        # No DGD there: the key is ignored, as before.
        objects = render_chart(["trtllm-serve-low-latency.yaml"], {"dynamo": {"apiVersion": "nvidia.com/v1alpha1"}})
        assert find(objects, "Deployment")
