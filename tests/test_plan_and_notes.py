"""What a user reads: the plan command and NOTES.txt."""
import subprocess
import sys

import pytest

from tests.helpers import OVERLAYS, REPO_ROOT, RUNTIMES, render_notes

PLAN = [sys.executable, str(REPO_ROOT / "tools" / "plan.py")]


def run_plan(*args):
    return subprocess.run([*PLAN, *args], capture_output=True, text=True, cwd=REPO_ROOT)


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
            "image nvcr.io/nvidia/tensorrt-llm/release:1.2.0", "2048 decode slots",
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
