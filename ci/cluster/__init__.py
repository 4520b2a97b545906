"""The test cluster's room: what the cluster, node, e2e and Argo CD tiers run on this machine.

The Go parts built from pinned modules (go_parts, go_cache; the Dynamo operator, from its archives, is one of them:
dynamo_operator), the control plane and its kubelet node (control_plane, node/, binaries, processes), the node's images
(node_images, stand_in), Argo CD (argocd), kind's GPU node labels (kind_nodes) and the pinned upstream CRDs (crds).
One way in: `python -m ci.cluster <verb>` (its __main__ lists the verbs). Its data sits beside the modules: go/ (one
folder per Go part), crds.json (the CRD pins), gpu-node-profiles.json (the fake GPU nodes), kind-setup.sh.
"""
from pathlib import Path

from ci import REPO, shared_dir  # noqa: F401  (the room's modules read them from here)

HERE = Path(__file__).resolve().parent
