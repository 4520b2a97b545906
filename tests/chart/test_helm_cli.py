"""The helm CLI users run, built from its pinned module (ci/cluster/go/helm), renders what the SDK the tests use renders,
and refuses what it refuses. Skips where the CLI is not built (`python -m ci.cluster go-parts build helm`); CI builds it."""
from __future__ import annotations

import subprocess

import helm_python
import pytest

from ci.cluster import go_parts as GO_PARTS
from tests.helpers import (CHART_DIR, NAMESPACE, OVERLAYS, RELEASE_NAME, VALUES_DIR, ChartRenderError,
                           render_chart)
from tools.gptoss.values import ValuesError, merge_values
from tools.gptoss.yaml_text import load_yaml_all


@pytest.fixture(scope="module")
def helm() -> str:
    folder = GO_PARTS.built("helm")
    if folder is None:
        pytest.skip("the helm CLI is not built: python -m ci.cluster go-parts build helm")
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


# Values as `helm template` merges them (-f files, --set-json, --set, --set-string, --set-file), against
# tools.gptoss.values.merge_values: each case's files (name -> text) and options. A probe chart prints .Values.
MERGE_CASES = {
    "index-into-a-file-list": ({"f.yaml": "hosts: [{host: a, paths: [/]}, {host: b, paths: [/x]}]\n"},
                               ["--set", "hosts[1].host=c"]),
    "nested-keys-and-null": ({"f.yaml": "a: {b: {c: 1, d: [1, 2]}, g: keep}\n"},
                             ["--set", "a.b.d[3]=4,a.g=null", "--set-string", "a.b.c=2"]),
    "empty-maps-lists-and-null-items": ({"f.yaml": "m: {}\nl: []\nn: [null, {x: 1}]\nk: {'': 1, 'a.b,c': 2}\n"},
                                        ["--set", "l[1]=x,m.k=v,n[0][1]=y", "--set-json", "n[1].z=[1]"]),
    "set-json-object-and-pairs": ({"f.yaml": "a: {b: {c: 1, d: 2}}\n"},
                                  ["--set-json", '{"a": {"b": {"c": 9}}}', "--set-json", 'a.b.e={"f":1},a.h=true']),
    "set-file-into-a-list": ({"f.yaml": "hosts: [{host: a}, {host: b}]\n", "host.txt": "from-a-file\n"},
                             ["--set-file", "hosts[0].host={dir}/host.txt,c={dir}/host.txt"]),
    "documents-of-a-file": ({"f.yaml": "---\na: {x: 1}\n--- # two\na: {y: 2}\n---\n"}, []),
    "yaml-1.1-scalars": ({"f.yaml": "y: 1\non: yes\nd: 2024-01-01\n1: x\nb: !!binary aGVsbG8=\n"
                                    "m: {<<: {p: 1}, q: 2}\n"}, []),
    "option-order": ({"f.yaml": "a: 1\n"}, ["--set", "a=2", "--set-string", "a=3", "--set-json", "a=4"]),
    "list-literal-replaces": ({"f.yaml": "a: [1, 2, 3]\n"}, ["--set-string", "a={x,y}"]),
    "key-through-a-string": ({"f.yaml": "a: text\n"}, ["--set", "a.b=1"]),
    "index-through-a-map": ({"f.yaml": "a: {b: 1}\n"}, ["--set", "a[0]=1"]),
}


@pytest.fixture(scope="module")
def probe_chart(tmp_path_factory):
    chart = tmp_path_factory.mktemp("probe")
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: probe\nversion: 0.1.0\n")
    (chart / "templates").mkdir()
    (chart / "templates" / "values.yaml").write_text("kind: Values\nvalues: {{ toJson .Values }}\n")
    return chart


class TestValuesAsTheCliMergesThem:
    @pytest.mark.parametrize("case", MERGE_CASES, ids=list(MERGE_CASES))
    def test_should_merge_values_as_helm_template_does(self, helm, probe_chart, tmp_path, case):
        files, options = MERGE_CASES[case]
        for name, text in files.items():
            (tmp_path / name).write_text(text)
        options = [option.replace("{dir}", str(tmp_path)) for option in options]
        by_cli = subprocess.run([helm, "template", "probe", str(probe_chart), "-f", str(tmp_path / "f.yaml"), *options],
                                capture_output=True, text=True, timeout=120)
        by_kind = {flag: [options[i + 1] for i in range(0, len(options), 2) if options[i] == flag]
                   for flag in ("--set", "--set-string", "--set-json", "--set-file")}
        try:
            values = merge_values([str(tmp_path / "f.yaml")], by_kind["--set-json"], by_kind["--set"],
                                  by_kind["--set-string"], by_kind["--set-file"])
        except ValuesError as error:
            assert by_cli.returncode != 0, f"helm template took what the tools refuse: {error}"
            assert by_cli.stderr == f"Error: {error}\n"
            return
        assert by_cli.returncode == 0, by_cli.stderr
        rendered = helm_python.Chart.load(probe_chart).render(values, name="probe")["probe/templates/values.yaml"]
        assert load_yaml_all(rendered) == load_yaml_all(by_cli.stdout)


@pytest.fixture(scope="module")
def argocd_helm() -> str:
    folder = GO_PARTS.built("argocd")
    if folder is None:
        pytest.skip("Argo CD's helm is not built: python -m ci.cluster go-parts build argocd")
    return str(folder / "helm")


class TestArgoCdHelm:
    """Argo CD's repo-server renders with the helm v4 its image ships (ci/cluster/go/argocd/helm; Argo CD v3.6 runs Helm v4
    only): the same objects, so an Application and a `helm install` of the same values name and shape everything
    alike."""

    def test_should_be_the_helm_argocd_ships(self, argocd_helm):
        version = subprocess.run([argocd_helm, "version", "--template", "{{ .Version }}"], capture_output=True,
                                 text=True, timeout=30, check=True).stdout.strip()
        assert version == "v4.3.2"

    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_render_what_the_sdk_renders(self, argocd_helm, overlay):
        # Helm 3 (Argo CD v2's) kept values.yaml's null defaults as keys, which changed the download Job's hashed name:
        # the chart hashes only the keys that hold a value, whichever Helm renders.
        result = cli_template(argocd_helm, "-f", str(VALUES_DIR / overlay))
        assert result.returncode == 0, result.stderr
        from_cli = [doc for doc in load_yaml_all(result.stdout) if doc]
        from_sdk = render_chart(values_files=[overlay])
        key = lambda doc: (doc["kind"], doc["metadata"]["name"])  # noqa: E731
        assert sorted(from_cli, key=key) == sorted(from_sdk, key=key)
