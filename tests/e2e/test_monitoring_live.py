"""Every number the chart hands to a controller, read from a real Prometheus scraping the real Dynamo processes.

Two releases run at once on 127.0.0.1, each from its own render and with the environment the Dynamo operator gives
it (tests/e2e/plan.py): values/agg.yaml in namespace llm-<run>, and values/disagg-k8s.yaml in llm2-<run> with the
worker-hash suffix a Deployment-backed DGD's workers get. The mockers are slowed and hold as many sequences as the
rendered engines' max_batch_size, so a burst queues. The processes stand in for pods in the control plane
(tests/e2e/prometheus.py): the real prometheus-operator reads the chart's rendered PodMonitors and PrometheusRules and
the Dynamo platform's PodMonitors, and writes three configurations: the chart's PodMonitors, the platform's, and both.
Three Prometheus 3 servers (built from its module) run on them, discover the pods from the API server, scrape them and
evaluate the rendered alert rules. During the burst and after it
(tests/e2e/monitoring_probe.py) the test reads every rendered KEDA query and what prometheus-adapter would answer
every rendered HPA with (docs/monitoring.md's rules), every dashboard expression, and the alerts, each reading of
one instant evaluated at one timestamp on every server.
"""
from __future__ import annotations

import json
import math
import re
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from tests.e2e import conftest as e2e
from tests.e2e import plan as e2e_plan
from tests.e2e import prometheus as prom
from tests.helpers import REPO_ROOT, deep_merge, find, load_values, render_chart

# heavy: its seconds in CI's cluster plane (python -m ci.cluster timings), so that pytest-xdist starts it first
pytestmark = [pytest.mark.e2e, pytest.mark.heavy(155)]
PROBE = Path(__file__).with_name("monitoring_probe.py")
INTERVAL = "1s"
PROMETHEUS_PORTS = {"chart": 19090, "platform": 19091, "both": 19092}
# Pods each setup scrapes: 2 frontends and 3 workers; both setups at once scrape each twice.
TARGETS = {"chart": 5, "platform": 5, "both": 10}
REQUESTS = 24  # per release, all at once
ALERTS = ("GptOssTTFTHigh", "GptOssITLHigh", "GptOssRequestsQueuing", "GptOssNoModelServed",
          "GptOssModelDownloadFailed", "GptOssKVCacheNearFull")
# The alerts with a `for` short enough to see on a burst; ITL's target lowered below the mocker's inter-token latency.
RULES = {"enabled": True, "itlMs": 1, "alerts": {name: {"enabled": True, "for": "1s", "severity": "warning"}
                                                  for name in ALERTS}}
MONITORING = {"podMonitor": {"enabled": True, "interval": INTERVAL, "scrapeTimeout": INTERVAL},
              "dashboard": {"enabled": True}, "prometheusRule": RULES}
# (release id, overlay, namespace prefix (the run's id follows), frontend port, first system port, worker-hash suffix,
# worker values)
RELEASES = [
    ("agg", "agg.yaml", "llm", 18000, 18100, "",
     {"worker": {"maxBatchSize": 2, "attentionDP": False}}),
    ("disagg", "disagg-k8s.yaml", "llm2", 18001, 18200, "a1b2c3d4",
     {"prefill": {"maxBatchSize": 2}, "decode": {"maxBatchSize": 2}}),
]
# The series each release line's chart reads where the lines differ, as the real frontend and workers of that line
# serve them (literals: DYNAMO-RELEASES-FACTS.md 3f, the 1.6.1 metrics catalog's replacements of the deprecated
# frontend gauges, and dynamo.trtllm's worker component, args.py DEFAULT_ENDPOINT_COMPONENT: tensorrt_llm in 1.2.1,
# backend in 1.6.1). Each must return a sample above 0 during the burst, from every Prometheus.
LINE_SERIES = {
    "1.2": {
        "frontend in flight": 'sum(dynamo_frontend_inflight_requests{namespace="$namespace"})',
        "frontend queued": 'sum(dynamo_frontend_queued_requests{namespace="$namespace"})',
        "worker component tensorrt_llm": 'sum(dynamo_component_inflight_requests{namespace="$namespace",'
                                         'dynamo_component="tensorrt_llm",dynamo_endpoint="generate"})',
    },
    "1.6": {
        "frontend active": 'sum(dynamo_frontend_active_requests{namespace="$namespace"})',
        "frontend stages preprocess|route|dispatch": 'sum(dynamo_frontend_stage_requests{namespace="$namespace",'
                                                     'stage=~"preprocess|route|dispatch"})',
        "worker component backend": 'sum(dynamo_component_inflight_requests{namespace="$namespace",'
                                    'dynamo_component="backend",dynamo_endpoint="generate"})',
    },
}
# The 1.7 line reads the 1.6 line's series (RELEASE-1.7-FACTS.md section 4: all still defined in 1.7.0.dev, seen live).
LINE_SERIES["1.7"] = LINE_SERIES["1.6"]
# Mocker speed per role: prefill slow enough that long prompts queue at it, decode and aggregated slow enough that
# 24 requests outnumber their 2 slots for several seconds.
SPEEDUP = {"prefill": "0.2", "decode": "0.1", "worker": "0.3"}


def release_values(overlay: str, run_dir: Path, frontend_port: int, workers: dict, scaler: str, line: str = "1.2") -> dict:
    base = deep_merge(e2e_plan.scaled_overlay_values(load_values([overlay]), run_dir), e2e.line_values(line))
    base["frontend"].update({"httpPort": frontend_port, "urlOverride": f"http://127.0.0.1:{frontend_port}"})
    # KEDA (tests/e2e/test_keda_live.py) queries the Prometheus on the chart's PodMonitors, where it runs.
    scaling = {"autoscaling": {"enabled": True, "scaler": scaler,
                               "prometheusAddress": f"http://127.0.0.1:{PROMETHEUS_PORTS['chart']}"}}
    roles = {key: deep_merge(value, scaling) for key, value in workers.items()}
    return deep_merge(base, {"frontend": scaling, "workers": roles, "monitoring": MONITORING})


def stand_in_pods(plan: dict, dgd_name: str, namespace: str) -> list[dict]:
    """The Pod objects of the plan's processes, with the labels the Dynamo operator gives its pods and the named ports
    its PodMonitors scrape (frontend: http, workers: system)."""
    pods = []
    for service in plan["services"]:
        if service["role"] == "frontend":
            port = int(service["argv"][service["argv"].index("--http-port") + 1])
            labels = prom.operator_pod_labels(dgd_name, namespace, "Frontend", "frontend")
            pods.append(prom.stand_in_pod(namespace, service["pod"], labels, {"http": port}))
        else:
            labels = prom.operator_pod_labels(dgd_name, namespace, service["component"], service["role"])
            pods.append(prom.stand_in_pod(namespace, service["pod"], labels,
                                          {"system": int(service["env"]["DYN_SYSTEM_PORT"])}))
    return pods


def slow_down(plan: dict, objects: list[dict]) -> None:
    """Give each mocker the rendered engine's max_batch_size as --max-num-seqs, and its role's speed."""
    import yaml

    engine = find(objects, "ConfigMap", "gpt-oss-engine")["data"]
    for service in plan["services"]:
        if service["role"] == "frontend":
            continue
        argv = service["argv"]
        key = {"worker": "worker", "prefill": "prefill", "decode": "decode"}[service["role"]]
        argv[argv.index("--speedup-ratio") + 1] = SPEEDUP[service["role"]]
        argv += ["--max-num-seqs", str(yaml.safe_load(engine[f"{key}.yaml"])["max_batch_size"])]


def with_job(promql: str, job: str) -> str:
    """The query restricted to one scrape job (every selector gets job="...")."""
    return re.sub(r"\{(?=[a-z_]+=)", f'{{job="{job}",', promql)


def dashboard_queries(objects: list[dict], namespace: str) -> dict[str, str]:
    board = json.loads(find(objects, "ConfigMap", "gpt-oss-dashboard")["data"]["gpt-oss-serving.json"])
    queries = {}
    for panel in board["panels"]:
        for target in panel["targets"]:
            expr = (target["expr"].replace("$namespace", namespace).replace("$deployment", "gpt-oss")
                    .replace("$model", ".*").replace("$__rate_interval", "1m"))
            queries[f"{panel['title']} {target['refId']}"] = expr
    return queries


def build(python: str, tokenizer: Path, run_dir: Path, tmp_dir: Path, release: str, cluster: prom.OperatorRun,
          line: str = "1.2", tools_python: str | None = None, beside=None) -> tuple[dict, dict]:
    """The plan (both releases, three Prometheus servers on the operator's configurations, the probe), the objects in
    the control plane, and what the test checks against. python runs the line's Dynamo; tools_python's folder (aiperf)
    comes second on PATH. beside(cluster), called once both releases are in the control plane and before the operator
    writes the configurations, adds a part of the caller's (tests/e2e/test_keda_live.py: trtllm-serve): {"namespace"
    (its PodMonitors are scraped by the chart's setup and by both), "pods", "targets" (how many they add), "services",
    "model_paths", "frontends" (probe load), "queries" (evaluated on the chart's Prometheus)}."""
    adapter = prom.adapter_rules((REPO_ROOT / "docs" / "monitoring.md").read_text())
    plan, spec_queries, scalers, dashboards, frontends, pods = None, {}, [], {}, [], []
    monitoring = cluster.namespace(f"dynamo-system-{cluster.run}")  # the platform's PodMonitors and the Prometheuses
    namespaces, keda_renders = {}, {}
    for release_id, overlay, prefix, port, first_port, suffix, workers in RELEASES:
        namespace = namespaces[release_id] = cluster.namespace(f"{prefix}-{cluster.run}")
        folder = run_dir / release_id
        renders = {scaler: render_chart([overlay], release_values(overlay, folder, port, workers, scaler, line),
                                        namespace=namespace) for scaler in ("keda", "hpa")}
        objects = keda_renders[release_id] = renders["keda"]
        part = e2e_plan.build_plan(objects, folder, python, tmp_dir, namespace=namespace, worker_suffix=suffix,
                                   first_system_port=first_port, tools_python=tools_python)
        e2e_plan.prepare_model_files(part, tokenizer)
        slow_down(part, objects)
        for service in part["services"]:
            service["name"] = f"{release_id}-{service['name']}"
        pods += stand_in_pods(part, "gpt-oss", namespace)
        cluster.chart_objects(objects, namespace)
        for kind, rendered in renders.items():
            for scaler in (o for o in rendered if o["kind"] in ("ScaledObject", "HorizontalPodAutoscaler")):
                annotations = scaler["metadata"]["annotations"]
                if scaler["kind"] == "ScaledObject":
                    trigger = scaler["spec"]["triggers"][0]["metadata"]
                    query, threshold = trigger["query"], float(trigger["threshold"])
                else:
                    external = scaler["spec"]["metrics"][0]["external"]
                    selector = external["metric"].get("selector", {}).get("matchLabels", {})
                    query = prom.adapter_query(adapter, external["metric"]["name"], selector, namespace)
                    threshold = float(external["target"]["averageValue"])
                    assert query == annotations["gpt-oss/query"], "the HPA's annotation is not what the adapter runs"
                name = f"{release_id}/{kind}/{annotations['gpt-oss/scales']}"
                scalers.append({"name": name, "threshold": threshold, "min": scaler["spec"].get(
                    "minReplicas", scaler["spec"].get("minReplicaCount")), "role": annotations["gpt-oss/scales"]})
                spec_queries[name] = {"promql": query, "on": list(PROMETHEUS_PORTS)}
                role = "frontend" if name.endswith("/frontend") else "worker"
                jobs = {"chart": f"{namespace}/gpt-oss-{role}", "platform": f"{monitoring}/dynamo-{role}"}
                for job_key, job in jobs.items():
                    spec_queries[f"{name} job={job_key}"] = {"promql": with_job(query, job), "on": ["both"]}
                spec_queries[f"{name} naive"] = {"promql": re.sub(r"sum\(max by \([^)]*\) \(", "sum((", query),
                                                 "on": ["both"]}
        for name, promql in LINE_SERIES[line].items():
            spec_queries[f"line {release_id}: {name}"] = {"promql": promql.replace("$namespace", namespace),
                                                          "on": list(PROMETHEUS_PORTS)}
        for title, expr in dashboard_queries(objects, namespace).items():
            dashboards[f"{release_id}: {title}"] = expr
            spec_queries[f"dashboard {release_id}: {title}"] = {"promql": expr, "on": ["both"]}
        frontends.append({"url": f"http://127.0.0.1:{port}", "model": part["model"], "requests": REQUESTS,
                          "words": 800, "max_tokens": 32})
        if plan is None:
            plan = {**part, "jobs": []}
        else:
            plan["services"] += part["services"]
            plan["dirs"] += part["dirs"]
            plan["files"].update(part["files"])
            plan["model_paths"] = sorted(set(plan["model_paths"]) | set(part["model_paths"]))
    extra = beside(cluster) if beside else {}
    chart_namespaces = [*namespaces.values(), *([extra["namespace"]] if extra else [])]
    targets = {where: count + (0 if where == "platform" else extra.get("targets", 0))
               for where, count in TARGETS.items()}
    plan["services"] += extra.get("services", [])
    plan["model_paths"] = sorted(set(plan["model_paths"]) | set(extra.get("model_paths", [])))
    frontends += extra.get("frontends", [])
    spec_queries.update({name: {"promql": promql, "on": ["chart"]}
                         for name, promql in extra.get("queries", {}).items()})
    # The chart's PodMonitors (one pair per release), the platform's (once, for both releases), and both.
    for monitor in prom.platform_podmonitors(monitoring, list(namespaces.values()), INTERVAL):
        cluster.create(monitor, monitoring)
    cluster.pods(pods + extra.get("pods", []))
    configurations = prom.operator_configurations(
        cluster, monitoring, {"chart": chart_namespaces, "platform": [monitoring],
                              "both": [*chart_namespaces, monitoring]}, release, INTERVAL)
    for service in plan["services"]:  # one marker for the whole run: stack.py finds every leftover by it
        service["env"][e2e_plan.RUN_ENV] = plan["run_dir"]
    env = dict(plan["services"][0]["env"])
    prometheus = {where: prom.prometheus_service(f"prometheus-{where}", run_dir / f"prometheus-{where}", port,
                                                 configurations[where], env, release)
                  for where, port in PROMETHEUS_PORTS.items()}
    plan["services"] = [prom.api_bridge_service(python, tmp_dir / "api.sock", env), *plan["services"],
                        *prometheus.values()]
    spec = {"frontends": frontends, "prometheus": {k: v["url"] for k, v in prometheus.items()}, "targets": targets,
            "queries": spec_queries, "alerts_on": "both", "ready_timeout": 150, "load_timeout": 150, "settle": 4}
    spec_path = run_dir / "probe-spec.json"
    spec_path.write_text(json.dumps(spec, indent=1))
    plan["jobs"] = [{"name": "monitoring-probe", "timeout": 420, "env": env,
                     "argv": [python, str(PROBE), str(spec_path)]}]
    return plan, {"scalers": scalers, "dashboards": dashboards, "configurations": configurations,
                  "namespaces": {**namespaces, "monitoring": monitoring}, "renders": keda_renders,
                  "spec_path": spec_path}


@pytest.fixture(scope="module")
def live(dynamo_line, dynamo_python, prometheus_release, e2e_python, tokenizer_dir, tmp_path_factory,
         monitoring_cluster):
    release = prometheus_release
    run_dir = tmp_path_factory.mktemp(f"monitoring-live-{dynamo_line}-{release}")
    tmp_dir = Path(tempfile.mkdtemp(prefix="gpt-oss-mon-"))
    try:
        with prom.OperatorRun(monitoring_cluster.api_client, monitoring_cluster.kubeconfig,
                              run_dir / "cluster") as cluster:
            plan, expected = build(dynamo_python, tokenizer_dir, run_dir, tmp_dir, release, cluster, dynamo_line,
                                   e2e_python)
            expected["line"] = dynamo_line
            with prom.host_api_bridge(tmp_dir / "api.sock", monitoring_cluster.access):
                run = e2e._run_plan(f"monitoring dynamo-{dynamo_line}", [], plan, dynamo_python, tokenizer_dir,
                                    run_dir)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    output = run.job("monitoring-probe").get("output", "")
    last = output.strip().splitlines()[-1] if output.strip() else ""
    if not last.startswith("{") or "error" in json.loads(last):
        pytest.fail(f"the probe recorded nothing usable: {last}\n{run.logs()}", pytrace=False)
    return json.loads(last), expected, run


def values_of(results: list[dict] | None) -> list[float]:
    return [r["value"] for r in results or []]


def single(results: list[dict] | None) -> float | None:
    found = values_of(results)
    assert len(found) <= 1, results
    return found[0] if found else None


def hpa_desired(value: float, target: float, current: int) -> int:
    """autoscaling/v2 on an AverageValue External metric (KEDA feeds the HPA the same way): the usage ratio
    value / (current x target), inside a 10% tolerance no change, else ceil(ratio x current)."""
    ratio = value / (current * target)
    return current if abs(ratio - 1.0) <= 0.1 else math.ceil(ratio * current)


class TestScalerQueries:
    def test_should_serve_the_whole_burst(self, live):
        data, _, run = live
        requests = data["requests"]
        assert requests["ok"] == requests["sent"] == 2 * REQUESTS and not requests["errors"], (requests, run.logs())

    def test_should_read_every_scaler_above_its_threshold_under_load_and_below_after(self, live):
        data, expected, _ = live
        for scaler in expected["scalers"]:
            for where in PROMETHEUS_PORTS:
                peak = max((single(s["results"][scaler["name"]][where]) or 0.0) for s in data["load"])
                after = single(data["after"][scaler["name"]][where])
                assert peak > scaler["threshold"], (scaler, where, peak)
                assert after is not None and after < scaler["threshold"], (scaler, where, after)

    def test_should_ask_for_more_replicas_under_load_and_none_after(self, live):
        data, expected, _ = live
        for scaler in expected["scalers"]:
            peak = max((single(s["results"][scaler["name"]]["both"]) or 0.0) for s in data["load"])
            after = single(data["after"][scaler["name"]]["both"])
            assert hpa_desired(peak, scaler["threshold"], scaler["min"]) > scaler["min"], (scaler, peak)
            assert hpa_desired(after, scaler["threshold"], scaler["min"]) <= scaler["min"], (scaler, after)

    def test_should_count_each_release_only(self, live):
        """Two releases run at once; no query of one may see the other's requests (each sent 24)."""
        data, expected, _ = live
        for scaler in expected["scalers"]:
            peak = max((single(s["results"][scaler["name"]]["chart"]) or 0.0) for s in data["load"])
            assert peak <= REQUESTS, (scaler, peak)


class TestBothPodMonitors:
    def test_should_scrape_every_pod_once_per_setup(self, live):
        data, _, _ = live
        # What each Prometheus discovered from the API server through the operator's configuration, and scraped.
        assert data["targets"] == TARGETS, data["targets"]

    def test_should_scrape_with_the_operators_jobs(self, live):
        """The operator wrote one scrape job per PodMonitor endpoint: the chart's two per release, the platform's five
        (dynamo-worker's four ports and dynamo-frontend), and kept the chart's honorLabels and relabelings."""
        _, expected, _ = live
        jobs = {where: sorted(job["job_name"] for job in configuration["config"]["scrape_configs"])
                for where, configuration in expected["configurations"].items()}
        namespaces = expected["namespaces"]
        chart = sorted(f"podMonitor/{namespaces[r]}/gpt-oss-{role}/0" for r in ("agg", "disagg")
                       for role in ("frontend", "worker"))
        platform = sorted([f"podMonitor/{namespaces['monitoring']}/dynamo-frontend/0",
                           *(f"podMonitor/{namespaces['monitoring']}/dynamo-worker/{i}" for i in range(4))])
        assert jobs == {"chart": chart, "platform": platform, "both": sorted(chart + platform)}
        frontend = next(job for job in expected["configurations"]["chart"]["config"]["scrape_configs"]
                        if job["job_name"].endswith("/gpt-oss-frontend/0"))
        assert frontend["honor_labels"] is True and frontend["metrics_path"] == "/metrics"
        assert {"source_labels": ["__meta_kubernetes_pod_label_nvidia_com_dynamo_namespace"],
                "target_label": "dynamo_namespace", "action": "replace"}.items() <= next(
            rule for rule in frontend["relabel_configs"] if rule.get("target_label") == "dynamo_namespace").items()

    def test_should_not_double_the_scaler_values(self, live):
        data, expected, _ = live
        doubled = 0
        # Readings on data complete up to their instant (monitoring_probe.settled): every scrape of both jobs is in.
        complete = [sample for sample in data["load"] if sample["settled"]]
        assert len(complete) >= len(data["load"]) // 2, [s["settled"] for s in data["load"]]
        for sample in complete:
            for scaler in expected["scalers"]:
                results = sample["results"]
                both = single(results[scaler["name"]]["both"])
                per_job = [single(results[f"{scaler['name']} job={job}"]["both"]) for job in ("chart", "platform")]
                naive = single(results[f"{scaler['name']} naive"]["both"])
                if both is None or None in per_job:
                    continue
                # One pod per role here: the once-per-pod value is the larger of the two scrapes, never their sum.
                assert both == max(per_job), (scaler["name"], both, per_job)
                if both > 0 and naive is not None and naive >= 1.5 * both:
                    doubled += 1
        assert doubled, "a plain sum over both scrapes never exceeded the once-per-pod value: nothing was tested"


class TestReleaseLineSeries:
    def test_should_serve_the_lines_metric_names_under_load(self, live):
        """Each series the line's chart reads where the lines differ comes from the real frontend and workers of that
        line, through every Prometheus (the 1.6 line: the replacements of the deprecated frontend gauges)."""
        data, expected, _ = live
        silent = []
        for name in LINE_SERIES[expected["line"]]:
            for release in ("agg", "disagg"):
                for where in PROMETHEUS_PORTS:
                    peak = max((single(s["results"][f"line {release}: {name}"][where]) or 0.0) for s in data["load"])
                    if not peak > 0:
                        silent.append((release, name, where, peak))
        assert not silent, f"dynamo-{expected['line']}: series that never rose above 0 under the burst: {silent}"


class TestDashboard:
    def test_should_return_data_for_every_rendered_expression(self, live):
        data, expected, _ = live
        empty = []
        for name in expected["dashboards"]:
            key = f"dashboard {name}"
            seen = [values_of(s["results"][key]["both"]) for s in data["load"]] + [values_of(data["after"][key]["both"])]
            if not any(v for v in seen):
                empty.append(name)
        assert not empty, f"dashboard expressions that returned nothing: {empty}"


class TestAlerts:
    @staticmethod
    def states(data: dict) -> dict[str, set[str]]:
        seen: dict[str, set[str]] = {}
        for sample in data["alerts"]:
            for alert in sample["alerts"]:
                seen.setdefault(alert["name"], set()).add(alert["state"])
        return seen

    def test_should_fire_the_overload_alerts_on_the_burst(self, live):
        data, _, _ = live
        firing = [max(sum(1 for a in s["alerts"] if a["name"] == name and a["state"] == "firing") for s in data["alerts"])
                  for name in ("GptOssRequestsQueuing", "GptOssTTFTHigh", "GptOssITLHigh")]
        # One rule group per release: each overload alert fires for both.
        assert firing == [2, 2, 2], (firing, self.states(data))

    def test_should_not_fire_the_idle_alerts(self, live):
        data, _, _ = live
        states = self.states(data)
        # Workers serve the model throughout; no download Job here; no KV-cache gauge (the mocker exports none).
        assert not {"GptOssNoModelServed", "GptOssModelDownloadFailed", "GptOssKVCacheNearFull"} & set(states), states


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-m", "e2e", "-q"]))
