"""examples/argocd: one Application per overlay, each in a namespace of its own under the scoped AppProject beside them,
and sync waves that download before serving."""
from __future__ import annotations

import copy
import functools
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.helpers import CHART_DIR, DYNAMO_OVERLAYS, OVERLAYS, REPO_ROOT, RUNTIMES, VALUES_DIR, dump, find, render_chart

ARGOCD_DIR = REPO_ROOT / "examples" / "argocd"
PROJECT = "appproject.yaml"  # the examples' AppProject; every other file is an Application
APPLICATIONS = sorted(path.name for path in ARGOCD_DIR.glob("*.yaml") if path.name != PROJECT)
POD_SECURITY_ENFORCE = "pod-security.kubernetes.io/enforce"
WAVE = "argocd.argoproj.io/sync-wave"
HOOK = "helm.sh/hook"


@functools.lru_cache(maxsize=None)
def _application(name: str) -> dict:
    return yaml.safe_load((ARGOCD_DIR / name).read_text())


def load_application(name: str) -> dict:
    return copy.deepcopy(_application(name))


def value_files(app: dict) -> list[Path]:
    """The Application's value files, resolved the way Argo CD does: relative to the chart path."""
    source = app["spec"]["source"]
    return [(REPO_ROOT / source["path"] / entry).resolve() for entry in source["helm"]["valueFiles"]]


def release_name(app: dict) -> str:
    # Argo CD's Helm release name is the Application name unless helm.releaseName says otherwise.
    return app["spec"]["source"]["helm"].get("releaseName", app["metadata"]["name"])


def application_for(overlay: str) -> dict:
    apps = [load_application(name) for name in APPLICATIONS
            if (VALUES_DIR / overlay).resolve() in value_files(load_application(name))]
    assert len(apps) == 1, f"{overlay}: expected one Application using it, found {len(apps)}"
    return apps[0]


def render_as_argocd(overlay: str) -> list[dict]:
    """What Argo CD renders for the overlay's Application: its value files, release name and namespace."""
    app = application_for(overlay)
    return render_chart([str(path) for path in value_files(app)], name=release_name(app),
                        namespace=app["spec"]["destination"]["namespace"])


def synced(objects: list[dict]) -> list[dict]:
    """The objects a sync applies: everything but helm hooks."""
    return [o for o in objects if HOOK not in o["metadata"].get("annotations", {})]


def runtime_of(app: dict) -> str:
    return RUNTIMES[value_files(app)[-1].name]


def workloads(objects: list[dict], overlay: str) -> list[dict]:
    """What serves the model: the DynamoGraphDeployment, or trtllm-serve's Deployment and Service."""
    kinds = {"dynamo": ["DynamoGraphDeployment"], "trtllm-serve": ["Deployment", "Service"]}[RUNTIMES[overlay]]
    return [find(objects, kind) for kind in kinds]


def wave(obj: dict) -> int:
    # Argo CD's default wave is 0 for objects without the annotation.
    return int(obj["metadata"].get("annotations", {}).get(WAVE, "0"))


class TestApplications:
    @pytest.mark.parametrize("name", APPLICATIONS, ids=APPLICATIONS)
    def test_should_point_at_the_chart_and_an_existing_overlay(self, name):
        app = load_application(name)
        assert (app["apiVersion"], app["kind"]) == ("argoproj.io/v1alpha1", "Application")
        source = app["spec"]["source"]
        assert (REPO_ROOT / source["path"]).resolve() == CHART_DIR.resolve(), source["path"]
        files = value_files(app)
        assert files, f"{name}: no helm.valueFiles"
        for path in files:
            assert path.is_file(), f"{name}: value file {path} does not exist"
            assert path.parent == VALUES_DIR.resolve(), f"{name}: {path} is not an overlay in values/"

    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_have_one_application_per_overlay(self, overlay):
        app = application_for(overlay)
        # Named after the overlay, so the file tells which target it deploys.
        assert app["metadata"]["name"] == f"gpt-oss-{Path(overlay).stem}"

    @pytest.mark.parametrize("name", APPLICATIONS, ids=APPLICATIONS)
    def test_should_create_the_namespace_and_apply_server_side(self, name):
        spec = load_application(name)["spec"]
        assert spec["destination"]["namespace"], f"{name}: no destination namespace"
        options = spec["syncPolicy"]["syncOptions"]
        for option in ("CreateNamespace=true", "ServerSideApply=true", "RespectIgnoreDifferences=true",
                       "FailOnSharedResource=true"):
            assert option in options, f"{name}: {option} missing from {options}"

    @pytest.mark.parametrize("name", APPLICATIONS, ids=APPLICATIONS)
    def test_should_deploy_into_a_namespace_of_its_own_enforcing_restricted_pod_security(self, name):
        app = load_application(name)
        # Named after the Application (its release), so two Applications never share one.
        assert app["spec"]["destination"] == {"server": "https://kubernetes.default.svc",
                                              "namespace": app["metadata"]["name"]}, app["spec"]["destination"]
        # Argo CD applies these labels to the namespace it creates (CreateNamespace=true), and keeps them.
        labels = app["spec"]["syncPolicy"]["managedNamespaceMetadata"]["labels"]
        assert labels == {POD_SECURITY_ENFORCE: "restricted", f"{POD_SECURITY_ENFORCE}-version": "latest"}, labels

    def test_should_give_every_application_another_namespace(self):
        namespaces = [load_application(name)["spec"]["destination"]["namespace"] for name in APPLICATIONS]
        assert len(set(namespaces)) == len(namespaces), namespaces

    @pytest.mark.parametrize("name", APPLICATIONS, ids=APPLICATIONS)
    def test_should_skip_helm_test_hooks(self, name):
        # Belt and braces: Argo CD ignores test hooks, skipTests keeps them out of the render too.
        assert load_application(name)["spec"]["source"]["helm"].get("skipTests") is True

    @pytest.mark.parametrize("name", APPLICATIONS, ids=APPLICATIONS)
    def test_should_diff_a_deployment_on_the_api_server(self, name):
        # Argo CD 3.6 diffs a ServerSideApply=true Application on the API server by default; before 3.6 a client-side
        # diff of a server-side applied Deployment reads a compiled-in schema, which fails on status fields newer than
        # it ("field not declared in schema": Kubernetes 1.37's terminatingReplicas), so the examples ask for it.
        app = load_application(name)
        annotations = app["metadata"].get("annotations", {})
        deploys = any(o["kind"] == "Deployment" for o in synced(render_as_argocd(value_files(app)[-1].name)))
        assert deploys == (runtime_of(app) == "trtllm-serve"), name
        assert (annotations.get("argocd.argoproj.io/compare-options") == "ServerSideDiff=true") == deploys, annotations

    @pytest.mark.parametrize("name", APPLICATIONS, ids=APPLICATIONS)
    def test_should_ignore_the_fields_the_dynamo_operator_writes(self, name):
        app = load_application(name)
        if runtime_of(app) == "trtllm-serve":
            # No operator writes to a Deployment or Service: ignoring fields would only hide drift.
            assert not app["spec"].get("ignoreDifferences"), name
            return
        entries = [entry for entry in app["spec"].get("ignoreDifferences", [])
                   if (entry.get("group"), entry.get("kind")) == ("nvidia.com", "DynamoGraphDeployment")]
        assert len(entries) == 1, f"{name}: expected one ignoreDifferences entry for the DGD"
        paths = entries[0]["jqPathExpressions"]
        for path in ('.metadata.annotations["nvidia.com/dynamo-operator-origin-version"]',
                     '.metadata.annotations["nvidia.com/workload-provider"]',
                     ".spec.components[]?.minAvailable"):
            assert path in paths
        # Ignoring replicas without an autoscaler would stop Git's replica changes from applying.
        assert not any("replicas" in path for path in paths), paths


def project() -> dict:
    return yaml.safe_load((ARGOCD_DIR / PROJECT).read_text())


def rendered_kinds() -> set[tuple[str, str]]:
    """(group, kind) of every object a sync applies, over every overlay and every optional component on (the injection
    test's cases, and the HPA an autoscaler renders with scaler=hpa)."""
    from tests.chart.validation.test_injection import CASES, case_values
    renders = [render_chart([overlay]) for overlay in OVERLAYS]
    for runtime, source in CASES:
        overlay = "agg.yaml" if runtime == "dynamo" else "trtllm-serve-low-latency.yaml"
        renders.append(render_chart([overlay], case_values(runtime, source)))
    renders.append(render_chart(["trtllm-serve-low-latency.yaml"],
                                {"trtllmServe": {"autoscaling": {"enabled": True, "scaler": "hpa"}}}))
    return {(o["apiVersion"].rpartition("/")[0], o["kind"]) for objects in renders for o in synced(objects)}


class TestProject:
    """appproject.yaml: the examples' own AppProject, scoped to what they need (issue 55): Argo CD's `default` project
    allows any repository, any destination and every cluster-scoped kind."""

    def test_should_be_the_project_of_every_application(self):
        app_project = project()
        assert (app_project["apiVersion"], app_project["kind"]) == ("argoproj.io/v1alpha1", "AppProject")
        assert app_project["metadata"] == {"name": "gpt-oss", "namespace": "argocd"}
        assert {load_application(name)["spec"]["project"] for name in APPLICATIONS} == {"gpt-oss"}

    def test_should_allow_only_the_repository_the_applications_render_from(self):
        repos = {load_application(name)["spec"]["source"]["repoURL"] for name in APPLICATIONS}
        assert project()["spec"]["sourceRepos"] == sorted(repos) and "*" not in repos

    def test_should_allow_only_each_applications_namespace(self):
        destinations = [load_application(name)["spec"]["destination"] for name in APPLICATIONS]
        allowed = project()["spec"]["destinations"]
        assert sorted(allowed, key=str) == sorted(destinations, key=str), allowed
        # No glob: every entry one namespace on one cluster (Argo CD matches these as globs).
        assert not any(set("*?[") & set(entry["namespace"] + entry["server"]) for entry in allowed), allowed

    def test_should_allow_no_cluster_scoped_kind_but_the_applications_namespaces(self):
        spec = project()["spec"]
        namespaces = sorted(load_application(name)["spec"]["destination"]["namespace"] for name in APPLICATIONS)
        # CreateNamespace=true and managedNamespaceMetadata apply the Namespace; Argo CD v3.6 checks it against this
        # list like any object (controller/sync.go validateSyncPermissions), by name (matched as a glob).
        assert sorted(spec["clusterResourceWhitelist"], key=str) == sorted(
            ({"group": "", "kind": "Namespace", "name": namespace} for namespace in namespaces), key=str), spec[
                "clusterResourceWhitelist"]
        assert not {"clusterResourceBlacklist", "namespaceResourceBlacklist", "sourceNamespaces"} & set(spec)

    def test_should_allow_exactly_the_namespaced_kinds_the_chart_renders(self):
        allowed = {(entry["group"], entry["kind"]) for entry in project()["spec"]["namespaceResourceWhitelist"]}
        assert len(allowed) == len(project()["spec"]["namespaceResourceWhitelist"])
        rendered = rendered_kinds()
        assert allowed == rendered, {"allowed, never rendered": allowed - rendered,
                                     "rendered, not allowed": rendered - allowed}
        assert ("", "Secret") not in allowed and ("", "Pod") not in allowed


class TestSyncWaves:
    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_create_the_pvc_then_download_then_the_dgd(self, overlay):
        objects = synced(render_as_argocd(overlay))
        pvc, job = find(objects, "PersistentVolumeClaim"), find(objects, "Job")
        for workload in workloads(objects, overlay):
            assert wave(pvc) < wave(job) < wave(workload), dump([(o["kind"], wave(o)) for o in (pvc, job, workload)])

    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_create_configmaps_no_later_than_the_dgd(self, overlay):
        objects = synced(render_as_argocd(overlay))
        dgd_wave = min(wave(o) for o in workloads(objects, overlay))
        job_wave = wave(find(objects, "Job"))
        configmaps = {o["metadata"]["name"]: wave(o) for o in objects if o["kind"] == "ConfigMap"}
        scripts = [name for name in configmaps if name.endswith("-scripts")]
        engine = [name for name in configmaps if name.endswith("-engine")]
        assert len(scripts) == 1 and len(engine) == 1, configmaps
        # The download Job mounts the scripts; the workers mount the engine config.
        assert configmaps[scripts[0]] < job_wave, configmaps
        assert configmaps[engine[0]] <= dgd_wave, configmaps

    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_never_put_a_helm_test_hook_in_a_sync_wave(self, overlay):
        # Rendered without skipTests, as an Argo CD that lacks the field would.
        objects = render_as_argocd(overlay)
        hooks = [o for o in objects if HOOK in o["metadata"].get("annotations", {})]
        assert {o["metadata"]["annotations"][HOOK] for o in hooks} == {"test"}, dump(hooks)
        assert any(o["kind"] == "Job" and o["metadata"]["name"].endswith("-benchmark") for o in hooks)
        for obj in hooks:
            annotations = obj["metadata"]["annotations"]
            assert WAVE not in annotations, f"{obj['kind']} {obj['metadata']['name']} is a test hook with a wave"
            # An Argo CD hook annotation would make Argo CD run it (and ignore every Helm hook).
            assert not any(key.startswith("argocd.argoproj.io/hook") for key in annotations), annotations

    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_keep_the_waves_with_monitoring_on(self, overlay):
        objects = render_chart([overlay], {"monitoring": {"podMonitor": {"enabled": True},
                                                          "dashboard": {"enabled": True}}})
        dgd_wave = wave(find(objects, "DynamoGraphDeployment"))
        monitors = [o for o in objects if o["kind"] == "PodMonitor"]
        assert monitors and all(wave(o) >= dgd_wave for o in monitors)


class TestLocalOverride:
    """docs/gitops.md: an example is tried against another repository by changing repoURL and targetRevision only."""

    def documented_command(self) -> str:
        text = (REPO_ROOT / "docs" / "gitops.md").read_text()
        command = re.search(r"^(sed -e .*?) \| kubectl create -f -$", text, re.M | re.S)
        assert command, "docs/gitops.md no longer shows the sed override"
        return command.group(1).replace("\\\n", " ")

    @pytest.mark.parametrize("name", APPLICATIONS + [PROJECT], ids=APPLICATIONS + [PROJECT])
    def test_should_give_the_documented_override_by_sed(self, name):
        from tests.cluster.gitops import local_application, local_project
        command = self.documented_command().replace("examples/argocd/agg.yaml", f"examples/argocd/{name}")
        overridden = yaml.safe_load(subprocess.run(["bash", "-c", command], cwd=REPO_ROOT, check=True,
                                                   capture_output=True, text=True).stdout)
        local = "file:///srv/git/gpt-oss.git"
        assert overridden == (local_project(local) if name == PROJECT else local_application(name, local, "main"))
        assert overridden != (project() if name == PROJECT else load_application(name))
