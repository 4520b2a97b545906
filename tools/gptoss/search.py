"""How many GPUs, and which configuration, for a traffic on a GPU type: aiconfigurator's search, ranked by calibrated
GPUs, written as a values overlay of this chart.

usage: python tools/plan.py --search --gpu H200 --isl 1000 --osl 1000 --rate 100000tok/s [--ttft 2000] [--itl 20]
       [--max-gpus N] [--write values/my-target.yaml]   (docs/tools.md; needs requirements-predict.txt)

One aiconfigurator search per serving mode (aggregated, disaggregated) on one node's GPUs, at the SLA's ITL (its
tpot) and TTFT, with the quantization the chart runs by default on the GPU (Blackwell W4A8_MXFP4_MXFP8 with CUTLASS
MoE, Hopper W4A16_MXFP4 with TRITON MoE) and the KV cache TensorRT-LLM's published figures used (fp8 on Blackwell,
bf16 on Hopper). Each candidate within the SLA is one replica; replicas are added until the calibrated throughput
(tools/gptoss/calibration.py) carries the rate, and the candidates are ranked by the GPUs that takes. The best is
written as an overlay whose comment block states its calibrated figures, band and the command that made it, then
rendered by the chart and predicted again (tools/predict.py), which is what `--predict` prints for it.
"""
from __future__ import annotations

import functools
import math
import re
import resource
import shlex
import time

from . import calibration
from .predict import BACKEND, GEMM_MODE, MODEL, SYSTEMS, PredictionError, aiconfigurator_calls, moe_mode

# Exit code of a search whose traffic the GPUs cannot meet (3 is the tools' unexpected-error code: docs/tools.md).
UNMET = 4
GPUS_PER_NODE = {"GB200": 4, "B200": 8, "H200": 8, "H100": 8}
BLACKWELL = {"GB200", "B200"}
# TensorRT-LLM's default MXFP4 path on the GPU with the MoE backend the overlay sets (docs/targets.md, "Quantization").
QUANTIZATION = {"GB200": ("W4A8_MXFP4_MXFP8", "CUTLASS"), "B200": ("W4A8_MXFP4_MXFP8", "CUTLASS"),
                "H200": ("W4A16_MXFP4", "TRITON"), "H100": ("W4A16_MXFP4", "TRITON")}
TRTLLM_DEFAULT_MAX_NUM_TOKENS = 8192
RATE = re.compile(r"^\s*(?P<number>\d+(?:\.\d+)?)\s*(?P<k>[kK]?)\s*(?P<unit>tok/s|tokens/s|users?)\s*$")


class SearchError(Exception):
    """A request the search cannot take (a bad rate, a GPU without a system)."""


def parse_rate(text: str) -> tuple[str, float]:
    """'100000tok/s' or '100k tok/s' -> ('tokens', 100000.0); '512users' -> ('users', 512.0)."""
    match = RATE.match(text)
    if not match:
        raise SearchError(f"--rate {text!r}: give output tokens/s or concurrent users, e.g. 100000tok/s, 100ktok/s "
                          "or 512users")
    number = float(match["number"]) * (1000 if match["k"] else 1)
    return ("users" if match["unit"].startswith("user") else "tokens"), number


@functools.lru_cache(maxsize=8)
def _candidates(gpu: str, isl: int, osl: int, ttft: float, itl: float) -> dict:
    """aiconfigurator's best configurations per mode on one node (its top rows, SLA met or not); one search per
    request in a process (another rate or --max-gpus reuses it)."""
    from aiconfigurator.cli.api import _execute_and_wrap_result
    from aiconfigurator.sdk.common import GEMMQuantMode, KVCacheQuantMode, MoEQuantMode
    from aiconfigurator.sdk.task_v2 import Task
    system = SYSTEMS[gpu]
    mode, _ = moe_mode(QUANTIZATION[gpu][0], system)
    kv = "fp8" if gpu in BLACKWELL else "bfloat16"
    quant = {"moe_quant_mode": MoEQuantMode[mode], "gemm_quant_mode": GEMMQuantMode[GEMM_MODE],
             "kvcache_quant_mode": KVCacheQuantMode[kv]}
    # pareto_sweep off: only the asked ITL is evaluated, not aiconfigurator's whole grid (the 60 s budget).
    common = {"isl": isl, "osl": osl, "total_gpus": GPUS_PER_NODE[gpu], "ttft": float(ttft), "tpot": float(itl),
              "database_mode": "SILICON", "max_seq_len": isl + osl, "pareto_sweep": False}
    tasks = {"agg": Task(serving_mode="agg", model_path=MODEL, system_name=system, backend_name=BACKEND,
                         **quant, **common),
             "disagg": Task(serving_mode="disagg", prefill_model_path=MODEL, decode_model_path=MODEL,
                            prefill_system_name=system, decode_system_name=system, prefill_backend_name=BACKEND,
                            decode_backend_name=BACKEND,
                            **{f"{side}_{k}": v for side in ("prefill", "decode") for k, v in quant.items()}, **common)}
    result = _execute_and_wrap_result(tasks, mode="default", top_n=5)
    return {m: [row for _, row in frame.iterrows()] for m, frame in result.best_configs.items()
            if frame is not None and not frame.empty}


@functools.lru_cache(maxsize=8)
def _lowest_latency(gpu: str, isl: int, osl: int) -> dict | None:
    """The lowest-ITL point aiconfigurator predicts where its search finds none: one aggregated worker per pod size
    (TP = EP = GPUs, as many as a node has down to 2), one sequence; a row in the search's terms."""
    from aiconfigurator.cli.api import cli_estimate
    system = SYSTEMS[gpu]
    mode, _ = moe_mode(QUANTIZATION[gpu][0], system)
    best = None
    gpus = GPUS_PER_NODE[gpu]
    while gpus >= 2:
        try:
            raw = cli_estimate(MODEL, system, mode="agg", backend_name=BACKEND, isl=isl, osl=osl, batch_size=1,
                               ctx_tokens=isl, tp_size=gpus, attention_dp_size=1, moe_tp_size=1, moe_ep_size=gpus,
                               moe_quant_mode=mode, gemm_quant_mode=GEMM_MODE,
                               kvcache_quant_mode="fp8" if gpu in BLACKWELL else "bfloat16",
                               max_seq_len=isl + osl).raw
        except Exception:  # no measured kernel or no memory for this pod size: the next one
            gpus //= 2
            continue
        row = {"tokens/s/gpu_cluster": float(raw["tokens/s/gpu"]), "num_total_gpus": gpus, "concurrency": 1,
               "tpot": float(raw["tpot"]), "ttft": float(raw["ttft"]), "tp": gpus, "dp": 1, "pp": 1, "moe_ep": gpus,
               "bs": 1}
        if best is None or row["tpot"] < best["tpot"]:
            best = row
        gpus //= 2
    return best


def _cpu_seconds() -> float:
    """CPU time of this process and its children: what the search costs, whatever else the machine runs."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _worker(row, prefix: str) -> dict:
    """One role of a row in the chart's terms (TensorRT-LLM TP = attention TP x attention DP)."""
    tp, dp = int(row[f"{prefix}tp"]), int(row[f"{prefix}dp"])
    return {"tp": tp * dp, "ep": int(row[f"{prefix}moe_ep"]), "adp": dp > 1, "batch": int(row[f"{prefix}bs"]),
            "gpus": tp * dp * int(row[f"{prefix}pp"])}


def _candidate(mode: str, row, gpu: str, isl: int, osl: int, kind: str, rate: float, max_gpus: int | None) -> dict:
    quantization = QUANTIZATION[gpu][0]
    raw = float(row["tokens/s/gpu_cluster"])
    gpus_per_replica = int(row["num_total_gpus"])
    c = calibration.calibrate(raw, gpu, quantization, isl, osl)
    factor = c["factor"]
    # The calibrated replica: the model's throughput (and, at its ITL, the users it serves) times the factor.
    replica_tokens = raw * factor * gpus_per_replica
    replica_users = float(row["concurrency"]) * factor
    per_replica = replica_users if kind == "users" else replica_tokens
    replicas = max(1, math.ceil(rate / per_replica - 1e-9))
    capped = max_gpus is not None and replicas * gpus_per_replica > max_gpus
    if capped:
        replicas = max(1, max_gpus // gpus_per_replica)
    candidate = {"mode": mode, "raw_tokens_per_s_per_gpu": round(raw, 1), "calibration": c,
                 "gpus_per_replica": gpus_per_replica, "replicas": replicas, "gpus": replicas * gpus_per_replica,
                 "tokens_per_s": round(replica_tokens * replicas), "users": math.floor(replica_users * replicas),
                 "itl_ms": round(float(row["tpot"]), 2), "ttft_ms": round(float(row["ttft"]), 1),
                 "capped": capped or (max_gpus is not None and gpus_per_replica > max_gpus)}
    if mode == "agg":
        candidate["worker"] = _worker(row, "")
    else:
        candidate["prefill"] = dict(_worker(row, "(p)"), workers=int(row["(p)workers"]))
        candidate["decode"] = dict(_worker(row, "(d)"), workers=int(row["(d)workers"]))
    return candidate


def describe(c: dict) -> str:
    def role(w: dict) -> str:
        return f"TP{w['tp']} EP{w['ep']}{' attention-DP' if w['adp'] else ''}, batch {w['batch']}" + \
            (" per rank" if w["adp"] else "")
    if c["mode"] == "agg":
        return f"agg: {c['replicas']} x worker {role(c['worker'])} ({c['gpus_per_replica']} GPU{'s' * (c['gpus_per_replica'] > 1)} each)"
    p, d = c["prefill"], c["decode"]
    return (f"disagg: {c['replicas']} x ({p['workers']} prefill {role(p)} + {d['workers']} decode {role(d)}; "
            f"{c['gpus_per_replica']} GPUs each)")


def search(gpu: str, isl: int, osl: int, rate: str, ttft: float = 2000.0, itl: float = 20.0,
           max_gpus: int | None = None) -> dict:
    """The candidates within the SLA ranked by calibrated GPUs, or (none within it, or none within max_gpus) the
    best reachable point and why."""
    try:
        import aiconfigurator  # noqa: F401
    except ImportError as error:
        raise PredictionError(f"--search needs aiconfigurator: pip install -r requirements-predict.txt ({error})") \
            from None
    if gpu not in SYSTEMS:
        raise SearchError(f"--gpu {gpu}: no aiconfigurator system (allowed: {', '.join(SYSTEMS)})")
    kind, amount = parse_rate(rate)
    started, cpu = time.monotonic(), _cpu_seconds()
    with aiconfigurator_calls():
        rows = _candidates(gpu, isl, osl, float(ttft), float(itl))
    seconds, cpu_seconds = round(time.monotonic() - started, 1), round(_cpu_seconds() - cpu, 1)
    every = [_candidate(mode, row, gpu, isl, osl, kind, amount, max_gpus) for mode, found in rows.items()
             for row in found]
    within_sla = [c for c in every if c["itl_ms"] <= itl * 1.01 and c["ttft_ms"] <= ttft * 1.01]
    meeting = [c for c in within_sla if not c["capped"]]
    request = {"gpu": gpu, "isl": isl, "osl": osl, "rate": rate, "rate_kind": kind, "rate_amount": amount,
               "ttft_ms": ttft, "itl_ms": itl, "max_gpus": max_gpus}
    answer = {"request": request, "seconds": seconds, "cpu_seconds": cpu_seconds}
    if meeting:
        ranked = sorted(meeting, key=lambda c: (c["gpus"], -c["tokens_per_s"]))
        return dict(answer, met=True, best=ranked[0], ranked=ranked)
    if within_sla:
        # The SLA holds but the GPUs do not carry the rate: the most the allowed GPUs serve.
        best = max(within_sla, key=lambda c: c["tokens_per_s"] if kind == "tokens" else c["users"])
        served = f"{best['tokens_per_s']} tokens/s" if kind == "tokens" else f"{best['users']} users"
        why = (f"{max_gpus} {gpu} GPUs serve at most {served} (calibrated) within ITL {itl} ms and TTFT {ttft} ms, "
               f"below the {rate} asked")
        return dict(answer, met=False, best=best, ranked=[best], why=why)
    if not every:
        # aiconfigurator's search returns nothing this far below what the GPU reaches: its lowest-latency point.
        with aiconfigurator_calls():
            row = _lowest_latency(gpu, isl, osl)
        if row is None:
            return dict(answer, met=False, best=None, ranked=[],
                        why=f"aiconfigurator predicts no configuration of gpt-oss-120b on {gpu} at ISL {isl} / OSL {osl}")
        every = [_candidate("agg", row, gpu, isl, osl, kind, amount, max_gpus)]
    best = min(every, key=lambda c: (max(c["itl_ms"] / itl, c["ttft_ms"] / ttft), c["gpus"]))
    why = (f"no configuration on {gpu} meets ITL {itl} ms and TTFT {ttft} ms at ISL {isl} / OSL {osl}: the nearest "
           f"aiconfigurator finds has ITL {best['itl_ms']} ms and TTFT {best['ttft_ms']:.0f} ms")
    return dict(answer, met=False, best=best, ranked=[best], why=why)


def overlay_values(c: dict, gpu: str, isl: int, osl: int) -> dict:
    """The chart's values for a candidate."""
    _, backend = QUANTIZATION[gpu]
    max_seq_len = isl + osl

    def role(w: dict, replicas: int, step_tokens: int, fraction: float) -> dict:
        engine = {"cuda_graph_config": {"enable_padding": True, "max_batch_size": w["batch"]},
                  "kv_cache_config": {"enable_block_reuse": False}, "moe_config": {"backend": backend}}
        if gpu in BLACKWELL:
            engine["kv_cache_config"]["dtype"] = "fp8"
        return {"enabled": True, "replicas": replicas, "tensorParallelSize": w["tp"], "pipelineParallelSize": 1,
                "expertParallelSize": w["ep"], "attentionDP": w["adp"], "maxBatchSize": w["batch"],
                "maxNumTokens": step_tokens, "maxSeqLen": max_seq_len, "freeGpuMemoryFraction": fraction,
                "engine": engine}
    workers: dict = {"overrideQuantAlgo": ""}
    if c["mode"] == "agg":
        w = c["worker"]
        # One step takes a whole prompt beside a full decode batch.
        workers["worker"] = role(w, c["replicas"], max(TRTLLM_DEFAULT_MAX_NUM_TOKENS, isl + w["batch"]), 0.9)
        workers["prefill"], workers["decode"] = {"enabled": False}, {"enabled": False}
    else:
        p, d = c["prefill"], c["decode"]
        workers["worker"] = {"enabled": False}
        workers["prefill"] = role(p, p["workers"] * c["replicas"], max(TRTLLM_DEFAULT_MAX_NUM_TOKENS, p["batch"] * isl),
                                  0.9)
        workers["decode"] = role(d, d["workers"] * c["replicas"], TRTLLM_DEFAULT_MAX_NUM_TOKENS, 0.9)
    return {"gpu": {"type": gpu}, "workers": workers,
            # Every decode slot busy: the load the figures are for.
            "benchmark": {"inputTokensMean": isl, "outputTokensMean": osl, "concurrencyFrom": "decodeSlots",
                          "concurrency": None, "requestCountMultiplier": 10, "extraInputs": ["ignore_eos:true"]}}


def overlay_text(answer: dict, values: dict, command: str, prediction: dict | None) -> str:
    """The overlay: a comment block (request, calibrated figures, band, command), then the values."""
    import yaml
    c, r = answer["best"], answer["request"]
    cal = c["calibration"]
    import textwrap
    paragraphs = [f"Searched by tools/plan.py --search for {r['rate']} on {r['gpu']}, ISL {r['isl']} / OSL {r['osl']}, "
                  f"ITL <= {r['itl_ms']:g} ms, TTFT <= {r['ttft_ms']:g} ms:",
                  "  " + (shlex.join(command) if isinstance(command, list) else command),
                  f"{describe(c)}: {c['gpus']} GPUs.",
                  f"Calibrated: {cal['tokens_per_s_per_gpu']} tokens/s/GPU (band {cal['low']}-{cal['high']}; raw model "
                  f"{cal['raw']}), x{cal['factor']:.3f} from the {cal['group']} fit on TensorRT-LLM's published "
                  f"figures (docs/targets.md); {c['tokens_per_s']} tokens/s and {c['users']} users in all at ITL "
                  f"{c['itl_ms']} ms, TTFT {c['ttft_ms']:.0f} ms (the model's latencies)."]
    if not answer["met"]:
        paragraphs.append(f"NOT MET: {answer['why']}; this is the best reachable point.")
    if prediction is not None:
        p = prediction["calibrated"]
        paragraphs.append(f"tools/plan.py --predict on this file: {p['tokens_per_s_per_gpu']} tokens/s/GPU calibrated "
                          f"(band {p['low']}-{p['high']}; raw model {p['raw']}), ITL {prediction['itl_ms']} ms, TTFT "
                          f"{prediction['ttft_ms']:.0f} ms at {prediction['benchmark']['concurrency']} users.")
    paragraphs.append("  helm install gpt-oss charts/gpt-oss -f <this file>")
    # yamllint's 120 columns (.yamllint.yaml), whatever the command's length.
    lines = [line for text in paragraphs
             for line in textwrap.wrap(text, 118, initial_indent="# ", subsequent_indent="#     " if
                                       text.startswith("  ") else "# ", break_on_hyphens=False, break_long_words=False)]
    body = yaml.safe_dump(values, sort_keys=False, width=118, indent=2)
    return "\n".join(lines) + "\n" + body


def format_answer(answer: dict) -> str:
    r = answer["request"]
    lines = [f"Search (aiconfigurator, {answer['seconds']} s, {answer['cpu_seconds']} s of CPU): {r['rate']} on {r['gpu']}, ISL {r['isl']} / OSL "
             f"{r['osl']}, ITL <= {r['itl_ms']:g} ms, TTFT <= {r['ttft_ms']:g} ms"
             + (f", at most {r['max_gpus']} GPUs" if r["max_gpus"] else "")]
    if not answer["met"]:
        lines.append(f"  not met: {answer['why']}")
        if answer["best"] is None:
            return "\n".join(lines)
        lines.append("  best reachable:")
    for rank, c in enumerate(answer["ranked"], 1):
        cal = c["calibration"]
        lines.append(f"  {rank}. {c['gpus']} GPUs: {describe(c)}; {cal['tokens_per_s_per_gpu']} tokens/s/GPU "
                     f"calibrated (band {cal['low']}-{cal['high']}; raw model {cal['raw']}); {c['tokens_per_s']} "
                     f"tokens/s, {c['users']} users; ITL {c['itl_ms']} ms, TTFT {c['ttft_ms']:.0f} ms")
    return "\n".join(lines)


def write_overlay(answer: dict, path: str, command) -> dict:
    """Render the best candidate's values with the chart (every check of it), predict the rendered overlay as
    --predict does, and write the file with both in its comment block. Returns the prediction."""
    from .predict import predict
    from .render import render_manifests
    r = answer["request"]
    values = overlay_values(answer["best"], r["gpu"], r["isl"], r["osl"])
    render_manifests([], values)  # the chart's refusal (ChartRenderError) ends it before anything is written
    prediction = predict([], values, best=False)
    with open(path, "w") as handle:
        handle.write(overlay_text(answer, values, command, prediction))
    return prediction


def add_search_options(parser) -> None:
    group = parser.add_argument_group("search (--search; requirements-predict.txt)")
    group.add_argument("--search", action="store_true",
                       help="search aggregated and disaggregated configurations for a traffic, ranked by calibrated GPUs")
    group.add_argument("--gpu", help="GPU type: GB200, B200, H200 or H100")
    group.add_argument("--isl", type=int, help="input tokens per request")
    group.add_argument("--osl", type=int, help="output tokens per request")
    group.add_argument("--rate", help="the traffic: output tokens/s (100000tok/s, 100ktok/s) or concurrent users (512users)")
    group.add_argument("--ttft", type=float, default=2000.0, help="time to first token limit, ms (default 2000)")
    group.add_argument("--itl", type=float, default=20.0, help="inter-token latency limit, ms (default 20)")
    group.add_argument("--max-gpus", type=int, help="the GPUs there are: at most this many")
    group.add_argument("--write", metavar="PATH", help="write the best configuration as a values overlay")


def run(args, argv) -> int:
    """--search: print the ranked answer, and with --write render, predict and write the overlay."""
    import sys

    from .cli import one_line, refuse, write
    from .render import ChartRenderError
    missing = [f"--{name}" for name in ("gpu", "isl", "osl", "rate") if getattr(args, name) is None]
    if missing:
        return refuse(f"--search needs {', '.join(missing)}", 2)
    try:
        answer = search(args.gpu, args.isl, args.osl, args.rate, args.ttft, args.itl, args.max_gpus)
    except (SearchError, PredictionError) as error:
        return refuse(one_line(error), 2)
    write(format_answer(answer) + "\n")
    if args.write and answer["best"] is not None:
        command = ["tools/plan.py"] + list(sys.argv[1:] if argv is None else argv)
        try:
            prediction = write_overlay(answer, args.write, command)
        except ChartRenderError as error:
            return refuse(f"the chart refused the searched configuration (nothing written): {error}", 1)
        p = prediction["calibrated"]
        write(f"wrote {args.write}: it renders ({prediction['gpus']} GPUs); --predict on it: {p['tokens_per_s_per_gpu']} "
              f"tokens/s/GPU calibrated (band {p['low']}-{p['high']}; raw model {p['raw']}), ITL "
              f"{prediction['itl_ms']} ms, TTFT {prediction['ttft_ms']:.0f} ms at {prediction['benchmark']['concurrency']}"
              " users\n")
    return 0 if answer["met"] else UNMET
