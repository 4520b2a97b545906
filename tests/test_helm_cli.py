"""The helm CLI users run, built from its pinned module (ci/go/helm), renders what the SDK the tests use renders,
and refuses what it refuses. Skips where the CLI is not built (`python ci/go_parts.py build helm`); CI builds it."""
from __future__ import annotations

import subprocess

import pytest

from ci.gptoss_ci import go_parts as GO_PARTS
from tests.helpers import (CHART_DIR, NAMESPACE, OVERLAYS, RELEASE_NAME, VALUES_DIR, ChartRenderError,
                           render_chart)
from tools.gptoss.yaml_text import load_yaml_all


@pytest.fixture(scope="module")
def helm() -> str:
    folder = GO_PARTS.built("helm")
    if folder is None:
        pytest.skip("the helm CLI is not built: python ci/go_parts.py build helm")
    return str(folder / "helm")


def cli_template(helm: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([helm, "template", RELEASE_NAME, str(CHART_DIR), "-n", NAMESPACE, *args],
                          capture_output=True, text=True, timeout=120)


class TestHelmCli:
    def test_should_be_the_helm_release_the_sdk_binds(self, helm):
        version = subprocess.run([helm, "version", "--template", "{{ .Version }}"], capture_output=True, text=True,
                                 timeout=30, check=True).stdout.strip()
        assert version == "v4.2.3"

    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_render_what_the_sdk_renders(self, helm, overlay):
        result = cli_template(helm, "-f", str(VALUES_DIR / overlay))
        assert result.returncode == 0, result.stderr
        from_cli = [doc for doc in load_yaml_all(result.stdout) if doc]
        from_sdk = render_chart(values_files=[overlay])
        key = lambda doc: (doc["kind"], doc["metadata"]["name"])  # noqa: E731
        assert sorted(from_cli, key=key) == sorted(from_sdk, key=key)

    def test_should_refuse_a_wrong_gpu_type_naming_the_key(self, helm):
        result = cli_template(helm, "-f", str(VALUES_DIR / "agg.yaml"), "--set", "gpu.type=T4")
        assert result.returncode != 0
        with pytest.raises(ChartRenderError) as refused:
            render_chart(values_files=["agg.yaml"], values={"gpu": {"type": "T4"}})
        message = "at '/gpu/type': value must be one of 'GB200', 'B200', 'H200', 'H100'"
        assert message in result.stderr and message in str(refused.value), (result.stderr, str(refused.value))

    def test_should_refuse_a_cross_field_rule_with_the_chart_message(self, helm):
        # A rule of the validation templates (not the schema): a Hub mirror without a pinned manifest.
        endpoint = "modelCache.huggingface.endpoint=https://mirror.example.com"
        result = cli_template(helm, "-f", str(VALUES_DIR / "agg.yaml"), "--set", endpoint)
        assert result.returncode != 0
        with pytest.raises(ChartRenderError) as refused:
            render_chart(values_files=["agg.yaml"],
                         values={"modelCache": {"huggingface": {"endpoint": "https://mirror.example.com"}}})
        assert "modelCache.manifestSha256" in str(refused.value)
        assert "modelCache.manifestSha256" in result.stderr, result.stderr


@pytest.fixture(scope="module")
def argocd_helm() -> str:
    folder = GO_PARTS.built("argocd")
    if folder is None:
        pytest.skip("Argo CD's helm is not built: python ci/go_parts.py build argocd")
    return str(folder / "helm")


class TestArgoCdHelm:
    """Argo CD's repo-server renders with the helm v3 its image ships (ci/go/argocd/helm): the same objects, so an
    Application and a `helm install` of the same values name and shape everything alike."""

    def test_should_be_the_helm_argocd_ships(self, argocd_helm):
        version = subprocess.run([argocd_helm, "version", "--template", "{{ .Version }}"], capture_output=True,
                                 text=True, timeout=30, check=True).stdout.strip()
        assert version == "v3.16.3"

    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_render_what_the_sdk_renders(self, argocd_helm, overlay):
        # Helm 3 kept values.yaml's null defaults as keys, which changed the download Job's hashed name.
        result = cli_template(argocd_helm, "-f", str(VALUES_DIR / overlay))
        assert result.returncode == 0, result.stderr
        from_cli = [doc for doc in load_yaml_all(result.stdout) if doc]
        from_sdk = render_chart(values_files=[overlay])
        key = lambda doc: (doc["kind"], doc["metadata"]["name"])  # noqa: E731
        assert sorted(from_cli, key=key) == sorted(from_sdk, key=key)
