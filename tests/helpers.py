"""The tests' helpers: the chart's renders and values (tools/gptoss, re-exported here), the overlays, and a few
assertions. `render_chart(values_files=..., values=..., show_only=...)` is the tests' API."""
from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest
import yaml

from tools.gptoss.objects import dgd_components, dgd_pods, dgd_workers, find, notes_quantization  # noqa: F401
from tools.gptoss.render import (CHART_DIR, NAMESPACE, RELEASE_NAME, SAFE_LOADER, ChartRenderError,  # noqa: F401
                                 load_chart, parse_manifests, render_chart, render_manifests, render_notes)
from tools.gptoss.values import REPO_ROOT, VALUES_DIR, deep_merge, load_values  # noqa: F401

OVERLAYS = sorted(path.name for path in VALUES_DIR.glob("*.yaml"))
# By the runtime each overlay selects (absent = the chart default, dynamo).
RUNTIMES = {name: (yaml.safe_load((VALUES_DIR / name).read_text()) or {}).get("runtime", "dynamo") for name in OVERLAYS}
DYNAMO_OVERLAYS = [name for name in OVERLAYS if RUNTIMES[name] == "dynamo"]
TRTLLM_SERVE_OVERLAYS = [name for name in OVERLAYS if RUNTIMES[name] == "trtllm-serve"]


# The Dynamo release lines the chart renders, and the ai-dynamo release each line's e2e tests run.
DYNAMO_LINE_RELEASES = {"1.2": "1.2.1", "1.6": "1.6.1"}


def dynamo_line_values(line: str) -> dict:
    """The values that select a Dynamo release line ("1.2" or "1.6"): the one place the tests select it. Stand-in until
    dynamo.releaseLine (issue 33a) exists here: the line's image tag, from which gpt-oss.dynamoLine derives the line."""
    return {"dynamo": {"image": {"tag": DYNAMO_LINE_RELEASES[line]}}}


def skip_for_missing_part(reason: str) -> None:
    """Skip a test whose part (a control plane, a node, a controller, a package) is missing; with CI=true fail:
    CI builds or installs every part itself (.ci/run), so a missing one is a broken run, not a reason to skip."""
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(f"CI=true and a part this test needs is missing (CI builds or installs it): {reason}",
                    pytrace=False)
    pytest.skip(reason)


def flag_value(argv: list[str], flag: str) -> str:
    """The value after `flag` in an argument list (the flag must appear exactly once)."""
    assert argv.count(flag) == 1, f"{flag} appears {argv.count(flag)} times in {argv}"
    return argv[argv.index(flag) + 1]


def load_script(path: str, name: str | None = None):
    """A script of the repo (ci/, tools/) as a module: their file names have dashes, so they are loaded by path.
    Registered in sys.modules (dataclasses look their module up there) under `name`, by default one made from the
    path; the ci/ scripts that load each other use their own names (gpt_oss_node, gpt_oss_node_images)."""
    import importlib.util
    import sys
    name = name or "gpt_oss_" + re.sub(r"\W", "_", path.removesuffix(".py"))
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


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
