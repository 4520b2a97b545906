"""Generate the chart's value docs from its one annotated schema, charts/gpt-oss/values.schema.yaml.

usage: python -m ci.generate schema [--check] [--chart DIR] [--port JSON]
values.schema.yaml is a JSON schema written in YAML, with a description on every key. From it this writes:
  values.schema.json  the same schema as JSON, which Helm validates values against (descriptions on one line)
  values.yaml         the comment directly above each key: that key's description (the values are not touched)
  README.md           the values reference between its markers: key, type, default (from values.yaml),
                      description and allowed values of every leaf
The JSON also gets the control-character rules (CONTROL_RULES below): no string value, anywhere, may carry C0 or C1
control characters or DEL, naming the key; the source does not spell them out. And the Kubernetes types the source
refers to (#/definitions/io.k8s..., k8s.*), from ci/generate/kubernetes-definitions.json (python -m ci.generate
kubernetes-schema, from the pinned Kubernetes OpenAPI): the passthrough values are typed as the API server types them.
--check writes nothing and exits 1 naming each file that drifted; ci/lint.sh and tests/docs/test_docs.py run it.
--port JSON prints what another values.schema.json (another branch's, say) adds or changes, as YAML for the source.
The source is refused (exit 2) when a key has no description, an object with properties is not closed
(additionalProperties: false), a free-form map does not declare its additionalProperties, or values.yaml
sets a key the schema does not have.
"""
from __future__ import annotations

import argparse
import copy
import json
import re
import re._constants as re_constants
import re._parser as re_parser
import sys
import textwrap
from pathlib import Path

import yaml

from . import REPO

CHART = REPO / "charts" / "gpt-oss"
SOURCE, SCHEMA_JSON, VALUES, README = "values.schema.yaml", "values.schema.json", "values.yaml", "README.md"
# The Kubernetes types of the passthrough values (python -m ci.generate kubernetes-schema, from the pinned OpenAPI): the
# source refers to them (#/definitions/...), and the JSON carries them in its definitions.
KUBERNETES = REPO / "ci" / "generate" / "kubernetes-definitions.json"
REF = "#/definitions/"
START = "<!-- values-reference:start -->"
END = "<!-- values-reference:end -->"
MISSING = object()
# yamllint allows 120 characters; two spare keep a hand-added word from breaking the lint.
COMMENT_WIDTH = 118
# libyaml's loader when PyYAML has it: the source is 2,000 lines, read by every check.
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
KEY_LINE = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z0-9_./-]+):(?: |$)")

# --- control characters (issue 55) -------------------------------------------------------------------------------
# No string value may carry a control character: C0 (U+0000-U+001F), DEL (U+007F) or C1 (U+0080-U+009F). Values
# reach NOTES.txt, tools/plan.py and error messages, where an escape sequence (ESC [ 30;40m) or a carriage return
# hides or forges text, such as the chart's own WARNING lines. The generator adds the rule to every string of the
# JSON, so a key added to the source is covered without a word; Helm's error names the key.
SINGLE_LINE = r"^[^\x00-\x1f\x7f-\x9f]*$"
# Where Kubernetes takes multi-line text and the chart passes it through whole (toYaml writes it escaped): an
# annotation's value (an ingress controller's configuration snippet), and every string inside a free-form map (a
# KEDA trigger's multi-line PromQL query, a script in workers.componentFields). Tab and line feed only: a carriage
# return rewrites the line a terminal shows.
TEXT = r"^[^\x00-\x08\x0b-\x1f\x7f-\x9f]*$"
CONTROL = r"[\x00-\x1f\x7f-\x9f]"
INT32_MAX = 2147483647
FREE_FORM = "freeFormText"
# Keys whose value may carry a credential: URLs (user:password@host). Helm's schema error quotes the value that fails a
# `pattern` (or a `format`), password included, before any template runs; so these keys have no pattern and no format
# (the source is refused with one), their control-character rule is a `not`, whose error names the key and quotes
# nothing, and their form is checked by the chart's gpt-oss.checkValues.urls, which masks the credentials
# (templates/validation/_check-urls.tpl lists the same keys; tests/chart/validation/test_credential_errors.py compares the two).
URL_KEYS = (
    "model.tiktoken.url", "modelCache.huggingface.endpoint", "modelCache.s3.endpoint", "modelCache.oci.tokenService",
    "modelCache.proxy.httpsProxy", "modelCache.proxy.httpProxy", "frontend.urlOverride",
    "frontend.autoscaling.prometheusAddress", "workers.worker.autoscaling.prometheusAddress",
    "workers.prefill.autoscaling.prometheusAddress", "workers.decode.autoscaling.prometheusAddress",
    "trtllmServe.autoscaling.prometheusAddress", "planner.prometheusEndpoint",
)
# Keywords whose errors quote the value (santhosh-tekuri/jsonschema v6, Helm 4's validator): none on a URL key.
QUOTING_KEYWORDS = ("pattern", "format", "const")


class SchemaError(Exception):
    """The source cannot be turned into the generated files as it is."""


def text(description: str) -> str:
    """A description on one line: the source may wrap it (folded or plain YAML scalars) any way it likes."""
    return " ".join(str(description).split())


def properties(node: dict, path: str = ""):
    """(key path, schema) of every property, parents before their children."""
    for key, child in (node.get("properties") or {}).items():
        child_path = f"{path}.{key}" if path else key
        yield child_path, child
        yield from properties(child, child_path)


def problems(schema: dict) -> list[str]:
    """What keeps the source from being a strict, fully described schema."""
    found = []
    for path, node in properties(schema):
        if not text(node.get("description") or ""):
            found.append(f"{path}: no description")
        if node.get("type") == "object" or "properties" in node:
            if "properties" in node and node.get("additionalProperties") is not False:
                found.append(f"{path}: an object with properties needs additionalProperties: false")
            if "properties" not in node and "additionalProperties" not in node:
                found.append(f"{path}: a free-form map must declare additionalProperties (true or a schema)")
        if path in URL_KEYS:
            found += [f"{path}: a URL key has no {keyword} (Helm's error would quote the value, credentials included; "
                      "the chart checks its form: templates/validation/_check-urls.tpl)"
                      for keyword in QUOTING_KEYWORDS if keyword in node]
    found += [f"{path}: not a key of the schema" for path in URL_KEYS if path not in dict(properties(schema))]
    return found


def _types(node: dict) -> list:
    kind = node.get("type", [])
    return kind if isinstance(kind, list) else [kind]


def admits_no_control(pattern: str) -> bool:
    """Whether `pattern` alone refuses every control character: anchored at both ends (^...$, which Go's RE2 reads as
    the ends of the text), with nothing between them that can match one (literals, ranges and alternatives of them, no
    `.`, no negated class, no \\s or other class escape, no flag). Such a key needs no control-character rule beside it,
    and Helm compiles one pattern fewer for it in every render (its error names the key and its own pattern)."""
    if "(?" in pattern:
        return False
    try:
        return _anchored(list(re_parser.parse(pattern)))
    except re.error:
        return False


def _anchored(items) -> bool:
    """^ then an anchored tail, on every alternative (Python's parser moves a prefix the alternatives share out of
    them: ^$|^a$ is ^ then ($|a$))."""
    if items and items[0] == (re_constants.AT, re_constants.AT_BEGINNING):
        return _anchored_tail(items[1:])
    return (len(items) == 1 and items[0][0] is re_constants.BRANCH
            and all(_anchored(list(branch)) for branch in items[0][1][1]))


def _anchored_tail(items) -> bool:
    """Nothing that can take a control character, then $ on every path."""
    if not items:
        return False
    *body, (op, arg) = items
    if (op, arg) == (re_constants.AT, re_constants.AT_END):
        return _consumes_no_control(body)
    return (op is re_constants.BRANCH and _consumes_no_control(body)
            and all(_anchored_tail(list(branch)) for branch in arg[1]))


def _consumes_no_control(items) -> bool:
    for op, arg in items:
        if op is re_constants.LITERAL:
            if re.fullmatch(CONTROL, chr(arg)):
                return False
        elif op is re_constants.IN:
            if any(kind not in (re_constants.LITERAL, re_constants.RANGE) for kind, _ in arg):
                return False  # a negated class or a class escape (\\s, \\w) may take a control character
            if any(re.fullmatch(CONTROL, chr(value)) if kind is re_constants.LITERAL
                   else re.search(CONTROL, "".join(map(chr, range(value[0], value[1] + 1))))
                   for kind, value in arg):
                return False
        elif op in (re_constants.MAX_REPEAT, re_constants.MIN_REPEAT):
            if not _consumes_no_control(arg[2]):
                return False
        elif op is re_constants.SUBPATTERN:
            if not _consumes_no_control(arg[-1]):
                return False
        elif op is re_constants.BRANCH:
            if not all(_consumes_no_control(branch) for branch in arg[1]):
                return False
        else:
            return False  # ., anchors inside, back-references: not provably free of control characters
    return True


def control_rules(node: dict, path: str = "", text: bool = False) -> None:
    """Add the control-character rules to `node` and every subschema under it, in place.

    A string gets SINGLE_LINE (TEXT where multi-line text is legitimate: `text`) as its `pattern`, or, beside a
    pattern of its own, in `allOf`; a URL key gets `not` CONTROL, which quotes nothing. A map's keys get SINGLE_LINE
    (`propertyNames`), and a free-form map (additionalProperties: true) refers to FREE_FORM, which holds every
    string and key inside it, however deep, to TEXT and SINGLE_LINE.
    """
    if "string" in _types(node):
        if path in URL_KEYS:
            node["not"] = {"pattern": CONTROL}
        elif "pattern" in node:
            if not admits_no_control(node["pattern"]):
                node["allOf"] = node.get("allOf", []) + [{"pattern": TEXT if text else SINGLE_LINE}]
        elif "enum" not in node:
            node["pattern"] = TEXT if text else SINGLE_LINE
    for key, child in (node.get("properties") or {}).items():
        control_rules(child, f"{path}.{key}" if path else key)
    for branch in node.get("anyOf") or []:  # int-or-string, a quantity: the string branch
        control_rules(branch, path, text)
    if isinstance(node.get("items"), dict):
        control_rules(node["items"], f"{path}[]", text)
    extra = node.get("additionalProperties")
    if extra is True:
        node["allOf"] = node.get("allOf", []) + [{"$ref": f"#/definitions/{FREE_FORM}"}]
    elif isinstance(extra, dict):
        # A Kubernetes name pattern of its own (a LabelSelector's keys) admits no control character either.
        node.setdefault("propertyNames", {"pattern": SINGLE_LINE})
        control_rules(extra, f"{path}.*", text or path.rpartition(".")[2] == "annotations")


def free_form_definition() -> dict:
    """Every string inside a free-form map is TEXT, every key SINGLE_LINE, at any depth (for other types the
    keywords do not apply)."""
    ref = {"$ref": f"#/definitions/{FREE_FORM}"}
    return {"pattern": TEXT, "propertyNames": {"pattern": SINGLE_LINE}, "items": ref, "additionalProperties": ref}


def without_control_rules(node):
    """A JSON schema with what control_rules adds, and the Kubernetes definitions, taken out again (to compare it with
    the source: --port)."""
    if isinstance(node, list):
        return [without_control_rules(item) for item in node]
    if not isinstance(node, dict):
        return node
    generated = [{"pattern": SINGLE_LINE}, {"pattern": TEXT}, {"$ref": f"#/definitions/{FREE_FORM}"}]
    out = {}
    for key, value in node.items():
        if ((key == "pattern" and value in (SINGLE_LINE, TEXT)) or (key == "not" and value == {"pattern": CONTROL})
                or (key == "propertyNames" and value == {"pattern": SINGLE_LINE})):
            continue
        if key == "allOf" and isinstance(value, list):
            value = [item for item in value if item not in generated]
            if not value:
                continue
        if key == "definitions" and isinstance(value, dict):
            generated_names = {FREE_FORM, *json.loads(KUBERNETES.read_text())["definitions"]}
            value = {name: item for name, item in value.items() if name not in generated_names}
            if not value:
                continue
        out[key] = without_control_rules(value)
    return out


def kubernetes_definitions(schema: dict) -> dict:
    """The Kubernetes definitions the source refers to, and what they refer to (KUBERNETES holds them all)."""
    available = json.loads(KUBERNETES.read_text())["definitions"]
    wanted, pending = {}, sorted(set(re.findall(re.escape(REF) + r"([\w.-]+)", json.dumps(schema))))
    while pending:
        name = pending.pop()
        if name in wanted:
            continue
        if name not in available:
            raise SchemaError(f"{SOURCE} refers to {REF}{name}, which {KUBERNETES.name} does not define "
                              "(python -m ci.generate kubernetes-schema: ROOTS)")
        wanted[name] = copy.deepcopy(available[name])
        pending += sorted(set(re.findall(re.escape(REF) + r"([\w.-]+)", json.dumps(available[name]))))
    return dict(sorted(wanted.items()))


def int32_bounds(node: dict) -> None:
    """Every integer value without a maximum of its own gets 2147483647, in place: the chart writes its integers into
    Kubernetes' int32 fields (a probe's failureThreshold from trtllmServe.startupTimeoutSeconds, a Job's backoffLimit),
    and the API server cannot decode one beyond int32."""
    if "integer" in _types(node) and "maximum" not in node and "exclusiveMaximum" not in node:
        node["maximum"] = INT32_MAX
    for child in (node.get("properties") or {}).values():
        int32_bounds(child)
    for branch in node.get("anyOf") or []:
        int32_bounds(branch)
    if isinstance(node.get("items"), dict):
        int32_bounds(node["items"])
    if isinstance(node.get("additionalProperties"), dict):
        int32_bounds(node["additionalProperties"])


def json_schema(schema: dict) -> dict:
    """The schema Helm reads: the source with every description on one line, the Kubernetes definitions it refers
    to, and the control-character rules (in those definitions too)."""
    out = copy.deepcopy(schema)
    for _, node in properties(out):
        node["description"] = text(node["description"])
    control_rules(out)
    int32_bounds(out)
    definitions = out.setdefault("definitions", {})
    for name, node in kubernetes_definitions(schema).items():
        control_rules(node, name)
        definitions[name] = node
    definitions[FREE_FORM] = free_form_definition()
    return out


# --- values.yaml: the comment above each key is its description --------------------------------------------------

def annotate(values_text: str, schema: dict) -> str:
    """values.yaml with the comment block directly above each schema key replaced by the key's description.

    A comment separated from the next key by a blank line (the file's header, a section note) stays as it is, and
    so does everything nested in a value that the schema does not break into properties (a list, a free-form map).
    """
    out: list[str] = []
    pending: list[str] = []  # comment lines since the last line that was not a comment
    stack: list[tuple[int, dict, str]] = []  # (indent, schema, path) of the keys whose children come next
    opaque: int | None = None  # indent of the key whose nested lines are its value, not schema keys
    for number, line in enumerate(values_text.splitlines(), 1):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip(" "))
        if not stripped:
            out += pending + [line]
            pending = []
            continue
        if stripped.startswith("#"):
            pending.append(line)
            continue
        if opaque is not None and (indent > opaque or (indent == opaque and stripped.startswith("- "))):
            out += pending + [line]
            pending = []
            continue
        opaque = None
        match = KEY_LINE.match(line)
        if not match:
            raise SchemaError(f"values.yaml line {number}: not a key line: {line!r}")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent, parent_path = (stack[-1][1], stack[-1][2]) if stack else (schema, "")
        key = match["key"]
        path = f"{parent_path}.{key}" if parent_path else key
        node = (parent.get("properties") or {}).get(key)
        if node is None:
            raise SchemaError(f"values.yaml line {number}: {path} is not in {SOURCE}")
        # Comment lines at the key's own indent, directly above it, are its description; others stay.
        attached = 0
        while attached < len(pending) and _indent(pending[-1 - attached]) == indent:
            attached += 1
        out += pending[:len(pending) - attached]
        pending = []
        prefix = " " * indent + "# "
        out += [prefix + piece for piece in textwrap.wrap(text(node["description"]), COMMENT_WIDTH - len(prefix),
                                                           break_long_words=False, break_on_hyphens=False)]
        out.append(line)
        if "properties" in node:
            stack.append((indent, node, path))
        else:
            opaque = indent
    out += pending
    return "\n".join(out) + "\n"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


# --- README.md: the values reference -----------------------------------------------------------------------------

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


def cell(value: str) -> str:
    """Table-safe text: pipes escaped (once, here), no line breaks."""
    return value.replace("|", "\\|").replace("\n", " ")


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


def ref_type(schema: dict) -> str | None:
    """A Kubernetes type's name (core.v1.Toleration, k8s.labelValue) where the schema is a $ref to one."""
    ref = schema.get("$ref", "")
    return ref.rpartition("/")[2].replace("io.k8s.api.", "").replace("io.k8s.apimachinery.pkg.", "") or None


def type_of(schema: dict) -> str:
    if "anyOf" in schema and "type" not in schema:
        return " or ".join(type_of(branch) for branch in schema["anyOf"])
    kind = schema.get("type", ref_type(schema) or "any")
    kinds = kind if isinstance(kind, list) else [kind]
    if "array" in kinds and isinstance(schema.get("items"), dict):
        item = schema["items"].get("type") or ref_type(schema["items"])
        if item:
            kinds = [f"array of {item}" if k == "array" else k for k in kinds]
    return " or ".join(kinds)


def render(schema: dict, defaults: dict) -> str:
    """The values reference table, one row per leaf."""
    rows = ["| Key | Type | Default | Description | Allowed |", "| --- | --- | --- | --- | --- |"]
    for path, leaf in leaves(schema):
        default = lookup(defaults, path)
        cells = [f"`{path}`", type_of(leaf), "(not set)" if default is MISSING else code(default),
                 text(leaf.get("description") or ""), allowed(leaf)]
        rows.append(("| " + " | ".join(cell(c) for c in cells) + " |").replace("|  |", "| |"))
    intro = (f"Generated from `charts/gpt-oss/{SOURCE}` (descriptions) and `charts/gpt-oss/{VALUES}` (defaults) "
             "by `python -m ci.generate schema`; do not edit by hand.")
    return "\n".join([intro, "", *rows])


def updated_readme(readme: str, table: str) -> str:
    if readme.count(START) != 1 or readme.count(END) != 1 or readme.index(START) > readme.index(END):
        raise SchemaError(f"README.md needs exactly one {START} followed by one {END}")
    head, rest = readme.split(START)
    _, tail = rest.split(END)
    return f"{head}{START}\n{table}\n{END}{tail}"


# --- porting a key added to a values.schema.json elsewhere (another branch) -------------------------------------

def scalar(value) -> str:
    """A YAML scalar: plain when it reads back the same, else JSON (which YAML reads as a double-quoted scalar)."""
    if isinstance(value, str) and value and value == value.strip():
        try:
            if yaml.load(f"k: {value}", Loader=LOADER) == {"k": value}:
                return value
        except yaml.YAMLError:
            pass
    return json.dumps(value)


def to_yaml(node: dict, indent: int = 0) -> list[str]:
    """Schema keywords as lines in the source's style: long or unsafe descriptions folded, lists of scalars in flow."""
    pad, out = " " * indent, []
    for key, value in node.items():
        key = scalar(key)
        if key == "description" and (len(pad) + len(key) + 2 + len(scalar(value)) > COMMENT_WIDTH
                                     or scalar(value) != value):
            out.append(f"{pad}{key}: >-")
            out += [f"{pad}  {line}" for line in textwrap.wrap(value, COMMENT_WIDTH - indent - 2,
                                                                break_long_words=False, break_on_hyphens=False)]
        elif isinstance(value, dict):
            out += [f"{pad}{key}: {{}}"] if not value else [f"{pad}{key}:", *to_yaml(value, indent + 2)]
        elif isinstance(value, list) and all(not isinstance(item, (dict, list)) for item in value):
            flow = f"{pad}{key}: [{', '.join(scalar(item) for item in value)}]"
            out += [flow] if len(flow) <= COMMENT_WIDTH else [f"{pad}{key}:", *(f"{pad}  - {scalar(i)}" for i in value)]
        elif isinstance(value, list):
            out.append(f"{pad}{key}:")
            for item in value:
                lines = to_yaml(item, indent + 4)
                out += [f"{pad}  - {lines[0].lstrip()}", *lines[1:]]
        else:
            out.append(f"{pad}{key}: {scalar(value)}")
    return out


def own(node: dict) -> dict:
    """A schema node's validation keywords without its children and its description."""
    return {key: value for key, value in node.items() if key not in ("properties", "description")}


def port(other: dict, schema: dict) -> list[str]:
    """What another values.schema.json has that the source lacks or spells otherwise, as lines to paste by hand.

    Keys only there come whole, in the source's YAML style, at their depth in the source; keys whose own keywords
    differ (descriptions aside, which the source words) are named with both spellings; keys only here are named.
    """
    out = []
    other = without_control_rules(other)
    schema = copy.deepcopy(schema)
    int32_bounds(schema)  # the JSON's int32 maximums, which the source leaves to the generator
    mine, theirs = dict(properties(schema)), dict(properties(other))
    for path, node in theirs.items():
        parent = path.rpartition(".")[0]
        if path not in mine and (not parent or parent in mine):
            depth = 2 * (2 * path.count(".") + 1)  # properties: / key: per level
            out += [f"# {path}: only in the other schema; under {parent or 'the root'}'s properties:",
                    *to_yaml({path.rpartition(".")[2]: node}, depth)]
        elif path in mine and own(node) != own(mine[path]):
            out += [f"# {path}: keywords differ", f"#   here:  {json.dumps(own(mine[path]))}",
                    f"#   there: {json.dumps(own(node))}"]
    out += [f"# {path}: only here" for path in mine
            if path not in theirs and ("." not in path or path.rpartition(".")[0] in theirs)]
    if own(other) != own(schema):
        out += ["# the root's keywords differ", f"#   here:  {json.dumps(own(schema))}",
                f"#   there: {json.dumps(own(other))}"]
    return out


# --- all of it ---------------------------------------------------------------------------------------------------

def generate(chart: Path) -> dict[Path, str]:
    """The wanted content of each generated file of the chart in `chart`."""
    schema = yaml.load((chart / SOURCE).read_text(), Loader=LOADER)
    found = problems(schema)
    if found:
        raise SchemaError(f"{SOURCE}:\n  " + "\n  ".join(found))
    values_text = annotate((chart / VALUES).read_text(), schema)
    defaults = yaml.load(values_text, Loader=LOADER) or {}
    return {
        chart / SCHEMA_JSON: json.dumps(json_schema(schema), indent=2) + "\n",
        chart / VALUES: values_text,
        chart / README: updated_readme((chart / README).read_text(), render(schema, defaults)),
    }


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a generated file drifted; write nothing")
    parser.add_argument("--chart", type=Path, default=CHART, help="chart directory (default: charts/gpt-oss)")
    parser.add_argument("--port", type=Path, metavar="JSON",
                        help="print what this values.schema.json (e.g. another branch's) adds or changes against the "
                             "source, as YAML to paste into it; exit 1 when anything differs")
    args = parser.parse_args(argv)
    if args.port:
        lines = port(json.loads(args.port.read_text()), yaml.load((args.chart / SOURCE).read_text(), Loader=LOADER))
        for line in lines:
            print(line)
        return 1 if lines else 0
    try:
        wanted = generate(args.chart)
    except (SchemaError, yaml.YAMLError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    drifted = [path for path, content in wanted.items() if path.read_text() != content]
    if args.check:
        for path in drifted:
            print(f"{path}: drifted from {SOURCE}: run python -m ci.generate schema", file=sys.stderr)
        return 1 if drifted else 0
    for path in drifted:
        path.write_text(wanted[path])
        print(f"{path}: generated")
    return 0
