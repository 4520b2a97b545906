"""A real OCI registry on 127.0.0.1 for the release tests: Debian's docker-registry (Distribution 2.8).

`oci_registry` starts one per session on a free port, plain HTTP, with its config and storage in a temp dir;
where the binary is missing the tests that use it skip, saying why (.ci/run installs it with apt-get).
`chart_archive` is the chart packaged once by python -m ci.release; `release_tool` is that script as a module.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from ci.release import chart as chart_release

# Override with the path of another Distribution 2.x binary.
REGISTRY_BINARY = os.environ.get("GPT_OSS_DOCKER_REGISTRY", "docker-registry")

CONFIG = """\
version: 0.1
log:
  level: error
storage:
  filesystem:
    rootdirectory: {storage}
  delete:
    enabled: true
http:
  addr: 127.0.0.1:{port}
"""


def load_release_tool():
    return chart_release


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Registry:
    port: int
    credentials_file: Path

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def remote(self, path: str = "charts") -> str:
        """oci://127.0.0.1:<port>/<path>: where a chart is pushed; the chart name is appended on pull."""
        return f"oci://{self.host}/{path}"


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="session")
def oci_registry(tmp_path_factory) -> Registry:
    binary = shutil.which(REGISTRY_BINARY)
    if binary is None:
        pytest.skip(f"no OCI registry: {REGISTRY_BINARY} is not installed (Debian: apt-get install docker-registry; "
                    ".ci/run installs it; or set GPT_OSS_DOCKER_REGISTRY)")
    base = tmp_path_factory.mktemp("oci-registry")
    for attempt in range(3):  # another process may take the free port between the probe and the bind
        port = free_port()
        config = base / f"config-{attempt}.yml"
        config.write_text(CONFIG.format(storage=base / "storage", port=port))
        log = base / f"registry-{attempt}.log"
        with log.open("wb") as out:
            process = subprocess.Popen([binary, "serve", str(config)], stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and process.poll() is None and not _answers(port):
            time.sleep(0.1)
        if process.poll() is None and _answers(port):
            break
        process.kill()
        process.wait()
    else:
        pytest.fail(f"{binary} did not answer on 127.0.0.1 after 3 attempts; its log:\n{log.read_text()}")
    yield Registry(port, base / "credentials.json")
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="session")
def release_tool():
    return load_release_tool()


@pytest.fixture(scope="session")
def chart_archive(tmp_path_factory, release_tool) -> Path:
    """The chart as the release workflow packages it."""
    return release_tool.package(tmp_path_factory.mktemp("package"))
