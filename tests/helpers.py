"""Render the chart with Helm's own engine (helm-python-sdk, Helm v4 Go SDK) and parse the result."""
from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any, Iterable

import helm_python
import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
CHART_DIR = REPO_ROOT / "charts" / "gpt-oss"
VALUES_DIR = REPO_ROOT / "values"
OVERLAYS = sorted(path.name for path in VALUES_DIR.glob("*.yaml"))
# By the runtime each overlay selects (absent = the chart default, dynamo).
RUNTIMES = {name: (yaml.safe_load((VALUES_DIR / name).read_text()) or {}).get("runtime", "dynamo") for name in OVERLAYS}
DYNAMO_OVERLAYS = [name for name in OVERLAYS if RUNTIMES[name] == "dynamo"]
TRTLLM_SERVE_OVERLAYS = [name for name in OVERLAYS if RUNTIMES[name] == "trtllm-serve"]
# libyaml's safe loader when PyYAML has it (same constructor as yaml.safe_load, parsing in C).
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
RELEASE_NAME = "gpt-oss"
NAMESPACE = "llm"


class ChartRenderError(Exception):
    """Helm refused the values or a template failed; the message is Helm's."""


def deep_merge(base: dict, override: dict) -> dict:
    """Merge like Helm's -f files: maps merge key by key, anything else replaces."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def load_values(values_files: Iterable[str | os.PathLike] = (), values: dict | None = None) -> dict:
    """The user-supplied values of `helm install -f F1 -f F2 --set-json ...`, in that order."""
    merged: dict[str, Any] = {}
    for values_file in values_files:
        path = Path(values_file)
        if not path.is_absolute() and not path.exists():
            path = VALUES_DIR / path
        merged = deep_merge(merged, yaml.safe_load(path.read_text()) or {})
    return deep_merge(merged, values or {})


_chart_cache: dict[str, helm_python.Chart] = {}


def load_chart(chart_dir: Path = CHART_DIR) -> helm_python.Chart:
    key = str(chart_dir)
    if key not in _chart_cache:
        _chart_cache[key] = helm_python.Chart.load(chart_dir)
    return _chart_cache[key]


# Renders of equal inputs within one run (the chart does not change during a run): the merged values, release
# name and namespace -> Helm's output or its refusal. Many tests render the same overlay; Helm renders it once.
_render_cache: dict[str, dict[str, str] | ChartRenderError] = {}
_objects_cache: dict[str, list[dict]] = {}


def _render_key(*parts) -> str:
    return json.dumps(parts, sort_keys=True, default=repr)


def render_manifests(values_files=(), values=None, name=RELEASE_NAME, namespace=NAMESPACE,
                     fresh: bool = False) -> dict[str, str]:
    """Template path -> rendered text, NOTES.txt included; raises ChartRenderError with Helm's message.

    Memoized on the merged values (files read each call, so a changed file is a new key); fresh=True renders
    anew and leaves the memo alone (for tests about rendering itself, e.g. two renders being identical).
    """
    merged = load_values(values_files, values)
    key = _render_key(merged, name, namespace)
    cached = None if fresh else _render_cache.get(key)
    if cached is None:
        try:
            cached = load_chart().render(merged, name=name, namespace=namespace, is_install=True)
        except helm_python.HelmError as error:
            cached = ChartRenderError(str(error))
        if not fresh:
            _render_cache[key] = cached
    if isinstance(cached, ChartRenderError):
        raise ChartRenderError(str(cached)) from cached
    return dict(cached)


def render_chart(values_files=(), values=None, show_only: Iterable[str] | None = None,
                 name=RELEASE_NAME, namespace=NAMESPACE) -> list[dict]:
    """Render like `helm template` and return the parsed objects (a deep copy of the memo: callers may mutate).

    show_only: template paths relative to the chart, e.g. ["templates/dynamographdeployment.yaml"].
    """
    key = _render_key(load_values(values_files, values), name, namespace,
                      None if show_only is None else sorted(show_only))
    if key not in _objects_cache:
        _objects_cache[key] = _parse(render_manifests(values_files, values, name=name, namespace=namespace),
                                     show_only)
    return copy.deepcopy(_objects_cache[key])


def _parse(manifests: dict[str, str], show_only: Iterable[str] | None) -> list[dict]:
    wanted = None if show_only is None else {f"{CHART_DIR.name}/{path}" for path in show_only}
    if wanted is not None and not wanted <= manifests.keys():
        raise ChartRenderError(f"no such template(s): {sorted(wanted - manifests.keys())}")
    objects = []
    for path in sorted(manifests):
        if not path.endswith(".yaml") or (wanted is not None and path not in wanted):
            continue
        objects.extend(doc for doc in yaml.load_all(manifests[path], Loader=SAFE_LOADER) if doc)
    return objects


def render_notes(values_files=(), values=None) -> str:
    return render_manifests(values_files, values)[f"{CHART_DIR.name}/templates/NOTES.txt"]


def find(objects: list[dict], kind: str, name: str | None = None) -> dict:
    """The one object of that kind (and name); fails loudly when absent or ambiguous."""
    matches = [o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    assert len(matches) == 1, f"expected one {kind} {name or ''}, found {[o['metadata']['name'] for o in matches]}"
    return matches[0]


def flag_value(argv: list[str], flag: str) -> str:
    """The value after `flag` in an argument list (the flag must appear exactly once)."""
    assert argv.count(flag) == 1, f"{flag} appears {argv.count(flag)} times in {argv}"
    return argv[argv.index(flag) + 1]


def dgd_components(dgd: dict) -> dict[str, dict]:
    """Every component of a DynamoGraphDeployment, frontend included, as {name: normalized view}, either API version.

    The view has: type (frontend, worker, prefill, decode or planner), replicas, gpus (per replica, 0 for none),
    env (name -> value or valueFrom), args, pod_spec, main (the main container; for v1alpha1 with the
    service-level envs and resources folded in, where that version keeps them), fields (the component itself).
    """
    components = {}
    if dgd["apiVersion"] == "nvidia.com/v1beta1":
        for component in dgd["spec"]["components"]:
            pod = component["podTemplate"]["spec"]
            main = next(c for c in pod["containers"] if c["name"] == "main")
            components[component["name"]] = _view(component["type"], component, pod, main, "nvidia.com/gpu")
    else:
        for name, service in dgd["spec"]["services"].items():
            pod = service["extraPodSpec"]
            # The operator gives the main container the service's envs as well as its own env.
            env = service.get("envs", []) + pod["mainContainer"].get("env", [])
            main = dict(pod["mainContainer"], env=env, resources=service.get("resources", {}))
            kind = (service["componentType"] if service["componentType"] in ("frontend", "planner")
                    else service.get("subComponentType", "worker"))
            components[name] = _view(kind, service, pod, main, "gpu")
    return components


def _view(kind: str, fields: dict, pod: dict, main: dict, gpu_key: str) -> dict:
    return {
        "type": kind,
        "replicas": fields["replicas"],
        "gpus": int(main.get("resources", {}).get("limits", {}).get(gpu_key, 0)),
        "env": {e["name"]: e.get("value", e.get("valueFrom")) for e in main.get("env") or []},
        "args": main.get("args", []),
        "pod_spec": pod,
        "main": main,
        "fields": fields,
    }


def dgd_workers(dgd: dict) -> dict[str, dict]:
    """The worker components (everything but the frontend and the planner) of dgd_components()."""
    return {name: view for name, view in dgd_components(dgd).items() if view["type"] not in ("frontend", "planner")}


def dgd_pods(dgd: dict) -> dict[str, dict]:
    """Each component's pod as the Dynamo operator would create it, {component name: Pod}, either API version.

    The pod template's metadata and spec with the main container in `containers` (v1alpha1: the mainContainer,
    with the service's envs and its `gpu` resources as nvidia.com/gpu). What the operator adds on top (its own
    labels, the runtime's sidecars and ports) is not here: this is the part the chart controls.
    """
    pods = {}
    for name, view in dgd_components(dgd).items():
        fields = view["fields"]
        if dgd["apiVersion"] == "nvidia.com/v1beta1":
            metadata = copy.deepcopy(fields["podTemplate"].get("metadata", {}))
            spec = copy.deepcopy(view["pod_spec"])
        else:
            metadata = copy.deepcopy(fields.get("extraPodMetadata", {}))
            spec = copy.deepcopy(view["pod_spec"])
            main = copy.deepcopy(spec.pop("mainContainer"))
            resources = {kind: {("nvidia.com/gpu" if key == "gpu" else key): value for key, value in amounts.items()}
                         for kind, amounts in view["main"].get("resources", {}).items()}
            main.update(name="main", env=view["main"]["env"], resources=resources)
            spec["containers"] = [main]
        metadata["name"] = f"{dgd['metadata']['name']}-{name.lower()}"
        pods[name] = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
    return pods


def dump(obj: Any) -> str:
    return json.dumps(obj, indent=1, sort_keys=True)
