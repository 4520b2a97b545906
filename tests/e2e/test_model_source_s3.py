"""e2e tier: modelCache.source=s3 against a real S3 API (moto's server on 127.0.0.1, IAM authentication on).

tools/mirror-model.py copies a small stand-in of the model (tests/e2e/small_model.py; one shard larger than an
8 MiB part, so a multipart upload) to a bucket; then the download Job's command runs as the chart renders it
(tests/e2e/model_job.py) with the keys from its Secret volume. Also: a run killed mid-file resumes with a
ranged GET (through a slow relay), a tampered object is refused by name, wrong keys, a missing bucket and a
missing prefix are refused with messages naming the values, and a copy of another revision is never served.
"""
from __future__ import annotations

import importlib.util
import json
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.e2e import small_model
from tests.e2e.model_job import job_run
from tests.helpers.relays import TcpRelay
from tests.helpers import render_chart
from tests.helpers.cleanup import cleaned_up
from tests.helpers.registry import free_port

pytestmark = pytest.mark.e2e

BUCKET = "models"
PREFIX = "gpt-oss-120b/b5c939de"
SECRET = "model-store"
RUN_TIMEOUT = 120


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """moto's S3 server with IAM authentication on, a user allowed s3:*, its keys, and the mirrored stand-in."""
    for module in ("moto", "boto3"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed: pip install -r requirements-e2e.txt (moto[server], boto3)")
    import boto3

    port = free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=open(log, "wb"), stderr=subprocess.STDOUT)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).close()
            break
        except OSError:
            assert server.poll() is None and time.monotonic() < deadline, f"moto did not start:\n{log.read_text()}"
            time.sleep(0.2)
    with cleaned_up(server.terminate, lambda: server.wait(10)):
        setup = {"endpoint_url": endpoint, "region_name": "us-east-1", "aws_access_key_id": "setup",
                 "aws_secret_access_key": "setup"}
        iam = boto3.client("iam", **setup)
        iam.create_user(UserName="model-reader")
        iam.put_user_policy(UserName="model-reader", PolicyName="s3", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
        key = iam.create_access_key(UserName="model-reader")["AccessKey"]
        # From here on every request must be signed with a key moto's IAM knows.
        urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset-auth", data=b"0", headers={
            "Content-Type": "application/octet-stream"})).close()
        keys = {"AWS_ACCESS_KEY_ID": key["AccessKeyId"], "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"]}
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                              aws_access_key_id=keys["AWS_ACCESS_KEY_ID"],
                              aws_secret_access_key=keys["AWS_SECRET_ACCESS_KEY"])
        client.create_bucket(Bucket=BUCKET)
        source = tmp_path_factory.mktemp("stand-in") / "model"
        source.mkdir()
        expected = small_model.make(source)
        options = ("--s3-endpoint", endpoint, "--path-style")
        code, result, output = small_model.mirror(source, f"s3://{BUCKET}/{PREFIX}", *options, env=keys)
        assert code == 0, output
        code, other, output = small_model.mirror(source, f"s3://{BUCKET}/other-revision", *options, env=keys,
                                                 revision=small_model.OTHER_REVISION)
        assert code == 0, output
        yield {"endpoint": endpoint, "port": port, "keys": keys, "client": client, "source": source,
               "expected": expected, "mirror": result, "other": other}


def chart_values(s3: dict, endpoint: str | None = None, **s3_values) -> dict:
    store = {"endpoint": endpoint or s3["endpoint"], "bucket": BUCKET, "prefix": PREFIX, "pathStyle": True,
             "credentialsSecret": {"name": SECRET}, **s3_values}
    return small_model.values({"modelCache": {"source": "s3", "manifestSha256": s3["mirror"]["manifestSha256"],
                                              "s3": store}})


def run_job(s3: dict, root: Path, values: dict, keys: dict | None = None):
    keys = keys or s3["keys"]
    job = job_run(root, render_chart(["agg.yaml"], values),
                  secrets={SECRET: {name: value.encode() for name, value in keys.items()}})
    return job, Path(job.env["MODEL_DIR"]), Path(job.env["MARKER"])


class TestS3Source:
    def test_should_mirror_with_a_multipart_upload_and_the_manifest_last(self, s3):
        result = s3["mirror"]
        assert result["files"] == 5 and result["multipartUploads"] == 1, result
        head = s3["client"].head_object(Bucket=BUCKET, Key=f"{PREFIX}/{small_model.BIG}")
        # An ETag "<md5 of the part md5s>-<parts>" is what only a multipart upload gets.
        assert head["ETag"].strip('"').endswith("-3"), head["ETag"]
        assert head["ContentLength"] == small_model.BIG_SIZE
        listed = {o["Key"] for o in s3["client"].list_objects_v2(Bucket=BUCKET, Prefix=PREFIX)["Contents"]}
        assert f"{PREFIX}/original/model.safetensors" not in listed, "the ignore patterns were not applied"
        assert f"{PREFIX}/model-manifest.json" in listed
        assert result["values"]["modelCache"]["s3"] == {"bucket": BUCKET, "prefix": PREFIX, "region": "us-east-1",
                                                        "endpoint": s3["endpoint"], "pathStyle": True}

    def test_should_copy_the_pinned_copy_with_the_rendered_job(self, s3, tmp_path):
        job, model_dir, marker = run_job(s3, tmp_path, chart_values(s3))

        assert job.run(RUN_TIMEOUT) == 0, job.output()

        for path, data in s3["expected"].items():
            assert (model_dir / path).read_bytes() == data, path
        assert not (model_dir / "original").exists()
        assert json.loads(marker.read_text())["manifestSha256"] == s3["mirror"]["manifestSha256"]
        stored = s3["client"].get_object(Bucket=BUCKET, Key=f"{PREFIX}/model-manifest.json")["Body"].read()
        assert (model_dir / "model-manifest.json").read_bytes() == stored
        assert f"every file matches manifest {s3['mirror']['manifestSha256']} (5 files" in job.output()

    def test_should_resume_a_file_after_a_kill(self, s3, tmp_path):
        slow = TcpRelay(s3["port"], rate=2 * 1024 * 1024)
        try:
            job, model_dir, marker = run_job(s3, tmp_path, chart_values(s3, endpoint=f"http://127.0.0.1:{slow.port}"))
            partial = model_dir / ".cache" / "gpt-oss" / "partial" / (small_model.BIG + ".partial")
            first = job.start()
            deadline = time.monotonic() + RUN_TIMEOUT
            while not (partial.exists() and partial.stat().st_size > 0):
                assert first.poll() is None, f"the run ended before it could be interrupted:\n{job.output()}"
                assert time.monotonic() < deadline, job.output()
                time.sleep(0.05)
            first.send_signal(signal.SIGKILL)
            first.wait()
            done = partial.stat().st_size
            assert 0 < done < small_model.BIG_SIZE
            assert not marker.exists() and not (model_dir / small_model.BIG).exists()
            slow.rate = None

            assert job.run(RUN_TIMEOUT) == 0, job.output()

            assert f"{small_model.BIG}: resuming at {done} of {small_model.BIG_SIZE} bytes" in job.output()
            assert f"Range: bytes={done}-" in slow.requests_text(), "the rerun did not ask for the rest only"
            assert (model_dir / small_model.BIG).read_bytes() == s3["expected"][small_model.BIG]
            assert marker.exists()
        finally:
            slow.close()

    def test_should_refuse_a_tampered_object_by_name(self, s3, tmp_path):
        key = f"{PREFIX}/model-00002-of-00002.safetensors"
        original = s3["client"].get_object(Bucket=BUCKET, Key=key)["Body"].read()
        tampered = bytearray(original)
        tampered[len(tampered) // 2] ^= 0xFF
        s3["client"].put_object(Bucket=BUCKET, Key=key, Body=bytes(tampered))
        try:
            job, model_dir, marker = run_job(s3, tmp_path, chart_values(s3))

            assert job.run(RUN_TIMEOUT) != 0
        finally:
            s3["client"].put_object(Bucket=BUCKET, Key=key, Body=original)
        assert "model-00002-of-00002.safetensors" in job.output() and "sha256 differs" in job.output(), job.output()
        assert not marker.exists()
        assert not (model_dir / "model-00002-of-00002.safetensors").exists(), "the tampered file was kept"

    @pytest.mark.parametrize("keys", [
        {"AWS_ACCESS_KEY_ID": "AKIAUNKNOWNKEY000000", "AWS_SECRET_ACCESS_KEY": "whatever"},
        "wrong secret",
    ], ids=["unknown-key", "wrong-secret"])
    def test_should_refuse_wrong_credentials_with_a_clear_message(self, s3, tmp_path, keys):
        if keys == "wrong secret":
            keys = {**s3["keys"], "AWS_SECRET_ACCESS_KEY": "not-the-secret"}
        job, _, marker = run_job(s3, tmp_path, chart_values(s3), keys=keys)

        assert job.run(RUN_TIMEOUT) != 0
        assert "S3 refused the credentials" in job.output(), job.output()
        assert "modelCache.s3.credentialsSecret" in job.output()
        assert not marker.exists()

    def test_should_refuse_a_missing_bucket(self, s3, tmp_path):
        job, _, _ = run_job(s3, tmp_path, chart_values(s3, bucket="no-such-bucket"))

        assert job.run(RUN_TIMEOUT) != 0
        assert "no bucket 'no-such-bucket'" in job.output() and "modelCache.s3.bucket" in job.output(), job.output()

    def test_should_refuse_a_missing_prefix(self, s3, tmp_path):
        job, _, _ = run_job(s3, tmp_path, chart_values(s3, prefix="nothing-here"))

        assert job.run(RUN_TIMEOUT) != 0
        assert f"nothing at s3://{BUCKET}/nothing-here/model-manifest.json" in job.output(), job.output()
        assert "modelCache.s3.prefix" in job.output()

    def test_should_refuse_a_copy_of_another_revision(self, s3, tmp_path):
        values = chart_values(s3, prefix="other-revision")
        values["modelCache"]["manifestSha256"] = s3["other"]["manifestSha256"]
        job, model_dir, marker = run_job(s3, tmp_path, values)

        assert job.run(RUN_TIMEOUT) != 0
        assert (f"is a copy of openai/gpt-oss-120b@{small_model.OTHER_REVISION}, but model.id and model.revision ask "
                f"for openai/gpt-oss-120b@{small_model.REVISION}") in job.output(), job.output()
        assert not marker.exists() and not (model_dir / small_model.BIG).exists()

    def test_should_refuse_a_manifest_the_values_do_not_pin(self, s3, tmp_path):
        values = chart_values(s3)
        values["modelCache"]["manifestSha256"] = "f" * 64
        job, _, marker = run_job(s3, tmp_path, values)

        assert job.run(RUN_TIMEOUT) != 0
        assert f"but modelCache.manifestSha256 pins {'f' * 64}" in job.output(), job.output()
        assert not marker.exists()
