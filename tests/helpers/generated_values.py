"""Hypothesis strategies for values generated from the chart's own schema (charts/gpt-oss/values.schema.json).

The project's own walk of the schema (hypothesis-jsonschema would generate whole values documents, nearly all of
which the chart refuses for one wrong key among hundreds): every leaf of the schema (a scalar, a list, a map whose
keys are free, a free-form passthrough) is a `Leaf` with its path and sub-schema. One generated case is a release name,
a namespace and 0 to MAX_LEAVES leaves set on top of an overlay, each value drawn from its leaf's schema and biased to
the edges: empty and maximal strings (maxLength, or 253 where the schema has none), unicode, every enum value, the
bounds of each number and the integers beside them, empty and longest lists. Strings drawn at random follow the leaf's
pattern (hypothesis from_regex); every drawn value is checked against its leaf's schema, so a value the schema refuses
is never sent (the schema's refusals are the offline tier's: tests/chart/validation/).
"""
from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass
from typing import Any, NamedTuple

import jsonschema
from hypothesis import strategies as st

from tools.gptoss.render import CHART_DIR

SCHEMA = json.loads((CHART_DIR / "values.schema.json").read_text())
MAX_LEAVES = 4
# Helm's release name: a DNS-1123 subdomain of at most 53 characters (helm/pkg/chartutil ValidateReleaseName);
# a namespace: a DNS-1123 label, at most 63.
RELEASE_NAME_MAX, NAMESPACE_MAX = 53, 63
RELEASE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# Characters the edge strings are made of: ASCII of each class, and unicode of one, two, three and four UTF-8 bytes.
EDGE_CHARACTERS = ("a", "Z", "0", "-", ".", "_", " ", "/", ":", "é", "日", "🙂")
LONGEST_UNBOUNDED = 253  # a string the schema does not bound: a DNS subdomain's length, as long as most names go

class Leaf(NamedTuple):
    path: tuple[str, ...]
    schema: dict

    @property
    def key(self) -> str:
        return ".".join(self.path)


def resolve(schema: dict) -> dict:
    """A sub-schema with its $ref followed (the schema's refs are all #/definitions/<name>)."""
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        schema = {**SCHEMA["definitions"][name], **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def types_of(schema: dict) -> list[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if declared:
        return list(declared)
    if "properties" in schema or "additionalProperties" in schema or "propertyNames" in schema:
        return ["object", "string", "array"] if "items" in schema else ["object"]
    if "items" in schema:
        return ["array"]
    if "pattern" in schema or "maxLength" in schema:
        return ["string"]
    return ["string", "integer", "number", "boolean", "null", "array", "object"]  # free form


def walk(schema: dict, path: tuple[str, ...] = ()) -> list[Leaf]:
    """Every leaf under `schema`: an object with properties is walked into (and is a leaf too when it also takes
    keys of its own: additionalProperties); anything else is a leaf."""
    schema = resolve(schema)
    properties = schema.get("properties")
    if not properties:
        return [Leaf(path, schema)] if path else []
    leaves = []
    if schema.get("additionalProperties", True) not in (False, None) and path:
        leaves.append(Leaf(path, {k: v for k, v in schema.items() if k != "properties"}))
    for name, sub in properties.items():
        leaves.extend(walk(sub, path + (name,)))
    return leaves


@functools.lru_cache(maxsize=1)
def leaves() -> list[Leaf]:
    """The leaves generated: every leaf of the schema."""
    return walk(SCHEMA)


@functools.lru_cache(maxsize=None)
def _validator(schema_json: str):
    schema = {**json.loads(schema_json), "definitions": SCHEMA["definitions"]}
    return jsonschema.Draft7Validator(schema)


def valid(schema: dict, value: Any) -> bool:
    return _validator(json.dumps(schema, sort_keys=True)).is_valid(value)


def _patterns(schema: dict) -> list[str]:
    found = [schema["pattern"]] if "pattern" in schema else []
    for part in schema.get("allOf", []):
        found.extend(_patterns(resolve(part)))
    return found


def edge_strings(schema: dict) -> list[str]:
    """Strings at the edges the schema allows: empty, one character, the longest, of each character class."""
    shortest = schema.get("minLength", 0)
    longest = schema.get("maxLength", LONGEST_UNBOUNDED)
    candidates = {""}
    for length in sorted({shortest, max(shortest, 1), longest}):
        if length == 0:
            continue
        for char in EDGE_CHARACTERS:
            candidates.add(char * length)
        candidates.add("a" + "-" * (length - 2) + "z" if length > 2 else "a" * length)
        candidates.add(("a0." * length)[:length - 1] + "z" if length > 1 else "z")
        candidates.add(("A-z_0" * length)[:length])
    return sorted(c for c in candidates if valid(schema, c))


def string_strategy(schema: dict) -> st.SearchStrategy:
    edges = edge_strings(schema)
    longest = schema.get("maxLength", LONGEST_UNBOUNDED)
    patterns = _patterns(schema)
    if patterns and patterns[0] not in (r"^[^\x00-\x08\x0b-\x1f\x7f-\x9f]*$", r"^[^\x00-\x1f\x7f-\x9f]*$"):
        drawn = st.from_regex(patterns[0], fullmatch=True)
    else:
        drawn = st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs")), max_size=min(longest, 80))
    drawn = drawn.filter(lambda s: len(s) <= longest and valid(schema, s))
    return st.one_of(st.sampled_from(edges), drawn) if edges else drawn


def integer_strategy(schema: dict) -> st.SearchStrategy:
    low = schema.get("minimum", schema["exclusiveMinimum"] + 1 if "exclusiveMinimum" in schema else None)
    high = schema.get("maximum", schema["exclusiveMaximum"] - 1 if "exclusiveMaximum" in schema else None)
    edges = {0, 1, -1, 2**31 - 1, 2**53}
    if low is not None:
        edges |= {low, low + 1}
    if high is not None:
        edges |= {high, high - 1}
    edges = sorted(e for e in edges if (low is None or e >= low) and (high is None or e <= high))
    return st.one_of(st.sampled_from(edges), st.integers(low, high))


def number_strategy(schema: dict) -> st.SearchStrategy:
    low, high = schema.get("minimum"), schema.get("maximum")
    edges = {0, 0.5, 1, 1e-9, 1e9}
    if low is not None:
        edges |= {low}
    if high is not None:
        edges |= {high}
    edges = sorted(e for e in edges if valid({k: v for k, v in schema.items() if k != "type"}, e))
    drawn = st.floats(low, high, allow_nan=False, allow_infinity=False)
    return st.one_of(st.sampled_from(edges), drawn) if edges else drawn


def value_strategy(schema: dict, depth: int = 0) -> st.SearchStrategy:
    """Values of `schema`, biased to its edges; each checked against it."""
    schema = resolve(schema)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    choices = []
    for kind in types_of(schema):
        if kind == "null":
            choices.append(st.none())
        elif kind == "boolean":
            choices.append(st.booleans())
        elif kind == "integer":
            choices.append(integer_strategy(schema))
        elif kind == "number":
            choices.append(number_strategy(schema))
        elif kind == "string":
            choices.append(string_strategy(schema))
        elif kind == "array" and depth < 3:
            items = value_strategy(schema.get("items", {}), depth + 1)
            shortest = schema.get("minItems", 0)
            longest = min(schema.get("maxItems", shortest + 3), shortest + 3)
            choices.append(st.lists(items, min_size=shortest, max_size=longest))
        elif kind == "object" and depth < 3:
            choices.append(object_strategy(schema, depth))
    if not choices:
        return st.none()
    return st.one_of(choices).filter(lambda v: valid(schema, v))


def object_strategy(schema: dict, depth: int) -> st.SearchStrategy:
    properties = {name: value_strategy(sub, depth + 1) for name, sub in schema.get("properties", {}).items()}
    extra = schema.get("additionalProperties", True)
    names = resolve(schema.get("propertyNames", {}))
    objects = st.fixed_dictionaries({}, optional=properties) if properties else st.just({})
    if extra is False:
        return objects
    keys = (string_strategy({"type": "string", **names}) if names
            else st.sampled_from(["a", "Z" * 63, "日本", "x.y/z"]))
    values = value_strategy({} if extra is True else extra, depth + 1)
    more = st.dictionaries(keys, values, max_size=2)
    return st.builds(lambda a, b: {**b, **a}, objects, more)


def set_path(values: dict, path: tuple[str, ...], value: Any) -> None:
    for name in path[:-1]:
        values = values.setdefault(name, {})
    values[path[-1]] = value


class Case(NamedTuple):
    """One generated input: a release name, a namespace (an index into the group's namespaces: see
    tests/cluster/test_generated_values.py) and the values set on top of the overlay."""
    release: str
    namespace: int
    values: dict

    def __repr__(self) -> str:  # what hypothesis prints for a falsifying example: paste it into an @example
        return f"Case(release={self.release!r}, namespace={self.namespace}, values={self.values!r})"


def release_names() -> st.SearchStrategy:
    """Release names Helm accepts, biased to the shortest and the longest allowed."""
    limit, form = RELEASE_NAME_MAX, RELEASE_NAME
    edges = ["gpt-oss", "a", "0", "a" * limit, "9" * limit, ("a-" * limit)[:limit - 1] + "z",
             ("a." * limit)[:limit - 1] + "z", "z" + "0" * (limit - 1)]
    drawn = st.from_regex(form, fullmatch=True).filter(lambda s: len(s) <= limit)
    # Most Helm names (dots, a leading digit, more than 31 characters) make a name the chart refuses
    # (gpt-oss.checkValues.names): three draws in five are names it takes, so the leaves behind them get judged too.
    taken = st.from_regex(r"^[a-z]([-a-z0-9]{0,24}[a-z0-9])?$", fullmatch=True)
    return st.one_of(taken, taken, taken, st.sampled_from([e for e in edges if form.match(e)]), drawn)


def overrides() -> st.SearchStrategy:
    """0 to MAX_LEAVES distinct leaves, each with a value of its schema, as one values dict."""
    def drawn(leaf: Leaf):
        return value_strategy(leaf.schema).map(lambda value: (leaf.path, value))
    pairs = st.lists(st.sampled_from(leaves()).flatmap(drawn), max_size=MAX_LEAVES, unique_by=lambda p: p[0])

    def build(chosen):
        values: dict = {}
        taken: list[tuple[str, ...]] = []
        for path, value in chosen:
            # a leaf inside or around one already set (a map leaf and one of its properties): the first one stays
            if any(path[:len(t)] == t or t[:len(path)] == path for t in taken):
                continue
            taken.append(path)
            set_path(values, path, value)
        return values
    return pairs.map(build)


def cases(namespaces: int) -> st.SearchStrategy:
    # The first namespace is the longest (63): no Dynamo release fits beside it (the operator's label
    # <namespace>-<DGD> is 63 at most), so it is drawn one time in four.
    others = st.integers(1, namespaces - 1)
    return st.builds(Case, release_names(), st.one_of(others, others, others, st.just(0)), overrides())


@dataclass
class Tally:
    """What one run sent: renders the chart accepted (each dry-run created, every object admitted), renders it
    refused, and objects (identical objects are sent once)."""
    accepted: int = 0
    refused: int = 0
    objects_sent: int = 0
    objects_seen: int = 0

    def line(self) -> str:
        return (f"generated values: {self.accepted} accepted renders dry-run created ({self.objects_sent} distinct "
                f"objects sent of {self.objects_seen}), {self.refused} refused by the chart")

