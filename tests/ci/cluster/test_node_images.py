"""The node tier's images (python -m ci.cluster node-images): named as the chart renders, with the project's pins, and the
serving stand-in reads every trtllm-serve command line the chart renders. Offline: nothing is built."""
from __future__ import annotations

import dataclasses

import pytest

from ci.cluster import node_images as images
from ci.cluster import stand_in
from tests.helpers import REPO_ROOT, TRTLLM_SERVE_OVERLAYS, find, render_chart



BY_NAME = {image.name: image for image in images.IMAGES}


@pytest.fixture(scope="module")
def rendered():
    return images.rendered_images()


class TestNodeImages:
    def test_should_name_each_image_as_the_chart_renders_it(self, rendered):
        names = {image.name: images.image_names(image, rendered) for image in images.IMAGES}
        assert names == {
            "pause": ["registry.k8s.io/pause:3.10"],
            "python": ["docker.io/library/python:3.12.8-slim-bookworm", "ghcr.io/gpt-oss-chart/model-fetch:0.9.0"],
            "serving": ["nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc29"],
            "dynamo-runtime": ["nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.6.1"],
            # The operator's own binaries: its platform chart's repository, appVersion 1.5.0 of main @ 2a6da14c.
            "dynamo-operator": ["nvcr.io/nvidia/ai-dynamo/kubernetes-operator:1.5.0-dev.2a6da14c"],
        }

    def test_should_install_the_download_images_pins_and_aiperf_from_requirements(self, rendered):
        pins = images.pip_requirements(BY_NAME["python"], rendered)
        assert pins[:2] == ["huggingface_hub==1.33.0", "boto3==1.44.5"]
        assert pins[-1] == "aiperf==0.13.0"
        assert pins[:-1] == [line for line in (REPO_ROOT / "images/model-fetch/requirements.txt").read_text().splitlines()
                             if line and not line.startswith("#")]

    def test_should_take_ai_dynamo_from_requirements_e2e(self, rendered):
        assert images.pip_requirements(BY_NAME["serving"], rendered) == ["ai-dynamo==1.2.1"]

    def test_should_install_the_whole_1_6_set_without_resolving_it(self, rendered):
        # ai-dynamo 1.6.1 requires aisimulate, which cannot install here: the file is the resolved set without it.
        pins = images.pip_requirements(BY_NAME["dynamo-runtime"], rendered)
        assert pins[:2] == ["ai-dynamo==1.6.1", "ai-dynamo-runtime==1.6.1"] and BY_NAME["dynamo-runtime"].pip_no_deps
        assert not [pin for pin in pins if pin.startswith("aisimulate")]

    def test_should_change_the_key_when_a_pin_changes(self, rendered):
        before = images.key_of(images.inputs(BY_NAME["python"], rendered))
        fewer = dataclasses.replace(BY_NAME["python"], pip=["images/model-fetch/requirements.txt:huggingface_hub"])
        assert images.key_of(images.inputs(fewer, rendered)) != before

    def test_should_refuse_a_requirements_selection_that_pins_nothing(self, rendered):
        image = images.Image("x", [], "", pip=["requirements-e2e.txt:no-such-project"])
        with pytest.raises(SystemExit, match="no-such-project"):
            images.pip_requirements(image, rendered)


    def test_should_drop_every_ref_no_current_image_needs(self):
        # `ctr images ls` as the node's containerd printed it after a serving image was rebuilt: CRI's
        # sha256:<config> ID of the older import still pinned its 655 MiB layer, and the chart's older tag lingered.
        listing = """\
REF                                                                     TYPE                                       DIGEST                                                                  SIZE      PLATFORMS   LABELS
ghcr.io/gpt-oss-chart/model-fetch:0.5.0                                 application/vnd.oci.image.manifest.v1+json sha256:8cbee886b5e5e9fa64f87511faee62c5d8de81ee21200a48446b812cd29b94d0 1.3 GiB   linux/amd64 io.cri-containerd.image=managed
ghcr.io/gpt-oss-chart/model-fetch:0.5.1                                 application/vnd.oci.image.manifest.v1+json sha256:8cbee886b5e5e9fa64f87511faee62c5d8de81ee21200a48446b812cd29b94d0 1.3 GiB   linux/amd64 io.cri-containerd.image=managed
gpt-oss.test/node-images/serving:fd1683ea1b2b2ab2                       application/vnd.oci.image.manifest.v1+json sha256:8ef2d2f210ee74ff3c59e047c51e8efea60727ebc367a948bb96b9223cc82aca 654.7 MiB linux/amd64 io.cri-containerd.image=managed
sha256:1615b52f33480d53e6e81d99d0439dfbda7ceff2f45364b23e63683b06d64e0b application/vnd.oci.image.manifest.v1+json sha256:02de1dd12556db220770aab89c343ab630dc3ac0312eb729095a048fc29162bf 654.7 MiB linux/amd64 io.cri-containerd.image=managed
sha256:ab6b29322b099e75173c6b6de6cad2b954d6938584d0c9047f4e98e02025ba95 application/vnd.oci.image.manifest.v1+json sha256:8ef2d2f210ee74ff3c59e047c51e8efea60727ebc367a948bb96b9223cc82aca 654.7 MiB linux/amd64 io.cri-containerd.image=managed
"""
        current = {"ghcr.io/gpt-oss-chart/model-fetch:0.5.1", "gpt-oss.test/node-images/serving:fd1683ea1b2b2ab2"}
        assert images.stale_refs(listing, current) == [
            "ghcr.io/gpt-oss-chart/model-fetch:0.5.0",
            "sha256:1615b52f33480d53e6e81d99d0439dfbda7ceff2f45364b23e63683b06d64e0b",
        ]


class TestTrtllmServeStandIn:
    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS)
    def test_should_read_the_rendered_command_line(self, overlay):
        container = find(render_chart([overlay]), "Deployment")["spec"]["template"]["spec"]["containers"][0]
        assert container["command"] == ["trtllm-serve"]

        server = stand_in.parse_trtllm_serve(container["args"])

        assert server["port"] == container["ports"][0]["containerPort"] == 8000
        assert server["model_path"] == "/model-cache/openai/gpt-oss-120b"
        assert server["model_name"] == "gpt-oss-120b"
        assert server["host"] == "0.0.0.0"

    def test_should_refuse_a_flag_it_cannot_read(self):
        with pytest.raises(ValueError, match="--new_switch"):
            stand_in.parse_trtllm_serve(["/m", "--new_switch", "--port", "8000"])

    def test_should_mount_the_metrics_and_size_the_batch_as_the_rendered_engine_yaml_says(self, tmp_path):
        objects = render_chart(["trtllm-serve-low-latency.yaml"], {"inferencePool": {"enabled": True},
                                                                    "trtllmServe": {"maxBatchSize": 4}})
        args = find(objects, "Deployment", "gpt-oss-trtllm-serve")["spec"]["template"]["spec"]["containers"][0]["args"]
        engine = tmp_path / "trtllm-serve.yaml"
        engine.write_text(find(objects, "ConfigMap", "gpt-oss-engine")["data"]["trtllm-serve.yaml"])
        args = [str(engine) if arg == "/engine/trtllm-serve.yaml" else arg for arg in args]

        settings = stand_in.engine_settings(stand_in.parse_trtllm_serve(args)["ignored"])

        assert settings == {"metrics": True, "slots": 4, "tokens_per_block": 32}

    def test_should_not_mount_the_metrics_without_the_engine_keys(self, tmp_path):
        engine = tmp_path / "trtllm-serve.yaml"
        engine.write_text("enable_iter_perf_stats: true\n")  # return_perf_metrics missing
        settings = stand_in.engine_settings({"--extra_llm_api_options": str(engine)})
        assert settings == {"metrics": False, "slots": 2048, "tokens_per_block": 32}

    def test_should_serve_the_gauges_under_trtllm_serve_names(self):
        gauges = stand_in.EngineGauges("gpt-oss-120b", slots=2, tokens_per_block=32)
        gauges.open = 3
        samples = dict(line.rsplit(" ", 1) for line in gauges.exposition().splitlines() if not line.startswith("#"))
        labels = '{model_name="gpt-oss-120b",engine_type="trtllm"}'
        # The names of tensorrt_llm/metrics/collector.py (../shared/trtllm/RELEASES-FACTS.md section 2).
        assert samples == {f"trtllm_num_requests_running{labels}": "2", f"trtllm_num_requests_waiting{labels}": "1",
                           f"trtllm_kv_cache_utilization{labels}": "1.0",
                           f"trtllm_kv_cache_tokens_per_block{labels}": "32",
                           f"trtllm_kv_cache_max_blocks{labels}": "16384"}


class TestDynamoRuntimeStandIn:
    """The runtime stand-in in the pods the Dynamo operator makes (ci/cluster/stand_in.py, through the image's
    python3, ci/cluster/stand_in_python3.sh): the rendered worker command runs the mocker, the frontend runs as it is."""

    @pytest.fixture
    def execs(self, monkeypatch):
        calls = []
        monkeypatch.setattr(stand_in.os, "execve", lambda path, argv, env: calls.append((path, argv, env)))
        return calls

    @pytest.mark.parametrize("overlay", ["agg.yaml", "disagg-k8s.yaml"])
    def test_should_run_the_mocker_for_the_rendered_worker_command(self, overlay, execs, monkeypatch):
        from tests.helpers import dgd_workers
        monkeypatch.setenv("DYN_DISCOVERY_BACKEND", "kubernetes")  # what the operator sets on its pods
        for name, worker in dgd_workers(find(render_chart([overlay]), "DynamoGraphDeployment")).items():
            assert worker["main"]["command"] == ["python3", "-m", "dynamo.trtllm"]
            stand_in.operator_worker(worker["args"])
            argv = execs[-1][1]
            assert argv[1:3] == ["-m", "dynamo.mocker"]
            flags = dict(zip(argv[3::2], argv[4::2]))
            assert flags["--model-path"] == "/model-cache/openai/gpt-oss-120b"
            assert flags["--model-name"] == "openai/gpt-oss-120b"
            assert flags["--discovery-backend"] == "kubernetes"
            assert flags.get("--disaggregation-mode") == {"TRTLLMWorker": None, "TRTLLMPrefillWorker": "prefill",
                                                          "TRTLLMDecodeWorker": "decode"}[name]
            assert execs[-1][2]["HF_HUB_OFFLINE"] == "1"

    def test_should_cache_every_checkpoint_of_the_mount_for_the_frontend(self, execs, monkeypatch, tmp_path):
        checkpoint = tmp_path / "cache" / "openai" / "gpt-oss-120b"
        checkpoint.mkdir(parents=True)
        for name in ("config.json", "tokenizer.json"):
            (checkpoint / name).write_text("{}")
        monkeypatch.setenv("GPT_OSS_STAND_IN_MODEL_ROOT", str(tmp_path / "cache"))
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        (tmp_path / "home").mkdir()
        stand_in.operator_frontend(["--router-mode", "round-robin", "--http-port", "8000"])
        path, argv, env = execs[-1]
        assert argv[1:] == ["-m", "dynamo.frontend", "--router-mode", "round-robin", "--http-port", "8000"]
        entry = tmp_path / "home" / ".cache" / "huggingface" / "hub" / "models--openai--gpt-oss-120b"
        assert (entry / "refs" / "main").read_text() == "0" * 40
        assert (entry / "snapshots" / ("0" * 40) / "tokenizer.json").is_file()
        assert env["HF_HUB_OFFLINE"] == "1" and env["HOME"] == str(tmp_path / "home")

    def test_should_route_only_the_two_dynamo_modules_through_the_stand_in(self):
        import subprocess
        shim = REPO_ROOT / "ci/cluster/stand_in_python3.sh"
        other = subprocess.run(["sh", str(shim), "-c", "import sys; print(sys.executable)"], capture_output=True,
                               text=True)
        assert other.stdout.strip() == "/usr/bin/python3", other  # Debian's python3, unchanged
        text = shim.read_text()
        assert '"-m dynamo.trtllm" | "-m dynamo.frontend")' in text
        assert "exec /usr/bin/python3 /usr/local/bin/gpt-oss-stand-in" in text
