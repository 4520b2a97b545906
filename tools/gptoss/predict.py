"""Predict a target's throughput and latency with NVIDIA's aiconfigurator performance model, and its speed of light.

usage: python tools/predict.py [RELEASE] -f values/disagg-k8s.yaml [--set k=v] [--set-json '<json>'] [--no-best]
       [--json]   (or: python tools/plan.py --predict -f values/disagg-k8s.yaml; the same values options)

aiconfigurator is an optional extra (requirements-predict.txt); the chart never needs it. Every role is
read back from the rendered manifests (engine ConfigMap, DynamoGraphDeployment, benchmark Job), mapped
onto aiconfigurator's parameters by aiconfigurator_inputs() (which needs no aiconfigurator), and
evaluated by predict(). Settings the model cannot take are listed with what was used instead.
"""
from __future__ import annotations

import contextlib
import copy
import fcntl
import functools
import hashlib
import io
import json
import logging
import math
import os
import re
import warnings
from pathlib import Path

from . import calibration
from .cli import (HelmLikeParser, UsageError, add_values_options, one_line, refuse, release_and_values,
                  with_set_form_hint, write)
from .objects import dgd_workers, find, plan_document
from .render import CHART_DIR, NAMESPACE, RELEASE_NAME, ChartRenderError, parse_manifests, render_manifests
from .values import ValuesError
from .yaml_text import load_yaml

MODEL = "openai/gpt-oss-120b"
BACKEND = "trtllm"
# Chart gpu.type -> aiconfigurator system (its measured kernel database per GPU): the chart's own mapping,
# which also fills the SLA planner's aic_interpolation.system.
SYSTEMS = load_yaml((CHART_DIR / "data" / "aiconfigurator-systems.yaml").read_text())

# The quantization TensorRT-LLM runs (the chart's gpt-oss.quantization, per role in its plan document) ->
# aiconfigurator's MoE mode. gpt-oss's checkpoint quantizes only the MoE experts (MXFP4); attention and the
# other linear layers stay bf16 under all three, so the GEMM mode is bfloat16 throughout.
MOE_MODES = {"W4A16_MXFP4": "w4a16_mxfp4", "W4A8_MXFP4_MXFP8": "w4a8_mxfp4_mxfp8", "W4A8_MXFP4_FP8": None}
GEMM_MODE = "bfloat16"
# MoE modes with gpt-oss kernel data in aiconfigurator 0.12.0's trtllm 1.3.0rc20 database, per system
# (tests/tools/test_predict.py compares this with the installed database).
MEASURED_MOE_MODES = {"gb200": ("w4a16_mxfp4", "w4a8_mxfp4_mxfp8"), "b200_sxm": ("w4a16_mxfp4", "w4a8_mxfp4_mxfp8"),
                      "h200_sxm": ("w4a16_mxfp4",), "h100_sxm": ("w4a16_mxfp4",)}
# Where a quantization has no measured mode on a system: the nearest ones in order, with what they share.
NEAREST_MOE_MODES = {
    "W4A8_MXFP4_FP8": [("w4a8_mxfp4_mxfp8", "the same MXFP4 weights and 8-bit float activations, block-scaled "
                                            "(MXFP8) instead of one FP8 scale"),
                       ("w4a16_mxfp4", "the same MXFP4 weights, 16-bit activations")],
    "W4A8_MXFP4_MXFP8": [("w4a16_mxfp4", "the same MXFP4 weights, 16-bit activations")],
    "W4A16_MXFP4": [],
}
# The chart's own default (templates/validation/_check-values.tpl): TensorRT-LLM's max_num_tokens when unset.
TRTLLM_DEFAULT_MAX_NUM_TOKENS = 8192
# TensorRT-LLM's max_batch_size when trtllm-serve gets no --max_batch_size (BuildConfig, as gpt-oss.plan counts it).
TRTLLM_DEFAULT_MAX_BATCH_SIZE = 2048


def figure(result: dict, tokens_per_s_per_gpu: float) -> str:
    """A predicted tokens/s/GPU as the plan prints it: calibrated with its band first, the raw model figure beside."""
    c = calibration.for_prediction(dict(result, tokens_per_s_per_gpu=tokens_per_s_per_gpu))
    return (f"{c['tokens_per_s_per_gpu']} tokens/s/GPU calibrated (band {c['low']}-{c['high']}; raw model "
            f"{c['raw']})")


class PredictionError(Exception):
    """A rendered target aiconfigurator cannot model (no benchmark to take the workload from, no MoE mode)."""


def moe_mode(algo: str, system: str) -> tuple[str, str | None]:
    """aiconfigurator's MoE mode for a TensorRT-LLM quantization on a system, and a note when it is the nearest."""
    exact = MOE_MODES[algo]
    if exact in MEASURED_MOE_MODES[system]:
        return exact, None
    missing = (f"{algo} has no aiconfigurator mode" if exact is None
               else f"{algo}: aiconfigurator has no {exact} data on {system}")
    for mode, why in NEAREST_MOE_MODES[algo]:
        if mode in MEASURED_MOE_MODES[system]:
            return mode, f"{missing}; modeled with the nearest, {mode} ({why})"
    raise PredictionError(f"{missing}, nor a nearest mode")


def read_target(values_files=(), values: dict | None = None, name: str = RELEASE_NAME,
                namespace: str = NAMESPACE) -> dict:
    """The deployment as rendered: GPU type, worker roles (engine YAML, GPUs, replicas, env), benchmark."""
    objects = parse_manifests(render_manifests(values_files, values, name=name, namespace=namespace))
    plan = plan_document(objects)
    # The quantization per role, computed by the chart (gpt-oss.quantization).
    quantization = {role["component"]: role["quantization"]["algo"] for role in plan["roles"]}
    deployments = [o for o in objects if o["kind"] == "Deployment"]
    roles = [_trtllm_serve_role(objects, deployments[0], quantization["trtllm-serve"])] if deployments else []
    if not deployments:
        dgd = find(objects, "DynamoGraphDeployment")
        engine = find(objects, "ConfigMap", f"{dgd['metadata']['name']}-engine")["data"]
        for name, worker in dgd_workers(dgd).items():
            engine_file = worker["args"][worker["args"].index("--extra-engine-args") + 1].rsplit("/", 1)[-1]
            roles.append({"component": name, "type": worker["type"], "replicas": int(worker["replicas"]),
                          "gpus": worker["gpus"], "quant": quantization[name],
                          "engine": load_yaml(engine[engine_file])})
    jobs = [o for o in objects if o["kind"] == "Job" and o["metadata"]["name"].endswith("-benchmark")]
    if not jobs:
        raise PredictionError("the benchmark Job is not rendered (benchmark.enabled=false): no workload to predict")
    args = jobs[0]["spec"]["template"]["spec"]["containers"][0]["args"]
    benchmark = {"isl": int(args[args.index("--synthetic-input-tokens-mean") + 1]),
                 "osl": int(args[args.index("--output-tokens-mean") + 1]),
                 "concurrency": int(args[args.index("--concurrency") + 1])}
    return {"gpu_type": plan["gpuType"], "total_gpus": plan["totalGpus"],
            "mode": "disagg" if plan["layout"] == "disaggregated" else "agg", "roles": roles, "benchmark": benchmark,
            "runtime": "trtllm-serve" if deployments else "dynamo",
            # The TensorRT-LLM release that runs (gpt-oss.trtllmRelease: the Dynamo line's pin, or trtllm-serve's tag).
            "trtllm_release": plan.get("trtllmRelease") or None}


def release_match(runs: str | None, database: str, slots: dict[str, str]) -> dict:
    """Which TensorRT-LLM release the performance database measured against the one the target runs.

    slots: aiconfigurator's queryable database versions for the system ({"current": v, "next": v, ...}); the
    prediction uses the one cli_estimate takes by default (current). nearest: the newest slot not newer than the
    release that runs (None when every slot is newer or the release is unknown).
    """
    from packaging.version import InvalidVersion, Version
    try:
        runs_version = Version(runs) if runs else None
    except InvalidVersion:
        runs_version = None
    older = sorted((Version(v), v) for v in slots.values() if runs_version and Version(v) <= runs_version)
    return {"runs": runs, "database": database, "same": runs == database,
            "nearest": older[-1][1] if older else None, "slots": dict(slots)}


def format_release_match(match: dict) -> str:
    slots = ", ".join(f"{version} ({slot})" for slot, version in match["slots"].items())
    runs = f"runs TensorRT-LLM {match['runs']}" if match["runs"] else "runs an unversioned TensorRT-LLM image"
    if match["same"]:
        return f"  TensorRT-LLM: the target {runs}, the release the database measured"
    nearest = (f"; the nearest it has at or below {match['runs']} is {match['nearest']}" if match["nearest"]
               and match["nearest"] != match["database"] else "")
    return (f"  TensorRT-LLM: the target {runs}; the database measured {match['database']}, another release "
            f"(aiconfigurator's trtllm databases for this GPU: {slots}{nearest})")


def _trtllm_serve_role(objects: list[dict], deployment: dict, quant: str) -> dict:
    """The trtllm-serve pod as one aggregated role: its flags and extra_llm_api_options in engine-YAML terms."""
    pod = deployment["spec"]["template"]["spec"]
    main = pod["containers"][0]
    args = main["args"]

    def flag(name, default=None):
        return args[args.index(name) + 1] if name in args else default
    engine_file = flag("--extra_llm_api_options").rsplit("/", 1)[-1]
    config_map = next(v["configMap"]["name"] for v in pod["volumes"] if "configMap" in v)
    engine = load_yaml(find(objects, "ConfigMap", config_map)["data"][engine_file])
    gpus = int(main["resources"]["limits"]["nvidia.com/gpu"])
    # TP = EP = GPUs (--tp_size, --ep_size); batch and KV fraction are flags in the guide's command line.
    engine.update(tensor_parallel_size=int(flag("--tp_size")), moe_expert_parallel_size=int(flag("--ep_size")),
                  pipeline_parallel_size=int(flag("--pp_size", 1)),
                  max_batch_size=int(flag("--max_batch_size", TRTLLM_DEFAULT_MAX_BATCH_SIZE)),
                  max_num_tokens=int(flag("--max_num_tokens", TRTLLM_DEFAULT_MAX_NUM_TOKENS)))
    engine["kv_cache_config"] = dict(engine.get("kv_cache_config") or {},
                                     free_gpu_memory_fraction=float(flag("--kv_cache_free_gpu_memory_fraction")))
    return {"component": "trtllm-serve", "type": "worker", "replicas": int(deployment["spec"]["replicas"]),
            "gpus": gpus, "quant": quant, "engine": engine}


def _role_inputs(role: dict, isl: int, users: int, phase: str, system: str, notes: list[str]) -> dict:
    """One worker role in aiconfigurator's terms (parallelism, batch, memory) for phase agg/prefill/decode."""
    engine = role["engine"]
    label = ("trtllmServe" if role["component"] == "trtllm-serve"
             else f"workers.{'worker' if role['type'] == 'worker' else role['type']}")
    tp, pp = int(engine["tensor_parallel_size"]), int(engine["pipeline_parallel_size"])
    ep = int(engine["moe_expert_parallel_size"])
    adp = bool(engine["enable_attention_dp"])
    # TensorRT-LLM's TP with attention-DP is aiconfigurator's attention DP (attention TP 1); the MoE
    # runs on the same TP ranks either way: EP ways of experts, TP/EP ways within each expert.
    inputs = {"tp_size": 1 if adp else tp, "pp_size": pp, "attention_dp_size": tp if adp else 1,
              "moe_tp_size": tp // ep, "moe_ep_size": ep}
    max_batch = int(engine["max_batch_size"])  # per attention-DP rank
    max_tokens = int(engine.get("max_num_tokens") or TRTLLM_DEFAULT_MAX_NUM_TOKENS)
    ranks = inputs["attention_dp_size"] * role["replicas"]
    if phase == "prefill":
        # A prefill step batches whole prompts up to max_num_tokens.
        batch = max(1, min(max_batch, max_tokens // isl))
        if isl > max_tokens:
            notes.append(f"{label}: chunked prefill ({isl}-token prompts in {max_tokens}-token chunks) is not "
                         f"modeled; used one unchunked {isl}-token prefill")
    else:
        batch = min(max_batch, math.ceil(users / ranks))
        if users > max_batch * ranks:
            notes.append(f"{label}: {users} benchmark users exceed its {max_batch * ranks} batch slots; modeled "
                         f"full batches of {max_batch} per rank (the rest queue, see the benchmark line)")
    inputs["batch_size"] = batch
    if phase == "agg":
        # Context tokens one step takes next to a full decode batch (max_num_tokens counts both); without
        # chunked prefill the scheduler takes whole prompts only.
        budget = max_tokens - batch
        if not engine.get("enable_chunked_prefill"):
            budget = budget // isl * isl
        inputs["ctx_tokens"] = max(isl, budget)
    kv = (engine.get("kv_cache_config") or {})
    inputs["kvcache_quant_mode"] = "fp8" if kv.get("dtype") == "fp8" else "bfloat16"
    inputs["free_gpu_memory_fraction"] = float(kv["free_gpu_memory_fraction"])
    mode, nearest = moe_mode(role["quant"], system)
    if nearest:
        notes.append(f"{label}: {nearest}")
    inputs["moe_quant_mode"], inputs["gemm_quant_mode"] = mode, GEMM_MODE
    backend = (engine.get("moe_config") or {}).get("backend")
    if backend:
        notes.append(f"{label}: moe_config.backend {backend} is not a model input; it chose {role['quant']}, "
                     f"modeled with aiconfigurator's measured {mode} MoE kernels")
    if engine.get("disable_overlap_scheduler") and phase != "prefill":
        notes.append(f"{label}: disable_overlap_scheduler is not a model input; modeled the default scheduler")
    return inputs


def aiconfigurator_inputs(target: dict) -> tuple[dict, list[str]]:
    """cli_estimate() keyword arguments for a rendered target, and the settings it cannot model.

    KV cache per request is sized at ISL + OSL tokens (what TensorRT-LLM's scheduler reserves for a request
    of the benchmark; the chart checks both fit max_seq_len), not at max_seq_len per batch slot.
    """
    bench = target["benchmark"]
    isl, osl, users = bench["isl"], bench["osl"], bench["concurrency"]
    notes: list[str] = []
    gpu = target["gpu_type"]
    system = SYSTEMS[gpu]
    kwargs = {"model_path": MODEL, "system_name": system, "backend_name": BACKEND,
              "isl": isl, "osl": osl, "max_seq_len": isl + osl}
    by_type = {role["type"]: role for role in target["roles"]}
    if target["mode"] == "agg":
        role = by_type["worker"]
        kwargs.update(mode="agg", **_role_inputs(role, isl, users, "agg", system, notes))
        kwargs["_replicas"] = role["replicas"]
        return kwargs, notes
    prefill = _role_inputs(by_type["prefill"], isl, users, "prefill", system, notes)
    decode = _role_inputs(by_type["decode"], isl, users, "decode", system, notes)
    kwargs["mode"] = "disagg"
    for side, inputs, role in (("prefill", prefill, by_type["prefill"]), ("decode", decode, by_type["decode"])):
        for key in ("tp_size", "pp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size", "batch_size",
                    "free_gpu_memory_fraction"):
            kwargs[f"{side}_{key}"] = inputs[key]
        kwargs[f"{side}_num_workers"] = role["replicas"]
        kwargs[f"{side}_max_seq_len"] = isl + osl
    for key in ("kvcache_quant_mode", "moe_quant_mode", "gemm_quant_mode"):
        if prefill[key] != decode[key]:
            notes.append(f"{key}: prefill {prefill[key]} and decode {decode[key]} differ; aiconfigurator takes "
                         f"one for both, used decode's {decode[key]}")
        kwargs[key] = decode[key]
    del kwargs["max_seq_len"]
    return kwargs, notes


@contextlib.contextmanager
def aiconfigurator_calls():
    """Where every call into aiconfigurator runs: its INFO logs and warnings kept off stdout/stderr (the plan stays
    readable), its database index read once per process (read_database_index_once)."""
    read_database_index_once()
    logging.disable(logging.WARNING)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            yield
        finally:
            logging.disable(logging.NOTSET)


def read_database_index_once() -> None:
    """aiconfigurator_core 0.12.0 reads its whole database index again (some 180 system YAML files, about a second of
    CPU) on every get_supported_databases() call, which each estimate makes several times: nine tenths of the published
    figures' and the sizing tables' CPU. The index is the installed package's own files, so one read per process serves
    every call; each caller gets its own copy (they are mutable defaultdicts)."""
    from aiconfigurator_core.sdk import perf_database
    read = perf_database.get_supported_databases
    if getattr(read, "read_once", False):
        return
    index: dict = {}

    @functools.wraps(read)
    def read_once(*args, **kwargs):
        key = repr((args, sorted(kwargs.items())))
        if key not in index:
            index[key] = read(*args, **kwargs)
        return copy.deepcopy(index[key])
    read_once.read_once = True
    perf_database.get_supported_databases = read_once


def aiconfigurator_version() -> str:
    from importlib.metadata import version
    return version("aiconfigurator")


def _estimate(kwargs: dict, notes: list[str]):
    from aiconfigurator.cli.api import cli_estimate
    from aiconfigurator.sdk.errors import PerfDataNotAvailableError
    call = {k: v for k, v in kwargs.items() if not k.startswith("_")}
    try:
        return cli_estimate(**call), "SILICON"
    except PerfDataNotAvailableError as error:
        # e.g. MoE TP without expert parallelism: no measured kernel; HYBRID fills only the missing
        # operations with aiconfigurator's empirical estimate, every other one stays measured.
        missing = re.search(r"moe_tp_size: (\d+), moe_ep_size: (\d+)", str(error))
        what = (f"MoE TP{missing.group(1)} x EP{missing.group(2)}" if missing else str(error).split(" at ")[0])
        notes.append(f"{what}: no measured kernel data; aiconfigurator's HYBRID database estimated it")
        return cli_estimate(**call, database_mode="HYBRID"), "HYBRID"


def speed_of_light(kwargs: dict) -> dict:
    """aiconfigurator's speed-of-light estimate of the same configuration (its SOL database mode: each operation at
    the GPU's peak compute or memory bandwidth, whichever bounds it), with the same inputs as the prediction."""
    from aiconfigurator.cli.api import cli_estimate
    call = {k: v for k, v in kwargs.items() if not k.startswith("_")}
    raw = cli_estimate(**call, database_mode="SOL").raw
    return {"tokens_per_s_per_gpu": round(float(raw["tokens/s/gpu"]), 1),
            "tokens_per_s_per_user": round(float(raw["tokens/s/user"]), 2),
            "ttft_ms": round(float(raw["ttft"]), 1), "itl_ms": round(float(raw["tpot"]), 2)}


def _describe_best(row: dict, mode: str, total_gpus: int) -> str:
    """A best-configuration row in the chart's terms (TensorRT-LLM TP = attention TP x attention DP)."""
    def worker(prefix: str) -> str:
        tp = int(row[f"{prefix}tp"]) * int(row[f"{prefix}dp"])
        text = f"TP{tp} EP{int(row[f'{prefix}moe_ep'])}"
        if int(row[f"{prefix}dp"]) > 1:
            text += " attention-DP"
        return text + f", batch {int(row[f'{prefix}bs'])}" + (" per rank" if int(row[f"{prefix}dp"]) > 1 else "")
    if mode == "agg":
        replicas = total_gpus // int(row["num_total_gpus"])
        return f"agg: {replicas} x worker {worker('')}"
    per_replica = int(row["num_total_gpus"])
    replicas = total_gpus // per_replica
    return (f"disagg: {replicas} x ({int(row['(p)workers'])} prefill {worker('(p)')} + "
            f"{int(row['(d)workers'])} decode {worker('(d)')})")


def best_configuration(kwargs: dict, target: dict, itl_ms: float, ttft_ms: float) -> dict:
    """aiconfigurator's best configuration on the same GPUs, workload and quantization, at least as fast per user.

    Searched: aggregated and disaggregated, every parallelism and batch size aiconfigurator sweeps, on at most
    the target's GPU count; constraint: ITL no worse than the target's prediction, TTFT within 2 s (or twice
    the target's TTFT when that is longer).
    """
    from aiconfigurator.cli.api import _execute_and_wrap_result
    from aiconfigurator.sdk.common import GEMMQuantMode, KVCacheQuantMode, MoEQuantMode
    from aiconfigurator.sdk.task_v2 import Task
    common = {"isl": kwargs["isl"], "osl": kwargs["osl"], "total_gpus": target["total_gpus"],
              "ttft": max(2000.0, 2 * ttft_ms), "tpot": itl_ms, "database_mode": "SILICON",
              "max_seq_len": kwargs["isl"] + kwargs["osl"]}
    quant = {"moe_quant_mode": MoEQuantMode[kwargs["moe_quant_mode"]],
             "gemm_quant_mode": GEMMQuantMode[kwargs["gemm_quant_mode"]],
             "kvcache_quant_mode": KVCacheQuantMode[kwargs["kvcache_quant_mode"]]}
    system = kwargs["system_name"]
    tasks = {"agg": Task(serving_mode="agg", model_path=MODEL, system_name=system, backend_name=BACKEND,
                         **quant, **common)}
    if target["total_gpus"] >= 2:
        tasks["disagg"] = Task(serving_mode="disagg", prefill_model_path=MODEL, decode_model_path=MODEL,
                               prefill_system_name=system, decode_system_name=system,
                               prefill_backend_name=BACKEND, decode_backend_name=BACKEND,
                               **{f"{side}_{k}": v for side in ("prefill", "decode") for k, v in quant.items()},
                               **common)
    result = _execute_and_wrap_result(tasks, mode="default", top_n=1)
    constraint = {"itl_ms": round(itl_ms, 2), "ttft_ms": round(common["ttft"], 1)}
    by_mode = {}
    for mode, frame in result.best_configs.items():
        if frame is None or frame.empty:
            continue
        row = frame.iloc[0].to_dict()
        if float(row["tpot"]) > itl_ms * 1.01 or float(row["ttft"]) > common["ttft"] * 1.01:
            continue  # nothing in this mode met the constraint; aiconfigurator returned its nearest miss
        by_mode[mode] = {"tokens_per_s_per_gpu": round(float(row["tokens/s/gpu_cluster"]), 1),
                         "tokens_per_s_per_user": round(float(row["tokens/s/user"]), 2),
                         "ttft_ms": round(float(row["ttft"]), 1), "itl_ms": round(float(row["tpot"]), 2),
                         "configuration": _describe_best(row, mode, target["total_gpus"])}
    if not by_mode:
        return {"found": False, "constraint": constraint}
    mode = max(by_mode, key=lambda m: by_mode[m]["tokens_per_s_per_gpu"])
    return {"found": True, "mode": mode, **by_mode[mode], "by_mode": by_mode, "constraint": constraint}


# A folder of predictions by their inputs, shared by the processes of one test run (ci/test-tiers.sh sets it):
# aiconfigurator is deterministic, and a prediction with its search for the best configuration takes a minute of CPU,
# which the predictions' tests, the docs' commands and the tools' own tests would otherwise spend on one target each.
CACHE = "GPT_OSS_PREDICTION_CACHE"


def _cache_file(target: dict, best: bool) -> Path | None:
    folder = os.environ.get(CACHE)
    if not folder:
        return None
    key = json.dumps({"target": target, "best": best, "aiconfigurator": aiconfigurator_version(),
                      "code": hashlib.sha256(Path(__file__).read_bytes()).hexdigest()}, sort_keys=True, default=str)
    return Path(folder) / f"{hashlib.sha256(key.encode()).hexdigest()}.json"


def predict(values_files=(), values: dict | str | None = None, best: bool = True, name: str = RELEASE_NAME,
            namespace: str = NAMESPACE) -> dict:
    """Predicted tokens/s/GPU, tokens/s/user, TTFT and ITL of a rendered target (and the best configuration).

    values: a dict, or a JSON object as a string (what --set-json '{...}' takes).
    """
    try:
        import aiconfigurator  # noqa: F401
    except ImportError as error:
        raise PredictionError(f"--predict needs aiconfigurator: pip install -r requirements-predict.txt ({error})") \
            from None
    values = json.loads(values) if isinstance(values, str) else (values or {})
    target = read_target(values_files, values, name=name, namespace=namespace)
    cached = _cache_file(target, best)
    if cached is None:
        result = _predict(target, best)
    else:
        cached.parent.mkdir(parents=True, exist_ok=True)
        # One process predicts, another asking the same meanwhile waits for its answer (a lock per prediction).
        with open(cached.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if cached.is_file():
                result = json.loads(cached.read_text())
            else:
                result = _predict(target, best)
                partial = cached.with_suffix(f".{os.getpid()}.partial")
                partial.write_text(json.dumps(result))
                partial.replace(cached)
    result["calibrated"] = calibration.for_prediction(result)
    return result


def _predict(target: dict, best: bool) -> dict:
    """predict() past the render: aiconfigurator's estimate, speed of light and best configuration (no calibration)."""
    kwargs, notes = aiconfigurator_inputs(target)
    with aiconfigurator_calls():
        estimate, database = _estimate(kwargs, notes)
    raw = estimate.raw
    bench = target["benchmark"]
    from aiconfigurator_core.sdk.perf_database import get_version_slots
    slots = get_version_slots(kwargs["system_name"], BACKEND) or {}
    result = {
        "aiconfigurator": aiconfigurator_version(), "perf_database": f"{BACKEND} {estimate.backend_version}",
        "tensorrt_llm": release_match(target["trtllm_release"], str(estimate.backend_version), slots),
        "database_mode": database, "system": kwargs["system_name"], "gpu_type": target["gpu_type"],
        "gpus": target["total_gpus"], "mode": target["mode"], "benchmark": bench,
        "tokens_per_s_per_gpu": round(float(raw["tokens/s/gpu"]), 1),
        "tokens_per_s_per_user": round(float(raw["tokens/s/user"]), 2),
        "ttft_ms": round(float(raw["ttft"]), 1), "itl_ms": round(float(raw["tpot"]), 2),
        "requests_per_s": round(float(raw["seq/s"]) * kwargs.get("_replicas", 1), 3),
        "request_latency_s": round(float(raw["request_latency"]) / 1000, 2),
        "not_modeled": notes, "inputs": {k: v for k, v in kwargs.items() if not k.startswith("_")},
        "quantization": {role["component"]: role["quant"] for role in target["roles"]},
    }
    if target["mode"] == "disagg":
        prefill = float(raw["(p)seq/s/worker"]) * kwargs["prefill_num_workers"]
        decode = float(raw["(d)seq/s/worker"]) * kwargs["decode_num_workers"]
        side = "prefill" if prefill < decode else "decode"
        result["limit"] = {"side": side, "prefill_requests_per_s": round(prefill, 2),
                           "decode_requests_per_s": round(decode, 2),
                           "factor": round(max(prefill, decode) / min(prefill, decode), 2)}
    with aiconfigurator_calls():
        result["sol"] = speed_of_light(kwargs)
    result["fraction_of_sol"] = round(result["tokens_per_s_per_gpu"] / result["sol"]["tokens_per_s_per_gpu"], 2)
    # Closed loop: each benchmark user waits users/throughput seconds per request; beyond the request's
    # own latency that is queueing before prefill (Little's law).
    cycle = bench["concurrency"] / result["requests_per_s"]
    result["benchmark_queue_s"] = round(max(0.0, cycle - result["request_latency_s"]), 1)
    if best:
        with aiconfigurator_calls():
            result["best"] = best_configuration(kwargs, target, result["itl_ms"], result["ttft_ms"])
        if result["best"]["found"]:
            result["ratio_to_best"] = round(result["tokens_per_s_per_gpu"] / result["best"]["tokens_per_s_per_gpu"], 2)
    return result


def calibration_line(c: dict) -> str:
    """Where a calibrated figure comes from: its fit, and what it leaves uncalibrated."""
    line = (f"  calibrated: x{c['factor']:.3f}, the {c['group']} fit on {c['points']} TensorRT-LLM published points; "
            f"band {c['band'][0]:.2f}-{c['band'][1]:.2f} x (leave-one-out included, docs/targets.md); TTFT and ITL "
            "are the model's (no published latency to fit)")
    return line + (f"; {c['note']}" if c["note"] else "")


def format_prediction(result: dict) -> str:
    bench = result["benchmark"]
    lines = [f"Prediction (aiconfigurator {result['aiconfigurator']}, {result['perf_database']} "
             f"{result['database_mode']} database, {result['system']}; ISL {bench['isl']} / OSL {bench['osl']}, "
             f"{bench['concurrency']} users):",
             f"  runs {', '.join(sorted(set(result['quantization'].values())))}: modeled with aiconfigurator's "
             f"{result['inputs']['moe_quant_mode']} MoE and {result['inputs']['gemm_quant_mode']} GEMM modes",
             format_release_match(result["tensorrt_llm"]),
             f"  {figure(result, result['tokens_per_s_per_gpu'])}, "
             f"{result['tokens_per_s_per_user']:.1f} tokens/s/user, "
             f"TTFT {result['ttft_ms']:.0f} ms, ITL {result['itl_ms']:.1f} ms ({result['mode']}, {result['gpus']} GPUs)",
             calibration_line(result["calibrated"])]
    sol = result["sol"]
    lines.append(f"  speed of light (aiconfigurator's SOL database, same configuration): {sol['tokens_per_s_per_gpu']:.0f} "
                 f"tokens/s/GPU, TTFT {sol['ttft_ms']:.0f} ms, ITL {sol['itl_ms']:.1f} ms; this target reaches "
                 f"{result['fraction_of_sol']:.2f} of it")
    if "limit" in result:
        limit = result["limit"]
        other = "decode" if limit["side"] == "prefill" else "prefill"
        lines.append(f"  {limit['side']}-limited: prefill serves {limit['prefill_requests_per_s']:.1f} requests/s, "
                     f"decode {limit['decode_requests_per_s']:.1f}; {other} has {limit['factor']:.1f}x the capacity")
    if result["benchmark_queue_s"] >= 1:
        lines.append(f"  benchmark: {bench['concurrency']} users at {result['requests_per_s']:.1f} requests/s wait "
                     f"about {result['benchmark_queue_s']:.0f} s per request in the queue (added to TTFT)")
    best = result.get("best")
    if best and best["found"]:
        lines.append(f"  best on {result['gpus']} {result['gpu_type']}: {figure(result, best['tokens_per_s_per_gpu'])} "
                     f"({best['configuration']}; ITL {best['itl_ms']:.1f} ms, TTFT {best['ttft_ms']:.0f} ms); "
                     f"this target reaches {result['ratio_to_best']:.2f} of it"
                     + (" (above 1: the target uses settings its search does not try, e.g. batches above 512 or several prompts per prefill step)"
                        if result["ratio_to_best"] > 1 else ""))
        for mode, other in best["by_mode"].items():
            if mode != best["mode"]:
                lines.append(f"  best {mode} on {result['gpus']} {result['gpu_type']}: "
                             f"{figure(result, other['tokens_per_s_per_gpu'])} ({other['configuration']}; "
                             f"ITL {other['itl_ms']:.1f} ms, TTFT {other['ttft_ms']:.0f} ms)")
    elif best:
        lines.append(f"  best: aiconfigurator found no configuration within ITL {best['constraint']['itl_ms']} ms "
                     f"and TTFT {best['constraint']['ttft_ms']} ms")
    lines += [f"  not modeled: {note}" for note in result["not_modeled"]]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = HelmLikeParser(description=__doc__.splitlines()[0])
    add_values_options(parser)
    parser.add_argument("--no-best", action="store_true", help="skip the search for the best configuration")
    parser.add_argument("--json", action="store_true", help="print the prediction as JSON")
    try:
        args = parser.parse_intermixed_args(argv)
        name, namespace, values = release_and_values(args)
    except (UsageError, ValuesError) as error:
        return refuse(one_line(error), 2)
    try:
        result = predict([], values, best=not args.no_best, name=name, namespace=namespace)
    except ChartRenderError as error:
        return refuse(with_set_form_hint(str(error)), 1)
    except PredictionError as error:
        return refuse(one_line(error), 2)
    write((json.dumps(result, indent=1) if args.json else format_prediction(result)) + "\n")
    return 0
