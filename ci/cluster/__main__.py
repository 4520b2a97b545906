"""`python -m ci.cluster <verb>`: the test cluster's programs."""
import sys

from ci import run_verbs

VERBS = {
    "control-plane": ("ci.cluster.control_plane", "etcd, the API server and its kin on 127.0.0.1 (+ the node): start, stop, leftovers"),
    "node": ("ci.cluster.node", "the kubelet node beside a control plane: check, start, stop"),
    "node-images": ("ci.cluster.node_images", "the node's images, built into a cache outside the checkout"),
    "go-parts": ("ci.cluster.go_parts", "the Go programs the tiers run, built from pinned modules: build, where, list"),
    "argocd": ("ci.cluster.argocd", "a live Argo CD in a control plane: start, stop"),
    "kind-nodes": ("ci.cluster.kind_nodes", "label and fake the GPU nodes of a kind cluster"),
    "behind": ("ci.cluster.processes", "run a command behind the node's tests (niceness and autogroup of its own)"),
    "timings": ("ci.cluster.timings", "the test files that took a run's time, from each group's JUnit report"),
    "crds": ("ci.cluster.crds", "the pinned upstream CRDs the tests read, fetched and sha256-checked"),
}

if __name__ == "__main__":
    sys.exit(run_verbs("cluster", __doc__.splitlines()[0].split(": ", 1)[1], VERBS))
