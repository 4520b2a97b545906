"""The GPU records (gpt-oss.gpuRecords, _plan-gpu.tpl) and the MoE backend and quantization rules they drive
(gpt-oss.checkValues.hardware, _check-hardware.tpl).

Expected values are the shared facts': FACTS.md (memory software sees, line 22; Blackwell SM >= 100 and Hopper runs
W4A16_MXFP4, lines 33-34) and trtllm/RELEASES-FACTS.md (gpt-oss on 1.4: Hopper runs TRITON or CUTLASS with W4A16, TRTLLM
is not listed there; Blackwell runs W4A16 with TRTLLM only; AUTO from 1.3.0rc14 on).
"""
import pytest
import yaml

from tests.helpers import (CHECK_VALUES, Refusal, assert_refused, refusal_params, render_chart, template_defines)

RECORDS = yaml.safe_load(template_defines("_plan-gpu.tpl")["gpt-oss.computeGpuRecords"])
RELEASES = ["1.2.0", "1.2.1", "1.3.0rc14", "1.3.0rc19", "1.3.0rc22", "1.3.0rc25", "1.3.0rc29", "1.4.0rc2"]


class TestGpuRecords:
    @pytest.mark.parametrize("gpu,architecture,sm,node_arch,per_node,labels,memory", [
        ("GB200", "Blackwell", 100, "arm64", 4, ["NVIDIA-GB200"], 189471),
        ("B200", "Blackwell", 100, "amd64", 8, ["NVIDIA-B200"], 183359),
        ("H200", "Hopper", 90, "amd64", 8, ["NVIDIA-H200"], 143771),
        ("H100", "Hopper", 90, "amd64", 8, ["NVIDIA-H100-80GB-HBM3"], 81559),
    ])
    def test_should_keep_one_record_per_gpu_from_the_facts(self, gpu, architecture, sm, node_arch, per_node, labels,
                                                           memory):
        record = RECORDS[gpu]
        assert (record["architecture"], record["sm"], record["nodeArch"], record["perNode"], record["productLabels"],
                record["memoryMiB"]) == (architecture, sm, node_arch, per_node, labels, memory)
        assert sorted(record["trtllm"]) == sorted(RELEASES + ["unlisted"])

    @pytest.mark.parametrize("gpu", ["H100", "H200"])
    def test_should_run_hopper_with_triton_or_cutlass_and_w4a16_only(self, gpu):
        for release, support in RECORDS[gpu]["trtllm"].items():
            backends = {"TRITON", "CUTLASS"} | ({"AUTO"} if release not in ("1.2.0", "1.2.1", "unlisted") else set())
            assert set(support["moeBackends"]) == backends, release
            assert all(quants == ["W4A16_MXFP4"] for quants in support["moeBackends"].values()), release

    @pytest.mark.parametrize("gpu", ["GB200", "B200"])
    def test_should_run_w4a16_on_blackwell_with_trtllm_only(self, gpu):
        support = RECORDS[gpu]["trtllm"]["1.4.0rc2"]["moeBackends"]
        assert sorted(b for b, quants in support.items() if "W4A16_MXFP4" in quants) == ["AUTO", "TRTLLM"]
        assert support["CUTLASS"] == ["W4A8_MXFP4_MXFP8", "W4A8_MXFP4_FP8"]
        assert "AUTO" not in RECORDS[gpu]["trtllm"]["1.2.0"]["moeBackends"]


class TestHardwareAccepted:
    # Each overlay's own backend, quantization and product label pass (the overlays' renders elsewhere prove the
    # defaults; these set the label explicitly and try the other backends each record allows).
    @pytest.mark.parametrize("overlay,values", [
        ("trtllm-serve-low-latency.yaml", {"gpu": {"productLabel": "NVIDIA-B200"}}),
        ("trtllm-serve-max-throughput.yaml", {"gpu": {"type": "H200", "productLabel": "NVIDIA-H200"}}),
        ("2xh100-truss.yaml", {"workers": {"worker": {"engine": {"moe_config": {"backend": "AUTO"}}}}}),
        ("2xh100-truss.yaml", {"workers": {"worker": {"engine": {"moe_config": {"backend": "CUTLASS"}}}}}),
        ("8xb200-single-node-balanced.yaml",
         {"workers": {"overrideQuantAlgo": "W4A16_MXFP4", "worker": {"engine": {"moe_config": {"backend": "TRTLLM"}}}}}),
    ], ids=["low-latency-B200-label", "max-throughput-H200", "H100-AUTO", "H100-CUTLASS", "B200-W4A16-TRTLLM"])
    def test_should_accept_what_the_record_runs(self, overlay, values):
        assert render_chart([overlay], values, show_only=[CHECK_VALUES]) == []


# Refusals (gpt-oss.checkValues.<concern>, templates/validation/_check-*.tpl): one table per concern, one case per
# message; tests/chart/validation/test_check_values.py counts them against the fail calls.
# gpt-oss.checkValues.hardware (_check-hardware.tpl): the MoE backend and quantization run on gpu.type.
HARDWARE_REFUSALS = [
    # The case: a MoE backend the facts list for Blackwell only, on the H100 target.
    Refusal("blackwell-backend-on-hopper", "2xh100-truss.yaml",
            {"workers": {"worker": {"engine": {"moe_config": {"backend": "TRTLLM"}}}}},
            "workers.worker.engine.moe_config.backend=TRTLLM is not a MoE backend that runs gpt-oss's MXFP4 weights on "
            "H100 (Hopper, SM 90) with TensorRT-LLM 1.4.0rc2, the release inside the Dynamo 1.7 line's runtime (the "
            "chart's GPU record, gpt-oss.gpuRecords, from trtllm/RELEASES-FACTS.md), so the engine would refuse it or fail "
            "at load; allowed: AUTO, CUTLASS, TRITON"),
    Refusal("trtllm-serve-hopper-backend", "trtllm-serve-max-throughput.yaml",
            {"gpu": {"type": "H200"}, "trtllmServe": {"moeBackend": {"hopper": "TRTLLM"}}},
            "trtllmServe.moeBackend.hopper=TRTLLM is not a MoE backend that runs gpt-oss's MXFP4 weights on H200 (Hopper, "
            "SM 90) with TensorRT-LLM 1.3.0rc29", extra=True),
    Refusal("auto-before-1.3", "trtllm-serve-low-latency.yaml",
            {"trtllmServe": {"image": {"tag": "1.2.0"}, "engine": {"moe_config": {"backend": "AUTO"}}}},
            "trtllmServe.engine.moe_config.backend=AUTO is not a MoE backend that runs gpt-oss's MXFP4 weights on B200 "
            "(Blackwell, SM 100) with TensorRT-LLM 1.2.0", extra=True),
    Refusal("fp8-activations-on-hopper", "2xh100-truss.yaml", {"workers": {"overrideQuantAlgo": "W4A8_MXFP4_FP8"}},
            "workers.overrideQuantAlgo=W4A8_MXFP4_FP8 does not run on H100 (Hopper, SM 90) with TensorRT-LLM 1.4.0rc2, the "
            "release inside the Dynamo 1.7 line's runtime: gpt-oss's MXFP4 MoE runs there as W4A16_MXFP4 only; allowed: "
            "workers.overrideQuantAlgo W4A16_MXFP4, or empty (the checkpoint default)"),
    Refusal("w4a16-with-cutlass-on-blackwell", "8xb200-single-node-balanced.yaml",
            {"workers": {"overrideQuantAlgo": "W4A16_MXFP4"}},
            "workers.overrideQuantAlgo=W4A16_MXFP4 with workers.worker.engine.moe_config.backend=CUTLASS does not run on "
            "B200 (Blackwell, SM 100) with TensorRT-LLM 1.4.0rc2, the release inside the Dynamo 1.7 line's runtime: that "
            "backend runs gpt-oss's MXFP4 MoE there as W4A8_MXFP4_MXFP8, W4A8_MXFP4_FP8 only; allowed: a "
            "moe_config.backend that runs W4A16_MXFP4 (AUTO, TRTLLM), or workers.overrideQuantAlgo W4A8_MXFP4_MXFP8 or "
            "W4A8_MXFP4_FP8"),
]
REFUSALS = {"hardware": HARDWARE_REFUSALS}


@pytest.mark.parametrize("case", refusal_params(REFUSALS))
def test_should_refuse_with_a_message_naming_the_keys(case):
    assert_refused(case)
