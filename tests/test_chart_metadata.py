"""Chart.yaml: installable offline and from Git, and consistent with the image it runs."""
import re

import yaml

from tests.helpers import CHART_DIR, REPO_ROOT, find, render_chart

CHART = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
VALUES = yaml.safe_load((CHART_DIR / "values.yaml").read_text())


def test_should_take_no_chart_dependencies():
    assert "dependencies" not in CHART
    assert not (CHART_DIR / "charts").exists()
    assert not (CHART_DIR / "Chart.lock").exists()


def test_should_name_the_default_runtime_as_app_version():
    # dynamo.image.tag is empty: the default release line's own tag is the one rendered.
    assert VALUES["dynamo"]["image"]["tag"] == ""
    dgd = find(render_chart(["agg.yaml"]), "DynamoGraphDeployment")
    images = {c["podTemplate"]["spec"]["containers"][0]["image"] for c in dgd["spec"]["components"]}
    assert CHART["appVersion"] == "1.6.1" and images == {f"nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:{CHART['appVersion']}"}


def test_should_be_an_application_chart_for_helm_3_and_later():
    assert CHART["apiVersion"] == "v2"
    assert CHART["type"] == "application"


class TestHelpers:
    """Every named template: gpt-oss.-prefixed, defined once, with a one-line comment and a usage line."""

    DEFINE = re.compile(r"\{\{/\*\n(?P<comment>.*?)\*/\}\}\n\{\{- define \"(?P<name>[^\"]+)\" -\}\}", re.S)

    def test_should_document_and_prefix_every_helper(self):
        problems, names = [], []
        for path in sorted((CHART_DIR / "templates").rglob("_*.tpl")):
            text = path.read_text()
            found = self.DEFINE.findall(text)
            assert len(found) == text.count("{{- define "), f"{path.name}: a define without its comment block"
            for comment, name in found:
                names.append(name)
                lines = comment.strip().splitlines()
                if not name.startswith("gpt-oss."):
                    problems.append(f"{path.name}: {name} lacks the gpt-oss. prefix")
                if not lines or lines[0].startswith("Usage:"):
                    problems.append(f"{path.name}: {name} has no comment")
                if not any(line.startswith("Usage: ") and name in line for line in lines):
                    problems.append(f"{path.name}: {name} has no usage line")
        assert not problems, problems
        assert len(names) == len(set(names)), "a helper is defined twice"
        assert len(names) >= 30


class TestLayout:
    """Templates one folder per component (docs/contributing.md), with what every component shares on top."""

    SHARED = ["NOTES.txt", "_checkov.tpl", "_helpers.tpl", "_plan.tpl", "_sizing-tables.tpl", "configmap-plan.yaml",
              "configmap-scripts.yaml"]

    def test_should_keep_only_shared_templates_on_top(self):
        assert sorted(p.name for p in (CHART_DIR / "templates").iterdir() if p.is_file()) == self.SHARED

    def test_should_document_every_component_folder(self):
        folders = sorted(p.name for p in (CHART_DIR / "templates").iterdir() if p.is_dir())
        documented = re.findall(r"^\| `([a-z-]+)/` \|", (REPO_ROOT / "docs" / "contributing.md").read_text(), re.M)
        assert folders == sorted(documented) == [
            "autoscaling", "disruption", "dynamo", "endpoint-picker", "engine", "exposure", "model-cache",
            "monitoring", "planner", "tests", "trtllm-serve", "validation"]

    def test_should_keep_each_components_helpers_beside_its_templates(self):
        for folder in (p for p in (CHART_DIR / "templates").iterdir() if p.is_dir() and p.name != "tests"):
            assert list(folder.glob("_*.tpl")), f"{folder.name}/ has no _<concern>.tpl"
            assert list(folder.glob("*.yaml")), f"{folder.name}/ has no template"
