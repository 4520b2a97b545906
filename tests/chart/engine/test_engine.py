"""TensorRT-LLM engine configs per role, against FACTS.md, and only with real TensorRT-LLM keys."""
import functools
import json
import zipfile
from typing import NamedTuple

import pytest
import yaml

from ci.generate import trtllm_fields as sync
from tools.gptoss import plan as plan_tool
from tests.helpers import (DGD, DYNAMO_OVERLAYS, ENGINE_CONFIG, OVERLAYS, REPO_ROOT, TRTLLM_SERVE_OVERLAYS, Refusal,
                           assert_refused, dgd_workers, dynamo_line_values, find, plan_document, refusal_params,
                           needs_aiconfigurator, render_chart, render_error, render_notes)
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
    # left out); parallelism, batch size and KV fraction are flags (tests/chart/trtllm_serve/test_trtllm_serve.py).
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


def engine_configs(overlay, values=None):
    configmap = find(render_chart([overlay], values, show_only=[ENGINE_CONFIG]), "ConfigMap")
    return {name.removesuffix(".yaml"): load_yaml(text) for name, text in configmap["data"].items()}


FIELDS_TEMPLATE = REPO_ROOT / "charts" / "gpt-oss" / "templates" / "engine" / "_trtllm-fields.tpl"
# The TensorRT-LLM releases the chart runs (issue 45; DYNAMO-RELEASES-FACTS.md section 0): the one inside each Dynamo
# line's runtime image, and the trtllm-serve image tags with a key list of their own.
LINE_RELEASES = {"1.2": "1.3.0rc14", "1.6": "1.3.0rc29", "1.7": "1.4.0rc2"}
SERVE_RELEASES = ["1.2.0", "1.2.1", "1.3.0rc14", "1.3.0rc29", "1.4.0rc2"]


@functools.cache
def chart_define(name: str):
    """One define of the generated templates/engine/_trtllm-fields.tpl, parsed."""
    body = FIELDS_TEMPLATE.read_text().split(f'{{{{- define "{name}" -}}}}\n', 1)[1].split("{{- end }}", 1)[0]
    return load_yaml(body)


def chart_keys(release: str) -> dict:
    """The list the chart checks a release's engine YAML against: top, nested, unions, values."""
    return chart_define(f"gpt-oss.trtllmKeys.{release}")


def release_id(release: str) -> str:
    """The release and how its list was read (basis: read, read-in-part, inferred, assembled or not-read), so a test id says
    how strong the check is."""
    return f"{release}-{chart_define('gpt-oss.trtllmKeyLists')['releases'][release]['basis']}"


def unknown_keys(config: dict, keys: dict) -> list[str]:
    """The paths of an engine config the release's list lacks: top-level keys, keys of a nested config (of a
    speculative_config: of its decoding_type's member)."""
    missing = [key for key in config if key not in keys["top"]]
    for key, value in config.items():
        if isinstance(value, dict) and key in keys["nested"]:
            union = keys.get("unions", {}).get(key)
            allowed = keys["nested"][key]
            if union and union["discriminator"] in value:
                allowed = union["members"].get(str(value[union["discriminator"]]), [])
            missing += [f"{key}.{sub}" for sub in value if sub not in allowed]
    return missing


def test_should_cover_every_overlay():
    assert sorted(EXPECTED_ENGINE) == OVERLAYS


@pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
class TestEngineConfig:
    def test_should_write_the_facts_engine_settings_per_role(self, overlay):
        assert engine_configs(overlay) == EXPECTED_ENGINE[overlay]


# Every release each overlay can run: a Dynamo overlay the release of either line, a trtllm-serve overlay every
# release with a list (its image tag). The engine YAML the chart writes does not depend on the release.
RUNNABLE = ([(overlay, release) for overlay in DYNAMO_OVERLAYS for release in LINE_RELEASES.values()]
            + [(overlay, release) for overlay in TRTLLM_SERVE_OVERLAYS for release in SERVE_RELEASES])


@pytest.mark.parametrize("overlay,release", RUNNABLE, ids=[f"{o}-on-{release_id(r)}" for o, r in RUNNABLE])
def test_should_set_only_keys_of_every_release_the_overlay_runs(overlay, release):
    for role, config in engine_configs(overlay).items():
        assert unknown_keys(config, chart_keys(release)) == [], role


# trtllm-serve reads /engine/trtllm-serve.yaml: tests/chart/trtllm_serve/test_trtllm_serve.py.
@pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
def test_should_point_each_worker_at_its_own_engine_file(overlay):
    dgd = find(render_chart([overlay], show_only=[DGD]), "DynamoGraphDeployment")
    files = {w["args"][w["args"].index("--extra-engine-args") + 1] for w in dgd_workers(dgd).values()}
    assert files == {f"/engine/{role}.yaml" for role in EXPECTED_ENGINE[overlay]}


def accepts(keys: dict, path: str) -> bool:
    """Whether a release's list takes a path: "key", "key.subkey" or "key.field=value"."""
    if "=" in path:
        field, value = path.split("=")
        return value in keys["values"].get(field, [])
    key, _, sub = path.partition(".")
    return key in keys["top"] and (not sub or sub in keys["nested"].get(key, [sub]))


class TestEngineKeyList:
    def test_should_carry_the_lists_of_the_shared_files(self, shared_dir):
        """The chart's copy (templates/engine/_trtllm-fields.tpl) is what python -m ci.generate trtllm-fields writes from
        trtllm/llmargs-fields-<release>.json and the shared trtllm/llmargs-fields.json."""
        assert sync.main(["--check", str(shared_dir / "trtllm")]) == 0, "run python -m ci.generate trtllm-fields and commit the result"

    def test_should_have_a_list_of_each_release_the_chart_runs(self, shared_dir):
        assert chart_define("gpt-oss.trtllmKeyLists")["order"] == SERVE_RELEASES
        assert sorted(path.name for path in (shared_dir / "trtllm").glob("llmargs-fields-*.json")) == [
            f"llmargs-fields-{release}.json" for release in SERVE_RELEASES]

    @pytest.mark.parametrize("release", SERVE_RELEASES, ids=release_id)
    def test_should_take_every_field_of_the_release_and_no_other(self, shared_dir, release):
        fields = json.loads((shared_dir / "trtllm" / f"llmargs-fields-{release}.json").read_text())["fields"]
        keys = chart_keys(release)
        # hf_revision: the YAML's alias of revision from 1.3.0rc14 on (RELEASES-FACTS.md).
        assert set(keys["top"]) - set(fields["LlmArgs"]) == (set() if release.startswith("1.2") else {"hf_revision"})
        assert set(fields["LlmArgs"]) <= set(keys["top"])
        assert keys["nested"]["kv_cache_config"] == fields["KvCacheConfig"]
        assert keys["nested"]["moe_config"] == fields["MoeConfig"]

    def test_should_say_how_each_list_was_read(self):
        """The issue's words: 1.3.0rc14 read in full from the release's own source, 1.2.1 nearly so, 1.2.0 inferred
        equal to 1.2.1, 1.3.0rc29 assembled from its documentation."""
        releases = chart_define("gpt-oss.trtllmKeyLists")["releases"]
        assert {release: entry["basis"] for release, entry in releases.items()} == {
            "1.2.0": "inferred", "1.2.1": "read-in-part", "1.3.0rc14": "read", "1.3.0rc29": "assembled",
            "1.4.0rc2": "not-read"}
        assert "1.2.1" in releases["1.2.0"]["words"]

    @pytest.mark.parametrize("old", sorted(sync.REPLACEMENTS))
    def test_should_name_only_replacements_the_lists_bear_out(self, old):
        """Where a refusal names what replaced a key, one release takes the old name and not the new, and a later
        one the new and not the old."""
        new = sync.REPLACEMENTS[old][0]
        takes = [(accepts(chart_keys(r), old), accepts(chart_keys(r), new)) for r in SERVE_RELEASES]
        assert (True, False) in takes and (False, True) in takes[takes.index((True, False)):]


# The TensorRT-LLM release each runtime runs, the values that select it, who the refusal says reads the YAML.
RUNS = [
    ("dynamo-1.2-line", "agg.yaml", dynamo_line_values("1.2"), "workers.worker", "1.3.0rc14",
     "the release inside the Dynamo 1.2 line's runtime"),
    ("dynamo-1.6-line", "agg.yaml", dynamo_line_values("1.6"), "workers.worker", "1.3.0rc29",
     "the release inside the Dynamo 1.6 line's runtime"),
    ("dynamo-1.7-line", "agg.yaml", dynamo_line_values("1.7"), "workers.worker", "1.4.0rc2",
     "the release inside the Dynamo 1.7 line's runtime"),
    ("trtllm-serve-1.2.0", "trtllm-serve-low-latency.yaml", {"trtllmServe": {"image": {"tag": "1.2.0"}}},
     "trtllmServe", "1.2.0", "the release of trtllmServe.image.tag=1.2.0"),
]


def with_engine(values: dict, owner: str, engine: dict) -> dict:
    """values plus engine keys on the owner (workers.worker or trtllmServe)."""
    if owner == "trtllmServe":
        return {**values, "trtllmServe": {**values.get("trtllmServe", {}), "engine": engine}}
    return {**values, "workers": {"worker": {"engine": engine}}}


class TestTrtllmRelease:
    @pytest.mark.parametrize("overlay,values,owner,release,reader", [r[1:] for r in RUNS], ids=[r[0] for r in RUNS])
    def test_should_check_the_engine_against_the_release_that_reads_it(self, overlay, values, owner, release, reader):
        error = render_error(overlay, with_engine(values, owner, {"no_such_engine_key": True}))
        assert (f"{owner}.engine.no_such_engine_key is not an engine key of TensorRT-LLM {release} ({reader}): "
                "TensorRT-LLM would refuse the engine YAML at start; allowed: model, tokenizer,") in error

    @pytest.mark.parametrize("overlay,values,release,words", [
        ("agg.yaml", {}, "1.4.0rc2", "the release inside the Dynamo 1.7 line's runtime (its list not read: the list of "
                                     "1.3.0rc29 corrected with the documentation of 1.4.0rc1 and 1.4.0rc4, partly "
                                     "inferred)"),
        ("agg.yaml", dynamo_line_values("1.6"), "1.3.0rc29", "the release inside the Dynamo 1.6 line's runtime (its "
                                                             "list assembled from the release's documentation, partly "
                                                             "inferred)"),
        ("agg.yaml", dynamo_line_values("1.2"), "1.3.0rc14",
         "the release inside the Dynamo 1.2 line's runtime (its list read in full from the release's own source)"),
        ("trtllm-serve-low-latency.yaml", {"trtllmServe": {"image": {"tag": "1.2.0"}}}, "1.2.0",
         "the release of trtllmServe.image.tag=1.2.0 (its list inferred: the list of 1.2.1"),
    ], ids=["dynamo-1.7-line", "dynamo-1.6-line", "dynamo-1.2-line", "trtllm-serve-1.2.0"])
    def test_should_say_which_list_checked_the_engine_yaml(self, overlay, values, release, words):
        """NOTES.txt and the plan name the release whose list checked the engine YAML, and how its list was read,
        in a user's words: no file of ../shared."""
        sentence = f"checked against the engine keys of TensorRT-LLM {release}, {words}"
        [line] = [line for line in render_notes([overlay], values).splitlines() if line.startswith("  Engine YAML: ")]
        assert line.startswith(f"  Engine YAML: {sentence}")
        assert "llmargs" not in line and ".json" not in line
        assert sentence in plan_document(render_chart([overlay], values))["engineKeys"]["summary"]
        assert plan_document(render_chart([overlay], values))["engineKeys"]["list"] == release

    def test_should_read_the_release_of_a_tag_pinned_by_digest(self):
        """docs/security.md's pin, <tag>@sha256:<64 hex>: the tag still names the release whose list checks the YAML."""
        tag = "1.3.0rc29@sha256:" + "0123abcd" * 8
        doc = plan_document(render_chart(["trtllm-serve-low-latency.yaml"], {"trtllmServe": {"image": {"tag": tag}}}))
        assert doc["engineKeys"]["list"] == "1.3.0rc29" and doc["trtllmRelease"] == "1.3.0rc29"

    def test_should_check_an_unlisted_release_against_the_shared_list_only_when_allowed(self):
        values = {"trtllmServe": {"image": {"tag": "1.4.0rc1"}, "allowUnlistedRelease": True}}
        doc = plan_document(render_chart(["trtllm-serve-low-latency.yaml"], values))
        assert doc["engineKeys"]["list"] == "shared"
        shared = ("checked against a shared list read from a 1.2/1.3-era TensorRT-LLM source, of no release in "
                  "particular, since TensorRT-LLM 1.4.0rc1, the release of trtllmServe.image.tag=1.4.0rc1, has no list "
                  "of its own (trtllmServe.allowUnlistedRelease=true)")
        assert doc["engineKeys"]["summary"] == shared
        assert [w for w in doc["warnings"] if w.startswith(f"trtllmServe.engine was {shared}: a key that release")]
        # The chart says "shared" only where it checks against the shared list.
        for overlay, values in [("trtllm-serve-low-latency.yaml", {}), ("agg.yaml", dynamo_line_values("1.2"))]:
            doc = plan_document(render_chart([overlay], values))
            assert "shared" not in doc["engineKeys"]["summary"] and not any("shared list" in w for w in doc["warnings"])

    def test_should_warn_when_a_stepping_stone_runtime_runs_a_release_with_no_list(self):
        """Dynamo 1.4.x runs TensorRT-LLM 1.3.0rc22 (DYNAMO-RELEASES-FACTS.md section 0): its engine YAML is checked
        against the 1.2 line's 1.3.0rc14, and the plan says so."""
        values = {"dynamo": {"releaseLine": "1.2", "image": {"tag": "1.4.1"}}}
        warnings = plan_document(render_chart(["agg.yaml"], values))["warnings"]
        assert ("dynamo.image.tag=1.4.1 runs TensorRT-LLM 1.3.0rc22, which the chart has no engine key list for: the "
                "engine YAML was checked against the list of 1.3.0rc14, the release inside the Dynamo 1.2 line's "
                "runtime") in " ".join(warnings)


class Change(NamedTuple):
    """A key TensorRT-LLM removed, renamed or restricted between the releases the chart runs: the engine keys that
    set it, the refusal's head ({release} filled in) and, per release that refuses it, what the refusal says about
    it; every other release takes `accepted` (the engine keys, unless given)."""
    name: str
    engine: dict
    head: str
    refused: dict
    accepted: dict | None = None


SPECULATIVE = {"decoding_type": "MTP", "num_nextn_predict_layers": 1}
# The keys the issue names (RELEASES-FACTS.md, "Differences between releases"), and what replaced them.
CHANGES = [
    Change("sampler_type", {"sampler_type": "auto"}, "sampler_type is not an engine key of",
           {r: "sampler_type was removed in 1.3.0rc29" for r in ("1.3.0rc29", "1.4.0rc2")}),
    Change("disable_flashinfer_sampling", {"disable_flashinfer_sampling": True}, "disable_flashinfer_sampling is not an engine key of",
           {r: "disable_flashinfer_sampling was removed in 1.3.0rc29" for r in ("1.3.0rc29", "1.4.0rc2")}),
    Change("video_pruning_rate", {"video_pruning_rate": 0.5}, "video_pruning_rate is not an engine key of", {
        **{r: "video_pruning_rate arrived in 1.3.0rc14 and was replaced by multimodal_config.video_pruning_rate in "
              "1.3.0rc29" for r in ("1.2.0", "1.2.1")},
        **{r: "video_pruning_rate was replaced by multimodal_config.video_pruning_rate in 1.3.0rc29"
           for r in ("1.3.0rc29", "1.4.0rc2")}}),
    Change("multimodal_config", {"multimodal_config": {"video_pruning_rate": 0.5}}, "multimodal_config is not an engine key of", {
        **{r: "multimodal_config arrived in 1.3.0rc29" for r in ("1.2.0", "1.2.1")},
        "1.3.0rc14": "multimodal_config arrived in 1.3.0rc29; 1.3.0rc14 has video_pruning_rate instead"}),
    Change("enable_sleep", {"enable_sleep": True}, "enable_sleep is not an engine key of",
           {r: "enable_sleep was replaced by sleep_config in 1.3.0rc14" for r in ("1.3.0rc14", "1.3.0rc29", "1.4.0rc2")}),
    Change("sleep_config", {"sleep_config": {}}, "sleep_config is not an engine key of",
           {r: f"sleep_config arrived in 1.3.0rc14; {r} has enable_sleep instead" for r in ("1.2.0", "1.2.1")}),
    Change("kv_cache_config.onboard_blocks", {"kv_cache_config": {"onboard_blocks": True}},
           "kv_cache_config.onboard_blocks is not a key of kv_cache_config in",
           {r: "kv_cache_config.onboard_blocks was removed in 1.3.0rc14" for r in ("1.3.0rc14", "1.3.0rc29", "1.4.0rc2")}),
    Change("fail_fast_on_attention_window_too_large", {"fail_fast_on_attention_window_too_large": True},
           "fail_fast_on_attention_window_too_large is not an engine key of",
           {r: "fail_fast_on_attention_window_too_large was removed in 1.3.0rc14: only the TensorRT engine backend's "
               "arguments keep it" for r in ("1.3.0rc14", "1.3.0rc29", "1.4.0rc2")}),
    Change("speculative_config.acceptance_window", {"speculative_config": {**SPECULATIVE, "acceptance_window": 64}},
           "speculative_config.acceptance_window is not a key of speculative_config with decoding_type MTP in",
           {r: "speculative_config.acceptance_window was replaced by speculative_config.acceptance_rate_window_size "
               "in 1.3.0rc29" for r in ("1.3.0rc29", "1.4.0rc2")}),
    Change("speculative_config.acceptance_length_threshold",
           {"speculative_config": {**SPECULATIVE, "acceptance_length_threshold": 2.5}},
           "speculative_config.acceptance_length_threshold is not a key of speculative_config with decoding_type MTP in",
           {r: "speculative_config.acceptance_length_threshold was replaced by "
               "speculative_config.acceptance_rate_threshold in 1.3.0rc29, a rate in [0, 1] now"
            for r in ("1.3.0rc29", "1.4.0rc2")}),
    Change("speculative_config.acceptance_rate_window_size",
           {"speculative_config": {**SPECULATIVE, "acceptance_rate_window_size": 64}},
           "speculative_config.acceptance_rate_window_size is not a key of speculative_config with decoding_type MTP in",
           {r: f"speculative_config.acceptance_rate_window_size arrived in 1.3.0rc29; {r} has "
               "speculative_config.acceptance_window instead" for r in ("1.2.0", "1.2.1", "1.3.0rc14")}),
    Change("speculative_config.acceptance_rate_threshold",
           {"speculative_config": {**SPECULATIVE, "acceptance_rate_threshold": 0.5}},
           "speculative_config.acceptance_rate_threshold is not a key of speculative_config with decoding_type MTP in",
           {r: f"speculative_config.acceptance_rate_threshold arrived in 1.3.0rc29; {r} has "
               "speculative_config.acceptance_length_threshold instead" for r in ("1.2.0", "1.2.1", "1.3.0rc14")}),
    Change("backend", {"backend": "tensorrt"}, "backend=tensorrt is not accepted by",
           {r: "backend takes only pytorch from 1.3.0rc14 on" for r in ("1.3.0rc14", "1.3.0rc29", "1.4.0rc2")},
           accepted={"backend": "pytorch"}),
    # What 1.4.0rc2 added (RELEASES-FACTS.md, "Differences 1.3.0rc29 -> 1.4.0rc2"): #19717's sampling interval and
    # DecodingBaseConfig's spec_dec_variant.
    Change("iter_perf_stats_interval", {"iter_perf_stats_interval": 10}, "iter_perf_stats_interval is not an engine key of",
           {r: "iter_perf_stats_interval arrived in 1.4.0rc2" for r in ("1.2.0", "1.2.1", "1.3.0rc14", "1.3.0rc29")}),
    Change("speculative_config.spec_dec_variant", {"speculative_config": {**SPECULATIVE, "spec_dec_variant": 1}},
           "speculative_config.spec_dec_variant is not a key of speculative_config with decoding_type MTP in",
           {r: "speculative_config.spec_dec_variant arrived in 1.4.0rc2"
            for r in ("1.2.0", "1.2.1", "1.3.0rc14", "1.3.0rc29")}),
    # decoding_type Eagle3 on 1.2.x: ENGINE_REFUSALS.
    Change("decoding_type-DraftTarget", {"speculative_config": {"decoding_type": "DraftTarget"}},
           "speculative_config.decoding_type=DraftTarget is not accepted by",
           {"1.3.0rc14": "speculative_config.decoding_type: DraftTarget was replaced by Draft_Target in 1.3.0rc14"},
           accepted={}),
]
REFUSED = [(change, release) for change in CHANGES for release in change.refused]


def merged(*engines: dict) -> dict:
    """Engine key maps merged, a nested config's keys too."""
    out: dict = {}
    for engine in engines:
        for key, value in engine.items():
            out[key] = {**out[key], **value} if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


class TestKeysTheReleasesChanged:
    @pytest.mark.parametrize("change,release", REFUSED, ids=[f"{c.name}-on-{release_id(r)}" for c, r in REFUSED])
    def test_should_refuse_the_key_naming_the_release_and_what_became_of_it(self, change, release):
        error = render_error("trtllm-serve-low-latency.yaml", {"trtllmServe": {"image": {"tag": release},
                                                                               "engine": change.engine}})
        expected = (f"trtllmServe.engine.{change.head} TensorRT-LLM {release} (the release of "
                    f"trtllmServe.image.tag={release}; {change.refused[release]}")
        assert expected in error, error

    @pytest.mark.parametrize("release", SERVE_RELEASES, ids=release_id)
    def test_should_pass_every_changed_key_the_release_takes(self, release):
        engine = merged(*(change.engine if change.accepted is None else change.accepted
                          for change in CHANGES if release not in change.refused))
        values = {"trtllmServe": {"image": {"tag": release}, "engine": engine}}
        written = engine_configs("trtllm-serve-low-latency.yaml", values)["trtllm-serve"]
        assert {key: written[key] for key in engine} == engine

    @pytest.mark.parametrize("line,key,said", [
        ("1.6", "sampler_type", "sampler_type was removed in 1.3.0rc29"),
        ("1.2", "enable_sleep", "enable_sleep was replaced by sleep_config in 1.3.0rc14"),
    ], ids=["sampler_type-on-the-1.6-line", "enable_sleep-on-the-1.2-line"])
    def test_should_refuse_it_in_a_dynamo_workers_engine_naming_the_lines_release(self, line, key, said):
        error = render_error("agg.yaml", with_engine(dynamo_line_values(line), "workers.worker", {key: True}))
        assert (f"workers.worker.engine.{key} is not an engine key of TensorRT-LLM {LINE_RELEASES[line]} (the release "
                f"inside the Dynamo {line} line's runtime; {said}") in error, error


class TestPlanTool:
    """The issue's check, as a user runs it: sleep_config (1.3.0rc14's) refused on trtllm-serve 1.2.1, naming 1.2.1,
    and taken on 1.3.0rc29; the plan names the list that checked it."""

    @pytest.mark.parametrize("release", ["1.2.1", "1.3.0rc29"])
    def test_should_refuse_sleep_config_on_1_2_1_only(self, capsys, monkeypatch, release):
        monkeypatch.chdir(REPO_ROOT)
        code = plan_tool.main(["-f", "values/trtllm-serve-low-latency.yaml", "--set", f"trtllmServe.image.tag={release}",
                               "--set-json", 'trtllmServe.engine={"sleep_config":{}}'])
        out, err = capsys.readouterr()
        if release == "1.2.1":
            assert code == 1 and out == ""
            assert ("trtllmServe.engine.sleep_config is not an engine key of TensorRT-LLM 1.2.1 (the release of "
                    "trtllmServe.image.tag=1.2.1; sleep_config arrived in 1.3.0rc14; 1.2.1 has enable_sleep instead)") in err
        else:
            assert code == 0, err
            assert '"sleep_config": {}' in out
            assert ("  Engine YAML: checked against the engine keys of TensorRT-LLM 1.3.0rc29, the release of "
                    "trtllmServe.image.tag=1.3.0rc29 (its list assembled") in out


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
    """python -m ci.generate trtllm-fields reads pydantic fields from a wheel's source with ast, across modules."""

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
        fields = sync.read_fields(sync.Wheel(str(wheel)).text, ["CudaGraphConfig", "MoeConfig"])
        assert fields["LlmArgs"] == ["strict_field", "model", "tokenizer", "from_package", "cuda_graph_config"]
        assert fields["CudaGraphConfig"] == ["strict_field", "batch_sizes", "enable_padding"]
        assert fields["MoeConfig"] == []

    def test_should_cite_member_and_line(self, wheel):
        assert sync.find_text(sync.Wheel(str(wheel)), "trtllm_num_requests_waiting", "tensorrt_llm/models/") == [
            "tensorrt_llm/models/base/__init__.py:3: # trtllm_num_requests_waiting"]

    def test_should_name_each_class_where_the_wheel_and_the_list_differ(self, wheel):
        fields = sync.read_fields(sync.Wheel(str(wheel)).text, ["CudaGraphConfig"])
        data = {"fields": {"LlmArgs": fields["LlmArgs"], "CudaGraphConfig": ["batch_sizes", "enable_padding", "gone"]}}
        assert sync.compare_wheel(fields, data) == [
            "  CudaGraphConfig: only in the wheel: ['strict_field']; only in the file: ['gone']"]


class TestHistory:
    """What a refusal says about a key the release lacks, from the lists alone (python -m ci.generate trtllm-fields)."""

    LISTS = {
        "1.0.0": {"top": ["a", "old"], "nested": {"c": ["x", "y"]}, "unions": {}, "values": {}},
        "1.1.0": {"top": ["a", "new", "late"], "nested": {"c": ["x"]}, "unions": {}, "values": {"a": ["only"]}},
        "1.2.0rc1": {"top": ["a", "new"], "nested": {}, "unions": {}, "values": {"a": ["only"]}},
    }

    def test_should_say_when_a_key_left_and_what_took_its_place(self, monkeypatch):
        monkeypatch.setattr(sync, "REPLACEMENTS", {"old": ("new", "")})
        notes = sync.history(self.LISTS)
        assert notes["1.1.0"]["old"] == "old was replaced by new in 1.1.0"
        assert notes["1.0.0"]["new"] == "new arrived in 1.1.0; 1.0.0 has old instead"
        assert notes["1.0.0"]["late"] == "late arrived in 1.1.0 and was removed in 1.2.0rc1"
        assert notes["1.2.0rc1"]["late"] == "late was removed in 1.2.0rc1"
        assert notes["1.1.0"]["c.y"] == "c.y was removed in 1.1.0"
        assert notes["1.1.0"]["a="] == "a takes only only from 1.1.0 on"
        # 1.2.0rc1's file has no data for c: nothing is said, and nothing checked.
        assert not [path for path in notes["1.2.0rc1"] if path.startswith("c.")]

    def test_should_order_release_candidates_before_their_release(self):
        assert sorted(["1.3.0", "1.3.0rc29", "1.2.1", "1.3.0rc14"], key=sync.version_key) == [
            "1.2.1", "1.3.0rc14", "1.3.0rc29", "1.3.0"]


@needs_aiconfigurator
@pytest.mark.parametrize("release", ["1.3.0rc14"])
def test_should_know_every_key_aiconfigurator_writes_for_the_release(release):
    """aiconfigurator (NVIDIA's, pinned in requirements-predict.txt) ships an extra-engine-args template per
    TensorRT-LLM release; every key it writes for a release the chart runs is in the chart's list of that release."""
    import re
    from importlib.resources import files
    text = (files("aiconfigurator") / "generator" / "config" / "backend_templates" / "trtllm"
            / f"extra_engine_args.{release}.yaml.j2").read_text()
    fields, owner, nested = chart_keys(release), None, {}
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
# message; tests/chart/validation/test_check_values.py counts them against the fail calls.
# gpt-oss.checkValues.engine and gpt-oss.checkEngineKeys (_check-engine.tpl): TensorRT-LLM keys only.
ENGINE_REFUSALS = [
    Refusal("engine-key-derived", "agg.yaml", {"workers": {"worker": {"engine": {"max_batch_size": 512}}}},
            "workers.worker.engine.max_batch_size is set by the chart from workers.worker.maxBatchSize; set that instead"),
    Refusal("engine-nested-key-derived", "agg.yaml",
            {"workers": {"worker": {"engine": {"kv_cache_config": {"free_gpu_memory_fraction": 0.5}}}}},
            "workers.worker.engine.kv_cache_config.free_gpu_memory_fraction is set by the chart from "
            "workers.worker.freeGpuMemoryFraction; set that instead"),
    Refusal("engine-key-unknown", "2xh100-truss.yaml", {"workers": {"worker": {"engine": {"enable_mixed_sampler": True}}}},
            "workers.worker.engine.enable_mixed_sampler is not an engine key of TensorRT-LLM 1.4.0rc2 (the release inside "
            "the Dynamo 1.7 line's runtime): TensorRT-LLM would refuse the engine YAML at start; allowed: model, tokenizer,"),
    Refusal("engine-value-not-accepted", "agg.yaml", {"workers": {"worker": {"engine": {"backend": "tensorrt"}}}},
            "workers.worker.engine.backend=tensorrt is not accepted by TensorRT-LLM 1.4.0rc2 (the release inside the "
            "Dynamo 1.7 line's runtime; backend takes only pytorch from 1.3.0rc14 on); allowed: pytorch"),
    Refusal("engine-decoding-type-not-accepted", "trtllm-serve-low-latency.yaml",
            {"trtllmServe": {"image": {"tag": "1.2.1"}, "engine": {"speculative_config": {"decoding_type": "Eagle3"}}}},
            "trtllmServe.engine.speculative_config.decoding_type=Eagle3 is not accepted by TensorRT-LLM 1.2.1 (the release "
            "of trtllmServe.image.tag=1.2.1; speculative_config.decoding_type: Eagle3 arrived in 1.3.0rc14); allowed: "
            "DraftTarget, Eagle, Lookahead, Medusa, MTP, NGram, UserProvided, SaveState, AUTO", extra=True),
    Refusal("engine-nested-config-not-a-map", "trtllm-serve-low-latency.yaml", {"trtllmServe": {"engine": {"moe_config": 1}}},
            "trtllmServe.engine.moe_config=1 is not a map: TensorRT-LLM reads it as a moe_config config; allowed: a map of "
            "backend,"),
    # trtllm-serve's own rule on kv_cache_config runs first (its concern), and lets a non-map through to this one.
    Refusal("engine-nested-config-not-a-map-on-trtllm-serve", "trtllm-serve-low-latency.yaml",
            {"trtllmServe": {"engine": {"kv_cache_config": 1}}},
            "trtllmServe.engine.kv_cache_config=1 is not a map: TensorRT-LLM reads it as a kv_cache_config config", extra=True),
    Refusal("engine-nested-key-unknown", "agg.yaml", {"workers": {"worker": {"engine": {"moe_config": {"backends": "CUTLASS"}}}}},
            "workers.worker.engine.moe_config.backends is not a key of moe_config in TensorRT-LLM 1.4.0rc2 (the release "
            "inside the Dynamo 1.7 line's runtime); allowed: backend, max_num_tokens,"),
    Refusal("engine-member-key-unknown", "agg.yaml",
            {"workers": {"worker": {"engine": {"speculative_config": {"decoding_type": "NGram", "eagle3_layers_to_capture": [1]}}}}},
            "workers.worker.engine.speculative_config.eagle3_layers_to_capture is not a key of speculative_config with "
            "decoding_type NGram in TensorRT-LLM 1.4.0rc2 (the release inside the Dynamo 1.7 line's runtime); allowed: "
            "max_draft_len,", extra=True),
    Refusal("trtllm-serve-release-unlisted", "trtllm-serve-low-latency.yaml", {"trtllmServe": {"image": {"tag": "1.4.0rc1"}}},
            "trtllmServe.image.tag=1.4.0rc1 is TensorRT-LLM 1.4.0rc1, a release the chart has no engine key list for, so "
            "the chart cannot check trtllmServe.engine against the keys it accepts (TensorRT-LLM refuses an unknown key at "
            "start); allowed: a tag of a release with a list (1.2.0, 1.2.1, 1.3.0rc14, 1.3.0rc29, 1.4.0rc2), or "
            "trtllmServe.allowUnlistedRelease=true to check it against a shared list read from a 1.2/1.3-era TensorRT-LLM "
            "source, of no release in particular (the plan then warns)"),
    Refusal("trtllm-serve-release-of-a-digest", "trtllm-serve-low-latency.yaml",
            {"trtllmServe": {"image": {"tag": "sha256:0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd"}}},
            "trtllmServe.image.tag=sha256:0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd names no TensorRT-LLM release, so the chart cannot check "
            "trtllmServe.engine against the keys it accepts", extra=True),
    Refusal("no-kv-transfer-backend", "8xb200-single-node.yaml", {"workers": {"decode": {"engine": {"cache_transceiver_config": None}}}},
            "workers.decode.engine.cache_transceiver_config.backend is not set: prefill and decode exchange the KV cache "
            "through it; allowed: UCX, NIXL, MPI or DEFAULT"),
    # FACTS.md: disagg-k8s runs UCX on both roles.
    Refusal("kv-transfer-backends-differ", "disagg-k8s.yaml",
            {"workers": {"decode": {"engine": {"cache_transceiver_config": {"backend": "NIXL"}}}}},
            "workers.prefill.engine.cache_transceiver_config.backend=UCX and "
            "workers.decode.engine.cache_transceiver_config.backend=NIXL differ: the decode workers pull each KV cache from "
            "the prefill workers through their cache transceivers, and no pair of different backends is documented to "
            "interoperate; allowed: the same backend on both (UCX, NIXL, MPI or DEFAULT)"),
]
REFUSALS = {"engine": ENGINE_REFUSALS}


@pytest.mark.parametrize("case", refusal_params(REFUSALS))
def test_should_refuse_with_a_message_naming_the_keys(case):
    assert_refused(case)
