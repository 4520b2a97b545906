"""Compare aiconfigurator's predictions with TensorRT-LLM's published gpt-oss-120b throughput.

usage: python -m ci.generate compare-published [--json]   (needs requirements-predict.txt; a few minutes on 2 cores)

The published figures are TensorRT-LLM's perf-overview table (FACTS.md, "Published throughput"): output
tokens/s/GPU at maximum load, measured with trtllm-bench; attention DP, CUDA graphs, KV cache fp8 on Blackwell
(auto, that is bf16, on Hopper), MoE backend CUTLASS (TRITON on Hopper), no OVERRIDE_QUANT_ALGO, so Blackwell ran
W4A8_MXFP4_MXFP8 and Hopper W4A16_MXFP4. Each configuration is modeled the way tools/gptoss/predict.py models a target
(the same GPU mapping, MoE and GEMM modes); "maximum load" is the highest tokens/s/GPU over batch sizes whose KV
cache fits. python -m ci.generate calibration --remodel fits the calibration of every prediction on these rows
(tools/gptoss/calibration.json), and tests/tools/test_published_figures.py runs this script and compares.
"""
from __future__ import annotations

import argparse
import json
import sys

from tools.gptoss.predict import (BACKEND, GEMM_MODE, MODEL, SYSTEMS, TRTLLM_DEFAULT_MAX_NUM_TOKENS,
                                  aiconfigurator_calls, aiconfigurator_version, moe_mode)

# GPU -> (published column, attention-DP ranks = EP ways, quantization that ran, KV cache dtype)
CONFIGURATIONS = {
    "B200": ("DEP2", 2, "W4A8_MXFP4_MXFP8", "fp8"),
    "GB200": ("TP1", 1, "W4A8_MXFP4_MXFP8", "fp8"),
    "H200": ("TP1", 1, "W4A16_MXFP4", "bfloat16"),
    "H100": ("DEP4", 4, "W4A16_MXFP4", "bfloat16"),
}
# (ISL, OSL) -> GPU -> published output tokens/s/GPU (FACTS.md)
# (a dash in the table: no figure for that GPU and shape).
PUBLISHED = {
    (1000, 1000): {"B200": 25943, "GB200": 27198, "H200": 6868, "H100": 4685},
    (1024, 1024): {"B200": 25870, "GB200": 26609, "H200": 6798, "H100": 4715},
    (1024, 8192): {"B200": 17289, "GB200": 14800, "H200": 3543},
    (1024, 32768): {"B200": 6279, "GB200": 5556, "H100": 1177},
    (8192, 1024): {"B200": 6111, "GB200": 6835, "H200": 1828, "H100": 1169},
    (32768, 1024): {"B200": 1392, "GB200": 1645, "H200": 519, "H100": 333},
}
# Sequences per attention-DP rank, up to TensorRT-LLM's default max_batch_size.
BATCHES = [32, 64, 128, 256, 384, 512, 768, 1024, 1536, 2048]
FREE_GPU_MEMORY_FRACTION = 0.9  # trtllm-bench's default share of free memory for the KV cache


def max_load(gpu: str, isl: int, osl: int) -> dict:
    """The highest predicted tokens/s/GPU of one published configuration over the batch sizes that fit."""
    from aiconfigurator.cli.api import cli_estimate
    _, ranks, algo, kv = CONFIGURATIONS[gpu]
    mode, _ = moe_mode(algo, SYSTEMS[gpu])
    best = None
    for batch in BATCHES:
        # trtllm-bench runs without chunked prefill: whole prompts up to max_num_tokens per step.
        ctx_tokens = max(isl, (TRTLLM_DEFAULT_MAX_NUM_TOKENS - batch) // isl * isl)
        try:
            result = cli_estimate(MODEL, SYSTEMS[gpu], mode="agg", backend_name=BACKEND, isl=isl, osl=osl,
                                  batch_size=batch, ctx_tokens=ctx_tokens, tp_size=1, attention_dp_size=ranks,
                                  moe_tp_size=1, moe_ep_size=ranks, moe_quant_mode=mode, gemm_quant_mode=GEMM_MODE,
                                  kvcache_quant_mode=kv, free_gpu_memory_fraction=FREE_GPU_MEMORY_FRACTION,
                                  max_seq_len=isl + osl)
        except RuntimeError as error:
            if not str(error).startswith("OOM"):
                raise
            break  # the batch's activations do not fit; larger ones do not either
        if result.kv_cache_warning:
            break  # larger batches do not fit either
        tokens = float(result.raw["tokens/s/gpu"])
        if best is None or tokens > best["predicted"]:
            best = {"predicted": round(tokens), "batch": batch, "moe_quant_mode": mode,
                    "database": str(result.backend_version)}
    return best


def compare() -> list[dict]:
    rows = []
    with aiconfigurator_calls():
        for (isl, osl), figures in PUBLISHED.items():
            for gpu, published in figures.items():
                best = max_load(gpu, isl, osl)
                rows.append({"isl": isl, "osl": osl, "gpu": gpu, "configuration": CONFIGURATIONS[gpu][0],
                             "quantization": CONFIGURATIONS[gpu][2], "published": published, **best,
                             "ratio": round(best["predicted"] / published, 2)})
    return rows


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    rows = compare()
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"aiconfigurator {aiconfigurator_version()} against TensorRT-LLM's published gpt-oss-120b figures "
          "(output tokens/s/GPU at maximum load)")
    print(f"{'ISL/OSL':<10} {'GPU':<6} {'config':<6} {'quantization':<17} {'published':>9} {'predicted':>9} "
          f"{'ratio':>5}  batch/rank")
    for r in rows:
        print(f"{r['isl']}/{r['osl']:<5} {r['gpu']:<6} {r['configuration']:<6} {r['quantization']:<17} "
              f"{r['published']:>9} {r['predicted']:>9} {r['ratio']:>5.2f}  {r['batch']}")
    return 0
