"""tools/: Helm's values options, --manifests in `helm template`'s order, one-line errors, and tools standing alone.

Helm itself is the reference where it can be: helm-python-sdk binds Helm v4's strvals parsers and its client-side
dry-run install, whose release manifest is what `helm template` prints before the hooks.
"""
from __future__ import annotations

import ast
import collections
import importlib.util
import io
import shutil
import subprocess
import sys

import helm_python
import pytest
import yaml

from tests.helpers import OVERLAYS, REPO_ROOT, load_chart, load_values, render_chart, render_manifests
from tools.gptoss.manifests import template_output
from tools.gptoss.values import ValuesError, merge_values, parse_into, parse_into_string, parse_json

TOOLS = REPO_ROOT / "tools"
CHECK_VALUES_AT = "execution error at (gpt-oss/templates/validation/check-values.yaml:4:4): "


Result = collections.namedtuple("Result", "returncode stdout stderr")


@pytest.fixture
def run_tool(capsys, monkeypatch):
    """Run tools/<tool>.py's main() in this process (renders are memoized), from the repository root."""
    monkeypatch.chdir(REPO_ROOT)

    def run(*args: str, tool: str = "plan") -> Result:
        code = importlib.import_module(f"tools.{tool}").main(list(args))
        out, err = capsys.readouterr()
        return Result(code, out, err)
    return run


def run_script(*args: str, cwd=REPO_ROOT) -> subprocess.CompletedProcess:
    """tools/plan.py as a user runs it, in its own process."""
    return subprocess.run([sys.executable, str(cwd / "tools" / "plan.py"), *args], capture_output=True, text=True,
                          cwd=cwd)


# --set lines: each syntax Helm's strvals parser has, and its errors.
SET_LINES = [
    "a=b", "a.b=c", "a[0].b=c", "a={x,y}", "a=1,b=2", r"a=x\,y", r"a\.b=c", "a=true,b=FALSE,c=null,d=0,e=012,f=-5,g=1.5,h=",
    "a[0][1]=x", "a[0].b=c,a[1].d=e", "a=", "a={}", "a[1]=x", "a.b.c.d=1,a.b.e=2", "x={a,b},y=c", "a[0]", "a[0].b=",
    "a=b=c", "a={1,true,null}", "a=9223372036854775808", "a=+5", " a = b ", "a[2].b=1", r"a=b\\", "a[0]=1,a[0].b=2",
    # refused
    "a", "a,b=c", "a.=b", "a[x]=1", "a[-1]=1", "a[0]x=1", "a={x,y", "a.b", "a[70000]=1", "a=1,a.b=2", "a=1,a[0]=2",
    "a[0]=1,a[0][0]=2",
]
SET_JSON_LINES = ['a={"b":[1,2]}', 'a=1,b="x"', 'a=', 'a=,b=2', 'a=[1,2] , b=null', 'a[0]={"x":1}', 'a.b=true', 'a=  ',
                  'a[1]=', "a='x'", 'a=1b', 'a={"b":']


def _outcome(parse, line: str):
    """(True, values) or (False, message) of one parser on one line."""
    try:
        return True, parse(line)
    except (ValuesError, helm_python.HelmError) as error:
        return False, str(error)


def _ours(parser):
    def parse(line):
        values = {}
        parser(line, values)
        return values
    return parse


class TestSetSyntax:
    @pytest.mark.parametrize("line", SET_LINES)
    def test_should_parse_set_as_helm_does(self, line):
        assert _outcome(_ours(parse_into), line) == _outcome(helm_python.parse_set_string, line)

    @pytest.mark.parametrize("line", SET_LINES)
    def test_should_keep_strings_under_set_string_as_helm_does(self, line):
        assert _outcome(_ours(parse_into_string), line) == _outcome(helm_python.parse_set_string_values, line)

    @pytest.mark.parametrize("line", SET_JSON_LINES)
    def test_should_parse_set_json_pairs_as_helm_does(self, line):
        ours, helms = _outcome(_ours(parse_json), line), _outcome(helm_python.parse_set_json, line)
        # Helm replaces a JSON decoder's message with its own ("failed parsing --set-json data <line>").
        assert ours[0] == helms[0] and (not ours[0] or ours == helms)

    def test_should_type_scalars_like_helm(self):
        values = {}
        parse_into("a=true,b=null,c=0,d=10,e=012,f=1.5,g=-3", values)
        assert values == {"a": True, "b": None, "c": 0, "d": 10, "e": "012", "f": "1.5", "g": -3}

    def test_should_parse_into_the_values_already_merged(self):
        # Helm's pkg/strvals TestParseInto, first case: existing keys stay, named ones are replaced.
        values = {"outer": {"inner1": "overwrite", "inner2": "value2"}}
        parse_into("outer.inner1=value1,outer.inner3=value3,outer.inner4=4", values)
        assert values == {"outer": {"inner1": "value1", "inner2": "value2", "inner3": "value3", "inner4": 4}}
        # An index into a list a file gave keeps the file's other items.
        values = {"hosts": [{"host": "a.example.com"}, {"host": "b.example.com"}]}
        parse_into("hosts[1].host=c.example.com", values)
        assert values == {"hosts": [{"host": "a.example.com"}, {"host": "c.example.com"}]}

    def test_should_merge_files_then_set_json_then_set_then_set_string(self, tmp_path):
        first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
        first.write_text("a: {x: file1, y: file1, z: file1, w: file1}\nlist: [1, 2]\n")
        second.write_text("a: {y: file2}\n")
        values = merge_values([str(first), str(second)], set_json=['{"a": {"z": "json", "w": "json"}}'],
                              set_values=["a.w=set", "a.v=7"], set_string=["a.v=7"])
        assert values == {"a": {"x": "file1", "y": "file2", "z": "json", "w": "set", "v": "7"}, "list": [1, 2]}

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


# (id, arguments, exit code, the exact first and only line on stderr)
BAD_INPUT = [
    ("missing-file", ["-f", "values/nope.yaml"], 2, "Error: open values/nope.yaml: no such file or directory"),
    ("missing-file-positional", ["values/values/x.yaml"], 2, "Error: open values/values/x.yaml: no such file or directory"),
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

    def test_should_refuse_bad_files_in_one_line(self, tmp_path, run_tool):
        (tmp_path / "broken.yaml").write_text("a: [\n")
        (tmp_path / "list.yaml").write_text("- a\n")
        broken = run_tool("-f", str(tmp_path / "broken.yaml"))
        listed = run_tool("-f", str(tmp_path / "list.yaml"))
        assert (broken.returncode, broken.stderr) == (
            2, f"Error: failed to parse {tmp_path / 'broken.yaml'}: line 2: expected the node content, but found "
               "'<stream end>'\n")
        assert (listed.returncode, listed.stderr) == (
            2, f"Error: failed to parse {tmp_path / 'list.yaml'}: a values file is a YAML map, not a list\n")

    def test_should_refuse_a_values_file_that_is_not_utf8_in_one_line(self, tmp_path):
        (tmp_path / "latin1.yaml").write_bytes(b"gpu:\n  type: \"\xe9\"\n")
        result = run_script("-f", str(tmp_path / "latin1.yaml"))
        assert (result.returncode, result.stderr) == (
            2, f"Error: failed to parse {tmp_path / 'latin1.yaml'}: not UTF-8 (byte 0xe9 at offset 14)\n")

    def test_should_end_quietly_when_its_reader_closes_the_pipe(self):
        # `plan.py | head -1`, five times: a closed pipe is the reader's choice, not an error.
        for _ in range(5):
            shell = subprocess.run(f"{sys.executable} tools/plan.py -f values/agg.yaml | head -1", shell=True,
                                   capture_output=True, text=True, cwd=REPO_ROOT)
            assert shell.stderr == "" and len(shell.stdout.splitlines()) == 1, shell.stderr

    def test_should_give_the_schema_message_with_exit_code_1(self, run_tool):
        result = run_tool("-f", "values/agg.yaml", "--set", "gpu.type=A100")
        assert result.returncode == 1
        assert result.stderr.splitlines()[0] == (
            "Error: values don't meet the specifications of the schema(s) in the following chart(s):")
        assert "Traceback" not in result.stderr

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


def helm_release_manifest(overlay: str, values: dict) -> str:
    """Helm's own sorted manifests: a client-side dry-run install (what `helm template` prints before the hooks)."""
    config = helm_python.Config(storage_driver="memory", kube_apiserver="https://127.0.0.1:1", namespace="llm")
    release = config.install(load_chart(), "gpt-oss", load_values([overlay], values), namespace="llm", dry_run="client")
    return release["manifest"]


EVERY_KIND = {"ingress": {"enabled": True, "hosts": [{"host": "a.example.com", "paths": [{"path": "/", "pathType": "Prefix"}]}]},
              "networkPolicy": {"enabled": True}, "planner": {"enabled": True, "rbac": {"create": True}},
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
        tree = ast.parse(path.read_text())
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
        return names

    def test_should_never_import_from_tests(self):
        modules = {path.relative_to(REPO_ROOT).as_posix(): self.imports(path) for path in TOOLS.rglob("*.py")}
        assert len(modules) >= 8
        assert {path: sorted(n for n in names if n == "tests" or n.startswith("tests."))
                for path, names in modules.items()} == {path: [] for path in modules}

    def test_should_import_without_a_cycle(self):
        graph = {}
        for path in TOOLS.rglob("*.py"):
            module = ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts)
            graph[module] = {n for n in self.imports(path) if n.startswith("tools.")}
        assert "tools.plan" not in graph["tools.predict"]
        assert all(not names & {"tools.plan", "tools.predict"}
                   for module, names in graph.items() if module.startswith("tools.gptoss"))

        def reaches(start, goal, seen=()):
            return any(n == goal or (n not in seen and reaches(n, goal, (*seen, n))) for n in graph.get(start, ()))
        assert [m for m in graph if reaches(m, m)] == []

    def test_should_run_from_a_checkout_without_tests(self, tmp_path):
        for folder in ("charts", "values", "tools"):
            shutil.copytree(REPO_ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
        plan = run_script("-f", "values/agg.yaml", cwd=tmp_path)
        manifests = run_script("-f", "values/agg.yaml", "--manifests", cwd=tmp_path)
        assert plan.returncode == manifests.returncode == 0, plan.stderr + manifests.stderr
        assert "4 GPUs in total" in plan.stdout
        assert manifests.stdout.startswith("---\n# Source: gpt-oss/templates/disruption/poddisruptionbudget.yaml\n")
