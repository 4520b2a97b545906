"""The tests' helpers: `render_chart(values_files=..., values=..., show_only=...)` (the tests' API), the overlays, and
a few assertions. The values and the renders come from tools/gptoss (Helm's own parsers and engine)."""
from __future__ import annotations

import importlib.util
import itertools
import json
import os
import re
import subprocess
import tempfile
from typing import Any, Iterable, NamedTuple

import pytest

from tools.gptoss.objects import dgd_components, dgd_pods, dgd_workers, find, plan_document, plan_quantization  # noqa: F401,E501
from tools.gptoss.render import (CHART_DIR, NAMESPACE, RELEASE_NAME, ChartRenderError, load_chart,  # noqa: F401
                                 parse_manifests, render_key, render_manifests, render_notes)
from tools.gptoss.values import REPO_ROOT, VALUES_DIR, deep_copy, deep_merge, load_values, overlay_runtime, overlays  # noqa: F401,E501

# Every file of values/ is a parametrized case, its file name the id; and the runtime each selects.
OVERLAYS = overlays()
RUNTIMES = {name: overlay_runtime(name) for name in OVERLAYS}
DYNAMO_OVERLAYS = [name for name in OVERLAYS if RUNTIMES[name] == "dynamo"]
TRTLLM_SERVE_OVERLAYS = [name for name in OVERLAYS if RUNTIMES[name] == "trtllm-serve"]


# aiconfigurator (requirements-predict.txt), an optional extra: its tests skip without it.
HAVE_AICONFIGURATOR = importlib.util.find_spec("aiconfigurator") is not None
needs_aiconfigurator = pytest.mark.skipif(
    not HAVE_AICONFIGURATOR, reason="aiconfigurator is not installed (pip install -r requirements-predict.txt)")
PREDICTION_TOLERANCE = 0.03  # relative: the pinned model is deterministic, this only absorbs float noise across platforms


# The parsed objects of renders within one process, by merged values, release, namespace and show_only.
_objects_cache: dict[str, list[dict]] = {}


def render_chart(values_files=(), values=None, show_only: Iterable[str] | None = None,
                 name=RELEASE_NAME, namespace=NAMESPACE) -> list[dict]:
    """Render like `helm template` and return the parsed objects (a copy: callers may change them); raises
    ChartRenderError with Helm's message.

    values_files: overlays by name ("agg.yaml") or paths; values: a dict on top, as --set-json '{...}' gives.
    Objects come in template-path order, each file's documents in file order. show_only: template paths
    relative to the chart, e.g. [DGD].
    """
    key = render_key(load_values(values_files, values), name, namespace,
                     None if show_only is None else sorted(show_only))
    if key not in _objects_cache:
        _objects_cache[key] = parse_manifests(render_manifests(values_files, values, name=name, namespace=namespace),
                                              show_only)
    return deep_copy(_objects_cache[key])


# Templates the tests read one at a time (render_chart's show_only), relative to the chart.
DGD = "templates/dynamo/dynamographdeployment.yaml"
SCALED_OBJECT = "templates/autoscaling/scaledobject.yaml"
HPA = "templates/autoscaling/horizontalpodautoscaler.yaml"
HTTP_ROUTE = "templates/exposure/httproute.yaml"
PROMETHEUS_RULE = "templates/monitoring/prometheusrule.yaml"
POD_MONITORS = "templates/monitoring/podmonitor.yaml"
DASHBOARD = "templates/monitoring/configmap.yaml"
BENCHMARK_JOB = "templates/benchmark/job.yaml"
DOWNLOAD_JOB = "templates/model-cache/job.yaml"
MODEL_CACHE_PVC = "templates/model-cache/persistentvolumeclaim.yaml"
ENGINE_CONFIG = "templates/engine/configmap.yaml"
PICKER_CONFIG = "templates/endpoint-picker/configmap.yaml"
SCRIPTS = "templates/scripts/configmap.yaml"
NETWORK_POLICIES = "templates/exposure/networkpolicy.yaml"
TRTLLM_SERVE_DEPLOYMENT = "templates/trtllm-serve/deployment.yaml"
PDBS = "templates/disruption/poddisruptionbudget.yaml"
INGRESS_TEMPLATE = "templates/exposure/ingress.yaml"
PICKER_DEPLOYMENT = "templates/endpoint-picker/deployment.yaml"
INFERENCE_POOL = "templates/endpoint-picker/inferencepool.yaml"
# The one template that calls gpt-oss.checkValues: Helm reports every refusal there (line 4, column 4).
CHECK_VALUES = "templates/validation/check-values.yaml"
REFUSED_AT = f"execution error at ({CHART_DIR.name}/{CHECK_VALUES}:4:4): "
# NetworkPolicies on, with the Kubernetes API's peer they need whenever a pod of the release calls it (an address the
# tests make up: TEST-NET-style, nothing listens there).
NETWORK_POLICY_ON = {"enabled": True, "apiServer": {"to": [{"ipBlock": {"cidr": "10.0.0.10/32"}}]}}
# Prometheus' pods in the namespace they run in: the peer networkPolicy.prometheus.to needs with PodMonitors or the planner.
PROMETHEUS_PEERS = [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}},
                     "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}}]



# The Dynamo release lines the chart renders, and the ai-dynamo release each line's e2e tests run (1.7: the newest
# 1.7 build installable here, a nightly four weeks before 1.7.0).
DYNAMO_LINE_RELEASES = {"1.2": "1.2.1", "1.6": "1.6.1", "1.7": "1.7.0.dev20261026"}


def dynamo_line_values(line: str) -> dict:
    """The values that select a Dynamo release line ("1.2", "1.6" or "1.7"): the one place the tests select it."""
    return {"dynamo": {"releaseLine": line}}


def planner_grant_in_docs() -> list[tuple]:
    """The table under "The planner's account" in docs/security.md, row by row: (API group, resource, verbs, "every" or
    "named", who grants it). tests/cluster/test_operator.py asks the API server each row; test_security.py checks the
    rows against the operator's platform chart and the chart's Role."""
    text = (REPO_ROOT / "docs" / "security.md").read_text()
    section = text[text.index("### The planner's account"):]
    section = section[:section.index("\n#", 1)]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        match = re.fullmatch(r"`([a-z/]+)` \((?:`([a-z0-9.]+)`|core)\)", cells[0]) if len(cells) == 4 else None
        if match:
            verbs = tuple(re.findall(r"`([a-z]+)`", cells[1]))
            rows.append((match.group(2) or "", match.group(1), verbs, "named" if "by name" in cells[2] else "every",
                         cells[3]))
    return rows


def skip_for_missing_part(reason: str) -> None:
    """Skip a test whose part (a control plane, a node, a controller, a package) is missing; with CI=true fail:
    CI builds or installs every part itself (.ci/run), so a missing one is a broken run, not a reason to skip."""
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(f"CI=true and a part this test needs is missing (CI builds or installs it): {reason}",
                    pytrace=False)
    pytest.skip(reason)


def marks_may_select(markexpr: str, mark: str) -> bool:
    """Whether `pytest -m markexpr` can select a test that carries `mark`, whichever other marks it carries (every
    choice of the other names in the expression is tried); an expression with arguments (`name(x=1)`) always can."""
    return _may_select(markexpr, carried={mark}, absent=set())


def marks_may_select_without(markexpr: str, marks: Iterable[str]) -> bool:
    """Whether `pytest -m markexpr` can select a test that carries none of `marks`, whichever other marks it carries."""
    return _may_select(markexpr, carried=set(), absent=set(marks))


def _may_select(markexpr: str, carried: set[str], absent: set[str]) -> bool:
    from _pytest.mark.expression import Expression  # pytest's own reader of -m (pytest pinned: requirements-test.txt)
    others = sorted(set(re.findall(r"[\w:+\-.\[\]\\/]+", markexpr)) - {"and", "or", "not"} - carried - absent)
    if not markexpr.strip() or "=" in markexpr or len(others) > 10:
        return True
    expression = Expression.compile(markexpr)
    return any(expression.evaluate(lambda name, **_: name in carried or name in chosen)
               for size in range(len(others) + 1) for chosen in itertools.combinations(others, size))


XDIST_PORT_STRIDE, XDIST_MAX_WORKERS = 4000, 4


def worker_port(port: int) -> int:
    """A fixed port of the e2e tier, moved by 4000 per pytest-xdist worker (gw1: +4000), so workers never share one;
    every fixed port is in 12000-19999, so four workers stay below the ephemeral range (32768)."""
    index = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
    if index >= XDIST_MAX_WORKERS:
        raise pytest.UsageError(f"the e2e tier's ports fit {XDIST_MAX_WORKERS} pytest-xdist workers; got worker gw{index}")
    return port + XDIST_PORT_STRIDE * index


def flag_value(argv: list[str], flag: str) -> str:
    """The value after `flag` in an argument list (the flag must appear exactly once)."""
    assert argv.count(flag) == 1, f"{flag} appears {argv.count(flag)} times in {argv}"
    return argv[argv.index(flag) + 1]


def dump(obj: Any) -> str:
    return json.dumps(obj, indent=1, sort_keys=True)


def template_defines(template: str) -> dict[str, str]:
    """The `{{- define "name" -}}` blocks of the chart helper files named `template` (a file name, e.g.
    "_model-cache.tpl", or a pattern, e.g. "_check-*.tpl" for every concern of the cross-field rules, in whichever
    folder of templates/ they are), {name: body}.

    A body runs to the `end` that closes its define (if, range, with, define and block open a level).
    """
    paths = sorted((CHART_DIR / "templates").rglob(template))
    assert paths, f"no template named {template}"
    defines = {}
    for path in paths:
        source = path.read_text()
        for match in re.finditer(r'\{\{- define "([^"]+)" -\}\}', source):
            depth = 1
            for action in re.finditer(r"\{\{-?\s*(if|range|with|define|block|end)\b", source[match.end():]):
                depth += -1 if action.group(1) == "end" else 1
                if depth == 0:
                    defines[match.group(1)] = source[match.end():match.end() + action.start()]
                    break
    return defines


def fail_messages(body: str) -> list[str]:
    """The message of each `{{- fail ...}}` in a template body, as its string literals joined: a message split over
    lines (`print "..." "..."`, for the 160-character limit) reads as one; printf verbs stay as written."""
    messages = []
    for match in re.finditer(r"\{\{- fail ", body):
        literals = []
        for token in re.finditer(r'"(?:[^"\\]|\\.)*"|\}\}', body[match.end():]):
            if token.group() == "}}":
                break
            literals.append(json.loads(token.group()))
        messages.append("".join(literals))
    return messages


class Refusal(NamedTuple):
    """A negative case of a cross-field rule: values on an overlay, and the text the user must see (a part of it
    where the rest lists what is allowed). kube_version: render as a cluster of that version would. extra: a case
    beyond the one per fail call that tests/chart/validation/test_check_values.py counts (another role's or runtime's variant of a
    message, or a call's second message). release, namespace: the release's (the names rules read them)."""
    id: str
    overlay: str
    values: dict
    message: str
    kube_version: str | None = None
    extra: bool = False
    release: str = RELEASE_NAME
    namespace: str = NAMESPACE


def refusal_params(table: dict[str, list[Refusal]]) -> list:
    """pytest parameters of a concern file's refusal table {concern (gpt-oss.checkValues.<concern>): cases}."""
    return [pytest.param(case, id=f"{concern}:{case.id}") for concern, cases in table.items() for case in cases]


def render_error(overlay: str, values: dict, kube_version: str | None = None, name: str = RELEASE_NAME,
                 namespace: str = NAMESPACE) -> str:
    """Helm's error for the values on an overlay, "" when they render. With kube_version, as `helm template
    --kube-version` renders for a cluster of that version: helm-python-sdk's render does not take one, so the helm
    CLI does (built by `python -m ci.cluster go-parts build helm`; the case skips without it, as tests/chart/test_helm_cli.py)."""
    if kube_version is None:
        try:
            render_chart([overlay], values, show_only=[CHECK_VALUES], name=name, namespace=namespace)
        except ChartRenderError as error:
            return str(error)
        return ""
    from ci.cluster import go_parts
    folder = go_parts.built("helm")
    if folder is None:
        pytest.skip("the helm CLI is not built: python -m ci.cluster go-parts build helm")
    with tempfile.NamedTemporaryFile("w", suffix=".json") as file:
        json.dump(load_values([overlay], values), file)
        file.flush()
        result = subprocess.run([str(folder / "helm"), "template", name, str(CHART_DIR), "-n", namespace,
                                 "--kube-version", kube_version, "-f", file.name],
                                capture_output=True, text=True, timeout=120)
    return result.stderr.strip().removeprefix("Error: ") if result.returncode else ""


def assert_refused(case: Refusal) -> None:
    """The chart refuses the case's values with its message, at check-values.yaml (before any other template)."""
    error = render_error(case.overlay, case.values, case.kube_version, case.release, case.namespace)
    assert error, f"{case.id}: rendered without a refusal"
    assert case.message in error, error
    if case.kube_version is None:
        assert error.startswith(REFUSED_AT), error
