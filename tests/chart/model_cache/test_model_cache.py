"""The model cache: a PVC that outlives the release, and an idempotent, pinned download Job (source huggingface,
the default; the other sources: tests/chart/model_cache/test_model_sources.py)."""
import json

import pytest

from tests.helpers import DGD, OVERLAYS, dgd_components, find, render_chart

PVC = "templates/model-cache/persistentvolumeclaim.yaml"
JOB = "templates/model-cache/job.yaml"


def download_job(values=None):
    return find(render_chart(["agg.yaml"], values, show_only=[JOB]), "Job")


def env_of(job):
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}


class TestModelCachePvc:
    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_keep_the_pvc_on_uninstall(self, overlay):
        pvc = find(render_chart([overlay], show_only=[PVC]), "PersistentVolumeClaim")
        assert pvc["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
        assert pvc["metadata"]["annotations"]["argocd.argoproj.io/sync-options"] == "Delete=false,Prune=false"
        assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]

    def test_should_take_size_class_and_access_mode_from_values(self):
        values = {"modelCache": {"size": "300Gi", "storageClassName": "fast-nfs", "accessMode": "ReadWriteOnce"}}
        spec = find(render_chart(["agg.yaml"], values, show_only=[PVC]), "PersistentVolumeClaim")["spec"]
        assert spec == {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast-nfs",
                        "resources": {"requests": {"storage": "300Gi"}}}

    def test_should_reuse_an_existing_claim_everywhere(self):
        objects = render_chart(["disagg-k8s.yaml"], {"modelCache": {"existingClaim": "shared-gpt-oss"}})
        assert not [o for o in objects if o["kind"] == "PersistentVolumeClaim"]
        claims = {v["persistentVolumeClaim"]["claimName"] for v in _volumes(objects) if "persistentVolumeClaim" in v}
        assert claims == {"shared-gpt-oss"}


def _volumes(objects):
    for obj in objects:
        if obj["kind"] == "Job":
            yield from obj["spec"]["template"]["spec"]["volumes"]
        if obj["kind"] == "DynamoGraphDeployment":
            for component in dgd_components(obj).values():
                yield from component["pod_spec"].get("volumes", [])


class TestDownloadJob:
    def test_should_download_the_pinned_revision_without_original_and_metal(self):
        env = env_of(download_job())
        assert env["SOURCE"] == "huggingface"
        assert "MANIFEST_SHA256" not in env, "no manifest is pinned by default: the Hub's own hashes are checked"
        assert env["MODEL_ID"] == "openai/gpt-oss-120b"
        assert env["MODEL_REVISION"] == "b5c939de8f754692c1647ca79fbf85e8c1e70f8a"
        assert json.loads(env["IGNORE_PATTERNS"]) == ["original/*", "metal/*"]
        assert env["MODEL_DIR"] == "/model-cache/openai/gpt-oss-120b"
        assert env["MARKER"] == "/model-cache/openai/gpt-oss-120b/.download-complete-b5c939de8f754692c1647ca79fbf85e8c1e70f8a"

    def test_should_run_the_pinned_downloader_image_and_install_nothing(self):
        job = download_job()
        assert job["spec"]["template"]["spec"]["containers"][0]["image"] == "ghcr.io/gpt-oss-chart/model-fetch:0.9.0"
        assert "PIP_PACKAGES" not in env_of(job), "nothing may reach PyPI at start unless the user opts in"

    def test_should_install_at_start_only_what_the_user_opts_in_to(self):
        env = env_of(download_job({"modelCache": {"download": {"pipInstall": ["huggingface_hub==1.34.0"]}}}))
        assert env["PIP_PACKAGES"] == "huggingface_hub==1.34.0"

    def test_should_read_the_optional_token_by_reference_as_a_file(self):
        job = download_job()
        spec = job["spec"]["template"]["spec"]
        assert {"name": "hf-token", "secret": {"secretName": "hf-token-secret", "optional": True,
                                               "items": [{"key": "HF_TOKEN", "path": "token"}]}} in spec["volumes"]
        mounts = {m["name"]: m for m in spec["containers"][0]["volumeMounts"]}
        assert mounts["hf-token"] == {"name": "hf-token", "mountPath": "/var/run/secrets/huggingface", "readOnly": True}
        env = env_of(job)
        assert env["HF_TOKEN_PATH"] == "/var/run/secrets/huggingface/token"
        assert "HF_TOKEN" not in env, "a secret in the environment leaks into logs and child processes"

    def test_should_pass_no_token_when_no_secret_is_named(self):
        job = download_job({"huggingface": {"tokenSecret": {"name": ""}}})
        assert "HF_TOKEN_PATH" not in env_of(job)
        assert "hf-token" not in {v["name"] for v in job["spec"]["template"]["spec"]["volumes"]}

    @pytest.mark.parametrize("transfer,expected,absent", [
        ("xet", {"HF_XET_HIGH_PERFORMANCE": "1"}, ["HF_HUB_ENABLE_HF_TRANSFER"]),
        ("default", {}, ["HF_XET_HIGH_PERFORMANCE", "HF_HUB_ENABLE_HF_TRANSFER"]),
    ])
    def test_should_set_the_chosen_transfer_backend(self, transfer, expected, absent):
        env = env_of(download_job({"modelCache": {"download": {"transfer": transfer}}}))
        assert expected.items() <= env.items()
        assert not set(absent) & env.keys()

    def test_should_rename_the_job_when_what_it_runs_changes(self):
        """Job pod templates are immutable: an upgrade creates a new Job instead of patching."""
        first = download_job()["metadata"]["name"]
        assert first == download_job()["metadata"]["name"]
        changed = download_job({"modelCache": {"download": {"image": {"tag": "3.12.9-slim-bookworm"}}}})
        assert changed["metadata"]["name"] != first
        assert first.startswith("gpt-oss-model-download-")

    def test_should_prefer_nodes_without_gpus(self):
        affinity = download_job()["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
        term = affinity["preferredDuringSchedulingIgnoredDuringExecution"][0]["preference"]["matchExpressions"][0]
        assert term == {"key": "nvidia.com/gpu.present", "operator": "NotIn", "values": ["true"]}

    def test_should_not_render_when_disabled(self):
        assert render_chart(["agg.yaml"], {"modelCache": {"download": {"enabled": False}}}, show_only=[JOB]) == []

    def test_should_run_before_the_dgd_in_an_argo_cd_sync(self):
        wave = lambda obj: int(obj["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"])  # noqa: E731
        pvc, dgd = (find(render_chart(["agg.yaml"], show_only=[path]), kind) for path, kind in
                    ((PVC, "PersistentVolumeClaim"), ("templates/dynamo/dynamographdeployment.yaml", "DynamoGraphDeployment")))
        assert wave(pvc) < wave(download_job()) < wave(dgd)


class TestHarmonyVocabulary:
    """FACTS: without o200k_base.tiktoken reachable, tool_calls come back empty, silently."""

    def test_should_stage_the_vocabulary_with_its_checksum(self):
        env = env_of(download_job())
        assert env["TIKTOKEN_URL"] == "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
        assert env["TIKTOKEN_SHA256"] == "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
        assert env["TIKTOKEN_DIR"] == "/model-cache/openai/gpt-oss-120b/tiktoken"

    @pytest.mark.parametrize("api_version", ["nvidia.com/v1beta1"])
    def test_should_point_frontend_and_workers_at_it(self, api_version):
        dgd = find(render_chart(["disagg-k8s.yaml"], {"dynamo": {"apiVersion": api_version}},
                                show_only=[DGD]), "DynamoGraphDeployment")
        components = dgd_components(dgd)
        assert set(components) == {"Frontend", "TRTLLMPrefillWorker", "TRTLLMDecodeWorker"}
        for name, component in components.items():
            assert component["env"]["TIKTOKEN_ENCODINGS_BASE"] == "/model-cache/openai/gpt-oss-120b/tiktoken", name
            # The frontend, too, starts only once the vocabulary (and the marker after it) is there.
            assert component["pod_spec"]["initContainers"][0]["name"] == "check-model", name

    def test_should_leave_everything_as_upstream_when_not_staged(self):
        values = {"model": {"tiktoken": {"stage": False}}}
        assert "TIKTOKEN_URL" not in env_of(download_job(values))
        dgd = find(render_chart(["agg.yaml"], values, show_only=[DGD]), "DynamoGraphDeployment")
        assert "TIKTOKEN" not in str(dgd)
        frontend = dgd_components(dgd)["Frontend"]["pod_spec"]
        # No model cache in the frontend: only the scripts its readiness probe runs.
        assert "initContainers" not in frontend and [v["name"] for v in frontend["volumes"]] == ["scripts"]
