"""The project's CI and test-tier programs as one package: a control plane and a kubelet node on this machine, the
node's images, the Go parts, the upstream CRDs, the policy scan, the chart release and the generators.

A program is a module here with a `main`, run from the checkout's root as `python -m ci.gptoss_ci.<module>` (its
`if __name__ == "__main__":` block; the node's is node/__main__.py); the tests import the modules. Nothing here
edits sys.path, imports tests/ or loads a file by path.
"""
import sys
from pathlib import Path

# The checkout's root, and the ci/ folder whose data (crds.json, go/, gpu-node-profiles.json) the modules read.
REPO = Path(__file__).resolve().parents[2]
CI = REPO / "ci"


def write_generated(target: Path, text: str, check: bool, program: str, source: str = "", what: str = "") -> int:
    """A generator's last step: write `text` to `target` (saying `what` it holds); with check, write nothing and return
    1 when the file differs from what its `source` gives, naming the program (`python -m ci.gptoss_ci.<program>`)
    that refreshes it."""
    shown = target.relative_to(REPO) if target.is_relative_to(REPO) else target
    if check:
        if target.read_text() != text:
            print(f"{shown} {f'differs from {source}' if source else 'is stale'}: run python -m ci.gptoss_ci.{program}",
                  file=sys.stderr)
            return 1
        return 0
    target.write_text(text)
    print(f"wrote {shown}" + (f": {what}" if what else ""))
    return 0
