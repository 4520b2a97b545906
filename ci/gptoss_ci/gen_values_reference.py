"""Write the chart README's values reference from charts/gpt-oss/values.schema.json and values.yaml.

usage: ci/gen-values-reference.py [--check]
One table row per schema leaf: key path, type, default (from values.yaml), description (from the schema)
and the allowed values (enum, bounds). Only the text between the markers of charts/gpt-oss/README.md is
replaced (the README that travels in the chart archive, which Artifact Hub shows).
--check writes nothing and exits 1 when the reference is stale; tests/test_docs.py runs the same check.
A leaf without a description is an error: the reference must cover every key.
"""
from __future__ import annotations

import argparse
import json
import sys

import yaml

from . import REPO

CHART = REPO / "charts" / "gpt-oss"
README = CHART / "README.md"
START = "<!-- values-reference:start -->"
END = "<!-- values-reference:end -->"
MISSING = object()


class SchemaError(Exception):
    """The schema cannot be documented as it is (a leaf lacks a description)."""


def leaves(node: dict, path: str = ""):
    """(key path, schema) of every leaf: a property that is not an object with its own properties."""
    if node.get("type") == "object" and "properties" in node:
        for key, child in node["properties"].items():
            yield from leaves(child, f"{path}.{key}" if path else key)
    else:
        yield path, node


def lookup(values, path: str):
    for key in path.split("."):
        if not isinstance(values, dict) or key not in values:
            return MISSING
        values = values[key]
    return values


def cell(text: str) -> str:
    """Table-safe text: pipes escaped (once, here), no line breaks."""
    return text.replace("|", "\\|").replace("\n", " ")


def code(value) -> str:
    # JSON spells every default unambiguously (null, "", {}), and fits in one table cell.
    return f"`{json.dumps(value, separators=(', ', ': '))}`"


def allowed(schema: dict) -> str:
    parts = []
    if "enum" in schema:
        parts.append("one of " + ", ".join(code(v) for v in schema["enum"]))
    bounds = [("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")]
    parts += [f"{op} {schema[k]}" for k, op in bounds if k in schema and not isinstance(schema[k], bool)]
    if "pattern" in schema:
        parts.append(f"matches `{schema['pattern']}`")
    return "; ".join(parts)


def type_of(schema: dict) -> str:
    kind = schema.get("type", "any")
    kinds = kind if isinstance(kind, list) else [kind]
    if "array" in kinds and isinstance(schema.get("items"), dict) and "type" in schema["items"]:
        kinds = [f"array of {schema['items']['type']}" if k == "array" else k for k in kinds]
    return " or ".join(kinds)


def render(schema: dict, defaults: dict) -> str:
    rows = ["| Key | Type | Default | Description | Allowed |", "| --- | --- | --- | --- | --- |"]
    undocumented = []
    for path, leaf in leaves(schema):
        description = (leaf.get("description") or "").strip()
        if not description:
            undocumented.append(path)
            continue
        default = lookup(defaults, path)
        cells = [f"`{path}`", type_of(leaf), "(not set)" if default is MISSING else code(default),
                 description, allowed(leaf)]
        cells = [cell(text) for text in cells]
        rows.append(("| " + " | ".join(cells) + " |").replace("|  |", "| |"))
    if undocumented:
        raise SchemaError(f"schema leaves without a description: {', '.join(undocumented)}")
    intro = ("Generated from `charts/gpt-oss/values.schema.json` (descriptions) and "
             "`charts/gpt-oss/values.yaml` (defaults) by `ci/gen-values-reference.py`; do not edit by hand.")
    return "\n".join([intro, "", *rows])


def updated_readme(readme: str, table: str) -> str:
    if readme.count(START) != 1 or readme.count(END) != 1 or readme.index(START) > readme.index(END):
        raise SchemaError(f"charts/gpt-oss/README.md needs exactly one {START} followed by one {END}")
    head, rest = readme.split(START)
    _, tail = rest.split(END)
    return f"{head}{START}\n{table}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the reference is stale; write nothing")
    args = parser.parse_args(argv)
    schema = json.loads((CHART / "values.schema.json").read_text())
    defaults = yaml.safe_load((CHART / "values.yaml").read_text()) or {}
    try:
        current = README.read_text()
        wanted = updated_readme(current, render(schema, defaults))
    except SchemaError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if current == wanted:
        return 0
    if args.check:
        print("charts/gpt-oss/README.md values reference is stale: run ci/gen-values-reference.py", file=sys.stderr)
        return 1
    README.write_text(wanted)
    print("charts/gpt-oss/README.md values reference updated")
    return 0
