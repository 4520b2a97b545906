"""tools/: Helm's values options, --manifests in `helm template`'s order, one-line errors, and tools standing alone.

Helm itself is the reference where it can be: helm-python-sdk binds Helm v4's strvals parsers and its client-side
dry-run install, whose release manifest is what `helm template` prints before the hooks.
"""
from __future__ import annotations

import ast
import collections
import importlib.util
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import helm_python
import pytest
import yaml

from tests.helpers import NETWORK_POLICY_ON, OVERLAYS, PROMETHEUS_PEERS, REPO_ROOT, load_chart, load_values, render_chart, render_manifests
from tools.gptoss.manifests import template_output
from tools.gptoss.values import ValuesError, merge_values

TOOLS = REPO_ROOT / "tools"
CI = REPO_ROOT / "ci"
CHECK_VALUES_AT = "execution error at (gpt-oss/templates/validation/check-values.yaml:4:4): "


Result = collections.namedtuple("Result", "returncode stdout stderr")


@pytest.fixture
def run_tool(capsys, monkeypatch):
    """Run tools/<tool>.py's main() (tools/gptoss/<tool>.py) in this process (renders are memoized), from the repository
    root."""
    monkeypatch.chdir(REPO_ROOT)

    def run(*args: str, tool: str = "plan") -> Result:
        code = importlib.import_module(f"tools.gptoss.{tool}").main(list(args))
        out, err = capsys.readouterr()
        return Result(code, out, err)
    return run


def run_script(*args: str, cwd=REPO_ROOT) -> subprocess.CompletedProcess:
    """tools/plan.py as a user runs it, in its own process."""
    return subprocess.run([sys.executable, str(cwd / "tools" / "plan.py"), *args], capture_output=True, text=True,
                          cwd=cwd)


def merged(base: dict, **options) -> dict:
    """merge_values of `base` (as a values file would give it) and --set* options, e.g. set_values=["a.b=1"]."""
    return merge_values(set_json=[json.dumps(base), *options.pop("set_json", [])], **options)


class TestSetSyntax:
    # Helm parses every --set* (helm-python-sdk's strvals bindings); these are what tools/gptoss/values.py adds:
    # parsing into the values merged so far (strvals.ParseInto), and Helm's order of the options. The expected
    # values are Helm's: pkg/strvals' TestParseInto and the helm CLI (tests/chart/test_helm_cli.py compares more cases).
    def test_should_type_scalars_like_helm(self):
        values = merged({}, set_values=["a=true,b=null,c=0,d=10,e=012,f=1.5,g=-3"])
        assert values == {"a": True, "b": None, "c": 0, "d": 10, "e": "012", "f": "1.5", "g": -3}

    def test_should_parse_into_the_values_already_merged(self):
        # Helm's pkg/strvals TestParseInto, first case: existing keys stay, named ones are replaced.
        values = merged({"outer": {"inner1": "overwrite", "inner2": "value2"}},
                        set_values=["outer.inner1=value1,outer.inner3=value3,outer.inner4=4"])
        assert values == {"outer": {"inner1": "value1", "inner2": "value2", "inner3": "value3", "inner4": 4}}
        # An index into a list a file gave keeps the file's other items, and the other keys of the item it names.
        values = merged({"hosts": [{"host": "a.example.com"}, {"host": "b.example.com", "paths": ["/"]}]},
                        set_values=["hosts[1].host=c.example.com"])
        assert values == {"hosts": [{"host": "a.example.com"}, {"host": "c.example.com", "paths": ["/"]}]}

    def test_should_keep_what_strvals_cannot_write(self):
        # Empty maps and lists, the key "", nulls, keys with the characters strvals escapes: untouched, unchanged.
        base = {"m": {}, "l": [], "": {"x": 1}, "n": [None, {"a.b,c=d[0]": "v"}], "k": {"e": {}}}
        assert merged(base, set_values=["k.f=1"]) == {**base, "k": {"e": {}, "f": 1}}
        assert merged(base, set_string=["l[1]=x,m.a=b"]) == {**base, "l": [None, "x"], "m": {"a": "b"}}
        assert merged(base, set_json=['n[0][1]={"j":2}']) == {**base, "n": [[None, {"j": 2}], {"a.b,c=d[0]": "v"}]}

    @pytest.mark.parametrize("option,flag,line", [("set_values", "--set", "a.b=1"), ("set_values", "--set", "m[0]=1"),
                                                  ("set_string", "--set-string", "l.x=1"),
                                                  ("set_values", "--set", "s[0]=1")])
    def test_should_refuse_a_path_through_a_value_of_another_kind(self, option, flag, line):
        # Helm's ParseInto panics on the type assertion and reports it; a scalar is named a string here.
        base = {"a": "text", "m": {"k": 1}, "l": [1], "s": True}
        with pytest.raises(ValuesError) as refused:
            merged(base, **{option: [line]})
        assert str(refused.value).startswith(
            f"failed parsing {flag} data: unable to parse key: interface conversion: interface {{}} is "), refused.value

    def test_should_read_set_file_values_from_files(self, tmp_path):
        (tmp_path / "note.txt").write_text("line 1\nline 2\n")
        values = merged({"l": ["a", "b"]}, set_file=[f"l[1]={tmp_path / 'note.txt'},m={tmp_path / 'note.txt'}"])
        assert values == {"l": ["a", "line 1\nline 2\n"], "m": "line 1\nline 2\n"}
        with pytest.raises(ValuesError) as refused:
            merged({}, set_file=[f"m={tmp_path / 'nope.txt'}"])
        assert str(refused.value) == (f"failed parsing --set-file data: open {tmp_path / 'nope.txt'}: no such file "
                                      "or directory")

    def test_should_merge_files_then_set_json_then_set_then_set_string_then_set_file(self, tmp_path):
        first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
        first.write_text("a: {p: file1, q: file1, r: file1, s: file1}\nlist: [1, 2]\n")
        second.write_text("a: {q: file2}\n")
        (tmp_path / "u.txt").write_text("file")
        values = merge_values([str(first), str(second)], set_json=['{"a": {"r": "json", "s": "json"}}'],
                              set_values=["a.s=set", "a.v=7"], set_string=["a.v=7,a.u=s"],
                              set_file=[f"a.u={tmp_path / 'u.txt'}"])
        assert values == {"a": {"p": "file1", "q": "file2", "r": "json", "s": "set", "v": "7", "u": "file"},
                          "list": [1, 2]}

    def test_should_take_set_for_itself(self, run_tool):
        # The issue's command: argparse took --set for an abbreviation of --set-json and printed a traceback.
        result = run_tool("--set", "gpu.type=B200")
        assert (result.returncode, result.stderr) == (0, "")
        assert "on nodes kubernetes.io/arch=amd64, nvidia.com/gpu.product=NVIDIA-B200" in result.stdout

    def test_should_apply_set_after_set_json_whatever_their_order(self, run_tool):
        result = run_tool("-f", "values/agg.yaml", "--set", "benchmark.concurrency=100",
                          "--set-json", '{"benchmark": {"concurrency": 200}}')
        assert result.returncode == 0, result.stderr
        assert "concurrency 100, 1000 requests" in result.stdout

    def test_should_remove_a_key_with_null(self, run_tool):
        result = run_tool("-f", "values/disagg-k8s.yaml", "--set", "benchmark.concurrency=null")
        assert "concurrency 1280, 12800 requests" in result.stdout

    def test_should_keep_set_string_values_strings(self, run_tool):
        result = run_tool("-f", "values/agg.yaml", "--set-string", "benchmark.concurrency=100")
        assert result.returncode == 1
        assert "- at '/benchmark/concurrency': got string, want null or integer" in result.stderr

    def test_should_read_comma_separated_files_and_the_older_positional_form(self, run_tool):
        both = run_tool("-f", "values/disagg-k8s.yaml,values/disagg-k8s-balanced.yaml")
        older = run_tool("values/disagg-k8s.yaml", "values/disagg-k8s-balanced.yaml")
        assert both.returncode == older.returncode == 0
        assert both.stdout == older.stdout
        assert "2 pod(s) x 1 GPU(s)" in both.stdout  # the balanced overlay, applied last, wins

    def test_should_take_an_overlay_by_its_name(self, run_tool):
        # The library finds `agg.yaml` in values/ (render_chart(["agg.yaml"])); the command line does the same.
        by_name, by_path = run_tool("-f", "agg.yaml"), run_tool("-f", "values/agg.yaml")
        assert (by_name.returncode, by_name.stderr) == (0, "")
        assert by_name.stdout == by_path.stdout and "4 GPUs in total" in by_name.stdout

    def test_should_read_values_from_standard_input(self, run_tool, monkeypatch):
        monkeypatch.setattr(sys, "stdin", io.StringIO("benchmark:\n  concurrency: 100\n"))
        result = run_tool("-f", "values/agg.yaml", "-f", "-")
        assert "concurrency 100, 1000 requests" in result.stdout

    def test_should_render_the_release_and_namespace_given(self, run_tool):
        result = run_tool("demo", "-f", "values/agg.yaml", "-n", "inference")
        assert result.returncode == 0, result.stderr
        # The chart's fullname: <release>-gpt-oss unless the release name holds "gpt-oss".
        assert "DynamoGraphDeployment demo-gpt-oss (nvidia.com/v1beta1)" in result.stdout
        assert "Reach: kubectl port-forward -n inference svc/demo-gpt-oss-frontend 8000:8000" in result.stdout
        assert "--url http://demo-gpt-oss-frontend.inference.svc:8000" in result.stdout
        assert "`helm test demo -n inference --filter name=demo-gpt-oss-benchmark`" in result.stdout
        # Arguments in any order, as Helm takes them.
        assert run_tool("values/agg.yaml", "-n", "inference", "demo").stdout == result.stdout


OVERLAYS_ARE = f"; the overlays, which -f also takes by name, are in values/: {', '.join(OVERLAYS)}"
# (id, arguments, exit code, the exact first and only line on stderr)
BAD_INPUT = [
    ("missing-file", ["-f", "values/nope.yaml"], 2,
     f"Error: open values/nope.yaml: no such file or directory{OVERLAYS_ARE}"),
    ("missing-file-positional", ["values/values/x.yaml"], 2,
     f"Error: open values/values/x.yaml: no such file or directory{OVERLAYS_ARE}"),
    ("missing-overlay", ["-f", "ag.yaml"], 2, f"Error: open ag.yaml: no such file or directory{OVERLAYS_ARE}"),
    ("set-without-value", ["-f", "values/agg.yaml", "--set", "gpu.type"], 2,
     'Error: failed parsing --set data: key "type" has no value'),
    ("set-bad-index", ["--set", "ingress.hosts[x].host=a"], 2,
     'Error: failed parsing --set data: error parsing index: strconv.Atoi: parsing "x": invalid syntax'),
    ("set-string-unterminated-list", ["--set-string", "a={x,y"], 2,
     "Error: failed parsing --set-string data: list must terminate with '}'"),
    ("set-json-single-quoted", ["-f", "values/agg.yaml", "--set-json", "{'gpu': {'type': 'H100'}}"], 2,
     "Error: failed parsing --set-json data JSON: {'gpu': {'type': 'H100'}}"),
    ("set-json-pair-not-json", ["--set-json", "gpu.type=H100"], 2, "Error: failed parsing --set-json data gpu.type=H100"),
    ("unknown-option", ["-f", "values/agg.yaml", "--bogus"], 2, "Error: unrecognized arguments: --bogus"),
    ("no-abbreviations", ["-f", "values/agg.yaml", "--manif"], 2, "Error: unrecognized arguments: --manif"),
    ("option-without-argument", ["-f"], 2, "Error: argument -f/--values: expected one argument"),
    ("predict-and-manifests", ["--predict", "--manifests"], 2,
     "Error: argument --manifests: not allowed with argument --predict"),
    ("bad-release-name", ["Bad_Name"], 2,
     r"Error: invalid release name 'Bad_Name', must match regex ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ "
     "and the length must not be longer than 53"),
    ("two-release-names", ["one", "two"], 2,
     "Error: expected at most one release name, got one, two (values files go after -f)"),
    ("bad-namespace", ["-n", "LLM"], 2,
     "Error: invalid namespace 'LLM': lowercase letters, digits and '-', starting and ending with a letter or digit, "
     "at most 63 characters"),
    # The chart refuses: its message, exit code 1.
    ("chart-refuses", ["-f", "values/agg.yaml", "--set", "gpu.nodeArch=amd64"], 1,
     f"Error: {CHECK_VALUES_AT}gpu.type=GB200 runs only on ARM64 (Grace) nodes, but gpu.nodeArch=amd64; "
     "allowed: gpu.nodeArch=arm64"),
    ("chart-refuses-ingress", ["-f", "values/agg.yaml", "--set", "ingress.enabled=true"], 1,
     f"Error: {CHECK_VALUES_AT}ingress.enabled=true needs at least one ingress.hosts entry ({{host, paths: [{{path: /, "
     "pathType: Prefix}]}): an Ingress without a host rule would take every host of its class; set ingress.hosts, or "
     "ingress.enabled=false"),
]


class TestErrors:
    @pytest.mark.parametrize("args,code,line", [c[1:] for c in BAD_INPUT], ids=[c[0] for c in BAD_INPUT])
    def test_should_say_what_is_wrong_in_one_line(self, args, code, line, run_tool):
        result = run_tool(*args)
        assert (result.returncode, result.stderr) == (code, line + "\n")
        assert result.stdout == ""

    def test_should_print_one_line_and_no_traceback_from_its_own_process(self):
        # The issue's case: --set taken for --set-json gave a 16-line traceback.
        result = run_script("-f", "values/agg.yaml", "--set", "gpu.type")
        assert (result.returncode, result.stderr) == (2, 'Error: failed parsing --set data: key "type" has no value\n')

    @pytest.mark.parametrize("script", ["plan.py", "predict.py"])
    def test_should_name_the_set_up_command_outside_the_venv(self, script):
        """python3 tools/plan.py with an interpreter that has none of the project's packages (-S: no site-packages)."""
        result = subprocess.run([sys.executable, "-S", str(TOOLS / script), "-f", "values/agg.yaml"], cwd=REPO_ROOT,
                                capture_output=True, text=True, timeout=60)
        assert (result.returncode, result.stdout) == (2, "")
        assert result.stderr.startswith(f"Error: {sys.executable} has no module ") and result.stderr.count("\n") == 1
        assert result.stderr.endswith(f"set up the project's venv once (python3 -m venv .venv && .venv/bin/pip install "
                                      f"-r requirements-test.txt) and run .venv/bin/python tools/{script}\n")

    def test_should_refuse_bad_files_in_one_line_as_helm_does(self, tmp_path, run_tool):
        (tmp_path / "broken.yaml").write_text("a: [\n")
        (tmp_path / "list.yaml").write_text("- a\n")
        broken = run_tool("-f", str(tmp_path / "broken.yaml"))
        listed = run_tool("-f", str(tmp_path / "list.yaml"))
        # helm template's own lines (v4.2.3)
        assert (broken.returncode, broken.stderr) == (
            2, f"Error: failed to parse {tmp_path / 'broken.yaml'}: cannot unmarshal yaml document: error converting "
               "YAML to JSON: yaml: line 1: did not find expected node content\n")
        assert (listed.returncode, listed.stderr) == (
            2, f"Error: failed to parse {tmp_path / 'list.yaml'}: cannot unmarshal yaml document: error unmarshaling "
               "JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface "
               "{}\n")

    def test_should_refuse_a_values_file_that_is_not_utf8_in_one_line(self, tmp_path):
        (tmp_path / "latin1.yaml").write_bytes(b"gpu:\n  type: \"\xe9\"\n")
        result = run_script("-f", str(tmp_path / "latin1.yaml"))
        assert (result.returncode, result.stderr) == (  # helm template's line
            2, f"Error: failed to parse {tmp_path / 'latin1.yaml'}: cannot unmarshal yaml document: error converting "
               "YAML to JSON: yaml: invalid trailing UTF-8 octet\n")

    def test_should_end_quietly_when_its_reader_closes_the_pipe(self):
        # `plan.py | head -1`, three times: a closed pipe is the reader's choice, not an error.
        for _ in range(3):
            shell = subprocess.run(f"{sys.executable} tools/plan.py -f values/agg.yaml | head -1", shell=True,
                                   capture_output=True, text=True, cwd=REPO_ROOT)
            assert shell.stderr == "" and len(shell.stdout.splitlines()) == 1, shell.stderr

    def test_should_give_the_schema_message_with_exit_code_1(self, run_tool):
        result = run_tool("-f", "values/agg.yaml", "--set", "gpu.type=A100")
        assert result.returncode == 1
        assert result.stderr.splitlines()[0] == (
            "Error: values don't meet the specifications of the schema(s) in the following chart(s):")
        assert "Traceback" not in result.stderr

    def test_should_name_set_string_for_a_value_set_typed_where_a_string_is_wanted(self, run_tool):
        # Issue 53, item 7: an S3 prefix of digits --set types as a number cannot be taken (it is a path, and 2024 could
        # be 02024); the refusal names the form that works.
        result = run_tool("-f", "values/agg.yaml", "--set", "modelCache.s3.prefix=2024")
        assert result.returncode == 1
        assert result.stderr.splitlines()[-2:] == [
            "- at '/modelCache/s3/prefix': got number, want string",
            "hint: modelCache.s3.prefix: --set types true, false, null and integers; --set-string "
            "modelCache.s3.prefix=<value> gives the string it wants (or quote it in a values file)"]

    def test_should_name_set_json_for_a_string_where_a_number_is_wanted(self, run_tool):
        result = run_tool("-f", "values/agg.yaml", "--set-string", "benchmark.concurrency=100")
        assert result.returncode == 1
        assert result.stderr.splitlines()[-1] == (
            "hint: benchmark.concurrency: --set-string, a quoted YAML value and --set of a decimal (3.00) give "
            "strings; --set-json benchmark.concurrency=<value> gives the integer it wants")

    def test_should_add_no_hint_to_another_schema_error(self, run_tool):
        result = run_tool("-f", "values/agg.yaml", "--set", "gpu.type=A100")
        assert "hint:" not in result.stderr and result.stderr.endswith("'H200', 'H100'\n\n")

    def test_should_spell_the_key_as_set_names_it(self):
        from tools.gptoss.cli import _set_key
        assert _set_key("/ingress/annotations/nginx.ingress.kubernetes.io~1rewrite-target") == (
            "ingress.annotations.nginx\\.ingress\\.kubernetes\\.io/rewrite-target")
        assert _set_key("/exposure/ingress/hosts/0/host") == "exposure.ingress.hosts[0].host"

    @pytest.mark.extras  # its message depends on whether aiconfigurator is installed
    def test_should_refuse_a_prediction_it_cannot_make_in_one_line(self, run_tool):
        result = run_tool("-f", "values/agg.yaml", "--set", "benchmark.enabled=false", "--predict")
        expected = ("Error: the benchmark Job is not rendered (benchmark.enabled=false): no workload to predict"
                    if importlib.util.find_spec("aiconfigurator") else
                    "Error: --predict needs aiconfigurator: pip install -r requirements-predict.txt (No module named "
                    "'aiconfigurator')")
        assert (result.returncode, result.stderr) == (2, expected + "\n")

    def test_should_share_the_options_with_predict(self, run_tool):
        result = run_tool("-f", "values/agg.yaml", "--set", "a", tool="predict")
        assert (result.returncode, result.stderr) == (2, 'Error: failed parsing --set data: key "a" has no value\n')


# The alias bomb of issue 44: 342 bytes that expand to 9^9 strings in a parser without an alias limit.
ALIAS_BOMB = "".join(f"{name}: &{name} [{','.join([item] * 9)}]\n" for name, item in
                     zip("abcdefghi", ['"lol"', *(f"*{previous}" for previous in "abcdefgh")]))


def nested(depth: int) -> str:
    """A values document `depth` maps deep."""
    return "k: " + "{k: " * (depth - 1) + "1" + "}" * (depth - 1) + "\n"


def limited(memory_bytes: int):
    """A preexec_fn that caps the child's address space (the Go runtime of helm-python-sdk reserves about 0.9 GiB)."""
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    return apply


class TestHostileValues:
    # Issue 44: values files and arguments from anywhere. Each is read as Helm reads it (its loader and parsers,
    # through helm-python-sdk) and ends in the plan, Helm's refusal, or one `Error:` line with exit code 2.
    def test_should_refuse_the_alias_bomb_within_bounded_memory_and_time(self, tmp_path):
        bomb = tmp_path / "bomb.yaml"
        bomb.write_text(ALIAS_BOMB)
        assert bomb.stat().st_size == 342
        started = time.monotonic()
        result = subprocess.run([sys.executable, str(TOOLS / "plan.py"), "-f", str(bomb)], capture_output=True,
                                text=True, cwd=REPO_ROOT, timeout=60, preexec_fn=limited(2 << 30))
        assert (result.returncode, result.stderr) == (2, f"Error: failed to parse {bomb}: cannot unmarshal yaml "
                                                         "document: error converting YAML to JSON: yaml: document "
                                                         "contains excessive aliasing\n")
        assert time.monotonic() - started < 30

    def test_should_merge_the_documents_of_a_file_as_helm_does(self, tmp_path, run_tool):
        # loader.LoadValues: documents split at `---` lines (a comment may follow), merged in order.
        (tmp_path / "two.yaml").write_text("---\nbenchmark:\n  concurrency: 50\n  requestCountMultiplier: 2\n"
                                           "--- # the second document\nbenchmark:\n  concurrency: 100\n")
        result = run_tool("-f", "values/agg.yaml", "-f", str(tmp_path / "two.yaml"))
        assert (result.returncode, result.stderr) == (0, "")
        assert "concurrency 100, 200 requests" in result.stdout

    def test_should_read_dates_integer_keys_and_binary_as_helm_renders_them(self, tmp_path, run_tool):
        (tmp_path / "scalars.yaml").write_text("monitoring:\n  dashboard:\n    enabled: true\n    annotations:\n"
                                               "      released: 2024-01-01\n      7: seven\n"
                                               "      blob: !!binary aGVsbG8=\n")
        result = run_tool("-f", "values/agg.yaml", "-f", str(tmp_path / "scalars.yaml"), "--manifests")
        assert (result.returncode, result.stderr) == (0, "")
        dashboard = next(doc for doc in yaml.safe_load_all(result.stdout)
                         if doc and doc["kind"] == "ConfigMap" and "dashboard" in doc["metadata"]["name"])
        # What helm template v4.2.3 renders for this file: YAML 1.1 read to JSON, scalars as strings.
        assert dashboard["metadata"]["annotations"] == {"released": "2024-01-01", "7": "seven", "blob": "hello"}

    @pytest.mark.parametrize("text,message", [
        ("~: 1\n", "cannot unmarshal yaml document: error converting YAML to JSON: unsupported map key of type: "
                   "%!s(<nil>), key: <nil>, value: 1"),
        ("a: 1\n--- a: 2\n", "error reading yaml document: invalid Yaml document separator: a: 2"),
        ("a: .nan\n", "cannot unmarshal yaml document: error converting YAML to JSON: json: unsupported value: NaN"),
        ("a: \"\x00\"\n", "cannot unmarshal yaml document: error converting YAML to JSON: yaml: control characters "
                           "are not allowed"),
    ], ids=["null-key", "separator-with-content", "not-a-number", "nul"])
    def test_should_refuse_what_helm_refuses_in_one_line(self, tmp_path, run_tool, text, message):
        (tmp_path / "refused.yaml").write_text(text)
        result = run_tool("-f", str(tmp_path / "refused.yaml"))
        assert (result.returncode, result.stderr, result.stdout) == (
            2, f"Error: failed to parse {tmp_path / 'refused.yaml'}: {message}\n", "")

    @pytest.mark.parametrize("how", ["file-150", "file-5000", "set-json-150", "set-index-5000"])
    def test_should_bound_the_nesting_in_one_line(self, tmp_path, run_tool, how):
        kind, depth = how.rsplit("-", 1)
        (tmp_path / "deep.yaml").write_text(nested(int(depth)))
        argument = {"file": ["-f", str(tmp_path / "deep.yaml")],
                    "set-json": ["--set-json", "a=" + "[" * int(depth) + "]" * int(depth)],
                    "set-index": ["--set", "a" + "[0]" * int(depth) + "=1"]}[kind]
        result = run_tool("-f", "values/agg.yaml", *argument)
        where = {"file": f"failed to parse {tmp_path / 'deep.yaml'}: ",
                 "set-json": f"failed parsing --set-json data {argument[1]}: ",
                 "set-index": "failed parsing --set data: "}
        assert (result.returncode, result.stderr) == (2, f"Error: {where[kind]}values nested deeper than 100 levels\n")

    @pytest.mark.parametrize("source", ["large-file", "dev-zero", "standard-input"])
    def test_should_bound_the_size_of_a_file_in_one_line(self, tmp_path, run_tool, source, monkeypatch):
        path = tmp_path / "large.yaml" if source == "large-file" else Path("/dev/zero")
        if source == "large-file":
            path.write_text("a: " + "x" * (1 << 20) + "\n")
        if source == "standard-input":  # `-f -`: read, at most 1 MiB + 1 byte of it
            monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"a: " + b"x" * (1 << 20) + b"\n")))
        result = run_tool("-f", "-" if source == "standard-input" else str(path))
        allowed = "allowed: a regular file of at most 1 MiB (1048576 bytes), or - for standard input"
        # A file is refused by its os.stat, before it is opened (tests/tools/test_tool_inputs.py: FIFOs and others).
        expected = {"large-file": f"values file {path}: 1048580 bytes, larger than 1 MiB (1048576 bytes), the most "
                                  f"this file may hold here; {allowed}",
                    "dev-zero": f"values file {path}: a character device, not a regular file: reading it may wait "
                                f"forever or never end; {allowed}",
                    "standard-input": "failed to parse -: larger than 1048576 bytes, the most a values file may hold "
                                      "here"}[source]
        assert (result.returncode, result.stderr) == (2, f"Error: {expected}\n")

    def test_should_refuse_an_argument_that_is_not_utf8_in_one_line(self, run_tool):
        # Python hands a byte that is not UTF-8 in argv over as a surrogate (os.fsdecode(b"a=\xff")).
        result = run_tool("--set", os.fsdecode(b"a=\xff"))
        assert (result.returncode, result.stderr) == (2, "Error: failed parsing --set data: not UTF-8 (byte 0xff at "
                                                         "offset 2)\n")

    def test_should_keep_its_exit_status_when_the_reader_leaves(self):
        # The plan is written, then the prediction is refused (no benchmark): the reader's pipe is already closed.
        process = subprocess.Popen([sys.executable, str(TOOLS / "plan.py"), "-f", "values/agg.yaml", "--set",
                                    "benchmark.enabled=false", "--predict"], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        process.stdout.close()
        stderr = process.stderr.read()
        assert process.wait(timeout=120) == 2
        assert stderr.startswith("Error: ") and len(stderr.splitlines()) == 1, stderr


def helm_release_manifest(overlay: str, values: dict) -> str:
    """Helm's own sorted manifests: a client-side dry-run install (what `helm template` prints before the hooks)."""
    config = helm_python.Config(storage_driver="memory", kube_apiserver="https://127.0.0.1:1", namespace="llm")
    release = config.install(load_chart(), "gpt-oss", load_values([overlay], values), namespace="llm", dry_run="client")
    return release["manifest"]


EVERY_KIND = {"ingress": {"enabled": True, "hosts": [{"host": "a.example.com", "paths": [{"path": "/", "pathType": "Prefix"}]}]},
              "networkPolicy": {**NETWORK_POLICY_ON, "prometheus": {"to": PROMETHEUS_PEERS}},
              "planner": {"enabled": True, "rbac": {"create": True}},
              "frontend": {"autoscaling": {"enabled": True, "scaler": "hpa"}}}


class TestManifests:
    @pytest.mark.parametrize("overlay,values", [(o, {}) for o in OVERLAYS] + [("disagg-k8s.yaml", EVERY_KIND)],
                             ids=OVERLAYS + ["disagg-k8s-every-kind"])
    def test_should_print_the_manifests_helm_prints(self, overlay, values):
        ours = template_output(render_manifests([overlay], values))
        helms = helm_release_manifest(overlay, values).strip() + "\n"
        assert ours.startswith(helms)
        assert ours[len(helms):].startswith("---\n# Source: gpt-oss/templates/smoke-test/pod.yaml\n")

    def test_should_order_by_kind_as_helm_installs(self, run_tool):
        result = run_tool("-f", "values/agg.yaml", "--manifests")
        assert result.returncode == 0, result.stderr
        sources = [line.split("/", 2)[2] for line in result.stdout.splitlines() if line.startswith("# Source: ")]
        # PodDisruptionBudget, ConfigMap, PersistentVolumeClaim, Job (InstallOrder), then the DynamoGraphDeployment (a
        # kind Helm does not know: last); then the test hooks, Pod before Job.
        assert sources == ["disruption/poddisruptionbudget.yaml", "disruption/poddisruptionbudget.yaml",
                           "engine/configmap.yaml", "plan/configmap.yaml", "scripts/configmap.yaml",
                           "model-cache/persistentvolumeclaim.yaml", "model-cache/job.yaml",
                           "dynamo/dynamographdeployment.yaml", "smoke-test/pod.yaml", "benchmark/job.yaml"]
        printed = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
        key = lambda o: (o["kind"], o["metadata"]["name"])  # noqa: E731
        assert sorted(printed, key=key) == sorted(render_chart(["agg.yaml"]), key=key)


class TestStandAlone:
    @staticmethod
    def imports(path) -> set[str]:
        """The modules a file imports, a relative import as the absolute name in the checkout (tools.gptoss.x)."""
        package = path.relative_to(REPO_ROOT).parent.parts
        names = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level:
                base = ".".join(package[:len(package) - node.level + 1])
                names |= ({f"{base}.{node.module}"} if node.module else {f"{base}.{a.name}" for a in node.names})
            elif isinstance(node, ast.ImportFrom):
                names.add(node.module)
        return names

    def test_should_never_import_from_tests(self):
        modules = {path.relative_to(REPO_ROOT).as_posix(): self.imports(path) for path in TOOLS.rglob("*.py")}
        assert len(modules) >= 10
        assert {path: sorted(n for n in names if n == "tests" or n.startswith("tests."))
                for path, names in modules.items()} == {path: [] for path in modules}

    def test_should_import_the_package_as_its_scripts_and_the_tests_name_it(self):
        # A script's folder is first on sys.path: tools/*.py import `gptoss`, and the package's modules import
        # each other relatively, so the same code is `gptoss` under a script and `tools.gptoss` under the tests.
        for path in TOOLS.rglob("*.py"):
            named = {n for n in self.imports(path) if n.split(".")[0] in ("tools", "gptoss")}
            if path.parent == TOOLS:
                assert named and all(n.split(".")[0] == "gptoss" for n in named), (path, named)
            else:
                source = path.read_text()
                assert "from tools." not in source and "import tools" not in source and "gptoss." not in "".join(
                    line for line in source.splitlines() if line.startswith(("from ", "import "))), path

    def test_should_import_without_a_cycle(self):
        graph = {}
        for path in (TOOLS / "gptoss").glob("*.py"):
            module = ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts)
            graph[module] = {n for n in self.imports(path) if n.startswith("tools.")}
        assert "tools.gptoss.plan" not in graph["tools.gptoss.predict"]
        assert "tools.gptoss.predict" in graph["tools.gptoss.plan"]

        def reaches(start, goal, seen=()):
            return any(n == goal or (n not in seen and reaches(n, goal, (*seen, n))) for n in graph.get(start, ()))
        assert [m for m in graph if reaches(m, m)] == []

    def test_should_edit_no_sys_path_and_load_no_file_by_path(self):
        # Programs run as `python tools/<name>.py` and `python -m ci.<room> <verb>`; nothing finds code by path.
        # Only a file whose text names them can hold such a node: the others are not parsed (a second of CPU).
        def nodes(folders, *names):
            for path in (path for folder in folders for path in folder.rglob("*.py")):
                text = path.read_text()
                if any(name in text for name in names):
                    yield from ((path, node) for node in ast.walk(ast.parse(text)))
        edits = [f"{path.relative_to(REPO_ROOT)}:{node.lineno}" for path, node in nodes((TOOLS, CI), "sys")
                 if isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name)
                 and node.value.id == "sys"]
        assert edits == []
        by_path = {"spec_from_file_location", "SourceFileLoader", "run_path", "load_source"}
        loads = [f"{path.relative_to(REPO_ROOT)}:{node.lineno}"
                 for path, node in nodes((TOOLS, CI, REPO_ROOT / "tests"), *by_path)
                 if isinstance(node, (ast.Attribute, ast.Name)) and getattr(node, "attr", getattr(node, "id", "")) in by_path]
        assert loads == []

    def test_should_run_each_ci_program_as_a_verb_of_its_room(self):
        # No command files and no __main__ blocks in the rooms' modules: each program is `python -m ci.<room> <verb>`,
        # its main called by the room's __main__.py. The stand-in is the one script: the node images run it as a file.
        assert sorted(path.name for path in CI.glob("*.py")) == ["__init__.py"]
        rooms = {room: importlib.import_module(f"ci.{room}.__main__") for room in ("cluster", "generate", "release")}
        verbs = {f"{room}:{verb}": module for room, entry in rooms.items() for verb, (module, _) in entry.VERBS.items()}
        assert len(verbs) >= 20
        for verb, module in verbs.items():
            assert callable(getattr(importlib.import_module(module), "main", None)), f"{verb}: {module} has no main"
        blocks = [path.relative_to(REPO_ROOT).as_posix() for path in CI.rglob("*.py")
                  if 'if __name__ == "__main__":' in path.read_text() and path.name != "__main__.py"]
        assert blocks == ["ci/cluster/stand_in.py"]
        result = subprocess.run([sys.executable, "-m", "ci.cluster", "go-parts", "--help"], capture_output=True,
                                text=True, cwd=REPO_ROOT, timeout=60)
        assert result.returncode == 0 and "{build,where,list}" in result.stdout, result.stderr

    def test_should_run_from_a_checkout_without_tests(self, tmp_path):
        for folder in ("charts", "values", "tools"):
            shutil.copytree(REPO_ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
        plan = run_script("-f", "values/agg.yaml", cwd=tmp_path)
        manifests = run_script("-f", "values/agg.yaml", "--manifests", cwd=tmp_path)
        assert plan.returncode == manifests.returncode == 0, plan.stderr + manifests.stderr
        assert "4 GPUs in total" in plan.stdout
        assert manifests.stdout.startswith("---\n# Source: gpt-oss/templates/disruption/poddisruptionbudget.yaml\n")
