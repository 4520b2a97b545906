"""Chart.yaml: installable offline and from Git, and consistent with the image it runs."""
import re

import yaml

from tests.helpers import CHART_DIR

CHART = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
VALUES = yaml.safe_load((CHART_DIR / "values.yaml").read_text())


def test_should_take_no_chart_dependencies():
    assert "dependencies" not in CHART
    assert not (CHART_DIR / "charts").exists()
    assert not (CHART_DIR / "Chart.lock").exists()


def test_should_name_the_default_runtime_as_app_version():
    assert CHART["appVersion"] == VALUES["dynamo"]["image"]["tag"] == "1.2.1"


def test_should_be_an_application_chart_for_helm_3_and_later():
    assert CHART["apiVersion"] == "v2"
    assert CHART["type"] == "application"


class TestHelpers:
    """Every named template: gpt-oss.-prefixed, defined once, with a one-line comment and a usage line."""

    DEFINE = re.compile(r"\{\{/\*\n(?P<comment>.*?)\*/\}\}\n\{\{- define \"(?P<name>[^\"]+)\" -\}\}", re.S)

    def test_should_document_and_prefix_every_helper(self):
        problems, names = [], []
        for path in sorted((CHART_DIR / "templates").glob("_*.tpl")):
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
