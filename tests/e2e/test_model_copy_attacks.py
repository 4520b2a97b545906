"""e2e tier: the attacks of issue 36 that need the download image's packages, refused by the rendered Job.

The download Job's command runs as rendered (tests/e2e/model_job.py). transfer xet lets huggingface_hub's
snapshot_download follow its own /tree/ listing: a hostile Hub (tests/helpers/hostile.py) adds files no listing of ours
names, a forged ready marker among them. A hostile S3 store (moto's server on 127.0.0.1) serves a manifest too big
to read. The other attacks run offline: tests/chart/model_cache/test_model_copy_attacks.py.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest

from tests.e2e.fake_hub import RepoFile
from tests.e2e.model_job import job_run
from tests.e2e import test_model_source_s3 as s3_source
from tests.helpers import render_chart
from tests.helpers.hostile import MiB, HostileHub

pytestmark = pytest.mark.e2e

s3 = s3_source.s3  # the moto server fixture of the S3 source's tests

MODEL = "openai/gpt-oss-120b"
REVISION = "b5c939de8f754692c1647ca79fbf85e8c1e70f8a"
MARKER_NAME = f".download-complete-{REVISION}"
RUN_TIMEOUT = 120


@pytest.fixture
def hostile_hub():
    if importlib.util.find_spec("huggingface_hub") is None:
        pytest.skip("huggingface_hub (images/model-fetch/requirements.txt) is not installed: "
                    "pip install -r requirements-e2e.txt")
    files = [RepoFile("config.json", b'{"model_type": "gpt_oss"}\n', lfs=False),
             RepoFile("model-00000-of-00001.safetensors", hashlib.sha256(b"w").digest() * 32768, lfs=True)]
    extra = {"modeling_gpt_oss.py": b"import os; os.system('curl evil')\n",
             MARKER_NAME: b'{"forged": true}',
             "model-00000-of-00002.safetensors": b"planted weights" * 1000}
    hub = HostileHub(MODEL, REVISION, files, rate=64 * MiB, tree_extra=extra)
    url = hub.start()
    yield hub, url
    hub.stop()


def xet_job(root: Path, url: str):
    """The Job of transfer xet, its endpoint pointed at the hostile Hub (as the resume tests point it at theirs)."""
    objects = render_chart(["agg.yaml"], {"modelCache": {"download": {"transfer": "xet"}},
                                          "model": {"tiktoken": {"stage": False}}})
    return job_run(root, objects, env={"HF_ENDPOINT": url, "HF_HUB_DISABLE_TELEMETRY": "1",
                                       "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"})


class TestXetGetsPastThePin:
    def test_should_publish_only_listed_files_of_what_the_xet_client_fetched(self, hostile_hub, tmp_path):
        hub, url = hostile_hub
        hub.corrupt = "model-00000-of-00001.safetensors"  # and the Job fails: the extras must not stay behind
        job = xet_job(tmp_path, url)
        model_dir = Path(job.env["MODEL_DIR"])
        assert job.env["HF_XET_HIGH_PERFORMANCE"] == "1"

        assert job.run(RUN_TIMEOUT) != 0, job.output()

        assert any(r["path"].endswith("/modeling_gpt_oss.py") for r in hub.requests), \
            "the xet client never asked for the planted file: the attack did not run"
        planted = [p.name for p in model_dir.iterdir() if p.name != ".cache"] if model_dir.exists() else []
        assert planted == [], f"files of the hostile /tree/ listing reached the model folder: {planted}"

        hub.corrupt = None
        assert job.run(RUN_TIMEOUT) == 0, job.output()

        assert "already complete" not in job.output()
        assert sorted(p.name for p in model_dir.iterdir() if p.name != ".cache") == sorted(
            ["config.json", "model-00000-of-00001.safetensors", "model-manifest.json", MARKER_NAME])
        recorded = json.loads((model_dir / MARKER_NAME).read_text())
        assert recorded["revision"] == REVISION
        assert recorded["manifestSha256"] == hashlib.sha256((model_dir / "model-manifest.json").read_bytes()).hexdigest()
        listed = {f["path"] for f in json.loads((model_dir / "model-manifest.json").read_text())["files"]}
        assert listed == {"config.json", "model-00000-of-00001.safetensors"}


class TestUnboundedS3Manifest:
    def test_should_refuse_an_s3_manifest_too_big_to_read(self, s3, tmp_path):
        s3["client"].put_object(Bucket=s3_source.BUCKET, Key="huge/model-manifest.json", Body=b" " * (17 * MiB))
        job, model_dir, marker = s3_source.run_job(s3, tmp_path, s3_source.chart_values(s3, prefix="huge"))

        assert job.run(RUN_TIMEOUT) != 0
        assert "s3://models/huge/model-manifest.json is larger than 16777216 bytes; refused" in job.output(), \
            job.output()
        assert not marker.exists()
