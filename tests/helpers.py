"""The tests' helpers: the chart's renders and values (tools/gptoss, re-exported here), the overlays, and a few
assertions. `render_chart(values_files=..., values=..., show_only=...)` is the tests' API."""
from __future__ import annotations

import json
import os
import re
from typing import Any, NamedTuple

import pytest

from tools.gptoss.objects import dgd_components, dgd_pods, dgd_workers, find, plan_document, plan_quantization  # noqa: F401,E501
from tools.gptoss.render import (CHART_DIR, NAMESPACE, RELEASE_NAME, ChartRenderError,  # noqa: F401
                                 load_chart, parse_manifests, render_chart, render_manifests, render_notes)
from tools.gptoss.values import (DYNAMO_OVERLAYS, OVERLAYS, REPO_ROOT, RUNTIMES, TRTLLM_SERVE_OVERLAYS,  # noqa: F401
                                 VALUES_DIR, deep_merge, load_values)

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



# The Dynamo release lines the chart renders, and the ai-dynamo release each line's e2e tests run.
DYNAMO_LINE_RELEASES = {"1.2": "1.2.1", "1.6": "1.6.1"}


def dynamo_line_values(line: str) -> dict:
    """The values that select a Dynamo release line ("1.2" or "1.6"): the one place the tests select it."""
    return {"dynamo": {"releaseLine": line}}


def skip_for_missing_part(reason: str) -> None:
    """Skip a test whose part (a control plane, a node, a controller, a package) is missing; with CI=true fail:
    CI builds or installs every part itself (.ci/run), so a missing one is a broken run, not a reason to skip."""
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(f"CI=true and a part this test needs is missing (CI builds or installs it): {reason}",
                    pytrace=False)
    pytest.skip(reason)


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
    beyond the one per fail call that tests/test_check_values.py counts (another role's or runtime's variant of a
    message, or a call's second message)."""
    id: str
    overlay: str
    values: dict
    message: str
    kube_version: str | None = None
    extra: bool = False


def refusal_params(table: dict[str, list[Refusal]]) -> list:
    """pytest parameters of a concern file's refusal table {concern (gpt-oss.checkValues.<concern>): cases}."""
    return [pytest.param(case, id=f"{concern}:{case.id}") for concern, cases in table.items() for case in cases]


def render_error(overlay: str, values: dict, kube_version: str | None = None) -> str:
    """Helm's error for the values on an overlay, "" when they render. With kube_version, render as a cluster of that
    version would (helm template --kube-version): helm-python-sdk's Chart.render does not expose it, but its Helm C
    SDK takes it as a render option (Helm 4's lint takes it too, but turns `fail` into a log line)."""
    if kube_version is None:
        try:
            render_chart([overlay], values, show_only=[CHECK_VALUES])
        except ChartRenderError as error:
            return str(error)
        return ""
    import helm_python
    try:
        from helm_python import _native
        from helm_python.chart import _dumps
    except ImportError as error:
        pytest.skip(f"this helm-python-sdk has no native render with a Kubernetes version: {error}")
    options = {"name": RELEASE_NAME, "namespace": NAMESPACE, "is_install": True, "kube_version": kube_version}
    try:
        _native.call_string("helm_render", load_chart()._raw(), _dumps(load_values([overlay], values)),
                            json.dumps(options))
    except helm_python.HelmError as error:
        return str(error)
    return ""


def assert_refused(case: Refusal) -> None:
    """The chart refuses the case's values with its message, at check-values.yaml (before any other template)."""
    error = render_error(case.overlay, case.values, case.kube_version)
    assert error, f"{case.id}: rendered without a refusal"
    assert case.message in error, error
    if case.kube_version is None:
        assert error.startswith(REFUSED_AT), error
