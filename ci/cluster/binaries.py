"""The control plane's binaries (etcd, kube-apiserver, ...; a kubelet beside them makes a node): where they are."""
from __future__ import annotations

import os
import re
from pathlib import Path

from . import go_parts

REQUIRED = ("etcd", "kube-apiserver")


def find_binaries() -> tuple[Path | None, str]:
    """The directory holding the binaries, and where it came from (or why none was found)."""
    candidates = []
    # A folder the user names wins; then what the project builds from its pins; then setup-envtest's store.
    if os.environ.get("KUBEBUILDER_ASSETS"):
        candidates.append((Path(os.environ["KUBEBUILDER_ASSETS"]), "KUBEBUILDER_ASSETS"))
    built = go_parts.built("kubernetes")
    candidates.append((built or go_parts.bin_dir("kubernetes"), "ci.cluster.go_parts's cache" + (
        "" if built else " (not built: python -m ci.cluster go-parts build kubernetes)")))
    store = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share")) / "kubebuilder-envtest" / "k8s"
    if not store.is_dir():
        candidates.append((store / "<version>-<os>-<arch>", "setup-envtest store (absent)"))
    else:
        def version(path: Path):
            return tuple(int(n) for n in re.findall(r"\d+", path.name.split("-")[0]))
        for path in sorted(store.iterdir(), key=version, reverse=True):
            candidates.append((path, f"setup-envtest store {path.name}"))
    for path, origin in candidates:
        if all((path / name).is_file() and os.access(path / name, os.X_OK) for name in REQUIRED):
            return path, origin
    looked = ", ".join(str(p) for p, _ in candidates) or "nowhere"
    return None, (f"no etcd and kube-apiserver binaries (looked in: {looked}); build them with `python -m "
                  "ci.cluster.go_parts build kubernetes` (docs/testing.md: A control plane for the cluster tier), or "
                  "set KUBEBUILDER_ASSETS to a folder holding them")
