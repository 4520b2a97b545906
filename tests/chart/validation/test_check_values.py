"""Cross-field rules (templates/validation/_check-*.tpl): one table of refusals per concern, where they point, and warnings."""
import re

import pytest

from tests.chart import test_security
from tests.chart.autoscaling import test_autoscaling
from tests.chart.benchmark import test_benchmark
from tests.chart.dynamo import test_dynamo_release, test_graceful_shutdown, test_operator_admission, test_topology
from tests.chart.engine import test_engine, test_hardware, test_quantization
from tests.chart.exposure import test_exposure
from tests.chart.model_cache import test_model_sources
from tests.chart.monitoring import test_monitoring
from tests.chart.trtllm_serve import test_trtllm_serve
from tests.chart.validation import test_credential_errors, test_names, test_passthroughs
from tests.helpers import (CHART_DIR, CHECK_VALUES, DGD, MODEL_CACHE_PVC, OVERLAYS, TRTLLM_SERVE_DEPLOYMENT, Refusal,
                           assert_refused, dgd_workers, fail_messages, find, plan_document, refusal_params, render_chart,
                           render_notes, template_defines)
from tests.helpers.schemas import dgd_errors

PLAN = "templates/plan/configmap.yaml"

# Refusals (gpt-oss.checkValues.<concern>, templates/validation/_check-*.tpl): one table per concern, one case per
# message, beside the concern's tests; the sizes' are here.
# gpt-oss.checkValues.sizes (_check-sizes.tpl): the weights are ~65 GB (60.8 GiB) after skipping original/ and metal/
# (../shared/FACTS.md, Model); /dev/shm counts against the pod's memory limit.
SIZE_REFUSALS = [
    Refusal("model-cache-smaller-than-the-model", "agg.yaml", {"modelCache": {"size": "60Gi"}},
            "modelCache.size=60Gi cannot hold openai/gpt-oss-120b: its weights take ~65 GB (60.8 GiB, without original/ and "
            "metal/), plus the vocabulary, on the PVC the chart creates; allowed: modelCache.size 61Gi or more (200Gi by "
            "default), or a claim of your own in modelCache.existingClaim"),
    Refusal("memory-limit-below-shared-memory", "trtllm-serve-low-latency.yaml",
            {"trtllmServe": {"resources": {"limits": {"memory": "64Gi"}}}},
            "trtllmServe.resources.limits.memory=64Gi cannot hold trtllmServe.sharedMemorySize=80Gi: /dev/shm is a "
            "memory-backed volume whose pages count against the pod's memory limit, so the pod would be OOM-killed before "
            "/dev/shm is full; allowed: trtllmServe.resources.limits.memory 80Gi or more, or a smaller "
            "trtllmServe.sharedMemorySize"),
    # --set modelCache.size=100 types a number: bytes to Kubernetes, not the 100Gi meant; the message names the form.
    Refusal("size-as-a-bare-number", "agg.yaml", {"modelCache": {"size": 100}},
            "modelCache.size=100 is a number, not a quantity (--set types 100 as one): a size without its unit is bytes "
            "to Kubernetes; allowed: a quantity with its unit, e.g. --set modelCache.size=100Gi"),
    Refusal("shared-memory-as-a-bare-number", "trtllm-serve-low-latency.yaml", {"trtllmServe": {"sharedMemorySize": 32}},
            "trtllmServe.sharedMemorySize=32 is a number, not a quantity", extra=True),
    Refusal("worker-shared-memory-as-a-bare-number", "agg.yaml", {"workers": {"sharedMemorySize": 80}},
            "workers.sharedMemorySize=80 is a number, not a quantity", extra=True),
]
SIZE_REFUSALS += [
    Refusal("gpus-in-resources", "agg.yaml", {"workers": {"resources": {"limits": {"nvidia.com/gpu": 2}}}},
            "workers.resources.limits has nvidia.com/gpu, but the chart gives each pod the GPUs its parallelism needs "
            "(workers.<role>.tensorParallelSize x pipelineParallelSize) and counts them in the plan, the node sums and the "
            "benchmark; remove it and set workers.<role>.tensorParallelSize x pipelineParallelSize"),
    Refusal("gpus-in-resources-of-trtllm-serve", "trtllm-serve-low-latency.yaml",
            {"trtllmServe": {"resources": {"requests": {"nvidia.com/gpu": "2"}}}},
            "trtllmServe.resources.requests has nvidia.com/gpu, but the chart gives each pod the GPUs its parallelism "
            "needs (trtllmServe.gpus) and counts them in the plan, the node sums and the benchmark; remove it and set "
            "trtllmServe.gpus", extra=True),
]
# The case: no ignore pattern downloads the weights three times (FACTS.md: original/ and metal/ are each another
# full copy of the 60.8 GiB).
SIZE_REFUSALS += [
    Refusal("model-cache-smaller-than-the-download", "agg.yaml",
            {"modelCache": {"size": "61Gi", "download": {"ignorePatterns": []}}},
            "modelCache.size=61Gi cannot hold what modelCache.download.ignorePatterns=[] downloads of openai/gpt-oss-120b: "
            "182.4 GiB, 195850508698 bytes (the weights 60.8 GiB, original/ (another full copy) 60.8 GiB, metal/ (another "
            "full copy) 60.8 GiB), plus the vocabulary, on the PVC the chart creates, so the download would fill it and "
            "fail; allowed: modelCache.size 183Gi or more, modelCache.download.ignorePatterns that skip original/* and "
            "metal/* (the default), or a claim of your own in modelCache.existingClaim"),
    Refusal("model-cache-with-one-copy-kept", "agg.yaml",
            {"modelCache": {"size": "100Gi", "download": {"ignorePatterns": ["metal/"]}}},
            "downloads of openai/gpt-oss-120b: 121.6 GiB", extra=True),
]
REFUSALS = {"sizes": SIZE_REFUSALS}
# Every concern's table.
TABLES = [module.REFUSALS for module in (test_autoscaling, test_benchmark, test_dynamo_release, test_engine, test_exposure, test_graceful_shutdown,
                                         test_model_sources, test_monitoring, test_operator_admission, test_quantization,
                                         test_hardware, test_topology, test_trtllm_serve, test_security, test_credential_errors,
                                         test_names, test_passthroughs)] + [REFUSALS]


@pytest.mark.parametrize("case", refusal_params(REFUSALS))
def test_should_refuse_with_a_message_naming_the_keys(case):
    assert_refused(case)


def test_should_keep_one_table_per_concern_with_one_case_per_fail_call():
    defines = template_defines("_check-*.tpl")
    calls = {name.removeprefix("gpt-oss.checkValues."): len(fail_messages(body)) for name, body in defines.items()
             if name.startswith("gpt-oss.checkValues.")}
    # gpt-oss.checkEngineKeys is the engine concern's (trtllmServe's table has its variants as extra cases).
    calls["engine"] += len(fail_messages(defines["gpt-oss.checkEngineKeys"]))
    cases = {}
    for table in TABLES:
        for concern, refusals in table.items():
            assert concern not in cases, f"two tables of {concern}"
            cases[concern] = sum(not case.extra for case in refusals)
    # The upgrade rules read the live DGD: tests/cluster/test_upgrade_guard.py renders them, offline tests their text.
    cases["liveState"] = len(test_operator_admission.UPGRADE_MESSAGES)
    cases["dynamoRelease"] += len(test_dynamo_release.LIVE_MESSAGES)  # the live operator and DGD: the cluster tier
    assert cases == calls


class TestWhereRefusalsPoint:
    # Every refusal names check-values.yaml: assert_refused checks it for each case of every table.
    def test_should_render_check_values_before_every_other_template(self):
        # Helm executes the templates in this order and reports the first that fails (pkg/engine/engine.go
        # sortTemplates: more path separators first, then paths in reverse order). A template in a folder that
        # sorts after "validation" (or deeper) would render first and take the refusals' location.
        templates = [f"gpt-oss/{path.relative_to(CHART_DIR).as_posix()}" for path in (CHART_DIR / "templates").rglob("*")
                     if path.is_file() and not path.name.startswith("_")]
        order = sorted(templates, key=lambda path: (path.count("/"), path), reverse=True)
        assert order[0] == f"gpt-oss/{CHECK_VALUES}"
        assert "gpt-oss/templates/benchmark/job.yaml" in order[1:]

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
        assert users == [CHECK_VALUES]


class TestSizes:
    """What the size rules let through: a cache that holds the 60.8 GiB of weights, or one the chart does not create,
    and a memory limit that holds /dev/shm."""

    @pytest.mark.parametrize("size", ["61Gi", "66G", "0.1Ti", "200Gi"])
    def test_should_create_a_cache_that_holds_the_weights(self, size):
        [claim] = render_chart(["agg.yaml"], {"modelCache": {"size": size}}, show_only=[MODEL_CACHE_PVC])
        assert claim["spec"]["resources"]["requests"]["storage"] == size

    @pytest.mark.parametrize("size,patterns", [
        ("183Gi", []),  # 3 x 60.8 GiB (FACTS.md: original/ and metal/ are each another full copy)
        ("61Gi", ["original/", "*.bin"]),  # fnmatch: a folder pattern gets *, and * crosses the / of metal/model.bin
        ("61Gi", ["original/[!.]*", "metal/*"]),
    ], ids=["every-copy", "folder-and-suffix", "bracket"])
    def test_should_size_the_cache_by_what_the_patterns_download(self, size, patterns):
        values = {"modelCache": {"size": size, "download": {"ignorePatterns": patterns}}}
        [claim] = render_chart(["agg.yaml"], values, show_only=[MODEL_CACHE_PVC])
        assert claim["spec"]["resources"]["requests"]["storage"] == size

    @pytest.mark.parametrize("values", [
        {"modelCache": {"size": "10Gi", "existingClaim": "shared-gpt-oss"}},
        {"modelCache": {"size": "10Gi", "source": "oci", "manifestSha256": "a" * 64,
                        "oci": {"repository": "registry.example.com/models/gpt-oss-120b", "digest": "sha256:" + "b" * 64}}},
    ], ids=["existing-claim", "image-volume"])
    def test_should_not_size_a_cache_the_chart_does_not_create(self, values):
        assert render_chart(["agg.yaml"], values, show_only=[MODEL_CACHE_PVC]) == []

    def test_should_accept_a_memory_limit_as_large_as_shared_memory(self):
        # The request too: the API server refuses one above its limit (tests/chart/validation/test_passthroughs.py).
        values = {"trtllmServe": {"resources": {"requests": {"memory": "80Gi"}, "limits": {"memory": "80Gi"}}}}
        [deployment] = render_chart(["trtllm-serve-low-latency.yaml"], values, show_only=[TRTLLM_SERVE_DEPLOYMENT])
        assert deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"] == "80Gi"

    @pytest.mark.parametrize("limit", ["79Gi", "85G"])
    def test_should_compare_the_limit_in_bytes(self, limit):
        # 85G = 85e9 bytes < 80Gi = 85.9e9 bytes: refused; 79Gi too.
        values = {"workers": {"resources": {"limits": {"memory": limit}}}}
        assert_refused(Refusal(f"limit-{limit}", "agg.yaml", values,
                               f"workers.resources.limits.memory={limit} cannot hold workers.sharedMemorySize=80Gi", extra=True))


class TestAcceptedAlternatives:
    def test_should_pass_component_fields_through(self):
        fields = {"scalingAdapter": {}, "compilationCache": {"pvcName": "trtllm-cache"}}
        values = {"workers": {"componentFields": fields}}
        dgd = find(render_chart(["disagg-k8s.yaml"], values, show_only=[DGD]), "DynamoGraphDeployment")
        workers = dgd_workers(dgd).values()
        assert len(workers) == 2 and all(fields.items() <= w["fields"].items() for w in workers)
        assert dgd_errors(dgd) == []

    def test_should_accept_chunked_prefill_for_long_prompts(self):
        values = {"benchmark": {"inputTokensMean": 9000},
                  "workers": {"worker": {"engine": {"enable_chunked_prefill": True}}}}
        assert render_chart(["agg.yaml"], values)

    def test_should_accept_a_digest_with_a_runtime_version(self):
        values = {"dynamo": {"releaseLine": "1.2", "image": {"tag": "sha256:0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd"}, "runtimeVersionOverride": "1.2.1"}}
        dgd = next(o for o in render_chart(["agg.yaml"], values, show_only=[DGD]) if o["kind"] == "DynamoGraphDeployment")
        main = dgd["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]
        assert main["image"] == "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime@sha256:0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd0123abcd"
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

    def test_should_not_call_an_aggregated_worker_prefill_bound(self):
        # Eight TP1 workers prefill and decode their own 32000-token prompts in turns (max_num_tokens 65536): the
        # tables cannot split a GPU's time between the two, so no figure would be right (issue 46).
        assert "prefill-bound" not in render_notes(["8xb200-single-node-balanced.yaml"])
        notes = render_notes(["8xb200-single-node-balanced.yaml"], {"benchmark": {"inputTokensMean": 65000}})
        assert "prefill-bound" not in notes

    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_warn_about_a_shipped_overlay_only_with_its_documented_reason(self, overlay):
        warnings = plan_document(render_chart([overlay], show_only=[PLAN]))["warnings"]
        assert [w for w in warnings if "; expected: " not in w] == []

    @pytest.mark.parametrize("overlay,warnings", [
        ("agg.yaml", ["benchmark concurrency 3600 exceeds the 3200 decode slots"]),
        ("disagg-k8s.yaml", ["benchmark concurrency 1536 exceeds the 1280 decode slots", "prefill-bound: "]),
        ("8xb200-single-node.yaml", ["prefill-bound: "]),
        ("disagg-k8s-balanced.yaml", []), ("8xb200-single-node-balanced.yaml", []), ("2xh100-truss.yaml", []),
        ("trtllm-serve-low-latency.yaml", []), ("trtllm-serve-max-throughput.yaml", []),
    ], ids=lambda value: value if isinstance(value, str) else None)
    def test_should_warn_the_published_targets_that_queue_by_design(self, overlay, warnings):
        got = plan_document(render_chart([overlay], show_only=[PLAN]))["warnings"]
        assert [next((w for w in got if w.startswith(start)), None) is not None for start in warnings] == [True] * len(warnings)
        assert len(got) == len(warnings)

    def test_should_end_a_warning_with_its_reason_and_only_then(self):
        notes = render_notes(["disagg-k8s.yaml"])
        assert ("256 requests will queue and inflate TTFT; expected: the Dynamo disagg recipe's concurrency 1536 against "
                "its decode engine's max_batch_size 1280, kept as published") in notes
        assert "the Dynamo disagg recipe's split (1 prefill GPU, 4 decode GPUs), kept as published" in notes
        bare = render_notes(["disagg-k8s.yaml"], {"benchmark": {"expectedWarnings": {"decodeSlots": "", "prefillBound": ""}}})
        assert "256 requests will queue and inflate TTFT\n" in bare and "expected:" not in bare

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
        assert ("prefill-bound: 1 prefill GPU serves about 15.0 requests/s of 8192 tokens (per-GPU tables, 8192 tokens "
                "a prefill step), but 1536 users finishing 1024 tokens at 30.2 ms/token (320 sequences per decode GPU) "
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
