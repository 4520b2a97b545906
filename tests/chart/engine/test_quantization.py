"""The quantization TensorRT-LLM runs per role (gpt-oss.quantization), as the plan document (ConfigMap
<fullname>-plan, which tools/plan.py reads) and NOTES.txt state it.

FACTS.md, "what runs without OVERRIDE_QUANT_ALGO": OVERRIDE_QUANT_ALGO when set; else Blackwell (B200, GB200)
runs W4A8_MXFP4_MXFP8 with the TRTLLM or CUTLASS MoE backend and W4A8_MXFP4_FP8 with TRITON; Hopper runs
W4A16_MXFP4.
"""
import pytest

from tests.helpers import Refusal, assert_refused, plan_quantization, refusal_params, render_chart, render_notes

PLAN = "templates/plan/configmap.yaml"
H200 = {"gpu": {"type": "H200", "productLabel": "NVIDIA-H200"}}

# (overlay, extra values) -> role -> "<algo>: <reason>"
CASES = [
    ("agg.yaml", {}, {"TRTLLMWorker": "W4A8_MXFP4_MXFP8: TensorRT-LLM's default on Blackwell with CUTLASS MoE"}),
    ("8xb200-single-node.yaml", {}, {
        "TRTLLMPrefillWorker": "W4A8_MXFP4_MXFP8: TensorRT-LLM's default on Blackwell with CUTLASS MoE",
        "TRTLLMDecodeWorker": "W4A8_MXFP4_MXFP8: TensorRT-LLM's default on Blackwell with CUTLASS MoE"}),
    ("2xh100-truss.yaml", {}, {"TRTLLMWorker": "W4A16_MXFP4: TensorRT-LLM's default on Hopper with TRITON MoE"}),
    ("disagg-k8s.yaml", {}, {
        "TRTLLMPrefillWorker": "W4A8_MXFP4_MXFP8: OVERRIDE_QUANT_ALGO set by workers.overrideQuantAlgo",
        "TRTLLMDecodeWorker": "W4A8_MXFP4_MXFP8: OVERRIDE_QUANT_ALGO set by workers.overrideQuantAlgo"}),
    ("trtllm-serve-low-latency.yaml", {},
     {"trtllm-serve": "W4A8_MXFP4_MXFP8: TensorRT-LLM's default on Blackwell with TRTLLM MoE"}),
    ("trtllm-serve-max-throughput.yaml", {},
     {"trtllm-serve": "W4A8_MXFP4_MXFP8: TensorRT-LLM's default on Blackwell with CUTLASS MoE"}),
    ("trtllm-serve-max-throughput.yaml", H200,
     {"trtllm-serve": "W4A16_MXFP4: TensorRT-LLM's default on Hopper with TRITON MoE"}),
    ("agg.yaml", {"workers": {"worker": {"engine": {"moe_config": {"backend": "TRITON"}}}}},
     {"TRTLLMWorker": "W4A8_MXFP4_FP8: TensorRT-LLM's default on Blackwell with TRITON MoE"}),
    ("8xb200-single-node.yaml", {"workers": {"prefill": {"engine": {"moe_config": None}}}}, {
        "TRTLLMPrefillWorker": "W4A8_MXFP4_MXFP8: TensorRT-LLM's default on Blackwell with the default MoE backend "
                               "(unset, not TRITON)",
        "TRTLLMDecodeWorker": "W4A8_MXFP4_MXFP8: TensorRT-LLM's default on Blackwell with CUTLASS MoE"}),
    # Blackwell runs W4A16 with the TRTLLM MoE backend only (trtllm/RELEASES-FACTS.md; gpt-oss.checkValues.hardware).
    ("agg.yaml", {"workers": {"overrideQuantAlgo": "W4A16_MXFP4", "worker": {"engine": {"moe_config": {"backend": "TRTLLM"}}}}},
     {"TRTLLMWorker": "W4A16_MXFP4: OVERRIDE_QUANT_ALGO set by workers.overrideQuantAlgo"}),
    ("trtllm-serve-low-latency.yaml", {"trtllmServe": {"overrideQuantAlgo": "W4A8_MXFP4_FP8"}},
     {"trtllm-serve": "W4A8_MXFP4_FP8: OVERRIDE_QUANT_ALGO set by trtllmServe.overrideQuantAlgo"}),
]
IDS = ["agg.yaml", "8xb200-single-node.yaml", "2xh100-truss.yaml", "disagg-k8s.yaml", "trtllm-serve-low-latency.yaml",
       "trtllm-serve-max-throughput.yaml", "trtllm-serve-max-throughput.yaml-H200", "agg.yaml-TRITON",
       "8xb200-single-node.yaml-prefill-backend-unset", "agg.yaml-override-W4A16", "trtllm-serve-override-W4A8-FP8"]


class TestQuantization:
    @pytest.mark.parametrize("overlay,values,expected", CASES, ids=IDS)
    def test_should_state_per_role_what_tensorrt_llm_runs_and_why(self, overlay, values, expected):
        assert plan_quantization(render_chart([overlay], values, show_only=[PLAN])) == expected
        notes = render_notes([overlay], values)
        for role, text in expected.items():
            assert f"\n  {role}: " in notes and f"\n    quantization {text}\n" in notes, (role, text)


# Refusals (gpt-oss.checkValues.<concern>, templates/validation/_check-*.tpl): one table per concern, one case per
# message; tests/chart/validation/test_check_values.py counts them against the fail calls.
# gpt-oss.checkValues.quantization (_check-quantization.tpl): an override the GPU runs.
QUANTIZATION_REFUSALS = [
    Refusal("mxfp8-on-hopper", "2xh100-truss.yaml", {"workers": {"overrideQuantAlgo": "W4A8_MXFP4_MXFP8"}},
            "workers.overrideQuantAlgo=W4A8_MXFP4_MXFP8 needs Blackwell GPUs, but gpu.type=H100; allowed: gpu.type B200 "
            "or GB200, or workers.overrideQuantAlgo W4A16_MXFP4 (what Hopper runs) or empty"),
]
REFUSALS = {"quantization": QUANTIZATION_REFUSALS}


@pytest.mark.parametrize("case", refusal_params(REFUSALS))
def test_should_refuse_with_a_message_naming_the_keys(case):
    assert_refused(case)
