"""The attacks of issue 36's security review, replayed against the chart's real scripts and refused (offline tier).

charts/gpt-oss/files/download_model.py runs as a subprocess with the environment of the download Job, against
hostile servers on 127.0.0.1 (tests/helpers/hostile.py: a fake Hub, an OCI registry and a token service that lie); the
chart's own checks are rendered. One test per attack, named after it; the ones that need huggingface_hub's xet
client or moto's S3 are in tests/e2e/test_model_copy_attacks.py. docs/security.md lists the defences.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.e2e.fake_hub import RepoFile
from tests.helpers import (BENCHMARK_JOB, CHART_DIR, DGD, DOWNLOAD_JOB, ChartRenderError, dgd_pods, find, render_chart)
from tests.helpers.hostile import MiB, FakeRegistry, HostileHub, TokenService, layer_tar

SCRIPT = CHART_DIR / "files" / "download_model.py"
import model_copy  # the chart's module, as the Job imports it (pyproject.toml: pythonpath)
import check_model  # the chart's model-ready check, as the init containers and the benchmark import it

MODEL = "openai/gpt-oss-120b"
REV_A = "a" * 40
REV_B = "b" * 40
PIN = "5" * 64
RUN_TIMEOUT = 60


def revision_files(tag: bytes) -> list[RepoFile]:
    return [RepoFile("config.json", b'{"model_type": "gpt_oss", "tag": "%s"}\n' % tag, lfs=False),
            RepoFile("model-00001.safetensors", tag * 4096, lfs=True),
            RepoFile("model-00002.safetensors", tag[::-1] * 4096, lfs=True)]


@pytest.fixture
def hubs():
    started = []

    def start(commit: str, files: list[RepoFile], **knobs) -> tuple[HostileHub, str]:
        hub = HostileHub(MODEL, commit, files, rate=64 * MiB, **knobs)
        started.append(hub)
        return hub, hub.start()
    yield start
    for hub in started:
        hub.stop()


class Job:
    """download_model.py with the download Job's environment, in a folder that stands for the cache claim."""

    def __init__(self, root: Path, revision: str = REV_A, **env):
        self.root, self.revision = root, revision
        self.model_dir = root / "cache" / MODEL
        self.marker = self.model_dir / f".download-complete-{revision}"
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root), "PYTHONDONTWRITEBYTECODE": "1",
                    "SOURCE": "huggingface", "MODEL_ID": MODEL, "MODEL_REVISION": revision,
                    "MODEL_DIR": str(self.model_dir), "CACHE_DIR": str(root / "cache"), "MARKER": str(self.marker),
                    "IGNORE_PATTERNS": "[]",
                    "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1", **env}

    # -S: these sources need the standard library only (huggingface_hub and boto3 are for xet and s3, in the e2e
    # file); skipping site's start-up keeps the offline tier within its time.
    argv = [sys.executable, "-S", str(SCRIPT)]

    def start(self) -> subprocess.Popen:
        return subprocess.Popen(self.argv, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def run(self) -> tuple[int, str]:
        done = subprocess.run(self.argv, env=self.env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
        return done.returncode, done.stdout + done.stderr

    def recorded(self) -> dict:
        return json.loads(self.marker.read_text())


def disk_bytes(folder: Path) -> int:
    return sum(p.lstat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


# --- 2. a ready marker that outlives its check -----------------------------------------------------------------------

class TestStaleMarker:
    def test_should_not_call_a_rollback_complete_while_the_disk_holds_another_revision(self, hubs, tmp_path):
        hub_a, url_a = hubs(REV_A, revision_files(b"A"))
        hub_b, url_b = hubs(REV_B, revision_files(b"B"))
        first = Job(tmp_path, REV_A, HF_ENDPOINT=url_a)
        assert first.run()[0] == 0
        pin_a = first.recorded()["manifestSha256"]  # what the user pins for A
        upgrade = Job(tmp_path, REV_B, HF_ENDPOINT=url_b)
        assert upgrade.run()[0] == 0

        code, output = Job(tmp_path, REV_A, HF_ENDPOINT=url_a, MANIFEST_SHA256=pin_a).run()

        assert code == 0, output
        assert "already complete" not in output
        assert (first.model_dir / "config.json").read_bytes() == hub_a.file("config.json").content
        assert first.recorded()["revision"] == REV_A and first.recorded()["manifestSha256"] == pin_a
        assert not upgrade.marker.exists(), "the marker of B stayed beside A's files"

    def test_should_remove_the_marker_when_a_recheck_is_refused(self, hubs, tmp_path):
        _, url = hubs(REV_A, revision_files(b"A"))
        assert Job(tmp_path, REV_A, HF_ENDPOINT=url).run()[0] == 0
        job = Job(tmp_path, REV_A, HF_ENDPOINT=url, MANIFEST_SHA256="e" * 64)
        assert job.marker.exists()

        code, output = job.run()

        assert code == 1 and f"but modelCache.manifestSha256 pins {'e' * 64}" in output, output
        assert not job.marker.exists(), "a refused re-check left the old marker"

    def test_should_check_again_under_a_marker_an_older_job_wrote(self, hubs, tmp_path):
        """A 0.3.0 marker (no format) was written before these defences: leftovers under it are not trusted."""
        hub, url = hubs(REV_A, revision_files(b"A"))
        job = Job(tmp_path, HF_ENDPOINT=url)
        assert job.run()[0] == 0
        old = {k: v for k, v in job.recorded().items() if k != "format"}
        job.marker.write_text(json.dumps(old))
        (job.model_dir / "modeling_planted.py").write_text("import os\n")
        asked = len(hub.requests)

        code, output = job.run()

        assert code == 0 and "was written by an older download Job" in output, output
        assert not (job.model_dir / "modeling_planted.py").exists()
        assert [r["path"] for r in hub.requests[asked:] if "/resolve/" in r["path"]] == [], \
            "files in place and right were fetched again"

    def test_should_not_mix_old_and_new_files_when_an_upgrade_fails(self, hubs, tmp_path):
        hub_a, url_a = hubs(REV_A, revision_files(b"A"))
        assert Job(tmp_path, REV_A, HF_ENDPOINT=url_a).run()[0] == 0
        files_b = revision_files(b"B")
        _, url_b = hubs(REV_B, files_b, corrupt="model-00002.safetensors")
        job = Job(tmp_path, REV_B, HF_ENDPOINT=url_b)

        code, output = job.run()

        assert code == 1 and "model-00002.safetensors: sha256 differs" in output, output
        # B's good first shard waits in staging: nothing of B is in place until every file of B is checked.
        for name in ("config.json", "model-00001.safetensors"):
            assert (job.model_dir / name).read_bytes() == hub_a.file(name).content, name
        assert not list(job.model_dir.glob(".download-complete-*")), "a marker stayed over a half-changed folder"

    def test_should_keep_workers_waiting_on_a_marker_of_another_pin(self, tmp_path):
        objects = render_chart(["agg.yaml"], {"modelCache": {"mountPath": str(tmp_path / "cache")},
                                              "model": {"tiktoken": {"stage": False}}}, show_only=[DGD])
        pod = dgd_pods(find(objects, "DynamoGraphDeployment"))["TRTLLMWorker"]["spec"]
        check = next(c for c in pod["initContainers"] if c["name"] == "check-model")
        env = {e["name"]: e["value"] for e in check["env"]}
        marker = Path(env["MARKER"])
        marker.parent.mkdir(parents=True)
        # The rendered command, with the scripts ConfigMap's mount point where this checkout keeps the files.
        assert check["command"] == ["python3", "/opt/gpt-oss/scripts/check_model.py"]
        command = [sys.executable, str(CHART_DIR / "files" / "check_model.py")]

        def waits(content: str) -> bool:
            """True when the rendered check says it waits; False when it says the cache is ready and exits 0."""
            marker.write_text(content)
            process = subprocess.Popen(command, env={**env, "POLL_SECONDS": "5", "PATH": "/usr/bin:/bin"},
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            try:
                first = process.stdout.readline()
                if first.startswith("waiting for the model cache: "):
                    return True
                assert first.startswith("model cache ready") and process.wait(RUN_TIMEOUT) == 0, first
                return False
            finally:
                process.kill()
                process.wait()

        revision = env["MODEL_REVISION"]
        assert waits(json.dumps({"model": MODEL, "revision": REV_B, "manifestSha256": PIN}, sort_keys=True))
        assert waits("")
        assert not waits(json.dumps({"model": MODEL, "revision": revision, "manifestSha256": PIN}, sort_keys=True))

    def test_should_keep_workers_waiting_until_the_vocabulary_is_in_place(self, tmp_path):
        # The marker names the pin, but the staged vocabulary is missing, or a link: the check waits (model.tiktoken).
        objects = render_chart(["agg.yaml"], {"modelCache": {"mountPath": str(tmp_path / "cache")}}, show_only=[DGD])
        pod = dgd_pods(find(objects, "DynamoGraphDeployment"))["TRTLLMWorker"]["spec"]
        env = {e["name"]: e["value"] for e in next(c for c in pod["initContainers"] if c["name"] == "check-model")["env"]}
        marker, vocabulary = Path(env["MARKER"]), Path(env["TIKTOKEN_DIR"]) / "o200k_base.tiktoken"
        vocabulary.parent.mkdir(parents=True)
        marker.write_text(json.dumps({"model": MODEL, "revision": env["MODEL_REVISION"]}))
        problem = check_model.marker_problem(str(marker), env["MODEL_REVISION"], vocabulary=str(vocabulary))
        assert problem == f"{vocabulary} (the vocabulary) is not in place"
        elsewhere = tmp_path / "o200k_base.tiktoken"
        elsewhere.write_text("vocabulary")
        vocabulary.symlink_to(elsewhere)
        assert check_model.marker_problem(str(marker), env["MODEL_REVISION"], vocabulary=str(vocabulary)) == problem
        vocabulary.unlink()
        vocabulary.write_text("vocabulary")
        assert check_model.marker_problem(str(marker), env["MODEL_REVISION"], vocabulary=str(vocabulary)) is None

    def test_should_keep_the_benchmark_waiting_on_a_marker_of_another_pin(self, tmp_path):
        """The benchmark's wait_until_served.py reads the cache too: it waits for the marker of the rendered pin."""
        benchmark = find(render_chart(["agg.yaml"], {"modelCache": {"source": "pvc", "manifestSha256": PIN,
                                                                    "existingClaim": "weights"}},
                                      show_only=[BENCHMARK_JOB]),
                         "Job", "gpt-oss-benchmark")["spec"]["template"]["spec"]["containers"][0]
        env = {e["name"]: e["value"] for e in benchmark["env"]}
        assert env["EXPECTED_MANIFEST_SHA256"] == PIN
        marker = tmp_path / ".download-complete"
        marker.write_text(json.dumps({"revision": env["EXPECTED_REVISION"], "manifestSha256": "e" * 64}))
        assert "this release pins " + PIN in check_model.marker_problem(
            str(marker), env["EXPECTED_REVISION"], env["EXPECTED_MANIFEST_SHA256"])
        with pytest.raises(SystemExit, match="gave up: .* names manifest e{64}"):
            check_model.wait_for_marker(str(marker), env["EXPECTED_REVISION"], PIN, deadline=0, interval=0)
        link = tmp_path / "link"
        marker.write_text(json.dumps({"revision": env["EXPECTED_REVISION"], "manifestSha256": PIN}))
        link.symlink_to(marker)
        assert check_model.marker_problem(str(marker), env["EXPECTED_REVISION"], PIN) is None
        assert "is a symbolic link" in check_model.marker_problem(str(link), env["EXPECTED_REVISION"], PIN)


# --- 3. no independent check with a mirror ---------------------------------------------------------------------------

class TestMirrorWithoutIndependentCheck:
    # The chart refuses a mirror without a pinned manifest, and a plain-HTTP one: the model-source refusal table
    # (tests/chart/model_cache/test_model_sources.py: mirror-without-pinned-manifest, mirror-over-plain-http).

    def test_should_refuse_a_listing_without_the_commit(self, hubs, tmp_path):
        def drop_sha(body):
            body.pop("sha")
            return body
        _, url = hubs(REV_A, revision_files(b"A"), listing_patch=drop_sha)
        job = Job(tmp_path, HF_ENDPOINT=url)

        code, output = job.run()

        assert code == 1 and "answered commit None" in output, output
        assert not job.marker.exists() and not (job.model_dir / "config.json").exists()

    def test_should_refuse_a_listing_with_an_empty_blob_id(self, hubs, tmp_path):
        def empty_blob_id(body):
            body["siblings"][0]["blobId"] = ""
            return body
        _, url = hubs(REV_A, revision_files(b"A"), listing_patch=empty_blob_id)
        job = Job(tmp_path, HF_ENDPOINT=url)

        code, output = job.run()

        assert code == 1 and "lists 'config.json' in openai/gpt-oss-120b" in output, output
        assert "without a size and a hash" in output
        assert not job.marker.exists()


# --- 4. two Jobs racing on one cache ---------------------------------------------------------------------------------

class TestTwoJobsOnOneCache:
    def test_should_serve_the_listed_size_when_two_jobs_race(self, hubs, tmp_path):
        files = [RepoFile("model-00001.safetensors", hashlib.sha256(b"race").digest() * (128 * 1024), lfs=True)]
        hub, url = hubs(REV_A, files)
        # The first Job's download is held open after its first chunk until the second says it waits on the lock:
        # a race on a loaded machine, not a timing (a half-second download once ended before the second started).
        hub.hold, hub.hold_timeout = threading.Event(), RUN_TIMEOUT
        first = Job(tmp_path, HF_ENDPOINT=url).start()
        partial = Job(tmp_path).model_dir / ".cache" / "gpt-oss" / "partial" / (files[0].path + ".partial")
        deadline = time.monotonic() + RUN_TIMEOUT
        while not partial.exists() and first.poll() is None:  # made before the first byte is asked for
            assert time.monotonic() < deadline
            time.sleep(0.01)
        second = Job(tmp_path, HF_ENDPOINT=url).start()
        said = []  # what the second printed until it waited (or ended: it never blocks once the hold times out)
        while (line := second.stdout.readline()) and "another download Job holds the lock" not in line:
            said.append(line)
        said.append(line)
        hub.hold.set()

        outputs = [first.communicate(timeout=RUN_TIMEOUT)[0],
                   "".join(said) + second.communicate(timeout=RUN_TIMEOUT)[0]]

        assert [first.returncode, second.returncode] == [0, 0], outputs
        served = Job(tmp_path).model_dir / files[0].path
        assert served.stat().st_size == 4 * MiB
        assert served.read_bytes() == files[0].content
        assert any("another download Job holds the lock" in output for output in outputs), outputs


# --- 5. unbounded writes and reads -----------------------------------------------------------------------------------

class TestUnboundedWritesAndReads:
    def test_should_write_no_more_than_the_listed_size_without_content_length(self, hubs, tmp_path):
        files = [RepoFile("config.json", b"0123456789", lfs=False)]
        _, url = hubs(REV_A, files, endless={f"/{MODEL}/resolve/{REV_A}/config.json": 256 * MiB})
        job = Job(tmp_path, HF_ENDPOINT=url)

        code, output = job.run()

        assert code == 1 and "the source sent more than the 10 bytes the Hub lists" in output, output
        assert disk_bytes(job.model_dir) < 64 * 1024, "the endless answer reached the volume"
        assert not job.marker.exists()

    def test_should_refuse_an_endless_vocabulary(self, hubs, tmp_path):
        _, url = hubs(REV_A, revision_files(b"A"), endless={"/tiktoken/o200k_base.tiktoken": 256 * MiB})
        job = Job(tmp_path, HF_ENDPOINT=url, TIKTOKEN_URL=f"{url}/tiktoken/o200k_base.tiktoken",
                  TIKTOKEN_SHA256=PIN)

        code, output = job.run()

        assert code == 1 and "is larger than 67108864 bytes; refused" in output, output
        assert not job.marker.exists()

    def test_should_refuse_an_oversized_hub_listing(self, hubs, tmp_path):
        def pad(body):
            body["cardData"] = "x" * (17 * MiB)
            return body
        _, url = hubs(REV_A, revision_files(b"A"), listing_patch=pad)

        code, output = Job(tmp_path, HF_ENDPOINT=url).run()

        assert code == 1 and "is larger than 16777216 bytes; refused" in output, output

    def test_should_refuse_an_oversized_oci_manifest(self, tmp_path):
        registry = FakeRegistry("models/gpt-oss", [], manifest_body=b" " * (5 * MiB))
        host = registry.start()
        try:
            job = Job(tmp_path, SOURCE="oci", OCI_REPOSITORY=f"{host}/models/gpt-oss", OCI_DIGEST=registry.digest,
                      OCI_PLAIN_HTTP="true", MANIFEST_SHA256=PIN)
            code, output = job.run()
        finally:
            registry.stop()

        assert code == 1 and "is larger than 4194304 bytes; refused" in output, output

    def test_should_check_the_pin_before_parsing_a_manifest(self, tmp_path):
        job = Job(tmp_path, SOURCE="pvc", MANIFEST_SHA256=PIN)
        job.model_dir.mkdir(parents=True)
        (job.model_dir / "model-manifest.json").write_bytes(b"\xff{ not json")

        code, output = job.run()

        assert code == 1 and f"but modelCache.manifestSha256 pins {PIN}" in output, output
        assert "is not a gpt-oss.model-copy/v1 manifest" not in output, "it parsed the manifest before the pin"
        (job.model_dir / "model-manifest.json").write_bytes(b" " * (17 * MiB))
        code, output = job.run()
        assert code == 1 and "is larger than 16777216 bytes" in output, output


# --- 6. credentials on the wire ---------------------------------------------------------------------------------------

class TestCredentialsOnTheWire:
    def test_should_drop_authorization_on_a_redirect_from_https_to_http(self, hubs, tmp_path, monkeypatch):
        pytest.importorskip("cryptography", reason="the test CA needs cryptography (requirements-test.txt installs it)")
        from tests.e2e.test_model_source_hub_mirror import make_test_ca

        ca_file, context = make_test_ca(tmp_path)
        plain, plain_url = hubs(REV_A, revision_files(b"A"))
        path = f"/{MODEL}/resolve/{REV_A}/config.json"
        secure = HostileHub(MODEL, REV_A, revision_files(b"A"), redirects={path: plain_url + path})
        secure_url = secure.start(ssl_context=context)
        monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
        try:
            with model_copy.hub_request(secure_url + path, token="hf_secret") as response:
                assert response.read() == plain.file("config.json").content
        finally:
            secure.stop()

        assert secure.authorizations == [(path, "Bearer hf_secret")]
        assert plain.authorizations == [(path, None)], "the token followed the redirect to plain HTTP"

    def test_should_send_no_token_to_a_plain_http_mirror(self, hubs, tmp_path):
        hub, url = hubs(REV_A, revision_files(b"A"))
        token = tmp_path / "token"
        token.write_text("hf_secret\n")

        code, output = Job(tmp_path, HF_ENDPOINT=url, HF_TOKEN_PATH=str(token)).run()

        assert code == 1 and "is plain HTTP: the Hugging Face token (huggingface.tokenSecret) is never sent" in output
        assert [auth for _, auth in hub.authorizations if auth] == []

    def test_should_not_give_a_mirror_the_hub_token(self):
        def job_spec(huggingface: dict) -> dict:
            objects = render_chart(["agg.yaml"], {"modelCache": {"manifestSha256": PIN, "huggingface": huggingface}},
                                   show_only=[DOWNLOAD_JOB])
            return find(objects, "Job")["spec"]["template"]["spec"]

        spec = job_spec({"endpoint": "https://hf-mirror.example"})
        assert "hf-token" not in {v["name"] for v in spec["volumes"]}
        assert "HF_TOKEN_PATH" not in {e["name"] for e in spec["containers"][0]["env"]}
        opted = job_spec({"endpoint": "https://hf-mirror.example", "sendTokenToMirror": True})
        assert "hf-token" in {v["name"] for v in opted["volumes"]}

    def test_should_send_no_credentials_to_a_token_service_on_another_host(self, tmp_path):
        service = TokenService()
        realm = service.start()
        registry = FakeRegistry("models/gpt-oss", [], challenge=f'Bearer realm="{realm}",service="registry"')
        host = registry.start()
        config = tmp_path / "config.json"
        config.write_text(json.dumps({"auths": {host: {"auth": base64.b64encode(b"reader:s3cret").decode()}}}))
        env = dict(SOURCE="oci", OCI_REPOSITORY=f"{host}/models/gpt-oss", OCI_DIGEST=registry.digest,
                   OCI_PLAIN_HTTP="true", MANIFEST_SHA256=PIN, REGISTRY_AUTH_FILES=str(config))
        try:
            code, output = Job(tmp_path, **env).run()
            assert code == 1 and "not on the registry's host; refused" in output, output
            assert "modelCache.oci.tokenService" in output
            assert service.hits == [], "the credentials went to the token service the registry named"
            # Named by the user (modelCache.oci.tokenService): trusted, though plain HTTP is still refused.
            code, output = Job(tmp_path / "named", **env, OCI_TOKEN_SERVICE=realm).run()
            assert "is plain HTTP: no credential goes over it" in output, output
            assert service.hits == []
        finally:
            registry.stop()
            service.stop()


    def test_should_send_no_registry_credentials_over_plain_http(self, tmp_path):
        registry = FakeRegistry("models/gpt-oss", [], challenge='Basic realm="models"')
        host = registry.start()
        config = tmp_path / "config.json"
        config.write_text(json.dumps({"auths": {host: {"auth": base64.b64encode(b"reader:s3cret").decode()}}}))
        try:
            code, output = Job(tmp_path, SOURCE="oci", OCI_REPOSITORY=f"{host}/models/gpt-oss",
                               OCI_DIGEST=registry.digest, OCI_PLAIN_HTTP="true", MANIFEST_SHA256=PIN,
                               REGISTRY_AUTH_FILES=str(config)).run()
        finally:
            registry.stop()

        assert code == 1 and f"http://{host} is plain HTTP: no credential goes over it" in output, output
        assert [auth for _, auth in registry.authorizations if auth] == []


# --- 7. links and leftovers --------------------------------------------------------------------------------------------

class TestLinksAndLeftovers:
    def test_should_not_write_through_a_link_already_in_the_folder(self, hubs, tmp_path):
        hub, url = hubs(REV_A, revision_files(b"A"))
        job = Job(tmp_path, HF_ENDPOINT=url)
        outside = tmp_path / "outside"
        outside.mkdir()
        victim = outside / "victim"
        victim.write_bytes(b"not the cache's")
        job.model_dir.mkdir(parents=True)
        (job.model_dir / "config.json").symlink_to(victim)
        (job.model_dir / "model-00001.safetensors").symlink_to(outside / "planted")

        code, output = job.run()

        assert code == 0, output
        assert victim.read_bytes() == b"not the cache's" and not (outside / "planted").exists()
        assert not (job.model_dir / "config.json").is_symlink()
        assert (job.model_dir / "config.json").read_bytes() == hub.file("config.json").content

    def test_should_not_write_through_a_linked_folder(self, hubs, tmp_path):
        files = [RepoFile("sub/model.safetensors", b"w" * 4096, lfs=True)]
        _, url = hubs(REV_A, files)
        job = Job(tmp_path, HF_ENDPOINT=url)
        outside = tmp_path / "outside"
        outside.mkdir()
        job.model_dir.mkdir(parents=True)
        (job.model_dir / "sub").symlink_to(outside, target_is_directory=True)

        code, output = job.run()

        assert code == 0, output
        assert list(outside.iterdir()) == [], "a write escaped the cache through a linked folder"
        assert (job.model_dir / "sub").is_dir() and not (job.model_dir / "sub").is_symlink()

    def test_should_refuse_a_linked_folder_in_a_checked_copy(self, tmp_path):
        job = Job(tmp_path, SOURCE="pvc")
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "model.safetensors").write_bytes(b"w" * 10)
        job.model_dir.mkdir(parents=True)
        (job.model_dir / "sub").symlink_to(outside, target_is_directory=True)
        manifest = model_copy.manifest_bytes(MODEL, REV_A, [
            {"path": "sub/model.safetensors", "size": 10, "sha256": hashlib.sha256(b"w" * 10).hexdigest()}])
        (job.model_dir / "model-manifest.json").write_bytes(manifest)
        job.env["MANIFEST_SHA256"] = hashlib.sha256(manifest).hexdigest()

        code, output = job.run()

        assert code == 1 and "sub/model.safetensors: reached through a symbolic link" in output, output
        assert not job.marker.exists()

    def test_should_not_serve_files_the_manifest_does_not_list(self, hubs, tmp_path):
        _, url = hubs(REV_A, revision_files(b"A"))
        job = Job(tmp_path, HF_ENDPOINT=url)
        (job.model_dir / "extra").mkdir(parents=True)
        (job.model_dir / "extra" / "modeling_evil.py").write_text("import os\n")
        (job.model_dir / "tokenizer.json").write_text("{}")

        code, output = job.run()

        assert code == 0, output
        assert not (job.model_dir / "extra").exists() and not (job.model_dir / "tokenizer.json").exists()
        # The user's claim (source pvc) with a file its manifest does not list: refused, not served.
        pvc = Job(tmp_path / "claim", SOURCE="pvc", MANIFEST_SHA256=hashlib.sha256(
            (job.model_dir / "model-manifest.json").read_bytes()).hexdigest())
        shutil.copytree(job.model_dir, pvc.model_dir, ignore=shutil.ignore_patterns(".download-complete-*", ".cache"))
        (pvc.model_dir / "tokenizer.json").write_text("{}")
        code, output = pvc.run()
        assert code == 1 and "tokenizer.json: not in the manifest" in output, output
        assert not pvc.marker.exists()

    def test_should_mount_the_cache_read_only_in_the_benchmark(self):
        benchmark = find(render_chart(["agg.yaml"], show_only=[BENCHMARK_JOB]), "Job", "gpt-oss-benchmark")
        benchmark = benchmark["spec"]["template"]["spec"]
        claim = [m for m in benchmark["containers"][0]["volumeMounts"] if m["name"] == "model-cache"]
        # The claim is one volume (two volumes of one claim are mounted once, read-only or not at the kubelet's
        # pick): read-only where the copy is, writable only in the benchmark's own folder beside it.
        assert {"name": "model-cache", "mountPath": "/model-cache", "readOnly": True} in claim
        writable = [m for m in claim if not m.get("readOnly")]
        assert writable == [{"name": "model-cache", "mountPath": "/artifacts", "subPath": "perf"}]


# --- 8. OCI names with ':' ---------------------------------------------------------------------------------------------

class TestOciNamesWithColons:
    def test_should_remove_the_bad_file_whose_name_holds_a_colon(self, tmp_path):
        good, meant = b"g" * 100, b"m" * 100
        manifest = model_copy.manifest_bytes(MODEL, REV_A, [
            {"path": "a", "size": 100, "sha256": hashlib.sha256(good).hexdigest()},
            {"path": "a:b.bin", "size": 100, "sha256": hashlib.sha256(meant).hexdigest()}])
        layer = layer_tar({"a": good, "a:b.bin": b"x" * 100, "model-manifest.json": manifest})
        registry = FakeRegistry("models/gpt-oss", [layer])
        host = registry.start()
        try:
            job = Job(tmp_path, SOURCE="oci", OCI_REPOSITORY=f"{host}/models/gpt-oss", OCI_DIGEST=registry.digest,
                      OCI_PLAIN_HTTP="true", MANIFEST_SHA256=hashlib.sha256(manifest).hexdigest())
            code, output = job.run()
        finally:
            registry.stop()

        assert code == 1 and "a:b.bin: sha256 differs" in output, output
        scratch = job.model_dir / ".cache" / "gpt-oss" / "oci"
        assert not (scratch / "a:b.bin").exists() and not (job.model_dir / "a:b.bin").exists(), \
            "the bad file was left"
        assert (scratch / "a").read_bytes() == good, "the clean-up removed the wrong file"
        assert not job.marker.exists()



# --- 8. a model folder outside the cache (issue 44) --------------------------------------------------------------------

class TestModelFolderOutsideTheCache:
    """model.id=team-b/.. once pointed the Job's folder at the root of a claim other releases share, whose files the
    Job then removed as leftovers. The schema refuses such an id; the script refuses it too (defence in depth)."""

    def test_should_not_touch_another_releases_files_for_a_dot_dot_model(self, tmp_path):
        other = tmp_path / "cache" / "team-a" / "model" / "model.safetensors"
        other.parent.mkdir(parents=True)
        other.write_bytes(b"team-a's weights")
        job = Job(tmp_path, MODEL_ID="team-b/..", MODEL_DIR=str(tmp_path / "cache"),
                  MARKER=str(tmp_path / "cache" / f".download-complete-{REV_A}"))

        code, output = job.run()

        assert code == 1 and "refused: MODEL_ID='team-b/..' is not <org>/<name> of plain folder names" in output, output
        assert other.read_bytes() == b"team-a's weights"
        assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["team-a"]

    @pytest.mark.parametrize("model,model_dir,refusal", [
        ("openai/gpt-oss-120b", "cache/openai", "is not the folder of openai/gpt-oss-120b in the cache"),
        ("openai/gpt-oss-120b", "cache/openai/gpt-oss-120b/../../team-a", "is not the folder of openai/gpt-oss-120b"),
        ("openai/.hidden", "cache/openai/.hidden", "is not <org>/<name> of plain folder names"),
        ("openai", "cache/openai", "is not <org>/<name> of plain folder names"),
    ], ids=["parent-folder", "dot-dot-in-the-folder", "dot-name", "no-org"])
    def test_should_refuse_a_folder_that_is_not_the_models_own(self, tmp_path, model, model_dir, refusal):
        with pytest.raises(model_copy.CopyError, match=refusal):
            model_copy.model_folder(tmp_path / "cache", model, tmp_path / model_dir)

    def test_should_refuse_a_linked_org_folder(self, tmp_path):
        (tmp_path / "cache").mkdir()
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / "cache" / "openai").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
        with pytest.raises(model_copy.CopyError, match="is a symbolic link"):
            model_copy.model_folder(tmp_path / "cache", MODEL, tmp_path / "cache" / MODEL)

    def test_should_take_the_folder_the_chart_renders(self, tmp_path):
        [job] = render_chart(["agg.yaml"], show_only=[DOWNLOAD_JOB])
        env = {e["name"]: e["value"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"] if "value" in e}
        assert (env["CACHE_DIR"], env["MODEL_DIR"]) == ("/model-cache", "/model-cache/openai/gpt-oss-120b")
        assert model_copy.model_folder(env["CACHE_DIR"], env["MODEL_ID"], env["MODEL_DIR"]) == Path(env["MODEL_DIR"])
