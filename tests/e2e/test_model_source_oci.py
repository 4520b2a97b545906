"""e2e tier: modelCache.source=oci against a real OCI registry (Debian's docker-registry on 127.0.0.1).

tools/mirror-model.py pushes a small stand-in of the model (tests/e2e/small_model.py) as an OCI image (an
index over linux/amd64 and linux/arm64 sharing the layers). mount=pull: the download Job's command, as
rendered (tests/e2e/model_job.py), pulls it back by digest into the cache and checks it; a digest the registry
does not have and an image of another revision are refused. mount=imageVolume: the image's layers are unpacked
into the volume's folder (what the kubelet does for an image volume), and the check-model init containers of
the rendered pods check it; a changed file, or an image without the vocabulary, fails them by name.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e import small_model
from tests.e2e.model_job import PodRun, job_run
from tests.helpers import dgd_pods, find, render_chart
from tests.helpers.cleanup import cleaned_up

pytestmark = pytest.mark.e2e

REPOSITORY = "models/gpt-oss-120b"
RUN_TIMEOUT = 120


@pytest.fixture(scope="module")
def images(oci_registry, tmp_path_factory):
    """The stand-in pushed three times: as is, without the vocabulary, and as another revision."""
    source = tmp_path_factory.mktemp("stand-in") / "model"
    source.mkdir()
    expected = small_model.make(source)
    pushed = {}
    for name, options, revision in (("pinned", (), small_model.REVISION),
                                    ("no-vocabulary", ("--no-tiktoken",), small_model.REVISION),
                                    ("other-revision", (), small_model.OTHER_REVISION)):
        code, result, output = small_model.mirror(source, f"oci://{oci_registry.host}/{REPOSITORY}:{name}",
                                                  "--plain-http", *options, revision=revision)
        assert code == 0, output
        pushed[name] = result
    return {"registry": oci_registry, "expected": expected, **pushed}


def oci_values(images: dict, image: str = "pinned", mount: str = "pull", digest: str | None = None) -> dict:
    result = images[image]
    return small_model.values({"modelCache": {
        "source": "oci", "manifestSha256": result["manifestSha256"],
        "oci": {"repository": result["repository"], "digest": digest or result["digest"], "mount": mount,
                "plainHttp": True}}})


def unpack_like_the_kubelet(images: dict, image: str, folder: Path) -> None:
    """The image's linux/amd64 layers, unpacked in order into `folder` (an image volume's content)."""
    import model_copy  # charts/gpt-oss/files/model_copy.py (pyproject.toml: pythonpath)

    registry = model_copy.Registry(images["registry"].host, plain_http=True)
    index, _ = registry.manifest(REPOSITORY, images[image]["digest"])
    amd64 = next(m for m in json.loads(index)["manifests"] if m["platform"]["architecture"] == "amd64")
    manifest, _ = registry.manifest(REPOSITORY, amd64["digest"])
    for number, layer in enumerate(json.loads(manifest)["layers"]):
        blob = folder.parent / f"layer-{number}.tar"
        with registry.open_blob(REPOSITORY, layer["digest"]) as response, open(blob, "wb") as out:
            out.write(response.read())
        model_copy.extract_layer(blob, folder)
        blob.unlink()


class TestOciPull:
    def test_should_push_an_index_for_both_architectures_sharing_the_layers(self, images):
        import model_copy

        registry = model_copy.Registry(images["registry"].host, plain_http=True)
        index, media = registry.manifest(REPOSITORY, images["pinned"]["digest"])
        assert media == "application/vnd.oci.image.index.v1+json"
        entries = json.loads(index)["manifests"]
        assert [e["platform"] for e in entries] == [{"architecture": "amd64", "os": "linux"},
                                                     {"architecture": "arm64", "os": "linux"}]
        layers = [[layer["digest"] for layer in json.loads(registry.manifest(REPOSITORY, e["digest"])[0])["layers"]]
                  for e in entries]
        assert layers[0] == layers[1]
        # The 20 MiB shard has a layer of its own only above 64 MiB: here one layer of files, one of the manifest.
        assert len(layers[0]) == 2, layers

    def test_should_pull_by_digest_and_check_every_file(self, images, tmp_path):
        job = job_run(tmp_path, render_chart(["agg.yaml"], oci_values(images)))

        assert job.run(RUN_TIMEOUT) == 0, job.output()

        model_dir, marker = Path(job.env["MODEL_DIR"]), Path(job.env["MARKER"])
        for path, data in images["expected"].items():
            assert (model_dir / path).read_bytes() == data, path
        assert not (model_dir / "original").exists()
        assert json.loads(marker.read_text())["manifestSha256"] == images["pinned"]["manifestSha256"]
        left = [p for p in (model_dir / ".cache" / "gpt-oss" / "blobs").rglob("*") if p.is_file()]
        assert not left, f"pulled layers were left behind: {left}"
        assert f"every file matches manifest {images['pinned']['manifestSha256']} (5 files" in job.output()

    def test_should_refuse_a_digest_the_registry_does_not_have(self, images, tmp_path):
        wrong = "sha256:" + "0" * 64
        job = job_run(tmp_path, render_chart(["agg.yaml"], oci_values(images, digest=wrong)))

        assert job.run(RUN_TIMEOUT) != 0
        assert f"no image {images['pinned']['repository']}@{wrong} in the registry" in job.output(), job.output()
        assert "modelCache.oci.digest" in job.output()
        assert not Path(job.env["MARKER"]).exists()

    def test_should_refuse_the_image_of_another_revision(self, images, tmp_path):
        values = oci_values(images, digest=images["other-revision"]["digest"])
        values["modelCache"]["manifestSha256"] = images["other-revision"]["manifestSha256"]
        job = job_run(tmp_path, render_chart(["agg.yaml"], values))

        assert job.run(RUN_TIMEOUT) != 0
        assert f"is a copy of openai/gpt-oss-120b@{small_model.OTHER_REVISION}" in job.output(), job.output()
        assert not Path(job.env["MARKER"]).exists()


def verify_runs(tmp_path: Path, images: dict, image: str) -> dict[str, PodRun]:
    """The check-model init container of each pod of the rendered DGD, over the unpacked image."""
    objects = render_chart(["disagg-k8s.yaml"], oci_values(images, mount="imageVolume"))
    runs = {}
    for component, pod in dgd_pods(find(objects, "DynamoGraphDeployment")).items():
        container = next(c for c in pod["spec"]["initContainers"] if c["name"] == "check-model")
        run = PodRun(tmp_path / component, objects, pod["spec"], container)
        unpack_like_the_kubelet(images, image, run.volumes["model-cache"])
        runs[component] = run
    return runs


class TestOciImageVolume:
    def test_should_admit_the_pinned_image_in_every_pod(self, images, tmp_path):
        runs = verify_runs(tmp_path, images, "pinned")
        assert set(runs) == {"Frontend", "TRTLLMPrefillWorker", "TRTLLMDecodeWorker"}

        for component, run in runs.items():
            assert run.run(RUN_TIMEOUT) == 0, f"{component}:\n{run.output()}"

        assert "verified 5 file(s)" in runs["TRTLLMDecodeWorker"].output()
        # The frontend reads only the vocabulary: it checks that, not the weights.
        assert "verified 1 file(s)" in runs["Frontend"].output()

    def test_should_fail_a_pod_whose_image_differs_naming_the_file(self, images, tmp_path):
        run = verify_runs(tmp_path, images, "pinned")["TRTLLMDecodeWorker"]
        shard = run.volumes["model-cache"] / small_model.BIG
        data = bytearray(shard.read_bytes())
        data[-1] ^= 0xFF
        shard.write_bytes(bytes(data))

        assert run.run(RUN_TIMEOUT) != 0
        assert f"{small_model.BIG}: sha256 differs" in run.output(), run.output()
        assert "the containers will not start" in run.output()

    def test_should_fail_a_pod_whose_image_lacks_the_vocabulary(self, images, tmp_path):
        values = oci_values(images, image="no-vocabulary", mount="imageVolume")
        objects = render_chart(["disagg-k8s.yaml"], values)
        pod = dgd_pods(find(objects, "DynamoGraphDeployment"))["Frontend"]
        run = PodRun(tmp_path, objects, pod["spec"], pod["spec"]["initContainers"][0])
        unpack_like_the_kubelet(images, "no-vocabulary", run.volumes["model-cache"])

        assert run.run(RUN_TIMEOUT) != 0
        assert "tiktoken/o200k_base.tiktoken: not in the manifest" in run.output(), run.output()


@pytest.fixture(scope="module")
def private_registry(tmp_path_factory):
    """A second docker-registry that wants a user and password (htpasswd, bcrypt), over TLS with a test CA (no
    credential goes over plain HTTP, issue 36), with the stand-in pushed."""
    import base64
    import shutil
    import subprocess
    import time
    import urllib.error
    import urllib.request

    from tests.helpers.registry import REGISTRY_BINARY, free_port
    binary = shutil.which(REGISTRY_BINARY)
    if binary is None:
        pytest.skip(f"no OCI registry: {REGISTRY_BINARY} is not installed (Debian: apt-get install docker-registry)")
    try:
        import crypt  # bcrypt through the system's libcrypt: the only hash docker-registry's htpasswd reads
        password_hash = crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH))
    except (ImportError, AttributeError, OSError) as error:
        pytest.skip(f"cannot make a bcrypt htpasswd entry here (Python's crypt module): {error}")
    if not (password_hash or "").startswith("$2"):
        pytest.skip("this libcrypt makes no bcrypt hashes, which docker-registry's htpasswd needs")
    pytest.importorskip("cryptography", reason="the test CA needs cryptography (requirements-test.txt installs it)")
    import ssl

    from tests.e2e.test_model_source_hub_mirror import make_test_ca
    base = tmp_path_factory.mktemp("private-registry")
    ca_file, _ = make_test_ca(base)
    (base / "htpasswd").write_text(f"model-reader:{password_hash}\n")
    port = free_port()
    (base / "config.yml").write_text(
        f"version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {base / 'storage'}\n"
        f"http:\n  addr: 127.0.0.1:{port}\n  tls:\n    certificate: {base / 'server.crt'}\n"
        f"    key: {base / 'server.key'}\n"
        f"auth:\n  htpasswd:\n    realm: models\n    path: {base / 'htpasswd'}\n")
    client_context = ssl.create_default_context(cafile=str(ca_file))
    log = base / "registry.log"
    process = subprocess.Popen([binary, "serve", str(base / "config.yml")], stdout=open(log, "wb"),
                               stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 15
    while True:
        try:
            urllib.request.urlopen(f"https://127.0.0.1:{port}/v2/", timeout=1, context=client_context).close()
        except urllib.error.HTTPError as error:
            if error.code == 401:
                break
        except OSError:
            pass
        assert process.poll() is None and time.monotonic() < deadline, f"the registry did not start:\n{log.read_text()}"
        time.sleep(0.1)
    with cleaned_up(process.terminate, lambda: process.wait(10)):
        source = base / "stand-in" / "model"
        source.mkdir(parents=True)
        small_model.make(source)
        code, result, output = small_model.mirror(source, f"oci://127.0.0.1:{port}/{REPOSITORY}", "--ca-bundle",
                                                  str(ca_file), "--username", "model-reader",
                                                  env={"REGISTRY_PASSWORD": "s3cret"})
        assert code == 0, output
        auth = base64.b64encode(b"model-reader:s3cret").decode()
        config_json = json.dumps({"auths": {f"127.0.0.1:{port}": {"auth": auth}}}).encode()
        yield {"result": result, "dockerconfigjson": config_json, "ca": ca_file.read_bytes()}


class TestOciCredentials:
    def values(self, private_registry, pull_secret: bool) -> dict:
        result = private_registry["result"]
        values = small_model.values({"modelCache": {
            "source": "oci", "manifestSha256": result["manifestSha256"],
            "oci": {"repository": result["repository"], "digest": result["digest"], "mount": "pull"},
            "caBundle": {"configMap": "registry-ca"}}})
        if pull_secret:
            values["dynamo"] = {"imagePullSecrets": [{"name": "model-registry"}]}
        return values

    def test_should_pull_with_the_image_pull_secret(self, private_registry, tmp_path):
        job = job_run(tmp_path, render_chart(["agg.yaml"], self.values(private_registry, True)),
                      secrets={"model-registry": {".dockerconfigjson": private_registry["dockerconfigjson"]}},
                      config_maps={"registry-ca": {"ca.crt": private_registry["ca"]}})

        assert job.run(RUN_TIMEOUT) == 0, job.output()
        assert Path(job.env["MARKER"]).exists()

    def test_should_refuse_without_credentials_naming_what_to_give(self, private_registry, tmp_path):
        job = job_run(tmp_path, render_chart(["agg.yaml"], self.values(private_registry, False)),
                      config_maps={"registry-ca": {"ca.crt": private_registry["ca"]}})

        assert job.run(RUN_TIMEOUT) != 0
        assert ("wants a user and password and none were given: give the registry's credentials (the chart: "
                "dynamo.imagePullSecrets with a .dockerconfigjson for this host") in job.output(), job.output()
        assert not Path(job.env["MARKER"]).exists()
