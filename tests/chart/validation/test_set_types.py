"""Values typed the way `--set` types them (issue 53, item 7): `--set k=1` is an integer, `--set k=true` a boolean
and `--set k=3.00` a string (Helm's strvals types true, false, null and integers only). Where the meaning is plain,
the chart takes the form and writes the string Kubernetes wants; where it is not (a size without its unit), the
refusal names the form that works. Each case goes through Helm's own --set parser (tools.gptoss.values.merge_values)
and checks the literal in the manifest."""
from __future__ import annotations

import json

import pytest

from tests.helpers import (CHART_DIR, DASHBOARD, DGD, HPA, HTTP_ROUTE, INGRESS_TEMPLATE, POD_MONITORS, PROMETHEUS_RULE,
                           SCALED_OBJECT, TRTLLM_SERVE_DEPLOYMENT, ChartRenderError, deep_merge, dgd_workers, find,
                           render_chart)
from tools.gptoss.values import merge_values


def set_values(*expressions: str, set_json: tuple[str, ...] = ()) -> dict:
    """The values of `--set e1 --set e2 ...` (and --set-json), as Helm parses them."""
    return merge_values([], set_json=set_json, set_values=expressions)


def worker_env(dgd: dict, role: str) -> dict[str, str]:
    return {e["name"]: e["value"] for e in dgd_workers(dgd)[role]["main"]["env"]}


class TestSetTypedEnv:
    """An env value --set types as a number or boolean is written as the string it was on the command line."""

    @pytest.mark.parametrize("overlay,expression,role,name,literal", [
        ("agg.yaml", "workers.env.NCCL_BUFFSIZE=8388608", "TRTLLMWorker", "NCCL_BUFFSIZE", "8388608"),
        ("agg.yaml", "workers.worker.env.TLLM_LOG_ITERATIONS=true", "TRTLLMWorker", "TLLM_LOG_ITERATIONS", "true"),
        ("disagg-k8s.yaml", "workers.prefill.env.TRTLLM_SPIN=0", "TRTLLMPrefillWorker", "TRTLLM_SPIN", "0"),
        ("disagg-k8s.yaml", "workers.decode.env.TRTLLM_BATCH=12", "TRTLLMDecodeWorker", "TRTLLM_BATCH", "12"),
    ], ids=["workers.env", "workers.worker.env", "workers.prefill.env", "workers.decode.env"])
    def test_should_write_a_worker_env_value_as_a_string(self, overlay, expression, role, name, literal):
        dgd = find(render_chart([overlay], set_values(expression), show_only=[DGD]), "DynamoGraphDeployment")
        assert worker_env(dgd, role)[name] == literal

    def test_should_write_a_values_file_number_without_an_exponent(self):
        # A values file's numbers reach the templates as floats: toString alone wrote 8388608 as 8.388608e+06.
        values = {"workers": {"env": {"NCCL_BUFFSIZE": 8388608.0, "RATIO": 0.5}}}
        dgd = find(render_chart(["agg.yaml"], values, show_only=[DGD]), "DynamoGraphDeployment")
        env = worker_env(dgd, "TRTLLMWorker")
        assert (env["NCCL_BUFFSIZE"], env["RATIO"]) == ("8388608", "0.5")

    def test_should_write_a_trtllm_serve_env_value_as_a_string(self):
        values = set_values("trtllmServe.env.TRTLLM_ENABLE_PDL=1")
        [deployment] = render_chart(["trtllm-serve-low-latency.yaml"], values, show_only=[TRTLLM_SERVE_DEPLOYMENT])
        env = {e["name"]: e["value"] for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
        assert env["TRTLLM_ENABLE_PDL"] == "1"


class TestSetTypedThresholds:
    """An autoscaling threshold --set types as an integer: KEDA's trigger takes it as a string, an HPA as a quantity."""

    def test_should_quote_a_frontend_threshold_in_the_keda_trigger(self):
        values = set_values("frontend.autoscaling.enabled=true", "frontend.autoscaling.threshold=100")
        [scaled] = render_chart(["disagg-k8s.yaml"], values, show_only=[SCALED_OBJECT])
        assert scaled["spec"]["triggers"][0]["metadata"]["threshold"] == "100"

    def test_should_write_a_role_threshold_as_the_hpa_quantity(self):
        values = set_values("workers.decode.autoscaling.enabled=true", "workers.decode.autoscaling.scaler=hpa",
                            "workers.decode.autoscaling.threshold=2")
        [hpa] = render_chart(["disagg-k8s.yaml"], values, show_only=[HPA])
        assert hpa["spec"]["metrics"][0]["external"]["target"]["averageValue"] == "2"

    def test_should_write_a_json_decimal_threshold_in_milli_units(self):
        values = set_values("trtllmServe.autoscaling.enabled=true", "trtllmServe.autoscaling.scaler=hpa",
                            set_json=("trtllmServe.autoscaling.threshold=0.7",))
        [hpa] = render_chart(["trtllm-serve-low-latency.yaml"], values, show_only=[HPA])
        assert hpa["spec"]["metrics"][0]["external"]["target"]["averageValue"] == "700m"

    @pytest.mark.parametrize("threshold", ["0.0005", "-1"])
    def test_should_refuse_a_number_the_decimal_form_refuses(self, threshold):
        # A string takes at most 3 decimals and no sign (the schema's pattern); a number the same (multipleOf, minimum).
        values = set_values("frontend.autoscaling.enabled=true",
                            set_json=(f"frontend.autoscaling.threshold={threshold}",))
        with pytest.raises(ChartRenderError, match="at '/frontend/autoscaling/threshold'"):
            render_chart(["disagg-k8s.yaml"], values, show_only=[SCALED_OBJECT])


class TestSetTypedSizes:
    def test_should_take_a_size_with_its_unit(self):
        # `--set modelCache.size=100` is refused (SIZE_REFUSALS in test_check_values.py names the form); with its unit,
        # --set gives a string the PVC takes as it is.
        [claim] = render_chart(["agg.yaml"], set_values("modelCache.size=100Gi"),
                               show_only=["templates/model-cache/persistentvolumeclaim.yaml"])
        assert claim["spec"]["resources"]["requests"]["storage"] == "100Gi"


# Labels, annotations and node selectors: (id, overlay, the values that render the object, the --set of the key, the
# template, the object's kind, where the map is in it). Each a label or annotation value Kubernetes takes as a string.
ROUTE = {"httpRoute": {"enabled": True, "parentRefs": [{"name": "inference-gateway", "namespace": "gateway-system"}]}}
S3 = {"modelCache": {"source": "s3", "manifestSha256": "a" * 64,
                     "s3": {"endpoint": "https://minio.storage.svc:9000", "bucket": "models", "serviceAccount": {
                         "create": True}}}}
INGRESS = {"ingress": {"enabled": True, "hosts": [{"host": "gpt-oss.example.com",
                                                    "paths": [{"path": "/", "pathType": "Prefix"}]}]}}
STRING_MAPS = [
    ("workers.nodeSelector", "agg.yaml", {}, "workers.nodeSelector.pool=true", DGD, "DynamoGraphDeployment",
     lambda o: dgd_workers(o)["TRTLLMWorker"]["pod_spec"]["nodeSelector"]),
    ("trtllmServe.nodeSelector", "trtllm-serve-low-latency.yaml", {}, "trtllmServe.nodeSelector.pool=true",
     TRTLLM_SERVE_DEPLOYMENT, "Deployment", lambda o: o["spec"]["template"]["spec"]["nodeSelector"]),
    ("modelCache.download.nodeSelector", "agg.yaml", {}, "modelCache.download.nodeSelector.pool=true",
     "templates/model-cache/job.yaml", "Job", lambda o: o["spec"]["template"]["spec"]["nodeSelector"]),
    ("modelCache.s3.serviceAccount.annotations", "agg.yaml", S3, "modelCache.s3.serviceAccount.annotations.pool=true",
     "templates/model-cache/serviceaccount.yaml", "ServiceAccount", lambda o: o["metadata"]["annotations"]),
    ("monitoring.podMonitor.labels", "agg.yaml", {"monitoring": {"podMonitor": {"enabled": True}}},
     "monitoring.podMonitor.labels.pool=true", POD_MONITORS, "PodMonitor", lambda o: o["metadata"]["labels"]),
    ("monitoring.dashboard.labels", "agg.yaml", {"monitoring": {"dashboard": {"enabled": True}}},
     "monitoring.dashboard.labels.pool=true", DASHBOARD, "ConfigMap", lambda o: o["metadata"]["labels"]),
    ("monitoring.dashboard.annotations", "agg.yaml", {"monitoring": {"dashboard": {"enabled": True}}},
     "monitoring.dashboard.annotations.pool=true", DASHBOARD, "ConfigMap", lambda o: o["metadata"]["annotations"]),
    ("monitoring.prometheusRule.labels", "agg.yaml", {"monitoring": {"prometheusRule": {"enabled": True}}},
     "monitoring.prometheusRule.labels.pool=true", PROMETHEUS_RULE, "PrometheusRule",
     lambda o: o["metadata"]["labels"]),
    ("ingress.annotations", "agg.yaml", INGRESS, "ingress.annotations.pool=true", INGRESS_TEMPLATE, "Ingress",
     lambda o: o["metadata"]["annotations"]),
    ("httpRoute.annotations", "agg.yaml", ROUTE, "httpRoute.annotations.pool=true", HTTP_ROUTE, "HTTPRoute",
     lambda o: o["metadata"]["annotations"]),
    ("httpRoute.labels", "agg.yaml", ROUTE, "httpRoute.labels.pool=true", HTTP_ROUTE, "HTTPRoute",
     lambda o: o["metadata"]["labels"]),
]


class TestSetTypedStringMaps:
    @pytest.mark.parametrize("overlay,base,expression,template,kind,where", [c[1:] for c in STRING_MAPS],
                             ids=[c[0] for c in STRING_MAPS])
    def test_should_write_a_boolean_label_or_annotation_as_a_string(self, overlay, base, expression, template, kind,
                                                                    where):
        values = deep_merge(base, set_values(expression))
        objects = [o for o in render_chart([overlay], values, show_only=[template]) if o["kind"] == kind]
        assert objects and {where(o)["pool"] for o in objects} == {"true"}

    def test_should_cover_every_label_annotation_node_selector_and_env_map_in_the_schema(self):
        # A new labels, annotations, nodeSelector or env map in the schema takes --set's types too, and gets a case.
        schema = json.loads((CHART_DIR / "values.schema.json").read_text())

        def kinds(node):
            # A label value is the Kubernetes type (a $ref to a string with its pattern) or a number or boolean.
            if "$ref" in node:
                return kinds(schema["definitions"][node["$ref"].rsplit("/", 1)[1]])
            if "anyOf" in node:
                return [kind for branch in node["anyOf"] for kind in kinds(branch)]
            return [node["type"]] if isinstance(node["type"], str) else node["type"]

        def maps(node, path=""):
            for key, child in (node.get("properties") or {}).items():
                if key in ("labels", "annotations", "nodeSelector", "env") and isinstance(
                        child.get("additionalProperties"), dict):
                    yield f"{path}{key}", kinds(child["additionalProperties"])
                yield from maps(child, f"{path}{key}.")
        found = dict(maps(schema))
        assert {path: kinds for path, kinds in found.items() if set(kinds) != {"string", "number", "boolean"}} == {}
        env = {"workers.env", "workers.worker.env", "workers.prefill.env", "workers.decode.env", "trtllmServe.env"}
        assert set(found) == env | {c[0] for c in STRING_MAPS}
