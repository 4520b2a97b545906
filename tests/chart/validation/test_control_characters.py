"""Control characters (issue 55, item 6): no string value may carry one, the schema refuses it naming the key, and
NOTES.txt and tools/plan.py escape anything they echo all the same (a value ending in ESC [30;40m hid the chart's own
privileged-pods WARNING)."""
from __future__ import annotations

import json
import re
import shutil

import helm_python
import pytest

from ci.generate import schema as gen_schema
from tests.helpers import CHART_DIR, ChartRenderError, load_values, render_chart
from tools.gptoss import plan as plan_tool
from tools.gptoss.cli import escape_controls
from tools.gptoss.render import NOTES, NAMESPACE, RELEASE_NAME

SCHEMA = json.loads((CHART_DIR / "values.schema.json").read_text())
# What Helm 4 prints for each rule (santhosh-tekuri/jsonschema v6 quotes the value with Go's %q: escapes, not bytes).
SINGLE_LINE_ERROR = r"does not match pattern '^[^\\x00-\\x1f\\x7f-\\x9f]*$'"
TEXT_ERROR = r"does not match pattern '^[^\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f]*$'"
URL_ERROR = "'not' failed"
# Keys where tab and line feed are legitimate: the values of annotation maps, every string inside a free-form map.
MULTI_LINE = {"/modelCache/s3/serviceAccount/annotations/k", "/monitoring/dashboard/annotations/k",
              "/ingress/annotations/k", "/httpRoute/annotations/k"}
URL_POINTERS = {"/" + key.replace(".", "/") for key in gen_schema.URL_KEYS}


def _types(node: dict) -> list:
    kind = node.get("type", [])
    return kind if isinstance(kind, list) else [kind]


def resolved(node):
    """A schema node with its $ref (a Kubernetes type of the definitions, issue 53) followed."""
    while isinstance(node, dict) and "$ref" in node:
        node = SCHEMA["definitions"][node["$ref"].rpartition("/")[2]]
    return node


def string_sites(node: dict, value: str, pointer: str = ""):
    """(values tree, {pointer: kind}) with `value` in every string of the schema: each property, one item of each list,
    one entry ("k") of each map, and a nested string and list item inside each free-form map; kind is "enum", "url",
    "text" (tab and line feed allowed) or "line"."""
    node = resolved(node)
    kinds = _types(node)
    if "string" in kinds and "object" not in kinds:
        kind = ("enum" if "enum" in node else "url" if pointer in URL_POINTERS
                else "own" if gen_schema.admits_no_control(node.get("pattern", "")) else "line")
        return value, {pointer: kind}
    if "array" in kinds and isinstance(node.get("items"), dict):
        item, sites = string_sites(node["items"], value, f"{pointer}/0")
        return ([item], sites) if sites else (None, {})
    tree, sites = {}, {}
    for key, child in (node.get("properties") or {}).items():
        sub, found = string_sites(child, value, f"{pointer}/{key}")
        if found:
            tree[key], sites = sub, {**sites, **found}
    extra = resolved(node.get("additionalProperties"))
    if extra is True:
        tree["k"] = {"n": value, "l": [value]}
        sites.update({f"{pointer}/k/n": "text", f"{pointer}/k/l/0": "text"})
    elif isinstance(extra, dict) and "string" in _types(extra):
        tree["k"] = value
        sites[f"{pointer}/k"] = ("text" if f"{pointer}/k" in MULTI_LINE
                                 else "own" if gen_schema.admits_no_control(extra.get("pattern", "")) else "line")
    return tree, sites


def schema_errors(values: dict) -> dict[str, list[str]]:
    """Helm's schema refusal of `values`, {pointer: [messages]}."""
    with pytest.raises(ChartRenderError) as refused:
        render_chart(values=values, show_only=[])
    found: dict[str, list[str]] = {}
    for match in re.finditer(r"^\s*- at '([^']*)': (.*)$", str(refused.value), re.M):
        found.setdefault(match[1], []).append(match[2])
    return found


class TestSchema:
    # One render per character: every string of the values at once (Helm lists every schema error).
    @pytest.mark.parametrize("character", ["\x1b", "\r", "\n", "\t", "\x00", "\x7f", "\x9b"],
                             ids=["escape", "carriage-return", "line-feed", "tab", "nul", "delete", "c1-csi"])
    def test_should_refuse_a_control_character_in_every_string_naming_the_key(self, character):
        values, sites = string_sites(SCHEMA, f"x{character}[30;40m")
        assert len(sites) > 190 and "/model/id" in sites and "/workers/componentFields/k/n" in sites
        errors = schema_errors(values)
        wrong = {}
        for pointer, kind in sites.items():
            messages = " | ".join(errors.get(pointer, []))
            if kind == "text" and character in "\t\n":
                ok = TEXT_ERROR not in messages and SINGLE_LINE_ERROR not in messages
            elif kind == "enum":
                ok = "value must be one of" in messages or "value must be '" in messages  # one value: no "one of"
            elif kind == "own":  # a pattern of its own that admits no control character: no second rule
                ok = "does not match pattern '^" in messages and SINGLE_LINE_ERROR not in messages
            else:
                ok = {"line": SINGLE_LINE_ERROR, "text": TEXT_ERROR, "url": URL_ERROR}[kind] in messages
            if not ok:
                wrong[pointer] = (kind, messages)
        assert not wrong, wrong

    def test_should_quote_a_refused_value_escaped_never_raw(self):
        with pytest.raises(ChartRenderError) as refused:
            render_chart(["agg.yaml"], {"ingress": {"hosts": [{"host": "a.example\x1b[30;40m", "paths": [{"path": "/"}]}]}})
        message = str(refused.value)
        # The host's own pattern (a Kubernetes hostname) admits no control character: it alone refuses the value.
        assert "at '/ingress/hosts/0/host': 'a.example\\x1b[30;40m' does not match pattern '^(\\\\*" in message
        assert "\x1b" not in message

    def test_should_refuse_a_control_character_in_a_map_key(self):
        # Helm's validator places a key's error at '' but quotes the key, escaped.
        with pytest.raises(ChartRenderError) as refused:
            render_chart(values={"workers": {"nodeSelector": {"zone\x1b[8m": "a"},
                                             "componentFields": {"extraPodSpec": {"a\rb": 1}}}}, show_only=[])
        message = str(refused.value)
        assert "invalid propertyName 'zone\\x1b[8m'" in message
        assert "- at '/workers/componentFields': 'allOf' failed\n  - at '': invalid propertyName 'a\\rb'" in message

    def test_should_accept_multi_line_annotations_and_free_form_text(self):
        snippet = "more_set_headers \"X-A: 1\";\n\tmore_set_headers \"X-B: 2\";\n"
        ingress = {"enabled": True, "annotations": {"nginx.ingress.kubernetes.io/configuration-snippet": snippet},
                   "hosts": [{"host": "llm.example.com", "paths": [{"path": "/", "pathType": "Prefix"}]}]}
        [rendered] = render_chart(["agg.yaml"], {"ingress": ingress}, show_only=["templates/exposure/ingress.yaml"])
        assert rendered["metadata"]["annotations"]["nginx.ingress.kubernetes.io/configuration-snippet"] == snippet


class TestOwnPatterns:
    """A key whose own pattern already refuses every control character gets no second rule (Helm compiles each
    pattern in every render): only a pattern anchored at both ends, of literal characters and ranges, proves it."""

    @pytest.mark.parametrize("pattern,refuses", [
        (r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", True),
        (r"^[0-9]+(ms|s|m|h)$", True),
        (r"^$|^[a-z0-9]([a-z0-9-]*[a-z0-9])?$", True),
        (r"^[ -~]*$", True),
        (r"^[^\s]*$", False),
        (r"^[^\n\r]*$", False),
        (r"^\w+$", False),
        (r"^a.b$", False),
        (r"^[\x1f-z]$", False),
        (r"[a-z]+", False),
        (r"^a$|b", False),
        (r"^[a-z]", False),
        (r"(?i)^[a-z]$", False),
    ])
    def test_should_prove_only_anchored_patterns_of_printable_characters(self, pattern, refuses):
        assert gen_schema.admits_no_control(pattern) is refuses

    def test_should_keep_the_rule_beside_a_pattern_that_admits_one(self):
        # modelCache.s3.prefix (no whitespace) and the benchmark's expected warnings (one line): ESC passes both
        kept = [node for node in iter_nodes(SCHEMA) if node.get("pattern") in (r"^[^\s]*$", r"^[^\n\r]*$")]
        assert kept and all({"pattern": gen_schema.SINGLE_LINE} in node.get("allOf", []) for node in kept)

    def test_should_drop_it_beside_a_pattern_that_refuses_them_all(self):
        own = [node for node in iter_nodes(SCHEMA) if gen_schema.admits_no_control(node.get("pattern", ""))]
        assert len(own) > 50
        assert not [node for node in own if {"pattern": gen_schema.SINGLE_LINE} in node.get("allOf", [])]


def iter_nodes(node):
    if isinstance(node, dict):
        yield node
        for child in node.values():
            yield from iter_nodes(child)
    elif isinstance(node, list):
        for child in node:
            yield from iter_nodes(child)


def render_without_schema(folder, values_files, values) -> dict[str, str]:
    """The chart rendered as if its schema let the values through (a copy in `folder` without values.schema.json): what
    NOTES and tools/plan.py would show if a control character got past it."""
    copy = shutil.copytree(CHART_DIR, folder / CHART_DIR.name, ignore=shutil.ignore_patterns("values.schema.json"))
    return helm_python.Chart.load(copy).render(load_values(values_files, values), name=RELEASE_NAME, namespace=NAMESPACE,
                                               is_install=True)


# Past the schema: the privileged-pods WARNING after an ingress host that ends in "black on black", and a KEDA query
# whose line feed would forge a line of the plan.
HIDING = {"security": {"allowPrivileged": True}, "securityContext": {"container": {"privileged": True}},
          "ingress": {"enabled": True, "hosts": [{"host": "llm.example.com\x1b[30;40m", "paths": [{"path": "/"}]}]},
          "frontend": {"autoscaling": {"enabled": True, "scaler": "keda",
                                       "trigger": {"type": "prometheus", "metadata": {
                                           "serverAddress": "http://prometheus:9090", "threshold": "5",
                                           "query": "sum(x)\n  No sizing warnings.\x1b[8m"}}}}}


@pytest.fixture(scope="module")
def manifests(tmp_path_factory):
    """agg.yaml rendered with the values that hide a WARNING, by a copy of the chart without its schema (the schema
    refuses them first): what NOTES.txt and the plan would print."""
    return render_without_schema(tmp_path_factory.mktemp("no-schema"), ["agg.yaml"], HIDING)

class TestEscapedOutput:

    def test_should_escape_every_control_character_in_notes(self, manifests):
        notes = manifests[NOTES]
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", notes)
        assert "llm.example.com\\x1b[30;40m" in notes
        assert "security.allowPrivileged=true: every pod the chart defines runs with more than" in notes

    def test_should_escape_every_control_character_in_the_plan(self, manifests, monkeypatch):
        monkeypatch.setattr(plan_tool, "render_manifests", lambda *args, **kwargs: manifests)
        text = plan_tool.plan([], {})
        assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]", text)
        assert "llm.example.com\\x1b[30;40m" in text
        assert "sum(x)\\n  No sizing warnings.\\x1b[8m" in text
        assert "  WARNING: security.allowPrivileged=true: every pod the chart defines runs with more than" in text

    def test_should_escape_a_refusal_and_keep_its_line_breaks(self, capsys):
        assert plan_tool.refuse("a\x1b[8m\nb\r", 1) == 1
        assert capsys.readouterr().err == "Error: a\\x1b[8m\nb\\r\n"

    def test_should_write_each_control_character_as_its_escape(self):
        assert escape_controls("\x00\t\n\r\x1b\x7f\x80\x9f\xa0é") == "\\x00\\t\\n\\r\\x1b\\x7f\\x80\\x9f\xa0é"
        assert escape_controls("a\tb\nc\x1b", keep="\t\n") == "a\tb\nc\\x1b"
