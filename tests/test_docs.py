"""README's values reference: generated from values.schema.json, and fails when stale."""
from __future__ import annotations

import copy
import importlib.util
import json

import pytest
import yaml

from tests.helpers import CHART_DIR, REPO_ROOT

SCHEMA = json.loads((CHART_DIR / "values.schema.json").read_text())
DEFAULTS = yaml.safe_load((CHART_DIR / "values.yaml").read_text())


def load_generator():
    # The script's file name has dashes, so it is loaded by path rather than imported.
    spec = importlib.util.spec_from_file_location("gen_values_reference", REPO_ROOT / "ci" / "gen-values-reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = load_generator()


class TestValuesReference:
    def test_should_match_the_generated_reference(self):
        readme = (REPO_ROOT / "README.md").read_text()
        wanted = gen.updated_readme(readme, gen.render(SCHEMA, DEFAULTS))
        assert readme == wanted, "README.md values reference is stale: run ci/gen-values-reference.py"

    def test_should_exit_1_on_check_when_stale(self, tmp_path, monkeypatch):
        stale = tmp_path / "README.md"
        stale.write_text((REPO_ROOT / "README.md").read_text().replace("| `model.id` |", "| `model.idx` |"))
        monkeypatch.setattr(gen, "README", stale)
        assert gen.main(["--check"]) == 1
        assert gen.main([]) == 0  # regenerates the copy ...
        assert gen.main(["--check"]) == 0  # ... which is then current

    def test_should_list_every_schema_leaf_once(self):
        table = gen.render(SCHEMA, DEFAULTS)
        for path, _ in gen.leaves(SCHEMA):
            assert table.count(f"| `{path}` |") == 1, f"{path} is not in the values reference once"

    def test_should_fail_on_a_leaf_without_description(self):
        schema = copy.deepcopy(SCHEMA)
        del schema["properties"]["monitoring"]["properties"]["podMonitor"]["properties"]["interval"]["description"]
        with pytest.raises(gen.SchemaError, match="monitoring.podMonitor.interval"):
            gen.render(schema, DEFAULTS)

    def test_should_show_defaults_from_values_yaml_and_enums_from_the_schema(self):
        table = gen.render(SCHEMA, DEFAULTS)
        row = next(line for line in table.splitlines() if line.startswith("| `gpu.type` |"))
        assert f'`"{DEFAULTS["gpu"]["type"]}"`' in row
        for value in SCHEMA["properties"]["gpu"]["properties"]["type"]["enum"]:
            assert f'`"{value}"`' in row

    def test_should_touch_only_the_text_between_the_markers(self):
        readme = "intro\n<!-- values-reference:start -->\nold\n<!-- values-reference:end -->\noutro\n"
        assert gen.updated_readme(readme, "new") == (
            "intro\n<!-- values-reference:start -->\nnew\n<!-- values-reference:end -->\noutro\n")
