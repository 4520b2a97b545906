"""TensorRT-LLM engine configs per role, against FACTS.md, and only with real TensorRT-LLM keys."""
import itertools
import subprocess
import sys
import zipfile

import pytest
import yaml

from ci.gptoss_ci import sync_trtllm_fields as sync
from tests.helpers import (DGD, DYNAMO_OVERLAYS, ENGINE_CONFIG, OVERLAYS, REPO_ROOT, ChartRenderError, Refusal,
                           dynamo_line_values,
                           assert_refused, dgd_workers, find, refusal_params, render_chart)
from tools.gptoss.yaml_text import load_yaml

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
    return {name.removesuffix(".yaml"): load_yaml(text) for name, text in configmap["data"].items()}


def chart_field_lists() -> dict:
    """The chart's generated key lists (templates/engine/_trtllm-fields.tpl): {"releases": {release: {"list",
    "source"}}, "lists": {name: {"top": [...], "nested": {key: [...]}}}}."""
    text = (REPO_ROOT / "charts" / "gpt-oss" / "templates" / "engine" / "_trtllm-fields.tpl").read_text()
    body = text.split('{{- define "gpt-oss.trtllmFieldLists" -}}\n', 1)[1].rsplit("{{- end }}", 1)[0]
    return load_yaml(body)


def chart_field_list(release: str) -> dict:
    """The key list the chart checks a release's engine YAML against: {"top": [...], "nested": {key: [...]}}."""
    lists = chart_field_lists()
    return lists["lists"][lists["releases"][release]["list"]]


def test_should_cover_every_overlay():
    assert sorted(EXPECTED_ENGINE) == OVERLAYS


@pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
class TestEngineConfig:
    def test_should_write_the_facts_engine_settings_per_role(self, overlay):
        assert engine_configs(overlay) == EXPECTED_ENGINE[overlay]

    def test_should_use_only_tensorrt_llm_keys(self, overlay):
        """Against the list of the TensorRT-LLM inside Dynamo 1.6's runtime image (1.3.0rc29, DYNAMO-RELEASES-FACTS.md
        section 0), which trtllm-serve's default image runs too (TestEngineKeyList keeps it equal to its source)."""
        fields = chart_field_list("1.3.0rc29")
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




# The TensorRT-LLM release each runtime runs (DYNAMO-RELEASES-FACTS.md section 0: Dynamo 1.2.x pins 1.3.0rc14,
# 1.6.x 1.3.0rc29; trtllm-serve runs its image's release). Values that select it, and the release.
RUNS = [
    ("dynamo-1.2-line", "agg.yaml", dynamo_line_values("1.2"), "workers.worker", "1.3.0rc14"),
    ("dynamo-1.6-line", "agg.yaml", dynamo_line_values("1.6"), "workers.worker", "1.3.0rc29"),
    ("trtllm-serve-1.2.0", "trtllm-serve-low-latency.yaml", {"trtllmServe": {"image": {"tag": "1.2.0"}}},
     "trtllmServe", "1.2.0"),
    ("trtllm-serve-1.3.0rc29", "trtllm-serve-low-latency.yaml", {"trtllmServe": {"image": {"tag": "1.3.0rc29"}}},
     "trtllmServe", "1.3.0rc29"),
]


def with_engine_key(values: dict, owner: str, key: str, value=True) -> dict:
    """values plus one engine key on the owner (workers.worker or trtllmServe)."""
    if owner == "trtllmServe":
        return {**values, "trtllmServe": {**values.get("trtllmServe", {}), "engine": {key: value}}}
    return {**values, "workers": {"worker": {"engine": {key: value}}}}


class TestTrtllmRelease:
    @pytest.mark.parametrize("overlay,values,owner,release", [r[1:] for r in RUNS], ids=[r[0] for r in RUNS])
    def test_should_check_the_engine_against_the_release_that_runs(self, overlay, values, owner, release):
        with pytest.raises(ChartRenderError) as error:
            render_chart([overlay], with_engine_key(values, owner, "no_such_engine_key"))
        assert (f"{owner}.engine.no_such_engine_key is not a TensorRT-LLM engine key (LlmArgs of TensorRT-LLM "
                f"{release}, the release that runs)") in str(error.value)

    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_render_every_engine_of_the_1_6_line(self, overlay):
        """Each overlay's engine YAML passes the chart's check on Dynamo 1.6.1 and holds only 1.3.0rc29 keys."""
        objects = render_chart([overlay], dynamo_line_values("1.6"), show_only=["templates/engine/configmap.yaml"])
        fields = chart_field_list("1.3.0rc29")
        for role, text in find(objects, "ConfigMap")["data"].items():
            config = yaml.safe_load(text)
            assert set(config) <= set(fields["top"]), (role, set(config) - set(fields["top"]))

    def test_should_list_every_release_the_chart_runs(self):
        assert {"1.3.0rc29", "1.3.0rc14", "1.2.0"} <= set(chart_field_lists()["releases"])

    @pytest.mark.parametrize("one,other", list(itertools.permutations(["1.3.0rc29", "1.3.0rc14", "1.2.0"], 2)))
    def test_should_refuse_a_key_of_one_release_on_another(self, one, other):
        """A key only one release has is refused where the other runs (live once the lists come from the wheels)."""
        only = sorted(set(chart_field_list(one)["top"]) - set(chart_field_list(other)["top"]))
        if not only:
            pytest.skip(f"every {one} key is a {other} key in the chart's lists "
                        f"({chart_field_lists()['releases'][one]['source']})")
        run = {r[-1]: r for r in RUNS}[other]
        with pytest.raises(ChartRenderError, match=f"engine.{only[0]} is not a TensorRT-LLM engine key"):
            render_chart([run[1]], with_engine_key(run[2], run[3], only[0]))


LLM_ARGS = """
from typing import ClassVar, Optional
from pydantic import ConfigDict, PrivateAttr
from .utils import StrictBaseModel
from ..models.base import PackagedBase


class CudaGraphConfig(StrictBaseModel):
    batch_sizes: Optional[list] = None
    enable_padding: bool = False


class BaseLlmArgs(StrictBaseModel):
    model: str
    tokenizer: Optional[str] = None
    _hidden: int = 0
    KIND: ClassVar[str] = "base"
    cache: dict = PrivateAttr(default_factory=dict)
    model_config = ConfigDict(extra="forbid")


class TorchLlmArgs(BaseLlmArgs, PackagedBase):
    tokenizer: str = "auto"
    cuda_graph_config: Optional[CudaGraphConfig] = None
"""


class TestFieldReader:
    """ci/sync-trtllm-fields.py reads pydantic fields from a wheel's source with ast, across modules."""

    @pytest.fixture()
    def wheel(self, tmp_path):
        path = tmp_path / "tensorrt_llm-0.0.0-py3-none-manylinux_2_28_x86_64.whl"
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("tensorrt_llm/llmapi/llm_args.py", LLM_ARGS)
            archive.writestr("tensorrt_llm/llmapi/utils.py",
                             "from pydantic import BaseModel\nclass StrictBaseModel(BaseModel):\n    strict_field: int = 0\n")
            archive.writestr("tensorrt_llm/models/base/__init__.py",
                             "class PackagedBase:\n    from_package: int = 1\n    # trtllm_num_requests_waiting\n")
        return path

    def test_should_read_fields_of_the_class_and_its_bases_once(self, wheel):
        fields = sync.read_fields(sync.Wheel(str(wheel)).text)
        assert fields["LlmArgs"] == ["strict_field", "model", "tokenizer", "from_package", "cuda_graph_config"]
        assert fields["CudaGraphConfig"] == ["strict_field", "batch_sizes", "enable_padding"]
        assert fields["MoeConfig"] == []

    def test_should_cite_member_and_line(self, wheel):
        assert sync.find_text(sync.Wheel(str(wheel)), "trtllm_num_requests_waiting", "tensorrt_llm/models/") == [
            "tensorrt_llm/models/base/__init__.py:3: # trtllm_num_requests_waiting"]

    def test_should_name_each_lists_wheel_in_the_chart(self, wheel):
        fields = sync.read_fields(sync.Wheel(str(wheel)).text)
        registry = {"releases": {"1.3.0rc29": {"source": {"wheel": wheel.name, "sha256": "ab" * 32,
                                                          "member": sync.LLM_ARGS}, "fields": fields}}}
        shared = {"source": "A list. More.", "fields": {"LlmArgs": ["model"], **{c: [] for c in sync.NESTED.values()}}}
        text = "\n".join(sync.chart_lines(registry, shared, "shared.json"))
        assert f"  1.3.0rc29: {wheel.name} (sha256 {'ab' * 32}), tensorrt_llm/llmapi/llm_args.py" in text
        lists = yaml.safe_load(text.split('{{- define "gpt-oss.trtllmFieldLists" -}}\n', 1)[1].rsplit("{{- end }}", 1)[0])
        assert lists["releases"]["1.3.0rc29"]["list"] == "1.3.0rc29"
        assert lists["releases"]["1.2.0"]["list"] == "shared"
        assert lists["lists"]["1.3.0rc29"]["top"] == fields["LlmArgs"]


@pytest.mark.skipif(not __import__("importlib.util").util.find_spec("aiconfigurator"),
                    reason="aiconfigurator is not installed (pip install -r requirements-predict.txt)")
@pytest.mark.parametrize("release", ["1.3.0rc14"])
def test_should_know_every_key_aiconfigurator_writes_for_the_release(release):
    """aiconfigurator (NVIDIA's, pinned in requirements-predict.txt) ships an extra-engine-args template per
    TensorRT-LLM release; every key it writes for a release the chart runs is in the chart's list of that release."""
    import re
    from importlib.resources import files
    text = (files("aiconfigurator") / "generator" / "config" / "backend_templates" / "trtllm"
            / f"extra_engine_args.{release}.yaml.j2").read_text()
    fields, owner, nested = chart_field_list(release), None, {}
    for line in text.splitlines():
        if match := re.match(r"([a-z_]+):", line):
            owner = match.group(1)
            assert owner in fields["top"], owner
        elif (match := re.match(r" {2,4}([a-z_]+):", line)) and owner in fields["nested"]:
            nested.setdefault(owner, set()).add(match.group(1))
    for owner, keys in nested.items():
        assert keys <= set(fields["nested"][owner]), (owner, keys - set(fields["nested"][owner]))
    assert {"moe_config", "kv_cache_config", "cuda_graph_config"} <= set(nested)


# Refusals (gpt-oss.checkValues.<concern>, templates/validation/_check-*.tpl): one table per concern, one case per
# message; tests/test_check_values.py counts them against the fail calls.
# gpt-oss.checkValues.engine and gpt-oss.checkEngineKeys (_check-engine.tpl): TensorRT-LLM keys only.
ENGINE_REFUSALS = [
    Refusal("engine-key-derived", "agg.yaml", {"workers": {"worker": {"engine": {"max_batch_size": 512}}}},
            "workers.worker.engine.max_batch_size is set by the chart from workers.worker.maxBatchSize; set that instead"),
    Refusal("engine-key-unknown", "2xh100-truss.yaml", {"workers": {"worker": {"engine": {"enable_mixed_sampler": True}}}},
            "workers.worker.engine.enable_mixed_sampler is not a TensorRT-LLM engine key (LlmArgs of TensorRT-LLM 1.3.0rc29, "
            "the release that runs), so the worker would fail at start; allowed: model, tokenizer,"),
    Refusal("engine-nested-config-not-a-map", "trtllm-serve-low-latency.yaml", {"trtllmServe": {"engine": {"moe_config": 1}}},
            "trtllmServe.engine.moe_config=1 is not a map: TensorRT-LLM reads it as a moe_config config; allowed: a map of "
            "backend,"),
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
