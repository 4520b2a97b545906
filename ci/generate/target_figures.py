"""Write the predicted figures of the docs from the tool that prints them (tools/predict.py, what `tools/plan.py
--predict` runs): the README's targets table (its Predicted and Speed of light columns) and docs/targets.md's
predictions per release line.

usage: python -m ci.generate target-figures [--check]   (needs requirements-predict.txt: aiconfigurator; --check
       writes nothing and exits 1 naming each file whose figures drifted from the tool's)

A figure is printed as the tool prints it (19.65 ms is "19.6", as in `--predict`'s own line), and the TTFT column
counts the queueing the target's own benchmark creates (`--predict`'s "benchmark: ... wait about N s per request in
the queue"), so a table never shows the TTFT of an idle server for a benchmark that queues. Every other cell of
those tables is hand-written and left alone. About 15 minutes on 2 cores (a best-configuration search per target).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

from . import REPO, check_only

README = REPO / "README.md"
TARGETS_DOC = REPO / "docs" / "targets.md"
# The README's targets table: the header cells of the generated columns, and the overlay in each row's first cell.
PREDICTED = "Predicted"
SPEED_OF_LIGHT = "Speed of light"
# docs/targets.md's table of the release lines: its predicted column.
LINE_PREDICTED = "Predicted: tokens/s/GPU"
# Where the trtllm-serve targets are also predicted: another GPU they run on (docs/targets.md, "Targets").
OTHER_GPU = {"gpu": {"type": "H200"}}
# A disaggregated target whose two sides serve within this factor of each other is called balanced.
BALANCED = 1.1


def overlays() -> dict[str, bool]:
    """Every file of values/ -> whether it runs trtllm-serve."""
    return {path.name: (yaml.safe_load(path.read_text()) or {}).get("runtime") == "trtllm-serve"
            for path in sorted((REPO / "values").glob("*.yaml"))}


def predictions() -> dict[str, dict]:
    """Every overlay's prediction with its best configuration, and the trtllm-serve targets' on OTHER_GPU."""
    from tools.gptoss.predict import predict
    return with_other_gpu({overlay: predict([str(REPO / "values" / overlay)]) for overlay in overlays()})


def with_other_gpu(found: dict[str, dict]) -> dict[str, dict]:
    """found, each trtllm-serve target's prediction with its prediction on OTHER_GPU (no best configuration) and the
    MoE backend the chart picks there (from the plan)."""
    from tools.gptoss.objects import plan_document
    from tools.gptoss.render import parse_manifests, render_manifests
    from tools.gptoss.predict import predict
    for overlay, trtllm_serve in overlays().items():
        if trtllm_serve and overlay in found:
            files = [str(REPO / "values" / overlay)]
            other = predict(files, dict(OTHER_GPU), best=False)
            [role] = plan_document(parse_manifests(render_manifests(files, dict(OTHER_GPU))))["roles"]
            other["moe_backend"] = role["quantization"]["moeBackend"]
            found[overlay]["other_gpu"] = other
    return found


def _n(value: float, decimals_below: float = 100) -> str:
    """A figure as --predict prints it: one decimal below `decimals_below`, none from it."""
    return f"{value:.1f}" if value < decimals_below else f"{value:.0f}"


def calibrated(p: dict, tokens_per_s_per_gpu: float | None = None) -> str:
    """A tokens/s/GPU figure calibrated, with its band, and the raw model figure beside it (tools/gptoss/calibration.py)."""
    from tools.gptoss.calibration import for_prediction
    figure = p["tokens_per_s_per_gpu"] if tokens_per_s_per_gpu is None else tokens_per_s_per_gpu
    c = for_prediction(dict(p, tokens_per_s_per_gpu=figure))
    return f"**{c['tokens_per_s_per_gpu']}** [{c['low']}-{c['high']}] (raw {c['raw']})"


def latency_figures(p: dict) -> str:
    """tokens/s/GPU (calibrated with its band, raw beside), tokens/s/user, TTFT (with the benchmark's queue) and ITL,
    as --predict prints them."""
    ttft = f"{p['ttft_ms']:.0f} ms"
    if p["benchmark_queue_s"] >= 1:
        ttft += f" + {p['benchmark_queue_s']:.0f} s queued"
    return f"{calibrated(p)}, {_n(p['tokens_per_s_per_user'])}, {ttft}, {_n(p['itl_ms'])} ms"


def predicted_cell(p: dict) -> str:
    """The README's Predicted cell of one target."""
    parts = [latency_figures(p)]
    if "limit" in p:
        limit = p["limit"]
        verdict = "balanced" if limit["factor"] <= BALANCED else f"{limit['side']}-limited"
        parts.append(f"{verdict} (prefill {_n(limit['prefill_requests_per_s'], 10)} vs decode "
                     f"{_n(limit['decode_requests_per_s'], 10)} requests/s)")
    best = p.get("best") or {}
    if best.get("found"):
        searched = " searched" if p["ratio_to_best"] > 1 else ""
        parts.append(f"{p['ratio_to_best']:.2f} x best{searched} ({calibrated(p, best['tokens_per_s_per_gpu'])})")
    cell = "; ".join(parts)
    if "other_gpu" in p:
        other = dict(p["other_gpu"], benchmark=p["benchmark"])
        quant = ", ".join(f"`{q}`" for q in sorted(set(other["quantization"].values())))
        cell += f"; on {other['gpus']}x {other['gpu_type']} ({quant}, {other['moe_backend']} MoE): {latency_figures(other)}"
    return cell


def sol_cell(p: dict) -> str:
    return f"{p['sol']['tokens_per_s_per_gpu']:.0f}; {p['fraction_of_sol']:.2f}"


def line_cell(p: dict) -> str:
    """docs/targets.md's predicted cell: the four figures, and the database mode when it is not measured data alone."""
    return latency_figures(p) + (f" ({p['database_mode']} database)" if p["database_mode"] != "SILICON" else "")


def predicted_header(version: str) -> str:
    return (f"{PREDICTED} (aiconfigurator {version}): tokens/s/GPU calibrated on TensorRT-LLM's published figures "
            "[band] (raw model), tokens/s/user, TTFT (+ the time its benchmark's requests wait in the queue), ITL; vs best")


def line_header(database: str) -> str:
    return f"{LINE_PREDICTED} calibrated [band] (raw), tokens/s/user, TTFT (+ queued), ITL (database {database})"


def rewrite_table(text: str, header_starts: dict[str, str], cells: dict[str, dict[str, str]],
                  headers: dict[str, str] | None = None) -> str:
    """The markdown table whose header has a cell starting with each of header_starts' values, with the cells of
    those columns replaced in the rows whose first cell names an overlay (`values/<overlay>` or `<overlay>`), and
    (headers) the header cells renamed. Fails when the table, a column or a row is missing."""
    lines = text.split("\n")
    for index, line in enumerate(lines):
        header = [c.strip() for c in line.strip().strip("|").split("|")]
        columns = {key: next((i for i, c in enumerate(header) if c.startswith(start)), None)
                   for key, start in header_starts.items()}
        if line.startswith("|") and None not in columns.values():
            break
    else:
        raise SystemExit(f"no table with the columns {sorted(header_starts.values())}")
    for key, new in (headers or {}).items():
        header[columns[key]] = new
    lines[index] = "| " + " | ".join(header) + " |"
    done = set()
    for row in range(index + 2, len(lines)):
        if not lines[row].startswith("|"):
            break
        cells_of_row = [c.strip() for c in lines[row].strip().strip("|").split("|")]
        overlay = re.sub(r"^`(values/)?([^`]+)`$", r"\2", cells_of_row[0])
        if overlay not in next(iter(cells.values())):
            continue
        for key, column in columns.items():
            cells_of_row[column] = cells[key][overlay]
        lines[row] = "| " + " | ".join(cells_of_row) + " |"
        done.add(overlay)
    missing = set(next(iter(cells.values()))) - done
    if missing:
        raise SystemExit(f"no row for {sorted(missing)} in the table with the columns {sorted(header_starts.values())}")
    return "\n".join(lines)


def render(found: dict[str, dict]) -> dict[Path, str]:
    """The two files as the predictions make them."""
    version = next(iter(found.values()))["aiconfigurator"]
    readme = rewrite_table(README.read_text(), {"predicted": PREDICTED, "sol": SPEED_OF_LIGHT},
                           {"predicted": {o: predicted_cell(p) for o, p in found.items()},
                            "sol": {o: sol_cell(p) for o, p in found.items()}},
                           headers={"predicted": predicted_header(version)})
    targets = rewrite_table(TARGETS_DOC.read_text(), {"line": LINE_PREDICTED},
                            {"line": {o: line_cell(p) for o, p in found.items()}},
                            headers={"line": line_header(next(iter(found.values()))["perf_database"])})
    return {README: readme, TARGETS_DOC: targets}


def _shown(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    check = check_only(argv, prog, __doc__)
    files = render(predictions())
    if check:
        stale = [path for path, text in files.items() if path.read_text() != text]
        for path in stale:
            print(f"{_shown(path)}: predicted figures differ from tools/predict.py's: run python -m "
                  "ci.generate target-figures", file=sys.stderr)
        return 1 if stale else 0
    for path, text in files.items():
        if path.read_text() != text:
            path.write_text(text)
            print(f"wrote {_shown(path)}")
    return 0
