"""The chart README's values reference: generated from values.schema.json, and fails when stale."""
from __future__ import annotations

import copy
import json
import re
import sys

import pytest
import yaml

from ci.gptoss_ci import gen_values_reference as gen
from tests.helpers import CHART_DIR, REPO_ROOT

SCHEMA = json.loads((CHART_DIR / "values.schema.json").read_text())
DEFAULTS = yaml.safe_load((CHART_DIR / "values.yaml").read_text())




class TestValuesReference:
    def test_should_match_the_generated_reference(self):
        readme = (CHART_DIR / "README.md").read_text()
        wanted = gen.updated_readme(readme, gen.render(SCHEMA, DEFAULTS))
        assert readme == wanted, "charts/gpt-oss/README.md values reference is stale: run ci/gen-values-reference.py"

    def test_should_exit_1_on_check_when_stale(self, tmp_path, monkeypatch):
        stale = tmp_path / "README.md"
        stale.write_text((CHART_DIR / "README.md").read_text().replace("| `model.id` |", "| `model.idx` |"))
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


# --- The README and the docs pages: every relative link resolves, the README stays a quick start ------------------
README = REPO_ROOT / "README.md"
DOC_PAGES = sorted([README, REPO_ROOT / "CHANGELOG.md", *(REPO_ROOT / "docs").glob("*.md"),
                    CHART_DIR / "README.md", REPO_ROOT / "examples" / "argocd" / "README.md"])
DOC_IDS = [str(path.relative_to(REPO_ROOT)) for path in DOC_PAGES]
README_MAX_LINES = 250
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """The text outside fenced code blocks and inline code, where a [x](y) is a link."""
    text = re.sub(r"^```.*?^```[^\n]*$", "", text, flags=re.S | re.M)
    return re.sub(r"`(?:[^`\n]|\n(?!\n))*`", "", text)  # a code span may wrap, but not across a blank line


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, -1, -2 ... for repeats."""
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", re.sub(r"^```.*?^```[^\n]*$", "", text, flags=re.S | re.M),
                              flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower()).replace(" ", "-")
        found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return found


def relative_links(path) -> list[str]:
    return [target for _, target in LINK.findall(prose(path.read_text()))
            if not re.match(r"[a-z][a-z0-9+.-]*:", target)]  # http:, https:, mailto: are not checked here


def broken_links(path) -> list[str]:
    broken = []
    for target in relative_links(path):
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{target}: no {linked.relative_to(REPO_ROOT) if REPO_ROOT in linked.parents else linked}")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text()):
            broken.append(f"{target}: no heading #{anchor} in {linked.relative_to(REPO_ROOT)}")
        elif anchor and linked.suffix != ".md":
            broken.append(f"{target}: an anchor into a file that is not Markdown")
    return broken


class TestDocs:
    @pytest.mark.parametrize("page", DOC_PAGES, ids=DOC_IDS)
    def test_should_resolve_every_relative_link_and_anchor(self, page):
        assert broken_links(page) == []

    def test_should_keep_the_readme_a_quick_start(self):
        assert len(README.read_text().splitlines()) <= README_MAX_LINES

    def test_should_reach_every_docs_page_from_the_readme(self):
        reached, todo = set(), [README.resolve()]
        while todo:
            page = todo.pop()
            if page in reached or page.suffix != ".md" or not page.exists():
                continue
            reached.add(page)
            todo += [(page.parent / t.partition("#")[0]).resolve() for t in relative_links(page) if t.partition("#")[0]]
        assert [str(p.relative_to(REPO_ROOT)) for p in sorted((REPO_ROOT / "docs").glob("*.md"))
                if p.resolve() not in reached] == []

    def test_should_list_every_target_in_the_readme_and_the_chart_readme(self):
        overlays = sorted(path.name for path in (REPO_ROOT / "values").glob("*.yaml"))
        readme_rows = re.findall(r"^\| `values/([^`]+)` \|", README.read_text(), flags=re.M)
        chart_rows = re.findall(r"^\| `([^`]+\.yaml)` \|", (CHART_DIR / "README.md").read_text(), flags=re.M)
        assert sorted(readme_rows) == overlays
        assert sorted(chart_rows) == overlays


class TestLinkChecker:
    """The checker above can fail: a missing file, a missing heading and a link inside code are told apart."""

    def test_should_report_a_missing_file_and_a_missing_anchor(self, tmp_path, monkeypatch):
        monkeypatch.setattr(sys.modules[__name__], "REPO_ROOT", tmp_path)
        (tmp_path / "other.md").write_text("# Other page\n\n## Quantization: what runs\n\n## Notes\n\n## Notes\n")
        page = tmp_path / "page.md"
        page.write_text("[a](other.md#quantization-what-runs) [b](other.md#notes-1) [c](missing.md) "
                        "[d](other.md#nope) [e](#here)\n\n## Here\n\n`[f](missing-in-code.md)`\n\n"
                        "```sh\n[g](missing-in-block.md)\n```\n[h](https://example.com/x.md)\n"
                        "`wrapped [i](missing-in-wrapped-code.md)\nspan`\n")
        assert broken_links(page) == ["missing.md: no missing.md", "other.md#nope: no heading #nope in other.md"]
