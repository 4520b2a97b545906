"""Argo CD syncs the chart for real: every Application of examples/argocd, rendered by Argo CD's own repo-server (the
helm v4 CLI its image ships) from the chart's repository served as git (tests/cluster/gitops.py ScratchRepo), synced by
its application controller into the control plane (ci/gptoss_python -m ci.cluster argocd starts both, with Redis, its CRDs and
config), each into the namespace of its own Argo CD creates, under the examples' scoped AppProject. Then two teams: a
second team's release named like the first's syncs into its own namespace, and every way it could reach the first's
objects is refused (its project, the project at sync, FailOnSharedResource). Then day two by Git: an upgrade by commit,
a commit the chart refuses, self-heal with and without an HPA, and deleting every Application with cascade.

API-only nodes run no pods and no Dynamo operator runs here: the stand-ins of tests/cluster/gitops.py finish the
download Job's pod (so the real Job controller completes the Job and Argo CD moves to the next wave) and write on each
DGD what the operator writes. The Deployment, Job, PV binder, garbage collector and HPA controllers are the real ones.
Argo CD's controller watches the whole cluster: `argocd` tests run alone on their cluster (ci/test-tiers.sh gives them a
control plane of their own).
"""
from __future__ import annotations

import re
import time
import warnings
from pathlib import Path

import pytest

from ci.cluster import argocd as ARGOCD
from ci.cluster import go_parts
from tests.cluster import gitops, kube
from tests.helpers import RUNTIMES, deep_merge, render_chart, skip_for_missing_part
from tests.helpers.cleanup import cleaned_up
from tests.examples.test_argocd import HOOK, release_name, synced, value_files, wave

pytestmark = pytest.mark.argocd

APPLICATIONS = gitops.application_files()
SYNC_TIMEOUT = 480  # every example's first sync, on a 2-core machine that runs the node and cluster planes beside it
# The field manager of Argo CD's server-side apply (gitops-engine's sync with ServerSideApply=true).
ARGOCD_MANAGER = "argocd-controller"
# The Dynamo target the day-two commits change; the trtllm-serve one is whichever got the GPUs (serve_app).
DYNAMO_APP = "agg.yaml"
SERVE_APPS = [name for name in APPLICATIONS
              if RUNTIMES[value_files(gitops.load_example(name))[-1].name] == "trtllm-serve"]
# How long the controller gets to take a hard refresh (it takes one within seconds), then once more after asking again.
REFRESH_TAKEN_WITHIN = (30, 60)
# Set with each refresh request: the test's own annotation, which Argo CD does not read.
REFRESH_REQUESTED = "gpt-oss.test/refresh-requested"
# The chart's own refusal (templates/validation/_check-gpu.tpl) of the invalid commit below.
REFUSAL = "gpu.type=GB200 runs only on ARM64 (Grace) nodes, but gpu.nodeArch=amd64; allowed: gpu.nodeArch=arm64"


def app_name(name: str) -> str:
    """The Application's name: of an example by its file name, or a team's Application, named as itself."""
    return gitops.load_example(name)["metadata"]["name"] if name.endswith(".yaml") else name


def namespace_of(name: str) -> str:
    """The example's destination: a namespace of its own, named after it."""
    return gitops.load_example(name)["spec"]["destination"]["namespace"]


def overlay_of(name: str) -> str:
    return value_files(gitops.load_example(name))[-1].name


def render_application(app: dict, extra_values: dict | None = None, hooks: bool = False) -> list[dict]:
    """What Argo CD should apply for an Application: its value files and valuesObject, release name and destination
    namespace (Helm v4 SDK render)."""
    values = deep_merge(app["spec"]["source"]["helm"].get("valuesObject") or {}, extra_values or {})
    objects = render_chart([str(path) for path in value_files(app)], values or None, name=release_name(app),
                           namespace=app["spec"]["destination"]["namespace"])
    return objects if hooks else synced(objects)


def rendered(name: str, extra_values: dict | None = None, hooks: bool = False) -> list[dict]:
    """What Argo CD should apply for the example."""
    return render_application(gitops.load_example(name), extra_values, hooks)


# --- two teams (issue 55) -------------------------------------------------------------------------------------------
# Team A is the examples' agg Application, in namespace gpt-oss-agg under the examples' project. Team B names its
# release like A's (fullnameOverride: every object A's fullname names, its DGD among them) and has a project of its own,
# a copy of the examples' with its name and namespace: its Application syncs into its own namespace beside A's; aimed
# at A's namespace it is refused by its project; its dashboard, allowed by the chart into A's namespace, is refused at
# sync by the project; and under a project that does list A's namespace (the examples' copied unchanged, the mistake
# FailOnSharedResource=true is there for) the takeover fails the sync and A keeps its objects.
TEAM_A = DYNAMO_APP
TEAM_B = "team-b"  # team B's AppProject
TEAM_B_COPY = "team-b-copy"  # team B's project copied from the examples' unchanged: it lists team A's namespaces
TEAM_B_APP = "team-b-agg"  # team B's Application, release and namespace
INTO_A = "team-b-into-a"  # team B's Application aimed at A's namespace, under team B's project
DASHBOARD_INTO_A = "team-b-dashboard"  # team B's release whose dashboard goes to A's namespace
TAKEOVER = "team-b-takeover"  # team B's Application aimed at A's namespace, under the copied project
TEAM_B_APPS = (TEAM_B_APP, INTO_A, DASHBOARD_INTO_A, TAKEOVER)


def team_a_fullname() -> str:
    return next(o for o in rendered(TEAM_A) if o["kind"] == "DynamoGraphDeployment")["metadata"]["name"]


def team_b_application(repo_url: str, name: str = TEAM_B_APP, project: str = TEAM_B, namespace: str = TEAM_B_APP,
                       values: dict | None = None) -> dict:
    """Team B's Application: the agg example, renamed, under its project and namespace, its release named like team
    A's; refused ones get no resources finalizer (they never own anything)."""
    app = gitops.local_application(TEAM_A, repo_url)
    app["metadata"]["name"] = name
    if name != TEAM_B_APP:
        del app["metadata"]["finalizers"]
    app["spec"]["project"] = project
    app["spec"]["destination"]["namespace"] = namespace
    app["spec"]["source"]["helm"]["valuesObject"] = values or {"fullnameOverride": team_a_fullname()}
    return app


def team_project(repo_url: str, name: str, namespaces: list[str] | None = None) -> dict:
    """The examples' AppProject as a team copies it: its own name and, given, its own namespaces (destinations and the
    Namespace objects CreateNamespace applies)."""
    project = gitops.local_project(repo_url)
    project["metadata"]["name"] = name
    if namespaces is not None:
        server = project["spec"]["destinations"][0]["server"]
        project["spec"]["destinations"] = [{"server": server, "namespace": ns} for ns in namespaces]
        project["spec"]["clusterResourceWhitelist"] = [{"group": "", "kind": "Namespace", "name": ns}
                                                       for ns in namespaces]
    return project


# Every namespace the module's Applications write: the examples' own and team B's.
NAMESPACES = sorted({namespace_of(name) for name in APPLICATIONS} | {TEAM_B_APP})
PROJECTS = (gitops.load_example(gitops.PROJECT)["metadata"]["name"], TEAM_B, TEAM_B_COPY)


def create_project(k8s: kube.Kube, project: dict) -> None:
    k8s.custom.create_namespaced_custom_object(gitops.APP_GROUP, gitops.APP_VERSION, ARGOCD.NAMESPACE, "appprojects",
                                               project)


def create_application(k8s: kube.Kube, app: dict) -> None:
    k8s.custom.create_namespaced_custom_object(gitops.APP_GROUP, gitops.APP_VERSION, ARGOCD.NAMESPACE,
                                               gitops.APP_PLURAL, app)


class Argo:
    """Reads and nudges the Applications of the module's Argo CD."""

    def __init__(self, k8s: kube.Kube, state: Path):
        self.k8s, self.state = k8s, state  # state: the Argo CD's folder (ci.cluster.argocd), its logs in it

    def get(self, name: str) -> dict | None:
        try:
            return self.k8s.custom.get_namespaced_custom_object(gitops.APP_GROUP, gitops.APP_VERSION, ARGOCD.NAMESPACE,
                                                                gitops.APP_PLURAL, app_name(name))
        except Exception as error:
            if kube.is_not_found(error):
                return None
            raise

    def refresh(self, name: str) -> None:
        """What a Git webhook or `argocd app get --hard-refresh` does: compare again now, without the repo cache. Like
        the CLI it waits until the controller has taken the request (removed the annotation), and asks once more if it
        has not: in a CI run the controller never took the request after a revert, and its soft comparisons went on
        resolving the branch from the repo-server's 3-minute ref cache to the commit before (refused: the test timed
        out on a cached ComparisonError)."""
        for attempt, taken_within in enumerate(REFRESH_TAKEN_WITHIN, start=1):
            # The second annotation makes every request a change, so the controller's watch sees each one.
            self.k8s.custom.patch_namespaced_custom_object(
                gitops.APP_GROUP, gitops.APP_VERSION, ARGOCD.NAMESPACE, gitops.APP_PLURAL, app_name(name),
                {"metadata": {"annotations": {gitops.REFRESH: "hard", REFRESH_REQUESTED: f"{time.time():.6f}"}}})
            try:
                self.wait(name, "the hard refresh taken", lambda app: gitops.REFRESH not in (
                    app["metadata"].get("annotations") or {}), taken_within)
                return
            except AssertionError as missed:
                if attempt == len(REFRESH_TAKEN_WITHIN):
                    raise
                warnings.warn(f"Argo CD's controller did not take a hard refresh of {app_name(name)} within "
                              f"{taken_within}s: asked again\n{missed}")

    def wait(self, name: str, what: str, check, timeout: float = 120) -> dict:
        return kube.wait_for(f"{app_name(name)}: {what}", lambda: (lambda app: app if app and check(app) else None)(
            self.get(name)), timeout, interval=1, explain=lambda: (
                f"{summary(self.get(name))}\n{errors_logged(self.state)}\n{reconciliations_logged(self.state, name)}"))

    def wait_synced(self, name: str, revision: str, timeout: float = 120) -> dict:
        """The sync of `revision` finished and succeeded, and the live state matches it."""
        return self.wait(name, f"Synced at {revision[:10]}", lambda app: (
            op(app).get("phase") == "Succeeded" and op(app).get("syncResult", {}).get("revision") == revision
            and app["status"].get("sync", {}).get("status") == "Synced"
            and app["status"]["sync"].get("revision") == revision), timeout)

    def wait_reconciled_after(self, name: str, moment, timeout: float = 90) -> dict:
        """A comparison that started after `moment` (reconciledAt has whole seconds: one second later)."""
        time.sleep(max(0.0, moment.timestamp() + 1.1 - time.time()))  # else it may count as one of the same second
        self.refresh(name)
        return self.wait(name, f"a reconciliation after {moment:%H:%M:%S}", lambda app: (
            (gitops.timestamp(app["status"].get("reconciledAt")) or moment).timestamp() >= moment.timestamp() + 1
            and gitops.REFRESH not in app["metadata"].get("annotations", {})), timeout)


def managers(obj: dict) -> set[str]:
    """Who wrote the object's fields by apply (server-side apply keeps the applier's field manager)."""
    return {entry["manager"] for entry in obj["metadata"].get("managedFields") or [] if entry["operation"] == "Apply"}


def errors_logged(state: Path, most: int = 6) -> str:
    """The last errors the repo-server and the controller logged, whole (a condition keeps a part of one; the logs go
    with the state folder when the module's Argo CD stops)."""
    lines = []
    for command in ARGOCD.COMMANDS:
        log = state / "logs" / f"{command}.log"
        errors = [line for line in (log.read_text(errors="replace").splitlines() if log.exists() else [])
                  if "level=error" in line or "level=fatal" in line]
        lines += [f"{command}: {line[:1500]}" for line in errors[-most:]]
    return "\n".join(lines) or "Argo CD logged no error"


def reconciliations_logged(state: Path, name: str, most: int = 12) -> str:
    """The controller's last lines on the Application: which refreshes it began (soft, hard) and finished."""
    log = state / "logs" / "argocd-application-controller.log"
    field = re.compile(rf"\bapplication=(?:{ARGOCD.NAMESPACE}/)?{re.escape(app_name(name))}(?:\s|$)")
    lines = [line for line in (log.read_text(errors="replace").splitlines() if log.exists() else [])
             if field.search(line)]
    return "\n".join(f"argocd-application-controller: {line[:600]}" for line in lines[-most:]) or (
        f"the controller logged nothing on {app_name(name)}")


def op(app: dict) -> dict:
    return app.get("status", {}).get("operationState") or {}


def summary(app: dict | None) -> str:
    if not app:
        return "the Application does not exist"
    status = app.get("status", {})
    sync = status.get("sync", {})
    conditions = [(c.get("type"), c.get("message", "")[:400]) for c in status.get("conditions") or []]
    # Argo CD v3 keeps each resource's health out of the Application (resourceHealthSource: appTree)
    resources = [(r["kind"], r["name"], r.get("status"), *([r["health"].get("status")] if "health" in r else []))
                 for r in status.get("resources") or []]
    return (f"sync={sync.get('status')} at {str(sync.get('revision'))[:10]}, "
            f"health={status.get('health', {}).get('status')}, operation={op(app).get('phase')}: "
            f"{op(app).get('message', '')[:400]}; conditions={conditions}; resources={resources}")


# --- fixtures: Argo CD, the repository, the destination, and the first sync -----------------------------------------


@pytest.fixture(scope="module", autouse=True)
def one_b200_node(k8s):
    """The day-two cases need both trtllm-serve examples to want the plane's one 8-GPU B200 node (one gets it, the
    other waits): the planes have two since the operator tests hold both single-node targets at once, so the others
    are cordoned for this module."""
    cordoned = [node.metadata.name for node in k8s.core.list_node(label_selector="gpt-oss.test/profile=b200").items
                if node.metadata.name != "gpt-oss-b200-0" and not node.spec.unschedulable]
    for name in cordoned:
        k8s.core.patch_node(name, {"spec": {"unschedulable": True}})
    yield
    for name in cordoned:
        k8s.core.patch_node(name, {"spec": {"unschedulable": False}})


@pytest.fixture(scope="module")
def argocd(cluster_access, scheduler, job_pods, tmp_path_factory):
    if go_parts.built(ARGOCD.PART) is None:
        skip_for_missing_part(f"Argo CD is not built: python -m ci.cluster go-parts build {ARGOCD.PART}")
    import shutil
    if shutil.which("redis-server") is None:
        skip_for_missing_part("Argo CD needs Redis: redis-server is not installed (.ci/run installs Debian's)")
    state = tmp_path_factory.mktemp("argocd") / "state"
    try:
        ARGOCD.start(state, cluster_access.kubeconfig)
    except SystemExit as error:
        ARGOCD.stop(state)
        pytest.fail(f"Argo CD did not start: {error}")
    yield state
    left = ARGOCD.stop(state)
    assert not left, f"still running after stop: {left}"


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> gitops.ScratchRepo:
    return gitops.ScratchRepo(tmp_path_factory.mktemp("git"))


@pytest.fixture(scope="module")
def destination(k8s):
    """A volume per model-cache claim of every example and of team B's release: what a storage class would provide
    (the chart's PVC names none: the cluster's default). The namespaces are Argo CD's to create (CreateNamespace=true,
    with the Pod Security labels of managedNamespaceMetadata); this deletes them at the end."""
    volumes = []
    team_b_app = team_b_application("file:///")
    for namespace, objects in [(namespace_of(name), rendered(name)) for name in APPLICATIONS] + [
            (team_b_app["spec"]["destination"]["namespace"], render_application(team_b_app))]:
        claim = next(o for o in objects if o["kind"] == "PersistentVolumeClaim")
        volume = kube.model_cache_volume(namespace, claim["metadata"]["name"],
                                         claim["spec"]["resources"]["requests"]["storage"])
        volume["metadata"]["name"] = f"argocd-{namespace}-{claim['metadata']['name']}"
        del volume["spec"]["storageClassName"]
        k8s.core.create_persistent_volume(volume)
        volumes.append(volume["metadata"]["name"])
    yield NAMESPACES
    for namespace in NAMESPACES:
        try:
            k8s.core.delete_namespace(namespace)
        except Exception as error:
            if not kube.is_not_found(error):
                raise
    for volume in volumes:
        k8s.core.delete_persistent_volume(volume)
    # Bounded: a later run on the same cluster needs the names again. Pods on a node the reaper does not know (the surge
    # node) are confirmed gone by the stand-in kubelet, as their kubelet would.
    def gone():
        gitops.act_as_kubelet(k8s, NAMESPACES)
        return not [n.metadata.name for n in k8s.core.list_namespace().items if n.metadata.name in NAMESPACES]
    kube.wait_for(f"namespaces {', '.join(NAMESPACES)} deleted", gone, 90)


class FirstSync:
    def __init__(self, k8s, repo, recorder, operator_acts, argo: Argo):
        self.k8s, self.repo, self.recorder, self.argo = k8s, repo, recorder, argo
        self.revision = repo.head()
        self.operator_acts = operator_acts  # DGD name -> when the stand-in operator wrote on it
        self.apps: dict[str, dict] = {}


def stand_in_operator(k8s: kube.Kube, acted: dict) -> None:
    """Acts as the Dynamo operator on every DGD of the module's namespaces: once on a new one, and on delete removes its
    finalizer (having nothing of its own to clean up here)."""
    for dgd in k8s.custom.list_cluster_custom_object(kube.GROUP, "v1beta1", kube.DGD_PLURAL)["items"]:
        name, namespace = dgd["metadata"]["name"], dgd["metadata"]["namespace"]
        if namespace not in NAMESPACES:
            continue
        if dgd["metadata"].get("deletionTimestamp"):
            gitops.release_finalizer(k8s, namespace, dgd)
        elif dgd["metadata"]["uid"] not in acted:
            gitops.act_as_operator(k8s, namespace, dgd)
            acted[dgd["metadata"]["uid"]] = (name, gitops.now())


@pytest.fixture(scope="module")
def first_sync(k8s, argocd, repo, destination):
    """Every example Application, applied with the documented override, synced to the commit under test."""
    argo = Argo(k8s, argocd)
    kinds = sorted({(o["apiVersion"], o["kind"]) for name in APPLICATIONS for o in rendered(name)}
                   | {("v1", "Pod"), ("autoscaling/v2", "HorizontalPodAutoscaler")})
    recorder = gitops.Recorder(k8s.api_client, NAMESPACES, kinds)
    acted: dict = {}
    kubelet = gitops.Loop(lambda: gitops.act_as_kubelet(k8s, NAMESPACES))
    operator = gitops.Loop(lambda: stand_in_operator(k8s, acted))
    result = FirstSync(k8s, repo, recorder, acted, argo)

    def delete_applications():
        for name in APPLICATIONS + list(TEAM_B_APPS):  # what the cascade test (and team B's fixture) did not delete
            delete_application(k8s, name)
        for name in APPLICATIONS + list(TEAM_B_APPS):
            kube.wait_for(f"{app_name(name)} deleted", lambda: argo.get(name) is None, 120)

    def stop_loops():
        for loop in (kubelet, operator):
            loop.stop()
        recorder.stop()

    def release_finalizers():  # never leave an Application no controller can finalize
        for app in k8s.custom.list_namespaced_custom_object(gitops.APP_GROUP, gitops.APP_VERSION, ARGOCD.NAMESPACE,
                                                            gitops.APP_PLURAL)["items"]:
            k8s.custom.patch_namespaced_custom_object(gitops.APP_GROUP, gitops.APP_VERSION, ARGOCD.NAMESPACE,
                                                      gitops.APP_PLURAL, app["metadata"]["name"],
                                                      {"metadata": {"finalizers": None}})

    # A first sync that fails is what the tests show; the clean-up's own failures follow it as notes.
    with cleaned_up(delete_applications, stop_loops, release_finalizers, lambda: delete_projects(k8s)):
        create_project(k8s, gitops.local_project(repo.url))
        for name in APPLICATIONS:
            create_application(k8s, gitops.local_application(name, repo.url))
        started = time.monotonic()
        for name in APPLICATIONS:
            result.apps[name] = argo.wait_synced(name, result.revision,
                                                 timeout=max(10, SYNC_TIMEOUT - (time.monotonic() - started)))
        yield result
    assert not kubelet.errors and not operator.errors, (kubelet.errors[:3], operator.errors[:3])


def delete_projects(k8s: kube.Kube) -> None:
    for name in PROJECTS:
        try:
            k8s.custom.delete_namespaced_custom_object(gitops.APP_GROUP, gitops.APP_VERSION, ARGOCD.NAMESPACE,
                                                       "appprojects", name)
        except Exception as error:
            if not kube.is_not_found(error):
                raise


def delete_application(k8s: kube.Kube, name: str) -> None:
    try:
        k8s.custom.delete_namespaced_custom_object(gitops.APP_GROUP, gitops.APP_VERSION, ARGOCD.NAMESPACE,
                                                   gitops.APP_PLURAL, app_name(name))
    except Exception as error:
        if not kube.is_not_found(error):
            raise


def available(k8s: kube.Kube, name: str) -> bool:
    deployment = next(o for o in rendered(name) if o["kind"] == "Deployment")
    return bool(((k8s.get(deployment, namespace_of(name)) or {}).get("status") or {}).get("availableReplicas"))


@pytest.fixture(scope="module")
def serve_app(k8s, first_sync) -> str:
    """The trtllm-serve example whose pod got the plane's one 8-GPU B200 node (both ask for it): its Deployment is
    available, so a wave after the Deployment's (the HPA's) can start."""
    names = kube.wait_for("a trtllm-serve Deployment available", lambda: [
        name for name in SERVE_APPS if available(k8s, name)], 60)
    assert len(names) == 1, names
    return names[0]


# --- every example synced ---------------------------------------------------------------------------------------------


class TestEveryExample:
    def test_should_override_only_the_repository_and_revision(self, repo):
        for name in APPLICATIONS:
            shipped, local = gitops.load_example(name), gitops.local_application(name, repo.url)
            for app in (shipped, local):
                app["spec"]["source"].pop("repoURL")
                app["spec"]["source"].pop("targetRevision")
            assert local == shipped, name
        # The project allows the override's repository instead of the shipped one, and nothing else changes.
        shipped, local = gitops.load_example(gitops.PROJECT), gitops.local_project(repo.url)
        assert (shipped["spec"].pop("sourceRepos"), local["spec"].pop("sourceRepos")) == ([gitops.SHIPPED_REPO],
                                                                                          [repo.url])
        assert local == shipped

    @pytest.mark.parametrize("name", APPLICATIONS, ids=APPLICATIONS)
    def test_should_create_its_namespace_enforcing_restricted_pod_security(self, k8s, first_sync, name):
        # The module creates no namespace: Argo CD did (CreateNamespace=true), under the scoped project (which allows
        # the Namespace by name), with managedNamespaceMetadata's labels; the release's pods were admitted under them.
        namespace = k8s.core.read_namespace(namespace_of(name))
        wanted = gitops.load_example(name)["spec"]["syncPolicy"]["managedNamespaceMetadata"]["labels"]
        assert wanted["pod-security.kubernetes.io/enforce"] == "restricted"
        assert {key: (namespace.metadata.labels or {}).get(key) for key in wanted} == wanted
        assert first_sync.apps[name]["spec"]["project"] == PROJECTS[0]

    @pytest.mark.parametrize("name", APPLICATIONS, ids=APPLICATIONS)
    def test_should_render_the_chart_in_argocd_and_sync_it(self, first_sync, name):
        app = first_sync.apps[name]
        assert op(app)["syncResult"]["source"]["repoURL"] == first_sync.repo.url
        # Argo CD rendered the chart itself (repo-server, helm v4.3.2): the same objects as the Helm v4 SDK render.
        managed = {(r["kind"], r["name"]) for r in app["status"]["resources"]}
        expected = {(o["kind"], o["metadata"]["name"]) for o in rendered(name)}
        assert managed == expected, (managed ^ expected)
        results = op(app)["syncResult"]["resources"]
        applied = {(r["kind"], r["name"]) for r in results}
        # Every sync applies the namespace's managedNamespaceMetadata (CreateNamespace=true) before the chart's objects;
        # Argo CD does not track the namespace (no tracking-id), so it is not among the Application's resources.
        namespace = ("Namespace", namespace_of(name))
        assert namespace in applied, applied
        applied.discard(namespace)
        only = op(app).get("operation", {}).get("sync", {}).get("resources")
        if only:
            # A self-heal right after the first sync (its comparison read a cache that had not yet seen one of the
            # applied objects, as CI saw under load) re-applies just what it found out of sync and replaces the
            # operation state: the first sync's own result is gone, what each object's creator says stays.
            assert applied == {(r["kind"], r["name"]) for r in only} and applied < expected, (applied, expected)
        else:
            assert applied == expected, (applied ^ expected)
        assert all(r["status"] == "Synced" and not r.get("hookType") for r in results), results
        created = {(e["kind"], e["name"]): e["object"] for e in first_sync.recorder.snapshot()
                   if e["type"] == "ADDED" and e["namespace"] == namespace_of(name)}
        assert {key: managers(created[key]) if key in created else None for key in expected} == {
            key: {ARGOCD_MANAGER} for key in expected}
        # Tracked by Argo CD v3's default, the tracking-id annotation, from the first apply on.
        tracking = {(o["kind"], o["metadata"]["name"]): gitops.tracking_id(app_name(name), o, namespace_of(name))
                    for o in rendered(name)}
        assert {key: (created[key]["metadata"].get("annotations") or {}).get(gitops.TRACKING_ID)
                for key in expected} == tracking

    @pytest.mark.parametrize("name", APPLICATIONS, ids=APPLICATIONS)
    def test_should_apply_the_waves_in_order(self, first_sync, name):
        record = first_sync.recorder
        objects = rendered(name)
        namespace = namespace_of(name)
        created = {(o["kind"], o["metadata"]["name"]): record.created(o["kind"], o["metadata"]["name"], namespace)
                   for o in objects}
        assert all(created.values()), f"never seen created: {[key for key, rv in created.items() if not rv]}"
        order = sorted(objects, key=lambda o: created[(o["kind"], o["metadata"]["name"])])
        waves = [wave(o) for o in order]
        assert waves == sorted(waves), [(o["kind"], o["metadata"]["name"], wave(o)) for o in order]
        assert sorted(set(waves)) == [-2, -1, 0], waves
        # Each wave started only once the one before was healthy: the claim bound before the download Job, the Job
        # complete before the serving objects.
        pvc = next(o["metadata"]["name"] for o in objects if o["kind"] == "PersistentVolumeClaim")
        job = next(o["metadata"]["name"] for o in objects if o["kind"] == "Job")
        bound = record.first("PersistentVolumeClaim", pvc, namespace, gitops.pvc_bound)
        complete = record.first("Job", job, namespace, gitops.job_complete)
        assert bound and bound < created[("Job", job)], (bound, created[("Job", job)])
        first_of_wave_0 = min(rv for (kind, obj), rv in created.items() if wave(next(
            o for o in objects if (o["kind"], o["metadata"]["name"]) == (kind, obj))) == 0)
        assert complete and complete < first_of_wave_0, (complete, first_of_wave_0)

    @pytest.mark.parametrize("name", APPLICATIONS, ids=APPLICATIONS)
    def test_should_create_no_helm_test_hook(self, first_sync, name):
        hooks = [o for o in rendered(name, hooks=True) if HOOK in o["metadata"].get("annotations", {})]
        assert {o["kind"] for o in hooks} >= {"Job", "Pod"}, "the chart's test hooks moved: update this test"
        created = [(e["kind"], e["name"]) for e in first_sync.recorder.snapshot()
                   if e["type"] == "ADDED" and e["namespace"] == namespace_of(name)]
        assert not [(o["kind"], o["metadata"]["name"]) for o in hooks
                    if (o["kind"], o["metadata"]["name"]) in created]
        job = next(o["metadata"]["name"] for o in rendered(name) if o["kind"] == "Job")
        pods = [e["object"] for e in first_sync.recorder.snapshot() if e["type"] == "ADDED" and e["kind"] == "Pod"
                and e["object"]["metadata"].get("labels", {}).get(gitops.INSTANCE) == release_name(
                    gitops.load_example(name))]
        # The only pods of the release on a first sync are its download Job's (the Deployment's, for trtllm-serve).
        owners = {(ref["kind"], ref["name"].rsplit("-", 1)[0] if ref["kind"] == "ReplicaSet" else ref["name"])
                  for pod in pods for ref in pod["metadata"].get("ownerReferences", [])}
        allowed = {("Job", job)} | {("ReplicaSet", o["metadata"]["name"]) for o in rendered(name)
                                    if o["kind"] == "Deployment"}
        assert pods and owners <= allowed, owners

    @pytest.mark.parametrize("name", APPLICATIONS, ids=APPLICATIONS)
    def test_should_stay_synced_after_the_controllers_acted(self, k8s, first_sync, name):
        argo = first_sync.argo
        objects = rendered(name)
        if RUNTIMES[overlay_of(name)] == "dynamo":
            dgd = next(o for o in objects if o["kind"] == "DynamoGraphDeployment")
            kube.wait_for("the stand-in operator to act on the DGD", lambda: any(
                acted_name == dgd["metadata"]["name"] for acted_name, _ in first_sync.operator_acts.values()), 30)
            live = k8s.get(dgd, namespace_of(name))
            assert live["status"]["state"] == "successful"
            assert gitops.OPERATOR_FINALIZER in live["metadata"]["finalizers"]
            for key, value in gitops.OPERATOR_ANNOTATIONS.items():
                assert live["metadata"]["annotations"][key] == value
            moment = max(at for acted_name, at in first_sync.operator_acts.values()
                         if acted_name == dgd["metadata"]["name"])
        else:
            deployment = next(o for o in objects if o["kind"] == "Deployment")
            # The Deployment controller has made its ReplicaSet and written the Deployment's status.
            live = kube.wait_for("the Deployment controller to write status", lambda: (
                lambda d: d if d and d.get("status", {}).get("observedGeneration") else None)(
                    k8s.get(deployment, namespace_of(name))), 60)
            assert live["status"]["conditions"], live["status"]
            # When it last wrote them: a comparison after that has seen its status.
            moment = max(gitops.timestamp(c["lastUpdateTime"]) for c in live["status"]["conditions"])
        app = argo.wait_reconciled_after(name, moment)
        assert app["status"]["sync"]["status"] == "Synced", summary(app)
        assert app["status"]["sync"]["revision"] == first_sync.revision
        health = app["status"]["health"]["status"]
        if RUNTIMES[overlay_of(name)] == "dynamo":
            # PVC bound, Job complete; Argo CD has no health check for a DGD (nor a PDB or ConfigMap).
            assert health == "Healthy", summary(app)
        elif available(k8s, name):  # its pod got the B200 node, and the stand-in kubelet reports it Ready
            assert health == "Healthy", summary(app)
        else:  # the other trtllm-serve target's pod waits for GPUs: its Deployment is not available
            assert health == "Progressing", summary(app)
            # Argo CD v3 keeps each resource's health in the controller's resource tree, not in the Application
            # (--persist-resource-health is false by default): which object holds the release back is read from the
            # live objects. The Deployment has no available pod; everything else is as Argo CD counts healthy.
            assert app["status"].get("resourceHealthSource") == "appTree", summary(app)
            assert not [r for r in app["status"]["resources"] if "health" in r], summary(app)
            live = {o["kind"]: k8s.get(o, namespace_of(name)) for o in objects
                    if o["kind"] in ("Deployment", "PersistentVolumeClaim", "Job")}
            assert not live["Deployment"]["status"].get("availableReplicas"), live["Deployment"]["status"]
            assert gitops.pvc_bound(live["PersistentVolumeClaim"]) and gitops.job_complete(live["Job"])


class TeamB:
    def __init__(self, argo: Argo, revision: str, team_a: dict):
        self.argo, self.revision = argo, revision
        self.team_a = team_a  # (kind, name) -> team A's live object before team B's Applications existed


def team_a_live(k8s: kube.Kube) -> dict:
    return {(o["kind"], o["metadata"]["name"]): k8s.get(o, namespace_of(TEAM_A)) for o in rendered(TEAM_A)}


@pytest.fixture(scope="class")
def team_b(k8s, first_sync):
    """Team B's two projects and four Applications, created at once (each test waits for its own)."""
    repo = first_sync.repo
    before = team_a_live(k8s)
    dashboard = {"monitoring": {"dashboard": {"enabled": True, "namespace": namespace_of(TEAM_A),
                                              "allowedNamespaces": [namespace_of(TEAM_A)]}}}

    def delete_team_b():
        for name in TEAM_B_APPS:
            delete_application(k8s, name)
        for name in TEAM_B_APPS:  # team B's own release by cascade (the stand-in operator releases its DGD)
            kube.wait_for(f"{name} deleted", lambda: first_sync.argo.get(name) is None, 120)

    with cleaned_up(delete_team_b):
        create_project(k8s, team_project(repo.url, TEAM_B, [TEAM_B_APP]))
        create_project(k8s, team_project(repo.url, TEAM_B_COPY))
        for app in (team_b_application(repo.url),
                    team_b_application(repo.url, INTO_A, namespace=namespace_of(TEAM_A)),
                    team_b_application(repo.url, DASHBOARD_INTO_A, values=dashboard),
                    team_b_application(repo.url, TAKEOVER, project=TEAM_B_COPY, namespace=namespace_of(TEAM_A))):
            create_application(k8s, app)
        yield TeamB(first_sync.argo, first_sync.revision, before)


class TestTeams:
    """Two teams' Applications on one Argo CD (issue 55): each in its own namespace, neither able to take the other's
    objects."""

    def assert_team_a_untouched(self, k8s, team_b: TeamB) -> None:
        """Every object of team A's release is the one it was, tracked by team A's Application, unchanged."""
        for key, live in team_a_live(k8s).items():
            before = team_b.team_a[key]
            assert live and (live["metadata"]["uid"], live["metadata"].get("generation")) == (
                before["metadata"]["uid"], before["metadata"].get("generation")), key
            assert live["metadata"]["annotations"][gitops.TRACKING_ID] == before["metadata"]["annotations"][
                gitops.TRACKING_ID] == gitops.tracking_id(app_name(TEAM_A), live, namespace_of(TEAM_A)), key

    def test_should_sync_team_b_named_like_team_a_into_its_own_namespace(self, k8s, team_b):
        app = team_b.argo.wait_synced(TEAM_B_APP, team_b.revision)
        objects = render_application(app)
        assert {(r["kind"], r["name"]) for r in app["status"]["resources"]} == {
            (o["kind"], o["metadata"]["name"]) for o in objects}
        dgd = next(o for o in objects if o["kind"] == "DynamoGraphDeployment")
        assert dgd["metadata"]["name"] == team_a_fullname()  # the same names as team A's, in another namespace
        for obj in objects:
            live = k8s.get(obj, TEAM_B_APP)
            tracking = gitops.tracking_id(TEAM_B_APP, obj, TEAM_B_APP)
            assert live["metadata"]["annotations"][gitops.TRACKING_ID] == tracking, obj["metadata"]["name"]
        labels = k8s.core.read_namespace(TEAM_B_APP).metadata.labels
        assert labels["pod-security.kubernetes.io/enforce"] == "restricted", labels
        self.assert_team_a_untouched(k8s, team_b)

    def test_should_refuse_team_a_namespace_by_team_b_project(self, k8s, team_b):
        message = (f"application destination server 'https://kubernetes.default.svc' and namespace "
                   f"'{namespace_of(TEAM_A)}' do not match any of the allowed destinations in project '{TEAM_B}'")
        app = team_b.argo.wait(INTO_A, "refused by its project", lambda app: any(
            c["type"] == "InvalidSpecError" and c.get("message") == message
            for c in app["status"].get("conditions") or []))
        assert not op(app).get("syncResult", {}).get("resources"), summary(app)  # nothing applied
        self.assert_team_a_untouched(k8s, team_b)

    def test_should_refuse_a_dashboard_in_team_a_namespace_at_sync(self, k8s, team_b):
        # The chart renders it (the values name the namespace in allowedNamespaces); team B's project lists no such
        # destination, so Argo CD refuses the object, and with it the whole sync, before applying anything.
        message = f"namespace {namespace_of(TEAM_A)} is not permitted in project '{TEAM_B}'"
        app = team_b.argo.wait(DASHBOARD_INTO_A, "the sync refused by its project", lambda app: message in op(
            app).get("message", ""))
        assert op(app)["message"].startswith("one or more synchronization tasks are not valid"), op(app)["message"]
        refused = [r for r in op(app)["syncResult"]["resources"] if r["status"] == "SyncFailed"]
        assert [(r["kind"], r["namespace"], r["message"]) for r in refused] == [
            ("ConfigMap", namespace_of(TEAM_A), message)], refused
        dashboard = next(o for o in render_application(app)
                         if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-dashboard"))
        assert k8s.get(dashboard, namespace_of(TEAM_A)) is None
        # Nothing of the release was applied, in either namespace.
        assert all(k8s.get(o, TEAM_B_APP) is None for o in render_application(app)
                   if o["kind"] in ("PersistentVolumeClaim", "DynamoGraphDeployment"))
        self.assert_team_a_untouched(k8s, team_b)

    def test_should_refuse_the_takeover_with_fail_on_shared_resource(self, k8s, team_b):
        app = team_b.argo.wait(TAKEOVER, "the sync refused on a shared resource", lambda app: op(app).get(
            "message", "").startswith("Shared resource found: "))
        # One warning per object team A's Application tracks (controller/state.go); the sync names the first.
        parts = f" is part of applications {ARGOCD.NAMESPACE}/{TAKEOVER} and {app_name(TEAM_A)}"
        shared = [c["message"] for c in app["status"].get("conditions") or [] if c["type"] == "SharedResourceWarning"]
        assert shared and all(message.endswith(parts) for message in shared), shared
        assert parts in op(app)["message"], op(app)["message"]
        # Nothing applied: every object of the takeover's render is team A's (unchanged) or does not exist.
        assert not op(app).get("syncResult", {}).get("resources"), op(app)["syncResult"]
        takeover = {(o["kind"], o["metadata"]["name"]) for o in render_application(app)}
        claimed = takeover & set(team_b.team_a)
        assert ("DynamoGraphDeployment", team_a_fullname()) in claimed, claimed
        for obj in render_application(app):
            if (obj["kind"], obj["metadata"]["name"]) not in claimed:
                assert k8s.get(obj, namespace_of(TEAM_A)) is None, obj["metadata"]["name"]
        self.assert_team_a_untouched(k8s, team_b)
        # And team A's Application never saw team B's: still Synced, no shared-resource warning.
        team_a = team_b.argo.get(TEAM_A)
        assert team_a["status"]["sync"]["status"] == "Synced", summary(team_a)
        assert not [c for c in team_a["status"].get("conditions") or [] if c["type"] == "SharedResourceWarning"]


SURGE_NODE = "gpt-oss-argocd-b200-surge"


def add_node_like(k8s: kube.Kube, model: str, name: str) -> None:
    """An API-only node with the labels, taints and status of `model` (python -m ci.cluster control-plane makes them alike)."""
    node = k8s._dict(k8s.core.read_node(model))
    k8s.core.create_node({"metadata": {"name": name, "labels": {**node["metadata"]["labels"],
                                                                 "kubernetes.io/hostname": name}},
                          "spec": {"taints": node["spec"].get("taints") or []}})
    k8s.core.patch_node_status(name, {"status": {key: node["status"][key] for key in (
        "capacity", "allocatable", "conditions")}})
    # Admission adds the not-ready taint on create; the model node's taints are the ones it should have.
    k8s.core.patch_node(name, [{"op": "replace", "path": "/spec/taints", "value": node["spec"].get("taints") or []}])


@pytest.fixture(scope="module", autouse=True)
def remove_surge_node(k8s, cluster_access):
    yield
    try:
        k8s.core.delete_node(SURGE_NODE)
    except Exception as error:
        if not kube.is_not_found(error):
            raise


# --- day two, by Git ----------------------------------------------------------------------------------------------


def worker_fraction(text: str, value: str) -> str:
    """values/agg.yaml with the worker's freeGpuMemoryFraction set to `value` (the overlay's only one)."""
    assert text.count("freeGpuMemoryFraction:") == 1, "values/agg.yaml changed: update this test"
    return re.sub(r"freeGpuMemoryFraction: \S+", f"freeGpuMemoryFraction: {value}", text)


class TestDayTwo:
    def test_should_upgrade_on_a_commit_that_changes_an_overlay(self, k8s, first_sync):
        argo, repo = first_sync.argo, first_sync.repo
        engine = next(o for o in rendered(DYNAMO_APP) if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith(
            "-engine"))
        before = k8s.get(engine, namespace_of(DYNAMO_APP))
        assert "free_gpu_memory_fraction: 0.9\n" in before["data"]["worker.yaml"], before["data"]
        commit = repo.commit(f"values/{overlay_of(DYNAMO_APP)}", lambda text: worker_fraction(text, "0.85"),
                             "agg: the worker keeps 15% of GPU memory free")
        argo.refresh(DYNAMO_APP)
        app = argo.wait_synced(DYNAMO_APP, commit)
        after = k8s.get(engine, namespace_of(DYNAMO_APP))
        assert "free_gpu_memory_fraction: 0.85\n" in after["data"]["worker.yaml"], after["data"]
        assert after["metadata"]["uid"] == before["metadata"]["uid"]  # updated in place, an upgrade
        assert [h["revision"] for h in app["status"]["history"]][-2:] == [first_sync.revision, commit]

    def test_should_refuse_invalid_values_and_leave_the_release_running(self, k8s, first_sync):
        argo, repo = first_sync.argo, first_sync.repo
        dgd = next(o for o in rendered(DYNAMO_APP) if o["kind"] == "DynamoGraphDeployment")
        running = argo.get(DYNAMO_APP)["status"]["sync"]["revision"]
        live_before = k8s.get(dgd, namespace_of(DYNAMO_APP))
        refused = repo.commit(f"values/{overlay_of(DYNAMO_APP)}",
                              lambda text: text.replace("  type: GB200\n", "  type: GB200\n  nodeArch: amd64\n", 1),
                              "agg: an x86 node pool for GB200")
        argo.refresh(DYNAMO_APP)
        app = argo.wait(DYNAMO_APP, "the chart's refusal", lambda app: any(
            REFUSAL in c.get("message", "") for c in app["status"].get("conditions") or []))
        assert [c["type"] for c in app["status"]["conditions"] if REFUSAL in c["message"]] == ["ComparisonError"]
        # Nothing was applied: the last sync is still the one before, and the DGD is the same object, unchanged.
        assert op(app)["syncResult"]["revision"] == running
        live_after = k8s.get(dgd, namespace_of(DYNAMO_APP))
        assert (live_after["metadata"]["uid"], live_after["metadata"]["generation"], live_after["spec"]) == (
            live_before["metadata"]["uid"], live_before["metadata"]["generation"], live_before["spec"])
        fixed = repo.revert()
        argo.refresh(DYNAMO_APP)
        # The revert renders what runs: Synced at the new revision without another sync.
        app = argo.wait(DYNAMO_APP, f"Synced at {fixed[:10]}", lambda app: app["status"]["sync"]["status"] == "Synced"
                        and app["status"]["sync"]["revision"] == fixed)
        assert not [c for c in app["status"].get("conditions") or [] if c["type"] == "ComparisonError"]
        assert op(app)["syncResult"]["revision"] == running
        assert refused != fixed

    def test_should_put_back_a_deployment_scaled_by_hand(self, k8s, first_sync, serve_app):
        argo = first_sync.argo
        deployment = next(o for o in rendered(serve_app) if o["kind"] == "Deployment")
        name = deployment["metadata"]["name"]
        assert deployment["spec"]["replicas"] == 1
        scaled = gitops.now().replace(microsecond=0)
        k8s.apps.patch_namespaced_deployment_scale(name, namespace_of(serve_app), {"spec": {"replicas": 2}})
        # v3 backs self-heal off at one revision (2 s, then x3 per attempt: 6, 18, 54, 162 s): an earlier self-heal of
        # this app at the same revision (server-side diff saw one in a run) makes the next wait longer than 60 s.
        kube.wait_for("self-heal to put replicas back to 1", lambda: k8s.apps.read_namespaced_deployment(
            name, namespace_of(serve_app)).spec.replicas == 1, 200, interval=0.5, explain=lambda: (
                # the controller's lines say whether self-heal waited out its backoff (v3: 2 s, x3 per attempt at
                # the same revision) or its sync waited on a wave
                f"{summary(argo.get(serve_app))}\n{reconciliations_logged(argo.state, serve_app, most=30)}"))
        app = argo.wait(serve_app, "Synced after self-heal", lambda app: app["status"]["sync"]["status"] == "Synced"
                        and op(app).get("phase") == "Succeeded")
        # The sync that put it back was the controller's own (self-heal), started after the scale.
        assert op(app)["operation"]["initiatedBy"].get("automated") is True, op(app)["operation"]
        assert gitops.timestamp(op(app)["startedAt"]) >= scaled, (op(app)["startedAt"], scaled)

    def test_should_leave_replicas_to_an_hpa(self, k8s, first_sync, serve_app):
        argo, repo = first_sync.argo, first_sync.repo
        values = {"trtllmServe": {"autoscaling": {"enabled": True, "scaler": "hpa"}}}
        objects = rendered(serve_app, values)
        deployment = next(o for o in objects if o["kind"] == "Deployment")
        hpa = next(o for o in objects if o["kind"] == "HorizontalPodAutoscaler")
        assert "replicas" not in deployment["spec"] and (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (
            1, 2)
        # Turning autoscaling on changes the engine config, so the Deployment rolls (maxSurge 1, maxUnavailable 0):
        # the new pod needs 8 more B200 GPUs while the old one runs, and Argo CD applies the HPA (wave 1) only once
        # the Deployment (wave 0) is available again. The plane has one 8-GPU B200 node, which the other trtllm-serve
        # target's pod waits for: that Application goes, and a second B200 node gives the rollout its room.
        for other in SERVE_APPS:
            if other != serve_app:
                delete_application(k8s, other)
                kube.wait_for(f"{app_name(other)} deleted", lambda: argo.get(other) is None, 60)
        add_node_like(k8s, "gpt-oss-b200-0", SURGE_NODE)
        commit = repo.commit(f"values/{overlay_of(serve_app)}", lambda text: text.replace(
            "trtllmServe:\n", "trtllmServe:\n  autoscaling:\n    enabled: true\n    scaler: hpa\n", 1),
            "trtllm-serve low latency: an HPA scales the Deployment")
        argo.refresh(serve_app)
        argo.wait_synced(serve_app, commit)
        name = deployment["metadata"]["name"]
        assert k8s.get(hpa, namespace_of(serve_app)) is not None
        k8s.apps.patch_namespaced_deployment_scale(name, namespace_of(serve_app), {"spec": {"replicas": 2}})
        scaled = gitops.now()
        app = argo.wait_reconciled_after(serve_app, scaled)
        time.sleep(5)  # beyond the controller's self-heal delay (--self-heal-timeout-seconds 2)
        assert k8s.apps.read_namespaced_deployment(name, namespace_of(serve_app)).spec.replicas == 2
        app = argo.get(serve_app)
        assert app["status"]["sync"]["status"] == "Synced", summary(app)
        assert op(app)["syncResult"]["revision"] == commit

    def test_should_delete_everything_but_the_model_cache_on_cascade(self, k8s, first_sync):
        argo = first_sync.argo
        claims = {}
        for name in APPLICATIONS:
            pvc = next(o for o in rendered(name) if o["kind"] == "PersistentVolumeClaim")
            claims[name] = (pvc, k8s.get(pvc, namespace_of(name))["metadata"]["uid"])
            delete_application(k8s, name)
        for name in APPLICATIONS:
            kube.wait_for(f"{app_name(name)} deleted with its resources", lambda: argo.get(name) is None, 120,
                          explain=lambda: summary(argo.get(name)))
        for name in APPLICATIONS:
            release = release_name(gitops.load_example(name))
            left = [(o["kind"], o["metadata"]["name"]) for o in rendered(name) + rendered(
                name, {"trtllmServe": {"autoscaling": {"enabled": True, "scaler": "hpa"}}}
                if RUNTIMES[overlay_of(name)] == "trtllm-serve" else None)
                if o["kind"] != "PersistentVolumeClaim" and (lambda live: live and not live["metadata"].get(
                    "deletionTimestamp"))(k8s.get(o, namespace_of(name)))]
            assert not left, f"{release}: left after the cascade: {left}"
            pvc, uid = claims[name]
            live = k8s.get(pvc, namespace_of(name))
            assert live and live["metadata"]["uid"] == uid and not live["metadata"].get("deletionTimestamp"), live
