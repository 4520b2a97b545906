"""aiconfigurator's figures corrected by its measured error against TensorRT-LLM's published gpt-oss-120b figures.

The fit (python -m ci.generate calibration writes calibration.json beside this file; docs/targets.md shows it): for
each GPU x quantization x ISL/OSL regime of the published perf-overview points, the factor is the geometric mean of
published / predicted (the least-squares fit of the log ratio), and the band is the range of published / calibrated
over the group's points, each point both in the fit and left out of it (leave-one-out), so a band also covers a
point the fit never saw. Needs no aiconfigurator: the chart's tools read the file, the generator refits it.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

CALIBRATION_FILE = Path(__file__).with_name("calibration.json")
# The published shapes are ISL/OSL 1:1 (1000/1000, 1024/1024), 1:8 and 1:32 (long outputs) and 8:1 and 32:1 (long
# prompts); the regimes split them where prompts start to dominate a request's work: at ISL/OSL 2.83 (sqrt(8), the
# geometric midpoint of the published 1:1 and 8:1 shapes).
PROMPT_HEAVY_FROM = math.sqrt(8)
REGIMES = {"output-heavy": "ISL/OSL below 2.83 (published: 1000/1000, 1024/1024, 1024/8192, 1024/32768)",
           "prompt-heavy": "ISL/OSL 2.83 and above (published: 8192/1024, 32768/1024)"}


def regime(isl: int, osl: int) -> str:
    """The ISL/OSL regime a workload falls in."""
    return "prompt-heavy" if isl / osl >= PROMPT_HEAVY_FROM else "output-heavy"


def group_key(gpu: str, quantization: str, shape_regime: str) -> str:
    return f"{gpu} {quantization} {shape_regime}"


def _factor(points: list[dict]) -> float:
    """Geometric mean of published / predicted."""
    return math.exp(sum(math.log(p["published"] / p["predicted"]) for p in points) / len(points))


def fit(points: list[dict]) -> dict:
    """The factors, bands and leave-one-out errors of the published points (each: gpu, quantization, isl, osl,
    published, predicted). Rounded as the file stores them, so a refit compares equal."""
    groups: dict[str, list[dict]] = {}
    for point in points:
        key = group_key(point["gpu"], point["quantization"], regime(point["isl"], point["osl"]))
        groups.setdefault(key, []).append(point)
    out_groups, out_points = {}, []
    for key, members in groups.items():
        factor = _factor(members)
        ratios = []
        for point in members:
            others = [p for p in members if p is not point]
            loo_factor = _factor(others)
            in_fit = point["published"] / (point["predicted"] * factor)
            left_out = point["published"] / (point["predicted"] * loo_factor)
            ratios += [in_fit, left_out]
            out_points.append({"isl": point["isl"], "osl": point["osl"], "gpu": point["gpu"],
                               "quantization": point["quantization"], "regime": regime(point["isl"], point["osl"]),
                               "published": point["published"], "predicted": point["predicted"],
                               "calibrated": round(point["predicted"] * factor),
                               "loo_factor": round(loo_factor, 4),
                               "loo_calibrated": round(point["predicted"] * loo_factor),
                               "loo_error": round(1 / left_out - 1, 4)})
        gpu, quantization, shape_regime = key.split(" ")
        out_groups[key] = {"gpu": gpu, "quantization": quantization, "regime": shape_regime, "points": len(members),
                           "factor": round(factor, 4), "band": [round(min(ratios), 4), round(max(ratios), 4)]}
    return {"groups": out_groups, "points": out_points}


def load() -> dict:
    return json.loads(CALIBRATION_FILE.read_text())


def calibrate(tokens_per_s_per_gpu: float, gpu: str, quantization: str, isl: int, osl: int,
              data: dict | None = None) -> dict:
    """A raw tokens/s/GPU figure corrected by its group's factor, with the band and which fit was used.

    A quantization no published point ran on that GPU takes the GPU's fit in the same regime (the note says so)."""
    data = data or load()
    shape_regime = regime(isl, osl)
    group = data["groups"].get(group_key(gpu, quantization, shape_regime))
    note = None
    if group is None:
        group = next(g for g in data["groups"].values() if g["gpu"] == gpu and g["regime"] == shape_regime)
        note = (f"no published point runs {quantization} on {gpu}: calibrated with the {gpu} "
                f"{group['quantization']} fit")
    value = tokens_per_s_per_gpu * group["factor"]
    low, high = group["band"]
    return {"tokens_per_s_per_gpu": round(value), "low": round(value * low), "high": round(value * high),
            "raw": round(tokens_per_s_per_gpu), "factor": group["factor"], "band": group["band"],
            "group": group_key(group["gpu"], group["quantization"], shape_regime), "points": group["points"],
            "note": note}


def for_prediction(p: dict, data: dict | None = None) -> dict:
    """The calibrated tokens/s/GPU of a tools/predict.py result (its GPU, the quantization its roles run, its
    benchmark's ISL/OSL). Roles running different quantizations take the first's (the chart's targets run one)."""
    quantization = sorted(set(p["quantization"].values()))[0]
    return calibrate(p["tokens_per_s_per_gpu"], p["gpu_type"], quantization, p["benchmark"]["isl"],
                     p["benchmark"]["osl"], data)


def text(c: dict) -> str:
    """One calibrated figure as the tools print it: '27198 tokens/s/GPU (band 25000-29000; raw 43834)'."""
    return f"{c['tokens_per_s_per_gpu']} (band {c['low']}-{c['high']}; raw {c['raw']})"
