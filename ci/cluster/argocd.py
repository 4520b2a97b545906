"""Argo CD beside a control plane (tests/cluster/test_argocd_sync.py): the application controller and the repo-server
of the pinned Argo CD module, with Redis, its CRDs and its config, against the cluster a kubeconfig names.

    python -m ci.cluster argocd start --kubeconfig PATH [--dir .envtest/argocd]   Redis, repo-server, application controller
    python -m ci.cluster argocd stop [--dir .envtest/argocd]                      stops only what `start` recorded, removes the dir

What runs, all on 127.0.0.1 on free ports (but one: the application controller's metrics server binds 0.0.0.0, a
host its v3.6.2 source hard-codes in controller/appcontroller.go; it gets a free port):
- Debian's `redis-server` (no persistence), Argo CD's cache, as its install manifests run it;
- `argocd-repo-server` and `argocd-application-controller`: symlinks to the one `argocd` binary that
  `python -m ci.cluster go-parts build argocd` builds from github.com/argoproj/argo-cd/v3 (it acts as the command its name says);
  the repo-server renders Helm charts with the helm v4 CLI built beside it (the release Argo CD's image ships; v3.6
  runs Helm v4 only);
- the Application and AppProject CRDs from the module at its pin (read from the Go module cache, checked against
  ci/cluster/go/argocd/go.sum by the go command), the `argocd` namespace, `argocd-cm` (the install manifests' own, with
  their resource exclusions and ignoreResourceUpdates defaults, plus the few keys below), `argocd-rbac-cm`,
  `argocd-secret` and the `default` AppProject (which argocd-server would create; no API server or UI runs here).
Everything else is Argo CD v3's default: resources are tracked by the `argocd.argoproj.io/tracking-id` annotation, and
the controller keeps per-resource health in its resource tree, not in the Application's status.resources
(--persist-resource-health is false since v3.0: the Application shows the aggregate status.health only).
The controller manages the cluster it runs against as Argo CD's in-cluster destination (https://kubernetes.default.svc):
ARGOCD_FAKE_IN_CLUSTER=true makes that destination the kubeconfig's cluster. Needs requirements-cluster.txt.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tools.gptoss.yaml_text import load_yaml

from . import REPO, go_parts, processes

PART = "argocd"
MODULE = "github.com/argoproj/argo-cd/v3"
NAMESPACE = "argocd"
CRD_FILES = ("application-crd.yaml", "appproject-crd.yaml")
COMMANDS = ("argocd-repo-server", "argocd-application-controller")
PART_OF = {"app.kubernetes.io/part-of": "argocd"}
# argocd-cm: the install manifests' (manifests/base/config/argocd-cm.yaml of the module) with these keys on top. The
# reconciliation timeout is also given to the controller as --app-resync (the install manifests pass it through the
# environment); 30 s keeps a test's wait for "one more reconciliation" short. No UI and no users: nothing here serves
# Argo CD's API. Resource tracking is left at v3's default (annotation: argocd.argoproj.io/tracking-id).
SETTINGS = {"timeout.reconciliation": "30s", "admin.enabled": "false", "users.anonymous.enabled": "false"}
INSTALLED_CM = Path("manifests") / "base" / "config" / "argocd-cm.yaml"
# The scripts Argo CD's image puts on the repo-server's PATH (its Dockerfile copies them from hack/): v3.6.2 runs
# `git-verify-wrapper.sh <revision>` on every manifest generation, GPG or not (the deprecated signature info it still
# computes), and answers "permission denied" for every Application when it is missing.
IMAGE_SCRIPTS = ("git-verify-wrapper.sh", "gpg-wrapper.sh")
RECONCILIATION_SECONDS = 30


def module_dir() -> Path:
    """The pinned Argo CD module's folder in the Go module cache (downloaded and checked against go.sum, by the go
    command the part's build.json "env" names: argo-cd v3.6's go.mod needs Go 1.27)."""
    try:
        return go_parts.module_dir(PART, MODULE)
    except LookupError as error:
        raise SystemExit(f"go mod download failed: {error}") from None


def crds(module: Path) -> list[dict]:
    folder = module / "manifests" / "crds"
    return [load_yaml((folder / name).read_text()) for name in CRD_FILES]


def installed_settings(module: Path) -> dict[str, str]:
    """The data of the argocd-cm Argo CD's install manifests ship: its defaults (resource.exclusions,
    resource.customizations.ignoreResourceUpdates.*) live there, not in the code."""
    return dict(load_yaml((module / INSTALLED_CM).read_text())["data"])


def config_objects(module: Path) -> list[dict]:
    """argocd-cm, argocd-rbac-cm, argocd-secret (empty: no API server signs sessions) and the default AppProject."""
    def configmap(name, data, kind="ConfigMap"):
        return {"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": NAMESPACE,
                                                               "labels": {"app.kubernetes.io/name": name, **PART_OF}},
                **({"data": data} if data is not None else {})}
    project = {"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
               "metadata": {"name": "default", "namespace": NAMESPACE},
               "spec": {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
                        "clusterResourceWhitelist": [{"group": "*", "kind": "*"}]}}
    return [configmap("argocd-cm", {**installed_settings(module), **SETTINGS}),
            configmap("argocd-rbac-cm", {"policy.default": ""}),
            configmap("argocd-secret", None, kind="Secret"), project]


def api_client(kubeconfig: Path):
    from kubernetes import client, config
    configuration = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), client_configuration=configuration)
    return client.ApiClient(configuration)


def install(kubeconfig: Path, module: Path) -> None:
    """CRDs (created or replaced), the namespace and the config objects (created when missing)."""
    from kubernetes import client, utils
    from kubernetes.client.exceptions import ApiException
    api = api_client(kubeconfig)
    extensions = client.ApiextensionsV1Api(api)
    for crd in crds(module):
        try:
            live = extensions.read_custom_resource_definition(crd["metadata"]["name"])
            crd["metadata"]["resourceVersion"] = live.metadata.resource_version
            extensions.replace_custom_resource_definition(crd["metadata"]["name"], crd)
        except ApiException as error:
            if error.status != 404:
                raise
            extensions.create_custom_resource_definition(crd)
    deadline = time.monotonic() + 60
    for crd in crds(module):
        while not any(c.type == "Established" and c.status == "True" for c in
                      extensions.read_custom_resource_definition(crd["metadata"]["name"]).status.conditions or []):
            if time.monotonic() > deadline:
                raise SystemExit(f"CRD {crd['metadata']['name']} not Established within 60 s")
            time.sleep(0.5)
    try:
        client.CoreV1Api(api).create_namespace({"metadata": {"name": NAMESPACE}})
    except ApiException as error:
        if error.status != 409:
            raise
    custom = client.CustomObjectsApi(api)
    for obj in config_objects(module):
        try:
            if obj["kind"] == "AppProject":
                custom.create_namespaced_custom_object("argoproj.io", "v1alpha1", NAMESPACE, "appprojects", obj)
            else:
                utils.create_from_dict(api, obj)
        except (ApiException, utils.FailToCreateError) as error:
            statuses = [getattr(e, "status", None) for e in getattr(error, "api_exceptions", [error])]
            if any(status != 409 for status in statuses):
                raise


def wait_listening(port: int, what: str, state: Path, log: str, timeout: float = 120) -> None:
    import socket
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            sock.settimeout(1)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    tail = (state / "logs" / log).read_text(errors="replace").splitlines()[-15:]
    raise SystemExit(f"{what} did not listen on 127.0.0.1:{port} within {timeout:.0f}s; last log lines:\n"
                     + "\n".join(tail))


def record(state: Path, name: str, argv: list[str], env: dict[str, str]) -> None:
    with open(state / "logs" / f"{name}.log", "ab") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, env=processes.server_env(env), cwd=state)
    processes.keep_niceness(process.pid)
    pids = json.loads((state / "pids.json").read_text()) if (state / "pids.json").exists() else {}
    pids[name] = {"pid": process.pid, "start_time": processes.start_time(process.pid), "exe": argv[0]}
    (state / "pids.json").write_text(json.dumps(pids, indent=1))


def start(state: Path, kubeconfig: Path) -> dict:
    """Starts Redis, the repo-server and the application controller; returns their ports."""
    from .control_plane import free_port
    binaries = go_parts.built(PART)
    if binaries is None:
        raise SystemExit(f"Argo CD is not built: python -m ci.cluster go-parts build {PART}")
    redis = shutil.which("redis-server")
    if redis is None:
        raise SystemExit("redis-server is not installed (Debian: apt-get install redis-server; .ci/run installs it)")
    if state.exists():
        raise SystemExit(f"{state} exists: stop the Argo CD recorded there first (python -m ci.cluster argocd stop --dir {state})")
    for folder in ("logs", "bin", "tmp", "home"):
        (state / folder).mkdir(parents=True)
    for command in COMMANDS:
        (state / "bin" / command).symlink_to(binaries / "argocd")
    (state / "bin" / "helm").symlink_to(binaries / "helm")
    module = module_dir()
    for script in IMAGE_SCRIPTS:  # read-only in the module cache: copied, made executable
        shutil.copyfile(module / "hack" / script, state / "bin" / script)
        (state / "bin" / script).chmod(0o755)
    install(kubeconfig, module)
    ports = {"redis": free_port(), "repo-server": free_port(), "repo-server-metrics": free_port(),
             "controller-metrics": free_port()}
    env = {**os.environ, "PATH": f"{state / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
           "HOME": str(state / "home"),
           "TMPDIR": str(state / "tmp"), "KUBECONFIG": str(kubeconfig), "ARGOCD_FAKE_IN_CLUSTER": "true",
           "ARGOCD_GPG_ENABLED": "false", "ARGOCD_EXEC_TIMEOUT": "180s",
           # the repo-server's git credential socket, /tmp/reposerver-ask-pass.sock unless told: one per state folder
           "ARGOCD_ASK_PASS_SOCK": str(state / "tmp" / "askpass.sock")}
    redis_address = f"127.0.0.1:{ports['redis']}"
    record(state, "redis-server", [redis, "--bind", "127.0.0.1", "--port", str(ports["redis"]), "--save", "",
                                   "--appendonly", "no", "--dir", str(state / "tmp")], env)
    wait_listening(ports["redis"], "redis-server", state, "redis-server.log")
    record(state, "argocd-repo-server", [
        str(state / "bin" / "argocd-repo-server"), "--address", "127.0.0.1", "--port", str(ports["repo-server"]),
        "--metrics-address", "127.0.0.1", "--metrics-port", str(ports["repo-server-metrics"]),
        "--redis", redis_address, "--disable-tls",
        # v3.6's mTLS client CA defaults to the install's mounted path and is refused beside --disable-tls (even when
        # the file is absent): plaintext on 127.0.0.1 takes no client CA.
        "--client-ca-path=", "--loglevel", "info"], env)
    wait_listening(ports["repo-server"], "argocd-repo-server", state, "argocd-repo-server.log")
    record(state, "argocd-application-controller", [
        str(state / "bin" / "argocd-application-controller"), "--namespace", NAMESPACE,
        "--repo-server", f"127.0.0.1:{ports['repo-server']}", "--repo-server-plaintext",
        "--repo-server-timeout-seconds", "180", "--redis", redis_address,
        "--metrics-port", str(ports["controller-metrics"]), "--app-resync", str(RECONCILIATION_SECONDS),
        "--self-heal-timeout-seconds", "2", "--loglevel", "info"], env)
    wait_listening(ports["controller-metrics"], "argocd-application-controller", state,
                   "argocd-application-controller.log")
    (state / "ports.json").write_text(json.dumps(ports, indent=1))
    return ports


def stop(state: Path) -> list[str]:
    """Stops what `start` recorded in state (controller first, Redis last); returns what still runs."""
    pids_file = state / "pids.json"
    left = []
    if pids_file.exists():
        pids = json.loads(pids_file.read_text())
        for name, entry in reversed(list(pids.items())):
            processes.terminate(entry)
            if processes.alive(entry):
                left.append(f"{name} (pid {entry['pid']})")
    if not left:
        shutil.rmtree(state, ignore_errors=True)
    return left


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["start", "stop"])
    parser.add_argument("--dir", type=Path, default=REPO / ".envtest" / "argocd", help="state folder")
    parser.add_argument("--kubeconfig", type=Path, default=os.environ.get("KUBECONFIG"),
                        help="start: the cluster Argo CD manages (default $KUBECONFIG)")
    args = parser.parse_args(argv)
    state = args.dir.resolve()
    if args.command == "start":
        if not args.kubeconfig:
            parser.error("start needs --kubeconfig or KUBECONFIG")
        try:
            ports = start(state, args.kubeconfig.resolve())
        except BaseException:
            stop(state)
            raise
        print(f"Argo CD runs against {args.kubeconfig}: {json.dumps(ports)}; logs in {state / 'logs'}")
        return 0
    left = stop(state)
    if left:
        print(f"still running: {', '.join(left)}", file=sys.stderr)
        return 1
    print(f"stopped the Argo CD recorded in {state}")
    return 0
