"""Chart.yaml: installable offline and from Git, and consistent with the image it runs."""
import json
import re

import pytest


from ci.generate import chart_json
from tests.helpers import CHART_DIR, REPO_ROOT, find, render_chart, template_defines
from tools.gptoss.yaml_text import load_yaml

CHART = load_yaml((CHART_DIR / "Chart.yaml").read_text())
VALUES = load_yaml((CHART_DIR / "values.yaml").read_text())


def test_should_take_no_chart_dependencies():
    assert "dependencies" not in CHART
    assert not (CHART_DIR / "charts").exists()
    assert not (CHART_DIR / "Chart.lock").exists()


def test_should_name_the_default_runtime_as_app_version():
    # dynamo.image.tag is empty: the default release line's own tag is the one rendered.
    assert VALUES["dynamo"]["image"]["tag"] == ""
    dgd = find(render_chart(["agg.yaml"]), "DynamoGraphDeployment")
    images = {c["podTemplate"]["spec"]["containers"][0]["image"] for c in dgd["spec"]["components"]}
    assert CHART["appVersion"] == "1.7.0" and images == {f"nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:{CHART['appVersion']}"}


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


class TestJsonHelpers:
    """What a helper builds passes as JSON (Helm parses it several times faster than YAML, in every render)."""

    @staticmethod
    def is_json(body: str) -> bool:
        try:
            json.loads(body)
        except ValueError:
            return False
        return True

    def test_should_read_a_helper_that_writes_json_as_json(self):
        bodies = template_defines("_*.tpl")
        json_helpers = [name for name, body in bodies.items()
                        if body.splitlines()[-1].startswith("{{- toJson ") or self.is_json(body)]
        assert len(json_helpers) >= 22 and "gpt-oss.roleTable" in json_helpers, json_helpers
        texts = "\n".join(path.read_text() for path in (CHART_DIR / "templates").rglob("*") if path.is_file())
        memo_of = {re.search(r'gpt-oss\.memo" \(list "([^"]+)"', body)[1]: name for name, body in bodies.items()
                   if 'include "gpt-oss.memo"' in body}
        read_as_yaml = [name for name in json_helpers for reader in (name, memo_of.get(name))
                        if reader and re.search(rf'include "{re.escape(reader)}" [^|}}]*\| fromYaml', texts)]
        # the printf-named tables too (gpt-oss.trtllmKeys.<release>)
        read_as_yaml += re.findall(r'include \(printf "gpt-oss\.trtllmKey[^"]*"[^|}]*\| fromYaml', texts)
        assert read_as_yaml == []

    def test_should_write_the_generated_tables_as_json(self):
        bodies = template_defines("_*.tpl")
        tables = [name for name in bodies if name.startswith(("gpt-oss.trtllmKey", "gpt-oss.sizingTables"))]
        assert len(tables) == 13  # the sizing tables; the key index; per release (5) its keys and history; shared
        for name in tables:
            assert isinstance(json.loads(bodies[name]), dict), name

    def test_should_write_a_table_that_reads_back_as_given(self):
        table = {"order": ["1.2.0", "1.3.0rc14"], "gpus": {"GB200": {"prefill": [{"isl": 1024, "tps": 36016.5}]}},
                 "empty": {}, "none": [], "words": 'a "quoted" word'}
        text = chart_json(table)
        assert json.loads(text) == table
        assert '\n        {"isl": 1024, "tps": 36016.5}\n' in text  # a list of objects: one per line

    def test_should_refuse_a_table_that_would_open_a_template_action(self):
        with pytest.raises(ValueError, match="template action"):
            chart_json({"words": "a {{ word }}"})


class TestLayout:
    """Templates one folder per component (docs/contributing.md), with what every component shares on top."""

    SHARED = ["NOTES.txt", "_checkov.tpl", "_helpers.tpl", "_plan-document.tpl", "_plan-gpu.tpl", "_plan-shutdown.tpl",
              "_plan-warnings.tpl", "_plan.tpl", "_sizing-tables.tpl"]

    def test_should_keep_only_shared_templates_on_top(self):
        assert sorted(p.name for p in (CHART_DIR / "templates").iterdir() if p.is_file()) == self.SHARED

    def test_should_document_every_component_folder(self):
        folders = sorted(p.name for p in (CHART_DIR / "templates").iterdir() if p.is_dir())
        documented = re.findall(r"^\| `([a-z-]+)/` \|", (REPO_ROOT / "docs" / "contributing.md").read_text(), re.M)
        assert folders == sorted(documented) == [
            "autoscaling", "benchmark", "disruption", "dynamo", "endpoint-picker", "engine", "exposure", "model-cache",
            "monitoring", "plan", "planner", "scripts", "smoke-test", "trtllm-serve", "validation"]

    def test_should_keep_one_folder_level_with_templates_in_each(self):
        for folder in (p for p in (CHART_DIR / "templates").iterdir() if p.is_dir()):
            assert list(folder.glob("*.yaml")), f"{folder.name}/ has no template"
            assert not [p for p in folder.iterdir() if p.is_dir()], f"{folder.name}/ has a folder: one level only"

    def test_should_name_each_template_component_slash_kind(self):
        # docs/contributing.md: <component>/<kind>.yaml, the kind in lower case; check-values.yaml renders no object.
        misnamed = {}
        for path in sorted((CHART_DIR / "templates").glob("*/*.yaml")):
            kinds = set(re.findall(r"^kind: (\w+)$", path.read_text(), re.M))
            if path.name != "check-values.yaml" and {kind.lower() for kind in kinds} != {path.stem}:
                misnamed[path.relative_to(CHART_DIR).as_posix()] = sorted(kinds)
        assert misnamed == {}

    def test_should_name_each_validation_file_after_the_concern_it_defines(self):
        # _check-<concern>.tpl defines gpt-oss.checkValues.<concern> (camelCase), and no other concern.
        misnamed = {}
        for path in sorted((CHART_DIR / "templates" / "validation").glob("_check-*.tpl")):
            concern = re.sub(r"-(\w)", lambda m: m.group(1).upper(), path.stem.removeprefix("_check-"))
            defined = re.findall(r'\{\{- define "gpt-oss\.checkValues\.(\w+)" -\}\}', path.read_text())
            if path.name != "_check-values.tpl" and defined != [concern]:
                misnamed[path.name] = defined
        assert misnamed == {}


class TestTemplateLines:
    """Every hand-written template line fits 160 characters (a long message is split with print "..." "...", a long
    text line with a {{/* */}} joiner, which renders nothing); the generated files are the generators' to wrap."""
    LIMIT = 160
    GENERATED = re.compile(r"Generated by python -m ci\.generate [\w-]+\b[^\n]*; do not edit")

    def templates(self) -> dict[str, str]:
        return {path.relative_to(CHART_DIR).as_posix(): path.read_text()
                for path in sorted((CHART_DIR / "templates").rglob("*")) if path.is_file()}

    def test_should_keep_every_hand_written_line_within_160_characters(self):
        long = [f"{name}:{number}: {len(line)} characters" for name, text in self.templates().items()
                if not self.GENERATED.search(text)
                for number, line in enumerate(text.splitlines(), 1) if len(line) > self.LIMIT]
        assert long == []

    def test_should_except_only_the_generated_files(self):
        generated = sorted(name for name, text in self.templates().items() if self.GENERATED.search(text))
        assert generated == ["templates/_sizing-tables.tpl", "templates/dynamo/_dynamo-defaults.tpl",
                             "templates/engine/_trtllm-fields.tpl", "templates/trtllm-serve/_trtllm-serve-options.tpl",
                             "templates/validation/_kubernetes-patterns.tpl"]
