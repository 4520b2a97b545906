"""Cross-field rules (templates/validation/_check-values.tpl): one negative test per message, where they point, and warnings."""
import re

import pytest

from tests.helpers import (CHART_DIR, OVERLAYS, ChartRenderError, dgd_workers, find, render_chart, render_notes,
                           template_defines)
from tests.schemas import dgd_errors
from tests.test_exposure import REFUSALS as EXPOSURE_REFUSALS
from tests.test_model_sources import MODEL_SOURCE_REFUSALS, MODEL_SOURCE_VERSION_REFUSALS
from tests.test_monitoring import MONITORING_REFUSALS
from tests.test_operator_admission import ADMISSION_REFUSALS, UPGRADE_MESSAGES

# (id, overlay, values, the exact text the user must see)
REFUSALS = [
    ("agg-and-disagg", "agg.yaml", {"workers": {"prefill": {"enabled": True}}},
     "workers.worker.enabled is true together with workers.prefill.enabled=true / workers.decode.enabled=false: "
     "choose aggregated (worker only) or disaggregated (prefill and decode)"),
    ("no-role", "agg.yaml", {"workers": {"worker": {"enabled": False}}},
     "no worker role is enabled: set workers.worker.enabled=true (aggregated) or workers.prefill.enabled=true "
     "and workers.decode.enabled=true (disaggregated)"),
    ("prefill-without-decode", "disagg-k8s.yaml", {"workers": {"decode": {"enabled": False}}},
     "a disaggregated deployment needs both roles: workers.prefill.enabled=true, workers.decode.enabled=false; "
     "enable both, or use workers.worker alone"),
    ("gb200-on-amd64", "agg.yaml", {"gpu": {"nodeArch": "amd64"}},
     "gpu.type=GB200 runs only on ARM64 (Grace) nodes, but gpu.nodeArch=amd64; allowed: gpu.nodeArch=arm64"),
    ("hgx-gpu-on-arm64", "2xh100-truss.yaml", {"gpu": {"nodeArch": "arm64"}},
     "gpu.type=H100 comes in AMD64 (x86) nodes, but gpu.nodeArch=arm64; allowed: gpu.nodeArch=amd64, or null to "
     "follow gpu.type"),
    ("product-label-of-another-gpu", "agg.yaml", {"gpu": {"type": "H100", "productLabel": "NVIDIA-GB200"}},
     'gpu.productLabel=NVIDIA-GB200 is the label of GB200 nodes, but gpu.type=H100; allowed: the '
     'nvidia.com/gpu.product label of H100 nodes (NVIDIA-H100-80GB-HBM3 by default), "" to select no product, or '
     'null to follow gpu.type'),
    ("mxfp8-on-hopper", "2xh100-truss.yaml", {"workers": {"overrideQuantAlgo": "W4A8_MXFP4_MXFP8"}},
     "workers.overrideQuantAlgo=W4A8_MXFP4_MXFP8 needs Blackwell GPUs, but gpu.type=H100; allowed: gpu.type B200 "
     "or GB200, or workers.overrideQuantAlgo W4A16_MXFP4 (what Hopper runs) or empty"),
    ("ep-not-dividing-tp", "agg.yaml", {"workers": {"worker": {"expertParallelSize": 8}}},
     "workers.worker.expertParallelSize=8 must divide workers.worker.tensorParallelSize=4: the MoE layers split "
     "the 4 tensor-parallel ranks into expert-parallel groups; allowed: a divisor of 4"),
    ("attention-dp-at-tp1", "disagg-k8s.yaml", {"workers": {"prefill": {"attentionDP": True}}},
     "workers.prefill.attentionDP=true needs workers.prefill.tensorParallelSize > 1 (attention-DP runs one batch "
     "per tensor-parallel rank); set attentionDP=false or tensorParallelSize 2, 4 or 8"),
    ("gpus-over-node", "agg.yaml", {"workers": {"worker": {"tensorParallelSize": 8, "expertParallelSize": 8}}},
     "workers.worker needs 8 GPUs per pod (tensorParallelSize 8 x pipelineParallelSize 1), but a GB200 node has 4 "
     "(gpu.perNode); allowed: at most 4 GPUs per pod"),
    ("engine-key-derived", "agg.yaml", {"workers": {"worker": {"engine": {"max_batch_size": 512}}}},
     "workers.worker.engine.max_batch_size is set by the chart from workers.worker.maxBatchSize; set that instead"),
    ("engine-key-unknown", "2xh100-truss.yaml", {"workers": {"worker": {"engine": {"enable_mixed_sampler": True}}}},
     "workers.worker.engine.enable_mixed_sampler is not a TensorRT-LLM engine key (LlmArgs of TensorRT-LLM 1.2/1.3), "
     "so the worker would fail at start; allowed: model, tokenizer,"),
    ("engine-nested-key-unknown", "agg.yaml", {"workers": {"worker": {"engine": {"moe_config": {"backends": "CUTLASS"}}}}},
     "workers.worker.engine.moe_config.backends is not a key of moe_config; allowed: backend, max_num_tokens,"),
    ("seq-len-decode", "disagg-k8s.yaml", {"workers": {"decode": {"maxSeqLen": 9000}}},
     "benchmark.inputTokensMean=8192 + benchmark.outputTokensMean=1024 = 9216 tokens exceed "
     "workers.decode.maxSeqLen=9000; raise workers.decode.maxSeqLen to at least 9216 or shorten the benchmark"),
    ("seq-len-prefill", "disagg-k8s.yaml", {"benchmark": {"inputTokensMean": 9500}},
     "benchmark.inputTokensMean=9500 = 9500 tokens exceed workers.prefill.maxSeqLen=9000; raise "
     "workers.prefill.maxSeqLen to at least 9500 or shorten the benchmark"),
    ("isl-over-max-num-tokens", "agg.yaml", {"benchmark": {"inputTokensMean": 9000}},
     "benchmark.inputTokensMean=9000 exceeds workers.worker.maxNumTokens=8192 (the TensorRT-LLM default) and chunked "
     "prefill is off: set workers.worker.engine.enable_chunked_prefill=true or raise workers.worker.maxNumTokens to at least 9000"),
    ("no-kv-transfer-backend", "8xb200-single-node.yaml", {"workers": {"decode": {"engine": {"cache_transceiver_config": None}}}},
     "workers.decode.engine.cache_transceiver_config.backend is not set: prefill and decode exchange the KV cache "
     "through it; allowed: UCX, NIXL, MPI or DEFAULT"),
    ("component-field-of-other-version", "agg.yaml", {"workers": {"componentFields": {"envFromSecret": "hf"}}},
     "workers.componentFields.envFromSecret exists only in nvidia.com/v1alpha1 DynamoGraphDeployments, but "
     "dynamo.apiVersion=nvidia.com/v1beta1; allowed here: minAvailable, compilationCache,"),
    ("component-field-owned", "agg.yaml", {"workers": {"componentFields": {"sharedMemorySize": "1Gi"}}},
     "workers.componentFields.sharedMemorySize is set by the chart for nvidia.com/v1beta1 components; "
     "use the chart's own values instead"),
    ("component-field-unknown", "agg.yaml",
     {"dynamo": {"apiVersion": "nvidia.com/v1alpha1"}, "workers": {"componentFields": {"replica": 2}}},
     "workers.componentFields.replica is not a nvidia.com/v1alpha1 component field this chart passes through; "
     "allowed: minAvailable, envFromSecret,"),
    # runtime=trtllm-serve
    ("trtllm-serve-gpus-over-node", "trtllm-serve-max-throughput.yaml",
     {"gpu": {"type": "GB200", "nodeArch": "arm64", "productLabel": "NVIDIA-GB200"}},
     "trtllmServe.gpus=8 needs 8 GPUs in one pod, but a GB200 node has 4 (gpu.perNode); allowed: trtllmServe.gpus 1 or 4"),
    ("trtllm-serve-mxfp8-on-hopper", "trtllm-serve-low-latency.yaml",
     {"gpu": {"type": "H200", "productLabel": "NVIDIA-H200"}, "trtllmServe": {"overrideQuantAlgo": "W4A8_MXFP4_MXFP8"}},
     "trtllmServe.overrideQuantAlgo=W4A8_MXFP4_MXFP8 needs Blackwell GPUs, but gpu.type=H200; allowed: gpu.type B200 "
     "or GB200, or trtllmServe.overrideQuantAlgo W4A16_MXFP4 (what Hopper runs) or empty"),
    ("trtllm-serve-kv-fraction-in-engine", "trtllm-serve-low-latency.yaml",
     {"trtllmServe": {"engine": {"kv_cache_config": {"free_gpu_memory_fraction": 0.5}}}},
     "trtllmServe.engine.kv_cache_config.free_gpu_memory_fraction would silently override "
     "--kv_cache_free_gpu_memory_fraction; set trtllmServe.freeGpuMemoryFraction instead"),
    ("trtllm-serve-extra-arg-written", "trtllm-serve-low-latency.yaml", {"trtllmServe": {"extraArgs": ["--tp_size", "4"]}},
     "trtllmServe.extraArgs sets --tp_size, which the chart already writes from trtllmServe.gpus; set that instead"),
    ("trtllm-serve-extra-arg-unknown", "trtllm-serve-low-latency.yaml",
     {"trtllmServe": {"extraArgs": ["--served_model_name", "openai/gpt-oss-120b"]}},
     "trtllmServe.extraArgs has --served_model_name, which trtllm-serve "
     "(NVIDIA/TensorRT-LLM@00209af149e7774406881a37283dce303571eb11) does not know, so the server would not start; "
     "allowed: --tokenizer, --custom_tokenizer,"),
    ("trtllm-serve-dynamo-only-values", "trtllm-serve-max-throughput.yaml",
     {"workers": {"worker": {"tensorParallelSize": 8}}, "frontend": {"replicas": 2},
      "monitoring": {"dashboard": {"enabled": True}}},
     "runtime=trtllm-serve deploys no DynamoGraphDeployment, so these Dynamo-only values would be ignored: "
     "frontend.replicas, monitoring.dashboard.enabled, workers.worker.tensorParallelSize; keep their chart defaults "
     "(trtllmServe.* configures this runtime) or set runtime=dynamo"),
    # Autoscaling and planner (the other runtime's variants: tests/test_autoscaling.py).
    ("autoscaling-on-disabled-role", "agg.yaml", {"workers": {"prefill": {"autoscaling": {"enabled": True}}}},
     "workers.prefill.autoscaling.enabled=true, but workers.prefill is not deployed (workers.prefill.enabled=false); "
     "turn workers.prefill.autoscaling.enabled off or deploy the role"),
    ("autoscaling-min-replicas-zero", "disagg-k8s.yaml",
     {"workers": {"decode": {"autoscaling": {"enabled": True, "minReplicas": 0}}}},
     "workers.decode.autoscaling.minReplicas=0 is below 1: a Dynamo frontend with no workers drops the model from "
     "/v1/models, and then nothing scales it up again; allowed: minReplicas 1 or more"),
    ("autoscaling-max-below-min", "agg.yaml",
     {"frontend": {"autoscaling": {"enabled": True, "minReplicas": 3, "maxReplicas": 2}}},
     "frontend.autoscaling.maxReplicas=2 is below frontend.autoscaling.minReplicas=3; allowed: maxReplicas >= minReplicas"),
    ("autoscaler-and-planner", "disagg-k8s.yaml",
     {"planner": {"enabled": True}, "workers": {"decode": {"autoscaling": {"enabled": True, "scaler": "hpa"}}}},
     "planner.enabled=true and workers.decode.autoscaling.enabled=true: the planner scales the worker roles, and a "
     "HPA on the same role would fight it (one autoscaler per service); turn workers.decode.autoscaling.enabled off "
     "(frontend.autoscaling may stay)"),
    ("planner-on-trtllm-serve", "trtllm-serve-low-latency.yaml", {"planner": {"enabled": True}},
     "planner.enabled=true needs runtime=dynamo (the SLA planner scales DynamoGraphDeployment components), but "
     "runtime=trtllm-serve; use trtllmServe.autoscaling instead"),
    ("planner-no-scaling-mode", "agg.yaml",
     {"planner": {"enabled": True, "throughputScaling": False, "loadScaling": False}},
     "planner.throughputScaling=false and planner.loadScaling=false: the planner refuses to start without a scaling "
     "mode; turn one on"),
    ("planner-throughput-without-sweep", "disagg-k8s.yaml",
     {"planner": {"enabled": True, "throughputScaling": True, "preDeploymentSweepingMode": "none"}},
     "planner.throughputScaling=true with planner.preDeploymentSweepingMode=none: the 1.2.1 planner refuses to start "
     "(throughput scaling needs a pre-deployment sweep to model the engines); allowed: preDeploymentSweepingMode "
     "rapid or thorough, or throughputScaling=false"),
    ("prestop-shorter-than-readiness", "agg.yaml", {"gracefulShutdown": {"preStopSeconds": 4}},
     "gracefulShutdown.preStopSeconds=4 is shorter than the readiness probe needs to report the pod draining (two "
     "tries, 2 s apart) plus a moment for the endpoints to follow, so requests could still arrive after SIGTERM; "
     "allowed: 5 or more (15 by default; longer than your ingress controller's or gateway's endpoint refresh)"),
    ("planner-load-interval-not-below", "disagg-k8s.yaml",
     {"planner": {"enabled": True, "throughputScaling": True, "preDeploymentSweepingMode": "rapid",
                  "loadAdjustmentIntervalSeconds": 90, "throughputAdjustmentIntervalSeconds": 60}},
     "planner.loadAdjustmentIntervalSeconds=90 is not below planner.throughputAdjustmentIntervalSeconds=60: the "
     "1.2.1 planner refuses to start (load scaling is the fast loop, throughput scaling the slow one); allowed: "
     "loadAdjustmentIntervalSeconds < 60"),
    # Sizes: the weights are ~65 GB (60.8 GiB) after skipping original/ and metal/ (../shared/FACTS.md, Model).
    ("model-cache-smaller-than-the-model", "agg.yaml", {"modelCache": {"size": "60Gi"}},
     "modelCache.size=60Gi cannot hold openai/gpt-oss-120b: its weights take ~65 GB (60.8 GiB, without original/ and "
     "metal/), plus the vocabulary, on the PVC the chart creates; allowed: modelCache.size 61Gi or more (200Gi by "
     "default), or a claim of your own in modelCache.existingClaim"),
    ("memory-limit-below-shared-memory", "trtllm-serve-low-latency.yaml",
     {"trtllmServe": {"resources": {"limits": {"memory": "64Gi"}}}},
     "trtllmServe.resources.limits.memory=64Gi cannot hold trtllmServe.sharedMemorySize=80Gi: /dev/shm is a "
     "memory-backed volume whose pages count against the pod's memory limit, so the pod would be OOM-killed before "
     "/dev/shm is full; allowed: trtllmServe.resources.limits.memory 80Gi or more, or a smaller "
     "trtllmServe.sharedMemorySize"),
]


@pytest.mark.parametrize("overlay,values,message", [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_should_refuse_with_a_message_naming_the_keys(overlay, values, message):
    with pytest.raises(ChartRenderError) as error:
        render_chart([overlay], values)
    assert message in str(error.value)


def test_should_cover_every_fail_call_once():
    source = "".join(path.read_text() for path in (CHART_DIR / "templates" / "validation").glob("*.tpl"))
    # The max_seq_len rule has two messages (prefill counts the prompt only), so one more case than calls.
    # The Dynamo operator admission rules and the exposure rules have their own cases, in
    # tests/test_operator_admission.py and tests/test_exposure.py; the model-source rules in tests/test_model_sources.py,
    # the monitoring rules in tests/test_monitoring.py.
    assert source.count("{{- fail ") == (len(REFUSALS) - 1 + len(ADMISSION_REFUSALS) + len(UPGRADE_MESSAGES)
                                         + len(EXPOSURE_REFUSALS) + len(MODEL_SOURCE_REFUSALS)
                                         + len(MODEL_SOURCE_VERSION_REFUSALS) + len(MONITORING_REFUSALS))


# Where Helm reports every refusal: the one template that calls gpt-oss.checkValues.
CHECK_VALUES = "gpt-oss/templates/validation/check-values.yaml"


class TestWhereRefusalsPoint:
    @pytest.mark.parametrize("overlay,values", [r[1:3] for r in REFUSALS + EXPOSURE_REFUSALS + ADMISSION_REFUSALS],
                             ids=[r[0] for r in REFUSALS + EXPOSURE_REFUSALS + ADMISSION_REFUSALS])
    def test_should_name_check_values_yaml(self, overlay, values):
        with pytest.raises(ChartRenderError) as error:
            render_chart([overlay], values)
        assert str(error.value).startswith(f"execution error at ({CHECK_VALUES}:4:4): ")

    def test_should_render_check_values_before_every_other_template(self):
        # Helm executes the templates in this order and reports the first that fails (pkg/engine/engine.go
        # sortTemplates: more path separators first, then paths in reverse order). A template in a folder that
        # sorts after "validation" (or deeper) would render first and take the refusals' location.
        templates = [f"gpt-oss/{path.relative_to(CHART_DIR).as_posix()}" for path in (CHART_DIR / "templates").rglob("*")
                     if path.is_file() and not path.name.startswith("_")]
        order = sorted(templates, key=lambda path: (path.count("/"), path), reverse=True)
        assert order[0] == CHECK_VALUES
        assert "gpt-oss/templates/tests/job-benchmark.yaml" in order[1:]

    def test_should_check_one_concern_per_define_from_one_list(self):
        defines = template_defines("_check-*.tpl")
        listed = re.findall(r'\{\{- include "(gpt-oss\.checkValues\.\w+)" \. \}\}', defines["gpt-oss.checkValues"])
        # Nothing but one include line per concern (new concerns add one line at the end).
        assert defines["gpt-oss.checkValues"].strip().splitlines() == [f'{{{{- include "{name}" . }}}}' for name in listed]
        concerns = sorted(name for name in defines if name.startswith("gpt-oss.checkValues."))
        assert sorted(listed) == concerns
        assert {"gpt-oss.checkValues.gpu", "gpt-oss.checkValues.topology", "gpt-oss.checkValues.engine",
                "gpt-oss.checkValues.benchmark", "gpt-oss.checkValues.autoscaling", "gpt-oss.checkValues.exposure",
                "gpt-oss.checkValues.trtllmServe"} <= set(listed)
        # Every rule sits in a concern (or in gpt-oss.checkEngineKeys, which two concerns share).
        outside = {name: body.count("{{- fail ") for name, body in defines.items()
                   if not name.startswith("gpt-oss.checkValues.") and name != "gpt-oss.checkEngineKeys"}
        assert set(outside.values()) == {0}, outside

    def test_should_not_check_values_from_any_other_template(self):
        users = [path.relative_to(CHART_DIR).as_posix() for path in (CHART_DIR / "templates").rglob("*")
                 if path.is_file() and '{{- include "gpt-oss.checkValues" . }}' in path.read_text()]
        assert users == ["templates/validation/check-values.yaml"]


class TestAcceptedAlternatives:
    @pytest.mark.parametrize("api_version,fields", [
        ("nvidia.com/v1beta1", {"scalingAdapter": {}, "compilationCache": {"pvcName": "trtllm-cache"}}),
        ("nvidia.com/v1alpha1", {"scalingAdapter": {"enabled": True}, "envFromSecret": "hf-token-secret"}),
    ])
    def test_should_pass_component_fields_of_the_chosen_version(self, api_version, fields):
        values = {"dynamo": {"apiVersion": api_version}, "workers": {"componentFields": fields}}
        dgd = find(render_chart(["disagg-k8s.yaml"], values), "DynamoGraphDeployment")
        workers = dgd_workers(dgd).values()
        assert len(workers) == 2 and all(fields.items() <= w["fields"].items() for w in workers)
        assert dgd_errors(dgd) == []

    def test_should_accept_chunked_prefill_for_long_prompts(self):
        values = {"benchmark": {"inputTokensMean": 9000},
                  "workers": {"worker": {"engine": {"enable_chunked_prefill": True}}}}
        assert render_chart(["agg.yaml"], values)

    def test_should_accept_a_digest_with_a_runtime_version(self):
        values = {"dynamo": {"image": {"tag": "sha256:0123abcd"}, "runtimeVersionOverride": "1.2.1"}}
        dgd = next(o for o in render_chart(["agg.yaml"], values) if o["kind"] == "DynamoGraphDeployment")
        main = dgd["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]
        assert main["image"] == "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime@sha256:0123abcd"
        assert {c["runtimeVersionOverride"] for c in dgd["spec"]["components"]} == {"1.2.1"}

    def test_should_accept_w4a16_on_hopper(self):
        assert render_chart(["2xh100-truss.yaml"], {"workers": {"overrideQuantAlgo": "W4A16_MXFP4"}})


class TestWarnings:
    @pytest.mark.parametrize("overlay,expected", [
        ("agg.yaml", "benchmark concurrency 3600 exceeds the 3200 decode slots"),
        ("disagg-k8s.yaml", "benchmark concurrency 1536 exceeds the 1280 decode slots"),
    ])
    def test_should_warn_when_requests_will_queue(self, overlay, expected):
        assert expected in render_notes([overlay])

    @pytest.mark.parametrize("overlay", ["8xb200-single-node.yaml", "2xh100-truss.yaml"])
    def test_should_not_warn_about_slots_when_they_suffice(self, overlay):
        assert "decode slots" not in render_notes([overlay])

    @pytest.mark.parametrize("overlay", ["disagg-k8s.yaml", "8xb200-single-node.yaml"])
    def test_should_warn_about_prefill_bound_shapes(self, overlay):
        assert "prefill-bound:" in render_notes([overlay])

    @pytest.mark.parametrize("overlay", ["agg.yaml", "2xh100-truss.yaml"])
    def test_should_not_call_short_prompt_targets_prefill_bound(self, overlay):
        assert "prefill-bound" not in render_notes([overlay])

    def test_should_not_call_the_balanced_split_prefill_bound(self):
        # 2 TP1 prefill GPUs: 2 x 122672 / 8192 = 30 requests/s; 576 users on 3 decode GPUs = 192 per GPU,
        # read at 256: 21.7 ms per token, so they need about 26 requests/s.
        assert "prefill-bound" not in render_notes(["disagg-k8s-balanced.yaml"])

    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_find_the_published_kv_cache_sufficient(self, overlay):
        assert "KV cache too small" not in render_notes([overlay])

    def test_should_warn_when_the_kv_cache_cannot_hold_the_benchmark(self):
        notes = render_notes(["2xh100-truss.yaml"], {"benchmark": {"concurrency": 64, "inputTokensMean": 90000}})
        assert "KV cache too small for the benchmark on workers.worker: 64 sequences of 91000 tokens" in notes

    def test_should_take_prefill_and_decode_speed_from_the_aiconfigurator_tables(self):
        # _sizing-tables.tpl, GB200 W4A8_MXFP4_MXFP8: 122672 prompt tokens/s per GPU at 8192 tokens; 1280
        # sequences on 4 decode GPUs = 320 per GPU, read at 384: 30.2 ms per token.
        notes = render_notes(["disagg-k8s.yaml"])
        assert ("prefill-bound: 1 prefill GPU serves about 15.0 requests/s of 8192 tokens (in TensorRT-LLM's default "
                "8192-token steps), but 1536 users finishing 1024 tokens at 30.2 ms/token (320 sequences per decode GPU) "
                "need about 50 requests/s") in notes
        assert "aiconfigurator 0.12.0 (trtllm 1.3.0rc20 SILICON database)" in notes

    def test_should_read_the_prefill_speed_at_the_prompt_length(self):
        # B200 runs W4A8_MXFP4_MXFP8 (CUTLASS MoE, no override); at 32768 tokens: 79446 tokens/s per GPU,
        # x 4 prefill GPUs / 32000 tokens.
        assert "4 prefill GPUs serve about 9.9 requests/s of 32000 tokens" in render_notes(["8xb200-single-node.yaml"])
        # One prefill GPU, one verb form: "1 prefill GPU serves", never "1 prefill GPUs serve".
        assert "1 prefill GPUs" not in render_notes(["disagg-k8s.yaml"])

    def test_should_take_weights_per_gpu_by_pod_shape(self):
        notes = render_notes(["2xh100-truss.yaml"], {"benchmark": {"concurrency": 64, "inputTokensMean": 90000}})
        assert "after 28.2 GiB of weights and 3.5 GiB of runtime per GPU" in notes

    def test_should_count_fp8_kv_as_half_of_bf16(self):
        # 5000 x 9216 tokens need ~802 GiB in fp8 (~1604 in bf16) against ~577 GiB on 4 GB200s.
        notes = render_notes(["disagg-k8s.yaml"], {"benchmark": {"concurrency": 5000}})
        assert "5000 sequences of 9216 tokens need 802 GiB of fp8 KV cache" in notes
