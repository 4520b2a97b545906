"""The project's CI and test-tier programs as one package: a control plane and a kubelet node on this machine, the
node's images, the Go parts, the upstream CRDs, the policy scan, the chart release and the generators.

Each `ci/<name>.py` command file is a few lines that call the `main` of its module here (ci/node-images.py ->
node_images.main), so `.ci/run`, the docs and users' commands keep their paths; the tests import the modules.
Nothing here imports tests/ or loads a file by path.
"""
from pathlib import Path

# The checkout's root, and the ci/ folder whose data (crds.json, go/, gpu-node-profiles.json) the modules read.
REPO = Path(__file__).resolve().parents[2]
CI = REPO / "ci"
