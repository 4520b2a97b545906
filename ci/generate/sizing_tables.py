"""Write charts/gpt-oss/templates/_sizing-tables.tpl: per-GPU-type sizing numbers from aiconfigurator.

usage: python -m ci.generate sizing-tables [--check]   (needs requirements-predict.txt; --check fails when the file is stale)
The chart stays dependency-free: it carries these literal tables, which its sizing warnings
(gpt-oss.warnings in templates/_plan-warnings.tpl) read; tests/tools/test_sizing_tables.py regenerates them and compares.
"""
from __future__ import annotations

import sys

from tools.gptoss.predict import (BACKEND, GEMM_MODE, MODEL, MOE_MODES, SYSTEMS, aiconfigurator_calls,
                                  aiconfigurator_version, moe_mode)

from . import REPO, check_only, write_generated

TARGET = REPO / "charts" / "gpt-oss" / "templates" / "_sizing-tables.tpl"
GPUS_PER_NODE = {"GB200": 4, "B200": 8, "H200": 8, "H100": 8}
PROMPT_LENGTHS = [1024, 4096, 8192, 16384, 32768, 65536]
STEP_TOKENS = 8192  # TensorRT-LLM's default max_num_tokens: short prompts are batched up to it
DECODE = {"ranks": 4, "isl": 8192, "osl": 1024}  # the reference decode worker
DECODE_BATCHES = [16, 32, 64, 128, 256, 384, 512, 1024]  # sequences per rank, that is per GPU


def _estimate(**kwargs):
    from aiconfigurator.cli.api import cli_estimate
    return cli_estimate(MODEL, backend_name=BACKEND, **kwargs)


def tables() -> tuple[dict, str]:
    from aiconfigurator.sdk.errors import PerfDataNotAvailableError
    out, database = {}, ""
    for gpu, system in SYSTEMS.items():
        # Every quantization TensorRT-LLM can run -> the aiconfigurator MoE mode modeling it on this GPU (the
        # nearest where it has none, as tools/predict.py picks); one table per mode.
        modes = {algo: moe_mode(algo, system)[0] for algo in MOE_MODES}
        quants = {mode: mode for mode in dict.fromkeys(modes.values())}
        weights = {}
        for gpus in (1, 2, 4, 8):
            if gpus > GPUS_PER_NODE[gpu]:
                continue
            for adp in (False, True) if gpus > 1 else (False,):
                # Weights do not depend on measured kernels: HYBRID lets every shape answer.
                result = _estimate(system_name=system, mode="static_gen", isl=1024, osl=2, batch_size=1,
                                   tp_size=1 if adp else gpus, attention_dp_size=gpus if adp else 1,
                                   moe_tp_size=1, moe_ep_size=gpus, moe_quant_mode="w4a16_mxfp4",
                                   gemm_quant_mode=GEMM_MODE, kvcache_quant_mode="bfloat16", database_mode="HYBRID")
                memory = result.summary.get_memory()
                weights[f"tp{gpus}{'-adp' if adp else ''}"] = round(memory["weights"], 1)
                other = round(memory["others"], 1)
        prefill, itl, reference = {}, {}, ""
        for key, quant in quants.items():
            rows = []
            for isl in PROMPT_LENGTHS:
                batch = max(1, STEP_TOKENS // isl)
                for gpus in (1, 2):  # the smallest pod with measured MoE kernels (H100 has no EP1 data)
                    try:
                        result = _estimate(system_name=system, mode="static_ctx", isl=isl, osl=1, batch_size=batch,
                                           tp_size=gpus, moe_tp_size=1, moe_ep_size=gpus, moe_quant_mode=quant,
                                           gemm_quant_mode=GEMM_MODE, kvcache_quant_mode="bfloat16")
                        break
                    except PerfDataNotAvailableError:
                        continue
                database = f"{BACKEND} {result.backend_version}"
                reference = f"TP{gpus} EP{gpus}"
                rows.append({"isl": isl, "tokensPerSecondPerGpu": int(batch * isl / (result.ttft / 1000) / gpus)})
            prefill[key] = rows
            itl[key] = []
            for batch in DECODE_BATCHES:
                result = _estimate(system_name=system, mode="static_gen", isl=DECODE["isl"], osl=DECODE["osl"],
                                   batch_size=batch, tp_size=1, attention_dp_size=DECODE["ranks"],
                                   moe_tp_size=1, moe_ep_size=DECODE["ranks"], moe_quant_mode=quant,
                                   gemm_quant_mode=GEMM_MODE, kvcache_quant_mode="bfloat16")
                itl[key].append({"sequencesPerGpu": batch, "ms": round(result.tpot, 1)})
        out[gpu] = {"weightsGiBPerGpu": weights, "otherGiBPerGpu": other, "moeModes": modes,
                    "prefillReference": reference, "prefillTokensPerSecondPerGpu": prefill, "interTokenLatencyMs": itl}
    return out, database


def render() -> str:
    import yaml
    with aiconfigurator_calls():
        data, database = tables()
    model = f"aiconfigurator {aiconfigurator_version()} ({database} SILICON database)"
    body = yaml.safe_dump({"model": model, "gpus": data}, sort_keys=False, width=200).rstrip("\n")
    return "\n".join([
        "{{/*",
        f"Sizing numbers per GPU type for openai/gpt-oss-120b on TensorRT-LLM, predicted by NVIDIA's {model}.",
        "Generated by python -m ci.generate sizing-tables; do not edit. Per GPU: weights in GiB by pod shape (tpN: N GPUs,",
        "-adp: attention data parallel, whose attention weights are not split) and aiconfigurator's other",
        "runtime memory; prefill tokens/s on the prefillReference pod, prompts batched up to 8192 tokens per",
        f"step; inter-token latency of a TP{DECODE['ranks']} EP{DECODE['ranks']} attention-DP decode worker by sequences per",
        f"GPU (one rank each) at {DECODE['isl']}+{DECODE['osl']} tokens.",
        "moeModes: the quantization TensorRT-LLM runs (gpt-oss.quantization) -> aiconfigurator's MoE mode that",
        "models it on this GPU, the nearest where it has none (tools/predict.py); prefill and ITL are keyed by mode.",
        'Usage: {{ $tables := include "gpt-oss.sizingTables" . | fromYaml }}',
        "*/}}",
        '{{- define "gpt-oss.sizingTables" -}}',
        body,
        "{{- end }}",
        "",
    ])


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    check = check_only(argv, prog, __doc__)
    return write_generated(TARGET, render(), check, "sizing-tables")
