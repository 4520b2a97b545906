"""The AIPerf benchmark: concurrency and request math, traffic shape, and that it only runs on demand."""
import pytest

from tests.helpers import OVERLAYS, RUNTIMES, Refusal, assert_refused, find, flag_value, refusal_params, render_chart

BENCHMARK = "templates/benchmark/job.yaml"

# overlay -> (GPUs counted, concurrency, requests), FACTS.md "The four deployment targets".
EXPECTED = {
    "agg.yaml": (4, 3600, 36000),
    "disagg-k8s.yaml": (5, 1536, 15360),
    "disagg-k8s-balanced.yaml": (5, 576, 5760),  # our tuning: 3 decode workers x 192 slots, 10 requests each
    "8xb200-single-node.yaml": (8, 256, 6144),
    "8xb200-single-node-balanced.yaml": (8, 96, 6144),  # our tuning: 8 workers x 12 slots, the published requests
    "2xh100-truss.yaml": (2, 16, 150),
    # The guide's low-latency users (4, 8 or 16): 8; 10 x 8 requests.
    "trtllm-serve-low-latency.yaml": (8, 8, 80),
    # Every decode slot: max_batch_size 640 x 8 attention-DP ranks (seed 004); 10 x 5120 requests.
    "trtllm-serve-max-throughput.yaml": (8, 5120, 51200),
}
# overlay -> (ISL, OSL)
TRAFFIC = {
    "agg.yaml": ("128", "1000"),
    "disagg-k8s.yaml": ("8192", "1024"),
    "disagg-k8s-balanced.yaml": ("8192", "1024"),
    "8xb200-single-node.yaml": ("32000", "256"),
    "8xb200-single-node-balanced.yaml": ("32000", "256"),
    "2xh100-truss.yaml": ("4000", "1000"),
    # No source publishes one for trtllm-serve: 1024 / 1024 (the choice).
    "trtllm-serve-low-latency.yaml": ("1024", "1024"),
    "trtllm-serve-max-throughput.yaml": ("1024", "1024"),
}
# runtime -> (the in-cluster URL of its Service, the model name it serves)
ENDPOINT = {
    "dynamo": ("http://gpt-oss-frontend.llm.svc:8000", "openai/gpt-oss-120b"),
    # trtllm-serve serves a local checkpoint under its folder name.
    "trtllm-serve": ("http://gpt-oss-trtllm-serve.llm.svc:8000", "gpt-oss-120b"),
}


def benchmark_job(values_files, values=None):
    return find(render_chart(values_files, values, show_only=[BENCHMARK]), "Job")


def aiperf_args(job):
    return job["spec"]["template"]["spec"]["containers"][0]["args"]


def test_should_cover_every_overlay():
    assert sorted(EXPECTED) == OVERLAYS == sorted(TRAFFIC)


@pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
class TestBenchmarkNumbers:
    def test_should_put_the_final_concurrency_and_request_count_on_the_command_line(self, overlay):
        _, concurrency, requests = EXPECTED[overlay]
        args = aiperf_args(benchmark_job([overlay]))
        assert flag_value(args, "--concurrency") == str(concurrency)
        assert flag_value(args, "--request-count") == str(requests)

    def test_should_show_the_numbers_as_annotations(self, overlay):
        gpus, concurrency, requests = EXPECTED[overlay]
        annotations = benchmark_job([overlay])["metadata"]["annotations"]
        assert annotations["gpt-oss/benchmark-gpus"] == str(gpus)
        assert annotations["gpt-oss/benchmark-concurrency"] == str(concurrency)
        assert annotations["gpt-oss/benchmark-request-count"] == str(requests)

    def test_should_tell_the_summary_how_many_requests_to_expect(self, overlay):
        _, _, requests = EXPECTED[overlay]
        env = {e["name"]: e["value"] for e in benchmark_job([overlay])["spec"]["template"]["spec"]["containers"][0]["env"]}
        assert env["EXPECTED_REQUESTS"] == str(requests)

    def test_should_use_the_target_traffic_shape(self, overlay):
        args = aiperf_args(benchmark_job([overlay]))
        isl, osl = TRAFFIC[overlay]
        assert flag_value(args, "--synthetic-input-tokens-mean") == isl
        assert flag_value(args, "--output-tokens-mean") == osl
        url, model = ENDPOINT[RUNTIMES[overlay]]
        assert args[:2] == ["aiperf", "profile"]
        assert flag_value(args, "--model") == model
        assert flag_value(args, "--endpoint-type") == "chat"
        assert flag_value(args, "--endpoint") == "/v1/chat/completions"
        assert "--streaming" in args
        assert "ignore_eos:true" in args
        assert flag_value(args, "--url") == url


class TestBenchmarkDerivation:
    def test_should_count_five_gpus_for_disagg_without_the_published_total(self):
        args = aiperf_args(benchmark_job(["disagg-k8s.yaml"], {"benchmark": {"concurrency": None}}))
        assert flag_value(args, "--concurrency") == "1280"
        assert flag_value(args, "--request-count") == "12800"

    def test_should_take_a_gpu_count_from_values(self):
        args = aiperf_args(benchmark_job(["disagg-k8s.yaml"], {"benchmark": {"concurrency": None, "gpuCount": 6}}))
        assert flag_value(args, "--concurrency") == "1536"
        assert flag_value(args, "--request-count") == "15360"

    def test_should_follow_the_topology_when_replicas_change(self):
        args = aiperf_args(benchmark_job(["agg.yaml"], {"workers": {"worker": {"replicas": 2}}}))
        assert flag_value(args, "--concurrency") == "7200"
        assert flag_value(args, "--request-count") == "72000"

    def test_should_take_an_explicit_request_count(self):
        args = aiperf_args(benchmark_job(["agg.yaml"], {"benchmark": {"requestCount": 500}}))
        assert flag_value(args, "--request-count") == "500"

    def test_should_pass_the_8xb200_published_flags(self):
        args = aiperf_args(benchmark_job(["8xb200-single-node.yaml"]))
        assert flag_value(args, "--warmup-request-count") == "1000"
        assert flag_value(args, "--num-dataset-entries") == "8000"
        assert flag_value(args, "--random-seed") == "100"
        assert flag_value(args, "--synthetic-input-tokens-stddev") == "0"
        assert flag_value(args, "--output-tokens-stddev") == "0"
        extra = [args[i + 1] for i, a in enumerate(args) if a == "--extra-inputs"]
        # FACTS.md's published command also passes '{"nvext":{"ignore_eos":true}}': the Dynamo 1.6.1 and 1.7.0.dev
        # frontends answer that with 400 (unknown nvext field; tests/e2e on dynamo-1.6 and dynamo-1.7), and
        # ignore_eos:true already asks the same.
        assert extra == ["max_tokens:256", "min_tokens:256", "ignore_eos:true"]

    def test_should_leave_out_unset_optional_flags(self):
        args = aiperf_args(benchmark_job(["agg.yaml"]))
        for flag in ("--warmup-request-count", "--num-dataset-entries", "--random-seed",
                     "--synthetic-input-tokens-stddev"):
            assert flag not in args


class TestBenchmarkSafety:
    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_render_the_benchmark_as_an_on_demand_test_hook(self, overlay):
        job = benchmark_job([overlay])
        assert job["metadata"]["annotations"]["helm.sh/hook"] == "test"
        assert "argocd.argoproj.io/sync-wave" not in job["metadata"]["annotations"]
        assert job["spec"]["backoffLimit"] == 0

    def test_should_not_render_when_disabled(self):
        assert render_chart(["agg.yaml"], {"benchmark": {"enabled": False}}, show_only=[BENCHMARK]) == []

    def test_should_run_unprivileged_with_the_safe_port_range_sysctl(self):
        pod = benchmark_job(["agg.yaml"])["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["sysctls"] == [{"name": "net.ipv4.ip_local_port_range", "value": "1024 65000"}]
        assert pod["containers"][0]["securityContext"]["allowPrivilegeEscalation"] is False

    def test_should_wait_for_the_model_and_keep_artifacts_on_the_cache(self):
        container = benchmark_job(["agg.yaml"])["spec"]["template"]["spec"]["containers"][0]
        env = {e["name"]: e["value"] for e in container["env"]}
        assert container["command"] == ["bash", "/opt/gpt-oss/scripts/benchmark.sh"]
        assert env["ARTIFACTS_ROOT"] == "/artifacts"
        assert env["READY_TIMEOUT_SECONDS"] == "3600"
        # The cache read-only (issue 36: the benchmark never changes the served copy); its own folder of the claim,
        # perf/, writable for the artifacts. One volume of the claim: a second one would be mounted once for both,
        # read-only or not as the kubelet picks, and creating the subPath then fails (seen on the node tier).
        assert {"name": "model-cache", "mountPath": "/model-cache", "readOnly": True} in container["volumeMounts"]
        assert {"name": "model-cache", "mountPath": "/artifacts", "subPath": "perf"} in container["volumeMounts"]
        volumes = benchmark_job(["agg.yaml"])["spec"]["template"]["spec"]["volumes"]
        claims = [v for v in volumes if "persistentVolumeClaim" in v]
        assert claims == [{"name": "model-cache", "persistentVolumeClaim": {"claimName": "gpt-oss-model-cache"}}]

    def test_should_use_the_dynamo_image_unless_another_is_given(self):
        image = lambda job: job["spec"]["template"]["spec"]["containers"][0]["image"]  # noqa: E731
        assert image(benchmark_job(["agg.yaml"])) == "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.7.0"
        other = {"benchmark": {"image": {"repository": "example.com/aiperf", "tag": "0.13.0"}}}
        assert image(benchmark_job(["agg.yaml"], other)) == "example.com/aiperf:0.13.0"


# Refusals (gpt-oss.checkValues.<concern>, templates/validation/_check-*.tpl): one table per concern, one case per
# message; tests/chart/validation/test_check_values.py counts them against the fail calls.
# gpt-oss.checkValues.benchmark (_check-engine.tpl): the benchmark fits the engines. The max_seq_len call has two
# messages (prefill counts the prompt only): the second is an extra case.
BENCHMARK_REFUSALS = [
    Refusal("benchmark-flag-the-chart-writes", "trtllm-serve-low-latency.yaml",
            {"benchmark": {"extraArgs": ["--concurrency=8"]}},
            "benchmark.extraArgs has --concurrency, a flag the chart already writes from benchmark.concurrency (the plan's, "
            "from the decode slots or per GPU), so AIPerf would run with another value than the plan states; remove it and "
            "set that instead"),
    Refusal("nvext-ignore-eos-on-the-1-7-line", "agg.yaml",
            {"benchmark": {"extraInputs": ["ignore_eos:true", '{"nvext":{"ignore_eos":true}}']}},
            'benchmark.extraInputs has {"nvext":{"ignore_eos":true}}, but the Dynamo 1.7 frontend refuses '
            "nvext.ignore_eos (400, unknown field) and every benchmark request fails; remove that entry and keep "
            "ignore_eos:true, which it accepts"),
    Refusal("seq-len-decode", "disagg-k8s.yaml", {"workers": {"decode": {"maxSeqLen": 9000}}},
            "benchmark.inputTokensMean=8192 + benchmark.outputTokensMean=1024 = 9216 tokens exceed "
            "workers.decode.maxSeqLen=9000; raise workers.decode.maxSeqLen to at least 9216 or shorten the benchmark"),
    Refusal("seq-len-prefill", "disagg-k8s.yaml", {"benchmark": {"inputTokensMean": 9500}},
            "benchmark.inputTokensMean=9500 = 9500 tokens exceed workers.prefill.maxSeqLen=9000; raise "
            "workers.prefill.maxSeqLen to at least 9500 or shorten the benchmark", extra=True),
    Refusal("isl-over-max-num-tokens", "agg.yaml", {"benchmark": {"inputTokensMean": 9000}},
            "benchmark.inputTokensMean=9000 exceeds workers.worker.maxNumTokens=8192 (the TensorRT-LLM default) and chunked "
            "prefill is off: set workers.worker.engine.enable_chunked_prefill=true or raise workers.worker.maxNumTokens to at least 9000"),
]
REFUSALS = {"benchmark": BENCHMARK_REFUSALS}


# Every optional flag on: what gpt-oss.benchmarkCommand can write.
EVERY_FLAG = {"benchmark": {"inputTokensStddev": 0, "outputTokensStddev": 0, "warmupRequestCount": 1,
                            "numDatasetEntries": 8, "randomSeed": 1, "extraInputs": ["ignore_eos:true"]}}


@pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
def test_should_list_every_flag_it_writes_as_owned(overlay):
    """gpt-oss.benchmarkFlags (what benchmark.extraArgs may not repeat) names every flag the command carries."""
    from tests.helpers import CHART_DIR
    from tools.gptoss.yaml_text import load_yaml
    source = (CHART_DIR / "templates" / "benchmark" / "_benchmark.tpl").read_text()
    owned = load_yaml(source.split('{{- define "gpt-oss.benchmarkFlags" -}}\n', 1)[1].split("{{- end }}", 1)[0])
    written = {a for a in aiperf_args(benchmark_job([overlay], EVERY_FLAG)) if a.startswith("--")}
    assert written == set(owned)


@pytest.mark.parametrize("case", refusal_params(REFUSALS))
def test_should_refuse_with_a_message_naming_the_keys(case):
    assert_refused(case)
