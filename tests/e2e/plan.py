"""Turn the chart's rendered objects into a plan of local processes for tests/e2e/stack.py.

What comes from the render, unchanged: the frontend command; every worker role with its replica count,
served model name, disaggregation mode and env; the scripts of the `<release>-scripts` ConfigMap; the
smoke-test Pod's command and env; the benchmark Job's command, args and env. What the test adds is what
the Dynamo operator and the kubelet would otherwise provide:
  - the environment the Dynamo operator gives each component (operator_env(): DYN_NAMESPACE=<namespace>-<dgd>,
    DYN_COMPONENT, DYN_PARENT_DGD_K8S_NAME/_NAMESPACE, POD_NAME/_NAMESPACE/_UID, and the frontend's and
    workers' own), so every process runs in the Dynamo namespace it runs in on a cluster;
  - discovery: `--discovery-backend file` on every Dynamo process (the operator wires etcd or the
    Kubernetes API instead), `--http-host 127.0.0.1` on the frontend;
  - the scripts volume: the container path of the mount is mapped to a local folder holding the
    ConfigMap's files (the only substitution made in a rendered command);
  - an environment: per-run HOME, TMPDIR and file-discovery root, loopback-only Dynamo networking,
    the venv's bin first on PATH; env entries that reference Secrets (valueFrom) are left out, as a
    missing optional Secret would leave them.
Each worker becomes `dynamo.mocker` (a GPU-free engine simulator) through mocker_args().

runtime: trtllm-serve renders no Dynamo process: each replica of the rendered trtllm-serve Deployment is
stood in for by a mocker serving the name trtllm-serve would (the checkpoint folder's), behind a Dynamo
frontend on the rendered --port: an OpenAI-compatible server on 127.0.0.1 answering /health,
/v1/models and streaming /v1/chat/completions, where the chart's smoke test and benchmark find it.
trtllm_serve_stand_in() reads the rendered command line and fails on a flag it has no rule for.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import sys
from pathlib import Path

from ci.cluster.stand_in import DROPPED_FLAGS, UnknownWorkerFlag, translate_worker_args  # noqa: F401  (re-exported)
from tests.helpers import NAMESPACE, RELEASE_NAME, dgd_components, dgd_workers, find, worker_port

SCRIPTS_MOUNT_VOLUME = "scripts"
RUN_ENV = "GPT_OSS_E2E_RUN"
FRONTEND_PORT = worker_port(18000)
FIRST_SYSTEM_PORT = worker_port(18100)  # one Dynamo system (metrics) port per mocker process

# How each dynamo.trtllm flag the chart renders maps onto dynamo.mocker: ci/cluster/stand_in.py's table (the node
# images' stand-in runs the same translation in the pods the Dynamo operator makes); a flag missing there makes
# mocker_args() fail. mocker_args() adds the e2e tier's own flags:
MOCKER_FLAGS = ["--discovery-backend", "file", "--speedup-ratio", "0"]
# The port the Dynamo operator gives the frontend's HTTP server and the workers' system server
# (deploy/operator/internal/consts/consts.go: DynamoServicePort 8000, DynamoSystemPort 9090).
OPERATOR_HTTP_PORT, OPERATOR_SYSTEM_PORT = 8000, 9090

# Loopback-only networking of every Dynamo process (the ZMQ event sockets still bind 0.0.0.0,
# hence the private network namespace stack.py runs in).
LOOPBACK_ENV = {
    "DYN_TCP_RPC_HOST": "127.0.0.1",
    "DYN_TCP_RESPONSE_STREAM_HOST": "lo",  # an interface name; an address fails
    "DYN_SDK_DISABLE_ANSI_LOGGING": "1",
    "NO_COLOR": "1",
}


# dynamo/trtllm/args.py of ai-dynamo 1.2.1: what the plan uses where ai-dynamo is not installed (the light set of
# the quick start); where it is, its own source is read, so a release that renames them shows up there.
TRTLLM_COMPONENTS_1_2_1 = {"DEFAULT_ENDPOINT_COMPONENT": "tensorrt_llm", "DEFAULT_PREFILL_COMPONENT": "prefill"}


@functools.lru_cache(maxsize=None)
def trtllm_component_names(python: str | None = None) -> dict[str, str]:
    """{mode: Dynamo component} the dynamo.trtllm worker of the installed ai-dynamo registers, read from its source
    (dynamo/trtllm/args.py DEFAULT_ENDPOINT_COMPONENT and DEFAULT_PREFILL_COMPONENT; importing it needs tensorrt_llm).
    python: read the ai-dynamo of that interpreter (a release line's own venv) instead of this process's."""
    import re as _re
    import subprocess

    # Asked of the interpreter itself: without ai-dynamo at all, find_spec raises and nothing is printed.
    ask = ("import importlib.util as u; s = u.find_spec('dynamo.trtllm'); "
           "print(s.submodule_search_locations[0] if s else '')")
    found = subprocess.run([python or sys.executable, "-c", ask], capture_output=True, text=True, timeout=60)
    folder = found.stdout.strip() or None
    if folder is None:
        names = TRTLLM_COMPONENTS_1_2_1
    else:
        source = (Path(folder) / "args.py").read_text()
        names = dict(_re.findall(r'^(DEFAULT_ENDPOINT_COMPONENT|DEFAULT_PREFILL_COMPONENT) = "([^"]+)"', source,
                                 _re.M))
    return {"agg": names["DEFAULT_ENDPOINT_COMPONENT"], "decode": names["DEFAULT_ENDPOINT_COMPONENT"],
            "prefill": names["DEFAULT_PREFILL_COMPONENT"]}


# ai-dynamo 1.7.0.dev (the 1.7 line's nightly, the newest 1.7 build installable here) turns the backend admission gate
# on by default, its limits the engine's reported max_num_seqs (the mocker's: the rendered maxBatchSize); 1.7.0 leaves
# it off unless a limit is set (RELEASE-1.7-FACTS.md, section 2c). Where the chart leaves the gate off, the tier gives
# the nightly's workers engine limits no test reaches, which is 1.7.0's default; the chart's own limits
# (dynamo.admissionGate) are passed as rendered.
GATE_PREFIX = "DYN_BACKEND_ADMISSION_"
GATE_OFF_AS_IN_1_7_0 = {f"{GATE_PREFIX}ENGINE_REQUEST_LIMIT": "1000000",
                        f"{GATE_PREFIX}ENGINE_REQUEST_WAITING_LIMIT": "1000000"}


@functools.lru_cache(maxsize=None)
def ai_dynamo_version(python: str | None = None) -> str:
    """The ai-dynamo release of an interpreter (this process's without one), "" without ai-dynamo."""
    import subprocess

    ask = ("from importlib.metadata import version, PackageNotFoundError\n"
           "try:\n    print(version('ai-dynamo'))\nexcept PackageNotFoundError:\n    print('')")
    return subprocess.run([python or sys.executable, "-c", ask], capture_output=True, text=True,
                          timeout=60).stdout.strip()


def worker_namespace(env: dict[str, str]) -> str:
    """The Dynamo namespace a worker with this environment registers in: DYN_NAMESPACE, plus
    -DYN_NAMESPACE_WORKER_SUFFIX when set (get_worker_namespace, dynamo/common/utils/namespace.py of 1.2.1)."""
    namespace = env.get("DYN_NAMESPACE", "dynamo")
    return f"{namespace}-{env['DYN_NAMESPACE_WORKER_SUFFIX']}" if env.get("DYN_NAMESPACE_WORKER_SUFFIX") else namespace


def operator_env(dgd: dict, component_type: str, pod_name: str, worker_suffix: str = "") -> dict[str, str]:
    """The environment the Dynamo operator injects into a component's main container, as literals.

    Every component (deploy/operator/internal/dynamo/component_common.go @015d780b, getCommonContainer):
    DYN_NAMESPACE (ComputeDynamoNamespace: <k8s namespace>-<dgd name, dots as dashes>), DYN_COMPONENT (the
    component type), DYN_PARENT_DGD_K8S_NAME/_NAMESPACE, POD_NAME/_NAMESPACE/_UID (field refs: here the pod the
    component would run in), DYN_DISCOVERY_BACKEND (kubernetes on a cluster; each command here says
    --discovery-backend file). The frontend (component_frontend.go @132ccbe3): DYNAMO_PORT and DYN_HTTP_PORT 8000,
    DYN_NAMESPACE_PREFIX. Workers (component_worker.go @015d780b): DYN_SYSTEM_ENABLED, DYN_SYSTEM_USE_ENDPOINT_
    HEALTH_STATUS, DYN_SYSTEM_PORT 9090 (moved per process by the caller: one loopback holds them all),
    DYN_HEALTH_CHECK_ENABLED=false, the NIXL telemetry variables, and DYN_NAMESPACE_WORKER_SUFFIX when the DGD's
    workers carry a worker hash (Deployment-backed DGDs). Constants: consts.go @0367e404.
    """
    namespace, name = dgd["metadata"].get("namespace", "llm"), dgd["metadata"]["name"]
    dynamo_namespace = f"{namespace}-{name.replace('.', '-')}"
    env = {"DYN_NAMESPACE": dynamo_namespace, "DYN_COMPONENT": component_type,
           "DYN_PARENT_DGD_K8S_NAME": name, "DYN_PARENT_DGD_K8S_NAMESPACE": namespace,
           "POD_NAME": pod_name, "POD_NAMESPACE": namespace, "POD_UID": f"00000000-0000-4000-8000-{abs(hash(pod_name)) % 10**12:012d}",
           "DYN_DISCOVERY_BACKEND": "file"}
    if component_type == "frontend":
        env.update({"DYNAMO_PORT": str(OPERATOR_HTTP_PORT), "DYN_HTTP_PORT": str(OPERATOR_HTTP_PORT),
                    "DYN_NAMESPACE_PREFIX": dynamo_namespace})
    else:
        env.update({"DYN_SYSTEM_ENABLED": "true", "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS": '["generate"]',
                    "DYN_SYSTEM_PORT": str(OPERATOR_SYSTEM_PORT), "DYN_HEALTH_CHECK_ENABLED": "false",
                    "NIXL_TELEMETRY_ENABLE": "n", "NIXL_TELEMETRY_EXPORTER": "prometheus",
                    "NIXL_TELEMETRY_PROMETHEUS_PORT": str(worker_port(19090))})
        if worker_suffix:
            env["DYN_NAMESPACE_WORKER_SUFFIX"] = worker_suffix
    return env


# trtllm-serve flags the chart renders: what the stand-in reads (the port) and what only matters to a GPU.
TRTLLM_SERVE_READ_FLAGS = frozenset({"--port"})
TRTLLM_SERVE_GPU_FLAGS = frozenset({"--host", "--backend", "--tp_size", "--ep_size", "--max_batch_size",
                                    "--extra_llm_api_options", "--kv_cache_free_gpu_memory_fraction"})
TRTLLM_SERVE_SWITCHES = frozenset({"--trust_remote_code"})  # flags without a value


def trtllm_serve_stand_in(args: list[str]) -> dict:
    """{model_path, model_name, port} of a rendered `trtllm-serve MODEL --flag value ...` command line.

    model_name is what trtllm-serve lists for a local checkpoint: the folder name.
    """
    model_path, rest, port = args[0], list(args[1:]), None
    while rest:
        flag = rest.pop(0)
        if flag in TRTLLM_SERVE_SWITCHES:
            continue
        if flag not in TRTLLM_SERVE_READ_FLAGS | TRTLLM_SERVE_GPU_FLAGS or not rest:
            raise UnknownWorkerFlag(f"no stand-in rule for trtllm-serve flag {flag}: add it to the TRTLLM_SERVE_* "
                                    "sets in tests/e2e/plan.py")
        value = rest.pop(0)
        if flag == "--port":
            port = int(value)
    return {"model_path": model_path, "model_name": Path(model_path).name, "port": port}


def mocker_args(trtllm_args: list[str]) -> list[str]:
    """The `python -m dynamo.mocker` arguments standing in for a rendered `python3 -m dynamo.trtllm` worker: the flags
    translated as the node images' stand-in does (ci/cluster/stand_in.py translate_worker_args), then file discovery
    and no simulated delay."""
    return translate_worker_args(trtllm_args) + MOCKER_FLAGS


def scaled_values(run_dir: Path) -> dict:
    """Values that shrink a target to a CPU run on 127.0.0.1; no rendered command is edited."""
    return {
        "modelCache": {"mountPath": str(run_dir / "cache")},
        "frontend": {"httpPort": FRONTEND_PORT, "urlOverride": f"http://127.0.0.1:{FRONTEND_PORT}",
                     "readyPollSeconds": 1},
        "smokeTest": {"maxTokens": 16, "readyTimeoutSeconds": 90},
        "benchmark": {"concurrency": 4, "requestCount": 20, "inputTokensMean": 64, "outputTokensMean": 16,
                      "readyTimeoutSeconds": 90},
    }


def scaled_overlay_values(overlay_values: dict, run_dir: Path) -> dict:
    """scaled_values(), plus smaller warm-up and dataset sizes for the targets that set them.

    trtllm-serve: the server's own port moves instead of the Dynamo frontend's (a Dynamo-only value).
    """
    values = scaled_values(run_dir)
    if overlay_values.get("runtime") == "trtllm-serve":
        values["frontend"].pop("httpPort")
        values["trtllmServe"] = {"httpPort": FRONTEND_PORT}
    benchmark = overlay_values.get("benchmark", {})
    if benchmark.get("warmupRequestCount"):
        values["benchmark"]["warmupRequestCount"] = 2
    if benchmark.get("numDatasetEntries"):
        values["benchmark"]["numDatasetEntries"] = 10
    return values


def main_container(pod_spec: dict, name: str = "main") -> dict:
    return next(c for c in pod_spec["containers"] if c["name"] == name)


def literal_env(env: list[dict] | None) -> dict[str, str]:
    """A container's env as a dict; valueFrom entries (Secret references) are left out."""
    return {e["name"]: str(e["value"]) for e in env or [] if "value" in e}


def _mapped(argv: list[str], mount_path: str, local_dir: Path) -> list[str]:
    prefix = mount_path.rstrip("/") + "/"
    return [str(local_dir / arg[len(prefix):]) if arg.startswith(prefix) else arg for arg in argv]


def _script_volume(pod_spec: dict, container: dict, objects: list[dict]) -> tuple[str, dict[str, str]]:
    """(mountPath, files) of the ConfigMap volume named `scripts` mounted into the container."""
    mount = next(m for m in container["volumeMounts"] if m["name"] == SCRIPTS_MOUNT_VOLUME)
    volume = next(v for v in pod_spec["volumes"] if v["name"] == SCRIPTS_MOUNT_VOLUME)
    config_map = find(objects, "ConfigMap", volume["configMap"]["name"])
    return mount["mountPath"], config_map["data"]


def build_plan(objects: list[dict], run_dir: Path, python: str, tmp_dir: Path, namespace: str = NAMESPACE,
               worker_suffix: str = "", first_system_port: int = FIRST_SYSTEM_PORT,
               tools_python: str | None = None) -> dict:
    """The JSON plan stack.py runs: services (frontend, mockers), jobs (smoke test, benchmark), files.

    python: the interpreter with ai-dynamo and aiperf; its folder goes first on PATH.
    tmp_dir: TMPDIR of every process; keep it short, AIPerf puts ZMQ ipc:// sockets under it and a
    socket path may not exceed 107 characters.
    namespace: the Kubernetes namespace the chart was rendered for (the operator's DYN_NAMESPACE derives from it).
    worker_suffix: the worker hash the operator appends to the workers' Dynamo namespace of a Deployment-backed DGD.
    tools_python: the interpreter whose folder holds aiperf when python's does not (a release line's own venv);
    its folder comes second on PATH.
    """
    run_dir = Path(run_dir)
    bin_dirs = list(dict.fromkeys(str(Path(p).parent) for p in (python, tools_python or python)))
    base_env = {
        "PATH": os.pathsep.join([*bin_dirs, "/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]),
        "LANG": "C.UTF-8",
        "TMPDIR": str(tmp_dir),
        RUN_ENV: str(run_dir),  # every descendant inherits it: stack.py and the test find leftovers by it
    }
    dynamo_env = {**base_env, "HOME": str(run_dir / "home"), "DYN_FILE_KV": str(run_dir / "kv"), **LOOPBACK_ENV}

    deployments = [o for o in objects if o["kind"] == "Deployment"]
    if deployments:
        services, model_paths = _trtllm_serve_services(deployments[0], python, dynamo_env)
    else:
        services, model_paths = _dynamo_services(objects, python, dynamo_env, namespace, worker_suffix,
                                                 first_system_port)
    return _with_jobs(objects, run_dir, tmp_dir, base_env, services, model_paths)


def _trtllm_serve_services(deployment: dict, python: str, dynamo_env: dict) -> tuple[list[dict], set[str]]:
    """A Dynamo frontend on the rendered port, and one mocker per rendered replica as the engine."""
    container = main_container(deployment["spec"]["template"]["spec"], "trtllm-serve")
    assert container["command"] == ["trtllm-serve"], f"unexpected server command {container['command']}"
    server = trtllm_serve_stand_in(container["args"])
    services = [{
        "name": "frontend",
        "role": "frontend",
        "argv": [python, "-m", "dynamo.frontend", "--http-port", str(server["port"]),
                 "--discovery-backend", "file", "--http-host", "127.0.0.1"],
        "env": {**dynamo_env, "HF_HUB_OFFLINE": "1", "DYN_HTTP_GRACEFUL_SHUTDOWN_TIMEOUT_SECS": "1"},
    }]
    for replica in range(deployment["spec"]["replicas"]):
        port = FIRST_SYSTEM_PORT + replica
        services.append({
            "name": f"trtllm-serve-{replica}",
            "role": "worker",
            "component": "trtllm-serve",
            "argv": [python, "-m", "dynamo.mocker", "--model-path", server["model_path"],
                     "--model-name", server["model_name"], *MOCKER_FLAGS],
            # The rendered env (the guide's variables), with the run's HOME and networking on top.
            "env": {**literal_env(container.get("env")), **dynamo_env,
                    "DYN_SYSTEM_HOST": "127.0.0.1", "DYN_SYSTEM_PORT": str(port)},
            "metrics_url": f"http://127.0.0.1:{port}/metrics",
        })
    return services, {server["model_path"]}


def rendered_replicas(objects: list[dict]) -> dict[str, int]:
    """{component: replicas} of what serves the model: DGD worker roles, or the trtllm-serve Deployment."""
    deployments = [o for o in objects if o["kind"] == "Deployment"]
    if deployments:
        return {"trtllm-serve": deployments[0]["spec"]["replicas"]}
    return {name: worker["replicas"] for name, worker in dgd_workers(find(objects, "DynamoGraphDeployment")).items()}


def _dynamo_services(objects: list[dict], python: str, dynamo_env: dict, namespace: str,
                     worker_suffix: str, first_system_port: int) -> tuple[list[dict], set[str]]:
    """The rendered Dynamo frontend, and one mocker per rendered worker replica, each with the operator's environment;
    a mocker registers as the component the dynamo.trtllm worker it stands in for would (tensorrt_llm or prefill)."""
    dgd = find(objects, "DynamoGraphDeployment")
    dgd = {**dgd, "metadata": {**dgd["metadata"], "namespace": namespace}}
    name = dgd["metadata"]["name"]
    # Another interpreter's ai-dynamo (a release line's venv) is read through it; a path that is not there (the offline
    # tier's plans) reads this process's.
    components = trtllm_component_names(python if Path(python).exists() else None)
    nightly_gate = ai_dynamo_version(python if Path(python).exists() else None).startswith("1.7.0.dev")
    assert dgd["apiVersion"] == "nvidia.com/v1beta1", "the e2e tier reads the v1beta1 layout"
    frontend_main = dgd_components(dgd)["Frontend"]["main"]
    frontend_argv = frontend_main["command"] + frontend_main.get("args", [])
    services = [{
        "name": "frontend",
        "role": "frontend",
        "argv": [python if frontend_argv[0] == "python3" else frontend_argv[0], *frontend_argv[1:],
                 "--discovery-backend", "file", "--http-host", "127.0.0.1"],
        # HF_HUB_OFFLINE: the frontend resolves the model card's hf:// files from the fake cache entry.
        "env": {**dynamo_env, **operator_env(dgd, "frontend", f"{name}-frontend-0"),
                **literal_env(frontend_main.get("env")), "HF_HUB_OFFLINE": "1",
                "DYN_HTTP_GRACEFUL_SHUTDOWN_TIMEOUT_SECS": "1"},
        "pod": f"{name}-frontend-0",
    }]
    port = first_system_port
    model_paths = set()
    for component, worker in dgd_workers(dgd).items():
        command = worker["main"]["command"]
        assert command[1:] == ["-m", "dynamo.trtllm"], f"{component}: unexpected worker command {command}"
        args = mocker_args(worker["args"])
        model_paths.add(args[args.index("--model-path") + 1])
        mode = args[args.index("--disaggregation-mode") + 1] if "--disaggregation-mode" in args else "agg"
        for replica in range(worker["replicas"]):
            pod = f"{name}-{component.lower()}-{replica}"
            rendered = literal_env(worker["main"].get("env"))
            gate_off = GATE_OFF_AS_IN_1_7_0 if nightly_gate and not any(k.startswith(GATE_PREFIX) for k in rendered) else {}
            env = {**dynamo_env, **operator_env(dgd, worker["type"], pod, worker_suffix), **gate_off,
                   **rendered, "DYN_SYSTEM_HOST": "127.0.0.1", "DYN_SYSTEM_PORT": str(port)}
            services.append({
                "name": f"{component}-{replica}",
                "role": worker["type"],
                "component": component,
                "dynamo_component": components[mode],
                "argv": [python, "-m", "dynamo.mocker", *args,
                         "--endpoint", f"dyn://{worker_namespace(env)}.{components[mode]}.generate"],
                "env": env,
                "metrics_url": f"http://127.0.0.1:{port}/metrics",
                "pod": pod,
            })
            port += 1
    return services, model_paths


def benchmark_artifacts_root(container: dict) -> str:
    """Where the benchmark's artifacts land on this machine: its artifacts mount is a subPath of the cache claim
    (mounted read-only at the cache's mountPath), so that folder of the cache."""
    env = literal_env(container.get("env"))
    artifacts = next((m for m in container["volumeMounts"] if m["mountPath"] == env["ARTIFACTS_ROOT"]), None)
    if artifacts is None or "subPath" not in artifacts:
        return env["ARTIFACTS_ROOT"]
    cache = next(m for m in container["volumeMounts"] if m["name"] == artifacts["name"] and "subPath" not in m)
    return f"{cache['mountPath'].rstrip('/')}/{artifacts['subPath']}"


def _with_jobs(objects: list[dict], run_dir: Path, tmp_dir: Path, base_env: dict, services: list[dict],
               model_paths: set[str]) -> dict:
    """The plan: the services, plus the smoke test and benchmark as rendered (scripts mapped locally)."""
    scripts_dir = run_dir / "scripts"
    jobs, files = [], {}
    smoke = find(objects, "Pod", f"{RELEASE_NAME}-smoke-test")["spec"]
    benchmark = find(objects, "Job", f"{RELEASE_NAME}-benchmark")["spec"]["template"]["spec"]
    for name, pod_spec, container_name in (("smoke-test", smoke, "smoke-test"), ("benchmark", benchmark, "aiperf")):
        container = main_container(pod_spec, container_name)
        mount_path, data = _script_volume(pod_spec, container, objects)
        files.update({str(scripts_dir / file): text for file, text in data.items()})
        # HOME: the benchmark Job points it at an emptyDir mounted on /tmp; here a per-run folder.
        env = {**base_env, **literal_env(container.get("env")), "HOME": str(run_dir / f"{name}-home")}
        if name == "benchmark":
            env["ARTIFACTS_ROOT"] = benchmark_artifacts_root(container)
        timeout = int(env.get("READY_TIMEOUT_SECONDS", "90")) + 240
        jobs.append({"name": name, "argv": _mapped(container["command"] + container.get("args", []),
                                                   mount_path, scripts_dir),
                     "env": env, "timeout": timeout})

    smoke_env = literal_env(main_container(smoke, "smoke-test").get("env"))
    benchmark_env = literal_env(main_container(benchmark, "aiperf").get("env"))
    return {
        "run_dir": str(run_dir),
        "run_env": RUN_ENV,
        "frontend_url": smoke_env["FRONTEND_URL"],
        "model": smoke_env["MODEL"],
        "model_paths": sorted(model_paths),
        "dirs": [str(tmp_dir), *(str(run_dir / folder)
                                 for folder in ("home", "kv", "logs", "benchmark-home", "smoke-test-home"))],
        "files": files,
        "services": services,
        "jobs": jobs,
        "artifacts_root": benchmark_artifacts_root(main_container(benchmark, "aiperf")),
        "expected_requests": int(benchmark_env["EXPECTED_REQUESTS"]),
    }


def prepare_model_files(plan: dict, tokenizer_dir: Path) -> None:
    """Put the tokenizer where the render expects the weights, and into the frontend's Hugging Face cache.

    The mocker's model card names its files hf://<model id>/...; the frontend resolves that id itself,
    so (with HF_HUB_OFFLINE=1) it must find a cache entry under its HOME.
    """
    for model_path in plan["model_paths"]:
        shutil.copytree(tokenizer_dir, model_path, dirs_exist_ok=True)
    frontend_home = Path(next(s for s in plan["services"] if s["role"] == "frontend")["env"]["HOME"])
    entry = frontend_home / ".cache" / "huggingface" / "hub" / ("models--" + plan["model"].replace("/", "--"))
    revision = "0" * 40
    shutil.copytree(tokenizer_dir, entry / "snapshots" / revision, dirs_exist_ok=True)
    (entry / "refs").mkdir(parents=True, exist_ok=True)
    (entry / "refs" / "main").write_text(revision)
    # What the download Job writes last when the pinned copy is checked: the benchmark waits for it (issue 36).
    for job in plan["jobs"]:
        marker = job["env"].get("MODEL_MARKER")
        if marker:
            Path(marker).parent.mkdir(parents=True, exist_ok=True)
            Path(marker).write_text(json.dumps({"model": plan["model"], "revision": job["env"]["EXPECTED_REVISION"],
                                                "manifestSha256": job["env"].get("EXPECTED_MANIFEST_SHA256", "")},
                                               sort_keys=True))


def write_plan(plan: dict, path: Path) -> Path:
    path.write_text(json.dumps(plan, indent=1))
    return path
