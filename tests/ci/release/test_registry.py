"""Publish to a real OCI registry (Debian's docker-registry on 127.0.0.1): push, pull back, render offline.

The chart archive is ci.release.chart's, pushed and pulled with the Helm SDK; bad input gets a clear error.
"""
from __future__ import annotations

import json
import socket
import urllib.request

import helm_python
import pytest
import yaml

from tests.helpers import CHART_DIR, OVERLAYS, load_values, render_manifests
from tests.helpers.registry import free_port

CHART = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
VERSION = CHART["version"]


@pytest.fixture(scope="session")
def published(oci_registry, release_tool, chart_archive) -> dict:
    """The archive pushed once to oci://127.0.0.1:<port>/charts."""
    return release_tool.push(chart_archive, oci_registry.remote(), plain_http=True,
                             credentials_file=oci_registry.credentials_file)


@pytest.fixture(scope="session")
def pulled(published, oci_registry, release_tool, tmp_path_factory):
    return release_tool.pull(published["ref"], VERSION, tmp_path_factory.mktemp("pulled"), plain_http=True,
                             credentials_file=oci_registry.credentials_file)


class TestPublish:
    def test_should_pull_back_the_archive_it_pushed(self, published, pulled, chart_archive, oci_registry):
        assert published["ref"] == f"oci://127.0.0.1:{oci_registry.port}/charts/gpt-oss"
        assert pulled.name == f"gpt-oss-{VERSION}.tgz"
        assert helm_python.digest(pulled) == helm_python.digest(chart_archive) == published["archive_digest"]
        assert pulled.read_bytes() == chart_archive.read_bytes()

    def test_should_list_the_pushed_version_under_its_manifest_digest(self, published, oci_registry):
        with helm_python.RegistryClient(plain_http=True, credentials_file=oci_registry.credentials_file) as client:
            assert client.tags(published["ref"]) == [VERSION]
            manifest = client.resolve(f"{published['ref']}:{VERSION}")
        assert manifest["digest"] == published["digest"]
        assert manifest["digest"].startswith("sha256:") and len(manifest["digest"]) == len("sha256:") + 64

    def test_should_store_the_archive_as_the_helm_chart_layer(self, published, oci_registry):
        # What Flux's OCIRepository layerSelector in the README selects.
        request = urllib.request.Request(f"http://{oci_registry.host}/v2/charts/gpt-oss/manifests/{VERSION}",
                                         headers={"Accept": "application/vnd.oci.image.manifest.v1+json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            manifest = json.load(response)
        assert manifest["config"]["mediaType"] == "application/vnd.cncf.helm.config.v1+json"
        assert [layer["mediaType"] for layer in manifest["layers"]] == [
            "application/vnd.cncf.helm.chart.content.v1.tar+gzip"]
        assert manifest["layers"][0]["digest"] == published["archive_digest"]

    def test_should_pull_by_the_pinned_digest(self, published, oci_registry, release_tool, tmp_path):
        path = release_tool.pull(published["ref"], VERSION, tmp_path, digest=published["digest"], plain_http=True,
                                 credentials_file=oci_registry.credentials_file)
        assert helm_python.digest(path) == published["archive_digest"]

    @pytest.mark.parametrize("overlay", ["agg.yaml", "trtllm-serve-low-latency.yaml"])
    def test_should_render_the_pulled_chart_offline_with_the_overlay_it_carries(self, pulled, tmp_path, overlay):
        helm_python.expand(tmp_path, pulled)
        chart_dir = tmp_path / "gpt-oss"
        assert sorted(p.name for p in (chart_dir / "values").glob("*.yaml")) == OVERLAYS
        values = yaml.safe_load((chart_dir / "values" / overlay).read_text())

        rendered = helm_python.Chart.load(chart_dir).render(values, name="gpt-oss", namespace="llm", is_install=True)

        # The same manifests as the chart folder with the repository's overlay.
        assert rendered == render_manifests([overlay])
        assert values == load_values([overlay])


def free_port_reading_404() -> int:
    """A port of 40400-40499 that nothing listens on."""
    for port in range(40400, 40500):
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) != 0:
                return port
    pytest.skip("every port of 40400-40499 answers here")


class TestBadInput:
    def test_should_refuse_to_push_a_published_version(self, published, oci_registry, release_tool, chart_archive):
        with pytest.raises(release_tool.ReleaseError) as error:
            release_tool.push(chart_archive, oci_registry.remote(), plain_http=True,
                              credentials_file=oci_registry.credentials_file)
        assert str(error.value) == (
            f"gpt-oss {VERSION} is already published at {published['ref']}: a published version is never "
            "overwritten; bump version in Chart.yaml and add its CHANGELOG.md section")

    def test_should_refuse_a_pull_without_a_version(self, published, release_tool, tmp_path):
        with pytest.raises(release_tool.ReleaseError) as error:
            release_tool.pull(published["ref"], None, tmp_path, plain_http=True)
        assert str(error.value) == (f"{published['ref']}: no version given; pass one (--version X.Y.Z): an unpinned "
                                    "pull takes whatever is newest and cannot be reproduced")
        assert not list(tmp_path.iterdir())

    def test_should_name_the_published_versions_when_the_version_is_missing(self, published, oci_registry,
                                                                             release_tool, tmp_path):
        with pytest.raises(release_tool.ReleaseError) as error:
            release_tool.pull(published["ref"], "9.9.9", tmp_path, plain_http=True,
                              credentials_file=oci_registry.credentials_file)
        assert str(error.value) == f"{published['ref']} has no version 9.9.9; published: {VERSION}"

    def test_should_refuse_a_wrong_digest(self, published, oci_registry, release_tool, tmp_path):
        wrong = "sha256:" + "0" * 64
        with pytest.raises(release_tool.ReleaseError) as error:
            release_tool.pull(published["ref"], VERSION, tmp_path, digest=wrong, plain_http=True,
                              credentials_file=oci_registry.credentials_file)
        message = str(error.value)
        assert message.startswith(f"{published['ref']} {VERSION}: the registry serves a different manifest than "
                                  f"the pinned digest {wrong}: ")
        assert published["digest"] in message
        assert not list(tmp_path.glob("*.tgz"))

    # Any free port, and one whose digits read 404 (a CI run met 40427: the refused connection read as "not found").
    @pytest.mark.parametrize("port", ["any", "reading-404"])
    def test_should_say_which_registry_it_cannot_reach(self, release_tool, chart_archive, tmp_path, port):
        host = f"127.0.0.1:{free_port() if port == 'any' else free_port_reading_404()}"  # nothing listens there
        with pytest.raises(release_tool.ReleaseError) as error:
            release_tool.push(chart_archive, f"oci://{host}/charts", plain_http=True,
                              credentials_file=tmp_path / "credentials.json")
        assert str(error.value).startswith(f"cannot reach the registry {host} (oci://{host}/charts/gpt-oss): ")
        assert "connection refused" in str(error.value)

    def test_should_exit_non_zero_with_the_message_on_the_command_line(self, published, release_tool, capsys):
        code = release_tool.main(["pull", published["ref"], "--plain-http"])
        assert code == 1
        assert capsys.readouterr().err == (f"error: {published['ref']}: no version given; pass one (--version "
                                           "X.Y.Z): an unpinned pull takes whatever is newest and cannot be reproduced\n")
