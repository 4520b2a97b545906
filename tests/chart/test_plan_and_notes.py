"""What a user reads: the plan command and NOTES.txt."""
import collections
import json
import contextlib
import io

import pytest

from tests.helpers import OVERLAYS, REPO_ROOT, RUNTIMES, plan_document, render_chart, render_notes
from tools.gptoss.plan import main as plan_main

PLAN = "templates/plan/configmap.yaml"
Result = collections.namedtuple("Result", "returncode stdout stderr")
TLS_INGRESS = {"ingress": {"enabled": True, "hosts": [
    {"host": "a.example.com", "paths": [{"path": "/", "pathType": "Prefix"}]},
    {"host": "b.example.com", "paths": [{"path": "/", "pathType": "Prefix"}]}],
    "tls": [{"secretName": "a-tls", "hosts": ["a.example.com"]}]}}
MIXED_SCALERS = {"frontend": {"autoscaling": {"enabled": True}},
                 "workers": {"decode": {"autoscaling": {"enabled": True, "scaler": "hpa"}}}}
MIXED_WARNING = ("mixed autoscalers: KEDA for frontend, an HPA for workers.decode; KEDA's metrics server and "
                 "prometheus-adapter both serve the external metrics API, and a cluster has one "
                 "(v1beta1.external.metrics.k8s.io), so one kind will read no metric: set every autoscaling.scaler to "
                 "keda, or every one to hpa")


def run_plan(*args):
    """tools/plan.py's main() in this process (renders are memoized), from the repository root."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(REPO_ROOT), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = plan_main(list(args))
    return Result(code, out.getvalue(), err.getvalue())


class TestPlanCommand:
    @pytest.mark.parametrize("overlay,expected", [
        ("agg.yaml", ["4 GPUs in total", "TRTLLMWorker [worker]: 1 pod(s) x 4 GPU(s)", "kubernetes.io/arch=arm64",
                      "concurrency 3600, 36000 requests",
                      "quantization W4A8_MXFP4_MXFP8: TensorRT-LLM's default on Blackwell with CUTLASS MoE"]),
        ("disagg-k8s.yaml", ["5 GPUs in total", "TRTLLMPrefillWorker [prefill]: 1 pod(s) x 1 GPU(s)",
                             "TRTLLMDecodeWorker [decode]: 1 pod(s) x 4 GPU(s)", "quantization W4A8_MXFP4_MXFP8",
                             "concurrency 1536, 15360 requests", "WARNING: prefill-bound"]),
        ("8xb200-single-node.yaml", ["8 GPUs in total", "(all workers on one node)", "concurrency 256, 6144 requests",
                                     "--warmup-request-count 1000",
                                     "quantization W4A8_MXFP4_MXFP8: TensorRT-LLM's default on Blackwell with CUTLASS MoE"]),
        ("2xh100-truss.yaml", ["2 GPUs in total", "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3",
                               '"moe_config": {"backend": "TRITON"}', "concurrency 16, 150 requests",
                               "No sizing warnings.",
                               "quantization W4A16_MXFP4: TensorRT-LLM's default on Hopper with TRITON MoE"]),
        ("trtllm-serve-low-latency.yaml", [
            "Deployment gpt-oss-trtllm-serve (trtllm-serve, no Dynamo), 8 GPUs in total",
            "trtllm-serve: 1 pod(s) x 8 GPU(s) on nodes kubernetes.io/arch=amd64, nvidia.com/gpu.product=NVIDIA-B200",
            "image nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc29", "2048 decode slots",
            '"moe_config": {"backend": "TRTLLM"}', "concurrency 8, 80 requests", "No sizing warnings."]),
        ("trtllm-serve-max-throughput.yaml", [
            "--tp_size 8 --ep_size 8 --max_batch_size 640", "5120 decode slots",
            '"moe_config": {"backend": "CUTLASS"}', "concurrency 5120, 51200 requests"]),
    ])
    def test_should_print_roles_gpus_engine_and_benchmark(self, overlay, expected):
        result = run_plan(f"values/{overlay}")
        assert result.returncode == 0, result.stderr
        for text in expected:
            assert text in result.stdout

    def test_should_refuse_bad_values_with_the_chart_message(self):
        result = run_plan("values/agg.yaml", "--set-json", '{"gpu": {"nodeArch": "amd64"}}')
        assert result.returncode == 1
        assert "gpu.type=GB200 runs only on ARM64 (Grace) nodes" in result.stderr

    def test_should_apply_set_json_nulls(self):
        result = run_plan("values/disagg-k8s.yaml", "--set-json", '{"benchmark": {"concurrency": null}}')
        assert "concurrency 1280, 12800 requests" in result.stdout


class TestPlanText:
    def test_should_reach_and_test_the_release_in_its_namespace(self):
        result = run_plan("-f", "values/trtllm-serve-low-latency.yaml")
        assert "  Reach: kubectl port-forward -n llm svc/gpt-oss-trtllm-serve 8000:8000 (no Ingress or HTTPRoute)" in result.stdout
        assert "runs only with `helm test gpt-oss -n llm --filter name=gpt-oss-benchmark`" in result.stdout
        assert "--url http://gpt-oss-trtllm-serve.llm.svc:8000" in result.stdout

    def test_should_say_https_only_for_hosts_with_tls(self):
        result = run_plan("-f", "values/agg.yaml", "--set-json", json.dumps(TLS_INGRESS))
        assert "  Reach: Ingress gpt-oss https://a.example.com/ -> Service gpt-oss-frontend:8000" in result.stdout
        assert "  Reach: Ingress gpt-oss http://b.example.com/ -> Service gpt-oss-frontend:8000" in result.stdout
        notes = render_notes(["agg.yaml"], TLS_INGRESS)
        assert "Ingress: curl https://a.example.com/v1/models" in notes
        assert "Ingress: curl http://b.example.com/v1/models" in notes

    def test_should_warn_about_keda_and_an_hpa_in_one_release(self):
        result = run_plan("-f", "values/disagg-k8s.yaml", "--set-json", json.dumps(MIXED_SCALERS))
        assert f"  WARNING: {MIXED_WARNING}" in result.stdout
        assert f"  - {MIXED_WARNING}" in render_notes(["disagg-k8s.yaml"], MIXED_SCALERS)

    @pytest.mark.parametrize("scaler", ["keda", "hpa"])
    def test_should_not_warn_about_one_kind_of_autoscaler(self, scaler):
        values = {"frontend": {"autoscaling": {"enabled": True, "scaler": scaler}},
                  "workers": {"decode": {"autoscaling": {"enabled": True, "scaler": scaler}}}}
        assert "mixed autoscalers" not in render_notes(["disagg-k8s.yaml"], values)

    def test_should_schedule_on_the_gpu_type_set(self):
        # The case: only gpu.type changed on agg.yaml gave W4A16 on Hopper, scheduled on arm64 GB200 nodes.
        result = run_plan("-f", "values/agg.yaml", "--set-json", '{"gpu": {"type": "H100"}}')
        assert ("TRTLLMWorker [worker]: 1 pod(s) x 4 GPU(s) on nodes kubernetes.io/arch=amd64, "
                "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3") in result.stdout
        assert "quantization W4A16_MXFP4: TensorRT-LLM's default on Hopper" in result.stdout


class TestNotes:
    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_say_how_to_reach_test_and_benchmark(self, overlay):
        notes = render_notes([overlay])
        service = {"dynamo": "gpt-oss-frontend", "trtllm-serve": "gpt-oss-trtllm-serve"}[RUNTIMES[overlay]]
        assert f"kubectl port-forward -n llm svc/{service} 8000:8000" in notes
        assert "helm test gpt-oss -n llm --filter name=gpt-oss-smoke-test --logs" in notes
        assert "helm test gpt-oss -n llm --filter name=gpt-oss-benchmark --timeout 6h" in notes
        assert "/model-cache/perf/<epoch>_gpt-oss-benchmark/" in notes

    def test_should_state_the_plan_numbers(self):
        notes = render_notes(["agg.yaml"])
        assert "on 4 x GB200 (aggregated)" in notes
        assert "Benchmark: concurrency 3600 (4 GPUs counted), 36000 requests, ISL 128 / OSL 1000" in notes


class TestPlanDocument:
    """The plan as data (gpt-oss.planDocument, the ConfigMap <fullname>-plan): what tools/plan.py and
    tools/predict.py read, and what NOTES.txt formats for people."""

    def test_should_render_the_plan_as_data(self):
        [config_map] = render_chart(["disagg-k8s.yaml"], show_only=[PLAN])
        assert config_map["metadata"]["name"] == "gpt-oss-plan"
        doc = plan_document([config_map])
        assert {k: doc[k] for k in ("runtime", "gpuType", "totalGpus", "layout", "decodeSlots", "benchmark")} == {
            "runtime": "dynamo", "gpuType": "GB200", "totalGpus": 5, "layout": "disaggregated", "decodeSlots": 1280,
            "benchmark": {"gpuCount": 5, "concurrency": 1536, "requestCount": 15360}}
        assert [(r["component"], r["mode"], r["replicas"], r["gpusPerReplica"], r["tensorParallelSize"],
                 r["expertParallelSize"], r["quantization"]["algo"]) for r in doc["roles"]] == [
            ("TRTLLMPrefillWorker", "prefill", 1, 1, 1, 1, "W4A8_MXFP4_MXFP8"),
            ("TRTLLMDecodeWorker", "decode", 1, 4, 4, 1, "W4A8_MXFP4_MXFP8")]
        assert [w.split(":")[0] for w in doc["warnings"]] == [
            "benchmark concurrency 1536 exceeds the 1280 decode slots (workers.decode", "prefill-bound"]

    def test_should_keep_trtllm_serve_in_one_role(self):
        doc = plan_document(render_chart(["trtllm-serve-low-latency.yaml"], show_only=[PLAN]))
        assert (doc["layout"], doc["gpuType"], doc["totalGpus"], doc["warnings"]) == ("trtllm-serve", "B200", 8, [])
        assert [(r["component"], r["gpusPerReplica"], r["tensorParallelSize"], r["expertParallelSize"])
                for r in doc["roles"]] == [("trtllm-serve", 8, 8, 8)]

    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_print_in_notes_what_the_document_holds(self, overlay):
        doc = plan_document(render_chart([overlay], show_only=[PLAN]))
        notes = render_notes([overlay])
        assert f" on {doc['totalGpus']} x {doc['gpuType']} (" in notes
        for role in doc["roles"]:
            assert f"    quantization {role['quantization']['algo']}: {role['quantization']['reason']}\n" in notes
        assert all(f"  - {warning}\n" in notes + "\n" for warning in doc["warnings"])
        assert ("WARNINGS" in notes) == bool(doc["warnings"])

    def test_should_leave_notes_to_people(self):
        for path in ("tools/gptoss/plan.py", "tools/gptoss/predict.py", "tools/gptoss/objects.py"):
            assert "render_notes" not in (REPO_ROOT / path).read_text() and \
                "NOTES" not in (REPO_ROOT / path).read_text().replace("NOTES.txt", ""), path
