"""e2e tier: modelCache.source=pvc, a copy tools/mirror-model.py wrote to a folder, checked by the rendered Job.

The folder goes onto the claim as <model.id>/ (here: the folder standing for the claim's volume); the download
Job's command, as rendered (tests/e2e/model_job.py), checks every file against the pinned manifest and writes
the ready marker, fetching nothing. A changed file fails it by name, and the user's copy is left as it was.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.e2e import small_model
from tests.e2e.model_job import job_run
from tests.helpers import render_chart

pytestmark = pytest.mark.e2e

RUN_TIMEOUT = 120


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    source = tmp_path_factory.mktemp("stand-in") / "model"
    source.mkdir()
    expected = small_model.make(source)
    folder = tmp_path_factory.mktemp("copy") / "openai" / "gpt-oss-120b"
    code, result, output = small_model.mirror(source, str(folder))
    assert code == 0, output
    return {"folder": folder, "expected": expected, "manifest_sha256": result["manifestSha256"]}


def pvc_job(copy: dict, root: Path):
    values = small_model.values({"modelCache": {"source": "pvc", "existingClaim": "gpt-oss-weights",
                                                "manifestSha256": copy["manifest_sha256"]}})
    job = job_run(root, render_chart(["agg.yaml"], values))
    shutil.copytree(copy["folder"], Path(job.env["MODEL_DIR"]))
    return job


class TestPvcSource:
    def test_should_check_the_copy_and_write_the_marker(self, copy, tmp_path):
        job = pvc_job(copy, tmp_path)

        assert job.run(RUN_TIMEOUT) == 0, job.output()

        assert Path(job.env["MARKER"]).exists()
        assert f"every file matches manifest {copy['manifest_sha256']} (5 files" in job.output()
        assert "downloading" not in job.output() and "pulling" not in job.output()

    def test_should_refuse_a_changed_file_and_leave_the_copy_alone(self, copy, tmp_path):
        job = pvc_job(copy, tmp_path)
        shard = Path(job.env["MODEL_DIR"]) / small_model.BIG
        data = bytearray(shard.read_bytes())
        data[0] ^= 0xFF
        shard.write_bytes(bytes(data))

        assert job.run(RUN_TIMEOUT) != 0

        assert f"{small_model.BIG}: sha256 differs" in job.output(), job.output()
        assert not Path(job.env["MARKER"]).exists()
        assert shard.read_bytes() == bytes(data), "the check changed the user's copy"
