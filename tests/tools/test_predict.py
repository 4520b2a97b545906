"""aiconfigurator's predictions behind `tools/plan.py --predict` (the published figures and the sizing tables:
test_published_figures.py and test_sizing_tables.py, each a file of its own so that each runs in a pytest-xdist
worker of its own).

The mapping of rendered roles onto aiconfigurator's inputs needs no aiconfigurator and always runs; the
predictions need requirements-predict.txt (the version its figures belong to) and skip without it.
"""
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import (DYNAMO_OVERLAYS, OVERLAYS, REPO_ROOT, TRTLLM_SERVE_OVERLAYS,
                           ChartRenderError, dynamo_line_values, needs_aiconfigurator, render_chart)
from tests.helpers import PREDICTION_TOLERANCE as TOLERANCE
from tools.gptoss.predict import aiconfigurator_inputs, format_release_match, read_target, release_match

# aiconfigurator's predictions of every target: minutes of CPU; heavy: its seconds in CI's cluster plane, so that
# pytest-xdist starts it first (tests/conftest.py).
pytestmark = pytest.mark.heavy(500)

# overlay -> the aiconfigurator inputs each rendered role maps to (TensorRT-LLM TP with attention-DP is
# aiconfigurator's attention DP; batch = benchmark users per rank up to max_batch_size; a prefill step
# batches whole prompts up to max_num_tokens).
EXPECTED_INPUTS = {
    "agg.yaml": {"mode": "agg", "system_name": "gb200", "isl": 128, "osl": 1000, "tp_size": 1,
                 "attention_dp_size": 4, "moe_tp_size": 1, "moe_ep_size": 4, "batch_size": 800, "ctx_tokens": 7296,
                 "moe_quant_mode": "w4a8_mxfp4_mxfp8", "gemm_quant_mode": "bfloat16", "kvcache_quant_mode": "bfloat16",
                 "free_gpu_memory_fraction": 0.9},
    "disagg-k8s.yaml": {"mode": "disagg", "system_name": "gb200", "isl": 8192, "osl": 1024,
                        "prefill_tp_size": 1, "prefill_moe_ep_size": 1, "prefill_batch_size": 2, "prefill_num_workers": 1,
                        "decode_tp_size": 4, "decode_attention_dp_size": 1, "decode_moe_tp_size": 4,
                        "decode_moe_ep_size": 1, "decode_batch_size": 1280, "decode_num_workers": 1,
                        "moe_quant_mode": "w4a8_mxfp4_mxfp8", "kvcache_quant_mode": "fp8",
                        "prefill_free_gpu_memory_fraction": 0.8, "decode_free_gpu_memory_fraction": 0.85},
    "disagg-k8s-balanced.yaml": {"mode": "disagg", "prefill_tp_size": 1, "prefill_batch_size": 2,
                                 "prefill_num_workers": 2, "decode_tp_size": 1, "decode_moe_tp_size": 1,
                                 "decode_batch_size": 192, "decode_num_workers": 3},
    "8xb200-single-node.yaml": {"mode": "disagg", "system_name": "b200_sxm", "isl": 32000, "osl": 256,
                                "prefill_tp_size": 4, "prefill_attention_dp_size": 1, "prefill_moe_ep_size": 4,
                                "prefill_batch_size": 1, "decode_tp_size": 1, "decode_attention_dp_size": 4,
                                "decode_moe_tp_size": 1, "decode_moe_ep_size": 4, "decode_batch_size": 64,
                                "moe_quant_mode": "w4a8_mxfp4_mxfp8", "kvcache_quant_mode": "bfloat16"},
    # 96 users on 8 workers of 12 slots; no chunked prefill: two whole 32000-token prompts per 65536-token step.
    "8xb200-single-node-balanced.yaml": {"mode": "agg", "system_name": "b200_sxm", "isl": 32000, "osl": 256,
                                         "tp_size": 1, "attention_dp_size": 1, "moe_ep_size": 1, "batch_size": 12,
                                         "ctx_tokens": 64000, "moe_quant_mode": "w4a8_mxfp4_mxfp8",
                                         "kvcache_quant_mode": "bfloat16"},
    "2xh100-truss.yaml": {"mode": "agg", "system_name": "h100_sxm", "isl": 4000, "osl": 1000, "tp_size": 2,
                          "attention_dp_size": 1, "moe_tp_size": 1, "moe_ep_size": 2, "batch_size": 16,
                          "ctx_tokens": 8176, "moe_quant_mode": "w4a16_mxfp4", "gemm_quant_mode": "bfloat16",
                          "free_gpu_memory_fraction": 0.8},
    # trtllm-serve: TP = EP = 8 GPUs in one pod; low-latency without attention-DP and TensorRT-LLM's default
    # batch (8 users fit), max-throughput with attention-DP and --max_batch_size 640 per rank.
    "trtllm-serve-low-latency.yaml": {"mode": "agg", "system_name": "b200_sxm", "isl": 1024, "osl": 1024,
                                      "tp_size": 8, "attention_dp_size": 1, "moe_tp_size": 1, "moe_ep_size": 8,
                                      "batch_size": 8, "moe_quant_mode": "w4a8_mxfp4_mxfp8",
                                      "free_gpu_memory_fraction": 0.75},
    "trtllm-serve-max-throughput.yaml": {"mode": "agg", "system_name": "b200_sxm", "tp_size": 1,
                                         "attention_dp_size": 8, "moe_tp_size": 1, "moe_ep_size": 8,
                                         "batch_size": 640, "moe_quant_mode": "w4a8_mxfp4_mxfp8",
                                         "free_gpu_memory_fraction": 0.9},
}
# overlay -> settings aiconfigurator cannot take, as the prediction names them (a substring each).
EXPECTED_NOT_MODELED = {
    "agg.yaml": ["3600 benchmark users exceed its 3200 batch slots", "moe_config.backend CUTLASS"],
    "disagg-k8s.yaml": ["1536 benchmark users exceed its 1280 batch slots", "moe_config.backend TRTLLM"],
    "disagg-k8s-balanced.yaml": ["moe_config.backend TRTLLM"],
    "8xb200-single-node.yaml": ["chunked prefill (32000-token prompts in 20000-token chunks)"],
    "8xb200-single-node-balanced.yaml": ["moe_config.backend CUTLASS is not a model input; it chose W4A8_MXFP4_MXFP8"],
    "2xh100-truss.yaml": ["moe_config.backend TRITON", "disable_overlap_scheduler"],
    "trtllm-serve-low-latency.yaml": ["trtllmServe: moe_config.backend TRTLLM is not a model input; it chose "
                                      "W4A8_MXFP4_MXFP8"],
    "trtllm-serve-max-throughput.yaml": ["trtllmServe: moe_config.backend CUTLASS is not a model input; it chose "
                                         "W4A8_MXFP4_MXFP8"],
}
H200 = {"gpu": {"type": "H200", "productLabel": "NVIDIA-H200"}}


def test_should_cover_every_overlay():
    assert sorted(EXPECTED_INPUTS) == sorted(EXPECTED_NOT_MODELED) == OVERLAYS




# aiconfigurator 0.12.0's trtllm databases per GPU (aiconfigurator_core/systems/query_versions.yaml: current
# 1.3.0rc20, "next derives to 1.3.0rc23"); the prediction uses current.
SLOTS = {"current": "1.3.0rc20", "next": "1.3.0rc23"}


class TestTensorRTLLMRelease:
    """--predict states the TensorRT-LLM release the target runs against the one the database measured."""

    @pytest.mark.parametrize("overlay,values,release", [
        ("agg.yaml", dynamo_line_values("1.2"), "1.3.0rc14"), ("agg.yaml", dynamo_line_values("1.6"), "1.3.0rc29"),
        ("trtllm-serve-low-latency.yaml", {"trtllmServe": {"image": {"tag": "1.2.0"}}}, "1.2.0"),
        ("trtllm-serve-low-latency.yaml", {}, "1.3.0rc29")], ids=["1.2-line", "1.6-line", "serve-1.2.0", "serve"])
    def test_should_read_the_release_that_runs(self, overlay, values, release):
        assert read_target([overlay], values)["trtllm_release"] == release

    def test_should_name_the_nearest_database_of_a_newer_release(self):
        match = release_match("1.3.0rc29", "1.3.0rc20", SLOTS)
        assert (match["same"], match["nearest"]) == (False, "1.3.0rc23")
        assert format_release_match(match) == (
            "  TensorRT-LLM: the target runs TensorRT-LLM 1.3.0rc29; the database measured 1.3.0rc20, another release "
            "(aiconfigurator's trtllm databases for this GPU: 1.3.0rc20 (current), 1.3.0rc23 (next); the nearest it "
            "has at or below 1.3.0rc29 is 1.3.0rc23)")

    def test_should_say_when_every_database_is_newer(self):
        assert release_match("1.3.0rc14", "1.3.0rc20", SLOTS)["nearest"] is None
        assert format_release_match(release_match("1.3.0rc14", "1.3.0rc20", SLOTS)).endswith(
            "the database measured 1.3.0rc20, another release (aiconfigurator's trtllm databases for this GPU: "
            "1.3.0rc20 (current), 1.3.0rc23 (next))")

    def test_should_say_when_the_database_measured_the_release_that_runs(self):
        assert format_release_match(release_match("1.3.0rc20", "1.3.0rc20", SLOTS)) == (
            "  TensorRT-LLM: the target runs TensorRT-LLM 1.3.0rc20, the release the database measured")

    @needs_aiconfigurator
    def test_should_find_the_databases_the_installed_model_has(self):
        from aiconfigurator_core.sdk.perf_database import get_version_slots
        for system in ("gb200", "b200_sxm", "h200_sxm", "h100_sxm"):
            assert get_version_slots(system, "trtllm") == SLOTS, system


class TestAiconfiguratorInputs:
    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_map_each_rendered_role_onto_aiconfigurator(self, overlay):
        kwargs, _ = aiconfigurator_inputs(read_target([overlay]))
        assert {key: kwargs[key] for key in EXPECTED_INPUTS[overlay]} == EXPECTED_INPUTS[overlay]

    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS, ids=TRTLLM_SERVE_OVERLAYS)
    def test_should_model_trtllm_serve_on_h200_with_what_hopper_runs(self, overlay):
        kwargs, notes = aiconfigurator_inputs(read_target([overlay], H200))
        assert (kwargs["system_name"], kwargs["moe_quant_mode"], kwargs["moe_ep_size"]) == ("h200_sxm", "w4a16_mxfp4", 8)
        assert any("moe_config.backend TRITON is not a model input; it chose W4A16_MXFP4, modeled with "
                   "aiconfigurator's measured w4a16_mxfp4 MoE kernels" in note for note in notes), notes

    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_say_what_it_cannot_model(self, overlay):
        _, notes = aiconfigurator_inputs(read_target([overlay]))
        for text in EXPECTED_NOT_MODELED[overlay]:
            assert any(text in note for note in notes), (text, notes)

    def test_should_follow_values_given_on_the_command_line(self):
        kwargs, _ = aiconfigurator_inputs(read_target(["disagg-k8s.yaml"], {"benchmark": {"concurrency": None}}))
        assert kwargs["decode_batch_size"] == 1280  # 256 x 5 = 1280 users fill exactly the 1280 slots

    def test_should_name_the_nearest_mode_of_a_quantization_without_one(self):
        # Blackwell with TRITON MoE runs W4A8_MXFP4_FP8 (FACTS.md), which aiconfigurator has no mode for.
        kwargs, notes = aiconfigurator_inputs(read_target(
            ["agg.yaml"], {"workers": {"worker": {"engine": {"moe_config": {"backend": "TRITON"}}}}}))
        assert kwargs["moe_quant_mode"] == "w4a8_mxfp4_mxfp8"
        assert any("W4A8_MXFP4_FP8 has no aiconfigurator mode; modeled with the nearest, w4a8_mxfp4_mxfp8" in note
                   for note in notes), notes

    def test_should_never_be_asked_for_w4a8_on_hopper(self):
        # Hopper runs gpt-oss as W4A16_MXFP4 only (FACTS.md; the GPU records): the chart refuses the target, so no
        # prediction is made for a quantization the GPU cannot run (before, W4A8 fell back to w4a16 data).
        with pytest.raises(ChartRenderError, match="workers.overrideQuantAlgo=W4A8_MXFP4_FP8 does not run on H100"):
            read_target(["2xh100-truss.yaml"], {"workers": {"overrideQuantAlgo": "W4A8_MXFP4_FP8"}})


# overlay -> (tokens/s/GPU, tokens/s/user, TTFT ms, ITL ms) predicted by aiconfigurator 0.12.0 for the
# quantization each target runs (agg, 8xb200 and the trtllm-serve targets on B200: W4A8_MXFP4_MXFP8 by
# TensorRT-LLM's rule; H100 and H200: W4A16_MXFP4).
EXPECTED_PREDICTION = {
    "agg.yaml": (40246.4, 50.89, 231.1, 19.65),
    "disagg-k8s.yaml": (2946.0, 48.76, 225.2, 20.51),
    "disagg-k8s-balanced.yaml": (5892.0, 58.22, 225.2, 17.18),
    "8xb200-single-node.yaml": (150.4, 52.61, 344.8, 19.01),
    "8xb200-single-node-balanced.yaml": (469.6, 61.03, 1698.8, 16.39),
    "2xh100-truss.yaml": (696.7, 91.33, 416.3, 10.95),
    "trtllm-serve-low-latency.yaml": (386.6, 390.79, 54.8, 2.56),
    "trtllm-serve-max-throughput.yaml": (18746.1, 29.57, 529.0, 33.82),
}
# trtllm-serve overlay on H200 (TRITON MoE, W4A16_MXFP4) -> (tokens/s/GPU, tokens/s/user, TTFT ms, ITL ms)
EXPECTED_H200_PREDICTION = {
    "trtllm-serve-low-latency.yaml": (185.6, 188.33, 157.2, 5.31),
    "trtllm-serve-max-throughput.yaml": (5755.2, 9.11, 2202.5, 109.8),
}
# disaggregated overlay -> (limiting side, prefill requests/s, decode requests/s)
EXPECTED_LIMIT = {
    "disagg-k8s.yaml": ("prefill", 16.0, 61.0),
    "disagg-k8s-balanced.yaml": ("prefill", 32.0, 32.8),
    "8xb200-single-node.yaml": ("prefill", 5.22, 52.81),
}
# overlay -> (best configuration's tokens/s/GPU, this overlay's ratio to it)
EXPECTED_BEST = {
    "agg.yaml": (34419.8, 1.17),
    "disagg-k8s.yaml": (6371.7, 0.46),
    "disagg-k8s-balanced.yaml": (5573.7, 1.06),
    "8xb200-single-node.yaml": (469.6, 0.32),
    "8xb200-single-node-balanced.yaml": (469.6, 1.0),
    "2xh100-truss.yaml": (700.6, 0.99),
    "trtllm-serve-low-latency.yaml": (416.8, 0.93),
    "trtllm-serve-max-throughput.yaml": (24176.3, 0.78),
}
# overlay -> the fraction of aiconfigurator's speed of light (its SOL database, same configuration) the
# prediction reaches, as issue 25 measured it with 0.12.0.
EXPECTED_SOL_FRACTION = {"agg.yaml": 0.37, "2xh100-truss.yaml": 0.49, "disagg-k8s-balanced.yaml": 0.69,
                         "trtllm-serve-low-latency.yaml": 0.12}
# overlay -> seconds each benchmark request waits in the queue before prefill (the closed loop's users / requests per
# second beyond the request's own latency), as aiconfigurator 0.12.0 predicts it; the docs add it to TTFT.
EXPECTED_QUEUE_S = {"agg.yaml": 2.5, "disagg-k8s.yaml": 85.6, "disagg-k8s-balanced.yaml": 2.2,
                    "8xb200-single-node.yaml": 49.3, "8xb200-single-node-balanced.yaml": 0.6, "2xh100-truss.yaml": 0.1,
                    "trtllm-serve-low-latency.yaml": 0.0, "trtllm-serve-max-throughput.yaml": 0.0}
# overlay -> (speed of light tokens/s/GPU, fraction of it the prediction reaches), and the factor between the two sides
# of a disaggregated target, as aiconfigurator 0.12.0 predicts them.
EXPECTED_SOL = {"agg.yaml": (107647.5, 0.37), "disagg-k8s.yaml": (6921.0, 0.43), "disagg-k8s-balanced.yaml": (8487.8, 0.69),
                "8xb200-single-node.yaml": (391.3, 0.38), "8xb200-single-node-balanced.yaml": (978.7, 0.48),
                "2xh100-truss.yaml": (1432.9, 0.49), "trtllm-serve-low-latency.yaml": (3103.1, 0.12),
                "trtllm-serve-max-throughput.yaml": (48793.1, 0.38)}
EXPECTED_LIMIT_FACTOR = {"disagg-k8s.yaml": 3.82, "disagg-k8s-balanced.yaml": 1.03, "8xb200-single-node.yaml": 10.12}
# The one target aiconfigurator estimates from its HYBRID database (MoE TP4 without EP has no measured kernels).
EXPECTED_DATABASE = {overlay: "HYBRID" if overlay == "disagg-k8s.yaml" else "SILICON" for overlay in EXPECTED_PREDICTION}
# A Dynamo target, and the overlay that gets at least 0.9 of the best configuration on its GPUs (itself or
# its tuned sibling).
TUNED = {"agg.yaml": "agg.yaml", "disagg-k8s.yaml": "disagg-k8s-balanced.yaml",
         "8xb200-single-node.yaml": "8xb200-single-node-balanced.yaml", "2xh100-truss.yaml": "2xh100-truss.yaml"}


@pytest.fixture(scope="module")
def predictions():
    from tools.gptoss.predict import predict
    return {overlay: predict([overlay]) for overlay in OVERLAYS}


@needs_aiconfigurator
class TestPredictions:
    def test_should_pin_the_model_version(self, predictions):
        assert {p["aiconfigurator"] for p in predictions.values()} == {"0.12.0"}
        assert (REPO_ROOT / "requirements-predict.txt").read_text().count("aiconfigurator==0.12.0") == 1

    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_predict_throughput_and_latency(self, predictions, overlay):
        p = predictions[overlay]
        got = (p["tokens_per_s_per_gpu"], p["tokens_per_s_per_user"], p["ttft_ms"], p["itl_ms"])
        assert got == pytest.approx(EXPECTED_PREDICTION[overlay], rel=TOLERANCE)

    @pytest.mark.parametrize("overlay", sorted(EXPECTED_LIMIT), ids=sorted(EXPECTED_LIMIT))
    def test_should_say_which_side_limits_a_disaggregated_target(self, predictions, overlay):
        limit = predictions[overlay]["limit"]
        side, prefill, decode = EXPECTED_LIMIT[overlay]
        assert limit["side"] == side
        assert (limit["prefill_requests_per_s"], limit["decode_requests_per_s"]) == pytest.approx(
            (prefill, decode), rel=TOLERANCE)

    @pytest.mark.parametrize("overlay", sorted(EXPECTED_SOL_FRACTION), ids=sorted(EXPECTED_SOL_FRACTION))
    def test_should_reach_a_fraction_of_the_speed_of_light(self, predictions, overlay):
        assert predictions[overlay]["fraction_of_sol"] == EXPECTED_SOL_FRACTION[overlay]

    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_predict_what_the_docs_print(self, predictions, overlay):
        # The literals literal_prediction() builds the docs' figures from (TestDocsFigures).
        p = predictions[overlay]
        assert p["benchmark_queue_s"] == pytest.approx(EXPECTED_QUEUE_S[overlay], abs=0.2)
        assert (p["sol"]["tokens_per_s_per_gpu"], p["fraction_of_sol"]) == pytest.approx(EXPECTED_SOL[overlay], rel=TOLERANCE)
        assert p["database_mode"] == EXPECTED_DATABASE[overlay]
        if overlay in EXPECTED_LIMIT_FACTOR:
            assert p["limit"]["factor"] == pytest.approx(EXPECTED_LIMIT_FACTOR[overlay], rel=TOLERANCE)

    def test_should_print_in_the_docs_what_it_predicts(self, predictions):
        # python -m ci.generate target-figures --check, on this module's predictions (plus the trtllm-serve targets on H200).
        from ci.generate import target_figures as figures
        rendered = figures.render(figures.with_other_gpu({o: dict(p) for o, p in predictions.items()}))
        assert [path.name for path, text in rendered.items() if path.read_text() != text] == []

    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_stay_below_the_speed_of_light(self, predictions, overlay):
        p = predictions[overlay]
        assert 0 < p["fraction_of_sol"] < 1
        assert p["sol"]["ttft_ms"] < p["ttft_ms"] and p["sol"]["itl_ms"] < p["itl_ms"]

    def test_should_model_moe_tp_without_measured_kernels_with_the_hybrid_database(self, predictions):
        assert predictions["disagg-k8s.yaml"]["database_mode"] == "HYBRID"
        assert any("MoE TP4 x EP1: no measured kernel data" in note
                   for note in predictions["disagg-k8s.yaml"]["not_modeled"])

    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_compare_with_the_best_configuration(self, predictions, overlay):
        p = predictions[overlay]
        assert p["best"]["found"]
        assert (p["best"]["tokens_per_s_per_gpu"], p["ratio_to_best"]) == pytest.approx(
            EXPECTED_BEST[overlay], rel=TOLERANCE)

    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS, ids=TRTLLM_SERVE_OVERLAYS)
    def test_should_predict_trtllm_serve_on_h200(self, overlay):
        from tools.gptoss.predict import predict
        p = predict([overlay], H200, best=False)
        got = (p["tokens_per_s_per_gpu"], p["tokens_per_s_per_user"], p["ttft_ms"], p["itl_ms"])
        assert got == pytest.approx(EXPECTED_H200_PREDICTION[overlay], rel=TOLERANCE)
        assert p["inputs"]["moe_quant_mode"] == "w4a16_mxfp4"

    def test_should_model_what_runs_not_the_checkpoint_alone(self, predictions):
        # agg sets no override: GB200 with CUTLASS MoE runs W4A8_MXFP4_MXFP8 (FACTS.md).
        assert predictions["agg.yaml"]["quantization"] == {"TRTLLMWorker": "W4A8_MXFP4_MXFP8"}
        assert predictions["agg.yaml"]["inputs"]["moe_quant_mode"] == "w4a8_mxfp4_mxfp8"

    @pytest.mark.parametrize("overlay", sorted(TUNED), ids=sorted(TUNED))
    def test_should_offer_each_dynamo_target_at_nine_tenths_of_the_best(self, predictions, overlay):
        assert TUNED[overlay] in DYNAMO_OVERLAYS
        assert predictions[TUNED[overlay]]["ratio_to_best"] >= 0.9

    def test_should_triple_the_8xb200_target_with_its_tuned_sibling(self, predictions):
        ratio = (predictions["8xb200-single-node-balanced.yaml"]["tokens_per_s_per_gpu"]
                 / predictions["8xb200-single-node.yaml"]["tokens_per_s_per_gpu"])
        assert ratio == pytest.approx(3.1, rel=0.05)

    def test_should_double_disagg_k8s_with_the_balanced_split(self, predictions):
        ratio = (predictions["disagg-k8s-balanced.yaml"]["tokens_per_s_per_gpu"]
                 / predictions["disagg-k8s.yaml"]["tokens_per_s_per_gpu"])
        assert ratio == pytest.approx(2.0, rel=0.05)


@needs_aiconfigurator
class TestQuantizationModes:
    def test_should_know_which_moe_modes_the_database_measured(self):
        """MEASURED_MOE_MODES (which picks the nearest mode without aiconfigurator) against the installed database."""
        import glob

        import aiconfigurator_core
        import pandas
        from tools.gptoss.predict import MEASURED_MOE_MODES
        data = Path(aiconfigurator_core.__file__).parent / "systems" / "data"
        measured = {}
        for system in MEASURED_MOE_MODES:
            (path,) = glob.glob(str(data / system / "moe" / "trtllm" / "1.3.0rc20" / "moe_perf.parquet"))
            frame = pandas.read_parquet(path)
            gpt_oss = frame[(frame.num_experts == 128) & (frame.hidden_size == 2880) & (frame.topk == 4)]
            measured[system] = tuple(sorted(m for m in gpt_oss.moe_dtype.unique() if "mxfp4" in m))
        assert measured == MEASURED_MOE_MODES


# overlay -> GPU, the quantization it runs, benchmark ISL and OSL: what picks its calibration (docs/targets.md).
EXPECTED_WORKLOAD = {
    "agg.yaml": ("GB200", "W4A8_MXFP4_MXFP8", 128, 1000),
    "disagg-k8s.yaml": ("GB200", "W4A8_MXFP4_MXFP8", 8192, 1024),
    "disagg-k8s-balanced.yaml": ("GB200", "W4A8_MXFP4_MXFP8", 8192, 1024),
    "8xb200-single-node.yaml": ("B200", "W4A8_MXFP4_MXFP8", 32000, 256),
    "8xb200-single-node-balanced.yaml": ("B200", "W4A8_MXFP4_MXFP8", 32000, 256),
    "2xh100-truss.yaml": ("H100", "W4A16_MXFP4", 4000, 1000),
    "trtllm-serve-low-latency.yaml": ("B200", "W4A8_MXFP4_MXFP8", 1024, 1024),
    "trtllm-serve-max-throughput.yaml": ("B200", "W4A8_MXFP4_MXFP8", 1024, 1024),
}


def literal_prediction(overlay: str) -> dict:
    """What tools/predict.py returns for an overlay, as far as the docs print it, made of this file's literals."""
    tps, tpsu, ttft, itl = EXPECTED_PREDICTION[overlay]
    sol, fraction = EXPECTED_SOL[overlay]
    best, ratio = EXPECTED_BEST[overlay]
    gpu, quantization, isl, osl = EXPECTED_WORKLOAD[overlay]
    p = {"aiconfigurator": "0.12.0", "perf_database": "trtllm 1.3.0rc20", "database_mode": EXPECTED_DATABASE[overlay],
         "gpu_type": gpu, "quantization": {"worker": quantization}, "benchmark": {"isl": isl, "osl": osl},
         "tokens_per_s_per_gpu": tps, "tokens_per_s_per_user": tpsu, "ttft_ms": ttft, "itl_ms": itl,
         "benchmark_queue_s": EXPECTED_QUEUE_S[overlay], "sol": {"tokens_per_s_per_gpu": sol}, "fraction_of_sol": fraction,
         "best": {"found": True, "tokens_per_s_per_gpu": best}, "ratio_to_best": ratio}
    if overlay in EXPECTED_LIMIT:
        side, prefill, decode = EXPECTED_LIMIT[overlay]
        p["limit"] = {"side": side, "prefill_requests_per_s": prefill, "decode_requests_per_s": decode,
                      "factor": EXPECTED_LIMIT_FACTOR[overlay]}
    if overlay in EXPECTED_H200_PREDICTION:
        tps, tpsu, ttft, itl = EXPECTED_H200_PREDICTION[overlay]
        p["other_gpu"] = {"gpus": 8, "gpu_type": "H200", "quantization": {"trtllm-serve": "W4A16_MXFP4"},
                          "moe_backend": "TRITON", "tokens_per_s_per_gpu": tps, "tokens_per_s_per_user": tpsu,
                          "ttft_ms": ttft, "itl_ms": itl, "benchmark_queue_s": 0.0}
    return p


class TestDocsFigures:
    """The README's and docs/targets.md's predicted figures are the tool's (python -m ci.generate target-figures; with
    aiconfigurator, TestPredictions.test_should_print_in_the_docs_what_it_predicts runs it), down to its rounding,
    with the benchmark's own queue in the TTFT (issue 46)."""

    def test_should_print_this_files_predictions_in_the_docs(self):
        from ci.generate import target_figures as figures
        rendered = figures.render({overlay: literal_prediction(overlay) for overlay in OVERLAYS})
        stale = [path.name for path, text in rendered.items() if path.read_text() != text]
        assert stale == [], "run python -m ci.generate target-figures (with requirements-predict.txt)"

    def test_should_count_the_benchmarks_queue_in_the_ttft(self):
        from ci.generate import target_figures as figures
        row = next(line for line in figures.README.read_text().splitlines() if line.startswith("| `values/disagg-k8s.yaml`"))
        assert ("**2348** [2029-2717] (raw 2946), 48.8, 225 ms + 86 s queued, 20.5 ms; prefill-limited (prefill 16 vs "
                "decode 61 requests/s)") in row
        # Below a second of queueing, the TTFT stands alone.
        assert figures.latency_figures(literal_prediction("2xh100-truss.yaml")) == \
            "**554** [476-645] (raw 697), 91.3, 416 ms, 10.9 ms"

    def test_should_round_as_the_tool_prints(self):
        from ci.generate import target_figures as figures
        from tools.gptoss.predict import format_prediction  # noqa: F401 (the tool whose rounding the docs follow)
        # agg's ITL is 19.65 ms: the tool prints 19.6 (the docs once said 19.7).
        assert figures.latency_figures(literal_prediction("agg.yaml")).endswith(", 19.6 ms")
        assert f"{19.65:.1f}" == "19.6"

    def test_should_fail_the_check_on_a_drifted_figure(self, tmp_path, monkeypatch, capsys):
        from ci.generate import target_figures as figures
        for name in ("README", "TARGETS_DOC"):
            copy = tmp_path / getattr(figures, name).name
            copy.write_text(getattr(figures, name).read_text().replace("20.5 ms", "20.4 ms"))
            monkeypatch.setattr(figures, name, copy)
        monkeypatch.setattr(figures, "predictions", lambda: {o: literal_prediction(o) for o in OVERLAYS})
        assert figures.main(["--check"]) == 1
        assert capsys.readouterr().err.splitlines() == [
            f"{tmp_path / name}: predicted figures differ from tools/predict.py's: run python -m ci.generate target-figures"
            for name in ("README.md", "targets.md")]
        assert figures.main([]) == 0 and figures.main(["--check"]) == 0


class TestOneSetOfFigures:
    """With --predict, the plan keeps the chart's prefill-bound verdict and reason and leaves its figures (read from
    per-GPU tables) to the prediction of the rendered engines: one output, one set of figures (issue 46)."""

    def test_should_leave_the_table_figures_to_the_prediction(self):
        import tools.gptoss.plan as plan_module
        objects = render_chart(["disagg-k8s.yaml"])
        plain = plan_module.warning_lines(objects)
        predicted = plan_module.warning_lines(objects, predicted=True)
        assert any("1 prefill GPU serves about 15.0 requests/s" in line for line in plain)
        assert not any("requests/s of 8192 tokens" in line or "30.2 ms/token" in line for line in predicted)
        assert ("  WARNING: prefill-bound by the chart's per-GPU tables: the prediction below models the rendered engines, "
                "and its prefill and decode requests/s stand for the tables' figures; expected: the Dynamo disagg recipe's "
                "split (1 prefill GPU, 4 decode GPUs), kept as published; values/disagg-k8s-balanced.yaml splits the same "
                "5 GPUs evenly") in predicted
        # The other warnings stand as they are.
        assert [line for line in predicted if "decode slots" in line] == [line for line in plain if "decode slots" in line]


@needs_aiconfigurator
class TestPlanCommand:
    def test_should_print_the_prediction_after_the_plan(self):
        result = subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "plan.py"), "--predict",
                                 "-f", "values/2xh100-truss.yaml"], capture_output=True, text=True, cwd=REPO_ROOT)
        assert result.returncode == 0, result.stderr
        assert "2 GPUs in total" in result.stdout
        assert "Prediction (aiconfigurator 0.12.0, trtllm 1.3.0rc20 SILICON database, h100_sxm" in result.stdout
        assert "runs W4A16_MXFP4: modeled with aiconfigurator's w4a16_mxfp4 MoE and bfloat16 GEMM modes" in result.stdout
        assert ("  554 tokens/s/GPU calibrated (band 476-645; raw model 697), 91.3 tokens/s/user, TTFT 416 ms, "
                "ITL 10.9 ms (agg, 2 GPUs)\n  calibrated: x0.795, the H100 W4A16_MXFP4 prompt-heavy fit on 2 TensorRT-LLM "
                "published points; band 0.86-1.16 x") in result.stdout
        assert "  speed of light (aiconfigurator's SOL database, same configuration): " in result.stdout
        assert "this target reaches 0.49 of it" in result.stdout


@needs_aiconfigurator
class TestPredictionCache:
    """A test run's processes share their predictions (GPT_OSS_PREDICTION_CACHE, set by ci/test-tiers.sh)."""

    def test_should_give_a_prediction_once_made_to_the_same_inputs_only(self, tmp_path, monkeypatch):
        from tools.gptoss import predict as module
        monkeypatch.setenv(module.CACHE, str(tmp_path))
        first = module.predict(["2xh100-truss.yaml"], best=False)
        assert len(list(tmp_path.glob("*.json"))) == 1
        monkeypatch.setattr(module, "_predict", lambda target, best: pytest.fail("predicted again"))
        assert module.predict(["2xh100-truss.yaml"], best=False) == first
        with pytest.raises(pytest.fail.Exception, match="predicted again"):
            module.predict(["trtllm-serve-low-latency.yaml"], best=False)


@needs_aiconfigurator
class TestDatabaseIndex:
    """aiconfigurator's database index is read once per process (tools/gptoss/predict.py read_database_index_once)."""

    def test_should_read_the_index_once_per_process(self, monkeypatch):
        from aiconfigurator_core.sdk import perf_database
        from tools.gptoss import predict as module
        reads = []

        def read(systems_paths=None):
            reads.append(systems_paths)
            return {"gb200": {"trtllm": ["1.3.0rc20"]}}
        monkeypatch.setattr(perf_database, "get_supported_databases", read)
        with module.aiconfigurator_calls():
            first = perf_database.get_supported_databases()
        first["gb200"]["trtllm"].append("changed by a caller")
        assert perf_database.get_supported_databases() == {"gb200": {"trtllm": ["1.3.0rc20"]}}
        assert reads == [None]
        perf_database.get_supported_databases(systems_paths="/elsewhere")
        assert reads == [None, "/elsewhere"]

    def test_should_answer_what_aiconfigurator_reads(self):
        from aiconfigurator_core.sdk import perf_database
        from tools.gptoss import predict as module
        module.read_database_index_once()
        once = perf_database.get_supported_databases
        assert once() == once.__wrapped__() and "gb200" in once()
