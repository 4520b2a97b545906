"""python -m ci.cluster crds: the pinned upstream CRDs (ci/cluster/crds.json), fetched from a real HTTP server on 127.0.0.1.

The server is Python's http.server over a mirror laid out like ../shared, made of the copies the tests find
(../shared, GPT_OSS_CRDS_DIR or .cache/crds); a test needing them skips when there are none.
"""
from __future__ import annotations

import functools
import hashlib
import http.server
import json
import re
import shutil
import socket
import subprocess
import sys
import threading

import pytest

from tests.helpers import REPO_ROOT
from tests.helpers.schemas import crd_lookup, load_crds

COMMAND = [sys.executable, "-m", "ci.cluster", "crds"]
LOCK = json.loads((REPO_ROOT / "ci" / "cluster" / "crds.json").read_text())
PINNED = crd_lookup.pinned_crds()
# The CRD of every custom resource the chart renders, and the files the cluster tier and kind-setup.sh install.
RENDERED_KINDS = {("nvidia.com", "DynamoGraphDeployment"), ("nvidia.com", "DynamoGraphDeploymentScalingAdapter"),
                  ("keda.sh", "ScaledObject"), ("gateway.networking.k8s.io", "HTTPRoute"),
                  ("inference.networking.k8s.io", "InferencePool")}
INSTALLED_FILES = {"nvidia.com_dynamographdeployments.yaml", "nvidia.com_dynamographdeploymentscalingadapters.yaml",
                   "keda.sh_scaledobjects.yaml", "keda.sh_triggerauthentications.yaml",
                   "keda.sh_clustertriggerauthentications.yaml", "gateway.networking.k8s.io_httproutes.yaml",
                   "gateway.networking.k8s.io_gateways.yaml", "gateway.networking.k8s.io_gatewayclasses.yaml",
                   "inference.networking.k8s.io_inferencepools.yaml"}


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    """A folder laid out like ../shared (<group>/crds/<file>) holding a copy of every pinned CRD."""
    root = tmp_path_factory.mktemp("mirror")
    for crd in PINNED:
        source = crd_lookup.find_crd_file(crd.name)
        if source is None:
            pytest.skip(crd_lookup.missing_message(crd.name))
        (root / crd.group / "crds").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, root / crd.group / "crds" / crd.name)
    return root


class Server:
    """http.server on 127.0.0.1 in a thread, serving a folder and recording the paths asked for."""

    def __init__(self, root):
        self.requests: list[str] = []
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                server.requests.append(self.path)
                super().do_GET()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                     functools.partial(Handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve():
    servers = []

    def start(root) -> Server:
        servers.append(Server(root))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def fetch(*args: str, shared=None) -> subprocess.CompletedProcess:
    """The command, with no ../shared (or with `shared` as it) and no GPT_OSS_CRDS_DIR: what it must fetch itself."""
    env = {"PATH": "/usr/bin:/bin", "GPT_OSS_SHARED_DIR": str(shared or REPO_ROOT / "no-shared-folder")}
    return subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT, env=env)


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class TestPinnedList:
    def test_should_pin_every_url_at_a_commit_with_a_sha256(self):
        for source in LOCK["sources"]:
            assert re.fullmatch(r"[0-9a-f]{40}", source["commit"]), source["group"]
            owner_repo = source["repository"].removeprefix("https://github.com/")
            for pinned in source["files"]:
                assert pinned["url"] == (f"https://raw.githubusercontent.com/{owner_repo}/{source['commit']}/"
                                         f"{source['path']}/{pinned['name']}")
                assert re.fullmatch(r"[0-9a-f]{64}", pinned["sha256"]), pinned["name"]

    def test_should_pin_the_commits_the_shared_sources_name(self, shared_dir):
        for source in LOCK["sources"]:
            assert source["commit"] in (shared_dir / source["group"] / "crds" / "SOURCE.md").read_text()

    def test_should_pin_every_crd_file_the_tests_install(self):
        assert INSTALLED_FILES <= {crd.name for crd in PINNED}
        dynamo = {crd.name for crd in PINNED if crd.group == "dynamo"}
        # ci/cluster/kind-setup.sh applies every nvidia.com_*.yaml, as the operator's crd-apply does.
        assert len(dynamo) == 7 and all(name.startswith("nvidia.com_") for name in dynamo)

    def test_should_hold_the_crd_of_every_custom_resource_the_chart_renders(self, mirror):
        folders = tuple(mirror / group / "crds" for group in crd_lookup.groups())
        assert RENDERED_KINDS <= set(load_crds(folders))

    def test_should_match_the_shared_copies_byte_for_byte(self, shared_dir):
        for crd in PINNED:
            assert sha256(shared_dir / crd.group / "crds" / crd.name) == crd.sha256, crd.name


class TestFetch:
    def test_should_fetch_and_verify_every_pinned_crd(self, mirror, serve, tmp_path):
        server = serve(mirror)
        result = fetch("--dest", str(tmp_path / "crds"), "--base-url", server.url)
        assert result.returncode == 0, result.stderr
        assert result.stderr == ""
        assert {path.name: sha256(path) for path in (tmp_path / "crds").iterdir()} == {
            crd.name: crd.sha256 for crd in PINNED}
        assert sorted(server.requests) == sorted(f"/{crd.group}/crds/{crd.name}" for crd in PINNED)
        lines = result.stdout.splitlines()
        assert f"fetched nvidia.com_dynamographdeployments.yaml (1625819 bytes, sha256 055d7331cfbf...) from " \
               f"{server.url}/dynamo/crds/nvidia.com_dynamographdeployments.yaml" in lines
        assert f"17 of 17 pinned CRDs in {tmp_path / 'crds'}: 17 fetched, 0 already there" in lines
        assert f"the tests read them with GPT_OSS_CRDS_DIR={tmp_path / 'crds'}" in lines

    def test_should_keep_verified_files_without_asking_again(self, mirror, serve, tmp_path):
        server = serve(mirror)
        assert fetch("--dest", str(tmp_path), "--base-url", server.url).returncode == 0
        server.requests.clear()
        (tmp_path / "keda.sh_scaledobjects.yaml").write_text("damaged\n")
        result = fetch("--dest", str(tmp_path), "--base-url", server.url)
        assert result.returncode == 0, result.stderr
        assert server.requests == ["/keda/crds/keda.sh_scaledobjects.yaml"]
        assert f"17 of 17 pinned CRDs in {tmp_path}: 1 fetched, 16 already there" in result.stdout.splitlines()

    def test_should_refuse_a_tampered_file(self, mirror, serve, tmp_path):
        tampered = tmp_path / "mirror"
        shutil.copytree(mirror, tampered)
        route = tampered / "gateway-api" / "crds" / "gateway.networking.k8s.io_httproutes.yaml"
        route.write_text(route.read_text().replace("maxItems: 16", "maxItems: 64", 1))
        expected = next(crd.sha256 for crd in PINNED if crd.name == route.name)
        server = serve(tampered)
        result = fetch("--dest", str(tmp_path / "crds"), "--base-url", server.url)
        assert result.returncode == 1
        assert result.stderr.splitlines() == [
            f"error: gateway.networking.k8s.io_httproutes.yaml: sha256 {sha256(route)} does not match the pinned "
            f"{expected} (ci/cluster/crds.json); refused, not written (from {server.url}/gateway-api/crds/{route.name})"]
        assert not (tmp_path / "crds" / route.name).exists()
        assert len(list((tmp_path / "crds").iterdir())) == 16
        assert f"16 of 17 pinned CRDs in {tmp_path / 'crds'}: 16 fetched, 0 already there, 1 refused" \
               in result.stdout.splitlines()

    def test_should_say_in_one_line_when_the_server_is_unreachable(self, tmp_path):
        with socket.socket() as sock:  # a port nothing listens on
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        result = fetch("--dest", str(tmp_path), "--base-url", f"http://127.0.0.1:{port}", "--timeout", "5")
        assert result.returncode == 1
        assert result.stderr.splitlines() == [
            f"error: cannot fetch http://127.0.0.1:{port}/dynamo/crds/nvidia.com_dynamocheckpoints.yaml: "
            "[Errno 111] Connection refused"]
        assert list(tmp_path.iterdir()) == []

    def test_should_name_the_http_status_of_a_missing_file(self, serve, tmp_path):
        server = serve(tmp_path)
        result = fetch("--dest", str(tmp_path / "crds"), "--base-url", server.url)
        assert result.returncode == 1
        assert result.stderr.splitlines() == [
            f"error: cannot fetch {server.url}/dynamo/crds/nvidia.com_dynamocheckpoints.yaml: HTTP 404 File not found"]


class TestSharedFolder:
    """A plain clone with ../shared beside it (the README's set-up): nothing to download, every copy checked."""

    def test_should_verify_the_shared_copies_and_fetch_nothing(self, mirror, tmp_path):
        unreachable = "http://127.0.0.1:9"  # discard: a download would fail the run
        result = fetch("--dest", str(tmp_path / "crds"), "--base-url", unreachable, shared=mirror)
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines() == [
            f"17 of 17 pinned CRDs ready: 17 verified where the tests read them first (7 in {mirror}/dynamo/crds, 3 in "
            f"{mirror}/keda/crds, 6 in {mirror}/gateway-api/crds, 1 in {mirror}/gateway-api-inference-extension/crds), "
            f"0 fetched into {tmp_path / 'crds'}, 0 already there"]
        assert list((tmp_path / "crds").iterdir()) == []

    def test_should_fetch_only_what_the_shared_folder_lacks(self, mirror, serve, tmp_path):
        shared = tmp_path / "shared"
        shutil.copytree(mirror, shared)
        (shared / "keda" / "crds" / "keda.sh_scaledobjects.yaml").unlink()
        server = serve(mirror)
        result = fetch("--dest", str(tmp_path / "crds"), "--base-url", server.url, shared=shared)
        assert result.returncode == 0, result.stderr
        assert server.requests == ["/keda/crds/keda.sh_scaledobjects.yaml"]
        assert [p.name for p in (tmp_path / "crds").iterdir()] == ["keda.sh_scaledobjects.yaml"]

    def test_should_refuse_a_shared_copy_that_differs_from_its_pin(self, mirror, tmp_path):
        shared = tmp_path / "shared"
        shutil.copytree(mirror, shared)
        route = shared / "gateway-api" / "crds" / "gateway.networking.k8s.io_httproutes.yaml"
        route.write_text(route.read_text().replace("maxItems: 16", "maxItems: 64", 1))
        result = fetch("--dest", str(tmp_path / "crds"), "--base-url", "http://127.0.0.1:9", shared=shared)
        assert result.returncode == 1
        assert result.stderr.startswith(f"error: {route}: sha256 {sha256(route)} does not match the pinned "), result.stderr
        assert "tests read it before any fetched copy" in result.stderr


class TestWhere:
    def test_should_print_where_the_tests_find_a_crd(self, mirror, tmp_path):
        env = {"PATH": "/usr/bin:/bin", "GPT_OSS_SHARED_DIR": str(tmp_path / "none"),
               "GPT_OSS_CRDS_DIR": str(mirror / "keda" / "crds")}
        result = subprocess.run([*COMMAND, "--where", "keda.sh_scaledobjects.yaml"], capture_output=True, text=True,
                                env=env, cwd=REPO_ROOT)
        assert (result.returncode, result.stdout) == (0, f"{mirror / 'keda' / 'crds' / 'keda.sh_scaledobjects.yaml'}\n")

    def test_should_name_the_folders_searched_and_the_fix(self, tmp_path):
        env = {"PATH": "/usr/bin:/bin", "GPT_OSS_SHARED_DIR": str(tmp_path), "GPT_OSS_CRDS_DIR": str(tmp_path / "a")}
        result = subprocess.run([*COMMAND, "--where", "nope.yaml"], capture_output=True, text=True, env=env,
                                cwd=REPO_ROOT)
        assert result.returncode == 1
        assert result.stderr == (
            f"error: no nope.yaml in {tmp_path}/dynamo/crds, {tmp_path}/keda/crds, {tmp_path}/gateway-api/crds, "
            f"{tmp_path}/gateway-api-inference-extension/crds, {tmp_path}/a, {REPO_ROOT}/.cache/crds: run "
            "`python -m ci.cluster crds` (downloads the pinned upstream CRDs into .cache/crds), or set "
            "GPT_OSS_SHARED_DIR to the shared reference folder or GPT_OSS_CRDS_DIR to folders of CRD files\n")
