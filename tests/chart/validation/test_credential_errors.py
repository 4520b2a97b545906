"""No credential in any error (issue 55, item 7): the values that carry a URL (gen_schema.URL_KEYS) are checked by the
chart's gpt-oss.checkValues.urls, which masks credentials, not by schema patterns, whose errors quote the value; every
credential-bearing key through every input form of helm and tools/plan.py, and no password in any output."""
from __future__ import annotations

import json
import re
import subprocess

import pytest

from ci.generate import schema as gen_schema
from tests.helpers import (CHART_DIR, NAMESPACE, RELEASE_NAME, Refusal, assert_refused, refusal_params, render_error)
from tools.gptoss import plan as plan_tool

PASSWORD = "Pa55w0rd-h55a"
CREDENTIALS = ("has credentials in it (user:password@): they would be stored in plain text in the release and in every "
               "object that carries the URL; allowed: the URL without them (a proxy that needs them: "
               "modelCache.proxy.existingSecret, a Secret holding the whole URL)")
MASKED = "; shown with credentials, query and fragment masked (***): no error quotes a password"

URL_REFUSALS = [
    Refusal("proxy-with-a-path", "agg.yaml", {"modelCache": {"proxy": {"httpsProxy": f"http://user:{PASSWORD}@proxy:3128/x?t=1"}}},
            'not a URL of the form its key takes: modelCache.proxy.httpsProxy="http://***@proxy:3128/x?***" (allowed: '
            "empty, or http(s)://host[:port] without a path)" + MASKED),
    Refusal("unparseable-host", "agg.yaml", {"modelCache": {"huggingface": {"endpoint": f"https://u:{PASSWORD}@[::1"}}},
            'not a URL of the form its key takes: modelCache.huggingface.endpoint="https://***@[::1" (allowed: empty, or '
            "http(s)://host[:port][/path])" + MASKED, extra=True),
    Refusal("no-scheme", "agg.yaml", {"planner": {"prometheusEndpoint": f"u:{PASSWORD}@prometheus:9090"}},
            'not a URL of the form its key takes: planner.prometheusEndpoint="***@prometheus:9090" (allowed: '
            "http(s)://host[:port][/path])" + MASKED, extra=True),
    Refusal("proxy-with-credentials", "agg.yaml",
            {"modelCache": {"proxy": {"httpsProxy": "http://user:secret@proxy.example.com:3128"}}},
            "modelCache.proxy.httpsProxy=http://***@proxy.example.com:3128 " + CREDENTIALS),
    # Before the rule came first, the mirror rules of gpt-oss.checkValues.modelSource quoted it whole.
    Refusal("mirror-with-credentials", "agg.yaml", {"modelCache": {"huggingface": {"endpoint": f"http://u:{PASSWORD}@m.example"}}},
            "modelCache.huggingface.endpoint=http://***@m.example has credentials in it", extra=True),
]
REFUSALS = {"urls": URL_REFUSALS}


@pytest.mark.parametrize("case", refusal_params(REFUSALS))
def test_should_refuse_with_a_masked_message(case):
    assert_refused(case)
    assert PASSWORD not in render_error(case.overlay, case.values)


def url_values(bad: bool) -> dict[str, str]:
    """A URL with credentials for every URL key: of the form the key takes (the credentials rule refuses it), or
    `bad`, with a space in its path (the form rule refuses it)."""
    found = {}
    for key in gen_schema.URL_KEYS:
        base = f"https://user:{PASSWORD}@host.example:8443"
        found[key] = f"{base}/a b" if bad else base if key.endswith(("Proxy", "s3.endpoint")) else \
            f"{base}/enc/o200k_base.tiktoken"
    return found


def nested(flat: dict[str, str]) -> dict:
    tree: dict = {}
    for key, value in flat.items():
        *parents, leaf = key.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return tree


def as_options(form: str, flat: dict[str, str], folder) -> list[str]:
    """Helm's options giving every key its value in one input form."""
    if form in ("set", "set-string"):
        return [f"--{form}", ",".join(f"{key}={value}" for key, value in flat.items())]
    if form == "set-json":
        return ["--set-json", json.dumps(nested(flat))]
    if form.startswith("set-file"):
        options = []
        for index, (key, value) in enumerate(flat.items()):
            path = folder / f"url-{index}.txt"
            path.write_text(value + ("\n" if form == "set-file-newline" else ""))
            options += ["--set-file", f"{key}={path}"]
        return options
    path = folder / "values.yaml"
    path.write_text(json.dumps(nested(flat)))  # JSON is YAML
    return ["-f", str(path)]


def block_file(flat: dict[str, str]) -> str:
    """The values as one YAML file whose URLs are block scalars (`|`), each keeping its line feed as --set-file does."""
    def write(node: dict, depth: int) -> list[str]:
        out = []
        for key, value in node.items():
            if isinstance(value, dict):
                out += [f"{'  ' * depth}{key}:", *write(value, depth + 1)]
            else:
                out += [f"{'  ' * depth}{key}: |", f"{'  ' * (depth + 1)}{value}"]
        return out
    return "\n".join(write(nested(flat), 0)) + "\n"


FORMS = ["set", "set-string", "set-json", "set-file", "set-file-newline", "values", "values-block"]
# (form, bad): what refuses it, and the words naming each key there.
CASES = [(form, bad) for form in FORMS for bad in (False, True)]


def expected_names(form: str) -> list[str]:
    """How the refusal names each key: the schema's pointer for a URL with a line feed (its `not` quotes nothing),
    else the key, in the form or credentials message."""
    if form in ("set-file-newline", "values-block"):
        return [f"at '/{key.replace('.', '/')}': 'not' failed" for key in gen_schema.URL_KEYS]
    return [f"{key}=" for key in gen_schema.URL_KEYS]


def options(form: str, bad: bool, folder) -> list[str]:
    flat = url_values(bad)
    if form == "values-block":
        path = folder / "values.yaml"
        path.write_text(block_file(flat))
        return ["-f", str(path)]
    return as_options(form, flat, folder)


class TestEveryKeyThroughEveryForm:
    def test_should_check_the_keys_the_generator_leaves_without_patterns(self):
        schema = json.loads((CHART_DIR / "values.schema.json").read_text())
        for key in gen_schema.URL_KEYS:
            node = schema
            for part in key.split("."):
                node = node["properties"][part]
            assert not {"pattern", "format", "const", "allOf"} & node.keys(), key
            assert node["not"] == {"pattern": gen_schema.CONTROL}, key
        # and the chart's rule names exactly these keys (one render, every key with credentials)
        error = render_error("agg.yaml", nested(url_values(False)))
        named = set(re.findall(r"([\w.]+)=https://\*\*\*@host\.example:8443", error))
        assert named == set(gen_schema.URL_KEYS), error

    @pytest.mark.parametrize("form,bad", CASES, ids=[f"{f}-{'bad-form' if b else 'credentials'}" for f, b in CASES])
    def test_should_print_no_password_from_tools_plan(self, form, bad, tmp_path, capsys):
        status = plan_tool.main(["-f", "values/agg.yaml", *options(form, bad, tmp_path)])
        out, err = capsys.readouterr()
        assert status == 1, (out, err)
        assert PASSWORD not in out + err
        missing = [name for name in expected_names(form) if name not in err]
        assert not missing, err

    @pytest.mark.parametrize("form,bad", CASES, ids=[f"{f}-{'bad-form' if b else 'credentials'}" for f, b in CASES])
    def test_should_print_no_password_from_the_helm_cli(self, helm, form, bad, tmp_path):
        result = subprocess.run([helm, "template", RELEASE_NAME, str(CHART_DIR), "-n", NAMESPACE, "-f",
                                 str(CHART_DIR.parents[1] / "values" / "agg.yaml"), *options(form, bad, tmp_path)],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 1, result.stdout[-2000:]
        output = result.stdout + result.stderr
        assert PASSWORD not in output
        missing = [name for name in expected_names(form) if name not in result.stderr]
        assert not missing, result.stderr


@pytest.fixture(scope="module")
def helm() -> str:
    from ci.cluster import go_parts
    from tests.helpers import skip_for_missing_part
    folder = go_parts.built("helm")
    if folder is None:
        skip_for_missing_part("the helm CLI is not built: python -m ci.cluster go-parts build helm")
    return str(folder / "helm")
