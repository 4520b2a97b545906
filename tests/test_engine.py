"""TensorRT-LLM engine configs per role, against FACTS.md, and only with real TensorRT-LLM keys."""
import subprocess
import sys

import pytest
import yaml

from tests.helpers import (DGD, DYNAMO_OVERLAYS, ENGINE_CONFIG, OVERLAYS, REPO_ROOT, Refusal, assert_refused,
                           dgd_workers, find, refusal_params, render_chart)

# The whole extra-engine-args YAML of each role, as FACTS.md lists it (flags folded into keys:
# --tensor-parallel-size -> tensor_parallel_size, --free-gpu-memory-fraction ->
# kv_cache_config.free_gpu_memory_fraction, ...).
EXPECTED_ENGINE = {
    "agg.yaml": {
        "worker": {
            "tensor_parallel_size": 4, "moe_expert_parallel_size": 4, "pipeline_parallel_size": 1,
            "enable_attention_dp": True, "max_batch_size": 800,
            "cuda_graph_config": {"max_batch_size": 800, "enable_padding": True},
            "kv_cache_config": {"enable_block_reuse": False, "free_gpu_memory_fraction": 0.9},
            "stream_interval": 20, "moe_config": {"backend": "CUTLASS"},
        },
    },
    "disagg-k8s.yaml": {
        "prefill": {
            "tensor_parallel_size": 1, "moe_expert_parallel_size": 1, "pipeline_parallel_size": 1,
            "max_batch_size": 64, "max_num_tokens": 20000, "max_seq_len": 9000,
            "disable_overlap_scheduler": True, "enable_attention_dp": False,
            "kv_cache_config": {"dtype": "fp8", "enable_block_reuse": False, "free_gpu_memory_fraction": 0.8},
            "cuda_graph_config": {"enable_padding": True, "max_batch_size": 30},
            "cache_transceiver_config": {"backend": "UCX", "max_tokens_in_buffer": 9216},
            "moe_config": {"backend": "TRTLLM"}, "stream_interval": 20, "print_iter_log": True,
            "trust_remote_code": True,
        },
        "decode": {
            "tensor_parallel_size": 4, "moe_expert_parallel_size": 1, "pipeline_parallel_size": 1,
            "max_batch_size": 1280, "max_num_tokens": 20000, "max_seq_len": 11000,
            "disable_overlap_scheduler": False, "enable_attention_dp": False,
            "kv_cache_config": {"dtype": "fp8", "enable_block_reuse": False, "free_gpu_memory_fraction": 0.85},
            "cuda_graph_config": {"enable_padding": True, "max_batch_size": 1280},
            "cache_transceiver_config": {"backend": "UCX", "max_tokens_in_buffer": 9216},
            "moe_config": {"backend": "TRTLLM"}, "stream_interval": 20, "print_iter_log": True,
            "trust_remote_code": True, "allreduce_strategy": "AUTO",
            "attention_dp_config": {"enable_balance": True},
        },
    },
    # Our tuning of disagg-k8s: the recipe's engines, decode at TP1 with 192 sequences (README, values file).
    "disagg-k8s-balanced.yaml": {
        "prefill": {
            "tensor_parallel_size": 1, "moe_expert_parallel_size": 1, "pipeline_parallel_size": 1,
            "max_batch_size": 64, "max_num_tokens": 20000, "max_seq_len": 9000,
            "disable_overlap_scheduler": True, "enable_attention_dp": False,
            "kv_cache_config": {"dtype": "fp8", "enable_block_reuse": False, "free_gpu_memory_fraction": 0.8},
            "cuda_graph_config": {"enable_padding": True, "max_batch_size": 30},
            "cache_transceiver_config": {"backend": "UCX", "max_tokens_in_buffer": 9216},
            "moe_config": {"backend": "TRTLLM"}, "stream_interval": 20, "print_iter_log": True,
            "trust_remote_code": True,
        },
        "decode": {
            "tensor_parallel_size": 1, "moe_expert_parallel_size": 1, "pipeline_parallel_size": 1,
            "max_batch_size": 192, "max_num_tokens": 20000, "max_seq_len": 11000,
            "disable_overlap_scheduler": False, "enable_attention_dp": False,
            "kv_cache_config": {"dtype": "fp8", "enable_block_reuse": False, "free_gpu_memory_fraction": 0.85},
            "cuda_graph_config": {"enable_padding": True, "max_batch_size": 192},
            "cache_transceiver_config": {"backend": "UCX", "max_tokens_in_buffer": 9216},
            "moe_config": {"backend": "TRTLLM"}, "stream_interval": 20, "print_iter_log": True,
            "trust_remote_code": True, "allreduce_strategy": "AUTO",
            "attention_dp_config": {"enable_balance": True},
        },
    },
    "8xb200-single-node.yaml": {
        "prefill": {
            "tensor_parallel_size": 4, "moe_expert_parallel_size": 4, "pipeline_parallel_size": 1,
            "enable_attention_dp": False, "enable_chunked_prefill": True, "disable_overlap_scheduler": True,
            "moe_config": {"backend": "CUTLASS"}, "cache_transceiver_config": {"backend": "UCX"},
            "cuda_graph_config": {"max_batch_size": 32, "enable_padding": True},
            "max_num_tokens": 20000, "max_batch_size": 32,
            "kv_cache_config": {"free_gpu_memory_fraction": 0.9},
        },
        "decode": {
            "tensor_parallel_size": 4, "moe_expert_parallel_size": 4, "pipeline_parallel_size": 1,
            "enable_attention_dp": True, "disable_overlap_scheduler": False,
            "moe_config": {"backend": "CUTLASS"}, "cache_transceiver_config": {"backend": "UCX"},
            "cuda_graph_config": {"max_batch_size": 128, "enable_padding": True},
            "max_num_tokens": 16384, "max_batch_size": 128,
            "kv_cache_config": {"free_gpu_memory_fraction": 0.9},
        },
    },
    # Our tuning of 8xb200-single-node: the guide's CUTLASS MoE and padded CUDA graphs, 12 sequences per TP1
    # worker, two whole prompts per step (values file).
    "8xb200-single-node-balanced.yaml": {
        "worker": {
            "tensor_parallel_size": 1, "moe_expert_parallel_size": 1, "pipeline_parallel_size": 1,
            "enable_attention_dp": False, "max_batch_size": 12, "max_num_tokens": 65536,
            "moe_config": {"backend": "CUTLASS"},
            "cuda_graph_config": {"max_batch_size": 12, "enable_padding": True},
            "kv_cache_config": {"free_gpu_memory_fraction": 0.9},
        },
    },
    "2xh100-truss.yaml": {
        "worker": {
            "tensor_parallel_size": 2, "moe_expert_parallel_size": 2, "pipeline_parallel_size": 1,
            "enable_attention_dp": False, "max_batch_size": 64, "max_seq_len": 98304,
            "enable_chunked_prefill": True, "max_num_tokens": 8192,
            "cuda_graph_config": {"enable_padding": True},
            "kv_cache_config": {"free_gpu_memory_fraction": 0.8, "enable_block_reuse": True},
            "moe_config": {"backend": "TRITON"}, "disable_overlap_scheduler": True,
        },
    },
    # FACTS.md "trtllm-serve without Dynamo": the guide's extra_llm_api_options YAML (enable_mixed_sampler
    # left out); parallelism, batch size and KV fraction are flags (tests/test_trtllm_serve.py).
    "trtllm-serve-low-latency.yaml": {
        "trtllm-serve": {
            "enable_attention_dp": False,
            "cuda_graph_config": {"max_batch_size": 8, "enable_padding": True},
            "moe_config": {"backend": "TRTLLM"},
        },
    },
    "trtllm-serve-max-throughput.yaml": {
        "trtllm-serve": {
            "enable_attention_dp": True,
            "cuda_graph_config": {"max_batch_size": 640, "enable_padding": True},
            "stream_interval": 10,
            "moe_config": {"backend": "CUTLASS"},
        },
    },
}


def engine_configs(overlay):
    configmap = find(render_chart([overlay], show_only=[ENGINE_CONFIG]), "ConfigMap")
    return {name.removesuffix(".yaml"): yaml.safe_load(text) for name, text in configmap["data"].items()}


def chart_field_list() -> dict:
    """The chart's generated key list (templates/engine/_trtllm-fields.tpl): {"top": [...], "nested": {key: [...]}}."""
    text = (REPO_ROOT / "charts" / "gpt-oss" / "templates" / "engine" / "_trtllm-fields.tpl").read_text()
    body = text.split('{{- define "gpt-oss.trtllmFields" -}}\n', 1)[1].rsplit("{{- end }}", 1)[0]
    return yaml.safe_load(body)


def test_should_cover_every_overlay():
    assert sorted(EXPECTED_ENGINE) == OVERLAYS


@pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
class TestEngineConfig:
    def test_should_write_the_facts_engine_settings_per_role(self, overlay):
        assert engine_configs(overlay) == EXPECTED_ENGINE[overlay]

    def test_should_use_only_tensorrt_llm_keys(self, overlay):
        """Against the chart's copy of the field list (TestEngineKeyList keeps it equal to the source)."""
        fields = chart_field_list()
        for role, config in engine_configs(overlay).items():
            assert set(config) <= set(fields["top"]), (role, set(config) - set(fields["top"]))
            for key, allowed in fields["nested"].items():
                if isinstance(config.get(key), dict):
                    assert set(config[key]) <= set(allowed), (role, key, set(config[key]) - set(allowed))


# trtllm-serve reads /engine/trtllm-serve.yaml: tests/test_trtllm_serve.py.
@pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
def test_should_point_each_worker_at_its_own_engine_file(overlay):
    dgd = find(render_chart([overlay], show_only=[DGD]), "DynamoGraphDeployment")
    files = {w["args"][w["args"].index("--extra-engine-args") + 1] for w in dgd_workers(dgd).values()}
    assert files == {f"/engine/{role}.yaml" for role in EXPECTED_ENGINE[overlay]}


class TestEngineKeyList:
    def test_should_carry_the_same_key_list_as_the_source(self, shared_dir, tmp_path):
        """The chart's copy (templates/engine/_trtllm-fields.tpl) must match trtllm/llmargs-fields.json."""
        target = REPO_ROOT / "charts" / "gpt-oss" / "templates" / "engine" / "_trtllm-fields.tpl"
        before = target.read_text()
        try:
            subprocess.run([sys.executable, str(REPO_ROOT / "ci" / "sync-trtllm-fields.py"),
                            str(shared_dir / "trtllm" / "llmargs-fields.json")], check=True, capture_output=True)
            assert target.read_text() == before, "run ci/sync-trtllm-fields.py and commit the result"
        finally:
            target.write_text(before)

    def test_should_not_know_enable_mixed_sampler(self):
        text = (REPO_ROOT / "charts" / "gpt-oss" / "templates" / "engine" / "_trtllm-fields.tpl").read_text()
        assert "  - enable_attention_dp\n" in text
        assert "enable_mixed_sampler" not in text


# Refusals (gpt-oss.checkValues.<concern>, templates/validation/_check-*.tpl): one table per concern, one case per
# message; tests/test_check_values.py counts them against the fail calls.
# gpt-oss.checkValues.engine and gpt-oss.checkEngineKeys (_check-engine.tpl): TensorRT-LLM keys only.
ENGINE_REFUSALS = [
    Refusal("engine-key-derived", "agg.yaml", {"workers": {"worker": {"engine": {"max_batch_size": 512}}}},
            "workers.worker.engine.max_batch_size is set by the chart from workers.worker.maxBatchSize; set that instead"),
    Refusal("engine-key-unknown", "2xh100-truss.yaml", {"workers": {"worker": {"engine": {"enable_mixed_sampler": True}}}},
            "workers.worker.engine.enable_mixed_sampler is not a TensorRT-LLM engine key (LlmArgs of TensorRT-LLM 1.2/1.3), "
            "so the worker would fail at start; allowed: model, tokenizer,"),
    Refusal("engine-nested-key-unknown", "agg.yaml", {"workers": {"worker": {"engine": {"moe_config": {"backends": "CUTLASS"}}}}},
            "workers.worker.engine.moe_config.backends is not a key of moe_config; allowed: backend, max_num_tokens,"),
    Refusal("no-kv-transfer-backend", "8xb200-single-node.yaml", {"workers": {"decode": {"engine": {"cache_transceiver_config": None}}}},
            "workers.decode.engine.cache_transceiver_config.backend is not set: prefill and decode exchange the KV cache "
            "through it; allowed: UCX, NIXL, MPI or DEFAULT"),
]
REFUSALS = {"engine": ENGINE_REFUSALS}


@pytest.mark.parametrize("case", refusal_params(REFUSALS))
def test_should_refuse_with_a_message_naming_the_keys(case):
    assert_refused(case)
