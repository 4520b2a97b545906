"""Model sources (modelCache.source): every source renders for every target, each refusal has its message, and
every pod gets its weights from where the values say, checked, with the Hub out of reach of the workers.

The downloads themselves run in the e2e tier against real servers: tests/e2e/test_model_source_s3.py (moto),
tests/e2e/test_model_source_oci.py (docker-registry), tests/e2e/test_model_source_hub_mirror.py (TLS + proxy).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import yaml

from tests.helpers import (NETWORK_POLICY_ON, BENCHMARK_JOB, CHART_DIR, DGD, DOWNLOAD_JOB, NETWORK_POLICIES, OVERLAYS, REPO_ROOT, SCRIPTS,
                           ChartRenderError, Refusal, assert_refused, dgd_pods, find,
                           refusal_params, render_chart, render_error, render_notes)
from tools.gptoss.yaml_text import load_yaml

MANIFEST = "5" * 64
DIGEST = "sha256:" + "d" * 64
REPOSITORY = "registry.example.com/models/gpt-oss-120b"
# One value set per source (oci twice: its two mounts); huggingface is the chart's default.
SOURCES = {
    "huggingface": {},
    "s3": {"modelCache": {"source": "s3", "manifestSha256": MANIFEST,
                          "s3": {"endpoint": "http://minio.storage.svc:9000", "bucket": "models",
                                 "prefix": "gpt-oss-120b/b5c939de", "pathStyle": True,
                                 "credentialsSecret": {"name": "model-store"}}}},
    "oci-imageVolume": {"modelCache": {"source": "oci", "manifestSha256": MANIFEST,
                                       "oci": {"repository": REPOSITORY, "digest": DIGEST}}},
    "oci-pull": {"modelCache": {"source": "oci", "manifestSha256": MANIFEST,
                                "oci": {"repository": REPOSITORY, "digest": DIGEST, "mount": "pull"}}},
    "pvc": {"modelCache": {"source": "pvc", "manifestSha256": MANIFEST, "existingClaim": "gpt-oss-weights"}},
}
JOB = "templates/model-cache/job.yaml"


def pods(objects: list[dict]) -> dict[str, dict]:
    """Every pod spec the release runs, by a name saying where it comes from."""
    found = {}
    for obj in objects:
        if obj["kind"] == "DynamoGraphDeployment":
            found.update({f"DGD/{name}": pod["spec"] for name, pod in dgd_pods(obj).items()})
        elif obj["kind"] in ("Job", "Deployment"):
            found[f"{obj['kind']}/{obj['metadata']['name']}"] = obj["spec"]["template"]["spec"]
    return found


def server_containers(objects: list[dict]) -> dict[str, dict]:
    """The containers that load the weights: each worker's main container, or trtllm-serve's."""
    containers = {}
    for name, spec in pods(objects).items():
        if name.startswith("DGD/") and not name.endswith("Frontend"):
            containers[name] = next(c for c in spec["containers"] if c["name"] == "main")
        elif name.startswith("Deployment/") and name.endswith("trtllm-serve"):
            containers[name] = spec["containers"][0]
    return containers


def download_jobs(objects: list[dict]) -> list[dict]:
    return [o for o in objects if o["kind"] == "Job" and o["metadata"]["name"].startswith("gpt-oss-model-download-")]


def env_of(container: dict) -> dict[str, str]:
    return {e["name"]: e.get("value") for e in container.get("env") or []}


class TestEverySourceRenders:
    @pytest.mark.parametrize("source", SOURCES, ids=list(SOURCES))
    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_feed_every_pod_from_the_source(self, overlay, source):
        objects = render_chart([overlay], SOURCES[source])
        image_volume = source == "oci-imageVolume"

        model_pods = {name: spec for name, spec in pods(objects).items()
                      if any(v["name"] == "model-cache" for v in spec.get("volumes", []))
                      and not name.endswith("-benchmark")}
        expected = {"image": {"reference": f"{REPOSITORY}@{DIGEST}", "pullPolicy": "IfNotPresent"}} if image_volume \
            else {"persistentVolumeClaim": {"claimName": "gpt-oss-weights" if source == "pvc" else "gpt-oss-model-cache"}}
        for name, spec in model_pods.items():
            volume = next(v for v in spec["volumes"] if v["name"] == "model-cache")
            assert {k: v for k, v in volume.items() if k != "name"} == expected, name
        jobs = download_jobs(objects)
        assert len(jobs) == (0 if image_volume else 1)
        if jobs:
            container = jobs[0]["spec"]["template"]["spec"]["containers"][0]
            assert env_of(container)["SOURCE"] == source.split("-")[0]
        assert [o for o in objects if o["kind"] == "PersistentVolumeClaim"] == \
            ([] if image_volume or source == "pvc" else [find(objects, "PersistentVolumeClaim", "gpt-oss-model-cache")])
        servers = server_containers(objects)
        assert servers, "no container loads the model"
        for name, container in servers.items():
            assert env_of(container)["HF_HUB_OFFLINE"] == "1", f"{name} could reach the Hub at start"
            mount = next(m for m in container["volumeMounts"] if m["name"] == "model-cache")
            assert mount == {"name": "model-cache", "readOnly": True,
                             "mountPath": "/model-cache/openai/gpt-oss-120b" if image_volume else "/model-cache"}
            ready = [c["name"] for c in model_pods[name]["initContainers"]] if name in model_pods else []
            assert ready == ["check-model"], name
            check = env_of(model_pods[name]["initContainers"][0])
            assert check["CHECK"] == ("verify" if image_volume else "marker"), name


# Refusals (gpt-oss.checkValues.<concern>, templates/validation/_check-*.tpl): one table per concern, one case per
# message; tests/chart/validation/test_check_values.py counts them against the fail calls.
# gpt-oss.checkValues.modelSource (_check-model-source.tpl): what each source needs, one way for credentials.
MODEL_SOURCE_REFUSALS = [
    Refusal("removed-huggingface-hub-version", "agg.yaml", {"modelCache": {"download": {"huggingfaceHubVersion": "0.35.3"}}},
            "modelCache.download.huggingfaceHubVersion=0.35.3 was removed in 0.3.0: the download Job installs nothing at "
            "start, its image (modelCache.download.image, built from images/model-fetch) carries huggingface_hub 1.33.0"),
    Refusal("removed-hf-transfer-version", "agg.yaml", {"modelCache": {"download": {"hfTransferVersion": "0.1.9"}}},
            "modelCache.download.hfTransferVersion=0.1.9 was removed in 0.3.0: huggingface_hub 1.x (the download image's) "
            "no longer uses hf_transfer"),
    Refusal("removed-hf-transfer", "agg.yaml", {"modelCache": {"download": {"transfer": "hf_transfer"}}},
            "modelCache.download.transfer=hf_transfer was removed in 0.3.0: huggingface_hub 1.x (the download image's) no "
            "longer uses hf_transfer; allowed: default, or xet (HF_XET_HIGH_PERFORMANCE=1, up to ~64 GB RAM)"),
    Refusal("setting-of-another-source", "agg.yaml", {"modelCache": {"s3": {"bucket": "models"}}},
            "modelCache.s3.bucket=models is set, but modelCache.source=huggingface, so it would be ignored; set "
            "modelCache.source=s3, or empty modelCache.s3.bucket"),
    Refusal("copy-without-pinned-manifest", "agg.yaml", {"modelCache": {"source": "s3", "s3": {"bucket": "models"}}},
            "modelCache.source=s3 needs modelCache.manifestSha256: the sha256 of the copy's model-manifest.json, which "
            "tools/mirror-model.py prints when it writes the copy; without it any copy of model.revision would be served"),
    Refusal("mirror-over-plain-http", "agg.yaml", {"modelCache": {"manifestSha256": MANIFEST,
                                                          "huggingface": {"endpoint": "http://hf-mirror.corp.example"}}},
            "modelCache.huggingface.endpoint=http://hf-mirror.corp.example is not https://: over plain HTTP anyone on the "
            "network can change the files and their hashes alike, and read the token; use the mirror's https:// URL"),
    Refusal("mirror-without-pinned-manifest", "agg.yaml", {"modelCache": {"huggingface": {
               "endpoint": "https://hf-mirror.corp.example"}}},
            "modelCache.huggingface.endpoint=https://hf-mirror.corp.example needs modelCache.manifestSha256: a mirror lists "
            "the sizes and hashes of the very bytes it serves, so without a pin made elsewhere nothing checks it"),
    Refusal("copy-nothing-checks", "agg.yaml", {"modelCache": {**SOURCES["s3"]["modelCache"], "download": {"enabled": False}}},
            "modelCache.download.enabled=false with modelCache.source=s3: the download Job is what fills and checks the "
            "cache and writes the ready marker the pods wait for; keep modelCache.download.enabled=true"),
    Refusal("s3-without-bucket", "agg.yaml", {"modelCache": {"source": "s3", "manifestSha256": MANIFEST}},
            "modelCache.source=s3 needs modelCache.s3.bucket (and modelCache.s3.prefix, the folder where "
            "tools/mirror-model.py wrote model-manifest.json)"),
    Refusal("s3-credentials-two-ways", "agg.yaml", {"modelCache": {"source": "s3", "manifestSha256": MANIFEST, "s3": {
               "bucket": "models", "credentialsSecret": {"name": "model-store"}, "serviceAccount": {"name": "reader"}}}},
            "S3 credentials are given two ways: modelCache.s3.credentialsSecret.name=model-store and a workload identity "
            '(modelCache.s3.serviceAccount.create=false, name="reader"); keep one'),
    Refusal("s3-annotations-without-create", "agg.yaml", {"modelCache": {"source": "s3", "manifestSha256": MANIFEST, "s3": {
               "bucket": "models", "serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/r"}}}}},
            "modelCache.s3.serviceAccount.annotations are set, but modelCache.s3.serviceAccount.create=false: the chart "
            "annotates only a ServiceAccount it creates"),
    Refusal("oci-without-digest", "agg.yaml", {"modelCache": {"source": "oci", "manifestSha256": MANIFEST,
                                                       "oci": {"repository": REPOSITORY}}},
            f'modelCache.source=oci needs modelCache.oci.repository and modelCache.oci.digest (repository="{REPOSITORY}", '
            'digest=""): the image is pulled by the digest tools/mirror-model.py printed, never by a tag'),
    Refusal("image-volume-with-existing-claim", "agg.yaml",
            {"modelCache": {**SOURCES["oci-imageVolume"]["modelCache"], "existingClaim": "weights"}},
            "modelCache.existingClaim=weights is set, but modelCache.oci.mount=imageVolume uses no PVC (every pod mounts "
            "the image); empty modelCache.existingClaim, or set modelCache.oci.mount=pull to copy the image into that claim"),
    Refusal("pvc-without-claim", "agg.yaml", {"modelCache": {"source": "pvc", "manifestSha256": MANIFEST}},
            "modelCache.source=pvc needs modelCache.existingClaim: the claim that holds the copy in openai/gpt-oss-120b/ "
            "(the folder tools/mirror-model.py wrote, with model-manifest.json)"),
    Refusal("ca-bundle-two-places", "agg.yaml", {"modelCache": {"caBundle": {"configMap": "corp-ca", "secret": "corp-ca"}}},
            "modelCache.caBundle.configMap=corp-ca and modelCache.caBundle.secret=corp-ca are both set: the CA bundle "
            "comes from one of them; empty the other"),
    # Refused by the cluster's version, which only lint (and a real install) sets.
    Refusal("image-volume-before-1.35", "agg.yaml", SOURCES["oci-imageVolume"],
            "modelCache.oci.mount=imageVolume needs Kubernetes 1.35 or newer (image volumes are beta and on by default "
            "from 1.35), but the cluster is v1.34.2; set modelCache.oci.mount=pull, and the download Job copies the image "
            "into the cache PVC", kube_version="1.34.2"),
    # Extra cases: every copy wants its pinned manifest.
    *(Refusal(f"no-pinned-manifest-{source}", "agg.yaml",
              {"modelCache": {k: v for k, v in SOURCES[source]["modelCache"].items() if k != "manifestSha256"}},
              f"modelCache.source={source.split('-')[0]} needs modelCache.manifestSha256", extra=True)
      for source in ["oci-imageVolume", "pvc"]),
]
REFUSALS = {"modelSource": MODEL_SOURCE_REFUSALS}


class TestRefusals:
    @pytest.mark.parametrize("case", refusal_params(REFUSALS))
    def test_should_refuse_with_a_message_naming_the_keys(self, case):
        assert_refused(case)

    def test_should_accept_an_image_volume_from_kubernetes_1_35(self):
        assert render_error("agg.yaml", SOURCES["oci-imageVolume"], "1.35.0") == ""
        assert render_error("agg.yaml", SOURCES["oci-pull"], "1.29.0") == "", "pull works on any Kubernetes"

    def test_should_refuse_a_digest_that_is_not_one(self):
        with pytest.raises(ChartRenderError) as error:
            render_chart(["agg.yaml"], {"modelCache": {"source": "oci", "manifestSha256": MANIFEST,
                                                       "oci": {"repository": REPOSITORY, "digest": "latest"}}})
        assert "modelCache.oci.digest" in str(error.value) or "digest" in str(error.value)


class TestDownloadJobPerSource:
    def job(self, source: str, extra: dict | None = None) -> dict:
        values = json.loads(json.dumps(SOURCES[source]))
        for key, value in (extra or {}).items():
            values.setdefault(key, {}).update(value)
        return download_jobs(render_chart(["agg.yaml"], values, show_only=[DOWNLOAD_JOB]))[0]

    def test_should_read_s3_keys_as_files_by_reference(self):
        spec = self.job("s3")["spec"]["template"]["spec"]
        env = env_of(spec["containers"][0])
        assert {k: env[k] for k in env if k.startswith("S3_")} == {
            "S3_ENDPOINT": "http://minio.storage.svc:9000", "S3_BUCKET": "models",
            "S3_PREFIX": "gpt-oss-120b/b5c939de", "S3_REGION": "us-east-1", "S3_PATH_STYLE": "true",
            "S3_CREDENTIALS_DIR": "/var/run/secrets/s3"}
        assert not [k for k in env if k.startswith("AWS_")], "keys in the environment leak into logs"
        volume = next(v for v in spec["volumes"] if v["name"] == "s3-credentials")
        assert volume == {"name": "s3-credentials", "secret": {"secretName": "model-store", "items": [
            {"key": "AWS_ACCESS_KEY_ID", "path": "access-key-id"},
            {"key": "AWS_SECRET_ACCESS_KEY", "path": "secret-access-key"}]}}
        assert "hf-token" not in {v["name"] for v in spec["volumes"]}

    def test_should_run_as_the_workload_identity(self):
        values = {"modelCache": {"source": "s3", "manifestSha256": MANIFEST, "s3": {"bucket": "models", "serviceAccount": {
            "create": True, "annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/model-reader"}}}}}
        objects = render_chart(["agg.yaml"], values)
        account = find(objects, "ServiceAccount", "gpt-oss-model-fetch")
        assert account["metadata"]["annotations"]["eks.amazonaws.com/role-arn"] == \
            "arn:aws:iam::111122223333:role/model-reader"
        assert account["automountServiceAccountToken"] is False
        spec = download_jobs(objects)[0]["spec"]["template"]["spec"]
        assert spec["serviceAccountName"] == "gpt-oss-model-fetch"
        assert "S3_CREDENTIALS_DIR" not in env_of(spec["containers"][0])

    def test_should_pull_with_the_image_pull_secrets(self):
        spec = self.job("oci-pull", {"dynamo": {"imagePullSecrets": [{"name": "registry-a"}, {"name": "registry-b"}]}}
                        )["spec"]["template"]["spec"]
        env = env_of(spec["containers"][0])
        assert env["OCI_REPOSITORY"] == REPOSITORY and env["OCI_DIGEST"] == DIGEST and env["OCI_PLAIN_HTTP"] == "false"
        assert env["REGISTRY_AUTH_FILES"] == \
            "/var/run/secrets/registry/0/config.json:/var/run/secrets/registry/1/config.json"
        assert [v for v in spec["volumes"] if v["name"].startswith("registry-auth-")] == [
            {"name": f"registry-auth-{i}", "secret": {"secretName": name, "items": [
                {"key": ".dockerconfigjson", "path": "config.json"}]}} for i, name in enumerate(["registry-a", "registry-b"])]

    def test_should_check_a_claim_without_fetching(self):
        env = env_of(self.job("pvc")["spec"]["template"]["spec"]["containers"][0])
        assert env["SOURCE"] == "pvc" and env["CLAIM_NAME"] == "gpt-oss-weights"
        assert env["MANIFEST_SHA256"] == MANIFEST
        assert not [k for k in env if k.startswith(("S3_", "OCI_", "HF_"))]

    def test_should_reach_a_hub_mirror_through_the_proxy_with_the_ca(self):
        values = {"modelCache": {"huggingface": {"endpoint": "https://hf-mirror.corp.example:8443"},
                                 "manifestSha256": MANIFEST,
                                 "proxy": {"httpsProxy": "http://proxy.corp.example:3128", "noProxy": ".svc,10.0.0.0/8"},
                                 "caBundle": {"secret": "corp-ca", "key": "bundle.pem"}}}
        spec = download_jobs(render_chart(["agg.yaml"], values,
                                          show_only=[DOWNLOAD_JOB]))[0]["spec"]["template"]["spec"]
        env = env_of(spec["containers"][0])
        assert env["HF_ENDPOINT"] == "https://hf-mirror.corp.example:8443"
        assert env["HTTPS_PROXY"] == "http://proxy.corp.example:3128" and env["NO_PROXY"] == ".svc,10.0.0.0/8"
        assert env["CA_BUNDLE_FILE"] == "/etc/gpt-oss/ca/bundle.pem"
        assert next(v for v in spec["volumes"] if v["name"] == "ca-bundle") == {
            "name": "ca-bundle", "secret": {"secretName": "corp-ca", "items": [{"key": "bundle.pem", "path": "bundle.pem"}]}}

    @pytest.mark.parametrize("source,extra,ports", [
        ("huggingface", {}, [443]),
        ("s3", {}, [443, 9000]),
        ("oci-pull", {"modelCache": {"proxy": {"httpsProxy": "http://proxy.corp.example:3128"}}}, [443, 3128]),
    ], ids=["huggingface", "s3", "oci-pull-behind-a-proxy"])
    def test_should_let_the_job_reach_only_its_source_ports(self, source, extra, ports):
        values = json.loads(json.dumps(SOURCES[source]))
        values.setdefault("modelCache", {}).update(extra.get("modelCache", {}))
        values["networkPolicy"] = NETWORK_POLICY_ON
        policy = find(render_chart(["agg.yaml"], values,
                                   show_only=[NETWORK_POLICIES]), "NetworkPolicy", "gpt-oss-model-download")
        assert [p["port"] for p in policy["spec"]["egress"][0]["ports"]] == ports


class TestImageVolume:
    @pytest.mark.parametrize("api_version", ["nvidia.com/v1beta1"])
    def test_should_mount_the_image_read_only_and_check_it_before_the_containers(self, api_version):
        objects = render_chart(["disagg-k8s.yaml"], {**SOURCES["oci-imageVolume"], "dynamo": {"apiVersion": api_version}},
                               show_only=[DGD])
        dgd = find(objects, "DynamoGraphDeployment")
        assert "pvcs" not in dgd["spec"], "an image volume needs no PVC"
        for component, pod in dgd_pods(dgd).items():
            verify = pod["spec"]["initContainers"][0]
            env = env_of(verify)
            assert (verify["name"], env["CHECK"], env["MANIFEST_SHA256"]) == ("check-model", "verify", MANIFEST)
            assert env["MODEL_DIR"] == "/model-cache/openai/gpt-oss-120b"
            assert verify["securityContext"]["readOnlyRootFilesystem"] is True
            # The frontend reads only the vocabulary: it checks only that.
            assert env.get("VERIFY_PATHS") == ('["tiktoken/o200k_base.tiktoken"]' if component == "Frontend" else None)
            main = pod["spec"]["containers"][0]
            assert env_of(main)["TIKTOKEN_ENCODINGS_BASE"] == "/model-cache/openai/gpt-oss-120b/tiktoken", component
        assert not [o for o in objects if o["kind"] in ("PersistentVolumeClaim", "ServiceAccount")]

    def test_should_keep_benchmark_artifacts_in_the_pod(self):
        benchmark = find(render_chart(["agg.yaml"], SOURCES["oci-imageVolume"],
                                      show_only=[BENCHMARK_JOB]), "Job", "gpt-oss-benchmark")
        volume = next(v for v in benchmark["spec"]["template"]["spec"]["volumes"] if v["name"] == "model-cache")
        assert volume == {"name": "model-cache", "emptyDir": {}}


class TestNotes:
    @pytest.mark.parametrize("source,lines", [
        ("huggingface", ["1. Model (huggingface): from the Hugging Face Hub at https://huggingface.co, "
                         "openai/gpt-oss-120b@b5c939de8f754692c1647ca79fbf85e8c1e70f8a.",
                         "Checked: the download Job checks every file against the Hub's sizes and hashes",
                         "Disk: PVC gpt-oss-model-cache (200Gi, ReadWriteMany, kept on uninstall) holds the weights "
                         "(~65 GB for openai/gpt-oss-120b without original/ and metal/)"]),
        ("s3", ["1. Model (s3): from s3://models/gpt-oss-120b/b5c939de at http://minio.storage.svc:9000",
                f"a manifest other than sha256 {MANIFEST} (modelCache.manifestSha256)"]),
        ("oci-imageVolume", [f"1. Model (oci): from the OCI image {REPOSITORY}@{DIGEST}",
                             "Disk: each node running a worker or the frontend holds the image",
                             "Workers check the image in their check-model init container"]),
        ("pvc", ["1. Model (pvc): from the copy already on the claim gpt-oss-weights in /model-cache/openai/gpt-oss-120b",
                 "Follow the check: kubectl logs -n llm -f job/gpt-oss-model-download-"]),
    ], ids=["huggingface", "s3", "oci-imageVolume", "pvc"])
    def test_should_say_where_the_weights_come_from_how_they_are_checked_and_the_disk(self, source, lines):
        notes = render_notes(["agg.yaml"], SOURCES[source])
        for line in lines:
            assert line in notes, f"{line!r} not in NOTES:\n{notes[:3000]}"


class TestPlan:
    """tools/plan.py's model_source_lines: read back from the rendered objects."""

    @pytest.fixture(scope="class")
    @classmethod
    def plan_tool(cls):
        import tools.gptoss.plan
        return tools.gptoss.plan

    @pytest.mark.parametrize("api_version", ["nvidia.com/v1beta1"])
    def test_should_say_where_from_how_checked_and_the_disk(self, plan_tool, api_version):
        lines = plan_tool.model_source_lines(render_chart(["disagg-k8s.yaml"], {
            **SOURCES["s3"], "dynamo": {"apiVersion": api_version}}))
        assert lines[0] == ("  Model openai/gpt-oss-120b@b5c939de8f754692c1647ca79fbf85e8c1e70f8a (s3): from "
                            "s3://models/gpt-oss-120b/b5c939de at http://minio.storage.svc:9000")
        assert lines[1].startswith("    checked: Job gpt-oss-model-download-")
        assert f"checks every file against manifest sha256 {MANIFEST}, then writes the ready marker" in lines[1]
        # The Job, the frontend and both worker roles mount the cache.
        assert lines[2] == ("    disk: PVC gpt-oss-model-cache (200Gi ReadWriteMany, kept on uninstall) shared by 4 pod "
                            "template(s); pods need no local disk for the model")
        assert lines[3] == "    the servers start offline (HF_HUB_OFFLINE=1): they never reach the Hub"

    def test_should_show_an_image_volume_and_its_check(self, plan_tool, capsys):
        status = plan_tool.main(["values/agg.yaml", "--set-json", json.dumps(SOURCES["oci-imageVolume"])])
        out, err = capsys.readouterr()
        assert status == 0, err
        assert f"from the OCI image {REPOSITORY}@{DIGEST}" in out
        assert (f"checked: check-model init containers check every file against manifest sha256 {MANIFEST} before the "
                "containers of gpt-oss/Frontend, gpt-oss/TRTLLMWorker start") in out
        assert "disk: each node running them holds the image in its container runtime's image store; no PVC" in out


class TestDownloaderImage:
    """images/model-fetch: the one pinned set of packages the Job's image and the e2e tier install."""

    REQUIREMENTS = REPO_ROOT / "images" / "model-fetch" / "requirements.txt"

    def test_should_pin_every_package(self):
        lines = [line for line in self.REQUIREMENTS.read_text().splitlines() if line and not line.startswith("#")]
        assert all(re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][0-9A-Za-z.]*", line) for line in lines), lines
        names = {line.split("==")[0].lower().replace("_", "-") for line in lines}
        assert {"huggingface-hub", "boto3", "botocore", "hf-xet", "httpx", "urllib3"} <= names

    def test_should_be_installed_by_the_e2e_tier(self):
        assert "-r images/model-fetch/requirements.txt" in (REPO_ROOT / "requirements-e2e.txt").read_text().splitlines()

    def test_should_build_from_a_base_pinned_by_digest_and_run_as_the_charts_user(self):
        containerfile = (REPO_ROOT / "images" / "model-fetch" / "Containerfile").read_text()
        assert re.search(r"^FROM docker\.io/library/python:3\.12\.8-slim-bookworm@sha256:[0-9a-f]{64}$", containerfile,
                         re.MULTILINE)
        assert "-r /tmp/model-fetch-requirements.txt" in containerfile and "--no-deps" in containerfile
        assert re.search(r"^USER 1000:1000$", containerfile, re.MULTILINE)

    def test_should_default_to_the_image_the_release_workflow_publishes(self):
        values = load_yaml((CHART_DIR / "values.yaml").read_text())["modelCache"]["download"]["image"]
        chart = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
        assert values["tag"] == chart["version"], "the release workflow tags the image with the chart version"
        workflow = (REPO_ROOT / ".github" / "workflows" / "release.yaml").read_text()
        assert "images/model-fetch/Containerfile" in workflow and "python -m ci.release model-fetch-image" in workflow
        owner = values["repository"].split("/")[1]
        printed = subprocess.run([sys.executable, "-m", "ci.release", "model-fetch-image", "--owner", owner,
                                  "--version", chart["version"]], capture_output=True, text=True, check=True,
                                 cwd=REPO_ROOT)
        assert printed.stdout.strip() == f"{values['repository']}:{values['tag']}"

    def test_should_refuse_to_publish_where_the_chart_does_not_point(self):
        refused = subprocess.run([sys.executable, "-m", "ci.release", "model-fetch-image", "--owner", "someone",
                                  "--version", "0.3.0"], capture_output=True, text=True, cwd=REPO_ROOT)
        assert refused.returncode == 1
        assert "modelCache.download.image.repository" in refused.stderr and "ghcr.io/someone/model-fetch" in refused.stderr

    def test_should_ship_the_script_and_its_module_in_the_scripts_configmap(self):
        data = find(render_chart(["agg.yaml"], show_only=[SCRIPTS]), "ConfigMap", "gpt-oss-scripts")["data"]
        for name in ("download_model.py", "model_copy.py"):
            assert data[name] == (CHART_DIR / "files" / name).read_text(), name

