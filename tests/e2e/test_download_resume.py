"""e2e tier: the model-download Job's script, interrupted for real, resumes; its marker comes only at the end.

The script is the one the chart renders into its scripts ConfigMap, run with the environment the download
Job renders (tests/e2e/model_job.py), against tests/e2e/fake_hub.py on 127.0.0.1 (HF_ENDPOINT): a fake
revision of the model repo with one large LFS file served slowly, a small config file, and files
IGNORE_PATTERNS must skip. It runs with the packages of the Job's image (images/model-fetch/requirements.txt,
which requirements-e2e.txt installs): nothing is installed at start. Only the endpoints differ from the Job:
HF_ENDPOINT and the vocabulary URL point at the fake hub.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import signal
import time
from pathlib import Path

import pytest

from tests.e2e.fake_hub import FakeHub, RepoFile
from tests.e2e.model_job import job_run
from tests.helpers import render_chart

# heavy: its seconds in CI's cluster plane (python -m ci.cluster timings), so that pytest-xdist starts it before the
# quick files and it does not run last while the other workers idle (tests/conftest.py)
pytestmark = [pytest.mark.e2e, pytest.mark.heavy(20)]

OVERLAY = "agg.yaml"
BIG = "model-00000-of-00001.safetensors"
BIG_SIZE = 24 * 1024 * 1024  # more than huggingface_hub's 10 MiB read size, so part of it reaches the disk
VOCABULARY = b"fake harmony vocabulary\n"
RUN_TIMEOUT = 120


@pytest.fixture(scope="module", autouse=True)
def image_packages():
    if importlib.util.find_spec("huggingface_hub") is None:
        pytest.skip("huggingface_hub (images/model-fetch/requirements.txt) is not installed: "
                    "pip install -r requirements-e2e.txt")


class Download:
    """The Job's script in a scratch cache folder, against a fake hub."""

    def __init__(self, root: Path, hub_url: str, hub: FakeHub, values: dict | None = None):
        self.hub = hub
        objects = render_chart([OVERLAY], values)
        probe = job_run(root / "probe", objects)
        url = probe.env["TIKTOKEN_URL"]
        self.run_ = job_run(root, objects, env={
            "TIKTOKEN_URL": f"{hub_url}/tiktoken/{Path(url).name}",
            "TIKTOKEN_SHA256": hashlib.sha256(VOCABULARY).hexdigest(),
            "HF_ENDPOINT": hub_url, "HF_HUB_DISABLE_TELEMETRY": "1", "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1",
        })
        self.env = self.run_.env
        self.model_dir = Path(self.env["MODEL_DIR"])
        self.marker = Path(self.env["MARKER"])

    def start(self):
        return self.run_.start()

    def output(self) -> str:
        return self.run_.output()

    def partial(self) -> list[Path]:
        """The big file's partial files a run leaves (the script's, beside the copy in .cache/). Only the big
        file's: config.json's 26 bytes sit in a partial of their own for a moment, and a kill then resumed nothing
        of the big file."""
        if not self.model_dir.exists():
            return []
        return list((self.model_dir / ".cache").rglob(f"{BIG}.partial"))

    def run_watching(self) -> tuple[int, list[tuple[bool, int]]]:
        """Run to the end; sample (marker exists, size of the big file in place) until it exits."""
        process = self.start()
        samples = []
        deadline = time.monotonic() + RUN_TIMEOUT
        while process.poll() is None and time.monotonic() < deadline:
            big = self.model_dir / BIG
            samples.append((self.marker.exists(), big.stat().st_size if big.exists() else -1))
            time.sleep(0.02)
        if process.poll() is None:
            process.kill()
        return process.wait(), samples


def fake_repo() -> list[RepoFile]:
    big = hashlib.sha256(b"seed").digest() * (BIG_SIZE // 32)
    return [
        RepoFile("config.json", b'{"model_type": "gpt_oss"}\n', lfs=False),
        RepoFile(BIG, big, lfs=True),
        RepoFile("original/model.safetensors", b"x" * 1000, lfs=True),
        RepoFile("metal/model.bin", b"y" * 1000, lfs=True),
    ]


@pytest.fixture
def hub():
    hub = FakeHub("openai/gpt-oss-120b", "b5c939de8f754692c1647ca79fbf85e8c1e70f8a", fake_repo(),
                  extra={"o200k_base.tiktoken": VOCABULARY})
    url = hub.start()
    yield hub, url
    hub.stop()


def big_file_gets(hub: FakeHub) -> list[dict]:
    return [r for r in hub.requests if r["method"] == "GET" and r["path"].endswith("/" + BIG)]


class TestDownloadResume:
    def test_should_resume_an_interrupted_download_and_write_the_marker_only_at_the_end(self, hub, tmp_path):
        hub, url = hub
        download = Download(tmp_path, url, hub)

        # Interrupt: SIGKILL (what a deleted pod ends with) once part of the big file is on the volume.
        first = download.start()
        deadline = time.monotonic() + RUN_TIMEOUT
        while not any(p.stat().st_size > 0 for p in download.partial()):
            assert first.poll() is None, f"the download ended before it could be interrupted:\n{download.output()}"
            assert time.monotonic() < deadline, f"no partial file appeared:\n{download.output()}"
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        first.wait()
        partial = sum(p.stat().st_size for p in download.partial())
        assert 0 < partial < BIG_SIZE
        assert not download.marker.exists(), "the interrupted run left the ready marker"
        assert not (download.model_dir / BIG).exists(), "the interrupted file was put in place as if complete"

        code, samples = download.run_watching()

        assert code == 0, download.output()
        gets = big_file_gets(hub)
        assert gets[-1]["range"] == f"bytes={partial}-", f"the rerun did not resume from {partial}: {gets}"
        assert (download.model_dir / BIG).read_bytes() == hub.file(BIG).content
        assert download.marker.exists()
        early = [s for s in samples if s[0] and s[1] != BIG_SIZE]
        assert not early, f"the marker existed while {BIG} was incomplete: {early[:3]}"
        assert any(not marker for marker, _ in samples), "the rerun never ran without the marker"
        for ignored in ("original/model.safetensors", "metal/model.bin"):
            assert not (download.model_dir / ignored).exists(), f"IGNORE_PATTERNS did not skip {ignored}"
        assert (Path(download.env["TIKTOKEN_DIR"]) / Path(download.env["TIKTOKEN_URL"]).name).read_bytes() == VOCABULARY
        # The copy now carries its manifest: every file with size and sha256, the vocabulary too.
        manifest = json.loads((download.model_dir / "model-manifest.json").read_text())
        assert (manifest["model"], manifest["revision"]) == ("openai/gpt-oss-120b", "b5c939de8f754692c1647ca79fbf85e8c1e70f8a")
        assert {f["path"]: f["size"] for f in manifest["files"]} == {
            "config.json": len(b'{"model_type": "gpt_oss"}\n'), BIG: BIG_SIZE,
            "tiktoken/o200k_base.tiktoken": len(VOCABULARY)}

    def test_should_not_take_a_corrupt_download_for_complete(self, hub, tmp_path):
        hub, url = hub
        hub.rate = 64 * 1024 * 1024
        hub.corrupt = BIG  # right size, wrong bytes: only a hash check tells
        download = Download(tmp_path, url, hub)

        corrupt = download.start().wait(RUN_TIMEOUT)

        assert corrupt != 0, download.output()
        assert f"{BIG}: sha256 differs" in download.output()
        assert not download.marker.exists(), "the marker was written over a corrupt file"
        assert not (download.model_dir / BIG).exists(), "the corrupt file was left for the next run to trust"

        hub.corrupt = None
        code, _ = download.run_watching()

        assert code == 0, download.output()
        assert (download.model_dir / BIG).read_bytes() == hub.file(BIG).content
        assert download.marker.exists()

    def test_should_do_nothing_once_the_marker_exists(self, hub, tmp_path):
        hub, url = hub
        hub.rate = 64 * 1024 * 1024
        download = Download(tmp_path, url, hub)
        assert download.start().wait(RUN_TIMEOUT) == 0, download.output()
        asked = len(hub.requests)

        assert download.start().wait(RUN_TIMEOUT) == 0, download.output()

        assert len(hub.requests) == asked, f"a run after the marker asked the hub: {hub.requests[asked:]}"
        assert "is already complete" in download.output()

    def test_should_check_what_the_xet_client_fetched(self, hub, tmp_path):
        """transfer: xet lets huggingface_hub's snapshot_download fetch first, into a scratch folder; every listed
        file is then checked there before it is published (tests/e2e/test_model_copy_attacks.py: unlisted ones)."""
        hub, url = hub
        hub.rate = 64 * 1024 * 1024
        download = Download(tmp_path, url, hub, {"modelCache": {"download": {"transfer": "xet"}}})
        assert download.env["HF_XET_HIGH_PERFORMANCE"] == "1"

        code, _ = download.run_watching()

        assert code == 0, download.output()
        assert f"{BIG}: fetched by the xet client, checked" in download.output()
        assert not (download.model_dir / ".cache" / "gpt-oss" / "xet").exists(), "the xet scratch folder was left"
        assert len(big_file_gets(hub)) == 1, "the checked file was fetched a second time"
        assert (download.model_dir / BIG).read_bytes() == hub.file(BIG).content
        assert download.marker.exists()

    def test_should_move_the_vocabulary_a_0_2_0_cache_staged(self, hub, tmp_path):
        """0.2.0 staged it in <mountPath>/tiktoken; 0.3.0 reads it in <model dir>/tiktoken: no fetch needed. A 0.2.0
        marker names no manifest, so the copy is checked again (issue 36) and the new marker names it."""
        hub, url = hub
        download = Download(tmp_path, url, hub)
        download.marker.parent.mkdir(parents=True)
        download.marker.write_text('{"model": "openai/gpt-oss-120b"}')
        previous = download.run_.path(download.run_.container["env"][
            [e["name"] for e in download.run_.container["env"]].index("PREVIOUS_TIKTOKEN_FILE")]["value"])
        previous.parent.mkdir(parents=True)
        previous.write_bytes(VOCABULARY)

        assert download.start().wait(RUN_TIMEOUT) == 0, download.output()

        assert (Path(download.env["TIKTOKEN_DIR"]) / "o200k_base.tiktoken").read_bytes() == VOCABULARY
        assert not [r for r in hub.requests if r["path"].startswith("/tiktoken/")], "it fetched the vocabulary again"
        assert "checking the cache again" in download.output()
        written = json.loads(download.marker.read_text())
        assert written["revision"] == "b5c939de8f754692c1647ca79fbf85e8c1e70f8a"
        assert written["manifestSha256"] == hashlib.sha256(
            (download.model_dir / "model-manifest.json").read_bytes()).hexdigest()
