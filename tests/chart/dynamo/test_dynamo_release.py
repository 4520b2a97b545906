"""Dynamo releases the chart renders for: the DGD API it writes (nvidia.com/v1beta1 only) and the runtime versions.

Sources (../shared/DYNAMO-RELEASES-FACTS.md, section 3a): Dynamo 1.2.0 promoted the DGD to served v1beta1; 1.5.0
made v1beta1 the storage version and removed the v1alpha1 admission webhooks (validation only at v1beta1 paths).
../shared/dynamo/RELEASE-1.7-FACTS.md: the 1.7 line (runtime 1.7.0, TensorRT-LLM 1.4.0rc2), the 1.6 line at 1.6.2.
"""
from __future__ import annotations

import re

import pytest

from tests.helpers import (CHART_DIR, DYNAMO_OVERLAYS, ChartRenderError, Refusal, dgd_components, dgd_workers, find,
                           plan_document, render_chart, render_notes)

DGD = ["templates/dynamo/dynamographdeployment.yaml"]
RUNTIME = "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime"

# (id, overlay, values, the exact text the user must see): one per fail call of templates/validation/_check-dynamo-release.tpl.
RELEASE_REFUSALS = [
    ("v1alpha1-retired", "agg.yaml", {"dynamo": {"apiVersion": "nvidia.com/v1alpha1"}},
     "dynamo.apiVersion=nvidia.com/v1alpha1 was retired: every Dynamo release this chart renders for serves "
     "nvidia.com/v1beta1 (from 1.2.0), and from 1.5.0 the operator validates DGDs at v1beta1 only and stores them as "
     "v1beta1; set dynamo.apiVersion=nvidia.com/v1beta1 (the default), or remove the key"),
    ("runtime-outside-the-line", "agg.yaml", {"dynamo": {"releaseLine": "1.2", "image": {"tag": "1.1.1"}}},
     "dynamo.releaseLine=1.2 renders for Dynamo 1.2.0 up to (not including) 1.5.0, but the runtime is 1.1.1 "
     "(dynamo.runtimeVersionOverride, else dynamo.image.tag); allowed: dynamo.releaseLine=1.2 (runtimes 1.2.0 up to "
     "1.5.0), 1.6 (runtimes 1.5.0 up to 1.7.0), 1.7 (runtimes 1.7.0 up to 1.8.0), and dynamo.image.tag empty for the "
     "line's own 1.2.1"),
    ("operator-env-in-workers", "disagg-k8s.yaml", {"workers": {"decode": {"env": {"DYN_SYSTEM_PORT": "8081"}}}},
     "workers.decode.env.DYN_SYSTEM_PORT is set, but the Dynamo operator sets DYN_SYSTEM_PORT on every worker (9090) "
     "and points the probes it adds at it, so the pods would never be ready; remove it (the operator's variables: "
     "DYN_SYSTEM_PORT)"),
    ("worker-flag-the-chart-writes", "agg.yaml", {"workers": {"extraArgs": ["--served-model-name", "gpt-oss"]}},
     "workers.extraArgs has --served-model-name, a flag the chart already writes on every worker from model.id (the "
     "name the smoke test, the benchmark and the router ask for), so the worker would run with another value than the "
     "plan, the smoke test and the benchmark use; remove it and set that instead"),
    ("admission-gate-before-1-7", "agg.yaml",
     {"dynamo": {"releaseLine": "1.6", "admissionGate": {"engineRequestLimit": 800, "requestQueueLimit": 16}}},
     "dynamo.admissionGate.engineRequestLimit=800, dynamo.admissionGate.requestQueueLimit=16 is set, but the workers of "
     "the Dynamo 1.6 line have no DYN_BACKEND_ADMISSION_* gate (it came with Dynamo 1.7.0), so nothing would limit "
     "them; allowed: dynamo.releaseLine=1.7, or dynamo.admissionGate left at its defaults"),
    ("admission-queue-without-an-engine-limit", "agg.yaml", {"dynamo": {"admissionGate": {"requestQueueLimit": 512}}},
     "dynamo.admissionGate.requestQueueLimit=512 queues requests while an engine limit is reached, but no engine limit "
     "is set, and a Dynamo 1.7 worker with a positive queue limit and no engine limit fails at start; allowed: "
     "dynamo.admissionGate.engineRequestLimit or engineRequestWaitingLimit set, or requestQueueLimit=0"),
    ("admission-gate-in-workers-env", "disagg-k8s.yaml",
     {"workers": {"decode": {"env": {"DYN_BACKEND_ADMISSION_ENGINE_REQUEST_LIMIT": "64"}}}},
     "workers.decode.env.DYN_BACKEND_ADMISSION_ENGINE_REQUEST_LIMIT is set, but the chart sets the Dynamo 1.7 workers' "
     "admission gate (DYN_BACKEND_ADMISSION_*, per attention-DP rank) from dynamo.admissionGate, and counts it in the "
     "plan; remove it and set dynamo.admissionGate.engineRequestLimit, engineRequestWaitingLimit or requestQueueLimit "
     "instead"),
]
# The table of the concern gpt-oss.checkValues.dynamoRelease (tests/chart/validation/test_check_values.py counts its cases against the
# fail calls; LIVE_MESSAGES need a live cluster: tests/cluster/test_dynamo_upgrade.py).
REFUSALS = {"dynamoRelease": [Refusal(*case) for case in RELEASE_REFUSALS]}

# Refusals that need the live cluster (lookup): tests/cluster/test_dynamo_upgrade.py shows each on a real API server.
LIVE_MESSAGES = {
    "operator-window": (
        "the Dynamo operator in the cluster is {operator} (Deployment {where}), and an operator supports runtimes from "
        "two minors before its own to one after it ({window} here), but this release renders the runtime {runtime} "
        "(dynamo.releaseLine={line}); allowed: {allowed}, or upgrade the Dynamo platform one minor at a time first "
        "(docs/operations.md, \"Dynamo upgrades\"); dynamo.operator.check=false skips this check"),
    "minor-skipped": (
        "the live DynamoGraphDeployment {namespace}/gpt-oss runs Dynamo {installed} ({source}), and this upgrade renders "
        "{runtime}: Dynamo upgrades to the adjacent minor only, applying every intermediate minor in order; go {path}, "
        "one helm upgrade per step with {steps}, after upgrading the Dynamo platform (operator, CRDs, Grove, KAI "
        "scheduler) to that minor (docs/operations.md, \"Dynamo upgrades\")"),
}

CHECK_FILE = CHART_DIR / "templates" / "validation" / "_check-dynamo-release.tpl"


class TestReleaseRefusals:
    @pytest.mark.parametrize("overlay,values,message", [r[1:] for r in RELEASE_REFUSALS],
                             ids=[r[0] for r in RELEASE_REFUSALS])
    def test_should_refuse_with_a_message_naming_the_keys(self, overlay, values, message):
        with pytest.raises(ChartRenderError) as error:
            render_chart([overlay], values)
        assert message in str(error.value)
        assert "templates/validation/check-values.yaml" in str(error.value)

    def test_should_cover_every_fail_call_once(self):
        assert CHECK_FILE.read_text().count("{{- fail ") == len(RELEASE_REFUSALS) + len(LIVE_MESSAGES)

    def test_should_state_each_rule_beside_its_check(self):
        # One "Rule:" comment per check, each before its fail.
        source = CHECK_FILE.read_text()
        assert source.count("{{- /* Rule: ") == len(RELEASE_REFUSALS) + len(LIVE_MESSAGES)
        # ... and each fail has one rule comment between it and the previous fail.
        assert all(chunk.count("{{- /* Rule: ") == 1 for chunk in source.split("{{- fail ")[:-1])


class TestApiVersion:
    def test_should_write_v1beta1_by_default(self):
        dgd = find(render_chart(["agg.yaml"]), "DynamoGraphDeployment")
        assert dgd["apiVersion"] == "nvidia.com/v1beta1" and "components" in dgd["spec"] and "services" not in dgd["spec"]

    def test_should_leave_trtllm_serve_alone(self):
        # No DGD there: the key is ignored, as before.
        objects = render_chart(["trtllm-serve-low-latency.yaml"], {"dynamo": {"apiVersion": "nvidia.com/v1alpha1"}})
        assert find(objects, "Deployment")

    def test_should_neither_branch_on_the_version_nor_read_the_retired_shape(self):
        # v1alpha1 kept its components in spec.services (a map), its pods in extraPodSpec with a mainContainer; the
        # one place that may name the version is the refusal (its test: RELEASE_REFUSALS).
        retired = re.compile(r'"services"|\bservices\b"|extraPodSpec|\.mainContainer|pop\("mainContainer"|'
                             r'eq \.Values\.dynamo\.apiVersion|== "nvidia\.com/v1(alpha|beta)1"')
        sources = [*(CHART_DIR / "templates").rglob("*.tpl"), *(CHART_DIR / "templates").rglob("*.yaml"),
                   *(CHART_DIR.parent.parent / "tools").rglob("*.py")]
        found = [f"{path.name}:{number}" for path in sources if path.name != "_check-dynamo-release.tpl"
                 for number, line in enumerate(path.read_text().splitlines(), 1) if retired.search(line)]
        assert found == []


def dgd_of(overlay: str, values: dict | None = None) -> dict:
    return find(render_chart([overlay], values, show_only=DGD), "DynamoGraphDeployment")


class TestReleaseLines:
    """What each line renders; expected values are the facts' pins (DYNAMO-RELEASES-FACTS.md, sections 0 and 3)."""

    # Each line as it renders every Dynamo target: the default (1.7), 1.6 at 1.6.2, and 1.2 still selectable.
    @pytest.mark.parametrize("values,line,runtime,model_flag", [
        ({}, "1.7", "1.7.0", "--model"),
        ({"dynamo": {"releaseLine": "1.6"}}, "1.6", "1.6.2", "--model"),
        ({"dynamo": {"releaseLine": "1.2"}}, "1.2", "1.2.1", "--model-path"),
    ], ids=["1.7-by-default", "1.6-at-1.6.2", "1.2-selectable"])
    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_run_every_dynamo_target_on_its_lines_runtime(self, overlay, values, line, runtime, model_flag):
        dgd = dgd_of(overlay, values)
        assert {c["main"]["image"] for c in dgd_components(dgd).values()} == {f"{RUNTIME}:{runtime}"}
        assert all(w["args"][0] == model_flag for w in dgd_workers(dgd).values())
        assert dgd["metadata"]["annotations"]["gpt-oss/dynamo-release-line"] == line
        assert dgd["metadata"]["annotations"]["gpt-oss/dynamo-runtime-version"] == runtime

    @pytest.mark.parametrize("line,tag", [("1.2", "1.3.1"), ("1.2", "1.4.1"), ("1.6", "1.5.1"), ("1.6", "1.6.1")])
    def test_should_take_the_intermediate_minors_of_the_upgrade_path(self, line, tag):
        dgd = dgd_of("agg.yaml", {"dynamo": {"releaseLine": line, "image": {"tag": tag}}})
        assert {c["main"]["image"] for c in dgd_components(dgd).values()} == {f"{RUNTIME}:{tag}"}
        assert dgd["metadata"]["annotations"]["gpt-oss/dynamo-runtime-version"] == tag

    @pytest.mark.parametrize("values,threshold", [
        ({}, []),
        ({"dynamo": {"releaseLine": "1.6"}}, ["--router-queue-threshold", "16.0"]),
        ({"dynamo": {"releaseLine": "1.2", "image": {"tag": "1.4.1"}}}, ["--router-queue-threshold", "16.0"]),
        ({"dynamo": {"releaseLine": "1.2"}}, []),
        ({"dynamo": {"releaseLine": "1.2", "image": {"tag": "1.3.1"}}}, []),
    ], ids=["1.7.0", "1.6.2", "1.4.1", "1.2.1", "1.3.1"])
    def test_should_keep_router_queueing_on_from_1_4_to_1_6(self, values, threshold):
        # 1.4.0 turned queueing off by default (set --router-queue-threshold=16.0 to keep it); 1.2.1 queues at 4.0.
        # The 1.7 frontend deprecates the flag ("will be removed in v1.7"): the chart writes none, queueing stays off.
        kv = {"frontend": {"routerMode": "kv"},
              "workers": {"worker": {"engine": {"kv_cache_config": {"enable_block_reuse": True}}}}}
        args = dgd_components(dgd_of("agg.yaml", kv | values))["Frontend"]["args"]
        found = args[args.index("--router-queue-threshold"):][:2] if "--router-queue-threshold" in args else []
        assert found == threshold

    def test_should_not_set_a_queue_threshold_without_kv_routing(self):
        assert "--router-queue-threshold" not in dgd_components(dgd_of("agg.yaml"))["Frontend"]["args"]

    @pytest.mark.parametrize("line", ["1.7", "1.6", "1.2"])
    @pytest.mark.parametrize("overlay,planner", [(o, False) for o in DYNAMO_OVERLAYS] + [("disagg-k8s.yaml", True)],
                             ids=DYNAMO_OVERLAYS + ["disagg-k8s-planner"])
    def test_should_leave_the_operator_defaults_alone(self, overlay, planner, line):
        # 1.5.0: liveness failureThreshold 3 and canary health checks; 1.6.0: initContainers[name=runtime] reserved;
        # the operator merges its defaults into the container named main and sets DYN_SYSTEM_PORT (9090).
        # The same values as the tests above (renders are memoized): the default line is 1.7.
        values = {} if line == "1.7" else {"dynamo": {"releaseLine": line}}
        if planner:
            values["planner"] = {"enabled": True, "throughputScaling": False}
        dgd = dgd_of(overlay, values)
        assert len(dgd["spec"]["components"]) == len(dgd_components(dgd)) >= 2 + planner
        for component in dgd["spec"]["components"]:
            spec = component["podTemplate"]["spec"]
            assert spec["containers"][0]["name"] == "main"
            assert "runtime" not in [c["name"] for c in spec.get("initContainers", [])]
            for container in spec["containers"] + spec.get("initContainers", []):
                assert "livenessProbe" not in container
                assert not {"DYN_SYSTEM_PORT", "DYN_HEALTH_CHECK_ENABLED"} & {e["name"] for e in container.get("env", [])}

    @pytest.mark.parametrize("line,tag", [("1.7", "1.7.0"), ("1.6", "1.6.2"), ("1.2", "1.2.1")])
    def test_should_run_the_planner_of_the_line(self, line, tag):
        values = {"dynamo": {"releaseLine": line}, "planner": {"enabled": True, "throughputScaling": False}}
        planner = dgd_components(dgd_of("disagg-k8s.yaml", values))["Planner"]
        assert planner["main"]["image"] == f"nvcr.io/nvidia/ai-dynamo/dynamo-planner:{tag}"

    def test_should_say_in_notes_that_the_operator_was_not_seen(self):
        notes = render_notes(["agg.yaml"])
        assert ("Dynamo release line 1.7: runtime 1.7.0; the platform it needs: operator 1.7.x (1.6.x to 1.9.x admit "
                "it), Grove minimum not published for 1.7 (1.6 needs >= v0.1.0-alpha.14), KAI scheduler minimum not "
                "published for 1.7 (1.6 needs >= v0.17.0).") in notes
        assert "The chart could not see the Dynamo operator's version" in notes


def env_of(container: dict) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container.get("env", []) if "value" in e}


GATE = "DYN_BACKEND_ADMISSION_"


class TestAdmissionGate:
    """Dynamo 1.7's backend admission gate (RELEASE-1.7-FACTS.md, section 2c): per attention-DP rank, off unless an
    engine limit is set, over the limits a 529 rather than a queued request."""

    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_leave_the_gate_off_by_default(self, overlay):
        workers = dgd_workers(dgd_of(overlay))
        assert [name for w in workers.values() for name in env_of(w["main"]) if name.startswith(GATE)] == []

    def test_should_set_each_limit_per_attention_dp_rank_on_every_worker(self):
        values = {"dynamo": {"admissionGate": {"engineRequestLimit": 800, "engineRequestWaitingLimit": 64,
                                               "requestQueueLimit": 100}}}
        for worker in dgd_workers(dgd_of("disagg-k8s.yaml", values)).values():
            gate = {k: v for k, v in env_of(worker["main"]).items() if k.startswith(GATE)}
            assert gate == {"DYN_BACKEND_ADMISSION_ENGINE_REQUEST_LIMIT": "800",
                            "DYN_BACKEND_ADMISSION_ENGINE_REQUEST_WAITING_LIMIT": "64",
                            "DYN_BACKEND_ADMISSION_REQUEST_QUEUE_LIMIT": "100"}

    def test_should_count_the_gate_against_the_benchmark(self):
        # agg.yaml (FACTS.md): maxBatchSize 800 per attention-DP rank, TP4 with attention DP (4 ranks), concurrency
        # 3600. A limit of 800 per rank and no queue admit 3200: 400 of the benchmark's requests get 529.
        objects = render_chart(["agg.yaml"], {"dynamo": {"admissionGate": {"engineRequestLimit": 800}}})
        doc = plan_document(objects)
        assert doc["admissionCapacity"] == 3200
        assert ("benchmark concurrency 3600 exceeds the 3200 requests the workers' admission gates take "
                "(dynamo.admissionGate: engineRequestLimit 800 + requestQueueLimit 0 per attention-DP rank; "
                "workers.worker: 4 attention-DP ranks x 1 replicas): 400 requests are rejected with HTTP 529, not "
                "queued") in doc["warnings"]
        # A queue of 100 per rank takes 400 more: the benchmark fits.
        queued = plan_document(render_chart(["agg.yaml"], {"dynamo": {"admissionGate": {
            "engineRequestLimit": 800, "requestQueueLimit": 100}}}))
        assert queued["admissionCapacity"] == 3600
        assert not [w for w in queued["warnings"] if "admission gates take" in w]

    def test_should_warn_when_the_gate_keeps_the_batch_from_filling(self):
        doc = plan_document(render_chart(["agg.yaml"], {"dynamo": {"admissionGate": {"engineRequestLimit": 256}}}))
        assert ("dynamo.admissionGate.engineRequestLimit 256 is below workers.worker.maxBatchSize 800: the gate admits "
                "fewer requests per attention-DP rank than the engine batches, so the batch never fills") in doc["warnings"]

    def test_should_show_the_gate_in_the_plan(self, capsys, monkeypatch):
        from tests.helpers import REPO_ROOT
        from tools.gptoss import plan as plan_tool
        monkeypatch.chdir(REPO_ROOT)
        assert plan_tool.main(["-f", "values/agg.yaml", "--set", "dynamo.admissionGate.engineRequestLimit=800",
                               "--set", "dynamo.admissionGate.requestQueueLimit=100"]) == 0
        assert ("    admission gate (DYN_BACKEND_ADMISSION_*, per attention-DP rank): ENGINE_REQUEST_LIMIT=800, "
                "REQUEST_QUEUE_LIMIT=100; a pod takes 3600 requests, then answers HTTP 529") in capsys.readouterr().out


# What gpt-oss.workerArgs can write: each line's model flag, disaggregation, KV routing (publishing too) and the
# planner's publishing flag.
KV_ROUTING = {"frontend": {"routerMode": "kv"},
              "workers": {w: {"engine": {"kv_cache_config": {"enable_block_reuse": None}}} for w in ("worker", "prefill", "decode")}}
FLAG_RENDERS = [(overlay, values) for overlay in DYNAMO_OVERLAYS
                for values in ({}, {"dynamo": {"releaseLine": "1.2"}}, KV_ROUTING, {**KV_ROUTING, "dynamo": {"releaseLine": "1.2"}})]


def test_should_list_every_flag_a_worker_gets_as_owned():
    """gpt-oss.workerFlags (what workers.extraArgs may not repeat) names every flag the chart writes on a worker."""
    from tools.gptoss.yaml_text import load_yaml
    source = (CHART_DIR / "templates" / "dynamo" / "_dynamo.tpl").read_text()
    owned = load_yaml(source.split('{{- define "gpt-oss.workerFlags" -}}\n', 1)[1].split("{{- end }}", 1)[0])
    written = set()
    for overlay, values in FLAG_RENDERS:
        for worker in dgd_workers(dgd_of(overlay, values)).values():
            written |= {a for a in worker["args"] if a.startswith("--")}
    assert written == set(owned)
