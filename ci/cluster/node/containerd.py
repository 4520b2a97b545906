"""containerd on the node: its configuration, the images it serves (imported from ci.cluster.node_images's cache), and
killing this node's containers and shims when it stops."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from .. import node_images
from .host import cgroup_roots
from .layout import CNI_BIN, node_dir, socket


def ctr(state: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(["ctr", "--address", str(socket(state)), "--namespace", "k8s.io", *args],
                          capture_output=True, text=True, timeout=timeout)


def processes_with(text: str) -> list[int]:
    """pids whose command line contains `text` (this node's socket path: its shims)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def kill_containers(state: Path, kept_cgroups: list[str]) -> None:
    """Every task of this node's containerd killed and deleted, then the containers; shims last."""
    if socket(state).exists():
        try:
            tasks = [line.split()[0] for line in ctr(state, "tasks", "ls", timeout=20).stdout.splitlines()[1:] if line]
            for task in tasks:
                ctr(state, "tasks", "kill", "--signal", "SIGKILL", task, timeout=20)
            time.sleep(0.5)
            for task in tasks:
                ctr(state, "tasks", "delete", "--force", task, timeout=20)
            containers = ctr(state, "containers", "ls", "-q", timeout=20).stdout.split()
            if containers:
                ctr(state, "containers", "delete", *containers, timeout=60)
        except (subprocess.TimeoutExpired, OSError) as error:
            print(f"node: containerd did not answer while stopping containers ({error}); killing its shims")
    # Processes left in the pods' cgroups (a shim killed before its container), then the shims themselves.
    # Only in cgroups this node created: a kubepods that was there before belongs to someone else.
    for root in cgroup_roots():
        for name in ("kubepods", "k8s.io"):
            if str(root / name) in kept_cgroups or not (root / name).exists():
                continue
            for procs in (root / name).rglob("cgroup.procs"):
                for pid in procs.read_text().split():
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except (ProcessLookupError, ValueError):
                        pass
    for pid in processes_with(str(socket(state))):
        if pid != os.getpid():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def containerd_root() -> Path:
    """containerd's root (content and unpacked images) lives with the image cache, outside the checkout: an
    image imported once is there at the next start (unpacking a GiB-sized layer takes about a minute)."""
    return node_images.cache_dir() / "containerd"


def write_config(state: Path) -> Path:
    """containerd's config.toml: CRI with runc (cgroupfs), the pause image, the CNI folder and this node's sockets."""
    node = node_dir(state)
    containerd = node / "containerd" / "config.toml"
    containerd.write_text(f"""version = 2
root = "{containerd_root()}"
state = "{node / 'containerd' / 'state'}"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
                    "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "{socket(state)}"
[ttrpc]
  address = "{socket(state)}.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "{node / 'containerd' / 'opt'}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{node_images.PAUSE_IMAGE}"
  # This VM drops CAP_SYS_RESOURCE: runc cannot lower oom_score_adj to the pause container's -998 (NODE-FACTS).
  restrict_oom_score_adj = true
  # Pods' network namespaces under this node's state, not /run/netns.
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "{node / 'runc'}"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{CNI_BIN}"
    conf_dir = "{node / 'cni' / 'net.d'}"
    max_conf_num = 1
""")
    return containerd


def import_images(state: Path) -> tuple[list[str], dict]:
    """Build what the image cache lacks (python -m ci.cluster node-images), import every image; (missing, timings)."""
    cache = node_images.cache_dir()
    timings = {}
    started = time.monotonic()
    if node_images.why_not_buildable() is None:
        try:
            node_images.build(cache)
        except SystemExit as error:  # an image that cannot be built: the node runs, the tests needing it skip
            print(f"node: images not all built: {error}", flush=True)
    timings["build"] = round(time.monotonic() - started, 1)
    started = time.monotonic()
    missing = node_images.import_images(cache, str(socket(state)))
    timings["import"] = round(time.monotonic() - started, 1)
    return missing, timings


def remove_cri_folders() -> None:
    """The containers are gone from containerd's metadata; CRI's per-container folders in its kept root go too."""
    for folder in ("containers", "sandboxes"):
        shutil.rmtree(containerd_root() / "io.containerd.grpc.v1.cri" / folder, ignore_errors=True)
