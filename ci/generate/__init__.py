"""The generated room: every file written into the chart or docs from upstream facts or from the tools.

schema (the value docs from values.schema.yaml), kubernetes_schema (the Kubernetes types of the passthrough values,
from the pinned OpenAPI), dynamo_defaults, trtllm_fields and trtllm_serve_options (what the
chart must carry of values.yaml and of TensorRT-LLM), sizing_tables and target_figures (aiconfigurator's figures),
compare_published (the model against TensorRT-LLM's published figures) and calibration (the model's error on them,
fitted per GPU, quantization and ISL/OSL regime: tools/gptoss/calibration.json). One way in: `python -m ci.generate [--check]`
regenerates (or checks) them all; `python -m ci.generate <verb>` runs one. It imports nothing of the other rooms.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ci import REPO


def check_only(argv: list[str], prog: str | None, doc: str) -> bool:
    """The one option of a generator that only writes: --check (write nothing, exit 1 when the file drifted)."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the file drifted")
    return parser.parse_args(argv).check


def write_generated(target: Path, text: str, check: bool, verb: str, source: str = "", what: str = "") -> int:
    """A generator's last step: write `text` to `target` (saying `what` it holds); with check, write nothing and return
    1 when the file differs from what its `source` gives, naming the command (`python -m ci.generate <verb>`) that
    refreshes it."""
    shown = target.relative_to(REPO) if target.is_relative_to(REPO) else target
    if check:
        if target.read_text() != text:
            print(f"{shown} {f'differs from {source}' if source else 'is stale'}: run python -m ci.generate {verb}",
                  file=sys.stderr)
            return 1
        return 0
    target.write_text(text)
    print(f"wrote {shown}" + (f": {what}" if what else ""))
    return 0


def chart_json(data, indent: int = 0) -> str:
    """`data` as the JSON of a table the chart reads with fromJson (several times faster in Helm than fromYaml's YAML,
    once per render): an object's keys one per line, a list of objects one object per line, other lists on one."""
    if indent == 0 and "{{" in json.dumps(data):  # JSON's own braces never make one: a key or value did
        raise ValueError("a table for the chart holds {{, which Helm would read as the start of a template action")
    pad = "  " * (indent + 1)
    if isinstance(data, dict) and data:
        rows = [f"{pad}{json.dumps(key)}: {chart_json(value, indent + 1)}" for key, value in data.items()]
        return "{\n" + ",\n".join(rows) + "\n" + "  " * indent + "}"
    if isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
        return "[\n" + ",\n".join(pad + json.dumps(item) for item in data) + "\n" + "  " * indent + "]"
    return json.dumps(data)
