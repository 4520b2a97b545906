"""The tests' helpers: the chart's renders and values (tools/gptoss, re-exported here), the overlays, and a few
assertions. `render_chart(values_files=..., values=..., show_only=...)` is the tests' API."""
from __future__ import annotations

import json
import os
from typing import Any

import pytest

from tools.gptoss.objects import dgd_components, dgd_pods, dgd_workers, find, plan_document, plan_quantization  # noqa: F401,E501
from tools.gptoss.render import (CHART_DIR, NAMESPACE, RELEASE_NAME, SAFE_LOADER, ChartRenderError,  # noqa: F401
                                 load_chart, parse_manifests, render_chart, render_manifests, render_notes)
from tools.gptoss.values import (DYNAMO_OVERLAYS, OVERLAYS, REPO_ROOT, RUNTIMES, TRTLLM_SERVE_OVERLAYS,  # noqa: F401
                                 VALUES_DIR, deep_merge, load_values)


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
    """The `{{- define "name" -}}` blocks of a chart helper file (e.g. "_check-values.tpl", in whichever folder of
    templates/ it is), {name: body}.

    A body runs to the `end` that closes its define (if, range, with, define and block open a level).
    """
    import re
    [path] = (CHART_DIR / "templates").rglob(template)
    source = path.read_text()
    defines = {}
    for match in re.finditer(r'\{\{- define "([^"]+)" -\}\}', source):
        depth = 1
        for action in re.finditer(r"\{\{-?\s*(if|range|with|define|block|end)\b", source[match.end():]):
            depth += -1 if action.group(1) == "end" else 1
            if depth == 0:
                defines[match.group(1)] = source[match.end():match.end() + action.start()]
                break
    return defines
