"""GPU counts, roles, quantization env and placement of each Dynamo target, as FACTS.md gives them.

The trtllm-serve targets have theirs in tests/chart/trtllm_serve/test_trtllm_serve.py.
"""
import pytest

from tests.helpers import (DGD, DYNAMO_OVERLAYS, Refusal, assert_refused, dgd_components, dgd_workers, find,
                           refusal_params, render_chart)

API_VERSIONS = ["nvidia.com/v1beta1"]

# overlay -> {component: (GPUs per pod, replicas)}, total GPUs, OVERRIDE_QUANT_ALGO (None = absent)
EXPECTED = {
    "agg.yaml": ({"TRTLLMWorker": (4, 1)}, 4, None),
    "disagg-k8s.yaml": ({"TRTLLMPrefillWorker": (1, 1), "TRTLLMDecodeWorker": (4, 1)}, 5, "W4A8_MXFP4_MXFP8"),
    # Our tuning of disagg-k8s (aiconfigurator's advice): 2 TP1 prefill + 3 TP1 decode workers.
    "disagg-k8s-balanced.yaml": ({"TRTLLMPrefillWorker": (1, 2), "TRTLLMDecodeWorker": (1, 3)}, 5, "W4A8_MXFP4_MXFP8"),
    "8xb200-single-node.yaml": ({"TRTLLMPrefillWorker": (4, 1), "TRTLLMDecodeWorker": (4, 1)}, 8, None),
    # Our tuning of 8xb200-single-node (aiconfigurator's advice): 8 aggregated TP1 workers on the node.
    "8xb200-single-node-balanced.yaml": ({"TRTLLMWorker": (1, 8)}, 8, None),
    "2xh100-truss.yaml": ({"TRTLLMWorker": (2, 1)}, 2, None),
}


def test_should_cover_every_overlay():
    assert sorted(EXPECTED) == DYNAMO_OVERLAYS


def workers_of(overlay, api_version):
    dgd = find(render_chart([overlay], {"dynamo": {"apiVersion": api_version}},
                            show_only=[DGD]), "DynamoGraphDeployment")
    assert dgd["apiVersion"] == api_version
    return dgd, dgd_workers(dgd)


@pytest.mark.parametrize("api_version", API_VERSIONS)
@pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
class TestGpus:
    def test_should_request_the_gpus_of_each_role(self, overlay, api_version):
        _, workers = workers_of(overlay, api_version)
        roles, _, _ = EXPECTED[overlay]
        assert {name: (w["gpus"], w["replicas"]) for name, w in workers.items()} == roles

    def test_should_total_the_gpus_of_the_target(self, overlay, api_version):
        dgd, workers = workers_of(overlay, api_version)
        _, total, _ = EXPECTED[overlay]
        assert sum(w["gpus"] * w["replicas"] for w in workers.values()) == total
        assert dgd["metadata"]["annotations"]["gpt-oss/total-gpus"] == str(total)

    def test_should_request_as_many_gpus_as_the_limit(self, overlay, api_version):
        _, workers = workers_of(overlay, api_version)
        gpu = "nvidia.com/gpu" if api_version.endswith("v1beta1") else "gpu"
        for name, worker in workers.items():
            resources = worker["main"]["resources"]
            assert resources["requests"][gpu] == resources["limits"][gpu] == str(worker["gpus"]), name


@pytest.mark.parametrize("api_version", API_VERSIONS)
@pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
class TestQuantization:
    def test_should_set_override_quant_algo_only_where_facts_put_it(self, overlay, api_version):
        _, workers = workers_of(overlay, api_version)
        _, _, quant = EXPECTED[overlay]
        for name, worker in workers.items():
            assert worker["env"].get("OVERRIDE_QUANT_ALGO") == quant, name

    def test_should_keep_quantization_off_the_frontend(self, overlay, api_version):
        dgd, _ = workers_of(overlay, api_version)
        frontend = dgd_components(dgd)["Frontend"]
        assert frontend["type"] == "frontend"
        assert "OVERRIDE_QUANT_ALGO" not in str(frontend["main"])

    def test_should_set_the_recipe_worker_env(self, overlay, api_version):
        _, workers = workers_of(overlay, api_version)
        for worker in workers.values():
            assert worker["env"]["TRTLLM_ENABLE_PDL"] == "1"
            assert worker["env"]["TRT_LLM_DISABLE_LOAD_WEIGHTS_IN_PARALLEL"] == "True"


class TestDisaggEnv:
    def test_should_set_the_upstream_nccl_and_ompi_env_on_disagg_k8s(self):
        _, workers = workers_of("disagg-k8s.yaml", "nvidia.com/v1beta1")
        for worker in workers.values():
            assert worker["env"]["NCCL_GRAPH_REGISTER"] == "0"
            assert worker["env"]["OMPI_MCA_coll_ucc_enable"] == "0"


class TestRoles:
    @pytest.mark.parametrize("overlay,modes", [
        ("agg.yaml", {"TRTLLMWorker": None}),
        ("2xh100-truss.yaml", {"TRTLLMWorker": None}),
        ("disagg-k8s.yaml", {"TRTLLMPrefillWorker": "prefill", "TRTLLMDecodeWorker": "decode"}),
        ("8xb200-single-node.yaml", {"TRTLLMPrefillWorker": "prefill", "TRTLLMDecodeWorker": "decode"}),
    ])
    def test_should_pass_the_disaggregation_mode_of_each_role(self, overlay, modes):
        _, workers = workers_of(overlay, "nvidia.com/v1beta1")
        for name, mode in modes.items():
            args = workers[name]["args"]
            if mode is None:
                assert "--disaggregation-mode" not in args
            else:
                assert args[args.index("--disaggregation-mode") + 1] == mode

    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_serve_the_model_with_the_gpt_oss_parsers(self, overlay):
        _, workers = workers_of(overlay, "nvidia.com/v1beta1")
        for worker in workers.values():
            args = worker["args"]
            assert args[args.index("--served-model-name") + 1] == "openai/gpt-oss-120b"
            assert args[args.index("--dyn-reasoning-parser") + 1] == "gpt_oss"
            assert args[args.index("--dyn-tool-call-parser") + 1] == "harmony"
            assert worker["main"]["command"] == ["python3", "-m", "dynamo.trtllm"]

    def test_should_type_v1beta1_components_by_role(self):
        dgd, _ = workers_of("disagg-k8s.yaml", "nvidia.com/v1beta1")
        assert {c["name"]: c["type"] for c in dgd["spec"]["components"]} == {
            "Frontend": "frontend", "TRTLLMPrefillWorker": "prefill", "TRTLLMDecodeWorker": "decode"}

    def test_should_run_the_frontend_with_round_robin_on_port_8000(self):
        dgd, _ = workers_of("agg.yaml", "nvidia.com/v1beta1")
        frontend = next(c for c in dgd["spec"]["components"] if c["type"] == "frontend")
        main = frontend["podTemplate"]["spec"]["containers"][0]
        assert main["command"] == ["python3", "-m", "dynamo.frontend"]
        assert main["args"] == ["--router-mode", "round-robin", "--http-port", "8000"]


class TestPlacement:
    # What the overlays selected when they set gpu.nodeArch and gpu.productLabel themselves (chart 0.2.0); they
    # now follow gpu.type.
    @pytest.mark.parametrize("overlay,arch,product", [
        ("agg.yaml", "arm64", "NVIDIA-GB200"),
        ("disagg-k8s.yaml", "arm64", "NVIDIA-GB200"),
        ("disagg-k8s-balanced.yaml", "arm64", "NVIDIA-GB200"),
        ("8xb200-single-node.yaml", "amd64", "NVIDIA-B200"),
        ("8xb200-single-node-balanced.yaml", "amd64", "NVIDIA-B200"),
        ("2xh100-truss.yaml", "amd64", "NVIDIA-H100-80GB-HBM3"),
    ])
    def test_should_select_the_target_gpu_nodes(self, overlay, arch, product):
        _, workers = workers_of(overlay, "nvidia.com/v1beta1")
        for worker in workers.values():
            assert worker["pod_spec"]["nodeSelector"] == {"kubernetes.io/arch": arch, "nvidia.com/gpu.product": product}

    @pytest.mark.parametrize("gpu_type,arch,product", [
        ("GB200", "arm64", "NVIDIA-GB200"), ("B200", "amd64", "NVIDIA-B200"), ("H200", "amd64", "NVIDIA-H200"),
        ("H100", "amd64", "NVIDIA-H100-80GB-HBM3"),
    ])
    def test_should_follow_gpu_type(self, gpu_type, arch, product):
        # The case: agg.yaml with only gpu.type changed scheduled on arm64 nodes labelled NVIDIA-GB200.
        dgd = find(render_chart(["agg.yaml"], {"gpu": {"type": gpu_type}}, show_only=[DGD]), "DynamoGraphDeployment")
        for worker in dgd_workers(dgd).values():
            assert worker["pod_spec"]["nodeSelector"] == {"kubernetes.io/arch": arch, "nvidia.com/gpu.product": product}

    # The GFD labels of the records (gpt-oss.gpuRecords), set explicitly on each overlay (the trtllm-serve ones in
    # tests/chart/engine/test_hardware.py).
    @pytest.mark.parametrize("overlay,product", [
        ("agg.yaml", "NVIDIA-GB200"), ("disagg-k8s.yaml", "NVIDIA-GB200"), ("disagg-k8s-balanced.yaml", "NVIDIA-GB200"),
        ("8xb200-single-node.yaml", "NVIDIA-B200"), ("8xb200-single-node-balanced.yaml", "NVIDIA-B200"),
        ("2xh100-truss.yaml", "NVIDIA-H100-80GB-HBM3"),
    ])
    def test_should_keep_a_label_of_the_record_the_user_sets(self, overlay, product):
        dgd = find(render_chart([overlay], {"gpu": {"productLabel": product}}, show_only=[DGD]), "DynamoGraphDeployment")
        assert {w["pod_spec"]["nodeSelector"]["nvidia.com/gpu.product"] for w in dgd_workers(dgd).values()} == {product}

    def test_should_select_no_product_with_an_empty_label(self):
        dgd = find(render_chart(["agg.yaml"], {"gpu": {"productLabel": ""}}, show_only=[DGD]), "DynamoGraphDeployment")
        assert [w["pod_spec"]["nodeSelector"] for w in dgd_workers(dgd).values()] == [{"kubernetes.io/arch": "arm64"}]

    def test_should_let_extra_node_labels_win(self):
        values = {"workers": {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-GB200-NVL72", "pool": "llm"}}}
        dgd = find(render_chart(["agg.yaml"], values, show_only=[DGD]), "DynamoGraphDeployment")
        assert [w["pod_spec"]["nodeSelector"] for w in dgd_workers(dgd).values()] == [
            {"kubernetes.io/arch": "arm64", "nvidia.com/gpu.product": "NVIDIA-GB200-NVL72", "pool": "llm"}]

    def test_should_put_both_8xb200_workers_on_one_node(self):
        dgd, _ = workers_of("8xb200-single-node.yaml", "nvidia.com/v1beta1")
        workers = [c for c in dgd["spec"]["components"] if c["type"] != "frontend"]
        assert len(workers) == 2
        for component in workers:
            term = (component["podTemplate"]["spec"]["affinity"]["podAffinity"]
                    ["requiredDuringSchedulingIgnoredDuringExecution"][0])
            assert term["topologyKey"] == "kubernetes.io/hostname"
            # Every worker pod matches the term itself, or the first of the pair could never schedule.
            for other in workers:
                assert term["labelSelector"]["matchLabels"].items() <= other["podTemplate"]["metadata"]["labels"].items()

    @pytest.mark.parametrize("overlay", ["agg.yaml", "disagg-k8s.yaml", "2xh100-truss.yaml"])
    def test_should_not_pin_other_targets_to_one_node(self, overlay):
        _, workers = workers_of(overlay, "nvidia.com/v1beta1")
        assert all("affinity" not in w["pod_spec"] for w in workers.values())

    def test_should_hold_workers_until_the_model_is_downloaded(self):
        _, workers = workers_of("agg.yaml", "nvidia.com/v1beta1")
        init = workers["TRTLLMWorker"]["pod_spec"]["initContainers"][0]
        assert (init["name"], init["command"]) == ("check-model", ["python3", "/opt/gpt-oss/scripts/check_model.py"])
        env = {e["name"]: e["value"] for e in init["env"]}
        assert env["CHECK"] == "marker"
        assert env["MARKER"].endswith("/.download-complete-b5c939de8f754692c1647ca79fbf85e8c1e70f8a")
        # The marker must name the pinned revision (issue 36), not merely exist.
        assert env["MODEL_REVISION"] == "b5c939de8f754692c1647ca79fbf85e8c1e70f8a"


# Refusals (gpt-oss.checkValues.<concern>, templates/validation/_check-*.tpl): one table per concern, one case per
# message; tests/chart/validation/test_check_values.py counts them against the fail calls.
# gpt-oss.checkValues.gpu (_check-gpu.tpl): the nodes fit gpu.type.
GPU_REFUSALS = [
    Refusal("gb200-on-amd64", "agg.yaml", {"gpu": {"nodeArch": "amd64"}},
            "gpu.type=GB200 runs only on ARM64 (Grace) nodes, but gpu.nodeArch=amd64; allowed: gpu.nodeArch=arm64"),
    Refusal("hgx-gpu-on-arm64", "2xh100-truss.yaml", {"gpu": {"nodeArch": "arm64"}},
            "gpu.type=H100 comes in AMD64 (x86) nodes, but gpu.nodeArch=arm64; allowed: gpu.nodeArch=amd64, or null to "
            "follow gpu.type"),
    Refusal("product-label-of-another-gpu", "agg.yaml", {"gpu": {"type": "H100", "productLabel": "NVIDIA-GB200"}},
            'gpu.productLabel=NVIDIA-GB200 is the label of GB200 nodes, but gpu.type=H100; allowed: the '
            'nvidia.com/gpu.product label of H100 nodes (NVIDIA-H100-80GB-HBM3 by default), "" to select no product, or '
            'null to follow gpu.type'),
    # The issue's cases: an A100's label, and a MIG profile, on the H100 target.
    Refusal("mig-profile", "2xh100-truss.yaml", {"gpu": {"productLabel": "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"}},
            "gpu.productLabel=NVIDIA-H100-80GB-HBM3-MIG-1g.10gb selects MIG instances (GPU Feature Discovery labels a node "
            "<product>-MIG-<profile> when its GPUs are partitioned), but gpt-oss needs whole GPUs: the chart gives each pod "
            "whole GPUs of gpu.type's memory and counts them per node; allowed: the label of whole H100 GPUs "
            '(NVIDIA-H100-80GB-HBM3), "" to select no product, or null to follow gpu.type'),
    Refusal("mig-profile-in-node-selector", "agg.yaml",
            {"workers": {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-GB200-MIG-1g.23gb"}}},
            "workers.nodeSelector.nvidia.com/gpu.product=NVIDIA-GB200-MIG-1g.23gb selects MIG instances", extra=True),
    Refusal("product-label-outside-the-record", "2xh100-truss.yaml", {"gpu": {"productLabel": "NVIDIA-A100-SXM4-80GB"}},
            "gpu.productLabel=NVIDIA-A100-SXM4-80GB is not a label GPU Feature Discovery gives H100 nodes (gpu.type=H100; "
            "the chart's GPU record, gpt-oss.gpuRecords), so the workers would wait for nodes the chart has no facts for "
            '(memory, architecture, the MoE backends that run); allowed: NVIDIA-H100-80GB-HBM3, "" to select no product '
            "(nodes chosen by your own workers.nodeSelector), or null to follow gpu.type"),
    Refusal("product-label-of-another-h100", "2xh100-truss.yaml", {"gpu": {"productLabel": "NVIDIA-H100-PCIe"}},
            "gpu.productLabel=NVIDIA-H100-PCIe is not a label GPU Feature Discovery gives H100 nodes", extra=True),
]
# gpt-oss.checkValues.topology (_check-parallelism.tpl): aggregated or disaggregated.
TOPOLOGY_REFUSALS = [
    Refusal("agg-and-disagg", "agg.yaml", {"workers": {"prefill": {"enabled": True}}},
            "workers.worker.enabled is true together with workers.prefill.enabled=true / workers.decode.enabled=false: "
            "choose aggregated (worker only) or disaggregated (prefill and decode)"),
    Refusal("no-role", "agg.yaml", {"workers": {"worker": {"enabled": False}}},
            "no worker role is enabled: set workers.worker.enabled=true (aggregated) or workers.prefill.enabled=true "
            "and workers.decode.enabled=true (disaggregated)"),
    Refusal("prefill-without-decode", "disagg-k8s.yaml", {"workers": {"decode": {"enabled": False}}},
            "a disaggregated deployment needs both roles: workers.prefill.enabled=true, workers.decode.enabled=false; "
            "enable both, or use workers.worker alone"),
]
# gpt-oss.checkValues.parallelism (_check-parallelism.tpl): each role's split over its GPUs.
PARALLELISM_REFUSALS = [
    Refusal("ep-not-dividing-tp", "agg.yaml", {"workers": {"worker": {"expertParallelSize": 8}}},
            "workers.worker.expertParallelSize=8 must divide workers.worker.tensorParallelSize=4: the MoE layers split "
            "the 4 tensor-parallel ranks into expert-parallel groups; allowed: a divisor of 4"),
    Refusal("attention-dp-at-tp1", "disagg-k8s.yaml", {"workers": {"prefill": {"attentionDP": True}}},
            "workers.prefill.attentionDP=true needs workers.prefill.tensorParallelSize > 1 (attention-DP runs one batch "
            "per tensor-parallel rank); set attentionDP=false or tensorParallelSize 2, 4 or 8"),
    Refusal("gpus-over-node", "agg.yaml", {"workers": {"worker": {"tensorParallelSize": 8, "expertParallelSize": 8}}},
            "workers.worker needs 8 GPUs per pod (tensorParallelSize 8 x pipelineParallelSize 1), but a GB200 node has 4 "
            "(gpu.perNode); allowed: at most 4 GPUs per pod"),
]
REFUSALS = {"gpu": GPU_REFUSALS, "topology": TOPOLOGY_REFUSALS, "parallelism": PARALLELISM_REFUSALS}


@pytest.mark.parametrize("case", refusal_params(REFUSALS))
def test_should_refuse_with_a_message_naming_the_keys(case):
    assert_refused(case)
