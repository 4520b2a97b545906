"""The value docs: one annotated schema (values.schema.yaml) generates values.schema.json, the values.yaml comments
and the chart README's values reference, and the check fails when any of them drifted. Then the docs pages."""
from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ci.generate import schema as gen
from tests.helpers import CHART_DIR, REPO_ROOT
from tools.gptoss.yaml_text import load_yaml

SOURCE = load_yaml((CHART_DIR / "values.schema.yaml").read_text())
DEFAULTS = load_yaml((CHART_DIR / "values.yaml").read_text())
GENERATED = ["values.schema.json", "values.yaml", "README.md"]


def chart_copy(tmp_path):
    """The source and the generated files in tmp_path, to drift without touching the chart."""
    for name in ["values.schema.yaml", *GENERATED]:
        shutil.copy(CHART_DIR / name, tmp_path / name)
    return tmp_path


class TestGeneratedValueDocs:
    def test_should_pass_the_check_as_ci_runs_it(self):
        run = subprocess.run([sys.executable, "-m", "ci.generate", "schema", "--check"], cwd=REPO_ROOT, capture_output=True,
                             text=True, timeout=60)
        assert (run.returncode, run.stderr) == (0, "")

    # One edit per file, each by hand where the generator would not make it.
    @pytest.mark.parametrize("name,old,new", [
        ("values.schema.json", '"minimum": 1', '"minimum": 0'),
        ("values.yaml", "# Hugging Face repository id", "# The Hugging Face repository id"),
        ("README.md", "| `model.id` |", "| `model.idx` |"),
    ])
    def test_should_fail_the_check_on_a_drifted_copy_and_regenerate_it(self, tmp_path, capsys, name, old, new):
        chart = chart_copy(tmp_path)
        text = (chart / name).read_text()
        assert old in text
        (chart / name).write_text(text.replace(old, new, 1))
        assert gen.main(["--check", "--chart", str(chart)]) == 1
        assert capsys.readouterr().err == f"{chart / name}: drifted from values.schema.yaml: run python -m ci.generate schema\n"
        assert gen.main(["--chart", str(chart)]) == 0  # regenerates the copy ...
        assert (chart / name).read_text() == (CHART_DIR / name).read_text()
        assert gen.main(["--check", "--chart", str(chart)]) == 0  # ... which is then current

    def test_should_name_every_generated_file_when_a_description_changes_in_the_source(self, tmp_path, capsys):
        chart = chart_copy(tmp_path)
        source = (chart / "values.schema.yaml").read_text()
        old = "description: Hugging Face repository id; also the served model name"
        assert old in source
        (chart / "values.schema.yaml").write_text(source.replace(old, old.replace("Hugging Face", "Hub"), 1))
        assert gen.main(["--check", "--chart", str(chart)]) == 1
        assert [line.split(":")[0] for line in capsys.readouterr().err.splitlines()] == [
            str(chart / name) for name in GENERATED]

    def test_should_refuse_a_key_without_description_and_a_loose_object(self, tmp_path, capsys):
        chart = chart_copy(tmp_path)
        schema = copy.deepcopy(SOURCE)
        pod_monitor = schema["properties"]["monitoring"]["properties"]["podMonitor"]
        del pod_monitor["properties"]["interval"]["description"]
        del pod_monitor["additionalProperties"]
        del schema["properties"]["workers"]["properties"]["componentFields"]["additionalProperties"]
        (chart / "values.schema.yaml").write_text(yaml.safe_dump(schema, sort_keys=False))
        assert gen.main(["--check", "--chart", str(chart)]) == 2
        assert capsys.readouterr().err == (
            "error: values.schema.yaml:\n"
            "  workers.componentFields: a free-form map must declare additionalProperties (true or a schema)\n"
            "  monitoring.podMonitor: an object with properties needs additionalProperties: false\n"
            "  monitoring.podMonitor.interval: no description\n")

    def test_should_list_every_schema_leaf_once(self):
        table = gen.render(SOURCE, DEFAULTS)
        for path, _ in gen.leaves(SOURCE):
            assert table.count(f"| `{path}` |") == 1, f"{path} is not in the values reference once"

    def test_should_show_defaults_from_values_yaml_and_enums_from_the_schema(self):
        row = next(line for line in gen.render(SOURCE, DEFAULTS).splitlines() if line.startswith("| `gpu.type` |"))
        assert '| `"GB200"` |' in row
        assert 'one of `"GB200"`, `"B200"`, `"H200"`, `"H100"`' in row

    def test_should_touch_only_the_text_between_the_markers(self):
        readme = "intro\n<!-- values-reference:start -->\nold\n<!-- values-reference:end -->\noutro\n"
        assert gen.updated_readme(readme, "new") == (
            "intro\n<!-- values-reference:start -->\nnew\n<!-- values-reference:end -->\noutro\n")


class TestPort:
    """--port: what another branch's values.schema.json adds or changes, as YAML to paste into the source."""

    def test_should_find_nothing_to_port_from_the_generated_json(self):
        assert gen.port(json.loads((CHART_DIR / "values.schema.json").read_text()), SOURCE) == []

    def test_should_print_an_added_key_as_source_yaml_and_name_changed_and_missing_keys(self):
        other = json.loads((CHART_DIR / "values.schema.json").read_text())
        dynamo = other["properties"]["dynamo"]["properties"]
        added = {"type": "string", "description": "A channel: beta, say.", "enum": ["", "beta"]}
        dynamo["channel"] = added
        dynamo["image"]["properties"]["tag"]["minLength"] = 2
        del other["properties"]["gpu"]["properties"]["perNode"]
        lines = gen.port(other, SOURCE)
        start = lines.index("# dynamo.channel: only in the other schema; under dynamo's properties:")
        assert lines[start + 1:start + 6] == ["      channel:", "        type: string", "        description: >-",
                                              "          A channel: beta, say.", '        enum: ["", beta]']
        assert yaml.safe_load("\n".join(lines[start + 1:start + 6])) == {"channel": added}
        assert "# dynamo.image.tag: keywords differ" in lines
        assert "# gpu.perNode: only here" in lines

    def test_should_write_the_whole_source_back_as_the_same_schema(self):
        assert load_yaml("\n".join(gen.to_yaml(SOURCE))) == SOURCE


class TestValuesComments:
    """values.yaml: the comment directly above a key is its description; other comments and the values stay."""

    SCHEMA = {"type": "object", "additionalProperties": False, "properties": {
        "a": {"type": "object", "description": "The a block.", "additionalProperties": False, "properties": {
            "b": {"type": "integer", "description": "How many bs."},
            "labels": {"type": "object", "description": "Free-form labels.", "additionalProperties": True}}},
        "c": {"type": "array", "description": " ".join(["word"] * 30)}}}

    def test_should_replace_the_comment_above_each_key_and_keep_the_rest(self):
        values = ("# A header, set apart by a blank line.\n\n"
                  "# an old, hand-written description\na:\n  b: 1  # kept\n  labels:\n    # a note inside a value\n"
                  "    team: x\n\n# A section note.\n\nc:\n  - one\n")
        assert gen.annotate(values, self.SCHEMA) == (
            "# A header, set apart by a blank line.\n\n"
            "# The a block.\na:\n  # How many bs.\n  b: 1  # kept\n  # Free-form labels.\n  labels:\n"
            "    # a note inside a value\n    team: x\n\n# A section note.\n\n"
            # 30 words of 4 letters: 23 fill a comment line of 118 characters at most (116 after "# "), 7 are left.
            f"# {' '.join(['word'] * 23)}\n# {' '.join(['word'] * 7)}\nc:\n  - one\n")

    def test_should_refuse_a_key_the_schema_does_not_have(self):
        with pytest.raises(gen.SchemaError, match=r"values.yaml line 2: a.bogus is not in values.schema.yaml"):
            gen.annotate("a:\n  bogus: 1\n", self.SCHEMA)

    def test_should_leave_the_chart_values_unchanged(self):
        before = (CHART_DIR / "values.yaml").read_text()
        assert load_yaml(gen.annotate(before, SOURCE)) == DEFAULTS

    def test_should_keep_every_comment_line_within_yamllint_width(self):
        lines = (CHART_DIR / "values.yaml").read_text().splitlines()
        assert [line for line in lines if len(line) > 120] == []


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

    def test_should_tell_a_new_user_where_the_shared_files_the_linting_and_helm_are(self, monkeypatch):
        # A plain clone with ../shared beside it (issue 46): the README names the folder and its variable, the CRD
        # fetch that then downloads nothing (tests/ci/cluster/test_crds.py, TestSharedFolder), the linting CI runs, and
        # where `python -m ci.cluster go-parts build helm` puts helm, the way go_parts computes it.
        from ci.cluster import go_parts
        text = README.read_text()
        setup = text[text.index("## Quick start"):text.index("## Install")]
        for needed in ("`../shared`", "`GPT_OSS_SHARED_DIR`", "-m ci.cluster crds", "bash ci/lint.sh"):
            assert needed in setup, needed
        monkeypatch.delenv("GPT_OSS_GO_CACHE", raising=False)
        where = go_parts.bin_dir("helm")
        assert where.parent.name.startswith("helm-") and where.name == "bin"
        said = f"`{where.parent.parent.as_posix().replace(str(Path.home()), '~')}/helm-<key>/bin/helm`"
        assert said in text
        assert 'export PATH="$(python3 -m ci.cluster go-parts where helm):$PATH"' in text

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


class TestNetworkPolicyPathsDoc:
    def test_should_list_every_path_the_policy_tests_try_as_they_expect_it(self):
        """docs/security.md's table of paths is the node tests' PATHS: a changed expectation changes both."""
        from tests.cluster.test_node_policies import PATHS
        text = (REPO_ROOT / "docs" / "security.md").read_text()
        rows = re.findall(r"^\| `([a-z0-9-]+)` \|[^|\n]*\|[^|\n]*\| \**(open|closed)\** \|", text, re.M)
        assert dict(rows) == {p.id: "open" if p.open else "closed" for p in PATHS}
        assert len(rows) == len(PATHS)
