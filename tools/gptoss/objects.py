"""Read rendered objects back: one object by kind and name, a DynamoGraphDeployment's components and pods (the
nvidia.com/v1beta1 shape, the only one the chart writes), and the plan the chart renders as data (the ConfigMap
<fullname>-plan)."""
from __future__ import annotations

import copy

from .yaml_text import load_yaml


def find(objects: list[dict], kind: str, name: str | None = None) -> dict:
    """The one object of that kind (and name); fails loudly when absent or ambiguous."""
    matches = [o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    assert len(matches) == 1, f"expected one {kind} {name or ''}, found {[o['metadata']['name'] for o in matches]}"
    return matches[0]


def dgd_components(dgd: dict) -> dict[str, dict]:
    """Every component of a DynamoGraphDeployment, frontend included, as {name: normalized view}.

    The view has: type (frontend, worker, prefill, decode or planner), replicas, gpus (per replica, 0 for none),
    env (name -> value or valueFrom), args, pod_spec, main (the main container), fields (the component itself).
    """
    components = {}
    for component in dgd["spec"]["components"]:
        pod = component["podTemplate"]["spec"]
        main = next(c for c in pod["containers"] if c["name"] == "main")
        components[component["name"]] = _view(component["type"], component, pod, main)
    return components


def _view(kind: str, fields: dict, pod: dict, main: dict) -> dict:
    return {
        "type": kind,
        "replicas": fields["replicas"],
        "gpus": int(main.get("resources", {}).get("limits", {}).get("nvidia.com/gpu", 0)),
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
    """Each component's pod as the Dynamo operator would create it, {component name: Pod}.

    The pod template's metadata and spec. What the operator adds on top (its own labels, the runtime's sidecars and
    ports) is not here: this is the part the chart controls.
    """
    pods = {}
    for name, view in dgd_components(dgd).items():
        metadata = copy.deepcopy(view["fields"]["podTemplate"].get("metadata", {}))
        metadata["name"] = f"{dgd['metadata']['name']}-{name.lower()}"
        pods[name] = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": copy.deepcopy(view["pod_spec"])}
    return pods


def plan_document(objects: list[dict]) -> dict:
    """The chart's plan as data (gpt-oss.planDocument, in the ConfigMap labelled app.kubernetes.io/component=plan),
    the same NOTES.txt formats: runtime, gpuType, totalGpus, layout (aggregated, disaggregated or trtllm-serve),
    roles (component, valuesKey, mode, replicas, GPUs, TP, EP, attention-DP ranks, slots, quantization {algo,
    moeBackend, reason}), decodeSlots, benchmark {gpuCount, concurrency, requestCount} and warnings."""
    [config_map] = [o for o in objects if o["kind"] == "ConfigMap"
                    and o["metadata"].get("labels", {}).get("app.kubernetes.io/component") == "plan"]
    return load_yaml(config_map["data"]["plan.yaml"])


def plan_quantization(objects: list[dict]) -> dict[str, str]:
    """Role (Dynamo component name, or trtllm-serve) -> "<algo>: <reason>", from the plan document.

    The chart computes it (gpt-oss.quantization): OVERRIDE_QUANT_ALGO when set, else TensorRT-LLM's rule by
    GPU family and MoE backend.
    """
    return {role["component"]: f"{role['quantization']['algo']}: {role['quantization']['reason']}"
            for role in plan_document(objects)["roles"]}
