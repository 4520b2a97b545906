"""Make kind worker nodes look like each target's GPU nodes, and check that they still do.

Each worker carries a `gpt-oss.test/profile` label from ci/cluster/kind-setup.sh's kind config; this script
gives the node of each profile what the GPU Operator would: `kubernetes.io/arch`,
`nvidia.com/gpu.product`, `nvidia.com/gpu.present=true`, the `nvidia.com/gpu=present:NoSchedule`
taint, and `nvidia.com/gpu` in status.capacity and status.allocatable (no device plugin: a JSON
patch on the status subresource). The kubelet keeps extended resources it does not manage on its
periodic status updates (kubernetes/kubernetes#53353) but may zero them and reset the arch label
when it restarts, so `--check` re-verifies and `--apply` is idempotent: run it again after any
node restart.

    python -m ci.cluster kind-nodes --apply [--kubeconfig PATH]
    python -m ci.cluster kind-nodes --check [--kubeconfig PATH]

Needs only kubectl (1.24+ for --subresource).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from . import HERE

# The profile table is shared with python -m ci.cluster control-plane and ci/cluster/kind-setup.sh.
_TABLE = json.loads((HERE / "gpu-node-profiles.json").read_text())
PROFILE_LABEL = _TABLE["profileLabel"]
# profile -> (arch, product label, GPUs), or None for the download Job's node (no GPUs, no taint).
PROFILES = {name: (p["arch"], p["product"], p["gpus"]) if p.get("gpus") else None
            for name, p in _TABLE["profiles"].items()}


def kubectl(kubeconfig: str | None, *args: str, capture: bool = False) -> str:
    command = ["kubectl", *([f"--kubeconfig={kubeconfig}"] if kubeconfig else []), *args]
    result = subprocess.run(command, check=True, text=True, stdout=subprocess.PIPE if capture else None)
    return result.stdout if capture else ""


def nodes(kubeconfig: str | None) -> list[dict]:
    return json.loads(kubectl(kubeconfig, "get", "nodes", "-o", "json", capture=True))["items"]


def apply(kubeconfig: str | None) -> None:
    for node in nodes(kubeconfig):
        name = node["metadata"]["name"]
        profile = node["metadata"].get("labels", {}).get(PROFILE_LABEL)
        if profile is None or PROFILES.get(profile) is None:
            continue
        arch, product, count = PROFILES[profile]
        kubectl(kubeconfig, "label", "node", name, "--overwrite", f"kubernetes.io/arch={arch}",
                f"nvidia.com/gpu.product={product}", "nvidia.com/gpu.present=true", f"nvidia.com/gpu.count={count}")
        kubectl(kubeconfig, "taint", "node", name, "--overwrite", "nvidia.com/gpu=present:NoSchedule")
        patch = [{"op": "add", "path": f"/status/{field}/nvidia.com~1gpu", "value": str(count)}
                 for field in ("capacity", "allocatable")]
        kubectl(kubeconfig, "patch", "node", name, "--subresource=status", "--type=json", "-p", json.dumps(patch))
        print(f"{name}: {profile} ({arch}, {product}, {count} GPUs, tainted)")


def check(kubeconfig: str | None) -> int:
    problems = []
    seen = set()
    for node in nodes(kubeconfig):
        labels = node["metadata"].get("labels", {})
        profile = labels.get(PROFILE_LABEL)
        if profile not in PROFILES:
            continue
        seen.add(profile)
        if PROFILES[profile] is None:
            continue
        arch, product, count = PROFILES[profile]
        name = node["metadata"]["name"]
        got = (labels.get("kubernetes.io/arch"), labels.get("nvidia.com/gpu.product"),
               node["status"].get("allocatable", {}).get("nvidia.com/gpu"))
        if got != (arch, product, str(count)):
            problems.append(f"{name}: arch/product/allocatable GPUs are {got}, want {(arch, product, str(count))}")
    problems += [f"no node with {PROFILE_LABEL}={p}" for p in PROFILES if p not in seen]
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--apply", action="store_true")
    mode.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    if args.apply:
        apply(args.kubeconfig)
        return 0
    return check(args.kubeconfig)
