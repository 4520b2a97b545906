"""runtime: trtllm-serve: the TensorRT-LLM guide's two profiles (seed 004) as a Deployment and a Service.

Expected values are FACTS.md's "trtllm-serve without Dynamo" section, written out per profile and GPU.
"""
from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from tests.helpers import (BENCHMARK_JOB, CHART_DIR, DYNAMO_OVERLAYS, OVERLAYS, REPO_ROOT, TRTLLM_SERVE_DEPLOYMENT,
                           TRTLLM_SERVE_OVERLAYS, ChartRenderError, Refusal, assert_refused, find, flag_value,
                           refusal_params, render_chart, render_notes)

LOW, HIGH = "trtllm-serve-low-latency.yaml", "trtllm-serve-max-throughput.yaml"
MODEL = "/model-cache/openai/gpt-oss-120b"
# What a user changes for another GPU (gpu.type with its node labels) and the GPU count.
GPUS = {
    "B200": {"gpu": {"type": "B200", "nodeArch": "amd64", "productLabel": "NVIDIA-B200"}},
    "H200": {"gpu": {"type": "H200", "nodeArch": "amd64", "productLabel": "NVIDIA-H200"}},
    "GB200": {"gpu": {"type": "GB200", "nodeArch": "arm64", "productLabel": "NVIDIA-GB200"}},
}


def with_gpu(gpu_type: str, gpus: int | None = None, extra: dict | None = None) -> dict:
    values = {**GPUS[gpu_type], **(extra or {})}
    if gpus is not None:
        values["trtllmServe"] = {**values.get("trtllmServe", {}), "gpus": gpus}
    return values


def server(overlay: str, values: dict | None = None) -> tuple[dict, dict, list[dict]]:
    """(the Deployment, its trtllm-serve container, every rendered object)."""
    objects = render_chart([overlay], values)
    deployment = find(objects, "Deployment", "gpt-oss-trtllm-serve")
    return deployment, deployment["spec"]["template"]["spec"]["containers"][0], objects


def engine_yaml(objects: list[dict]) -> dict:
    return yaml.safe_load(find(objects, "ConfigMap", "gpt-oss-engine")["data"]["trtllm-serve.yaml"])


def options() -> dict:
    """The option list of the pinned trtllm-serve, as the chart carries it."""
    text = (CHART_DIR / "templates" / "trtllm-serve" / "_trtllm-serve-options.tpl").read_text()
    body = text.split('{{- define "gpt-oss.trtllmServeOptions" -}}\n', 1)[1].rsplit("{{- end }}", 1)[0]
    return yaml.safe_load(body)


def test_should_cover_both_profiles_and_split_every_overlay_by_runtime():
    assert TRTLLM_SERVE_OVERLAYS == [LOW, HIGH]
    assert sorted(DYNAMO_OVERLAYS + TRTLLM_SERVE_OVERLAYS) == OVERLAYS


class TestObjects:
    @pytest.mark.parametrize("overlay", [LOW, HIGH])
    def test_should_render_a_deployment_and_service_and_no_dynamo_objects(self, overlay):
        kinds = sorted((o["kind"], o["metadata"]["name"]) for o in render_chart([overlay]))
        assert kinds == [("ConfigMap", "gpt-oss-engine"), ("ConfigMap", "gpt-oss-plan"),
                         ("ConfigMap", "gpt-oss-scripts"), ("Deployment", "gpt-oss-trtllm-serve"),
                         ("Job", "gpt-oss-benchmark"), ("Job", kinds[5][1]), ("PersistentVolumeClaim", "gpt-oss-model-cache"),
                         ("Pod", "gpt-oss-smoke-test"), ("PodDisruptionBudget", "gpt-oss-trtllm-serve"),
                         ("Service", "gpt-oss-trtllm-serve")]
        assert kinds[5][1].startswith("gpt-oss-model-download-")

    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS)
    def test_should_render_no_trtllm_serve_objects_for_dynamo(self, overlay):
        assert not [o for o in render_chart([overlay]) if o["kind"] in ("Deployment", "Service")]

    def test_should_route_the_service_only_to_server_pods(self):
        deployment, _, objects = server(HIGH)
        service = find(objects, "Service", "gpt-oss-trtllm-serve")
        selector = service["spec"]["selector"]
        assert selector == deployment["spec"]["selector"]["matchLabels"] == {
            "app.kubernetes.io/name": "gpt-oss", "app.kubernetes.io/instance": "gpt-oss",
            "app.kubernetes.io/component": "trtllm-serve"}
        assert selector.items() <= deployment["spec"]["template"]["metadata"]["labels"].items()
        for other in objects:
            if other["kind"] in ("Job", "Pod"):
                labels = (other["spec"].get("template", other)["metadata"]["labels"]) if other["kind"] == "Job" \
                    else other["metadata"]["labels"]
                assert not selector.items() <= labels.items(), other["metadata"]["name"]
        assert service["spec"]["ports"] == [{"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"}]

    @pytest.mark.parametrize("overlay,slots", [(LOW, "2048"), (HIGH, "5120")])
    def test_should_show_the_plan_numbers_as_annotations(self, overlay, slots):
        annotations = server(overlay)[0]["metadata"]["annotations"]
        assert annotations["gpt-oss/total-gpus"] == "8"
        assert annotations["gpt-oss/decode-slots"] == slots


class TestCommandLine:
    # (profile, GPU, GPUs) -> the whole trtllm-serve argument list (the guide's flags; the model path
    # is the cache, not the hub id).
    EXPECTED = {
        (LOW, "B200", 8): [MODEL, "--host", "0.0.0.0", "--port", "8000", "--backend", "pytorch", "--tp_size", "8",
                           "--ep_size", "8", "--trust_remote_code", "--extra_llm_api_options",
                           "/engine/trtllm-serve.yaml", "--kv_cache_free_gpu_memory_fraction", "0.75"],
        (LOW, "H200", 8): [MODEL, "--host", "0.0.0.0", "--port", "8000", "--backend", "pytorch", "--tp_size", "8",
                           "--ep_size", "8", "--trust_remote_code", "--extra_llm_api_options",
                           "/engine/trtllm-serve.yaml", "--kv_cache_free_gpu_memory_fraction", "0.75"],
        (LOW, "GB200", 4): [MODEL, "--host", "0.0.0.0", "--port", "8000", "--backend", "pytorch", "--tp_size", "4",
                            "--ep_size", "4", "--trust_remote_code", "--extra_llm_api_options",
                            "/engine/trtllm-serve.yaml", "--kv_cache_free_gpu_memory_fraction", "0.75"],
        (LOW, "B200", 1): [MODEL, "--host", "0.0.0.0", "--port", "8000", "--backend", "pytorch", "--tp_size", "1",
                           "--ep_size", "1", "--trust_remote_code", "--extra_llm_api_options",
                           "/engine/trtllm-serve.yaml", "--kv_cache_free_gpu_memory_fraction", "0.75"],
        (HIGH, "B200", 8): [MODEL, "--host", "0.0.0.0", "--port", "8000", "--backend", "pytorch", "--tp_size", "8",
                            "--ep_size", "8", "--max_batch_size", "640", "--trust_remote_code",
                            "--extra_llm_api_options", "/engine/trtllm-serve.yaml",
                            "--kv_cache_free_gpu_memory_fraction", "0.9"],
        (HIGH, "H200", 8): [MODEL, "--host", "0.0.0.0", "--port", "8000", "--backend", "pytorch", "--tp_size", "8",
                            "--ep_size", "8", "--max_batch_size", "640", "--trust_remote_code",
                            "--extra_llm_api_options", "/engine/trtllm-serve.yaml",
                            "--kv_cache_free_gpu_memory_fraction", "0.9"],
        (HIGH, "GB200", 4): [MODEL, "--host", "0.0.0.0", "--port", "8000", "--backend", "pytorch", "--tp_size", "4",
                             "--ep_size", "4", "--max_batch_size", "640", "--trust_remote_code",
                             "--extra_llm_api_options", "/engine/trtllm-serve.yaml",
                             "--kv_cache_free_gpu_memory_fraction", "0.9"],
        (HIGH, "H200", 1): [MODEL, "--host", "0.0.0.0", "--port", "8000", "--backend", "pytorch", "--tp_size", "1",
                            "--ep_size", "1", "--max_batch_size", "640", "--trust_remote_code",
                            "--extra_llm_api_options", "/engine/trtllm-serve.yaml",
                            "--kv_cache_free_gpu_memory_fraction", "0.9"],
    }

    @pytest.mark.parametrize("case", EXPECTED, ids=[f"{o.split('-')[2]}-{g}-{n}" for o, g, n in EXPECTED])
    def test_should_write_the_guides_command_line(self, case):
        overlay, gpu, gpus = case
        _, container, _ = server(overlay, with_gpu(gpu, gpus))
        assert container["command"] == ["trtllm-serve"]
        assert container["args"] == self.EXPECTED[case]

    @pytest.mark.parametrize("overlay", [LOW, HIGH])
    def test_should_write_only_options_the_pinned_trtllm_serve_has(self, overlay):
        known = options()
        extra = {"trtllmServe": {"extraArgs": ["--log_level", "debug", "--enable_chunked_prefill"]}}
        args = server(overlay, extra)[1]["args"]
        written = [arg for arg in args if arg.startswith("--")]
        assert written and set(written) <= set(known["names"]), set(written) - set(known["names"])
        # A flag without a value is followed by the next option, every other option by its value.
        for index, arg in enumerate(args[:-1]):
            if arg in known["flags"]:
                assert args[index + 1].startswith("--"), arg
        assert args[-1] not in known["names"] or args[-1] in known["flags"]


class TestOptionList:
    def test_should_carry_the_pinned_trtllm_serve_options(self):
        known = options()
        assert known["source"] == "NVIDIA/TensorRT-LLM@00209af149e7774406881a37283dce303571eb11"
        # The guide's flags (seed 004), under the names it uses.
        for name in ("--host", "--port", "--backend", "--tp_size", "--ep_size", "--max_batch_size",
                     "--trust_remote_code", "--extra_llm_api_options", "--kv_cache_free_gpu_memory_fraction"):
            assert name in known["names"], name
        assert known["flags"] == ["--trust_remote_code", "--fail_fast_on_attention_window_too_large",
                                  "--enable_chunked_prefill"]
        assert "--served_model_name" not in known["names"]

    def test_should_read_names_aliases_and_flags_from_click_decorators(self, tmp_path, monkeypatch):
        from ci.generate import trtllm_serve_options as sync
        source = (
            '@click.command("serve")\n@click.argument("model", type=str)\n'
            '@click.option("--tensor_parallel_size", "--tp_size", type=int, default=1)\n'
            '@click.option("--config", "--extra_llm_api_options", "extra_llm_api_options", type=str)\n'
            '@click.option("--trust_remote_code", is_flag=True, default=False)\n'
            'def serve(model, tensor_parallel_size, extra_llm_api_options, trust_remote_code):\n    pass\n')
        assert sync.serve_options(source) == (
            ["--tensor_parallel_size", "--tp_size", "--config", "--extra_llm_api_options", "--trust_remote_code"],
            ["--trust_remote_code"])
        (tmp_path / "serve.py").write_text(source)
        target = tmp_path / "_options.tpl"
        monkeypatch.setattr(sync, "TARGET", target)
        monkeypatch.setattr(sync, "REPO", tmp_path)
        assert sync.main([str(tmp_path / "serve.py"), "NVIDIA/TensorRT-LLM@" + "a" * 40]) == 0
        assert "source: NVIDIA/TensorRT-LLM@" + "a" * 40 in target.read_text()


class TestEngineConfig:
    # (profile, GPU) -> the extra_llm_api_options YAML: the guide's, enable_mixed_sampler left out; Hopper
    # takes OpenAI's Triton MoE kernels (FACTS: "On H200 ... TRITON in both profiles").
    EXPECTED = {
        (LOW, "B200"): {"enable_attention_dp": False, "cuda_graph_config": {"max_batch_size": 8, "enable_padding": True},
                        "moe_config": {"backend": "TRTLLM"}},
        (LOW, "GB200"): {"enable_attention_dp": False, "cuda_graph_config": {"max_batch_size": 8, "enable_padding": True},
                         "moe_config": {"backend": "TRTLLM"}},
        (LOW, "H200"): {"enable_attention_dp": False, "cuda_graph_config": {"max_batch_size": 8, "enable_padding": True},
                        "moe_config": {"backend": "TRITON"}},
        (HIGH, "B200"): {"enable_attention_dp": True, "cuda_graph_config": {"max_batch_size": 640, "enable_padding": True},
                         "stream_interval": 10, "moe_config": {"backend": "CUTLASS"}},
        (HIGH, "GB200"): {"enable_attention_dp": True, "cuda_graph_config": {"max_batch_size": 640, "enable_padding": True},
                          "stream_interval": 10, "moe_config": {"backend": "CUTLASS"}},
        (HIGH, "H200"): {"enable_attention_dp": True, "cuda_graph_config": {"max_batch_size": 640, "enable_padding": True},
                         "stream_interval": 10, "moe_config": {"backend": "TRITON"}},
    }

    @pytest.mark.parametrize("case", EXPECTED, ids=[f"{o.split('-')[2]}-{g}" for o, g in EXPECTED])
    def test_should_write_the_profiles_engine_yaml(self, case):
        overlay, gpu = case
        _, container, objects = server(overlay, with_gpu(gpu, 4 if gpu == "GB200" else None))
        assert engine_yaml(objects) == self.EXPECTED[case]
        assert flag_value(container["args"], "--extra_llm_api_options") == "/engine/trtllm-serve.yaml"
        mount = next(m for m in container["volumeMounts"] if m["name"] == "engine-config")
        assert mount == {"name": "engine-config", "mountPath": "/engine", "readOnly": True}

    @pytest.mark.parametrize("overlay", [LOW, HIGH])
    def test_should_keep_an_explicit_moe_backend_on_h200(self, overlay):
        values = with_gpu("H200", extra={"trtllmServe": {"engine": {"moe_config": {"backend": "CUTLASS"}}}})
        assert engine_yaml(server(overlay, values)[2])["moe_config"] == {"backend": "CUTLASS"}

    def test_should_restart_pods_when_the_engine_yaml_changes(self):
        digest = lambda objects: find(objects, "Deployment")["spec"]["template"]["metadata"]["annotations"][  # noqa: E731
            "gpt-oss/engine-config-sha256"]
        assert digest(render_chart([LOW], show_only=[TRTLLM_SERVE_DEPLOYMENT])) != \
            digest(render_chart([LOW], with_gpu("H200"), show_only=[TRTLLM_SERVE_DEPLOYMENT]))

    def test_should_say_why_the_guides_enable_mixed_sampler_is_left_out(self):
        # The chart refuses it (REFUSALS: guides-enable-mixed-sampler); the overlay says why it is not there.
        assert "enable_mixed_sampler" in (REPO_ROOT / "values" / LOW).read_text()


class TestPod:
    @pytest.mark.parametrize("gpus,replicas", [(1, 1), (4, 1), (8, 1), (8, 2)])
    def test_should_request_the_gpus_of_one_pod_and_scale_with_replicas(self, gpus, replicas):
        values = with_gpu("B200", gpus, {"trtllmServe": {"gpus": gpus, "replicas": replicas}})
        deployment, container, _ = server(HIGH, values)
        assert deployment["spec"]["replicas"] == replicas
        assert container["resources"]["requests"]["nvidia.com/gpu"] == str(gpus)
        assert container["resources"]["limits"]["nvidia.com/gpu"] == str(gpus)
        assert deployment["metadata"]["annotations"]["gpt-oss/total-gpus"] == str(gpus * replicas)
        # Two or more replicas: one replaced at a time, no spare GPUs needed; one replica: the new pod first, so
        # serving capacity is kept (tests/chart/dynamo/test_graceful_shutdown.py).
        assert deployment["spec"]["strategy"]["rollingUpdate"] == (
            {"maxSurge": 0, "maxUnavailable": 1} if replicas > 1 else {"maxSurge": 1, "maxUnavailable": 0})

    def test_should_select_the_gpu_nodes(self):
        pod = server(LOW, with_gpu("GB200", 4))[0]["spec"]["template"]["spec"]
        assert pod["nodeSelector"] == {"kubernetes.io/arch": "arm64", "nvidia.com/gpu.product": "NVIDIA-GB200"}
        # The overlays' own (8x B200), now from gpu.type alone; and gpu.type alone for another GPU.
        for overlay in (LOW, HIGH):
            pod = server(overlay)[0]["spec"]["template"]["spec"]
            assert pod["nodeSelector"] == {"kubernetes.io/arch": "amd64", "nvidia.com/gpu.product": "NVIDIA-B200"}
        pod = server(LOW, {"gpu": {"type": "GB200"}, "trtllmServe": {"gpus": 4}})[0]["spec"]["template"]["spec"]
        assert pod["nodeSelector"] == {"kubernetes.io/arch": "arm64", "nvidia.com/gpu.product": "NVIDIA-GB200"}
        assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]

    def test_should_pin_the_tensorrt_llm_release_image(self):
        assert server(LOW)[1]["image"] == "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc29"

    def test_should_set_the_guides_environment(self):
        env = {e["name"]: e.get("value", e.get("valueFrom")) for e in server(LOW)[1]["env"]}
        assert env["TRTLLM_ENABLE_PDL"] == "1"
        assert env["TRT_LLM_DISABLE_LOAD_WEIGHTS_IN_PARALLEL"] == "True"
        assert env["TIKTOKEN_ENCODINGS_BASE"] == "/model-cache/openai/gpt-oss-120b/tiktoken"
        assert env["HOME"] == "/tmp"
        assert "HF_TOKEN" not in env, "the server loads from the model cache; only the download Job gets the token"
        assert "OVERRIDE_QUANT_ALGO" not in env

    def test_should_wait_for_the_model_then_allow_an_hour_for_the_load(self):
        deployment, container, _ = server(HIGH)
        pod = deployment["spec"]["template"]["spec"]
        assert [c["name"] for c in pod["initContainers"]] == ["check-model"]
        assert {"name": "model-cache", "mountPath": "/model-cache", "readOnly": True} in container["volumeMounts"]
        assert {"name": "model-cache", "persistentVolumeClaim": {"claimName": "gpt-oss-model-cache"}} in pod["volumes"]
        health = {"httpGet": {"path": "/health", "port": "http"}}
        # 360 tries x 10 s = trtllmServe.startupTimeoutSeconds 3600.
        assert container["startupProbe"] == {**health, "periodSeconds": 10, "timeoutSeconds": 5, "failureThreshold": 360}
        # Readiness asks /v1/models, unless the pod is draining (tests/chart/dynamo/test_graceful_shutdown.py).
        assert container["readinessProbe"]["exec"]["command"][-2:] == ["8000", "gpt-oss-120b"]
        assert container["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]

    def test_should_follow_the_startup_timeout(self):
        container = server(HIGH, {"trtllmServe": {"startupTimeoutSeconds": 1805}})[1]
        assert container["startupProbe"]["failureThreshold"] == 181

    def test_should_give_a_large_memory_backed_dev_shm(self):
        deployment, container, _ = server(HIGH)
        volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
        assert volumes["dshm"] == {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "80Gi"}}
        assert {"name": "dshm", "mountPath": "/dev/shm"} in container["volumeMounts"]

    def test_should_run_as_non_root(self):
        deployment, container, _ = server(LOW)
        pod = deployment["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 1000
        assert container["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}

    def test_should_set_the_quantization_override_on_blackwell(self):
        env = {e["name"]: e.get("value") for e in server(HIGH, {"trtllmServe": {"overrideQuantAlgo": "W4A8_MXFP4_MXFP8"}})[1]["env"]}
        assert env["OVERRIDE_QUANT_ALGO"] == "W4A8_MXFP4_MXFP8"


class TestClients:
    @pytest.mark.parametrize("overlay", [LOW, HIGH])
    def test_should_point_smoke_test_and_benchmark_at_the_service(self, overlay):
        objects = render_chart([overlay])
        smoke = {e["name"]: e["value"] for e in find(objects, "Pod", "gpt-oss-smoke-test")["spec"]["containers"][0]["env"]}
        job = find(objects, "Job", "gpt-oss-benchmark")["spec"]["template"]["spec"]["containers"][0]
        bench = {e["name"]: e["value"] for e in job["env"]}
        for env in (smoke, bench):
            assert env["FRONTEND_URL"] == "http://gpt-oss-trtllm-serve.llm.svc:8000"
            # trtllm-serve lists a local checkpoint under its folder name.
            assert env["MODEL"] == "gpt-oss-120b"
        assert flag_value(job["args"], "--url") == "http://gpt-oss-trtllm-serve.llm.svc:8000"
        assert flag_value(job["args"], "--model") == "gpt-oss-120b"
        assert flag_value(job["args"], "--tokenizer") == MODEL

    @pytest.mark.parametrize("values,concurrency,requests", [
        ({}, "5120", "51200"),
        (with_gpu("B200", 4), "2560", "25600"),
        ({"trtllmServe": {"replicas": 2}}, "10240", "102400"),
        ({"trtllmServe": {"maxBatchSize": 512}}, "4096", "40960"),
        ({"trtllmServe": {"attentionDP": False}}, "640", "6400"),
    ], ids=["8-gpus", "4-gpus", "2-replicas", "batch-512", "no-attention-dp"])
    def test_should_benchmark_max_throughput_at_the_decode_slots(self, values, concurrency, requests):
        job = find(render_chart([HIGH], values, show_only=[BENCHMARK_JOB]), "Job", "gpt-oss-benchmark")
        args = job["spec"]["template"]["spec"]["containers"][0]["args"]
        assert flag_value(args, "--concurrency") == concurrency
        assert flag_value(args, "--request-count") == requests

    def test_should_benchmark_low_latency_at_eight_users_whatever_the_gpus(self):
        args = find(render_chart([LOW], with_gpu("B200", 1),
                                 show_only=[BENCHMARK_JOB]), "Job", "gpt-oss-benchmark")["spec"]["template"]["spec"][
            "containers"][0]["args"]
        assert flag_value(args, "--concurrency") == "8"
        assert flag_value(args, "--request-count") == "80"


class TestNotes:
    @pytest.mark.parametrize("overlay,expected", [
        (LOW, ["on 8 x B200 (trtllm-serve, no Dynamo), Deployment and Service gpt-oss-trtllm-serve",
               "trtllm-serve: 1 x 8 GPU(s), 8-way TP, 8-way EP, MoE backend TRTLLM, 2048 decode slots",
               "Served model name: gpt-oss-120b", "Benchmark: concurrency 8 (8 GPUs counted), 80 requests"]),
        (HIGH, ["trtllm-serve: 1 x 8 GPU(s), 8-way TP, 8-way EP, attention-DP, MoE backend CUTLASS, 5120 decode slots",
                "Benchmark: concurrency 5120 (8 GPUs counted), 51200 requests, ISL 1024 / OSL 1024",
                "kubectl port-forward -n llm svc/gpt-oss-trtllm-serve 8000:8000"]),
    ])
    def test_should_state_the_trtllm_serve_plan(self, overlay, expected):
        notes = render_notes([overlay])
        for text in expected:
            assert text in notes
        assert "DynamoGraphDeployment" not in notes

    def test_should_name_triton_on_h200(self):
        assert "MoE backend TRITON" in render_notes([HIGH], with_gpu("H200"))


class TestDynamoOnlyValues:
    def test_should_accept_harmless_dynamo_values(self):
        # Ignored without a DGD, and often set cluster-wide: not refused.
        values = {"dynamo": {"apiVersion": "nvidia.com/v1alpha1", "runtimeVersionOverride": "1.2.1"},
                  "frontend": {"urlOverride": "http://example:8000", "readyPollSeconds": 5}}
        assert find(render_chart([LOW], values, show_only=[TRTLLM_SERVE_DEPLOYMENT]), "Deployment")

    def test_should_keep_the_generated_defaults_current(self, tmp_path, monkeypatch):
        assert subprocess.run([sys.executable, "-m", "ci.generate", "dynamo-defaults", "--check"], capture_output=True,
                              cwd=REPO_ROOT).returncode == 0
        from ci.generate import dynamo_defaults as sync
        stale = tmp_path / "_dynamo-defaults.tpl"
        stale.write_text(sync.render().replace("replicas: 1", "replicas: 2", 1))
        monkeypatch.setattr(sync, "TARGET", stale)
        assert sync.main(["--check"]) == 1


# Refusals (gpt-oss.checkValues.<concern>, templates/validation/_check-*.tpl): one table per concern, one case per
# message; tests/chart/validation/test_check_values.py counts them against the fail calls.
# gpt-oss.checkValues.trtllmServe (_check-trtllm-serve.tpl): the pod fits a node, no flag or key fights the chart's.
TRTLLM_SERVE_REFUSALS = [
    Refusal("trtllm-serve-gpus-over-node", "trtllm-serve-max-throughput.yaml",
            {"gpu": {"type": "GB200", "nodeArch": "arm64", "productLabel": "NVIDIA-GB200"}},
            "trtllmServe.gpus=8 needs 8 GPUs in one pod, but a GB200 node has 4 (gpu.perNode); allowed: trtllmServe.gpus 1 or 4"),
    Refusal("trtllm-serve-mxfp8-on-hopper", "trtllm-serve-low-latency.yaml",
            {"gpu": {"type": "H200", "productLabel": "NVIDIA-H200"}, "trtllmServe": {"overrideQuantAlgo": "W4A8_MXFP4_MXFP8"}},
            "trtllmServe.overrideQuantAlgo=W4A8_MXFP4_MXFP8 needs Blackwell GPUs, but gpu.type=H200; allowed: gpu.type B200 "
            "or GB200, or trtllmServe.overrideQuantAlgo W4A16_MXFP4 (what Hopper runs) or empty"),
    Refusal("trtllm-serve-kv-fraction-in-engine", "trtllm-serve-low-latency.yaml",
            {"trtllmServe": {"engine": {"kv_cache_config": {"free_gpu_memory_fraction": 0.5}}}},
            "trtllmServe.engine.kv_cache_config.free_gpu_memory_fraction would silently override "
            "--kv_cache_free_gpu_memory_fraction; set trtllmServe.freeGpuMemoryFraction instead"),
    Refusal("trtllm-serve-extra-arg-written", "trtllm-serve-low-latency.yaml", {"trtllmServe": {"extraArgs": ["--tp_size", "4"]}},
            "trtllmServe.extraArgs sets --tp_size, which the chart already writes from trtllmServe.gpus; set that instead"),
    Refusal("trtllm-serve-extra-arg-unknown", "trtllm-serve-low-latency.yaml",
            {"trtllmServe": {"extraArgs": ["--served_model_name", "openai/gpt-oss-120b"]}},
            "trtllmServe.extraArgs has --served_model_name, which trtllm-serve "
            "(NVIDIA/TensorRT-LLM@00209af149e7774406881a37283dce303571eb11) does not know, so the server would not start; "
            "allowed: --tokenizer, --custom_tokenizer,"),
    Refusal("trtllm-serve-dynamo-only-values", "trtllm-serve-max-throughput.yaml",
            {"workers": {"worker": {"tensorParallelSize": 8}}, "frontend": {"replicas": 2},
             "monitoring": {"dashboard": {"enabled": True}}},
            "runtime=trtllm-serve deploys no DynamoGraphDeployment, so these Dynamo-only values would be ignored: "
            "frontend.replicas, monitoring.dashboard.enabled, workers.worker.tensorParallelSize; keep their chart defaults "
            "(trtllmServe.* configures this runtime) or set runtime=dynamo"),
    # Extra cases: the engine-key rules (gpt-oss.checkEngineKeys) on trtllmServe.engine, a Dynamo overlay switched.
    Refusal("guides-enable-mixed-sampler", LOW, {"trtllmServe": {"engine": {"enable_mixed_sampler": True}}},
            "trtllmServe.engine.enable_mixed_sampler is not an engine key of TensorRT-LLM 1.3.0rc29", extra=True),
    *(Refusal(f"engine-key-the-chart-writes-{key}", HIGH, {"trtllmServe": {"engine": {key: 1}}},
              f"trtllmServe.engine.{key} is set by the chart from trtllmServe.{field}; set that instead", extra=True)
      for key, field in [("max_batch_size", "maxBatchSize"), ("tensor_parallel_size", "gpus"),
                         ("enable_attention_dp", "attentionDP")]),
    Refusal("dynamo-overlay-switched", "2xh100-truss.yaml", {"runtime": "trtllm-serve"},
            "runtime=trtllm-serve deploys no DynamoGraphDeployment, so these Dynamo-only values would be ignored: "
            "workers.worker.attentionDP, workers.worker.engine.cuda_graph_config, ", extra=True),
]
REFUSALS = {"trtllmServe": TRTLLM_SERVE_REFUSALS}


@pytest.mark.parametrize("case", refusal_params(REFUSALS))
def test_should_refuse_with_a_message_naming_the_keys(case):
    assert_refused(case)
